"""Reading a state back as plain data (``src/engine/chunks/read.rs``): fresh containers, keys
in the engine's order, and the end-of-stream rules of :meth:`ChunkCore.to_message`
(synthetic ids, usage totals)."""

from __future__ import annotations

from typing import Any

from ... import errors
from .merge import _thaw
from .state import FINISH_REASONS, _State
from .usage import _counts_total, _is_number


def _materialize(state: _State, finish: bool) -> dict[str, Any]:
    """The folded fields as plain data; ``finish`` applies the end-of-stream rules (synthetic
    ids [E37], a computed or checked usage total [E57]). Containers are fresh copies."""
    family = state.family
    data: dict[str, Any] = {"family": family, "role": state.role, "name": state.name}
    data["metadata"] = _thaw(state.metadata) if state.metadata is not None else {}
    if family != "assistant":
        data["content"] = _content(state)
        if family == "tool":
            data["tool_call_id"] = state.tool_call_id
        return data
    anomalies = [dict(a) for a in state.anomalies]
    parts = []
    synthetic = 0
    for part in state.parts:
        out: dict[str, Any]
        if part.kind == "tool_call":
            call = part.call
            assert call is not None
            call_id = call.id
            # a fragment that never met a name stays an orphan, never a ghost call [E33]
            if call_id is None and finish and call.name is not None:
                call_id = f"call_fm_{synthetic}"
                synthetic += 1
                detail = f"tool call {call.name!r} had no id; generated {call_id!r}"
                if state.options.strict:
                    raise errors.anomaly("synthetic_id", detail)
                anomalies.append({"code": "synthetic_id", "detail": detail})
            arguments: Any = (
                _thaw(call.args_dict) if call.args_dict is not None else "".join(part.pieces)
            )
            out = {
                "part": "tool_call",
                "id": call_id,
                "type": call.type if call.type is not None else "function",
                "name": call.name,
                "arguments": arguments,
                "provider_index": call.provider_index,
            }
            for key in ("payload", "response_item_id", "extra"):
                out[key] = _thaw(part.fields.get(key))
            out["call_index"] = _thaw(part.fields.get("call_index")) if state.leaves == 1 else None
        elif part.kind in ("text", "reasoning"):
            out = {"part": part.kind, "text": "".join(part.pieces)}
            if part.kind == "text":
                out["citations"] = _thaw(part.fields.get("citations"))
                out["attributes"] = _thaw(part.fields.get("attributes"))
            else:
                out["summary"] = "".join(part.summary) if part.summary is not None else None
                out["payload"] = _thaw(part.fields.get("payload"))
                out["redacted"] = bool(part.fields.get("redacted"))
            out["index"] = part.index
        else:
            out = {"part": part.kind}
            out.update(_thaw(part.fields))
            out["index"] = part.index
        parts.append(out)
    data["parts"] = parts
    data["content_list"] = state.content_list
    usage = _thaw(state.usage)
    if finish and usage is not None:
        _finish_usage(state, usage, anomalies)
    data["usage"] = usage
    data["finish_reason"] = state.finish_reason
    normalized = FINISH_REASONS.get(state.finish_reason)
    data["finish_reason_normalized"] = (
        normalized if normalized is not None else state.finish_reason_normalized
    )
    data["parser_content"] = state.parser_content
    data["prompt_token_ids"] = _thaw(state.prompt_token_ids)
    data["completion_token_ids"] = _thaw(state.completion_token_ids)
    data["logprobs"] = _thaw(state.logprobs)
    data["response_id"] = state.response_id
    data["response_model"] = state.response_model
    data["provider_metadata"] = (
        _thaw(state.provider_metadata) if state.provider_metadata is not None else {}
    )
    data["provider_content"] = state.provider_content
    data["refusal"] = "".join(state.refusal) if state.refusal is not None else None
    data["status"] = state.status
    data["anomalies"] = anomalies
    data["choice_index"] = state.choice_index
    return data


def _finish_usage(state: _State, usage: dict[Any, Any], anomalies: list[dict[str, Any]]) -> None:
    """A missing total, or a per-chunk one, is input + output (absent counts 0); another
    reported one is kept and checked [E57, E78]."""
    total: Any = usage.get("total_tokens")
    computed = _counts_total(usage)
    if total is None or (_is_number(total) and (total == 0 or state.per_chunk_total)):
        if computed is not None:
            usage["total_tokens"] = computed
    elif _is_number(total) and computed is not None and total != computed:
        inputs, outputs = usage.get("input_tokens"), usage.get("output_tokens")
        detail = f"reported total_tokens {total!r} != input {inputs!r} + output {outputs!r}"
        if state.options.strict:
            raise errors.anomaly("total_mismatch", detail)
        anomalies.append({"code": "total_mismatch", "detail": detail})


def _content(state: _State) -> Any:
    kind = state.content_kind
    if kind == "str":
        return "".join(state.content_pieces)
    if kind == "list":
        return list(state.content_pieces)
    if kind == "other":
        return state.content
    return ""
