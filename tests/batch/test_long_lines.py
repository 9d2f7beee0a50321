"""A record line longer than the limit (``FASTMERGE_MAX_LINE_BYTES``, 1 GiB by default) is
never held whole: its input ends there with an error naming the file and line, after the
lines before it were read, as a damaged input ends (the ended streams returned first). Both
backends, every compression, a line cut into many reads, the limit's edge, a byte order
mark, the split step of ``fastmerge.dask``, the command."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.batch import COMPRESSORS, chat, wrap, write
from _support.fuzz import items

from fastmerge import cli
from fastmerge.errors import BatchError

OPTIONS = {"group_by": "stream_id", "event": "event"}
VARIABLE = "FASTMERGE_MAX_LINE_BYTES"


def log_with(long: bytes, at: int = 5) -> bytes:
    """Stream ``a`` (ended: its usage came) and the start of ``b``, with ``long`` as line
    ``at`` (1-based), and one more record of ``b`` after it."""
    records = [
        json.dumps(r).encode()
        for r in wrap([*(("a", e) for e in chat("a", ["x"])), ("b", chat("b", ["y"])[0])])
    ]
    records.insert(at - 1, long)
    records.append(json.dumps(wrap([("b", chat("b", ["y"])[1])])[0]).encode())
    return b"\n".join(records) + b"\n"


def record_of(size: int) -> bytes:
    """A record line of exactly ``size`` bytes (stream ``c``)."""
    head, tail = b'{"stream_id":"c","event":{"pad":"', b'"}}'
    return head + b"p" * (size - len(head) - len(tail)) + tail


def outcome(batch: ModuleType, path: str) -> tuple[list[Any], str | None]:
    got: list[Any] = []
    try:
        for result in batch.merge_logs(path, **OPTIONS):
            got.append((result.key, result.status))
    except BatchError as exc:
        return got, str(exc)
    return got, None


def message(path: str, line: int, limit: int) -> str:
    return (
        f"{path}:{line}: a line longer than {limit} bytes is not read, and the input ends "
        f"here; set {VARIABLE} to read longer lines"
    )


@pytest.mark.parametrize("compress", [None, *COMPRESSORS])
def test_a_line_past_the_limit_ends_the_input_after_the_lines_before_it(
    batch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compress: str | None
) -> None:
    monkeypatch.setenv(VARIABLE, "1000")
    path = write(tmp_path / "log.jsonl", log_with(record_of(1001)), compress)
    # stream a ended before the line: returned; b is open: not (as after damage)
    assert outcome(batch, path) == ([("a", "complete")], message(path, 5, 1000))
    path = write(tmp_path / "ok.jsonl", log_with(record_of(1000)), compress)
    assert outcome(batch, path) == (
        [("a", "complete"), ("c", "error"), ("b", "incomplete")],
        None,
    )


def test_the_default_limit_reads_long_lines(batch: ModuleType, tmp_path: Path) -> None:
    path = write(tmp_path / "log.jsonl", log_with(record_of(3 << 20)))
    assert outcome(batch, path) == ([("a", "complete"), ("c", "error"), ("b", "incomplete")], None)


@pytest.mark.parametrize(
    ("limit", "size"),
    [
        (2 << 20, (2 << 20) + 1),  # past the engine's block: carried over reads
        (3 << 20, 5 << 20),
        (1000, 5 << 20),  # many reads past the limit before its end
    ],
)
def test_a_long_line_across_reads(
    both: tuple[ModuleType, ModuleType],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    limit: int,
    size: int,
) -> None:
    rust, python = both
    monkeypatch.setenv(VARIABLE, str(limit))
    path = write(tmp_path / "log.jsonl", log_with(record_of(size), at=2))
    expected = items(python, [path], **OPTIONS)
    assert expected[-1] == ("raise", "BatchError", message(path, 2, limit))
    assert items(rust, [path], jobs=1, **OPTIONS) == expected
    assert items(rust, [path], jobs=2, **OPTIONS) == expected


@pytest.mark.parametrize(
    "ending",
    [b"", b"\n", b"\r\n"],
    ids=["at the end without a line end", "with one", "with a CR"],
)
def test_the_edge_of_the_limit(
    both: tuple[ModuleType, ModuleType],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    ending: bytes,
) -> None:
    """E108: the limit counts a line's bytes without its ``\n`` or ``\r\n``, and a byte order
    mark opening the input is not part of its first line."""
    rust, python = both
    line = b"\xef\xbb\xbf" + record_of(500) + ending
    for limit, bad in ((500, False), (499, True)):
        monkeypatch.setenv(VARIABLE, str(limit))
        path = write(tmp_path / f"log-{limit}.jsonl", line)
        expected = items(python, [path], **OPTIONS)
        assert (expected[-1][0] == "raise") is bad, expected
        assert items(rust, [path], **OPTIONS) == expected


@pytest.mark.parametrize("limit", [1000, 2 << 20])
def test_crlf_lines_at_the_limit_across_reads(
    both: tuple[ModuleType, ModuleType],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    limit: int,
) -> None:
    """E108: a log of CRLF lines, one of them exactly ``limit`` bytes before its ``\r\n``
    (past the engine's block at 2 MiB: carried over reads), is read whole; one byte more
    ends the input there."""
    rust, python = both
    monkeypatch.setenv(VARIABLE, str(limit))
    for size, bad in ((limit, False), (limit + 1, True)):
        data = log_with(record_of(size), at=2).replace(b"\n", b"\r\n")
        path = write(tmp_path / f"crlf-{size}.jsonl", data)
        expected = items(python, [path], **OPTIONS)
        assert (expected[-1] == ("raise", "BatchError", message(path, 2, limit))) is bad
        assert items(rust, [path], jobs=1, **OPTIONS) == expected
        assert items(rust, [path], jobs=2, **OPTIONS) == expected


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1e3", " 5", "5 ", "+5", "\u0661", str(2**64)])
def test_a_limit_that_is_not_a_number_of_bytes_is_an_option_error(
    batch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    path = write(tmp_path / "log.jsonl", log_with(record_of(100)))
    monkeypatch.setenv(VARIABLE, value)
    with pytest.raises(
        BatchError, match=f"^{VARIABLE} must be a whole number of bytes, 1 or more$"
    ):
        batch.merge_logs(path, **OPTIONS)
    monkeypatch.setenv(VARIABLE, str(2**64 - 1))
    assert len(list(batch.merge_logs(path, **OPTIONS))) == 3


def test_the_split_step_ends_at_the_line_too(
    both: tuple[ModuleType, ModuleType], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rust, python = both
    monkeypatch.setenv(VARIABLE, "1000")
    path = write(tmp_path / "log.jsonl", log_with(record_of(5000)))
    for module in (rust, python):
        with pytest.raises(BatchError) as caught:
            module.split_file(path, "stream_id", "event", buckets=2)
        assert str(caught.value) == message(path, 5, 1000)


def test_the_command_names_the_line(
    backend_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv(VARIABLE, "1000")
    path = write(tmp_path / "log.jsonl", log_with(record_of(5000)))
    out = tmp_path / "out.jsonl"
    assert cli.main(["batch", path, "--group-by", "stream_id", "--event", "event",
                     "--quiet", "-o", str(out)]) == 1  # fmt: skip
    assert capsys.readouterr().err == f"fastmerge: error: {message(path, 5, 1000)}\n"


@pytest.mark.parametrize("size", [5000, 3 << 20], ids=["within a read", "across reads"])
def test_a_long_line_cut_by_damage_is_the_long_line(
    both: tuple[ModuleType, ModuleType],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    size: int,
) -> None:
    # the line as far as it was read passes the limit: that is the error, whether the damage
    # came in the same read or later (gzip gives out what it decoded before the cut)
    rust, python = both
    monkeypatch.setenv(VARIABLE, "1000")
    long = record_of(size)
    data = log_with(long)
    data = data[: data.index(long) + len(long) + 1]  # the long line last
    packed = COMPRESSORS["gzip"](data)[:-20]  # cut inside it
    path = str(tmp_path / "log.jsonl.cut")
    Path(path).write_bytes(packed)
    expected = items(python, [path], **OPTIONS)
    assert expected[-1] == ("raise", "BatchError", message(path, 5, 1000))
    assert items(rust, [path], **OPTIONS) == expected
