"""The twin's Responses adapter on the items it keeps whole (``src/engine/providers/
openai_responses/tools.rs``): the deltas and statuses of MCP, code-interpreter, shell, image,
search and compaction items, and the response's audio (spec §10.2-10.3).

An item the message does not model becomes an ``unknown`` part with its raw JSON. Its
``output_item.done`` (or the terminal response's ``output``) gives that JSON. Until then the
item as added is kept, with what the stream said of it since: the deltas are collected as
pieces (appends stay linear) and applied only when the item is built, at the end of a stream
cut before the item's done (flagged ``truncated``). Audio has no output index: its base64
pieces and transcript are joined into one ``unknown`` part of kind ``audio`` (the shape of the
Chat adapter's ``delta.audio``), emitted when the response ends.
"""

from __future__ import annotations

from typing import Any

from .._common import AdapterError

NAME = "openai-responses"
COMMAND_LIMIT = 500  # shell command indexes 0..499, as content indexes

# Every member of the openai SDK's ``ResponseStreamEvent`` union, and what it does (spec §10.1).
WIRE_RULES: dict[str, str] = {
    "response.created": "starts the response: its id, model and fields",
    "response.queued": "updates the response's fields",
    "response.in_progress": "updates the response's fields",
    "response.completed": "ends the response: status complete, usage, and its output items "
    "are authoritative",
    "response.incomplete": "ends the response: incomplete, with the reason as finish_reason",
    "response.failed": "ends the response: status failed, with its error",
    "error": "ends the response: status failed, with the error",
    "response.output_item.added": "starts the item at its output index",
    "response.output_item.done": "gives the item as finally reported (authoritative)",
    "response.content_part.added": "opens a content entry; its text comes with the deltas",
    "response.content_part.done": "gives a content entry's whole text (authoritative)",
    "response.output_text.delta": "appends to the message's text (and its logprobs)",
    "response.output_text.done": "gives the text's whole value (authoritative)",
    "response.output_text.annotation.added": "appends a citation to the text",
    "response.refusal.delta": "appends to the message's refusal",
    "response.refusal.done": "gives the refusal's whole value (authoritative)",
    "response.reasoning_text.delta": "appends to the reasoning item's content text",
    "response.reasoning_text.done": "gives the reasoning text's whole value (authoritative)",
    "response.reasoning_summary_part.added": "opens a reasoning summary entry",
    "response.reasoning_summary_part.done": "gives a summary entry's whole text (authoritative)",
    "response.reasoning_summary_text.delta": "appends to the reasoning item's summary text",
    "response.reasoning_summary_text.done": "gives the summary text's whole value (authoritative)",
    "response.function_call_arguments.delta": "appends to the function call's arguments",
    "response.function_call_arguments.done": "gives the function call's whole arguments "
    "(authoritative)",
    "response.custom_tool_call_input.delta": "appends to the custom tool call's input",
    "response.custom_tool_call_input.done": "gives the custom tool call's whole input "
    "(authoritative)",
    "response.mcp_call_arguments.delta": "appends to the mcp_call item's arguments",
    "response.mcp_call_arguments.done": "replaces the mcp_call item's arguments",
    "response.mcp_call.in_progress": "sets the item's status",
    "response.mcp_call.completed": "sets the item's status",
    "response.mcp_call.failed": "sets the item's status",
    "response.mcp_list_tools.in_progress": "sets the item's status",
    "response.mcp_list_tools.completed": "sets the item's status",
    "response.mcp_list_tools.failed": "sets the item's status",
    "response.code_interpreter_call_code.delta": "appends to the code_interpreter_call item's code",
    "response.code_interpreter_call_code.done": "replaces the code_interpreter_call item's code",
    "response.code_interpreter_call.in_progress": "sets the item's status",
    "response.code_interpreter_call.interpreting": "sets the item's status",
    "response.code_interpreter_call.completed": "sets the item's status",
    "response.shell_call_command.added": "starts a command of the shell_call item's "
    "action.commands",
    "response.shell_call_command.delta": "appends to a command of the shell_call item's "
    "action.commands",
    "response.shell_call_command.done": "replaces a command of the shell_call item's "
    "action.commands",
    "response.shell_call_output_content.delta": "appends to the stdout and stderr of a "
    "shell_call_output item's output entry",
    "response.shell_call_output_content.done": "replaces a shell_call_output item's output entry",
    "response.image_generation_call.partial_image": "replaces the item's partial image (the "
    "highest partial_image_index wins)",
    "response.image_generation_call.in_progress": "sets the item's status",
    "response.image_generation_call.generating": "sets the item's status",
    "response.image_generation_call.completed": "sets the item's status",
    "response.web_search_call.in_progress": "sets the item's status",
    "response.web_search_call.searching": "sets the item's status",
    "response.web_search_call.completed": "sets the item's status",
    "response.file_search_call.in_progress": "sets the item's status",
    "response.file_search_call.searching": "sets the item's status",
    "response.file_search_call.completed": "sets the item's status",
    "response.compaction.compacting": "sets the item's status",
    "response.audio.delta": "appends to the response's base64 audio",
    "response.audio.done": "marks the audio complete",
    "response.audio.transcript.delta": "appends to the audio's transcript",
    "response.audio.transcript.done": "marks the transcript complete",
}

