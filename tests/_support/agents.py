"""What the AgentsSession tests share: the stores they run on (SQLite, PostgreSQL sync and
async), every kind of Responses input item, and the Agents SDK tests' text message."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

from _support.session_helpers import pg_dsn

agents = pytest.importorskip("agents", reason="openai-agents (fastmerge[agents]) is not installed")

from openai.types.responses import (  # noqa: E402
    ResponseOutputMessage,
    ResponseOutputText,
)

from fastmerge.session import (  # noqa: E402
    AsyncPostgresStore,
    PostgresStore,
    SQLiteStore,
)

KINDS = ["sqlite", "postgres", "postgres-async"]

#: Every kind of Responses input item (checked against the openai SDK's types below), as the
#: Agents SDK stores them: easy and typed messages, reasoning, function and custom tool calls
#: and outputs, hosted tools' calls and outputs, references, refusals, compaction.
ITEMS: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": "Use metric units."},
    {"content": "What's the weather in Paris?", "role": "user"},
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "And in Lyon?"}],
    },
    {
        "id": "rs_01",
        "summary": [{"text": "The user wants weather.", "type": "summary_text"}],
        "type": "reasoning",
        "encrypted_content": "gAAAAABo-encrypted",
    },
    {
        "arguments": '{"city":"Paris"}',
        "call_id": "call_01",
        "name": "get_weather",
        "type": "function_call",
        "id": "fc_01",
        "status": "completed",
    },
    {"call_id": "call_01", "output": '{"temp": 18}', "type": "function_call_output"},
    {"type": "function_call", "call_id": "call_02", "name": "get_weather", "arguments": "{}"},
    {
        "call_id": "call_02",
        "output": [{"type": "input_text", "text": "22 C"}],
        "type": "function_call_output",
    },
    {
        "id": "ctc_01",
        "call_id": "call_03",
        "input": "print(1)",
        "name": "python",
        "type": "custom_tool_call",
    },
    {"call_id": "call_03", "output": "1", "type": "custom_tool_call_output"},
    {
        "id": "ws_01",
        "action": {"query": "weather Paris", "type": "search"},
        "status": "completed",
        "type": "web_search_call",
    },
    {
        "id": "fs_01",
        "queries": ["forecast"],
        "status": "completed",
        "type": "file_search_call",
        "results": None,
    },
    {
        "id": "cu_01",
        "action": {"type": "click", "button": "left", "x": 10, "y": 20},
        "call_id": "call_04",
        "pending_safety_checks": [],
        "status": "completed",
        "type": "computer_call",
    },
    {
        "call_id": "call_04",
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"},
        "type": "computer_call_output",
    },
    {
        "id": "ci_01",
        "code": "print(2)",
        "container_id": "cntr_01",
        "outputs": None,
        "status": "completed",
        "type": "code_interpreter_call",
    },
    {
        "id": "ig_01",
        "result": "iVBORw0KGgo=",
        "status": "completed",
        "type": "image_generation_call",
    },
    {
        "id": "ls_01",
        "action": {"command": ["ls"], "env": {}, "type": "exec"},
        "call_id": "call_05",
        "status": "completed",
        "type": "local_shell_call",
    },
    {"id": "ls_01", "output": "a.txt", "type": "local_shell_call_output"},
    {
        "id": "mcpl_01",
        "server_label": "docs",
        "tools": [{"input_schema": {"type": "object"}, "name": "search"}],
        "type": "mcp_list_tools",
    },
    {
        "id": "mcpr_01",
        "arguments": "{}",
        "name": "search",
        "server_label": "docs",
        "type": "mcp_approval_request",
    },
    {"approval_request_id": "mcpr_01", "approve": True, "type": "mcp_approval_response"},
    {
        "id": "mcp_01",
        "arguments": "{}",
        "name": "search",
        "server_label": "docs",
        "type": "mcp_call",
        "output": "found",
    },
    {"id": "msg_00", "type": "item_reference"},
    {
        "id": "msg_01",
        "content": [
            {
                "annotations": [],
                "text": "It is 18 C in Paris.",
                "type": "output_text",
                "logprobs": [],
            }
        ],
        "role": "assistant",
        "status": "completed",
        "type": "message",
    },
    {
        "id": "msg_02",
        "content": [{"refusal": "I cannot help with that.", "type": "refusal"}],
        "role": "assistant",
        "status": "completed",
        "type": "message",
    },
    {"role": "assistant", "content": "Anything else?"},
    {"id": "cmp_01", "encrypted_content": "gAAAAcompacted", "type": "compaction"},
]


def text_item(text: str, item_id: str = "1") -> ResponseOutputMessage:
    """The Agents SDK tests' ``get_text_message``: an assistant output message."""
    content = [ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])]
    return ResponseOutputMessage(
        id=item_id, type="message", role="assistant", content=content, status="completed"
    )


def json_texts(items: list[Any]) -> list[str]:
    """Items as JSON text: equal when their values and their keys' order are."""
    return [json.dumps(item) for item in items]


async def open_store(kind: str, tmp_path: Path) -> Any:
    if kind == "sqlite":
        return SQLiteStore(str(tmp_path / "agents.db"))
    if kind == "postgres":
        return PostgresStore(pg_dsn())
    return await AsyncPostgresStore.connect(pg_dsn())


async def close_store(store: Any) -> None:
    done = store.close()
    if asyncio.iscoroutine(done):
        await done


def run_on(kind: str, tmp_path: Path, body: Callable[[Any], Awaitable[Any]]) -> Any:
    """``body(store)`` on a new event loop with a store of ``kind``, closed after."""
    if kind != "sqlite":
        pg_dsn()  # skips (outside CI) when there is no server

    async def main() -> Any:
        store = await open_store(kind, tmp_path)
        try:
            return await body(store)
        finally:
            await close_store(store)

    return asyncio.run(main())


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


#: A conversation of plain and typed messages, reasoning, a call and its output and a hosted
#: tool's call, for replay to other providers.
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"content": "What's the weather in Paris?", "role": "user"},
    ITEMS[4],  # reasoning (OpenAI's: replayed to OpenAI only)
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}],
    },
    ITEMS[5],  # function_call
    ITEMS[6],  # its output
    ITEMS[11],  # web search call (OpenAI's hosted tool: replayed to OpenAI only)
    ITEMS[24],  # the answer
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Thanks!"}]},
    {"role": "assistant", "content": "You're welcome."},
]
