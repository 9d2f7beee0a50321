"""``fastmerge.batch.merge_logs`` on both backends: its inputs. Compression read by magic
bytes (and damaged), one stream per file, directories, globs (links and cycles), missing
files, events that are not objects, and standard input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.batch import (
    COMPRESSORS,
    TWO,
    batch_fixture,  # noqa: F401 (the ``batch`` fixture)
    chat,
    decodable,
    lines,
    run,
    summary,
    two_streams,
    wrap,
    write,
)
from conftest import PACKAGE_ROOT

from fastmerge.errors import BatchError

# -- inputs


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_compression_is_read_by_magic_bytes_not_by_name(
    batch: ModuleType, tmp_path: Path, fmt: str
) -> None:
    data = lines(two_streams())
    cut = len(data) // 3
    # two members / frames one after another, under a name that says nothing
    packed = COMPRESSORS[fmt](data[:cut]) + COMPRESSORS[fmt](data[cut:])
    path = tmp_path / "log.txt"
    path.write_bytes(packed)
    assert run(batch, str(path)) == TWO


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_a_truncated_compressed_file_is_an_error_naming_it(
    batch: ModuleType, tmp_path: Path, fmt: str
) -> None:
    packed = COMPRESSORS[fmt](lines(two_streams()))
    path = tmp_path / "log.bin"
    path.write_bytes(packed[: len(packed) - 12])
    with pytest.raises(BatchError) as info:
        run(batch, str(path))
    offset = decodable(fmt, packed[: len(packed) - 12])
    assert str(info.value) == f"{path}: {fmt} stream is truncated after {offset} decompressed bytes"


def test_a_corrupt_gzip_file_is_an_error(batch: ModuleType, tmp_path: Path) -> None:
    packed = bytearray(COMPRESSORS["gzip"](lines(two_streams())))
    packed[20:40] = b"\xff" * 20
    path = tmp_path / "log.gz"
    path.write_bytes(bytes(packed))
    with pytest.raises(BatchError) as info:
        run(batch, str(path))
    # the header's damage is met before anything decodes
    assert str(info.value) == f"{path}: gzip stream is corrupt after 0 decompressed bytes"


def test_one_stream_per_file_is_the_default(batch: ModuleType, tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", lines(chat("a", ["x"])))
    sse = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in chat("b", ["y"]))
    b = write(tmp_path / "b.sse", sse + b"data: [DONE]\n\n", "zstd")
    assert summary(batch.merge_logs([b, a])) == [
        (b, "openai-chat", "complete", "y"),
        (a, "openai-chat", "complete", "x"),
    ]


def test_directories_are_read_recursively_sorted_without_hidden_files(
    batch: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / ".git").mkdir()
    write(tmp_path / "d" / "sub" / "a.jsonl", lines(chat("s", ["s"])))
    write(tmp_path / "d" / "b.jsonl", lines(chat("b", ["b"])))
    write(tmp_path / "d" / "a.jsonl", lines(chat("a", ["a"])))
    write(tmp_path / "d" / ".hidden.jsonl", b"not read")
    write(tmp_path / "d" / ".git" / "x.jsonl", b"not read")
    d = str(tmp_path / "d")
    assert batch.expand_paths(d) == [
        os.path.join(d, "a.jsonl"),
        os.path.join(d, "b.jsonl"),
        os.path.join(d, "sub", "a.jsonl"),
    ]
    assert [r[3] for r in summary(batch.merge_logs(d))] == ["a", "b", "s"]


def test_globs_expand_sorted_and_paths_keep_their_order(batch: ModuleType, tmp_path: Path) -> None:
    for name in ("c", "a", "b"):
        write(tmp_path / f"{name}.jsonl", lines(chat(name, [name])))
    write(tmp_path / "z.log", lines(chat("z", ["z"])))
    got = summary(batch.merge_logs([str(tmp_path / "z.log"), str(tmp_path / "*.jsonl")]))
    assert [r[3] for r in got] == ["z", "a", "b", "c"]


def test_a_recursive_glob_reads_each_file_once_through_link_cycles(
    batch: ModuleType, tmp_path: Path
) -> None:
    """``**`` follows links into directories, as ``glob`` does, but round a cycle once: two
    cycles made ``glob`` walk billions of paths, one listed each file 41 times over. A file
    reached a second way is read once, the other way reported as skipped."""
    top = tmp_path / "logs"
    (top / "a" / "b").mkdir(parents=True)
    (top / "c").mkdir()
    write(top / "a" / "x.jsonl", lines(chat("x", ["x"])))
    write(top / "a" / "b" / "y.jsonl", lines(chat("y", ["y"])))
    write(top / "a" / ".hidden.jsonl", b"not read")
    (top / "a" / "b" / "up").symlink_to("..")  # a cycle
    (top / "a" / "b" / "self").symlink_to(".")  # another
    (top / "c" / "to-a").symlink_to("../a")  # a second way to a's files
    skipped: list[str] = []
    pattern = str(top / "**" / "*.jsonl")
    assert batch.expand_paths(pattern, skipped) == [
        str(top / "a" / "b" / "y.jsonl"),
        str(top / "a" / "x.jsonl"),
    ]
    assert skipped == [
        f"{top / 'c' / 'to-a' / 'x.jsonl'}: not read: the same file as {top / 'a' / 'x.jsonl'}",
        f"{top / 'c' / 'to-a' / 'b' / 'y.jsonl'}: not read: the same file as "
        f"{top / 'a' / 'b' / 'y.jsonl'}",
    ]
    run_ = batch.merge_logs(pattern)
    assert [r[3] for r in summary(run_)] == ["y", "x"]
    assert len(run_.skipped) == 2
    # a trailing `**` matches files too; patterns without `**` are glob's own
    assert batch.expand_paths(str(top / "a" / "**")) == [
        str(top / "a" / "b" / "y.jsonl"),
        str(top / "a" / "x.jsonl"),
    ]
    assert batch.expand_paths(str(top / "a" / "*" / "*.jsonl")) == [
        str(top / "a" / "b" / "y.jsonl")
    ]


def test_a_directory_without_files_and_a_glob_without_matches_are_errors(
    batch: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(BatchError, match=f"^{tmp_path}/empty: the directory holds no file$"):
        batch.merge_logs(str(tmp_path / "empty"))
    with pytest.raises(BatchError, match=r"^.*/\*\.nope: no file matches the pattern$"):
        batch.merge_logs(str(tmp_path / "*.nope"))


def test_a_missing_file_or_a_directory_is_an_error_before_anything_is_read(
    batch: ModuleType, tmp_path: Path
) -> None:
    good = write(tmp_path / "a.jsonl", lines(chat("a", ["x"])))
    missing = str(tmp_path / "missing.jsonl")
    with pytest.raises(BatchError) as info:
        batch.merge_logs([good, missing])
    assert str(info.value) == f"{missing}: No such file or directory"
    with pytest.raises(BatchError) as info:
        batch.run._Core([good, str(tmp_path)])  # the core reads each path as a file
    assert str(info.value) == f"{tmp_path}: Is a directory"


def test_a_null_event_is_a_bad_line_and_other_values_unreadable_events(
    batch: ModuleType, tmp_path: Path
) -> None:
    a = chat("a", ["x"])
    odd: list[Any] = [None, [1], 7, True]
    records = wrap([("a", a[0]), *(("a", v) for v in odd), *(("a", e) for e in a[1:])])
    path = write(tmp_path / "log.jsonl", lines(records))
    run_ = batch.merge_logs(path, group_by="stream_id", event="event", errors="collect")
    (result,) = run_
    assert run_.bad_lines == [f"{path}:2: no event at event"]
    assert (result.status, result.message.content) == ("complete", "x")
    detail = "event {}: an event must be a JSON object, not {}"
    assert result.anomalies == [
        {"code": "unreadable_event", "detail": detail.format(n, kind)}
        for n, kind in ((2, "array"), (3, "number"), (4, "boolean"))
    ]


def test_stdin_is_dash(backend_name: str, tmp_path: Path) -> None:
    code = (
        "from fastmerge import batch\n"
        "for r in batch.merge_logs('-', group_by='stream_id', event='event'):\n"
        "    print(r.key, r.status, r.message.content)\n"
    )
    env = {**os.environ, "FASTMERGE_BACKEND": backend_name, "PYTHONPATH": PACKAGE_ROOT}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=COMPRESSORS["xz"](lines(two_streams())),
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert proc.stderr == b""
    assert proc.stdout == b"a complete xyz\nb complete 1234\n"
