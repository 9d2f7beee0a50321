"""The bytes of a batch input, on both backends: what may follow a compressed member (each
format's own rule: xz stream padding, null bytes after gzip as ``gzip -d`` reads them, nothing
else), a byte order mark's start that is no byte order mark, a line reader whose work is
linear in the line's length (the twin's, counted through an instrumented reader), and damage
inside a member decoded in the same steps on both backends (E106)."""

from __future__ import annotations

import lzma
import shutil
import struct
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import zstandard
from _support.batch import COMPRESSORS, chat, interleave, lines, wrap

from fastmerge._pure.batch import CHUNK, BatchCore
from fastmerge.errors import BatchError

OPTIONS = {"group_by": "stream_id", "event": "event"}


def records() -> bytes:
    return lines(wrap(interleave(("a", chat("a", ["x", "y"])), ("b", chat("b", ["1", "2"])))))


def outcome(batch: ModuleType, path: Path) -> tuple[list[Any], str | None]:
    """(key, status, content) of each result read, and the error that stopped the batch."""
    got: list[Any] = []
    try:
        for r in batch.merge_logs(str(path), errors="collect", **OPTIONS):
            got.append((r.key, r.status, None if r.message is None else r.message.content))
    except BatchError as exc:
        return got, str(exc)
    return got, None


def plain(batch: ModuleType, tmp_path: Path, data: bytes) -> tuple[list[Any], str | None]:
    """What the batch reads from ``data`` stored as it is."""
    path = tmp_path / "plain.jsonl"
    path.write_bytes(data)
    return outcome(batch, path)


def stored(tmp_path: Path, blob: bytes) -> Path:
    path = tmp_path / "log.bin"
    path.write_bytes(blob)
    return path


def damaged(path: Path, fmt: str, state: str, offset: int) -> str:
    return f"{path}: {fmt} stream is {state} after {offset} decompressed bytes"


# -- what may follow a member


@pytest.mark.parametrize("padding", [4, 8, 4 * CHUNK])
def test_xz_stream_padding_after_the_last_stream_is_read_as_the_end(
    batch: ModuleType, tmp_path: Path, padding: int
) -> None:
    data = records()
    path = stored(tmp_path, lzma.compress(data) + b"\0" * padding)
    assert outcome(batch, path) == plain(batch, tmp_path, data)


def test_xz_stream_padding_between_streams_is_read(batch: ModuleType, tmp_path: Path) -> None:
    data = records()
    cut = len(data) // 2
    blob = lzma.compress(data[:cut]) + b"\0" * 12 + lzma.compress(data[cut:]) + b"\0" * 4
    assert outcome(batch, stored(tmp_path, blob)) == plain(batch, tmp_path, data)


@pytest.mark.parametrize("padding", [1, 3, 5, 7])
@pytest.mark.parametrize("between", [False, True])
def test_xz_padding_not_a_multiple_of_four_is_corrupt(
    batch: ModuleType, tmp_path: Path, padding: int, between: bool
) -> None:
    data = records()
    blob = lzma.compress(data) + b"\0" * padding + (lzma.compress(data) if between else b"")
    path = stored(tmp_path, blob)
    got, error = outcome(batch, path)
    assert error == damaged(path, "xz", "corrupt", len(data))
    assert got == [r for r in plain(batch, tmp_path, data)[0] if r[1] == "complete"]


@pytest.mark.parametrize("zeros", [1, 10, 3 * CHUNK + 5])
def test_null_bytes_after_gzip_are_the_end(batch: ModuleType, tmp_path: Path, zeros: int) -> None:
    data = records()
    blob = COMPRESSORS["gzip"](data) + b"\0" * zeros
    path = stored(tmp_path, blob)
    if shutil.which("gzip"):
        # the format's reference tool reads them so: the text, exit status 0, no warning
        done = subprocess.run(["gzip", "-dc", str(path)], capture_output=True, check=False)
        assert (done.returncode, done.stdout, done.stderr) == (0, data, b"")
    assert outcome(batch, path) == plain(batch, tmp_path, data)


def test_null_bytes_between_gzip_members_are_corrupt(batch: ModuleType, tmp_path: Path) -> None:
    data = records()
    blob = COMPRESSORS["gzip"](data) + b"\0\0" + COMPRESSORS["gzip"](data)
    path = stored(tmp_path, blob)
    assert outcome(batch, path)[1] == damaged(path, "gzip", "corrupt", len(data))


