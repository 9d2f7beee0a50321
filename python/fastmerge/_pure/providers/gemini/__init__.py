"""The twin's ``"gemini"`` adapter (``src/engine/providers/gemini.rs``): Gemini native
``streamGenerateContent`` chunks (SSE ``data:`` payloads or the elements of the JSON-array
response) to delta leaves. Its module ``partial_args`` mirrors
``src/engine/providers/gemini/partial_args.rs`` (Vertex ``partialArgs`` written as JSON text).

Each event is a whole ``GenerateContentResponse``. Every candidate (``index``, default 0) is a
choice; its leaf holds, in this order:

- ``role``: ``"assistant"`` (Gemini's ``"model"``, or no content at all; another role is kept
  as sent);
- ``parts`` from ``content.parts``, each Gemini part mapped in order:

  - ``{text}`` -> a text part, ``{text, thought: true}`` -> a reasoning part. Gemini splits
    text anywhere, so a text part continues the previous part of the candidate when that is
    text too (a thought continues a thought); the adapter numbers parts itself (part
    ``index`` 0, 1, ...) so the fold continues exactly that part. Other keys of a text part
    are kept as ``attributes``; a thought with other keys (``partMetadata``, ...) has no
    such field, and is kept whole as an ``unknown`` part (kind ``thought``);
  - ``functionCall {name, args?, id?}`` -> a tool call with ``provider_index`` = the call's
    number in the candidate (Gemini sends none) and the ``args`` object as dict arguments;
    another key of the call goes to the call's ``extra``, and the part's keys beside
    ``functionCall`` (``partMetadata``, ...) to ``extra["@part"]``. Vertex streamed arguments
    (``{name, willContinue: true}``, then ``partialArgs[{jsonPath, stringValue |
    numberValue | boolValue | nullValue, willContinue}]``, then an empty ``functionCall`` or
    one without ``willContinue``) are written out as the JSON text of the arguments object,
    in the order the paths arrive (a string with ``willContinue`` goes on in the next
    fragment of the same path), so the fold appends them as raw arguments;
  - any other part (``executableCode``, ``codeExecutionResult``, ``inlineData``,
    ``fileData``, ``functionResponse``, ...) -> an ``unknown`` part holding the part verbatim
    (with its ``thoughtSignature``).

  A null member of a part, at any depth, is read as absent: the API never sends one, and an
  SDK's ``model_dump()`` spells every unset field so.

  ``thoughtSignature`` is the payload ``{"provider": "gemini", "kind": "thought_signature",
  "data": <verbatim>}`` of its part: a reasoning part's ``payload``, a tool call's ``payload``,
  a text part's ``attributes["payload"]`` (the fold's text parts have no payload field; the
  renderer reads it back). An empty text part that carries only a signature (Gemini 3 sends
  one at the end of a streamed answer) gives its signature to the part before it when that
  part is text, reasoning or a tool call without a signature of its own (edge case E69: the
  non-streamed response has the signature on that part); otherwise it stays an empty text part
  of its own holding the signature, at its place. Empty text parts without a signature are
  dropped;
- a chunk's ``citationMetadata`` (an object) goes, verbatim, to the ``citations`` of the
  candidate's current text part, or of a new empty text part when the last part is not text:
  the fold appends citations, so every chunk's are kept (the renderer merges them back into
  one ``citationMetadata``, dropping entries a later chunk repeats);
- ``finish_reason`` (``finishReason``, raw) and ``status: "complete"``: the terminal signal;
- ``usage`` from the top-level ``usageMetadata`` (cumulative on every chunk, so the fold's
  "last value" rule keeps the final counts): ``input_tokens`` = ``promptTokenCount`` +
  ``toolUsePromptTokenCount``, ``output_tokens`` = ``candidatesTokenCount`` +
  ``thoughtsTokenCount`` (Gemini's ``totalTokenCount`` is the sum of the four),
  ``total_tokens``, ``cache_read_tokens`` (``cachedContentTokenCount``), ``reasoning_tokens``
  (``thoughtsTokenCount``), then every key of ``usageMetadata`` verbatim;
- ``response_id`` (``responseId``) and ``response_model`` (``modelVersion``);
- ``logprobs``: the candidate's ``logprobsResult`` (its lists concatenate chunk by chunk);
- ``provider_metadata``: the other top-level keys of the chunk verbatim (``createTime``,
  ``promptFeedback``, ...) and ``"candidate"``: the other keys of the candidate
  (``groundingMetadata``, ``safetyRatings``, ``finishMessage``,
  ``avgLogprobs``, ...), deep-merged chunk by chunk;
- ``anomalies``.

A chunk without candidates gives its top-level fields to every choice seen so far (choice 0
if none). ``promptFeedback`` with a ``blockReason`` (a blocked prompt) and an ``error`` object
make the status ``"failed"`` (the error is kept as ``provider_metadata["error"]``).

An event of a shape the adapter cannot map raises :class:`AdapterError` naming the field
(``candidates`` not an array, a part not an object, ``text`` / ``finishReason`` / ``role`` /
``name`` / ``id`` / ``responseId`` / ``modelVersion`` not strings, ``args`` not an object, a
``jsonPath`` that is not a JSON path, a value of the wrong type, ...).

A chunk whose ``responseId`` differs from the one a candidate finished with starts another
response (``new_response``, spec §6); chunks after the finish that repeat it (a last usage
chunk) are the same response, and a stream without ``responseId`` is never split.

Quirks are anomalies: streamed arguments without a call (``delta_before_start``: a call
without a name is opened), a JSON path that does not fit what was written
(``mismatched_delta``), and a streamed call still open at ``finishReason`` or at the end of a
stream without it (``truncated``; its raw arguments are kept as they are).
"""

