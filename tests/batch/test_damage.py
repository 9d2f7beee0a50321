"""An input ended by damage (E106), on both backends: a cut or corrupt compressed file, or a
line over ``FASTMERGE_MAX_LINE_BYTES``, ends the input there; every stream read is returned
(the open ones too, each as ``aggregate`` of its events read gives), then the error; the
command writes those records and exits non-zero naming the error."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from _support.batch import (
    COMPRESSORS,
    aggregated,
    batch_module,
    chunk,
    decodable,
    lines,
    summary,
    write,
)

import fastmerge
from fastmerge import cli
from fastmerge.errors import BatchError

WRAPPED = {"group_by": "k", "event": "event"}


def open_stream(sid: str) -> list[dict[str, Any]]:
    """An OpenAI stream of a text chunk and a finish chunk: no usage chunk, no ``[DONE]``, so
    nothing ends it before the input does."""
    return [
        chunk(sid, choices=[{"index": 0, "delta": {"role": "assistant", "content": sid}}]),
        chunk(sid, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
    ]


def hundred_open_streams() -> bytes:
    return lines({"k": f"s{i}", "event": e} for i in range(100) for e in open_stream(f"s{i}"))


def read_all(batch: ModuleType, path: str, **options: Any) -> tuple[list[Any], str]:
    """Each result read, and the error that ended the batch (there must be one)."""
    got: list[Any] = []
    with pytest.raises(BatchError) as info:
        for result in batch.merge_logs(path, **{**WRAPPED, **options}):
            got.append(result)
    return got, str(info.value)


def messages(result: Any) -> list[bytes] | str:
    if result.messages is None:
        return str(result.error)
    return [orjson.dumps(m.to_dict()) for m in result.messages]


def test_a_gzip_with_its_trailer_cut_returns_every_open_stream_then_the_error(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    """E106: 100 streams never ended, gzip with its 8-byte trailer cut: all 100 come back,
    each as ``aggregate`` of its events gives (complete: each saw its finish), then the
    error."""
    data = hundred_open_streams()
    path = write(tmp_path / "log.jsonl.gz", COMPRESSORS["gzip"](data)[:-8])
    for jobs in (1, 2):
        got, error = read_all(batch, path, jobs=jobs)
        assert [r.key for r in got] == [f"s{i}" for i in range(100)], jobs
        assert [messages(r) for r in got] == [
            aggregated(aggregate_module, open_stream(f"s{i}")) for i in range(100)
        ]
        assert {r.status for r in got} == {"complete"}
        assert error == f"{path}: gzip stream is truncated after {len(data)} decompressed bytes"


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_every_format_cut_in_half_returns_every_stream_read(
    batch: ModuleType, tmp_path: Path, fmt: str
) -> None:
    """E106: whatever the format, the streams of the whole lines decoded before the cut, the
    open ones too, exactly as the same lines read as a whole plain log give them."""
    data = hundred_open_streams()
    # two members (frames, streams), the second cut in half: a format that decodes a block
    # only whole still gives the first member's lines
    middle = data.index(b'"k": "s50"')
    middle = data.rfind(b"\n", 0, middle) + 1
    second = COMPRESSORS[fmt](data[middle:])
    damaged = COMPRESSORS[fmt](data[:middle]) + second[: len(second) // 2]
    path = write(tmp_path / "log.bin", damaged)
    offset = middle + decodable(fmt, second[: len(second) // 2])
    read = data[: data.rfind(b"\n", 0, offset) + 1]
    expected = summary(batch.merge_logs(write(tmp_path / "read.jsonl", read), **WRAPPED))
    assert len(expected) >= 50 and {r[2] for r in expected} == {"complete"}
    for jobs in (1, 2):
        got, error = read_all(batch, path, jobs=jobs)
        assert summary(got) == expected, jobs
        assert error == f"{path}: {fmt} stream is truncated after {offset} decompressed bytes"


def test_a_line_over_the_limit_returns_every_stream_read_before_it(
    batch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """E106: a line longer than FASTMERGE_MAX_LINE_BYTES ends the input; the streams open
    before it come back, then the error naming the line."""
    before = lines({"k": f"s{i}", "event": e} for i in range(3) for e in open_stream(f"s{i}"))
    long = b'{"k": "x", "event": {"pad": "' + b"p" * 500 + b'"}}\n'
    after = lines({"k": "t", "event": e} for e in open_stream("t"))
    monkeypatch.setenv("FASTMERGE_MAX_LINE_BYTES", "400")
    for fmt in (None, "gzip", "zstd", "bzip2", "xz"):
        path = write(tmp_path / f"log-{fmt}", before + long + after, fmt)
        for jobs in (1, 2):
            got, error = read_all(batch, path, jobs=jobs)
            assert [(r.key, r.status, r.message.content) for r in got] == [
                ("s0", "complete", "s0"),
                ("s1", "complete", "s1"),
                ("s2", "complete", "s2"),
            ], (fmt, jobs)
            assert error.startswith(f"{path}:7: a line longer than 400 bytes is not read")


def test_streams_that_ended_and_open_ones_keep_their_places(
    batch: ModuleType, tmp_path: Path
) -> None:
    """E106: the ended streams at their last records, then the open ones in the order of their
    first records, as at the end of the input; then the error."""
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    ended = [*open_stream("e"), chunk("e", choices=[], usage=usage)]
    records = [
        {"k": "o1", "event": open_stream("o1")[0]},
        {"k": "e", "event": ended[0]},
        {"k": "o2", "event": open_stream("o2")[0]},
        {"k": "e", "event": ended[1]},
        {"k": "e", "event": ended[2]},
        {"k": "o1", "event": open_stream("o1")[1]},
    ]
    data = lines(records)
    path = write(tmp_path / "log.gz", COMPRESSORS["gzip"](data)[:-8])
    plain = write(tmp_path / "log.jsonl", data)
    for jobs in (1, 2):
        got, _ = read_all(batch, path, jobs=jobs)
        assert summary(got) == summary(batch.merge_logs(plain, **WRAPPED)), jobs
        assert [(r.key, r.status) for r in got] == [
            ("e", "complete"),
            ("o1", "complete"),
            ("o2", "incomplete"),
        ]


def test_a_file_read_as_one_stream_keeps_the_bytes_before_the_damage(
    batch: ModuleType, tmp_path: Path
) -> None:
    """E106: a file that is one stream, cut: its stream of the bytes decoded before the cut,
    then the error; a file cut before any byte decodes gives no stream."""
    data = lines(open_stream("f"))
    path = write(tmp_path / "one.gz", COMPRESSORS["gzip"](data)[:-8])
    got, error = read_all(batch, path, group_by="file", event=None)
    assert [(r.key, r.status, r.message.content) for r in got] == [(path, "complete", "f")]
    assert error == f"{path}: gzip stream is truncated after {len(data)} decompressed bytes"
    header = write(tmp_path / "header.gz", COMPRESSORS["gzip"](data)[:5])
    assert read_all(batch, header, group_by="file", event=None) == (
        [],
        f"{header}: gzip stream is truncated after 0 decompressed bytes",
    )


def test_the_command_writes_every_stream_read_and_exits_non_zero(
    backend_name: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """E106: ``fastmerge batch`` on the cut gzip writes the 100 records, then names the
    error and exits 1."""
    monkeypatch.setattr(fastmerge, "batch", batch_module(backend_name), raising=False)
    data = hundred_open_streams()
    path = write(tmp_path / "log.jsonl.gz", COMPRESSORS["gzip"](data)[:-8])
    status = cli.main(["batch", path, "--group-by", "k", "--event", "event"])
    out, err = capsys.readouterr()
    records = [json.loads(line) for line in out.splitlines()]
    assert status == 1
    assert [(r["key"], r["status"]) for r in records] == [(f"s{i}", "complete") for i in range(100)]
    assert err.endswith(
        f"fastmerge: error: {path}: gzip stream is truncated after {len(data)} decompressed bytes\n"
    )


def gemini(sid: str) -> list[dict[str, Any]]:
    """A Gemini stream: no event of Gemini's ends a stream before the input does."""
    part = {"content": {"role": "model", "parts": [{"text": sid}]}, "index": 0}
    return [
        {"candidates": [part], "responseId": sid, "modelVersion": "gemini-2.5-flash"},
        {
            "candidates": [
                {
                    **part,
                    "content": {"role": "model", "parts": [{"text": "!"}]},
                    "finishReason": "STOP",
                }
            ],
            "responseId": sid,
        },
    ]


def test_gemini_streams_cut_by_the_damage_are_returned(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    """E106: Gemini streams, always open until the input ends, in a zstd log cut short."""
    data = lines({"k": f"g{i}", "event": e} for i in range(30) for e in gemini(f"g{i}"))
    path = write(tmp_path / "log.zst", COMPRESSORS["zstd"](data) + COMPRESSORS["zstd"](b"\n")[:-2])
    for jobs in (1, 2):
        got, error = read_all(batch, path, jobs=jobs)
        assert [(r.key, r.provider, r.status) for r in got] == [
            (f"g{i}", "gemini", "complete") for i in range(30)
        ]
        assert [messages(r) for r in got] == [
            aggregated(aggregate_module, gemini(f"g{i}")) for i in range(30)
        ]
        assert error == f"{path}: zstd stream is truncated after {len(data)} decompressed bytes"
