"""After the finish (rules §6.1): a choice that has finished takes no more content. A stream
logged twice (``cat s s``) or an event out of order is not merged into the finished message:
the message stays as the first copy made it, with one ``delta_after_finish`` anomaly per event
refused; ``strict=True`` raises. Metadata after the finish (usage, moderation, ids) is still
merged. ``aggregate``, ``fastmerge merge --provider auto``, the batch API and ``fastmerge
batch`` agree. Every test runs on both backends.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from _support.batch import batch_module, chat, chunk, lines, write
from _support.cli import fastmerge_cli
from _support.corpus import CORPUS

import fastmerge
from fastmerge.errors import AnomalyError

#: The E97 stream: OpenAI Chat, two parallel tool calls.
E97 = CORPUS / "openai_chat" / "gpt4o-parallel-tool-calls.jsonl"

#: One corpus stream of each adapter whose wire says which response an event belongs to.
DOUBLED = {
    "openai-chat": E97,
    "openai-responses": CORPUS / "openai_responses" / "gpt4o-function-call.jsonl",
    "anthropic": CORPUS / "anthropic_messages" / "sonnet4-text-then-tool-use.jsonl",
    "gemini": CORPUS / "gemini" / "gemini3-pro-function-call-with-args.jsonl",
    "ollama": CORPUS / "ollama" / "generate-deepseek-v31-turbo-text.jsonl",
}
#: Bedrock's wire has no response id: a second ``messageStart`` is another response (E87).
BEDROCK = CORPUS / "bedrock_converse" / "nova-micro-tool-use.jsonl"

#: A content event of each stream above (the first that carries text or a tool call), by
#: its line: sent again after the end, out of order.
LATE = {
    "openai-chat": 3,
    "openai-responses": 6,
    "anthropic": 3,
    "gemini": 0,
    "ollama": 2,
    "bedrock-converse": 2,
}

AFTER = "delta_after_finish"
DETAIL = re.compile(
    r"event (\d+) carries content for choice 0, which had finished: its content was not merged"
)


def raw(path: Path) -> bytes:
    data = path.read_bytes()
    return data if data.endswith(b"\n") else data + b"\n"


def events_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in raw(path).splitlines() if line.strip()]


def plain(message: Any) -> dict[str, Any]:
    """A message's dict without its ``delta_after_finish`` anomalies."""
    data: dict[str, Any] = message.to_dict()
    data["anomalies"] = [a for a in data["anomalies"] if a["code"] != AFTER]
    return data


def refused(message: Any) -> list[int]:
    """The event numbers the ``delta_after_finish`` anomalies name, in order."""
    numbers = []
    for anomaly in message.anomalies:
        if anomaly["code"] == AFTER:
            match = DETAIL.fullmatch(anomaly["detail"])
            assert match, anomaly["detail"]
            numbers.append(int(match.group(1)))
    return numbers


def record_bytes(messages: list[Any]) -> list[bytes]:
    return [orjson.dumps(m.to_dict()) for m in messages]


# -- E97: a stream logged twice


def test_e97_a_chat_stream_logged_twice_is_the_first_copy() -> None:
    """E97: an OpenAI Chat stream with two parallel tool calls, its lines written twice
    (``cat s s``): the message of the first copy, arguments valid JSON, status complete,
    anomaly ``delta_after_finish`` naming each refused event of the second copy."""
    once = fastmerge.aggregate(raw(E97))
    twice = fastmerge.aggregate(raw(E97) + raw(E97))
    calls = twice.tool_calls or []
    assert [json.loads(c.arguments) for c in calls] == [
        {"city": "Edinburgh", "country": "GB", "units": "c"},
        {"ticker": "AAPL", "exchange": "NASDAQ"},
    ]
    assert twice.status == "complete" and twice.finish_reason == "tool_calls"
    assert plain(twice) == once.to_dict()
    count = len(events_of(E97))
    numbers = refused(twice)
    # every event of the second copy that carries a tool-call fragment, and only those
    assert numbers == list(range(count + 2, count + 2 + len(numbers)))
    assert len(numbers) == 22