from __future__ import annotations

from typing import Any

from ...events import kind_name
from .._common import AdapterError, FinishedId
from .partial_args import _cut, _expect, _Streamed

NAME = "gemini"

# a Part field that rides beside the part's content: kept with it, verbatim
_BESIDE = (
    "set beside the part's content, verbatim: in a text part's attributes, a call's "
    "extra['@part'], or the part kept whole (a thought: unknown part, kind 'thought')"
)
#: The rule of every field google-genai's ``Part`` and ``FunctionCall`` define (keys: the
#: camelCase names the API sends): a test enumerates them from the installed SDK and fails for
#: a field without a rule here, or a rule for none.
WIRE_RULES: dict[str, str] = {
    "part:text": "appends to the text part (thought: the reasoning part) it continues",
    "part:thought": "true makes the text a reasoning part",
    "part:thoughtSignature": "sets its part's payload (kind 'thought_signature'), verbatim",
    "part:functionCall": "a tool call (the function_call: rules)",
    "part:inlineData": "kept verbatim as an unknown part (kind 'inlineData')",
    "part:fileData": "kept verbatim as an unknown part (kind 'fileData')",
    "part:executableCode": "kept verbatim as an unknown part (kind 'executableCode')",
    "part:codeExecutionResult": "kept verbatim as an unknown part (kind 'codeExecutionResult')",
    "part:functionResponse": "kept verbatim as an unknown part (kind 'functionResponse')",
    "part:toolCall": "kept verbatim as an unknown part (kind 'toolCall')",
    "part:toolResponse": "kept verbatim as an unknown part (kind 'toolResponse')",
    "part:videoMetadata": _BESIDE,
    "part:mediaResolution": _BESIDE,
    "part:mediaProcessing": _BESIDE,
    "part:partMetadata": _BESIDE,
    "part:audioTranscription": _BESIDE,
    "part:speechMetadata": _BESIDE,
    "part:documentMetadata": _BESIDE,
    "part:spreadsheetMetadata": _BESIDE,
    "part:audioMetadata": _BESIDE,
    "function_call:name": "sets the call's name (a call starts)",
    "function_call:id": "sets the call's id",
    "function_call:args": "sets the call's arguments (an object, kept as sent)",
    "function_call:partialArgs": "appends to the call's arguments, written as JSON text",
    "function_call:willContinue": "true keeps the streamed call open for the next part",
}