@pytest.mark.parametrize("fmt", ["zstd", "bzip2"])
def test_null_bytes_after_zstd_or_bzip2_are_corrupt(
    batch: ModuleType, tmp_path: Path, fmt: str
) -> None:
    data = records()
    path = stored(tmp_path, COMPRESSORS[fmt](data) + b"\0" * 4)
    assert outcome(batch, path)[1] == damaged(path, fmt, "corrupt", len(data))


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
@pytest.mark.parametrize("garbage", [b"garbage!", b"garbage! garbage! garbage!", b"\x01"])
def test_trailing_bytes_that_start_no_member_are_corrupt(
    batch: ModuleType, tmp_path: Path, fmt: str, garbage: bytes
) -> None:
    data = records()
    path = stored(tmp_path, COMPRESSORS[fmt](data) + garbage)
    got, error = outcome(batch, path)
    # short or long, the bytes are no member: corrupt, never "truncated"
    assert error == damaged(path, fmt, "corrupt", len(data))
    assert got == [r for r in plain(batch, tmp_path, data)[0] if r[1] == "complete"]


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_a_member_cut_inside_its_magic_is_truncated(
    batch: ModuleType, tmp_path: Path, fmt: str
) -> None:
    data = records()
    member = COMPRESSORS[fmt](b"")
    for n in range(1, 4):
        path = stored(tmp_path, COMPRESSORS[fmt](data) + member[:n])
        assert outcome(batch, path)[1] == damaged(path, fmt, "truncated", len(data)), n


def test_a_gzip_header_with_another_method_or_reserved_flags_is_corrupt(
    batch: ModuleType, tmp_path: Path
) -> None:
    data = records()
    for header in (b"\x1f\x8b\x09\x00", b"\x1f\x8b\x08\xe0"):
        path = stored(tmp_path, COMPRESSORS["gzip"](data) + header)
        assert outcome(batch, path)[1] == damaged(path, "gzip", "corrupt", len(data)), header


@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_concatenated_members_with_empty_ones_are_read_whole(
    batch: ModuleType, tmp_path: Path, fmt: str
) -> None:
    data = records()
    cut = len(data) // 3
    pack = COMPRESSORS[fmt]
    blob = pack(b"") + pack(data[:cut]) + pack(b"") + pack(b"") + pack(data[cut:]) + pack(b"")
    assert outcome(batch, stored(tmp_path, blob)) == plain(batch, tmp_path, data)


def test_a_zstd_skippable_frame_between_frames_is_skipped(
    batch: ModuleType, tmp_path: Path
) -> None:
    data = records()
    cut = len(data) // 2
    skippable = struct.pack("<II", 0x184D2A5A, 5) + b"notes"
    blob = COMPRESSORS["zstd"](data[:cut]) + skippable + COMPRESSORS["zstd"](data[cut:])
    assert outcome(batch, stored(tmp_path, blob)) == plain(batch, tmp_path, data)


# -- a byte order mark's start


@pytest.mark.parametrize("start", [b"\xef", b"\xef\xbb"])
@pytest.mark.parametrize("fmt", [None, "gzip"])
def test_the_start_of_a_byte_order_mark_is_a_bad_line(
    batch: ModuleType, tmp_path: Path, start: bytes, fmt: str | None
) -> None:
    # the same bytes on a later line give the reason the first line must give
    later = tmp_path / "later.jsonl"
    later.write_bytes(b"\n" + start)
    [bad] = _bad_lines(batch, later)
    reason = bad.removeprefix(f"{later}:2: ")
    path = stored(tmp_path, start if fmt is None else COMPRESSORS[fmt](start))
    assert _bad_lines(batch, path) == [f"{path}:1: {reason}"]


def test_a_whole_byte_order_mark_is_not_part_of_the_first_line(
    batch: ModuleType, tmp_path: Path
) -> None:
    data = records()
    path = stored(tmp_path, b"\xef\xbb\xbf" + data)
    assert outcome(batch, path) == plain(batch, tmp_path, data)


def _bad_lines(batch: ModuleType, path: Path) -> list[str]:
    run = batch.merge_logs(str(path), errors="collect", **OPTIONS)
    assert list(run) == []
    return list(run.bad_lines)


# -- long lines


class _Counted(bytes):
    """A chunk of decompressed input that counts the bytes of every object made from it
    (concatenation, slices, splits): the work a line reader spends copying."""

    made = 0

    def __add__(self, other: Any) -> bytes:
        _Counted.made += len(self) + len(other)
        return bytes(self) + bytes(other)

    def __radd__(self, other: Any) -> bytes:
        _Counted.made += len(self) + len(other)
        return bytes(other) + bytes(self)

    def __getitem__(self, index: Any) -> Any:
        part = bytes(self)[index]
        if isinstance(part, bytes):
            _Counted.made += len(part)
        return part

    def split(self, *args: Any, **kwargs: Any) -> list[bytes]:
        _Counted.made += len(self)
        return bytes(self).split(*args, **kwargs)


