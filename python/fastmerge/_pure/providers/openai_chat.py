"""The twin's ``"openai-chat"`` adapter (``src/engine/providers/openai_chat.rs``).

One file mirrors ``openai_chat.rs`` and ``openai_chat/delta.rs`` (``reasoning_details``,
Mistral's typed content, ``tool_calls`` entries); the engine's ``openai_chat/fast.rs`` is a
typed fast path with the same output and has no counterpart here.

OpenAI Chat Completions chunks and the servers that copy them (Azure, DeepSeek, Qwen, Z.ai,
xAI, Groq, OpenRouter, Snowflake, Together, vLLM, Mistral). Each chunk gives one leaf per entry
of ``choices``, keyed by the entry's ``index`` (n > 1: any order); a chunk with ``choices: []``
(the usage chunk, Azure's prompt-filter prelude, a moderation trailer) gives its fields to every
choice seen so far, or to choice 0.

What a choice entry maps to:

- ``delta.role`` -> ``role``; ``delta.refusal`` -> ``refusal``;
- reasoning: ``delta.reasoning_content`` (DeepSeek, Qwen, xAI, Z.ai) or ``delta.reasoning``
  (Groq, OpenRouter) -> a reasoning delta, the field's name in
  ``provider_metadata["reasoning_field"]`` (a replay sends the name received);
  ``delta.reasoning_details[]`` (OpenRouter,
  Snowflake) -> reasoning deltas at the entry's ``index`` as part index, with the
  entry's signature or encrypted data as an opaque payload (kind = the entry's ``type``) and
  its other fields (``type``, ``format``, ``id``) in
  ``provider_metadata["reasoning_details"]["<index>"]``. OpenRouter repeats the text of its
  ``reasoning_details`` in ``reasoning``: when the details carry text, ``reasoning`` is not
  added again;
- ``delta.content``: a string is a text delta; a list (Mistral) gives its items in order:
  ``{"type": "text"}`` -> text, ``{"type": "thinking", "thinking": [...]}`` -> reasoning,
  anything else -> an unknown part with the item verbatim (and ``content_list``). Inline
  ``<think>`` tags (Groq raw, Together) stay in the text as sent; ``delta.annotations``
  (url citations) -> the text part's ``citations``;
- ``delta.tool_calls[]`` -> tool-call fragments (``provider_index`` = the entry's ``index``;
  the fold's resolver matches them); keys beside ``index/id/type/function/custom`` are kept
  in the call's ``extra`` (Gemini-compatible ``extra_content``);
- the deprecated ``delta.function_call`` -> a tool-call fragment at ``provider_index`` -1;
  ``delta.audio`` pieces -> unknown parts (kind ``audio``), verbatim but for null members;
- ``delta.executed_tools[]`` (Groq compound) -> unknown parts, each entry verbatim;
- ``delta.images[]`` (OpenRouter, LiteLLM) and ``delta.reasoning_items[]`` (LiteLLM) -> unknown
  parts of that kind, each entry verbatim, so that every chunk's entries are kept in order (a
  value that is no list, or an empty list, stays in ``provider_metadata["message"]``);
- ``logprobs`` -> ``logprobs`` (null members read as absent); ``token_ids`` (vLLM) and
  ``delta.token_id`` (Together) -> ``completion_token_ids``; ``finish_reason`` ->
  ``finish_reason`` and ``status: complete``;
- other keys of the choice (``stop_reason``, ``native_finish_reason``, ``seed``,
  ``content_filter_results``) -> ``provider_metadata["choice"]``, other keys of the delta ->
  ``provider_metadata["message"]``. Together's ``choices[].text`` repeats ``delta.content``
  and is not kept twice.

Top-level fields: ``id`` -> ``response_id``, ``model`` -> ``response_model``, ``created``,
``object``, ``system_fingerprint``, ``service_tier`` -> ``provider_metadata``, any other key
(``x_groq``, OpenRouter's ``provider``, Azure's ``prompt_filter_results``, ``moderation``,
``prompt_text``) -> ``provider_metadata["response"]``; ``prompt_token_ids`` ->
``prompt_token_ids``; ``usage`` (or Groq's ``x_groq.usage``) -> ``usage`` with the normalized
keys; ``obfuscation`` is per-chunk padding and is dropped. An ``error`` object fails every
choice seen so far (``provider_metadata["error"]``).

Every chunk repeats ``id``, ``model`` and the metadata above: a choice's leaf carries them only
when they differ from what was last sent for that choice (folding an equal value again
changes nothing), so the common chunk is a bare text delta. Usage is always sent (with
``usage="sum"`` a repeated usage would count again, as the caller asked).

A chunk with an id other than the one a choice finished with starts another response
(``new_response``, spec §6); ids before the finish say nothing (Groq compound sends a new id
on every chunk), nor do chunks after it that repeat the id (usage, moderation trailers).

Quirks are anomalies: a second call at a used tool-call index (``index_collision``),
arguments at a new index before its id and name (``delta_before_start``), and a stream that
ends inside a tool call without ``finish_reason`` (``truncated``, from :meth:`Adapter.end`).
"""