# the candidate keys read into message fields; the others go to provider_metadata["candidate"]
_CANDIDATE_FIELDS = ("content", "index", "finishReason", "logprobsResult")
# the chunk keys read into message fields; the others go to provider_metadata
_RESPONSE_FIELDS = ("candidates", "usageMetadata", "modelVersion", "responseId")
_CALL_FIELDS = ("name", "id", "args", "partialArgs", "willContinue")
# keys that make an event a GenerateContentResponse chunk
_RECOGNIZED = (
    "candidates",
    "usageMetadata",
    "promptFeedback",
    "modelVersion",
    "responseId",
    "createTime",
    "error",
)
# the key of a call's ``extra`` holding the fields of its part beside ``functionCall``
# (``partMetadata``, ...): not a name the API can send (its names are identifiers)
_PART_FIELDS = "@part"


def _absent(value: Any) -> bool:
    """Missing, None, or text that is empty, whitespace or ``"null"`` (spec, merge-rules)."""
    if value is None:
        return True
    return isinstance(value, str) and (not value or value == "null" or value.isspace())


def _payload(data: Any) -> dict[str, Any]:
    return {"provider": NAME, "kind": "thought_signature", "data": data}


# ---------------------------------------------------------------------------------------------
# Per-candidate state


class _Candidate:
    """What one candidate has open: the last part (its kind, part index, call number and
    whether it holds a signature), the number of calls, a streamed call, and whether it
    finished."""

    __slots__ = (
        "next_index",
        "last_kind",
        "last_index",
        "last_signed",
        "calls",
        "streamed",
        "finished",
    )

    def __init__(self) -> None:
        self.next_index = 0
        self.last_kind: str | None = None  # "text", "reasoning", "call", "other"
        self.last_index = 0  # the part index of the last text/reasoning part, or call number
        self.last_signed = False
        self.calls = 0
        self.streamed: _Streamed | None = None
        self.finished = False  # its finishReason came