def test_e97_strict_raises() -> None:
    """E97: ``strict=True`` raises ``AnomalyError`` at the first event of the second copy
    that carries content."""
    count = len(events_of(E97))
    with pytest.raises(AnomalyError) as caught:
        fastmerge.aggregate(raw(E97) + raw(E97), strict=True)
    assert caught.value.code == AFTER
    assert DETAIL.fullmatch(caught.value.detail)
    assert caught.value.detail.startswith(f"event {count + 2} ")


@pytest.mark.parametrize("provider", sorted(DOUBLED))
def test_a_stream_logged_twice_is_its_first_copy_on_every_adapter(provider: str) -> None:
    """E97 on every adapter whose events name their response: the doubled stream, as
    bytes and as dicts, is the message of the first copy plus ``delta_after_finish``
    anomalies naming events of the second copy only."""
    path = DOUBLED[provider]
    once = fastmerge.aggregate(raw(path), provider)  # type: ignore[arg-type]
    assert once.status == "complete" and not refused(once)
    count = len(events_of(path))
    for doubled in (raw(path) + raw(path), events_of(path) + events_of(path)):
        twice = fastmerge.aggregate(doubled, provider)  # type: ignore[arg-type]
        assert plain(twice) == once.to_dict()
        numbers = refused(twice)
        assert numbers and all(count < n <= 2 * count for n in numbers)
        assert numbers == sorted(set(numbers))  # one anomaly per event refused


@pytest.mark.parametrize("provider", sorted(DOUBLED))
def test_a_stream_logged_twice_raises_with_strict_on_every_adapter(provider: str) -> None:
    """E97, strict: the doubled stream raises ``delta_after_finish``."""
    path = DOUBLED[provider]
    with pytest.raises(AnomalyError) as caught:
        fastmerge.aggregate(raw(path) + raw(path), provider, strict=True)  # type: ignore[arg-type]
    assert caught.value.code == AFTER


@pytest.mark.parametrize("provider", sorted(LATE))
def test_a_content_event_out_of_order_after_the_finish_is_refused(provider: str) -> None:
    """Rules §6.1: one content event of the stream sent again after its end (events out of
    order) is not merged; the anomaly names it."""
    path = BEDROCK if provider == "bedrock-converse" else DOUBLED[provider]
    events = events_of(path)
    late = events[LATE[provider]]
    once = fastmerge.aggregate(events, provider)  # type: ignore[arg-type]
    after = fastmerge.aggregate([*events, late], provider)  # type: ignore[arg-type]
    assert plain(after) == once.to_dict()
    assert refused(after) == [len(events) + 1]


def test_bedrock_a_second_message_start_is_another_response() -> None:
    """E87 before §6.1 where the wire has no response id: a Bedrock stream logged twice is
    two responses (nothing tells them apart); ``aggregate`` gives the first, flagged
    ``new_response``, and merges none of the second."""
    once = fastmerge.aggregate(raw(BEDROCK), "bedrock-converse")
    twice = fastmerge.aggregate(raw(BEDROCK) + raw(BEDROCK), "bedrock-converse")
    codes = [a["code"] for a in twice.anomalies]
    assert codes == ["new_response"]
    data = twice.to_dict()
    data["anomalies"] = []
    assert data == once.to_dict()


def bedrock_late(after_metadata: bool = False) -> tuple[list[dict[str, Any]], list[int]]:
    """The Bedrock stream with its content events (``messageStart`` to ``messageStop``,
    exclusive) sent again after its ``messageStop`` without a new ``messageStart``: before
    the ``metadata`` event that follows it, or after; and the event numbers that carry
    content (a ``contentBlockStop`` carries none)."""
    events = events_of(BEDROCK)
    stop = next(i for i, e in enumerate(events) if "messageStop" in e)
    late = events[1:stop]
    at = len(events) if after_metadata else stop + 1
    numbers = [at + i + 1 for i, e in enumerate(late) if "contentBlockStop" not in e]
    return [*events[:at], *late, *events[at:]], numbers