from __future__ import annotations

from typing import Any

from ._common import AdapterError, FinishedId, cut_call_anomaly, text_field

NAME = "openai-chat"

_TOP_METADATA = ("created", "object", "system_fingerprint", "service_tier")
_TOP_KNOWN = frozenset(
    {
        "id",
        "model",
        "choices",
        "usage",
        "prompt_token_ids",
        "obfuscation",
        "error",
        *_TOP_METADATA,
    }
)
_CHOICE_KNOWN = frozenset({"index", "delta", "finish_reason", "logprobs", "token_ids", "text"})
#: Delta lists whose entries each chunk adds to the message: each an unknown part of its kind.
_LISTED = ("images", "reasoning_items")
_DELTA_KNOWN = frozenset(
    {
        "role",
        "content",
        "refusal",
        "tool_calls",
        "reasoning_content",
        "reasoning",
        "reasoning_details",
        "token_id",
        "executed_tools",
        "annotations",
        "function_call",
        "audio",
    }
)
#: The rule of every field the openai SDK's chunk types define (``ChatCompletionChunk``,
#: ``Choice``, ``ChoiceDelta``, ``ChoiceDeltaToolCall`` and its function): a test enumerates
#: them from the installed SDK and fails for a field without a rule here, or a rule for none.
WIRE_RULES: dict[str, str] = {
    "chunk:id": "sets response_id (the first kept); a new id after the finish is new_response",
    "chunk:choices": "each entry folds into the choice of its index; [] speaks for every choice",
    "chunk:created": "sets provider_metadata['created']",
    "chunk:model": "sets response_model (the last kept)",
    "chunk:object": "sets provider_metadata['object']",
    "chunk:moderation": "sets provider_metadata['response']['moderation'] (deep-merged)",
    "chunk:obfuscation": "per-chunk padding: dropped (it carries no content)",
    "chunk:service_tier": "sets provider_metadata['service_tier']",
    "chunk:system_fingerprint": "sets provider_metadata['system_fingerprint']",
    "chunk:usage": "sets usage (normalized keys, then every key verbatim; the last replaces)",
    "choice:delta": "its fields fold into the choice's message (the delta: rules)",
    "choice:index": "selects the choice (its choice_index)",
    "choice:finish_reason": "sets finish_reason and status 'complete'",
    "choice:logprobs": "appends to logprobs (its content and refusal lists)",
    "delta:role": "sets role",
    "delta:content": "appends to the text part (a list: each typed item in order)",
    "delta:refusal": "appends to refusal",
    "delta:tool_calls": "each entry is a tool-call fragment, resolved by its index",
    "delta:function_call": "the deprecated call: a tool-call fragment at provider_index -1 "
    "(name sets, arguments append)",
    "delta:audio": "kept verbatim as an unknown part (kind 'audio'), piece by piece",
    "tool_call:index": "selects the call (provider_index)",
    "tool_call:id": "sets the call's id (the first fragment's)",
    "tool_call:type": "sets the call's type",
    "tool_call:function": "its name and arguments (the tool_call:function. rules)",
    "tool_call:function.name": "sets the call's name",
    "tool_call:function.arguments": "appends to the call's arguments, as streamed",
}

# keys that make an event a chat chunk (not ``model``, which Ollama's objects have, nor
# ``usage``, which Anthropic's message_delta has)
_RECOGNIZED = (
    "choices",
    "id",
    "object",
    "created",
    "system_fingerprint",
    "prompt_token_ids",
    "error",
)
_CALL_KNOWN = frozenset({"index", "id", "type", "function", "custom"})
_DETAIL_OPAQUE = frozenset({"text", "summary", "signature", "data", "index"})
_DETAIL_TYPES = frozenset({"reasoning.text", "reasoning.summary", "reasoning.encrypted"})