# status-only events: the item kind they belong to and the status they set
STATUS_KINDS = (
    "mcp_call",
    "mcp_list_tools",
    "code_interpreter_call",
    "image_generation_call",
    "web_search_call",
    "file_search_call",
    "compaction",
)
STATUSES = (
    "in_progress",
    "searching",
    "generating",
    "interpreting",
    "completed",
    "failed",
    "compacting",
)
# appending deltas (and their done events) of a top-level string field: the item kind, the field
_FIELDS = {
    "mcp_call_arguments": ("mcp_call", "arguments"),
    "code_interpreter_call_code": ("code_interpreter_call", "code"),
}


def _type_name(value: Any) -> str:
    return type(value).__name__


class Tool:
    """What the stream said of a kept item since it was added."""

    __slots__ = ("fields", "status", "image", "commands", "outputs")

    def __init__(self) -> None:
        self.fields: dict[str, list[str]] = {}  # top-level str field -> its pieces
        self.status: str | None = None
        self.image: tuple[int, str] | None = None  # (partial_image_index, base64)
        self.commands: dict[int, list[str]] = {}  # command_index -> pieces
        # command_index -> {"stdout": pieces, "stderr": pieces}, or the done event's list
        self.outputs: dict[int, Any] = {}


def build(raw: Any, kind: str, item_id: Any, tool: Tool | None) -> dict[str, Any]:
    """The kept item: as added (or, without its ``output_item.added``, its ``type`` and
    ``id``) with the deltas and statuses received applied."""
    if isinstance(raw, dict):
        item = dict(raw)
    else:
        item = {"type": kind}
        if isinstance(item_id, str):
            item["id"] = item_id
    if tool is None:
        return item
    for field, pieces in tool.fields.items():
        item[field] = "".join(pieces)
    if tool.commands:
        action = item.get("action")
        action = dict(action) if isinstance(action, dict) else {}
        given = action.get("commands")
        commands = list(given) if isinstance(given, list) else []
        for ci in sorted(tool.commands):
            _place(commands, ci, "".join(tool.commands[ci]))
        action["commands"] = commands
        item["action"] = action
    if tool.outputs:
        given = item.get("output")
        output = list(given) if isinstance(given, list) else []
        for ci in sorted(tool.outputs):
            entry = tool.outputs[ci]
            if isinstance(entry, list):
                if len(entry) == 1:
                    _place(output, ci, entry[0])
                else:
                    _place(output, ci, entry)
            else:
                _place(output, ci, {k: "".join(v) for k, v in entry.items()})
        item["output"] = output
    if tool.image is not None:
        item["partial_image_index"] = tool.image[0]
        item["partial_image_b64"] = tool.image[1]
    if tool.status is not None:
        item["status"] = tool.status
    return item


def _place(entries: list[Any], at: int, value: Any) -> None:
    """``value`` at ``at``, or appended when the list is shorter (no entry is invented)."""
    if at < len(entries):
        entries[at] = value
    else:
        entries.append(value)


