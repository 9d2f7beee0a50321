"""The Agents SDK's session wrappers over :class:`AgentsSession` (on SQLite): its
``EncryptedSession`` (envelopes of Fernet ciphertext, which are no Responses input items) and
its ``OpenAIResponsesCompactionSession`` (a compaction item replacing the history). Every item a
wrapper hands the session is stored and read back equal, as the SDK's ``SQLiteSession`` stores
it; an item fastmerge does not read as a message is kept verbatim and replayed to no provider.
Both backends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import AsyncMock, MagicMock

import pytest
from _support.agents import ITEMS
from _support.session_helpers import new_id

pytest.importorskip("agents")
fernet = pytest.importorskip("cryptography.fernet")

from agents import SQLiteSession  # noqa: E402
from agents.extensions.memory.encrypt_session import EncryptedSession  # noqa: E402
from agents.memory import OpenAIResponsesCompactionSession  # noqa: E402

from fastmerge import UnknownPart  # noqa: E402
from fastmerge.session import Session, SQLiteStore  # noqa: E402
from fastmerge.session._items import OPAQUE  # noqa: E402
from fastmerge.session.agents import AgentsSession  # noqa: E402

KEY = fernet.Fernet.generate_key().decode("ascii")
PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock-converse"]


def _envelope_keys(items: list[Any]) -> list[set[str]]:
    return [set(item) for item in items]


@pytest.mark.parametrize("underlying", ["agents", "sqlite"])
def test_encrypted_session_round_trip(tmp_path: Path, underlying: str) -> None:
    """EncryptedSession over AgentsSession does what it does over SQLiteSession: every item
    reads back equal, pop and limit and clear as the protocol says, the envelopes stored
    verbatim."""
    sid = new_id()

    async def body() -> None:
        if underlying == "agents":
            backend: Any = AgentsSession(sid, tmp_path / "agents.db")
        else:
            backend = SQLiteSession(sid, tmp_path / "sdk.db")
        session = EncryptedSession(sid, backend, KEY, ttl=3600)
        await session.add_items(ITEMS[:4])
        await session.add_items(ITEMS[4:])
        assert await session.get_items() == ITEMS
        assert await session.get_items(limit=3) == ITEMS[-3:]
        stored = await backend.get_items()
        assert len(stored) == len(ITEMS)
        assert _envelope_keys(stored) == [{"__enc__", "v", "kid", "payload"}] * len(ITEMS)
        assert await session.pop_item() == ITEMS[-1]
        assert await session.get_items() == ITEMS[:-1]
        await session.clear_session()
        assert await session.get_items() == []
        assert await session.pop_item() is None
        backend.close()

    asyncio.run(body())


def test_envelopes_are_read_by_another_session_and_replayed_to_no_provider(tmp_path: Path) -> None:
    """The envelopes a second AgentsSession (and a fastmerge Session) reads from the same
    file are the stored ones, equal; each is a message whose one part holds the envelope,
    and no provider's request carries it (a message with nothing replayable is left out)."""
    sid = new_id()
    path = tmp_path / "agents.db"
    plain = {"role": "user", "content": "not encrypted"}

    async def body() -> list[Any]:
        backend = AgentsSession(sid, path)
        session = EncryptedSession(sid, backend, KEY, ttl=3600)
        await session.add_items(ITEMS[:3])
        await backend.add_items([plain])
        stored = await backend.get_items()
        other = AgentsSession(sid, path)
        assert await other.get_items() == stored
        # another EncryptedSession with the key reads the items; the plaintext one it skips
        assert await EncryptedSession(sid, other, KEY, ttl=3600).get_items() == ITEMS[:3]
        for provider in PROVIDERS:
            request = await other.to_request(provider)
            assert "payload" not in str(request)
            assert "not encrypted" in str(request)
        messages = await other.messages()
        assert [m.parts for m in messages[:3]] == [
            (UnknownPart(provider=OPAQUE, kind="item", raw=item),) for item in stored[:3]
        ]
        other.close()
        backend.close()
        return stored

    stored = asyncio.run(body())
    store = SQLiteStore(str(path))
    session = Session(sid, store)
    assert [m.metadata["openai_agents_item"] for m in session.messages()[:3]] == stored[:3]
    store.close()