@pytest.mark.parametrize("after_metadata", [False, True])
def test_bedrock_content_after_message_stop_is_refused(after_metadata: bool) -> None:
    """E97 on Bedrock, whose wire has no response id: content events (``contentBlockStart``,
    ``contentBlockDelta``) after ``messageStop`` without a new ``messageStart`` are not
    merged, one ``delta_after_finish`` naming each; the ``metadata`` event Bedrock sends after
    ``messageStop`` (usage, metrics) is still merged, before or after them. As dicts and as
    bytes."""
    once = fastmerge.aggregate(raw(BEDROCK), "bedrock-converse")
    assert once.status == "complete" and once.to_dict()["usage_metadata"]["total_tokens"] == 562
    events, numbers = bedrock_late(after_metadata)
    assert len(numbers) == 21
    as_bytes = b"".join(json.dumps(e).encode() + b"\n" for e in events)
    for stream in (events, as_bytes):
        message = fastmerge.aggregate(stream, "bedrock-converse")
        assert plain(message) == once.to_dict()
        assert refused(message) == numbers
        assert [a["code"] for a in message.anomalies] == [AFTER] * len(numbers)


def test_bedrock_metadata_after_the_finish_is_merged() -> None:
    """Rules §6.1 on Bedrock: a ``metadata`` event after ``messageStop`` is metadata, merged
    with no anomaly, also after a refused content event (its usage is the last)."""
    events = events_of(BEDROCK)
    usage = {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}
    again = {"metadata": {"usage": usage, "metrics": {"latencyMs": 9}}}
    message = fastmerge.aggregate([*events, events[2], again], "bedrock-converse")
    assert message.to_dict()["usage_metadata"] == {
        "input_tokens": 1,
        "output_tokens": 2,
        "total_tokens": 3,
    }
    assert message.provider_metadata["metrics"] == {"latencyMs": 9}
    assert refused(message) == [len(events) + 1]


def test_bedrock_content_after_message_stop_raises_with_strict() -> None:
    """E97 on Bedrock, strict: the first content event after ``messageStop`` raises
    ``delta_after_finish`` naming it."""
    events, numbers = bedrock_late()
    with pytest.raises(AnomalyError) as caught:
        fastmerge.aggregate(events, "bedrock-converse", strict=True)
    assert caught.value.code == AFTER
    assert caught.value.detail.startswith(f"event {numbers[0]} ")