def tool_at(
    adapter: Any, event: dict[str, Any], kind: str, implied: str, anomalies: list[Any]
) -> Any:
    """The kept item an event of ``implied``'s family updates; None when it is done (the done
    item is authoritative) or of another kind (``mismatched_delta``)."""
    index = adapter._index(event, kind)
    item = adapter._item_at(index, kind, implied, anomalies)
    if item.kind != implied:
        anomalies.append(
            {
                "code": "mismatched_delta",
                "detail": f"{kind} on a {item.kind} item at output_index {index} ignored",
            }
        )
        return None
    if item.done:
        return None
    item_id = event.get("item_id")
    if item.item_id is None and type(item_id) is str:
        item.item_id = item_id
        adapter.ids[item_id] = index
    if item.tool is None:
        item.tool = Tool()
    return item


def _pieces(item: Any, field: str) -> list[str]:
    pieces: list[str] | None = item.tool.fields.get(field)
    if pieces is None:
        base = item.raw.get(field) if isinstance(item.raw, dict) else None
        pieces = item.tool.fields[field] = [base] if type(base) is str and base else []
    return pieces


def _str(event: dict[str, Any], key: str, kind: str) -> str:
    value = event.get(key)
    if type(value) is not str:
        raise AdapterError(f"{kind}: {key!r} must be a str, not {_type_name(value)}")
    return value


def _command_index(event: dict[str, Any], kind: str) -> int:
    value = event.get("command_index")
    if value is None:
        return 0
    if type(value) is not int:
        raise AdapterError(f"{kind}: 'command_index' must be an int, not {_type_name(value)}")
    if not 0 <= value < COMMAND_LIMIT:
        raise AdapterError(
            f"{kind}: 'command_index' must be between 0 and {COMMAND_LIMIT - 1}, not {value}"
        )
    return value


def _done(leaves: list[Any], anomalies: list[Any]) -> None:
    if anomalies:
        leaves.append((0, {"anomalies": anomalies}))


def field_delta(adapter: Any, event: dict[str, Any], kind: str, leaves: list[Any]) -> None:
    """``mcp_call_arguments.delta`` / ``code_interpreter_call_code.delta`` (append) and their
    ``.done`` (replace)."""
    family, _, what = kind[9:].rpartition(".")
    implied, field = _FIELDS[family]
    value = _str(event, "delta" if what == "delta" else field, kind)
    anomalies: list[Any] = []
    item = tool_at(adapter, event, kind, implied, anomalies)
    if item is not None:
        if what == "delta":
            if value:
                _pieces(item, field).append(value)
        else:
            item.tool.fields[field] = [value]
    _done(leaves, anomalies)


def status(adapter: Any, event: dict[str, Any], kind: str, leaves: list[Any]) -> None:
    """A status-only event: the item's ``status`` (``compacting`` included)."""
    family, _, value = kind[9:].rpartition(".")
    anomalies: list[Any] = []
    item = tool_at(adapter, event, kind, family, anomalies)
    if item is not None:
        item.tool.status = value
    _done(leaves, anomalies)


def command(adapter: Any, event: dict[str, Any], kind: str, leaves: list[Any]) -> None:
    """``shell_call_command.added`` / ``.done`` (replace) and ``.delta`` (append) on the shell
    call's ``action.commands[command_index]``."""
    ci = _command_index(event, kind)
    delta = kind == "response.shell_call_command.delta"
    value = _str(event, "delta" if delta else "command", kind)
    anomalies: list[Any] = []
    item = tool_at(adapter, event, kind, "shell_call", anomalies)
    if item is not None:
        commands = item.tool.commands
        if delta:
            pieces = commands.get(ci)
            if pieces is None:
                pieces = commands[ci] = []
            if value:
                pieces.append(value)
        else:
            commands[ci] = [value]
    _done(leaves, anomalies)