def _absent(value: Any) -> bool:
    """Spec: None, or a str that is empty, whitespace or "null"."""
    if value is None:
        return True
    if isinstance(value, str):
        return value == "null" or not value or value.isspace()
    return False


def _without_null_members(value: Any) -> Any:
    """An object without its null members (any other value as it is). The API's ``logprobs``
    and audio pieces spell an absent list or field as null, as does an SDK's ``model_dump()``
    for every unset field: read as absent, so a chunk with and without them gives one
    message."""
    if isinstance(value, dict) and any(v is None for v in value.values()):
        return {k: v for k, v in value.items() if v is not None}
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any) -> str:
    """A non-empty str, else ""."""
    return value if isinstance(value, str) else ""


def _usage(raw: dict[str, Any]) -> dict[str, Any]:
    """Provider usage -> the normalized keys (``input_tokens``, ``output_tokens``,
    ``total_tokens``, ``cache_read_tokens``, ``reasoning_tokens``); every other key verbatim."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None:
            continue
        if key == "prompt_tokens":
            out["input_tokens"] = value
        elif key == "completion_tokens":
            out["output_tokens"] = value
        else:
            out[key] = value
    details = raw.get("prompt_tokens_details")
    if isinstance(details, dict) and details.get("cached_tokens") is not None:
        out["cache_read_tokens"] = details["cached_tokens"]
    elif raw.get("prompt_cache_hit_tokens") is not None:  # DeepSeek
        out["cache_read_tokens"] = raw["prompt_cache_hit_tokens"]
    details = raw.get("completion_tokens_details")
    if isinstance(details, dict) and details.get("reasoning_tokens") is not None:
        out["reasoning_tokens"] = details["reasoning_tokens"]
    return out


def _kept_whole(where: str, delta: dict[str, Any], parts: list[dict[str, Any]]) -> None:
    """The delta's fields kept verbatim as ``unknown`` parts: audio, executed tools, and the
    entries of the listed fields."""
    audio = delta.get("audio")  # audio output: pieces of data and transcript, verbatim
    if audio is not None:
        raw = _without_null_members(audio)
        parts.append({"part": "unknown", "provider": NAME, "kind": "audio", "raw": raw})
    tools = delta.get("executed_tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise AdapterError(f"{where}.delta.executed_tools is not a list")
        for tool in tools:
            parts.append(
                {"part": "unknown", "provider": NAME, "kind": "executed_tools", "raw": tool}
            )
    for key in _LISTED:
        entries = delta.get(key)
        if isinstance(entries, list):
            for entry in entries:
                parts.append({"part": "unknown", "provider": NAME, "kind": key, "raw": entry})


def _choice_fields(
    where: str, choice: dict[str, Any], delta: dict[str, Any], state: _Choice, leaf: dict[str, Any]
) -> None:
    """The choice's own fields: refusal, logprobs, token ids, and the finish."""
    refusal = delta.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        raise AdapterError(f"{where}.delta.refusal is not a string")
    if refusal:
        leaf["refusal"] = refusal
    logprobs = choice.get("logprobs")
    if logprobs is not None:
        leaf["logprobs"] = _without_null_members(logprobs)
    ids = choice.get("token_ids")
    if ids is not None and not isinstance(ids, list):
        raise AdapterError(f"{where}.token_ids is not a list")
    token_id = delta.get("token_id")
    if ids:
        leaf["completion_token_ids"] = ids
    elif _is_int(token_id):  # Together: one token per chunk
        leaf["completion_token_ids"] = [token_id]
    finish = text_field(choice.get("finish_reason"), f"{where}.finish_reason")
    if finish is not None:
        leaf["finish_reason"] = finish
        if not _absent(finish):
            leaf["status"] = "complete"
            state.finished = True


def _extras(choice: dict[str, Any], delta: dict[str, Any], pm: dict[str, Any]) -> None:
    """What no field holds: the choice's and the delta's other keys, verbatim."""
    extra = {k: v for k, v in choice.items() if k not in _CHOICE_KNOWN and v is not None}
    if extra:
        pm["choice"] = extra
    extra = {
        k: v
        for k, v in delta.items()
        if k not in _DELTA_KNOWN
        and v is not None
        # (a listed field that is no list, or an empty one, stays a field of the message)
        and not (k in _LISTED and isinstance(v, list) and v)
    }
    if extra:
        pm["message"] = extra


