"""``split_file`` (the split step of ``fastmerge.dask``) and ``BatchCore(positions=True)``, on
both backends (fixture ``backend_module``), each compared with the twin (``conftest.PYTHON``,
the specification) and with what the batch itself reads: the same fragments (lines, numbers,
buckets by ``zlib.crc32`` of the key the batch reads) and the same places, on plain,
gzip and zstd inputs, bad lines, records without a key, key reuse and streams that cross
files; the same exceptions for bad options and inputs."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.batch import chat, drain, lines, wrap, write
from conftest import PYTHON, REQUESTED, RUST
from hypothesis import given, settings
from hypothesis import strategies as st

from fastmerge.errors import BatchError

WRAPPER = {"group_by": "stream_id", "event": "event"}


def plain(fragments: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Fragments with their arrays as lists (comparable across backends)."""
    return [(bucket, data, list(numbers)) for bucket, data, numbers in fragments]


def noisy_log() -> bytes:
    """Wrapper records: two interleaved streams, one key reused after its ``[DONE]``, numeric
    keys (one beyond 64 bits), a lone ``[DONE]``, bad lines of every kind, blank and CRLF lines,
    a stream still open at the end; opened by a byte order mark."""
    a, b = chat("a", ["x", "y"]), chat("b", ["z"])
    records: list[Any] = [
        *wrap([("k1", a[0]), ("k2", b[0]), ("k1", a[1])]),
        b"not json",
        b'{"stream_id": "\xff", "event": {}}',  # not UTF-8
        b"[1, 2]",  # not an object
        {"stream_id": None, "event": {}},  # no key
        {"stream_id": [1], "event": {}},  # a key of the wrong kind
        {"stream_id": "k3"},  # no event
        b"",
        b"   \r",
        *wrap([("k1", e) for e in a[2:]]),
        *wrap([("k1", "[DONE]"), ("k1", " [DONE]\n"), ("k2", b[1])]),
        *wrap([("k1", e) for e in chat("again", ["w"])]),  # k1 reused
        *wrap([(7, e) for e in chat("seven", ["n"])]),
        *wrap([(10**22, e) for e in chat("big", ["m"])]),
        *wrap([(1.5, e) for e in chat("float", ["f"])]),
        *wrap([("k2", e) for e in b[2:]]),
        *wrap([("esc\u00e9", "data: {}"), ("open", chat("o", ["cut"], usage=False)[0])]),
    ]
    return b"\xef\xbb\xbf" + lines(records).replace(b'"k3"}\n', b'"k3"}\r\n')


@pytest.mark.parametrize("compress", [None, "gzip", "zstd"])
@pytest.mark.parametrize("buckets", [1, 3, 8])
def test_split_gives_the_twins_fragments_of_what_the_batch_reads(
    backend_module: ModuleType, tmp_path: Path, compress: str | None, buckets: int
) -> None:
    data = noisy_log()
    path = write(tmp_path / "log.jsonl", data, compress)
    total, parts = backend_module.split_file(path, "stream_id", "event", buckets=buckets)
    got = plain(parts)
    twin_total, twin_parts = PYTHON.split_file(path, "stream_id", "event", buckets=buckets)
    assert (total, got) == (twin_total, plain(twin_parts))
    assert total == data.count(b"\n") + 1  # the input's lines, as the batch counts them
    assert [bucket for bucket, *_ in got] == sorted({bucket for bucket, *_ in got})
    # every non-blank line once, numbered as the batch numbers it (the mark dropped), at its
    # line in its bucket's text, every other line of which is blank
    text = data[3:].split(b"\n")
    records = []
    for _, joined, numbers, *_ in got:
        rows = joined.split(b"\n")
        assert len(rows) == numbers[-1]
        records += [(number, rows[number - 1]) for number in numbers]
        assert sum(map(len, rows)) == sum(len(rows[n - 1]) for n in numbers)
    expected = [(i + 1, line) for i, line in enumerate(text) if line.strip(b" \t\r")]
    assert sorted(records) == expected
    # each record in the bucket of its key as the batch reads it; the bad lines the batch
    # reports (no key) each in one bucket
    core = PYTHON.BatchCore([path], **WRAPPER)
    bad = {item[2] for item in drain(PYTHON.BatchCore([path], **WRAPPER)) if item[0] == "bad"}
    assert len(bad) == 6
    keys, bad_placed = set(), []
    for bucket, joined, numbers in got:
        rows = joined.split(b"\n")
        for number in numbers:
            found = core._record(rows[number - 1])
            if isinstance(found, str):
                bad_placed.append(number)
            else:
                assert zlib.crc32(found[0].encode()) % buckets == bucket
                keys.add(found[0])
    assert sorted(bad_placed) == sorted(bad)
    assert keys == {"k1", "k2", "7", "1e+22", "1.5", "esc\u00e9", "open"}


