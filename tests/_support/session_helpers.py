"""What the session tests share: an Anthropic stream to aggregate, and the stores under test
(SQLite always; PostgreSQL at ``FASTMERGE_PG_DSN``, which ``.ci/run`` starts and sets, with
``FASTMERGE_REQUIRE_PG=1`` so that an unreachable server fails instead of skipping)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

STORES = ["sqlite", "postgres"]


def pg_dsn() -> str:
    """The PostgreSQL DSN, or a skip saying why there is none (outside CI only)."""
    dsn = os.environ.get("FASTMERGE_PG_DSN")
    required = bool(os.environ.get("FASTMERGE_REQUIRE_PG"))
    if not dsn:
        if required:
            raise RuntimeError("FASTMERGE_REQUIRE_PG is set but FASTMERGE_PG_DSN is not")
        pytest.skip(
            "no PostgreSQL server: set FASTMERGE_PG_DSN (bash .ci/run starts one and sets it)"
        )
    try:
        import psycopg

        psycopg.connect(dsn, connect_timeout=5).close()
    except Exception as exc:
        if required:
            raise
        pytest.skip(f"PostgreSQL at FASTMERGE_PG_DSN is not reachable: {exc}")
    return dsn


def make_store(kind: str, tmp_path: Path) -> Any:
    """A fresh store of ``kind`` (SQLite: a file in ``tmp_path``)."""
    from fastmerge.session import PostgresStore, SQLiteStore

    if kind == "sqlite":
        return SQLiteStore(str(tmp_path / "session.db"))
    return PostgresStore(pg_dsn())


def new_id() -> str:
    """A session id no other test uses (the PostgreSQL tables are shared)."""
    return f"s-{uuid.uuid4().hex}"


def anthropic_events(text: str = "Let me check.", call_id: str = "toolu_01") -> list[Any]:
    """An Anthropic stream: thinking with its signature, text, a tool call."""
    return [
        {
            "type": "message_start",
            "message": {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 12, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "The user wants weather."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "EqQBCkYIBx=="},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "text", "text": ""},
        },
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {
                "type": "tool_use",
                "id": call_id,
                "name": "get_weather",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 30},
        },
        {"type": "message_stop"},
    ]
