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

from typing import Any

from .. import errors
from . import events
from .chunks import Options, _fold, _materialize, _State
from .providers import ADAPTERS, PROVIDERS, AdapterError, detect

__all__ = ["AggregatorCore", "PROVIDERS"]

_SSE_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")


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
        self.transport: events.Transport | None = None
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
            raise errors.event_error(self.count, exc.detail) from None
        self._event(value)

    def add_text(self, data: str | bytes) -> None:
        """One item of text: the JSON of one event, a JSON array of events, or complete SSE
        lines (``response.iter_lines()``: each item is one or more whole lines)."""
        self._open()
        raw = self._utf8(data)
        head = raw.lstrip(b" \t\r\n\xef\xbb\xbf")
        if head[:1] == b"{":
            self.count += 1
            self._event(self._parse(raw))
        elif head[:1] == b"[" and (self.transport is None or self.transport.kind != "sse"):
            self._text_array(raw)
        else:
            self.feed(raw if raw.endswith(b"\n") else raw + b"\n")

    def feed(self, data: str | bytes) -> None:
        """Raw transport bytes (SSE, JSON lines or a JSON array), split anywhere."""
        self._open()
        if self.transport is None:
            self.transport = events.Transport()
        raw = self._utf8(data)
        payloads: list[bytes] = []
        try:
            self.transport.feed(raw, payloads)
        except events.EventDataError as exc:
            self._read_all(payloads)
            raise self._transport_error(exc) from None
        self._read_all(payloads)

    # -- output

    def snapshot(self) -> list[dict[str, Any]]:
        """The messages so far, one per choice in choice order (the stream may go on)."""
        return [self._data(state, False) for _, state in self._choices()]

    def finish(self) -> list[dict[str, Any]]:
        """The end of the stream: the transport's last event, the adapter's last leaves, and
        the complete messages, one per choice in choice order. The aggregator then closes."""
        self._open()
        cut: str | None = None
        if self.transport is not None:
            payloads: list[bytes] = []
            try:
                tail = self.transport.finish(payloads)
            except events.EventDataError as exc:
                self._read_all(payloads)
                raise self._transport_error(exc) from None
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

    def _parse(self, raw: bytes) -> dict[str, Any]:
        try:
            return events.parse(raw)
        except events.EventDataError as exc:
            raise errors.event_error(self.count, exc.detail) from None

    def _text_array(self, raw: bytes) -> None:
        transport = events.Transport()
        payloads: list[bytes] = []
        try:
            transport.feed(raw, payloads)
            if transport.finish(payloads) is not None:
                raise events.EventDataError(events.NOT_JSON)  # an item is given whole
        except events.EventDataError as exc:
            self._read_all(payloads)
            raise self._transport_error(exc) from None
        self._read_all(payloads)

    def _transport_error(self, exc: events.EventDataError) -> errors.EventError:
        """The next event's number; the aggregator closes (the transport cannot tell where
        the next event starts)."""
        self.count += 1
        self.closed = f"event {self.count} could not be read"
        return errors.event_error(self.count, exc.detail)

    def _read_all(self, payloads: list[bytes]) -> None:
        for payload in payloads:
            self.count += 1
            self._event(self._parse(payload))

    def _event(self, event: dict[str, Any]) -> None:
        if self.adapter is None:
            name = detect(event)
            if name is None:
                raise errors.event_error(
                    self.count,
                    f"cannot tell the provider from this event (keys: {_keys(event)}); "
                    f"pass provider= one of {', '.join(repr(p) for p in PROVIDERS)}",
                )
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
            self.closed = f"event {self.count} could not be read"
            raise errors.event_error(self.count, f"{self.provider}: {exc.detail}") from None
        self._fold_all(leaves)

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
            except BaseException:
                self.closed = f"event {self.count} raised while folding"
                raise

    def _new_state(self, choice: int) -> _State:
        state = _State("assistant", self.options)
        first: dict[str, Any] = {"choice_index": choice}
        if self.provider is not None:
            first["provider_metadata"] = {"provider": self.provider}
        _fold(state, first)
        self.states[choice] = state
        return state

    def _choices(self) -> list[tuple[int, _State]]:
        if not self.states:
            self._new_state(0)  # no event at all: one empty, incomplete message
        return sorted(self.states.items())

    def _data(self, state: _State, finish: bool) -> dict[str, Any]:
        data = _materialize(state, finish)
        if data["status"] is None:
            data["status"] = "incomplete"
        return data


def _keys(event: dict[str, Any]) -> str:
    """The first keys of an event, as error and anomaly details name them."""
    return ", ".join(repr(k) for k in list(event)[:8])