def output_content(adapter: Any, event: dict[str, Any], kind: str, leaves: list[Any]) -> None:
    """``shell_call_output_content.delta`` (stdout and stderr append) and ``.done`` (its
    ``output`` replaces) on the shell call output's ``output[command_index]``."""
    ci = _command_index(event, kind)
    delta = kind == "response.shell_call_output_content.delta"
    value = event.get("delta" if delta else "output")
    if delta and not isinstance(value, dict):
        raise AdapterError(f"{kind}: 'delta' must be a dict, not {_type_name(value)}")
    if not delta and not isinstance(value, list):
        raise AdapterError(f"{kind}: 'output' must be a list, not {_type_name(value)}")
    anomalies: list[Any] = []
    item = tool_at(adapter, event, kind, "shell_call_output", anomalies)
    if item is not None:
        outputs = item.tool.outputs
        if delta:
            assert isinstance(value, dict)
            entry = outputs.get(ci)
            if not isinstance(entry, dict):
                entry = outputs[ci] = {}
            for key in ("stdout", "stderr"):
                piece = value.get(key)
                if piece is None:
                    continue
                if type(piece) is not str:
                    raise AdapterError(
                        f"{kind}: 'delta.{key}' must be a str, not {_type_name(piece)}"
                    )
                entry.setdefault(key, []).append(piece)
        else:
            outputs[ci] = value
    _done(leaves, anomalies)


def partial_image(adapter: Any, event: dict[str, Any], kind: str, leaves: list[Any]) -> None:
    """``image_generation_call.partial_image``: the highest ``partial_image_index`` wins."""
    data = _str(event, "partial_image_b64", kind)
    at = event.get("partial_image_index")
    if type(at) is not int:
        raise AdapterError(f"{kind}: 'partial_image_index' must be an int, not {_type_name(at)}")
    anomalies: list[Any] = []
    item = tool_at(adapter, event, kind, "image_generation_call", anomalies)
    if item is not None and (item.tool.image is None or at >= item.tool.image[0]):
        item.tool.image = (at, data)
    _done(leaves, anomalies)


def audio(adapter: Any, event: dict[str, Any], kind: str, leaves: list[Any]) -> None:
    """``audio.delta`` (base64) and ``audio.transcript.delta`` append; their ``.done`` mark
    them complete."""
    key = "transcript" if kind.startswith("response.audio.transcript.") else "data"
    if kind.endswith(".done"):
        adapter.audio_done.add(key)
        return
    delta = _str(event, "delta", kind)
    pieces = adapter.audio.get(key)
    if pieces is None:
        pieces = adapter.audio[key] = []
    if delta:
        pieces.append(delta)


def audio_part(adapter: Any) -> dict[str, Any] | None:
    """The response's audio as one ``unknown`` part (once), or None."""
    if adapter.audio_emitted or not adapter.audio:
        return None
    adapter.audio_emitted = True
    raw = {
        key: "".join(adapter.audio[key]) for key in ("data", "transcript") if key in adapter.audio
    }
    return {"part": "unknown", "provider": NAME, "kind": "audio", "raw": raw}


def audio_cut(adapter: Any, anomalies: list[Any]) -> None:
    """The truncation anomalies of audio the stream cut."""
    for key, done in (
        ("data", "response.audio.done"),
        ("transcript", "response.audio.transcript.done"),
    ):
        if key in adapter.audio and key not in adapter.audio_done:
            anomalies.append(
                {"code": "truncated", "detail": f"audio {key} ended before its {done}"}
            )


def handlers() -> dict[str, Any]:
    """The handlers of these events, by the name after ``response.``."""
    out: dict[str, Any] = {}
    for family in _FIELDS:
        out[f"{family}.delta"] = field_delta
        out[f"{family}.done"] = field_delta
    for family in STATUS_KINDS:
        for value in STATUSES:
            out[f"{family}.{value}"] = status
    for what in ("added", "delta", "done"):
        out[f"shell_call_command.{what}"] = command
    out["shell_call_output_content.delta"] = output_content
    out["shell_call_output_content.done"] = output_content
    out["image_generation_call.partial_image"] = partial_image
    for name in ("audio.delta", "audio.done", "audio.transcript.delta", "audio.transcript.done"):
        out[name] = audio
    return out