@pytest.mark.parametrize("stopped", [False, True])
def test_bedrock_image_block_after_message_stop_is_refused_at_its_start(stopped: bool) -> None:
    """Rules §6.1 on Bedrock: an image block (whose start and delta make one block, E104)
    opened after ``messageStop`` is refused at its own events, not merged into the finished
    message when its ``contentBlockStop`` or the stream's end would emit it."""
    events = events_of(BEDROCK)
    image: list[dict[str, Any]] = [
        {"contentBlockStart": {"contentBlockIndex": 5, "start": {"image": {"format": "png"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 5, "delta": {"image": {"source": {}}}}},
    ]
    if stopped:
        image.append({"contentBlockStop": {"contentBlockIndex": 5}})
    once = fastmerge.aggregate(events, "bedrock-converse")
    message = fastmerge.aggregate([*events, *image], "bedrock-converse")
    assert plain(message) == once.to_dict()
    assert refused(message) == [len(events) + 1, len(events) + 2]


def test_a_stream_with_an_id_per_chunk_logged_twice_is_its_first_copy() -> None:
    """E97 where every chunk has its own id (Groq compound): the second copy's ids were all
    seen before the finish, so they are this response's, and its content is refused."""
    path = CORPUS / "openai_chat" / "groq-compound-web-search.jsonl"
    ids = {event.get("id") for event in events_of(path)}
    assert len(ids) > 100
    once = fastmerge.aggregate(raw(path), "openai-chat")
    twice = fastmerge.aggregate(raw(path) + raw(path), "openai-chat")
    assert plain(twice) == once.to_dict()
    assert refused(twice)


def test_a_chunk_of_a_new_id_after_the_finish_is_still_another_response() -> None:
    """E87 stays: an id never seen in this response, after its finish, starts another."""
    events = chat("a", ["x"]) + chat("b", ["y"])
    message = fastmerge.aggregate(events, "openai-chat")
    assert message.content == "x"
    assert [a["code"] for a in message.anomalies] == ["new_response"]


# -- metadata after the finish


def test_usage_after_the_finish_is_merged_and_content_is_not() -> None:
    """Rules §6.1: after the finish chunk, a text delta is refused and the usage-only chunk
    after it is merged."""
    events = chat("u", ["Hel", "lo"])
    late = chunk("u", choices=[{"index": 0, "delta": {"content": " again"}}])
    message = fastmerge.aggregate([*events[:-1], late, events[-1]], "openai-chat")
    assert message.content == "Hello"
    assert message.to_dict()["usage_metadata"] == {
        "input_tokens": 5,
        "output_tokens": 2,
        "total_tokens": 7,
    }
    assert refused(message) == [len(events)]
    assert [a["code"] for a in message.anomalies] == [AFTER]


def test_the_moderation_chunk_after_the_usage_chunk_is_still_merged() -> None:
    """E86 under §6.1: the gpt-5 stream's moderation chunk after its usage chunk is
    metadata: merged, no anomaly."""
    path = CORPUS / "openai_chat" / "gpt5-trailing-moderation-chunk.jsonl"
    events = events_of(path)
    assert "moderation" in events[-1]
    message = fastmerge.aggregate(events, "openai-chat")
    without = fastmerge.aggregate(events[:-1], "openai-chat")
    assert message.anomalies == [] and message.status == "complete"
    assert message.provider_metadata != without.provider_metadata
    assert message.content == without.content


def test_a_metadata_event_after_the_finish_keeps_its_metadata() -> None:
    """Rules §6.1: a refused event's content is not merged, its metadata is (a stream
    logged twice ends with the same usage and model as its first copy)."""
    events = chat("m", ["a"])
    late = chunk("m", choices=[{"index": 0, "delta": {"content": "b"}}], model="gpt-4o-late")
    message = fastmerge.aggregate([*events, late], "openai-chat")
    assert message.content == "a"
    assert message.response_model == "gpt-4o-late"
    assert refused(message) == [len(events) + 1]


def test_an_empty_delta_after_the_finish_is_no_content() -> None:
    """Rules §6.1: a chunk whose delta holds only an empty text (a role chunk) carries no
    content: merged without an anomaly."""
    events = chat("e", ["a"])
    empty = chunk("e", choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}}])
    message = fastmerge.aggregate([*events, empty], "openai-chat")
    assert message.content == "a" and message.anomalies == []


def test_anthropic_content_after_message_delta_is_refused() -> None:
    """Rules §6.1: Anthropic's ``message_delta`` with a stop reason finishes the message: a
    text delta after it is refused, ``message_stop`` after it is merged."""
    path = DOUBLED["anthropic"]
    events = events_of(path)
    stop = next(i for i, e in enumerate(events) if e["type"] == "message_delta")
    text = next(e for e in events if e["type"] == "content_block_delta")
    late = [*events[: stop + 1], text, *events[stop + 1 :]]
    once = fastmerge.aggregate(events, "anthropic")
    message = fastmerge.aggregate(late, "anthropic")
    assert plain(message) == once.to_dict()
    assert refused(message) == [stop + 2]