class _Choice:
    """What the adapter remembers of one choice: its tool-call indexes (id and name seen
    there), the call the stream is inside, whether its finish_reason came, and the id, model
    and provider_metadata entries last sent to the fold (``sent``)."""

    __slots__ = ("calls", "open_call", "finished", "sent")

    def __init__(self) -> None:
        self.calls: dict[int, list[Any]] = {}
        self.open_call: list[Any] | None = None
        self.finished = False
        self.sent: dict[str, Any] = {}

    def changed(self, leaf: dict[str, Any]) -> None:
        """Drop from ``leaf`` the id, model and provider_metadata entries equal to those last
        sent for this choice: every chunk repeats them, and folding a value again changes
        nothing (first id, last model, deep merge), so the common chunk stays a bare delta."""
        sent = self.sent
        for key in ("response_id", "response_model"):
            if key in leaf:
                if key in sent and sent[key] == leaf[key]:
                    del leaf[key]
                else:
                    sent[key] = leaf[key]
        meta = leaf.get("provider_metadata")
        if meta:
            fresh = {}
            for key, value in meta.items():
                if key not in sent or sent[key] != value:
                    sent[key] = value
                    fresh[key] = value
            if fresh:
                leaf["provider_metadata"] = fresh
            else:
                del leaf["provider_metadata"]

    def remember(self, leaf: dict[str, Any]) -> None:
        """Record what a leaf sent whole (a chunk without choices)."""
        for key in ("response_id", "response_model"):
            if key in leaf:
                self.sent[key] = leaf[key]
        for key, value in (leaf.get("provider_metadata") or {}).items():
            self.sent[key] = value


