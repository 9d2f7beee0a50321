"""The twin of the engine's aggregator (``src/engine/aggregate.rs``): provider events in, one
folded message per choice out (spec §6, §7).

Events arrive as JSON values (``add``), as the text of one event (``add_text``), or as raw
transport bytes split anywhere (``feed``). The provider's adapter maps each event to leaves;
each leaf is folded into its choice's state with the chunk rules (``_pure.chunks``), so a
stream and the chunks it stands for merge the same way. The fold runs as events arrive, so
:meth:`snapshot` is a read of the current state and :meth:`finish` applies the end-of-stream
rules: synthetic ids, the usage total, and the status (``incomplete`` if the stream's terminal
signal never came).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from .. import errors
from . import events
from .chunks.fold import _fold
from .chunks.read import _materialize
from .chunks.state import Options, _State
from .providers import ADAPTERS, PROVIDERS, AdapterError, detect
from .transport import Transport

__all__ = ["AggregatorCore", "PROVIDERS"]

_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")
#: How much of one ``feed`` the transport scans before the events in it are read.
_FEED_BLOCK = 1 << 20


class AggregatorCore:
    """Provider events -> folded message data, one per choice (``fastmerge.Aggregator``'s
    engine). ``provider`` is a name of :data:`PROVIDERS` or ``"auto"`` (read from the first
    event)."""

    __slots__ = (
        "provider",
        "options",
        "adapter",
        "states",
        "count",
        "read",
        "first_bad",
        "pending",
        "transport",
        "closed",
        "recognized",
        "foreign",
        "new_response_at",
    )

    def __init__(
        self,
        provider: str = "auto",
        strict: bool = False,
        signature_merge: str = "replace",
        usage: str = "merge",
    ) -> None:
        if type(provider) is not str:
            raise errors.wrong_type("provider", "a str", provider)
        if provider != "auto" and provider not in PROVIDERS:
            raise errors.invalid_option("provider", provider, ("auto", *PROVIDERS))
        self.options = Options(strict, signature_merge, usage)
        self.provider: str | None = None if provider == "auto" else provider
        self.adapter: Any = None if self.provider is None else ADAPTERS[self.provider]()
        self.states: dict[int, _State] = {}
        self.count = 0  # events read so far (numbers errors)
        self.read = 0  # events an adapter read (a stream ending with none is an error)
        self.first_bad: str | None = None  # the first unreadable event's anomaly detail
        # unreadable_event anomalies met before the first choice existed; its state gets them
        self.pending: list[dict[str, Any]] = []
        self.transport: Transport | None = None
        self.closed: str | None = None  # why the aggregator takes no more events
        self.recognized = 0  # events the adapter knew (spec §8)
        # the first event the adapter did not know: its keys, and the provider it looks like
        self.foreign: tuple[str, str | None] | None = None
        # the number of the event that started another response (spec §6): it and the events
        # after it are not merged; the batch engine splits the stream there
        self.new_response_at: int | None = None

    # -- input

    def add(self, event: Any) -> None:
        """One event: a JSON object (a dict), checked and copied."""
        self._open()
        self.count += 1
        try:
            value = events.event_object(event)
        except events.EventDataError as exc:
            self._unreadable(exc.detail)
            return
        self._event(value)

    def add_events(self, events: Iterable[Any], plain: Callable[[Any], Any]) -> None:
        """Events as ``Aggregator.add`` takes them, in order: the text of one event or of
        whole SSE lines (str, bytes, bytearray, memoryview), a dict, or an SDK object, read
        as the dict ``plain(event)`` gives (``to_dict()`` or ``model_dump()``)."""
        for event in events:
            if isinstance(event, (str, bytes)):
                self.add_text(event)
            elif isinstance(event, (bytearray, memoryview)):
                self.add_text(bytes(event))
            else:
                self.add(event if isinstance(event, dict) else plain(event))

    def add_text(self, data: str | bytes) -> None:
        """One item of text: the JSON of one event, a JSON array of events, or complete SSE
        lines (``response.iter_lines()``: each item is one or more whole lines)."""
        self._open()
        raw = self._utf8(data)
        head = raw.lstrip(b" \t\r\n\xef\xbb\xbf")
        if head[:1] == b"{":
            self._read_all([raw])
        elif head[:1] == b"[" and (self.transport is None or self.transport.kind != "sse"):
            self._text_array(raw)
        else:
            self.feed(raw if raw.endswith(b"\n") else raw + b"\n")

    def feed(self, data: str | bytes) -> None:
        """Raw transport bytes (SSE, JSON lines or a JSON array), split anywhere. A large
        input goes to the transport a block at a time, each block's events read before the
        next is scanned: the transport's buffer and the events waiting to be read stay about
        a block long, not as long as the input (a transport reads a stream split anywhere
        alike)."""
        self._open()
        if self.transport is None:
            self.transport = Transport()
        raw = self._utf8(data)
        for start in range(0, len(raw), _FEED_BLOCK) if len(raw) > _FEED_BLOCK else (0,):
            payloads: list[bytes] = []
            self.transport.feed(raw[start : start + _FEED_BLOCK], payloads)
            self._read_all(payloads)

    @staticmethod
    def aggregate(
        data: str | bytes,
        provider: str = "auto",
        strict: bool = False,
        signature_merge: str = "replace",
        usage: str = "merge",
    ) -> list[dict[str, Any]]:
        """A whole recorded stream in one call: ``AggregatorCore(provider, ...)``,
        ``feed(data)``, ``finish()``."""
        core = AggregatorCore(provider, strict, signature_merge, usage)
        core.feed(data)
        return core.finish()

    # -- output

    def snapshot(self) -> list[dict[str, Any]]:
        """The messages so far, one per choice in choice order (the stream may go on). Before
        any event: one empty, incomplete message; only :meth:`finish` calls a stream with no
        event an error."""
        return [self._data(state, False) for _, state in self._choices()]

    def finish(self) -> list[dict[str, Any]]:
        """The end of the stream: the transport's last event, the adapter's last leaves, and
        the complete messages, one per choice in choice order. The aggregator then closes."""
        self._open()
        cut: str | None = None
        if self.transport is not None:
            payloads: list[bytes] = []
            tail = self.transport.finish(payloads)
            self._read_all(payloads)
            if tail is not None:
                # the stream ended inside its last event: read it if it is whole, else flag it
                self.count += 1
                try:
                    event = events.parse(tail)
                except events.EventDataError:
                    cut = (
                        f"the stream ended inside event {self.count}: its {len(tail)} bytes "
                        "are not a whole event and were not read"
                    )
                else:
                    self._event(event)
        if self.foreign is not None and not self.recognized:
            self.closed = "finish() was called"
            raise errors.event_error(self.count, self._foreign_stream(*self.foreign))
        if self.read == 0:
            # nothing to merge is an error, not an empty message (spec §6)
            self.closed = "no event could be read"
            detail = self.first_bad or cut
            if detail is None and self.transport is not None:
                detail = self.transport.diagnosis()
            raise errors.empty_input() if detail is None else errors.no_events(detail)
        if self.adapter is not None:
            self._fold_all(self.adapter.end())
        if cut is not None:
            anomaly = {"anomalies": [{"code": "truncated", "detail": cut}]}
            self._fold_all([(choice, anomaly) for choice, _ in self._choices()])
        self.closed = "finish() was called"
        return [self._data(state, True) for _, state in self._choices()]

    # -- internals

    def _open(self) -> None:
        if self.closed is not None:
            raise errors.closed(self.closed)

    def _utf8(self, data: Any) -> bytes:
        if not isinstance(data, (str, bytes)):
            raise errors.wrong_type("data", "str or bytes", data)
        try:
            return events.utf8(data)
        except events.EventDataError as exc:
            raise errors.event_error(self.count + 1, exc.detail) from None

    def _text_array(self, raw: bytes) -> None:
        transport = Transport()
        payloads: list[bytes] = []
        transport.feed(raw, payloads)
        # an item is given whole: an array not closed is one more unreadable event
        tail = transport.finish(payloads)
        if tail is not None:
            payloads.append(tail)
        self._read_all(payloads)

    def _unreadable(self, detail: str) -> None:
        """The event being read cannot be: ``strict=True`` raises and closes; otherwise it is
        skipped with an ``unreadable_event`` anomaly and reading goes on (spec §8)."""
        if self.options.strict:
            self.closed = f"event {self.count} could not be read"
            raise errors.event_error(self.count, detail)
        detail = f"event {self.count}: {detail}"
        if self.first_bad is None:
            self.first_bad = detail
        anomaly = {"code": "unreadable_event", "detail": detail}
        if not self.states:
            self.pending.append(anomaly)
            return
        leaf = {"anomalies": [anomaly]}
        self._fold_all([(choice, leaf) for choice in sorted(self.states)])

    def _read_all(self, payloads: list[bytes]) -> None:
        for payload in payloads:
            self.count += 1
            try:
                event = events.parse(payload)
            except events.EventDataError as exc:
                self._unreadable(exc.detail)
            else:
                self._event(event)

    def _event(self, event: dict[str, Any]) -> None:
        if self.adapter is None:
            name = detect(event)
            if name is None:
                self._unreadable(
                    f"cannot tell the provider from this event (keys: {_keys(event)}); "
                    + (
                        _wrapper_hint(event)
                        or f"pass provider= one of {', '.join(repr(p) for p in PROVIDERS)}"
                    )
                )
                return
            self.provider = name
            self.adapter = ADAPTERS[name]()
        if self.new_response_at is not None:
            return  # another response's event: not merged (its start is an anomaly)
        if not self.adapter.knows(event):
            self._unrecognized(event)
            return
        self.recognized += 1
        reason = self.adapter.new_response(event)
        if reason is not None:
            self.new_response_at = self.count
            self._anomaly_everywhere(
                "new_response",
                f"event {self.count} starts another response ({reason}): it and the events "
                "after it are not merged into this message",
            )
            return
        try:
            leaves = self.adapter.event(event)
        except AdapterError as exc:
            self._unreadable(f"{self.provider}: {exc.detail}")
            return
        # the parts of the event that could not be read, before what was (only openai-chat
        # reads an event in parts: a choice that is not an object)
        for detail in getattr(self.adapter, "unread", list)():
            self._unreadable(f"{self.provider}: {detail}")
        self.read += 1
        self._fold_all(self._after_finish(leaves))

    def _unrecognized(self, event: dict[str, Any]) -> None:
        """An event with no key the adapter knows: an anomaly, and not read (spec §8)."""
        keys = _keys(event)
        if self.foreign is None:
            looks = detect(event)
            self.foreign = (keys, None if looks == self.provider else looks)
        self._anomaly_everywhere(
            "unrecognized_event",
            f"event {self.count} has no key the {self.provider} adapter reads "
            f"(keys: {keys}); it was not read",
        )

    def _foreign_stream(self, keys: str, looks: str | None) -> str:
        """The detail of the error for a stream of which no event was recognized (``keys``
        of the first, and the provider it looks like)."""
        detail = f"none of the stream's {self.count} events is an event of {self.provider!r}"
        if looks is None:
            return f"{detail} (keys of the first: {keys})"
        return f"{detail}; they look like events of {looks!r}: pass provider={looks!r}"

    def _anomaly_everywhere(self, code: str, detail: str) -> None:
        """One anomaly for every choice seen so far (choice 0 if none)."""
        anomaly = {"anomalies": [{"code": code, "detail": detail}]}
        self._fold_all([(choice, anomaly) for choice, _ in self._choices()])

    def _finished(self, choice: int) -> bool:
        """Whether choice ``choice`` has finished (spec §6.1): its finish reason came, or its
        terminal status (``message_stop``, ``response.completed``, ``done``, ``messageStop``)."""
        state = self.states.get(choice)
        return state is not None and (state.finish_reason is not None or state.status == "complete")

    def _after_finish(
        self, leaves: list[tuple[int, dict[str, Any]]]
    ) -> list[tuple[int, dict[str, Any]]]:
        """An event's leaves without the content it carries for a choice that had finished
        before it (spec §6.1: a stream logged twice, events out of order). Such a choice gets
        one ``delta_after_finish`` anomaly and the event's metadata (usage, ids, status:
        merged after the finish as always), not its content, nor the anomalies its content
        raised: the finished message's content stays as it was."""
        refused = {
            choice for choice, leaf in leaves if _carries_content(leaf) and self._finished(choice)
        }
        if not refused:
            return leaves
        out: list[tuple[int, dict[str, Any]]] = []
        told: set[int] = set()
        for choice, leaf in leaves:
            if choice not in refused:
                out.append((choice, leaf))
                continue
            if choice not in told:
                told.add(choice)
                detail = (
                    f"event {self.count} carries content for choice {choice}, which had "
                    "finished: its content was not merged"
                )
                out.append(
                    (choice, {"anomalies": [{"code": "delta_after_finish", "detail": detail}]})
                )
            rest = {
                key: value
                for key, value in leaf.items()
                if key not in _CONTENT_KEYS and key != "anomalies"
            }
            if rest:
                out.append((choice, rest))
        return out

    def _fold_all(self, leaves: list[tuple[int, dict[str, Any]]]) -> None:
        for choice, leaf in leaves:
            state = self.states.get(choice)
            if state is None:
                state = self._new_state(choice)
            if self.options.strict and leaf.get("anomalies"):
                first = leaf["anomalies"][0]
                self.closed = f"event {self.count} raised an anomaly"
                raise errors.anomaly(first["code"], first["detail"])
            try:
                _fold(state, leaf)
                if "usage" in leaf and _beyond_64(state.usage):
                    raise errors.too_large_sum(self.count)  # usage="sum" added them up
            except BaseException:
                self.closed = f"event {self.count} raised while folding"
                raise

    def _new_state(self, choice: int) -> _State:
        state = _State("assistant", self.options)
        first: dict[str, Any] = {"choice_index": choice}
        if self.provider is not None:
            first["provider_metadata"] = {"provider": self.provider}
        _fold(state, first)
        if self.pending:
            # the unreadable events before the first choice, in their order
            _fold(state, {"anomalies": self.pending})
            self.pending = []
        self.states[choice] = state
        return state

    def _choices(self) -> list[tuple[int, _State]]:
        if not self.states:
            self._new_state(0)  # no event at all: one empty, incomplete message
        return sorted(self.states.items())

    def _data(self, state: _State, finish: bool) -> dict[str, Any]:
        data = _materialize(state, finish)
        if _beyond_64(data["usage"]):
            raise errors.too_large_sum(self.count)  # a computed total
        if data["status"] is None:
            data["status"] = "incomplete"
        return data