def test_a_choice_not_finished_takes_content_after_another_finished() -> None:
    """Rules §6.1 is per choice: choice 1 finishing does not stop choice 0."""
    events = [
        chunk("n", choices=[{"index": 0, "delta": {"content": "a"}}]),
        chunk("n", choices=[{"index": 1, "delta": {"content": "x"}, "finish_reason": "stop"}]),
        chunk("n", choices=[{"index": 0, "delta": {"content": "b"}}]),
        chunk("n", choices=[{"index": 1, "delta": {"content": "y"}}]),
        chunk("n", choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    ]
    first, second = fastmerge.aggregate_choices(events, "openai-chat")
    assert (first.content, first.anomalies) == ("ab", [])
    assert second.content == "x"
    assert [a["detail"] for a in second.anomalies] == [
        "event 4 carries content for choice 1, which had finished: its content was not merged"
    ]


# -- chunk +


def test_chunk_plus_keeps_openjiuwen_concatenation_after_a_finish_reason() -> None:
    """Rules §6.1 is a rule of events (which response, which event): the chunk classes are
    openJiuwen's drop-ins, whose ``+`` concatenates whatever ``finish_reason`` the left side
    holds, and so does fastmerge's (a chunk's finish reason may come on any chunk)."""
    chunk_class = fastmerge.AssistantMessageChunk
    acc = chunk_class(content="a", finish_reason="stop") + chunk_class(content="b")
    assert acc.content == "ab" and acc.finish_reason == "stop" and acc.anomalies == []


# -- the command line and the batch engine


def test_cli_merge_of_doubled_stdin_is_the_first_copy(backend_name: str) -> None:
    """E97 from the command line: ``cat s s | fastmerge merge --provider auto -`` prints the
    first copy's message with the anomaly and exits 0 (anomalies never change the exit
    status of a complete stream); ``--strict`` exits 1 naming the anomaly."""
    doubled = raw(E97) + raw(E97)
    done = fastmerge_cli(backend_name, "merge", "--provider", "auto", "-", stdin=doubled)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    expected = fastmerge.aggregate(doubled).to_dict()
    assert out == expected
    assert [json.loads(p["arguments"]) for p in out["parts"]][0]["city"] == "Edinburgh"
    strict = fastmerge_cli(
        backend_name, "merge", "--provider", "auto", "--strict", "-", stdin=doubled
    )
    assert strict.returncode == 1
    assert strict.stdout == b""
    assert b"delta_after_finish: event 27 carries content" in strict.stderr


@pytest.mark.parametrize("provider", sorted(DOUBLED))
def test_batch_of_a_file_logged_twice_is_one_stream_as_aggregate(
    provider: str, backend_name: str, tmp_path: Path
) -> None:
    """E97 in the batch API: a file holding a stream twice is one stream (the same
    response's events do not start another), equal to ``aggregate`` of the same lines."""
    batch = batch_module(backend_name)
    doubled = raw(DOUBLED[provider]) + raw(DOUBLED[provider])
    path = write(tmp_path / "log.jsonl", doubled)
    results = list(batch.merge_logs(path))
    assert [r.status for r in results] == ["complete"]
    expected = fastmerge.aggregate_choices(doubled)
    assert record_bytes(results[0].messages) == record_bytes(expected)
    assert refused(results[0].messages[0])


@pytest.mark.parametrize("provider", sorted(DOUBLED))
def test_batch_of_wrapped_records_logged_twice_is_one_stream(
    provider: str, backend_name: str, tmp_path: Path
) -> None:
    """E97 with records grouped by key: the second copy's records join the first (E86: the
    end event is a hint, not a wall; E87 does not apply to the same response)."""
    batch = batch_module(backend_name)
    events = events_of(DOUBLED[provider])
    records = [{"k": "s", "event": e} for e in events + events]
    path = write(tmp_path / "log.jsonl", lines(records))
    results = list(batch.merge_logs(path, group_by="k", event="event"))
    assert [(r.key, r.status) for r in results] == [("s", "complete")]
    expected = fastmerge.aggregate_choices(events + events)
    assert record_bytes(results[0].messages) == record_bytes(expected)


def test_batch_of_bedrock_logged_twice_is_two_responses(backend_name: str, tmp_path: Path) -> None:
    """E87 where the wire has no response id: Bedrock's second ``messageStart`` after a
    ``messageStop`` starts another stream, each equal to the stream aggregated alone."""
    batch = batch_module(backend_name)
    events = events_of(BEDROCK)
    records = [{"k": "s", "event": e} for e in events + events]
    path = write(tmp_path / "log.jsonl", lines(records))
    results = list(batch.merge_logs(path, group_by="k", event="event"))
    once = record_bytes(fastmerge.aggregate_choices(events))
    assert [record_bytes(r.messages) for r in results] == [once, once]


def test_cli_batch_of_a_log_holding_a_stream_twice(backend_name: str, tmp_path: Path) -> None:
    """E97 in ``fastmerge batch``: one record, complete, the first copy's tool calls, the
    anomaly; exit 0 (every stream complete)."""
    doubled = raw(E97) + raw(E97)
    path = write(tmp_path / "log.jsonl", doubled)
    done = fastmerge_cli(backend_name, "batch", path, "--quiet")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["status"], r["provider"]) for r in records] == [("complete", "openai-chat")]
    message = fastmerge.aggregate(doubled).to_dict()
    assert records[0]["message"] == message
    assert records[0]["anomalies"] == message["anomalies"]