class Adapter:
    """Gemini ``GenerateContentResponse`` chunks -> leaves (see the module docstring)."""

    name = NAME

    def __init__(self) -> None:
        self.candidates: dict[int, _Candidate] = {}
        self.finished_id = FinishedId()  # the responseId when a candidate first finished

    def knows(self, event: dict[str, Any]) -> bool:
        """Whether the event has a key of a ``GenerateContentResponse`` (spec §8)."""
        return any(key in event for key in _RECOGNIZED)

    def new_response(self, event: dict[str, Any]) -> str | None:
        """Why the chunk starts another response, or None (spec §6): a ``responseId`` other
        than the one a candidate finished with (a chunk after the finish, such as a last
        usage chunk, repeats it)."""
        rid = self.finished_id.other(event.get("responseId"))
        if rid is None:
            return None
        return f"responseId {rid!r} after a candidate finished with {self.finished_id.finished!r}"

    def ends_stream(self, event: dict[str, Any]) -> bool:
        """Whether the chunk is the stream's last: never known (a usage chunk may follow the
        finish), so a Gemini stream ends at the end of the input."""
        return False

    def event(self, event: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        candidates = event.get("candidates")
        if candidates is not None:
            _expect(candidates, "array", "candidates")
        else:
            candidates = []
        usage = event.get("usageMetadata")
        if usage is not None:
            _expect(usage, "object", "usageMetadata")
        for key in ("responseId", "modelVersion"):
            if event.get(key) is not None:
                _expect(event[key], "string", key)
        shared = self._shared(event, usage)
        leaves: list[tuple[int, dict[str, Any]]] = []
        for number, candidate in enumerate(candidates):
            where = f"candidates[{number}]"
            _expect(candidate, "object", where)
            choice = candidate.get("index")
            if choice is None:
                choice = 0
            elif type(choice) is not int:
                raise AdapterError(f"{where}.index must be an integer, got {kind_name(choice)}")
            leaves.append((choice, self._candidate(choice, candidate, where, shared)))
        if not candidates and shared:
            for choice in sorted(self.candidates) or [0]:
                leaves.append((choice, dict(shared)))
        self.finished_id.track(
            event.get("responseId"), lambda: any(c.finished for c in self.candidates.values())
        )
        return leaves

    def end(self) -> list[tuple[int, dict[str, Any]]]:
        leaves = []
        for choice in sorted(self.candidates):
            state = self.candidates[choice]
            if state.streamed is not None:
                leaves.append((choice, {"anomalies": [_cut(state.streamed)]}))
                state.streamed = None
        return leaves

    # -- the chunk's top-level fields

    def _shared(self, event: dict[str, Any], usage: dict[str, Any] | None) -> dict[str, Any]:
        """The fields every candidate leaf of this chunk gets (in leaf order)."""
        shared: dict[str, Any] = {}
        metadata = {k: v for k, v in event.items() if k not in _RESPONSE_FIELDS and v is not None}
        error = event.get("error")
        feedback = event.get("promptFeedback")
        if error is not None or (
            isinstance(feedback, dict) and not _absent(feedback.get("blockReason"))
        ):
            shared["status"] = "failed"
        if usage is not None:
            shared["usage"] = _usage(usage)
        if event.get("responseId") is not None:
            shared["response_id"] = event["responseId"]
        if event.get("modelVersion") is not None:
            shared["response_model"] = event["modelVersion"]
        if metadata:
            shared["provider_metadata"] = metadata
        return shared

    # -- one candidate

    def _candidate(
        self, choice: int, candidate: dict[str, Any], where: str, shared: dict[str, Any]
    ) -> dict[str, Any]:
        state = self.candidates.get(choice)
        if state is None:
            state = self.candidates[choice] = _Candidate()
        leaf: dict[str, Any] = {}
        anomalies: list[dict[str, Any]] = []
        out: list[dict[str, Any]] = []
        content = candidate.get("content")
        leaf["role"] = "assistant"
        if content is not None:
            _expect(content, "object", f"{where}.content")
            role = content.get("role")
            if role is not None:
                _expect(role, "string", f"{where}.content.role")
            if role is not None and role != "model":
                leaf["role"] = role
            parts = content.get("parts")
            if parts is not None:
                _expect(parts, "array", f"{where}.content.parts")
                for number, part in enumerate(parts):
                    path = f"{where}.content.parts[{number}]"
                    _expect(part, "object", path)
                    self._part(state, part, path, out, anomalies)
        citations = candidate.get("citationMetadata")
        moved = isinstance(citations, dict) and bool(citations)
        if isinstance(citations, dict) and citations:
            self._citations(state, citations, out)
        if out:
            leaf["parts"] = out
        reason = candidate.get("finishReason")
        if reason is not None:
            _expect(reason, "string", f"{where}.finishReason")
        if not _absent(reason):
            if state.streamed is not None:
                anomalies.append(_cut(state.streamed))
                state.streamed = None
            leaf["finish_reason"] = reason
            leaf["status"] = "complete"
            state.finished = True
        for key, value in shared.items():
            if key != "provider_metadata":
                leaf[key] = value  # a failed status overrides "complete" in place
        logprobs = candidate.get("logprobsResult")
        if logprobs is not None:
            leaf["logprobs"] = logprobs
        extra = {
            k: v
            for k, v in candidate.items()
            if k not in _CANDIDATE_FIELDS
            and v is not None
            and not (moved and k == "citationMetadata")
        }
        metadata = dict(shared.get("provider_metadata") or {})
        if extra:
            metadata["candidate"] = extra
        if metadata:
            leaf["provider_metadata"] = metadata
        if anomalies:
            leaf["anomalies"] = anomalies
        return leaf

    def _part(
        self,
        state: _Candidate,
        part: dict[str, Any],
        path: str,
        out: list[dict[str, Any]],
        anomalies: list[dict[str, Any]],
    ) -> None:
        part = _without_nulls(part)
        signature = part.get("thoughtSignature")
        call = part.get("functionCall")
        if call is not None:
            _expect(call, "object", f"{path}.functionCall")
            # the part's own fields beside the call (partMetadata, ...), kept with it
            beside = {
                k: v for k, v in part.items() if k not in ("functionCall", "thoughtSignature")
            }
            self._call(state, call, signature, beside, f"{path}.functionCall", out, anomalies)
            return
        text = part.get("text")
        if text is None:
            keys = [k for k in part if k != "thoughtSignature"]
            self._close_streamed(state, out)
            if not keys:
                # nothing but a signature (or nothing at all)
                if signature is not None:
                    self._signature(state, signature, out)
                return
            # another kind of part: kept verbatim
            index = self._new_index(state, "other", signature is not None)
            kind = keys[0]
            out.append(
                {"part": "unknown", "provider": NAME, "kind": kind, "raw": part, "index": index}
            )
            return
        _expect(text, "string", f"{path}.text")
        kind = "reasoning" if part.get("thought") is True else "text"
        attributes = {
            k: v for k, v in part.items() if k not in ("text", "thought", "thoughtSignature")
        }
        if kind == "reasoning" and attributes:
            # a reasoning part has no place for fields beside its text: kept whole
            self._close_streamed(state, out)
            index = self._new_index(state, "other", signature is not None)
            out.append(
                {
                    "part": "unknown",
                    "provider": NAME,
                    "kind": "thought",
                    "raw": part,
                    "index": index,
                }
            )
            return
        if not text and not attributes:
            if signature is not None:
                self._close_streamed(state, out)
                self._signature(state, signature, out)
            return
        self._close_streamed(state, out)
        if state.last_kind == kind and (signature is None or not state.last_signed):
            index = state.last_index
            if signature is not None:
                state.last_signed = True
        else:
            index = self._new_index(state, kind, signature is not None)
        piece: dict[str, Any] = {"part": kind, "text": text, "index": index}
        if kind == "text":
            if signature is not None:
                attributes = {"payload": _payload(signature), **attributes}
            if attributes:
                piece["attributes"] = attributes
        elif signature is not None:
            piece["payload"] = _payload(signature)
        out.append(piece)

    def _citations(
        self, state: _Candidate, citations: dict[str, Any], out: list[dict[str, Any]]
    ) -> None:
        """A chunk's ``citationMetadata`` goes to the candidate's text part (the fold appends
        citations), verbatim: on the last part if that is text, else on a new empty text part
        (which does not end a streamed call)."""
        if state.last_kind == "text":
            index = state.last_index
        elif state.streamed is not None:
            index = state.next_index
            state.next_index += 1
        else:
            index = self._new_index(state, "text", False)
        out.append({"part": "text", "text": "", "index": index, "citations": [citations]})

    def _new_index(self, state: _Candidate, kind: str, signed: bool) -> int:
        index = state.next_index
        state.next_index += 1
        state.last_kind = kind
        state.last_index = index
        state.last_signed = signed
        return index

    def _signature(self, state: _Candidate, signature: Any, out: list[dict[str, Any]]) -> None:
        """A signature without content: on the part before it if that can hold it, else on an
        empty text part of its own."""
        payload = _payload(signature)
        if state.last_kind is not None and not state.last_signed:
            if state.last_kind == "text":
                out.append(
                    {
                        "part": "text",
                        "text": "",
                        "index": state.last_index,
                        "attributes": {"payload": payload},
                    }
                )
                state.last_signed = True
                return
            if state.last_kind == "reasoning":
                out.append(
                    {"part": "reasoning", "text": "", "index": state.last_index, "payload": payload}
                )
                state.last_signed = True
                return
            if state.last_kind == "call":
                out.append(
                    {"part": "tool_call", "provider_index": state.last_index, "payload": payload}
                )
                state.last_signed = True
                return
        index = self._new_index(state, "text", True)
        out.append({"part": "text", "text": "", "index": index, "attributes": {"payload": payload}})

    # -- function calls

    def _call(
        self,
        state: _Candidate,
        call: dict[str, Any],
        signature: Any,
        beside: dict[str, Any],
        path: str,
        out: list[dict[str, Any]],
        anomalies: list[dict[str, Any]],
    ) -> None:
        name = call.get("name")
        if name is not None:
            _expect(name, "string", f"{path}.name")
        call_id = call.get("id")
        if call_id is not None:
            _expect(call_id, "string", f"{path}.id")
        args = call.get("args")
        if args is not None:
            _expect(args, "object", f"{path}.args")
        partial = call.get("partialArgs")
        if partial is not None:
            _expect(partial, "array", f"{path}.partialArgs")
        more = call.get("willContinue") is True
        streamed = state.streamed
        if not _absent(name) or streamed is None:
            # a call starts here
            if _absent(name) and args is None and not partial and not more:
                # an empty functionCall and no streamed call open: only a signature counts
                if signature is not None:
                    self._signature(state, signature, out)
                return
            self._close_streamed(state, out)
            if _absent(name):
                anomalies.append(
                    {
                        "code": "delta_before_start",
                        "detail": f"{path}: arguments without a call; kept on a call without "
                        "a name",
                    }
                )
            number = state.calls
            state.calls += 1
            state.last_kind = "call"
            state.last_index = number
            state.last_signed = signature is not None
            fragment: dict[str, Any] = {"part": "tool_call"}
            call_id = call.get("id")
            if call_id is not None:
                fragment["id"] = call_id
            if name is not None:
                fragment["name"] = name
            fragment["provider_index"] = number
            if args is not None:
                fragment["arguments"] = args
            streamed = None
            if more or partial:
                streamed = state.streamed = _Streamed(number, name)
        else:
            # the streamed call goes on (it is the candidate's last part)
            fragment = {"part": "tool_call", "provider_index": streamed.number}
            call_id = call.get("id")
            if call_id is not None:
                fragment["id"] = call_id
            if signature is not None:
                state.last_signed = True
        if streamed is not None:
            text = []
            for number, arg in enumerate(partial or ()):
                where = f"{path}.partialArgs[{number}]"
                _expect(arg, "object", where)
                text.append(streamed.write(arg, where, anomalies))
            if not more:
                text.append(streamed.close())
                state.streamed = None
            joined = "".join(text)
            if joined:
                fragment["arguments"] = joined
        if signature is not None:
            fragment["payload"] = _payload(signature)
        extra = {k: v for k, v in call.items() if k not in _CALL_FIELDS and v is not None}
        if beside:
            extra[_PART_FIELDS] = beside
        if extra:
            fragment["extra"] = extra
        if len(fragment) > 2:
            out.append(fragment)

    def _close_streamed(self, state: _Candidate, out: list[dict[str, Any]]) -> None:
        """Another part after a streamed call whose end never came: its arguments end here."""
        streamed = state.streamed
        if streamed is None:
            return
        state.streamed = None
        text = streamed.close()
        if text:
            out.append({"part": "tool_call", "provider_index": streamed.number, "arguments": text})


def _without_nulls(value: Any) -> Any:
    """``value`` without its null members, at every depth. The API never sends a null (its
    JSON omits unset fields); a null in a part is an SDK's unset field (``model_dump()``), so
    it is read as absent: a part with and without them is the same part."""
    if isinstance(value, dict):
        if not _has_null(value):
            return value
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list) and _has_null(value):
        return [_without_nulls(v) for v in value]
    return value


def _has_null(value: Any) -> bool:
    if isinstance(value, dict):
        return any(v is None or _has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    """``usageMetadata`` -> usage: the normalized counts, then every key verbatim."""
    out: dict[str, Any] = {}
    prompt = _int(usage.get("promptTokenCount"))
    tools = _int(usage.get("toolUsePromptTokenCount"))
    candidates = _int(usage.get("candidatesTokenCount"))
    thoughts = usage.get("thoughtsTokenCount")
    thought_count = _int(thoughts)
    if prompt is not None or tools is not None:
        out["input_tokens"] = (prompt or 0) + (tools or 0)
    if candidates is not None or thought_count is not None:
        out["output_tokens"] = (candidates or 0) + (thought_count or 0)
    total = usage.get("totalTokenCount")
    if total is not None:
        out["total_tokens"] = total
    cached = usage.get("cachedContentTokenCount")
    if cached is not None:
        out["cache_read_tokens"] = cached
    if thoughts is not None:
        out["reasoning_tokens"] = thoughts
    for key, value in usage.items():
        if key not in out:
            out[key] = value
    return out


def _int(value: Any) -> int | None:
    """A count (an int, not a bool), else None."""
    return value if type(value) is int else None