#: Lines the light scan could read otherwise than the twin's: values it passes over that are
#: not JSON (a bad literal, escape, number or control character), a key with a control
#: character, text after the record, mismatched brackets, an event that is not JSON after a
#: key the scan cannot read, a name of the path written with a ``\u00`` escape later on.
HOSTILE = [
    b'{"x": tru, "stream_id": "a", "event": {}}',
    b'{"x": "\\q", "stream_id": "a", "event": {}}',
    b'{"x": 01, "stream_id": "a", "event": {}}',
    b'{"x": "a\x01b", "stream_id": "a", "event": {}}',
    b'{"stream_id": "a\x01", "event": {}}',
    b'{"stream_id": "a", "event": {}} trailing',
    b'{"stream_id": "a", "event": {]}',
    b'{"stream_id": "a\\\\\\"", "x": [], "event": {"choices":\x01[]}}',
    b'{"stream_id": 7, "event": {"choices" x []}}',
    b'{"stream_id": "a", "event": {}, "stream\\u005fid": "b"}',
    b'{"x": ' + b"[" * 101 + b"]" * 101 + b', "stream_id": "a", "event": {}}',
    b'{"meta": {"stream_id": "b"}, "stream_id": "c", "event": {"x": "\\u00"}}',
]


def _line(members: list[tuple[str, str]], spaces: str, mutation: tuple[int, int] | None) -> bytes:
    """A record line of ``members`` (names and their JSON texts), one byte replaced."""
    line = ("{" + ",".join(f'"{n}"{spaces}:{spaces}{v}' for n, v in members) + "}").encode()
    if mutation is not None:
        at, byte = mutation
        at %= len(line)
        line = line[:at] + bytes([byte]) + line[at + 1 :]
    return line


