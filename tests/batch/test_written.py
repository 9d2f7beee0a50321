"""Records as written (``Batch.written``, what ``fastmerge batch`` writes): on the Rust backend
the core serializes each stream's record itself (``BatchCore.next(record=...)``), and its bytes
and Parquet columns must be exactly what ``json_line(StreamResult.record())`` and the Python
row give, on both backends: strings with every escape, floats of every form, logprobs kept as
their JSON text (repeated keys, escapes, numbers past 64 bits), several choices, anomalies,
streams that cannot be merged, the whole corpus of recorded streams."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import os
import random
import struct
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.batch import batch_module, chat, chunk, dumps_line, interleave, lines, wrap, write

import fastmerge
from fastmerge import cli

CORPUS = Path(__file__).resolve().parents[1] / "corpus"

#: Text with every kind of character ``json.dumps`` escapes, and some it does not.
HARD = 'q"b\\s/n\nr\rt\tb\bf\fc\x01\x1f d\x7f é \u2028 \U0001f600 \u00a0 end'


@pytest.fixture
def batch(backend_name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``fastmerge.batch`` on this test's backend (the command imports it when run)."""
    module = batch_module(backend_name)
    monkeypatch.setattr(fastmerge, "batch", module, raising=False)
    return module


def expected(batch: ModuleType, paths: Any, **options: Any) -> list[tuple[bytes, tuple[Any, ...]]]:
    """Each result's line and Parquet row, serialized in Python from its messages."""
    out = []
    for result in batch.merge_logs(paths, **options):
        record = result.record()
        out.append((dumps_line(record), batch.results._row(result, record)))
    return out


def written(
    batch: ModuleType, backend_name: str, paths: Any, **options: Any
) -> list[tuple[bytes, tuple[Any, ...]]]:
    """Each result as the batch writes it (by the Rust core on that backend)."""
    run = batch.merge_logs(paths, **options)
    assert run._writes is (backend_name == "rust")
    records = list(run.written())
    # the record's own fields agree with its line
    for record in records:
        parsed = json.loads(record.line)
        assert (record.key, record.status, record.error) == (
            parsed["key"],
            parsed["status"],
            parsed["error"],
        )
        assert record.merged is (parsed["message"] is not None)
        assert record.row is None
    # with the rows: the same records, no line
    rows = list(batch.merge_logs(paths, **options).written(row=True))
    assert [(r.key, r.status, r.error, r.line, r.merged) for r in rows] == [
        (r.key, r.status, r.error, b"", r.merged) for r in records
    ]
    return [(r.line, w.row) for r, w in zip(records, rows, strict=True)]


def core_forms(backend_name: str, path: str, **options: Any) -> set[str]:
    """The kinds of item the Rust core gives for ``path`` with ``record="row"``."""
    if backend_name != "rust":
        return {"record"}
    from fastmerge import _fastmerge

    core = _fastmerge.BatchCore([path], **options)
    kinds: set[str] = set()
    while True:
        try:
            item = core.next(None, "row")
        except StopIteration:
            return kinds
        assert item is not None
        kinds.add(item[0])


def logprob(token: str, value: Any, extra: str = "") -> str:
    return (
        f'{{"token":{json.dumps(token)},"logprob":{value},"bytes":[{len(token)},255]{extra},'
        f'"top_logprobs":[{{"token":{json.dumps(token)},"logprob":{value},"bytes":null}}]}}'
    )


