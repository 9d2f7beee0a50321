"""Session memory: a lossless, append-only log of a conversation that replays each
provider's request format (rules §9).

>>> from fastmerge.session import Session
>>> session = Session("chat-1", "chat.db")      # SQLite file; None for in-memory
>>> session.append({"role": "user", "content": "What's the weather in Paris?"})
>>> session.append(message)                     # a fastmerge.AssistantMessage, all parts kept
>>> session.to_request("anthropic")             # {"messages": [...]}, signatures included

Stores: :class:`SQLiteStore` (default), :class:`PostgresStore` (``fastmerge[postgres]``), or
any object implementing :class:`Store`. :class:`AsyncSession` is the ``asyncio`` variant;
``AgentsSession`` (:mod:`fastmerge.session.agents`, ``fastmerge[agents]``) is the OpenAI Agents
SDK's session on the same log.
"""

from __future__ import annotations

from typing import Any

from ..errors import (
    CorruptRowError,
    SchemaVersionError,
    SessionEmptyError,
    SessionError,
    SessionExistsError,
    SessionIdError,
    SessionTypeError,
)
from ._async import AsyncSession
from ._session import Session, Turn
from .compaction import Compaction
from .request import response_to_request, to_request
from .sqlite import SQLiteStore
from .store import MAX_SESSION_ID_BYTES, SCHEMA_VERSION, AsyncStore, Event, NewEvent, Store

__all__ = [
    "MAX_SESSION_ID_BYTES",
    "SCHEMA_VERSION",
    "AsyncSession",
    "AsyncStore",
    "Compaction",
    "CorruptRowError",
    "Event",
    "NewEvent",
    "PostgresStore",
    "AsyncPostgresStore",
    "SQLiteStore",
    "SchemaVersionError",
    "Session",
    "SessionEmptyError",
    "SessionError",
    "SessionExistsError",
    "SessionIdError",
    "SessionTypeError",
    "Store",
    "Turn",
    "response_to_request",
    "to_request",
]


def __getattr__(name: str) -> Any:
    # psycopg is an optional extra: imported only when a PostgreSQL store is asked for
    if name in ("PostgresStore", "AsyncPostgresStore"):
        from . import postgres

        return getattr(postgres, name)
    if name == "AgentsSession":  # openai-agents likewise
        from .agents import AgentsSession

        return AgentsSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