_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["a", 'a"b', "\\", "é"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["stream_id", "x", "event"]), inner, max_size=3)
    ),
    max_leaves=6,
).map(lambda v: json.dumps(v, ensure_ascii=False))
_MEMBERS = st.lists(
    st.tuples(
        st.sampled_from(["stream_id", "event", "meta", "x", "stream\\u005fid"]),
        st.one_of(
            st.sampled_from(['"a"', '"b\\u00e9"', '"\\u2028"', "7", "[1]", '"a\\\\\\""']),
            st.sampled_from(['{"stream_id": "a"}', '{"stream_id": "c"}', "{}", '"[DONE]"']),
            _VALUE,
        ),
    ),
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            _MEMBERS,
            st.sampled_from(["", " ", "\t"]),
            st.none() | st.tuples(st.integers(0, 200), st.sampled_from(b'"\\{}[],: x\x01\xff')),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_every_line_lands_in_the_twins_bucket(
    tmp_path_factory: pytest.TempPathFactory, drawn: list[Any]
) -> None:
    """``split_file`` and ``BatchCore(bucket=)`` put each line, good or bad, where the twin
    does: the light scan and the record reader's verdict are the twin's step for step."""
    if RUST is None:
        pytest.skip(f"rust backend not under test (FASTMERGE_BACKEND={REQUESTED})")
    rust = RUST
    path = tmp_path_factory.mktemp("hostile") / "log.jsonl"
    path.write_bytes(b"\n".join([*HOSTILE, *(_line(*d) for d in drawn)]) + b"\n")
    for group_by in ("stream_id", "meta.stream_id"):
        got = rust.split_file(str(path), group_by, "event", buckets=16)
        twin = PYTHON.split_file(str(path), group_by, "event", buckets=16)
        assert (got[0], plain(got[1])) == (twin[0], plain(twin[1]))
        for bucket, *_ in plain(twin[1])[:2]:
            options = {"group_by": group_by, "event": "event", "bucket": (bucket, 16)}
            assert drain(rust.BatchCore([str(path)], **options)) == drain(
                PYTHON.BatchCore([str(path)], **options)
            )


def test_one_bucket_holds_every_line_whatever_the_options(
    backend_module: ModuleType, tmp_path: Path
) -> None:
    """Only the key decides a line's bucket: key reuse, ``[DONE]`` lines, a bad line and
    options that make records bad (an ``order_by`` they lack) all stay, at their lines."""
    a = chat("a", ["x"])
    log = lines(
        [
            *wrap([("one", a[0]), ("two", a[0]), ("one", "[DONE]")]),
            b"nope",
            *wrap([("one", a[0]), ("two", "[DONE]")]),
        ]
    )
    path = write(tmp_path / "log.jsonl", log)
    whole = (0, log.rstrip(b"\n"), [1, 2, 3, 4, 5, 6])
    for options in [("event",), (), ("event", "seq"), ("event", "nothing")]:
        (fragment,) = plain(backend_module.split_file(path, "stream_id", *options)[1])
        assert fragment == whole


def test_a_stream_crossing_files_lands_in_one_bucket(
    backend_module: ModuleType, tmp_path: Path
) -> None:
    records = wrap([(f"s{i % 5}", e) for i, e in enumerate(chat("c", ["a"] * 20))])
    first = write(tmp_path / "a.jsonl", lines(records[:11]))
    second = write(tmp_path / "b.jsonl.gz", lines(records[11:]), "gzip")
    buckets: dict[str, set[int]] = {}
    for path in (first, second):
        for bucket, joined, numbers in backend_module.split_file(
            path, "stream_id", "event", None, 4
        )[1]:
            rows = joined.split(b"\n")
            for number in numbers:
                buckets.setdefault(json.loads(rows[number - 1])["stream_id"], set()).add(bucket)
    assert buckets == {f"s{i}": {zlib.crc32(f"s{i}".encode()) % 4} for i in range(5)}


def test_an_empty_input_has_no_fragment(backend_module: ModuleType, tmp_path: Path) -> None:
    """... and its lines all the same (they count in the distances between records)."""
    for name, data, total in (
        ("empty", b"", 1),
        ("blank", b"\n \n\r\n", 4),
        ("bom", b"\xef\xbb\xbf", 1),
    ):
        path = write(tmp_path / name, data)
        assert backend_module.split_file(path, "stream_id", buckets=2) == (total, [])


def _error(call: Any, *args: Any, **kwargs: Any) -> tuple[type[BaseException], str]:
    """The type and message of what ``call(*args, **kwargs)`` raises."""
    with pytest.raises(Exception) as caught:
        call(*args, **kwargs)
    return caught.type, str(caught.value)


def test_bad_options_and_inputs_raise_the_twins_errors(
    backend_module: ModuleType, tmp_path: Path
) -> None:
    good = write(tmp_path / "log.jsonl", lines(wrap([("k", e) for e in chat("k", ["a"])])))
    cut = write(tmp_path / "cut.gz", lines([{"stream_id": "k"}] * 500), "gzip")
    Path(cut).write_bytes(Path(cut).read_bytes()[:-30])
    broken = write(tmp_path / "broken.zst", b"\x28\xb5\x2f\xfd" + b"garbage" * 10)
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((good, "stream_id"), {"buckets": 0}),
        ((good, "stream_id"), {"buckets": -3}),
        ((good, "stream_id"), {"buckets": True}),
        ((good, "stream_id"), {"buckets": 2.0}),
        ((good, "stream_id"), {"buckets": -(2**200)}),
        ((good, "stream_id"), {"buckets": _Count(2)}),
        ((1, "stream_id"), {}),
        ((good, None), {}),
        ((good, "stream_id", 3), {}),
        ((good, "a..b"), {}),
        ((good, "/a~2"), {}),
        ((good, "file"), {}),
        ((good, "auto"), {}),
        ((good, "auto", "event"), {}),
        ((str(tmp_path / "missing"), "stream_id"), {}),
        ((str(tmp_path), "stream_id"), {}),
        ((cut, "stream_id"), {}),
        ((broken, "stream_id"), {}),
    ]
    for args, kwargs in cases:
        expected = _error(PYTHON.split_file, *args, **kwargs)
        assert expected[0] in (TypeError, BatchError), (args, kwargs, expected)
        assert _error(backend_module.split_file, *args, **kwargs) == expected, args