def _beyond_64(usage: Any) -> bool:
    """Whether usage holds an int outside 64 bits: only a sum makes one (events' ints are
    64-bit), and the engine's ints cannot hold it."""
    if isinstance(usage, dict):
        return any(_beyond_64(value) for value in usage.values())
    return type(usage) is int and not -(2**63) <= usage < 2**63


#: The keys of a leaf that hold content (spec §6.1); ``_carries_content`` reads their values.
_CONTENT_KEYS = ("parts", "content", "completion_token_ids", "refusal", "logprobs")


#: The anomalies an adapter raises reading an event's content (a block started at an index
#: in use, a delta before its start, a done text other than the deltas): after the finish
#: they are part of the content that is not merged (a stream logged twice raises them).
_CONTENT_ANOMALIES = ("index_collision", "delta_before_start", "mismatched_delta")


def _carries_content(leaf: dict[str, Any]) -> bool:
    """Whether a leaf carries content (spec §6.1): text, reasoning, a refusal, tool-call
    fragments, logprobs, token ids, or an anomaly of reading them; an empty text part is
    none. Everything else of a leaf (usage, ids, finish reason, status, metadata, other
    anomalies) is metadata."""
    for key, value in leaf.items():
        if key == "parts":
            if isinstance(value, list) and any(_content_part(p) for p in value):
                return True
        elif key in ("content", "completion_token_ids"):
            if value is not None and (not isinstance(value, (str, list)) or value):
                return True
        elif key == "refusal":
            if isinstance(value, str) and value:
                return True
        elif key == "logprobs" and value is not None:
            return True
        elif key == "anomalies" and isinstance(value, list):
            if any(isinstance(a, dict) and a.get("code") in _CONTENT_ANOMALIES for a in value):
                return True
    return False


def _content_part(part: Any) -> bool:
    """Whether a part of a leaf is content: any part but a text or reasoning part with
    nothing but an empty text and no index (the empty delta of a chunk that carries only
    metadata; an index is a block opened)."""
    if not isinstance(part, dict):
        return True
    empty = (
        part.get("part") in ("text", "reasoning")
        and part.get("text") == ""
        and type(part.get("text")) is str
        and all(key in ("part", "text") for key in part)
    )
    return not empty


def _wrapper_hint(event: dict[str, Any]) -> str | None:
    """What to do when an event no provider knows holds one in a field: it is a log's wrapper
    record (``{"ts": ..., "stream_id": ..., "event": {...}}``), read by ``fastmerge batch``."""
    for key, value in event.items():
        name = detect(value) if isinstance(value, dict) else None
        if name is not None:
            return (
                f"its {key!r} is an event of {name}: read a log of such records with "
                f"fastmerge batch --group-by KEY --event {key}"
            )
    return None


def _keys(event: dict[str, Any]) -> str:
    """The first keys of an event, as error and anomaly details name them."""
    return ", ".join(repr(k) for k in list(event)[:8])