class Adapter:
    """OpenAI Chat Completions chunks -> leaves (see the module docstring)."""

    name = NAME

    def __init__(self) -> None:
        self.choices: dict[int, _Choice] = {}  # in the order first seen
        self.finished_id = FinishedId()  # the chunk id when a choice first finished
        # the choices of the last event that are not objects, while others were (``unread``)
        self._unread: list[str] = []

    # -- events

    def knows(self, event: dict[str, Any]) -> bool:
        """Whether the event has a key of a chat chunk (spec §8)."""
        return any(key in event for key in _RECOGNIZED)

    def new_response(self, event: dict[str, Any]) -> str | None:
        """Why the chunk starts another response, or None (spec §6): an id other than the
        one a choice finished with. Groq compound changes the id on every chunk before the
        finish, so ids before it say nothing."""
        chunk_id = self.finished_id.other(event.get("id"))
        if chunk_id is None:
            return None
        return f"id {chunk_id!r} after a choice finished with id {self.finished_id.finished!r}"

    def ends_stream(self, event: dict[str, Any]) -> bool:
        """Whether the chunk is the stream's last (the batch reader ends the stream there):
        the ``include_usage`` chunk, non-null ``usage`` with ``choices: []``, always comes
        last."""
        return event.get("usage") is not None and event.get("choices") == []

    def event(self, event: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        choices = event.get("choices")
        if choices is None:
            choices = []
        elif not isinstance(choices, list):
            raise AdapterError("choices is not a list")
        usage = event.get("usage")
        if usage is not None and not isinstance(usage, dict):
            raise AdapterError("usage is not an object")
        for key in ("id", "model"):
            text_field(event.get(key), key)
        ids = event.get("prompt_token_ids")
        if ids is not None and not isinstance(ids, list):
            raise AdapterError("prompt_token_ids is not a list")
        if usage is None:
            groq = event.get("x_groq")
            if isinstance(groq, dict) and isinstance(groq.get("usage"), dict):
                usage = groq["usage"]
        leaves: list[tuple[int, dict[str, Any]]] = []
        # a choice that is not an object is not read, the others are (E90); an event with no
        # choice that is an object is not read at all
        self._unread = []
        some_object = any(isinstance(choice, dict) for choice in choices)
        for i, choice in enumerate(choices):
            if some_object and not isinstance(choice, dict):
                self._unread.append(f"choices[{i}] is not an object")
                continue
            leaves.append(self._choice(event, usage, i, choice))
        self.finished_id.track(
            event.get("id"), lambda: any(c.finished for c in self.choices.values())
        )
        if not choices:
            leaf = self._top(event, usage, None)
            if leaf:
                for index in self._targets():
                    self.choices[index].remember(leaf)
                    leaves.append((index, leaf))
        error = event.get("error")
        if error is not None:
            failed = {"status": "failed", "provider_metadata": {"error": error}}
            for index in self._targets():
                leaves.append((index, failed))
        return leaves

    def unread(self) -> list[str]:
        """The parts of the event just read that could not be read while the rest of it was:
        the details of its ``unreadable_event`` anomalies (``EventError`` in strict mode)."""
        unread, self._unread = self._unread, []
        return unread

    def end(self) -> list[tuple[int, dict[str, Any]]]:
        leaves: list[tuple[int, dict[str, Any]]] = []
        for index, state in self.choices.items():
            call = state.open_call
            if call is not None and not state.finished:
                detail = (
                    f"choice {index}: the stream ended inside tool call {call[0]!r} "
                    f"({call[1]!r}) without a finish_reason; its arguments are kept as streamed"
                )
                leaves.append((index, {"anomalies": [cut_call_anomaly(detail, call[0], call[1])]}))
        return leaves

    # -- internals

    def _targets(self) -> list[int]:
        """The choices a chunk without choices speaks for: every choice seen, else 0."""
        if not self.choices:
            self.choices[0] = _Choice()
        return list(self.choices)

    def _top(self, event: dict[str, Any], usage: Any, pm: dict[str, Any] | None) -> dict[str, Any]:
        """The leaf fields of the chunk's top level, after the choice's own (``pm``: the
        choice's provider_metadata so far)."""
        leaf: dict[str, Any] = {}
        if usage is not None:
            leaf["usage"] = _usage(usage)
        value = event.get("id")
        if value is not None:
            leaf["response_id"] = value
        value = event.get("model")
        if value is not None:
            leaf["response_model"] = value
        value = event.get("prompt_token_ids")
        if value is not None:
            leaf["prompt_token_ids"] = value
        meta: dict[str, Any] = {}
        for key in _TOP_METADATA:
            value = event.get(key)
            if value is not None and value != "":
                meta[key] = value
        extra = {k: v for k, v in event.items() if k not in _TOP_KNOWN and v is not None}
        if extra:
            meta["response"] = extra
        if pm:
            meta.update(pm)
        if meta:
            leaf["provider_metadata"] = meta
        return leaf

    def _choice(
        self, event: dict[str, Any], usage: Any, i: int, choice: Any
    ) -> tuple[int, dict[str, Any]]:
        """One entry of ``choices`` -> its choice index and leaf, in the engine's steps: the
        entry and its state, the parts (reasoning, content, calls, parts kept whole), the
        choice's own fields, what no field holds (``provider_metadata``), the chunk's top."""
        where = f"choices[{i}]"
        if not isinstance(choice, dict):
            raise AdapterError(f"{where} is not an object")
        index = choice.get("index", 0)
        if not _is_int(index):
            raise AdapterError(f"{where}.index is not an integer")
        delta = choice.get("delta")
        if delta is None:
            delta = {}
        elif not isinstance(delta, dict):
            raise AdapterError(f"{where}.delta is not an object")
        state = self.choices.get(index)
        if state is None:
            state = self.choices[index] = _Choice()
        leaf: dict[str, Any] = {}
        parts: list[dict[str, Any]] = []
        anomalies: list[dict[str, str]] = []
        pm: dict[str, Any] = {}

        role = text_field(delta.get("role"), f"{where}.delta.role")
        if role is not None:
            leaf["role"] = role
        if isinstance(delta.get("content"), list):
            leaf["content_list"] = True
        self._reasoning(where, delta, state, parts, pm)
        self._content(where, delta, state, parts)
        self._calls(where, index, delta, state, parts, anomalies)
        _kept_whole(where, delta, parts)
        if parts:
            leaf["parts"] = parts
        _choice_fields(where, choice, delta, state, leaf)
        _extras(choice, delta, pm)
        leaf.update(self._top(event, usage, pm))
        state.changed(leaf)
        if anomalies:
            leaf["anomalies"] = anomalies
        return index, leaf

    def _reasoning(
        self,
        where: str,
        delta: dict[str, Any],
        state: _Choice,
        parts: list[dict[str, Any]],
        pm: dict[str, Any],
    ) -> None:
        """Reasoning: the plain fields, unless ``reasoning_details`` carries the same text."""
        details = delta.get("reasoning_details")
        if details is not None and not isinstance(details, list):
            raise AdapterError(f"{where}.delta.reasoning_details is not a list")
        plain = ""
        for key in ("reasoning_content", "reasoning"):
            value = delta.get(key)
            if value is not None and not isinstance(value, str):
                raise AdapterError(f"{where}.delta.{key} is not a string")
            if value and not plain:
                plain = value
                # the field's name (the first one sent), for a replay under that name (§9.1)
                if "reasoning_field" not in state.sent:
                    pm["reasoning_field"] = key
        detail_text = False
        for j, entry in enumerate(details or ()):
            if not isinstance(entry, dict):
                raise AdapterError(f"{where}.delta.reasoning_details[{j}] is not an object")
            if _text(entry.get("text")) or _text(entry.get("summary")):
                detail_text = True
        if plain and not detail_text:
            parts.append({"part": "reasoning", "text": plain})
            state.open_call = None
        if details:
            self._details(details, parts, pm)

    def _content(
        self, where: str, delta: dict[str, Any], state: _Choice, parts: list[dict[str, Any]]
    ) -> None:
        """Content: a string, or Mistral's typed chunks; then the text's url citations."""
        content = delta.get("content")
        if isinstance(content, str):
            if content:
                parts.append({"part": "text", "text": content})
                state.open_call = None
        elif isinstance(content, list):
            if self._content_list(where, content, parts):
                state.open_call = None
        elif content is not None:
            raise AdapterError(f"{where}.delta.content is not a string or a list")
        annotations = delta.get("annotations")
        if annotations is not None and not isinstance(annotations, list):
            raise AdapterError(f"{where}.delta.annotations is not a list")
        if annotations:  # url citations of the text (search models)
            parts.append({"part": "text", "text": "", "citations": annotations})

    def _calls(
        self,
        where: str,
        index: int,
        delta: dict[str, Any],
        state: _Choice,
        parts: list[dict[str, Any]],
        anomalies: list[dict[str, str]],
    ) -> None:
        """The ``tool_calls`` entries, then the deprecated single ``function_call``."""
        calls = delta.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise AdapterError(f"{where}.delta.tool_calls is not a list")
            for j, call in enumerate(calls):
                parts.append(
                    self._call(f"{where}.delta.tool_calls[{j}]", index, state, call, anomalies)
                )
        legacy = delta.get("function_call")  # the deprecated single call: provider_index -1
        if legacy is not None:
            if not isinstance(legacy, dict):
                raise AdapterError(f"{where}.delta.function_call is not an object")
            text_field(legacy.get("name"), f"{where}.delta.function_call.name")
            arguments = legacy.get("arguments")
            if arguments is not None and not isinstance(arguments, (str, dict)):
                raise AdapterError(
                    f"{where}.delta.function_call.arguments is not a string or an object"
                )
            call = {"index": -1, "function": legacy}
            parts.append(self._call(f"{where}.delta", index, state, call, anomalies))

    def _details(
        self, details: list[dict[str, Any]], parts: list[dict[str, Any]], pm: dict[str, Any]
    ) -> None:
        """OpenRouter's ``reasoning_details`` entries -> reasoning deltas by entry index."""
        metas: dict[str, Any] = {}
        for entry in details:
            kind = entry.get("type")
            index = entry.get("index")
            if not isinstance(kind, str) or kind not in _DETAIL_TYPES:
                part: dict[str, Any] = {"part": "unknown", "provider": NAME}
                part["kind"] = "reasoning_details"
                part["raw"] = entry
                parts.append(part)
                continue
            part = {"part": "reasoning", "text": _text(entry.get("text"))}
            if _is_int(index):
                part["index"] = index
            summary = _text(entry.get("summary"))
            if summary:
                part["summary"] = summary
            opaque = _text(entry.get("signature")) or _text(entry.get("data"))
            if opaque:
                part["payload"] = {"provider": NAME, "kind": kind, "data": opaque}
            if part["text"] or summary or opaque:
                parts.append(part)
            if _is_int(index):
                meta = {
                    k: v
                    for k, v in entry.items()
                    if k not in _DETAIL_OPAQUE and v is not None and v != ""
                }
                if meta:
                    metas[str(index)] = meta
        if metas:
            pm["reasoning_details"] = metas

    def _content_list(self, where: str, content: list[Any], parts: list[dict[str, Any]]) -> bool:
        """Mistral's typed content chunks, in order; True if one carried text."""
        texted = False
        for j, item in enumerate(content):
            at = f"{where}.delta.content[{j}]"
            if isinstance(item, str):
                if item:
                    parts.append({"part": "text", "text": item})
                    texted = True
                continue
            if not isinstance(item, dict):
                raise AdapterError(f"{at} is not an object or a string")
            kind = item.get("type")
            if kind == "text":
                text = item.get("text")
                if text is not None and not isinstance(text, str):
                    raise AdapterError(f"{at}.text is not a string")
                if text:
                    parts.append({"part": "text", "text": text})
                    texted = True
            elif kind == "thinking":
                thinking = item.get("thinking")
                if isinstance(thinking, str):
                    thinking = [{"type": "text", "text": thinking}]
                elif thinking is None:
                    thinking = []
                elif not isinstance(thinking, list):
                    raise AdapterError(f"{at}.thinking is not a list")
                for k, inner in enumerate(thinking):
                    if not isinstance(inner, dict):
                        raise AdapterError(f"{at}.thinking[{k}] is not an object")
                    text = inner.get("text")
                    if inner.get("type") == "text" and isinstance(text, str):
                        if text:
                            parts.append({"part": "reasoning", "text": text})
                            texted = True
                    else:
                        parts.append(
                            {"part": "unknown", "provider": NAME, "kind": "thinking", "raw": inner}
                        )
            else:
                name = kind if isinstance(kind, str) else "content"
                parts.append({"part": "unknown", "provider": NAME, "kind": name, "raw": item})
        return texted

    def _call(
        self, where: str, choice: int, state: _Choice, call: Any, anomalies: list[dict[str, str]]
    ) -> dict[str, Any]:
        """One ``tool_calls`` entry -> a tool-call fragment (the fold resolves it)."""
        if not isinstance(call, dict):
            raise AdapterError(f"{where} is not an object")
        part: dict[str, Any] = {"part": "tool_call"}
        index = call.get("index")
        if index is not None and not _is_int(index):
            raise AdapterError(f"{where}.index is not an integer")
        if index is not None:
            part["provider_index"] = index
        for key in ("id", "type"):
            text_field(call.get(key), f"{where}.{key}")
        call_id = call.get("id")
        if call_id is not None:
            part["id"] = call_id
        kind = call.get("type")
        if kind is None and call.get("function") is None and call.get("custom") is not None:
            kind = "custom"  # a custom body without a type is a custom call (E83)
        if kind is not None:
            part["type"] = kind
        name: Any = None
        arguments: Any = None
        for key, field in (("function", "arguments"), ("custom", "input")):
            body = call.get(key)
            if body is None:
                continue
            if not isinstance(body, dict):
                raise AdapterError(f"{where}.{key} is not an object")
            if body.get("name") is not None:
                name = text_field(body["name"], f"{where}.{key}.name")
            value = body.get(field)
            if value is not None:
                if not isinstance(value, (str, dict)):
                    raise AdapterError(f"{where}.{key}.{field} is not a string or an object")
                arguments = value
        if name is not None:
            part["name"] = name
        if arguments is not None:
            part["arguments"] = arguments
        extra = {k: v for k, v in call.items() if k not in _CALL_KNOWN and v is not None}
        if extra:
            part["extra"] = extra

        # what the adapter knows of the call at this index (for anomalies and truncation)
        new_id = call_id if isinstance(call_id, str) and not _absent(call_id) else None
        new_name = name if isinstance(name, str) and not _absent(name) else None
        if index is None:
            if new_id is not None or new_name is not None or state.open_call is None:
                state.open_call = [new_id, new_name]
            return part
        known = state.calls.get(index)
        if known is None:
            if new_id is None and new_name is None and arguments:
                anomalies.append(
                    {
                        "code": "delta_before_start",
                        "detail": f"choice {choice}: tool call index {index!r}: arguments "
                        "before the call's id and name",
                    }
                )
            known = state.calls[index] = [new_id, new_name]
        elif new_id is not None and new_name is not None and known[0] not in (None, new_id):
            anomalies.append(
                {
                    "code": "index_collision",
                    "detail": f"choice {choice}: tool call index {index!r} reused: "
                    f"call {new_id!r} after {known[0]!r}",
                }
            )
            known = state.calls[index] = [new_id, new_name]
        else:
            if known[0] is None and new_id is not None:
                known[0] = new_id
            if known[1] is None and new_name is not None:
                known[1] = new_name
        state.open_call = known
        return part