class _Count(int):
    """An int subclass: refused where a count is asked for, on both backends."""


@pytest.mark.parametrize("buckets", [2**50, 2**64 - 1, 2**70, 2**200])
def test_any_number_of_buckets_splits_as_the_twin_does(
    backend_module: ModuleType, tmp_path: Path, buckets: int
) -> None:
    """Buckets beyond any count: each line in the bucket of its key's CRC-32 (below them
    all), no slot made for the empty ones (the engine allocated one each, and aborted)."""
    path = write(tmp_path / "log.jsonl", noisy_log())
    total, parts = backend_module.split_file(path, "stream_id", "event", buckets=buckets)
    twin_total, twin_parts = PYTHON.split_file(path, "stream_id", "event", buckets=buckets)
    assert (total, plain(parts)) == (twin_total, plain(twin_parts))
    assert {bucket for bucket, *_ in plain(parts)} >= {zlib.crc32(b"k1"), zlib.crc32(b"open")}


# ---------------------------------------------------------------------------------------------
# positions


def places(module: ModuleType, paths: list[str], **options: Any) -> list[tuple[Any, ...]]:
    """Every item with its place, checked against the same core without positions."""
    placed = drain(module.BatchCore(paths, positions=True, **options))
    assert [item[:-1] for item in placed] == drain(module.BatchCore(paths, **options))
    return [(item[0], item[1], tuple(item[-1])) for item in placed]


def test_each_item_carries_the_record_that_decided_it(
    backend_module: ModuleType, tmp_path: Path
) -> None:
    a, b = chat("a", ["x", "y"]), chat("b", ["z"])  # 5 and 4 events; usage ends them
    first = write(
        tmp_path / "1.jsonl",
        lines(
            [
                *wrap([("A", a[0]), ("B", b[0]), ("A", a[1])]),  # lines 1-3
                b"oops",  # 4: bad
                *wrap([("A", e) for e in a[2:]]),  # 5-7: A ends at 7
                *wrap([("A", "[DONE]")]),  # 8: a lone [DONE], no stream
                *wrap([("B", b[1])]),  # 9
            ]
        ),
    )
    second = write(
        tmp_path / "2.jsonl.zst",
        b"\n"
        + lines(
            [
                *wrap([("B", e) for e in b[2:]]),  # lines 2-3: B ends at 3 (file 1)
                # 4-5: A reused by another response (another id), then still open
                *wrap([("A", chat("a2", ["w"])[0]), ("open", a[0])]),
                *wrap([("C", "[DONE]")]),  # 6: [DONE] with no stream
            ]
        ),
        "zstd",
    )
    got = places(backend_module, [first, second], **WRAPPER)
    assert got == [
        ("bad", first, (0, 0, 4)),
        ("stream", "A", (0, 0, 7)),
        ("stream", "B", (0, 1, 3)),
        ("stream", "A", (1, 1, 4)),
        ("stream", "open", (1, 1, 5)),
    ]
    assert got == places(PYTHON, [first, second], **WRAPPER)
    # order_by: every stream ends at the end of the input, placed at its first record
    ordered = places(backend_module, [first, second], order_by="seq", **WRAPPER)
    assert ordered == places(PYTHON, [first, second], order_by="seq", **WRAPPER)
    assert [p for _, _, p in ordered] == [(0, 0, 4), (1, 0, 1), (1, 0, 2), (1, 1, 5)]


def test_positions_of_files_read_as_one_stream_and_bad_arguments(
    backend_module: ModuleType, tmp_path: Path
) -> None:
    paths = [write(tmp_path / f"{i}.jsonl", lines(chat(f"s{i}", ["a"]))) for i in range(3)]
    got = places(backend_module, paths)
    assert got == places(PYTHON, paths)
    assert [p for _, _, p in got] == [(0, 0, 0), (0, 1, 0), (0, 2, 0)]
    for wrong in (1, None, "yes"):
        expected = _error(PYTHON.BatchCore, paths, positions=wrong)
        assert expected[0] is TypeError
        assert _error(backend_module.BatchCore, paths, positions=wrong) == expected