@pytest.mark.parametrize(
    "item",
    [
        {"__enc__": 1, "v": 1, "kid": "hkdf-v1", "payload": "gAAAAA"},
        {"content": "no role"},
        {"role": "user", "content": 5},
        {"type": "message", "role": "user", "content": None},
        {"type": "function_call_output", "call_id": 7, "output": "x"},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": 5},
        {"type": 3},
    ],
)
def test_items_fastmerge_does_not_read_are_kept_verbatim(tmp_path: Path, item: Any) -> None:
    """Any dict is stored and read back equal (SQLiteSession stores it); what fastmerge does
    not read as a message is its message's one unknown part, replayed to no provider; the
    items it reads keep their typed parts beside it."""
    sid = new_id()

    async def body() -> None:
        session = AgentsSession(sid, tmp_path / "agents.db")
        await session.add_items([ITEMS[2], item, ITEMS[5]])
        assert await session.get_items() == [ITEMS[2], item, ITEMS[5]]
        messages = await session.messages()
        assert messages[1].parts == (UnknownPart(provider=OPAQUE, kind="item", raw=item),)
        assert messages[1].metadata == {"openai_agents_item": item}
        assert messages[2].parts and messages[2].parts[0].PART != "unknown"
        for provider in PROVIDERS:
            request = await session.to_request(provider)
            assert "no role" not in str(request) and "gAAAAA" not in str(request)
        assert await session.pop_item() == ITEMS[5]
        assert await session.pop_item() == item
        session.close()

    asyncio.run(body())


def test_compaction_session_over_agents_session(tmp_path: Path) -> None:
    """OpenAIResponsesCompactionSession over AgentsSession: a forced compaction replaces the
    stored history with the compact call's output (a compaction item), read back equal."""
    sid = new_id()
    compacted = {"type": "compaction", "id": "cmp-1", "encrypted_content": "summary"}
    client = MagicMock()
    client.responses.compact = AsyncMock(return_value=SimpleNamespace(output=[compacted]))
    history = [
        {"role": "user", "content": "first"},
        {"type": "message", "role": "assistant", "id": "m1", "status": "completed",
         "content": [{"type": "output_text", "text": "one", "annotations": []}]},
        {"role": "user", "content": "second"},
    ]  # fmt: skip

    async def body() -> None:
        backend = AgentsSession(sid, tmp_path / "agents.db")
        session = OpenAIResponsesCompactionSession(
            sid, backend, client=client, compaction_mode="input"
        )
        await session.add_items(history)
        assert await session.get_items() == history
        await session.run_compaction({"force": True})
        client.responses.compact.assert_awaited_once()
        assert client.responses.compact.call_args.kwargs["input"] == history
        after = await backend.get_items()
        assert compacted in after
        assert await session.get_items() == after
        # the log keeps what the compaction replaced (a clear is an event, not a deletion)
        assert len(list(backend.store.load(sid))) > len(history) + len(after)
        backend.close()

    asyncio.run(body())


def test_encrypted_over_compaction_over_agents_session(tmp_path: Path) -> None:
    """The wrappers stacked as the SDK's docs stack them: the compaction session's items reach
    AgentsSession as envelopes, and read back through both wrappers equal."""
    sid = new_id()
    client = MagicMock()
    compacted = {"type": "compaction", "id": "cmp-2", "encrypted_content": "s"}
    client.responses.compact = AsyncMock(return_value=SimpleNamespace(output=[compacted]))

    async def body() -> None:
        backend = AgentsSession(sid, tmp_path / "agents.db")
        inner = OpenAIResponsesCompactionSession(
            sid, backend, client=client, compaction_mode="input"
        )
        session = EncryptedSession(sid, inner, KEY, ttl=3600)
        await session.add_items(ITEMS[2:6])
        assert await session.get_items() == ITEMS[2:6]
        stored = await backend.get_items()
        assert _envelope_keys(stored) == [{"__enc__", "v", "kid", "payload"}] * 4
        assert await session.pop_item() == ITEMS[5]
        assert await session.get_items() == ITEMS[2:5]
        backend.close()

    asyncio.run(body())