@pytest.mark.parametrize("grouped", [False, True])
def test_batch_of_bedrock_content_after_message_stop_is_one_stream(
    grouped: bool, backend_name: str, tmp_path: Path
) -> None:
    """E97 on Bedrock in the batch API: content events after ``messageStop`` (no new
    ``messageStart``) and after the ``metadata`` that ends the stream belong to it: one
    stream, equal to ``aggregate`` of the same events, with the refusals."""
    batch = batch_module(backend_name)
    events, numbers = bedrock_late(after_metadata=True)
    if grouped:
        path = write(tmp_path / "log.jsonl", lines([{"k": "s", "event": e} for e in events]))
        results = list(batch.merge_logs(path, group_by="k", event="event"))
    else:
        path = write(tmp_path / "log.jsonl", lines(events))
        results = list(batch.merge_logs(path))
    assert [r.status for r in results] == ["complete"]
    expected = fastmerge.aggregate_choices(events, "bedrock-converse")
    assert record_bytes(results[0].messages) == record_bytes(expected)
    assert refused(results[0].messages[0]) == numbers


def test_cli_of_bedrock_content_after_message_stop(backend_name: str, tmp_path: Path) -> None:
    """E97 on Bedrock from the command line: ``fastmerge merge --provider auto`` and
    ``fastmerge batch`` give the finished message with the refusals, exit 0; ``merge
    --strict`` exits 1 naming the anomaly."""
    events, numbers = bedrock_late()
    data = lines(events)
    expected = fastmerge.aggregate(events, "bedrock-converse").to_dict()
    assert refused(fastmerge.aggregate(events, "bedrock-converse")) == numbers
    done = fastmerge_cli(backend_name, "merge", "--provider", "auto", "-", stdin=data)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected
    strict = fastmerge_cli(backend_name, "merge", "--provider", "auto", "--strict", "-", stdin=data)
    assert strict.returncode == 1
    assert f"delta_after_finish: event {numbers[0]} carries content".encode() in strict.stderr
    path = write(tmp_path / "log.jsonl", data)
    batched = fastmerge_cli(backend_name, "batch", path, "--quiet")
    assert batched.returncode == 0, batched.stderr
    records = [json.loads(line) for line in batched.stdout.splitlines()]
    assert [(r["status"], r["provider"]) for r in records] == [("complete", "bedrock-converse")]
    assert records[0]["message"] == expected


def test_a_stream_logged_twice_reads_alike_however_it_is_split(
    aggregate_module: ModuleType,
) -> None:
    """E97, bytes fed in pieces: the result does not depend on how the doubled stream was
    split into ``feed`` calls (the fast path and the parsed path agree)."""
    doubled = raw(E97) + raw(E97)
    whole = record_bytes(aggregate_module.aggregate_choices(doubled))
    agg = aggregate_module.Aggregator()
    for start in range(0, len(doubled), 13):
        agg.feed(doubled[start : start + 13])
    assert record_bytes(agg.finish_choices()) == whole