def _copied(chunks: int) -> int:
    """The bytes the twin's line reader copies for one line of ``chunks`` chunks."""
    core = BatchCore(["-"], **OPTIONS)
    pieces = [_Counted(b"x" * CHUNK) for _ in range(chunks)] + [_Counted(b"\n{}\n")]
    core._decoded = lambda path: iter(pieces)  # type: ignore[method-assign]
    _Counted.made = 0
    got = list(core._lines("-"))
    assert [(n, len(line)) for n, line in got] == [(1, chunks * CHUNK), (2, 2)]
    return _Counted.made


@pytest.mark.single_run
def test_the_twins_line_reader_copies_a_long_line_a_bounded_number_of_times() -> None:
    # linear: twice the line, at most twice the copies (a quadratic reader copies 4x)
    small, large = _copied(64), _copied(128)
    assert large <= 2 * small + 4 * CHUNK
    assert small <= 4 * 64 * CHUNK


def test_a_line_of_many_chunks_is_read_whole(batch: ModuleType, tmp_path: Path) -> None:
    data = records().split(b"\n")
    padded = data[0][:-1] + b', "pad": "' + b"p" * (40 * CHUNK) + b'"}'
    text = b"\n".join([padded, *data[1:]])
    for fmt in (None, "gzip"):
        path = stored(tmp_path, text if fmt is None else COMPRESSORS[fmt](text))
        assert outcome(batch, path) == plain(batch, tmp_path, text), fmt


# -- damage inside a member


def _items(module: ModuleType, path: Path, jobs: int = 1) -> tuple[list[Any], str | None]:
    """Every item of a core on ``path`` (with its place), and the error that stopped it."""
    core = module.BatchCore([str(path)], "k", "e", positions=True, jobs=jobs)
    got = []
    try:
        while True:
            got.append(core.next())
    except StopIteration:
        return got, None
    except BatchError as exc:
        return got, str(exc)


@pytest.mark.differential
def test_a_checksum_error_names_the_same_offset_on_both_backends(
    both: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    """E106: a member whose check fails at its end: the same items and the same offset on
    both backends (the step that holds the check gives nothing)."""
    rust, python = both
    checked = {**COMPRESSORS, "zstd": zstandard.ZstdCompressor(write_checksum=True).compress}
    for fmt in sorted(COMPRESSORS):
        blob = bytearray(checked[fmt](b'{"k":"a","e":{}}\n'))
        at = {"gzip": -8, "zstd": -1, "bzip2": -3, "xz": -13}[fmt]
        blob[at] ^= 1  # the member's check: every byte decodes, the check fails at the end
        path = stored(tmp_path, bytes(blob))
        got = _items(rust, path)
        assert got == _items(python, path), fmt
        assert got == ([], damaged(path, fmt, "corrupt", 0)), fmt


def _garbled(data: bytes, fmt: str, where: float, count: int = 16) -> bytes:
    """``data`` compressed in ``fmt`` in two members, ``count`` bytes flipped in the second
    member ``where`` of the way through it."""
    half = data.rfind(b"\n", 0, len(data) // 2) + 1
    second = bytearray(COMPRESSORS[fmt](data[half:]))
    at = int(len(second) * where)
    for i in range(at, min(at + count, len(second))):
        second[i] ^= 0xFF
    return COMPRESSORS[fmt](data[:half]) + bytes(second)


@pytest.mark.differential
@pytest.mark.parametrize("fmt", sorted(COMPRESSORS))
def test_bytes_flipped_inside_a_member_decode_alike_on_both_backends(
    both: tuple[ModuleType, ModuleType], tmp_path: Path, fmt: str
) -> None:
    """E106: 16 bytes flipped inside a member: both backends decode it in the same steps, so
    they return the same streams (every one read before the damage) and name the same
    offset, with one job or two."""
    rust, python = both
    data = lines(
        {"k": f"s{i}", "e": e} for i in range(400) for e in chat(f"s{i}", [f"w{i}", "x" * 40])
    )
    for where in (0.1, 0.5, 0.9):
        path = stored(tmp_path, _garbled(data, fmt, where))
        got = _items(python, path)
        assert got == _items(rust, path), (fmt, where)
        assert got == _items(rust, path, jobs=2), (fmt, where)
        items, error = got
        if error is None:  # zstd's frames carry no check: flipped text may decode
            assert fmt == "zstd", where
            continue
        offset = int(error.rsplit(" after ", 1)[1].split()[0])
        # at least the first member's streams, each read up to the damage
        assert offset >= data.rfind(b"\n", 0, len(data) // 2) + 1, (fmt, where)
        assert len(items) >= 200 and error == damaged(path, fmt, "corrupt", offset)