def hard_stream(sid: str) -> list[Any]:
    """An OpenAI Chat stream whose text, metadata and logprobs take every serializer path."""
    numbers = [
        "-0.31725305",
        "1e-05",
        "-1.5E-7",
        "1E+2",
        "0.1",
        "100",
        "-0",
        "12345678901234567890",
        "2.5e16",
        "1.0",
        "-0.0",
        "123456789.125",
        "0.000123",
    ]
    entries = [logprob(f"t{i}{HARD[i % len(HARD)]}", n) for i, n in enumerate(numbers)]
    # spaces, a repeated key (its first place, its last value), an escaped key and text
    entries.append(
        '{ "token" : "\\u00e9\\ud83d\\ude00\\/" , "logprob" : -1 , "token" : "last" ,'
        ' "b\\u0061d" : [ 1 , 2.50 ] , "bytes" : [ ] , "top_logprobs" : [ ] }'
    )
    raw = [json.loads(e) for e in entries]
    events = [chunk(sid, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}}])]
    for i, entry in enumerate(raw):
        events.append(
            chunk(
                sid,
                choices=[
                    {
                        "index": 0,
                        "delta": {"content": HARD if i == 0 else f" w{i}"},
                        "logprobs": {"content": [entry]},
                    }
                ],
            )
        )
    events.append(chunk(sid, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    events.append(chunk(sid, choices=[], usage=usage, system_fingerprint=HARD))
    return events


def two_choices(sid: str) -> list[Any]:
    """A stream of two choices (``n=2``), one with a tool call."""
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": '{"a": 1.5e-3}'},
    }
    return [
        chunk(sid, choices=[{"index": 0, "delta": {"role": "assistant", "content": "a"}}]),
        chunk(sid, choices=[{"index": 1, "delta": {"role": "assistant", "tool_calls": [call]}}]),
        chunk(sid, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
        chunk(sid, choices=[{"index": 1, "delta": {}, "finish_reason": "tool_calls"}]),
        chunk(sid, choices=[], usage={"prompt_tokens": 1, "completion_tokens": 2}),
    ]


def hard_log(tmp_path: Path) -> str:
    streams = interleave(
        ("hard", hard_stream("hard")),
        ("two", two_choices("two")),
        (f"k{HARD}", chat("k", ["x", "y"], usage=False)[:-1]),  # cut: incomplete, a hard key
    )
    records = [*wrap(streams), *wrap([("bad", {"hello": 1})])]  # no event: an error record
    return write(tmp_path / "hard.jsonl", lines(records))


def test_every_escape_float_and_kept_text_as_python_writes_them(
    batch: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    path = hard_log(tmp_path)
    options = {"group_by": "stream_id", "event": "event"}
    got = written(batch, backend_name, path, **options)
    assert got == expected(batch, path, **options)
    records = {r["key"]: r for r in (json.loads(line) for line, _ in got)}
    assert {key: r["status"] for key, r in records.items()} == {
        "hard": "complete",
        "two": "complete",
        f"k{HARD}": "incomplete",
        "bad": "error",
    }
    hard = records["hard"]
    assert hard["message"]["parts"][0]["text"].startswith(HARD)
    assert len(hard["message"]["logprobs"]["content"]) == 14
    assert len(records["two"]["choices"]) == 2
    assert core_forms(backend_name, path, **options) == {"record"}  # none left to Python


def test_the_whole_corpus_as_python_writes_it(
    batch: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    files = sorted(str(p) for p in CORPUS.rglob("*") if p.suffix in (".json", ".jsonl"))
    assert len(files) > 100
    got = written(batch, backend_name, files)
    assert got == expected(batch, files)
    statuses = {json.loads(line)["status"] for line, _ in got}
    assert {"complete", "incomplete", "error"} <= statuses
    assert any(json.loads(line)["anomalies"] for line, _ in got)
    strict = written(batch, backend_name, files, strict=True)
    assert strict == expected(batch, files, strict=True)
    assert strict != got


def test_the_command_writes_the_api_records(
    batch: ModuleType, backend_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = hard_log(tmp_path)
    options = {"group_by": "stream_id", "event": "event"}
    flags = ["--group-by", "stream_id", "--event", "event", "--quiet"]
    lines_ = [line for line, _ in expected(batch, path, **options)]
    out = tmp_path / "out.jsonl"
    assert cli.main(["batch", path, *flags, "-o", str(out)]) == 1  # the error record
    assert out.read_bytes() == b"".join(lines_)
    assert cli.main(["batch", path, *flags]) == 1
    assert capsys.readouterr().out.encode() == b"".join(lines_)
    folder = tmp_path / "dir"
    assert cli.main(["batch", path, *flags, "--output-dir", str(folder)]) == 1
    index = [json.loads(line) for line in (folder / batch.INDEX).read_bytes().splitlines()]
    assert [(folder / entry["file"]).read_bytes() for entry in index] == lines_
    assert [e["status"] for e in index] == ["complete", "complete", "incomplete", "error"]


def test_blocks_of_lines_larger_than_a_write(
    batch: ModuleType, backend_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch.formats.jsonl, "BLOCK", 1000)  # a block ends within the records
    streams = interleave(*((f"s{i}", chat(f"s{i}", ["w"] * 20)) for i in range(30)))
    path = write(tmp_path / "log.jsonl", lines(wrap(streams)))
    options = {"group_by": "stream_id", "event": "event"}
    out = tmp_path / "out.jsonl"
    with open(out, "wb") as file:
        assert batch.to_jsonl(batch.merge_logs(path, **options), file) == 30
    assert out.read_bytes() == b"".join(line for line, _ in expected(batch, path, **options))


def test_parquet_from_the_core_equals_the_rows_of_the_results(
    batch: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    if os.environ.get("CI"):
        import pyarrow  # noqa: F401 (the test extra: CI must not skip)
    pq = pytest.importorskip("pyarrow.parquet")
    path = hard_log(tmp_path)
    options = {"group_by": "stream_id", "event": "event"}
    out = tmp_path / "out.parquet"
    assert cli.main(["batch", path, "--group-by", "stream_id", "--event", "event", "--quiet",
                     "--format", "parquet", "-o", str(out)]) == 1  # fmt: skip
    rows = pq.read_table(out).to_pylist()
    names = [name for name, _ in batch.COLUMNS]
    made = [row for _, row in expected(batch, path, **options)]
    # a row's message is its JSON as UTF-8 bytes, which Arrow reads as a string column
    assert all(type(row[-1]) is bytes for row in made if row[-1] is not None)
    assert rows == [
        dict(zip(names, (*row[:-1], row[-1] and row[-1].decode()), strict=True)) for row in made
    ]
    by_key = {row["key"]: row for row in rows}
    assert by_key["hard"]["text"].startswith(HARD)
    assert (by_key["hard"]["input_tokens"], by_key["hard"]["tool_calls"]) == (5, 0)
    assert (by_key["two"]["text"], by_key["two"]["output_tokens"]) == ("a", 2)
    assert (by_key["bad"]["message"], by_key["bad"]["status"]) == (None, "error")
    # a result list (not a Batch) takes the Python path: the same table
    results = list(batch.merge_logs(path, **options))
    assert batch.to_arrow(results).to_pylist() == rows


def rows_log(tmp_path: Path) -> str:
    """Streams whose rows take every column's nulls and values: the hard log's, 40 short
    ones, a bad line among them, and a key that answers twice (its first response ends at the
    second's first chunk, so a row comes before the bad line and rows after it)."""
    short = [(f"s{i}", chat(f"s{i}", ["w"] * (i % 4), usage=i % 3 > 0)) for i in range(40)]
    records = [
        *wrap([("twice", e) for e in chat("first", ["a"], usage=False)]),
        *wrap([("twice", e) for e in chat("second", ["b"])]),
        *wrap(interleave(("hard", hard_stream("hard")), ("two", two_choices("two")), *short)),
        *wrap([("bad", {"hello": 1})]),  # no event: an error record
    ]
    data = lines(records)
    middle = data.index(b"\n", len(data) // 2) + 1
    return write(tmp_path / "rows.jsonl", data[:middle] + b"{not json\n" + data[middle:])


def test_parquet_from_the_core_is_the_file_the_rows_of_the_results_make(
    batch: ModuleType, backend_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a Batch's rows come as the core's Arrow columns (Rust), a list's as Python rows: the
    # same bytes, row groups ending at the same rows (by count and by message bytes)
    if os.environ.get("CI"):
        import pyarrow  # noqa: F401 (the test extra: CI must not skip)
    pq = pytest.importorskip("pyarrow.parquet")
    path = rows_log(tmp_path)
    options = {"group_by": "stream_id", "event": "event", "errors": "skip", "jobs": 2}
    monkeypatch.setattr(batch.formats.parquet, "_SLICE", 4)
    monkeypatch.setattr(batch.formats.parquet, "GROUP_BYTES", 4000)
    results = list(batch.merge_logs(path, **options))
    assert len(results) == 45
    for per_group in (7, 10_000):
        core, rows = tmp_path / f"core-{per_group}.parquet", tmp_path / f"rows-{per_group}.parquet"
        run = batch.merge_logs(path, **options)
        assert batch.to_parquet(run, core, rows_per_group=per_group) == 45
        assert run.counts == {"complete": 44, "incomplete": 0, "failed": 0, "error": 1,
                              "bad_lines": 1}  # fmt: skip
        assert batch.to_parquet(results, rows, rows_per_group=per_group) == 45
        assert core.read_bytes() == rows.read_bytes()
        sizes = [
            pq.ParquetFile(core).metadata.row_group(i).num_rows
            for i in range(pq.ParquetFile(core).metadata.num_row_groups)
        ]
        assert sum(sizes) == 45
        assert max(sizes) <= per_group
        assert any(size < per_group for size in sizes[:-1])  # some end at GROUP_BYTES
    table = pq.read_table(core)
    assert table.column("provider").null_count == 1  # the error record's
    assert table.column("input_tokens").null_count > 10  # streams without usage
    assert table.to_pylist() == batch.to_arrow(results).to_pylist()


def keys_of(columns: tuple[Any, ...], count: int) -> list[str]:
    """The ``key`` column of ``BatchCore.take_rows``'s buffers, read back."""
    nulls, validity, offsets, data = columns[0]
    assert (nulls, validity) == (0, None)
    ends = struct.unpack(f"<{count + 1}i", offsets)
    return [data[a:b].decode() for a, b in zip(ends, ends[1:])]


def test_next_rows_gives_what_next_gives_in_its_order(backend_name: str, tmp_path: Path) -> None:
    if backend_name != "rust":
        pytest.skip("next_rows is the Rust core's")
    from fastmerge import _fastmerge

    path = rows_log(tmp_path)
    with pytest.raises(ValueError, match="positions=False"):
        _fastmerge.BatchCore([path], "stream_id", "event", positions=True).next_rows()
    one = _fastmerge.BatchCore([path], "stream_id", "event", jobs=1)
    expected = [(item[0], item[1]) for item in drain_rows(one)]
    assert ("bad", path) in expected and len(expected) == 46
    for rows, held in ((1000, 1 << 40), (2, 1 << 40), (1000, 1)):
        core = _fastmerge.BatchCore([path], "stream_id", "event", jobs=1)
        got: list[tuple[str, str]] = []
        failed = []
        while True:
            try:
                found = core.next_rows(None, rows, held)
            except StopIteration:
                break
            if not got:
                # the workers started: once every item is ready, rows end at the bad line
                time.sleep(0.2)
            if found[0] != "rows":
                got.append((found[0], found[1]))
                continue
            _, count, size, statuses, first = found
            assert 1 <= count <= rows and sum(statuses) == count
            assert held > 1 or count == 1  # a message reaches `held`: its row ends them
            taken, columns = core.take_rows()
            assert (taken, len(columns)) == (count, 14)
            got += [("record", key) for key in keys_of(columns, count)]
            assert size == len(columns[13][3])  # the messages' bytes
            failed += [first] if first is not None else []
            if len(got) < len(expected) and expected[len(got)][0] == "bad":
                after = core.next(None, "row")  # what next_rows kept, if it found it
                got.append((after[0], after[1]))
        assert got == expected
        assert len(failed) == 1 and failed[0][0] == "bad" and "event" in failed[0][1]


def drain_rows(core: Any) -> list[tuple[Any, ...]]:
    """Every item of ``core.next(None, "row")``."""
    items = []
    while True:
        try:
            items.append(core.next(None, "row"))
        except StopIteration:
            return items


def test_rows_before_an_engine_error_are_counted_as_their_records_were(
    batch: ModuleType, tmp_path: Path
) -> None:
    # a gzip cut at 90%: the streams read before the damage come out, then the error; the
    # rows path counts what the results path gives (the core returns its rows, then raises)
    pytest.importorskip("pyarrow.parquet")
    records = [r for i in range(600) for r in wrap([(f"s{i}", e) for e in chat(f"s{i}", "ab")])]
    data = gzip.compress(lines(records))
    path = write(tmp_path / "log.jsonl.gz", data[: len(data) * 9 // 10])
    options = {"group_by": "stream_id", "event": "event"}
    results = []
    with pytest.raises(fastmerge.errors.BatchError, match="truncated"):
        for result in batch.merge_logs(path, **options):
            results.append(result)
    assert len(results) > 300
    run = batch.merge_logs(path, **options)
    with pytest.raises(fastmerge.errors.BatchError, match="truncated"):
        batch.to_parquet(run, tmp_path / "out.parquet")
    # (E106: the stream the cut left open comes too, incomplete)
    assert run.counts["complete"] == sum(r.status == "complete" for r in results)
    assert run.counts["incomplete"] == sum(r.status == "incomplete" for r in results) == 1


def test_the_rows_of_two_batches_in_one_file(batch: ModuleType, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    logs = []
    for name, count in (("a", 20), ("b", 30)):
        streams = interleave(*((f"{name}{i}", chat(f"{name}{i}", ["w"])) for i in range(count)))
        logs.append(write(tmp_path / f"{name}.jsonl", lines(wrap(streams))))
    options = {"group_by": "stream_id", "event": "event"}
    both = tmp_path / "both.parquet"
    with batch.ParquetOut(both) as out:
        runs = [batch.merge_logs(log, **options) for log in logs]
        for piece in itertools.chain(*(run.rows(out.room) for run in runs)):
            assert piece is not None
            out.add(piece)
    assert out.count == 50
    results = [r for log in logs for r in batch.merge_logs(log, **options)]
    assert batch.to_parquet(results, tmp_path / "rows.parquet") == 50
    assert both.read_bytes() == (tmp_path / "rows.parquet").read_bytes()
    assert pq.read_table(both).column("key").to_pylist()[19:21] == ["a19", "b0"]


def test_a_python_row_among_the_cores_makes_the_same_file(
    batch: ModuleType, tmp_path: Path
) -> None:
    # a record the core leaves to Python between its rows: the slice is still one chunk, so
    # the writer cuts the same pages (4.5 MB of messages here) as from one source
    pa = pytest.importorskip("pyarrow")
    rows = [
        (f"k{i}", "openai-chat", None, "complete", "stop", "stop", 1, 2, 3, "t", 0, 0, None,
         json.dumps({"text": f"{i % 10}" * 3000}).encode())
        for i in range(1500)
    ]  # fmt: skip
    alone = tmp_path / "alone.parquet"
    assert batch.write_parquet((row_written(row) for row in rows), alone) == 1500
    added: list[tuple[Any, ...]] = []

    def take() -> Any:  # the rows the core added since the last take
        table = batch.arrow.table(added, pa)
        added.clear()
        return table

    def core(start: int, count: int) -> Any:
        added.extend(rows[start : start + count])
        return batch.Rows(count, sum(len(r[-1]) for r in rows[start : start + count]), None, take)

    mixed = tmp_path / "mixed.parquet"
    with batch.ParquetOut(mixed) as out:
        out.add(core(0, 450))
        out.add(row_written(rows[450]))
        out.add(core(451, 549))
        for row in rows[1000:]:
            out.add(row_written(row))
    assert out.count == 1500
    assert mixed.read_bytes() == alone.read_bytes()


def row_written(row: tuple[Any, ...]) -> Any:
    from fastmerge import batch

    return batch.Written(row[0], row[3], row[12], b"", row, True)


def test_a_bad_record_form_is_refused(backend_name: str, tmp_path: Path) -> None:
    if backend_name != "rust":
        pytest.skip("the form is an argument of the Rust core's next")
    from fastmerge import _fastmerge

    path = write(tmp_path / "log.jsonl", lines(wrap([("a", e) for e in chat("a", ["x"])])))
    core = _fastmerge.BatchCore([path], "stream_id", "event")
    with pytest.raises(ValueError, match="record must be None, 'jsonl' or 'row', not 'csv'"):
        core.next(None, "csv")
    with pytest.raises(TypeError):
        core.next(None, 1)  # type: ignore[arg-type]
    item = core.next(None, "jsonl")
    assert item is not None
    assert item[0] == "record"


@pytest.mark.parametrize(
    "key", ["a", 'k","provider":"x', f"k{HARD}", "é\\", "\udc80 lone", ""], ids=repr
)
def test_an_index_line_is_json_line_of_its_entry(batch: ModuleType, key: str) -> None:
    for message in ("plain", "é", "\ud800"):  # a lone surrogate makes the record's line ASCII
        record = {"key": key, "provider": None, "status": "error", "message": message}
        line = batch.json_line(record)
        written = batch.Written(key, "error", None, line, None, False)
        entry = {"key": key, "file": "k-2.json", "status": "error"}
        assert batch.formats.directory._index_line(written, "k-2.json") == batch.json_line(entry)


def test_random_floats_and_ints_as_python_writes_them(
    batch: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    rng = random.Random(20261204)
    numbers: list[str] = []
    for _ in range(3000):
        kind = rng.randrange(6)
        if kind == 0:  # any finite double, from its bits
            value = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            if not math.isfinite(value):
                value = 0.5
            numbers.append(repr(value))
        elif kind == 1:  # around the edges of the fixed notation, as %.17g writes them
            numbers.append(f"{rng.uniform(0.5, 2) * 10.0 ** rng.choice([-5, -4, 15, 16]):.17g}")
        elif kind == 2:
            numbers.append(repr(rng.uniform(-30, 0)))  # a logprob
        elif kind == 3:
            numbers.append(str(rng.randrange(-(2**70), 2**70)))  # past 64 bits: a float
        elif kind == 4:
            numbers.append(
                f"{rng.randrange(-999, 999)}.{rng.randrange(1000):03d}e{rng.randrange(-30, 30)}"
            )
        else:  # halfway between two shortest candidates: Python takes the even one
            whole = rng.randrange(2**47, 2**52)
            numbers.append(repr(whole + rng.choice([0.25, 0.75, 0.125, 0.375, 0.5])))
    entries = [logprob(f"t{i}", n) for i, n in enumerate(numbers)]
    events = [chunk("r", choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}}])]
    for i in range(0, len(entries), 50):
        text = "[" + ",".join(entries[i : i + 50]) + "]"
        events.append(
            chunk(
                "r",
                choices=[
                    {
                        "index": 0,
                        "delta": {"content": "w"},
                        "logprobs": {"content": json.loads(text)},
                    }
                ],
            )
        )
    events.append(chunk("r", choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    # the numbers as their text says them (json.dumps would write Python's repr of each)
    raw = [json.dumps(e) for e in events]
    for i in range(0, len(entries), 50):
        raw[1 + i // 50] = raw[1 + i // 50].replace(
            json.dumps({"content": json.loads("[" + ",".join(entries[i : i + 50]) + "]")}),
            '{"content":[' + ",".join(entries[i : i + 50]) + "]}",
        )
    path = tmp_path / "numbers.jsonl"
    path.write_text("\n".join(raw) + "\n", encoding="utf-8")
    got = written(batch, backend_name, str(path), group_by="id")
    assert got == expected(batch, str(path), group_by="id")
    content = json.loads(got[0][0])["message"]["logprobs"]["content"]
    assert len(content) == len(numbers)
