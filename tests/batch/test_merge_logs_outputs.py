"""``fastmerge.batch.merge_logs`` on both backends: what its results are written as.
Records (the message or the provider's response, every choice), Arrow columns, Parquet row
groups, and a file per stream with its index (the directory writer of each backend)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.batch import (
    batch_fixture,  # noqa: F401 (the ``batch`` fixture)
    chat,
    chunk,
    lines,
    two_streams,
    wrap,
    write,
)

# -- records and columns


def test_records_hold_the_message_or_the_provider_response(
    batch: ModuleType, aggregate_module: ModuleType, tmp_path: Path
) -> None:
    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    results = list(batch.merge_logs(path, group_by="stream_id", event="event"))
    expected = aggregate_module.aggregate([json.dumps(e) for e in chat("a", ["x", "y", "z"])])
    record = results[0].record()
    assert list(record) == ["key", "provider", "status", "anomalies", "message", "error"]
    assert record["message"] == expected.to_dict()
    response = results[0].record(to="openai-chat")["message"]
    assert response == expected.to_provider("openai-chat")
    assert response["object"] == "chat.completion"


def test_n_choices_are_all_in_the_record(batch: ModuleType, tmp_path: Path) -> None:
    events = [
        chunk("n", choices=[{"index": i, "delta": {"content": f"c{i}"}} for i in range(2)]),
        chunk("n", choices=[{"index": i, "delta": {}, "finish_reason": "stop"} for i in range(2)]),
    ]
    path = write(tmp_path / "log.jsonl", lines(wrap([("n", e) for e in events])))
    (result,) = batch.merge_logs(path, group_by="stream_id", event="event")
    record = result.record()
    assert [m["parts"][0]["text"] for m in record["choices"]] == ["c0", "c1"]
    assert record["message"] == record["choices"][0]


def _pyarrow() -> Any:
    if os.environ.get("CI"):
        import pyarrow  # the test extra: CI must not skip

        return pyarrow
    return pytest.importorskip("pyarrow")


def test_to_arrow_has_typed_columns(batch: ModuleType, tmp_path: Path) -> None:
    pa = _pyarrow()
    a = chat("a", ["x"])
    a.insert(
        1,
        chunk(
            "a",
            choices=[
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "f", "arguments": "{}"},
                            }
                        ]
                    },
                }
            ],
        ),
    )
    records = wrap([("a", e) for e in a]) + wrap([("c", {"hello": 1})])
    path = write(tmp_path / "log.jsonl", lines(records))
    table = batch.to_arrow(batch.merge_logs(path, group_by="stream_id", event="event"))
    assert table.schema.field("input_tokens").type == pa.int64()
    assert table.schema.field("text").type == pa.string()
    rows = table.to_pylist()
    message = json.loads(rows[0].pop("message"))
    assert [p["part"] for p in message["parts"]] == ["tool_call", "text"]
    assert rows[0] == {
        "key": "a",
        "provider": "openai-chat",
        "model": "gpt-4o",
        "status": "complete",
        "finish_reason": "stop",
        "finish_reason_normalized": "stop",
        "input_tokens": 5,
        "output_tokens": 2,
        "total_tokens": 7,
        "text": "x",
        "tool_calls": 1,
        "anomalies": 0,
        "error": None,
    }
    assert rows[1]["status"] == "error"
    assert rows[1]["message"] is None
    assert rows[1]["text"] is None
    assert rows[1]["finish_reason_normalized"] is None


def test_to_parquet_writes_the_same_rows(batch: ModuleType, tmp_path: Path) -> None:
    _pyarrow()
    import pyarrow.parquet as pq

    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    out = tmp_path / "out.parquet"
    count = batch.to_parquet(
        batch.merge_logs(path, group_by="stream_id", event="event"), out, rows_per_group=1
    )
    assert count == 2
    table = pq.read_table(out)
    expected = batch.to_arrow(batch.merge_logs(path, group_by="stream_id", event="event"))
    assert table.to_pylist() == expected.to_pylist()
    assert [r["text"] for r in table.to_pylist()] == ["xyz", "1234"]


def test_to_parquet_closes_a_row_group_when_its_messages_are_large(
    batch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large messages make a row group before ``rows_per_group`` rows: memory holds about
    ``GROUP_BYTES`` of them, and the file holds every row all the same."""
    _pyarrow()
    import pyarrow.parquet as pq

    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    out = tmp_path / "out.parquet"
    monkeypatch.setattr(batch.formats.parquet, "GROUP_BYTES", 1)  # every message passes it
    count = batch.to_parquet(batch.merge_logs(path, group_by="stream_id", event="event"), out)
    assert count == 2
    assert pq.ParquetFile(out).metadata.num_row_groups == 2
    assert [r["text"] for r in pq.read_table(out).to_pylist()] == ["xyz", "1234"]


def test_to_parquet_writes_full_row_groups_on_another_thread_and_raises_their_error(
    batch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full row group is written beside the next one filling, on its own thread; an error
    there is the call's error, and the stream after it is not read on."""
    _pyarrow()
    import threading

    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    monkeypatch.setattr(batch.formats.parquet, "GROUP_BYTES", 1)  # a group a row
    threads: list[str] = []
    write_group = batch.formats.parquet._write_group

    def recording(*args: Any) -> int:
        threads.append(threading.current_thread().name)
        return int(write_group(*args))

    monkeypatch.setattr(batch.formats.parquet, "_write_group", recording)
    out = tmp_path / "out.parquet"
    assert batch.to_parquet(batch.merge_logs(path, group_by="stream_id", event="event"), out) == 2
    assert [name.startswith("fastmerge-parquet") for name in threads] == [True, True]

    def failing(*args: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(batch.formats.parquet, "_write_group", failing)
    with pytest.raises(OSError, match="No space left"):
        batch.to_parquet(batch.merge_logs(path, group_by="stream_id", event="event"), out)


def test_to_directory_writes_each_file_and_its_index_line_in_order(
    batch: ModuleType, tmp_path: Path
) -> None:
    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    out = tmp_path / "out"
    count = batch.to_directory(batch.merge_logs(path, group_by="stream_id", event="event"), out)
    assert count == 2
    index = [json.loads(line) for line in (out / batch.INDEX).read_text().splitlines()]
    assert [(e["key"], e["file"], e["status"]) for e in index] == [
        ("a", "a.json", "complete"),
        ("b", "b.json", "complete"),
    ]
    records = batch.merge_logs(path, group_by="stream_id", event="event")
    for result, entry in zip(records, index, strict=True):
        assert (out / entry["file"]).read_bytes() == batch.json_line(result.record())


def test_to_directory_raises_the_first_write_error(batch: ModuleType, tmp_path: Path) -> None:
    """A file that cannot be made (here its name is a directory's) is an error of the call,
    raised however the files are written; the files before it are written, and indexed."""
    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    out = tmp_path / "out"
    (out / "b.json").mkdir(parents=True)
    with pytest.raises(IsADirectoryError) as raised:
        batch.to_directory(batch.merge_logs(path, group_by="stream_id", event="event"), out)
    # Python's own error for that path, on both backends
    assert str(raised.value) == f"[Errno {errno.EISDIR}] Is a directory: '{out / 'b.json'}'"
    assert raised.value.filename == str(out / "b.json")
    assert (out / "a.json").is_file()
    assert [json.loads(line)["file"] for line in (out / batch.INDEX).read_text().splitlines()] == [
        "a.json"
    ]


def test_the_directory_writer_stops_at_its_first_failure(
    backend_module: ModuleType, tmp_path: Path
) -> None:
    """After a failed write nothing more is written; the failure is raised by a later
    ``put`` (at once on the twin) or returned by ``close``, every time; a closed writer
    refuses more."""
    (tmp_path / "b.json").mkdir()
    writer = backend_module.DirectoryWriter(str(tmp_path), "index.jsonl")
    raised: list[OSError] = []
    for name in ("a.json", "b.json", "c.json", "d.json"):
        try:
            writer.put(name, name.encode(), name.encode() + b"\n")
        except OSError as error:
            raised.append(error)
    failure = writer.close()
    assert isinstance(failure, IsADirectoryError)
    assert failure.filename == str(tmp_path / "b.json")
    assert all(error is failure or str(error) == str(failure) for error in raised)
    assert str(writer.close()) == str(failure)
    assert (tmp_path / "a.json").read_bytes() == b"a.json"
    assert not (tmp_path / "c.json").exists() and not (tmp_path / "d.json").exists()
    assert (tmp_path / "index.jsonl").read_bytes() == b"a.json\n"
    with pytest.raises((ValueError, OSError)):
        writer.put("e.json", b"e", b"e\n")


def test_the_directory_writers_of_both_backends_write_the_same_files(
    both: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    """Many files, long and empty ones, in order: the same files and index from each."""
    made = []
    for module in both:
        out = tmp_path / module.__name__
        out.mkdir()
        writer = module.DirectoryWriter(str(out), "index.jsonl")
        for n in range(600):  # more than the Rust writer queues
            writer.put(f"{n}.json", b"x" * (n * 97 % 5000), f"{n}\n".encode())
        assert writer.close() is None
        made.append(sorted((p.name, p.read_bytes()) for p in out.iterdir()))
    assert made[0] == made[1]
    assert len(made[0]) == 601


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="a device that is always full")
def test_a_failed_write_names_its_file_on_both_backends(
    both: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    """A write that fails (a full disk: the file is the device /dev/full is, made there; a
    link to it would be refused before any write, E108) is the same OSError from each, naming
    the file (the twin's named none); nothing after it is written."""
    full = os.stat("/dev/full").st_rdev
    failures = []
    for module in both:
        out = tmp_path / module.__name__
        out.mkdir()
        try:
            os.mknod(out / "b.json", 0o666 | stat.S_IFCHR, full)
        except PermissionError:
            pytest.skip("making a device node needs root")
        writer = module.DirectoryWriter(str(out), "index.jsonl")
        with contextlib.suppress(OSError):  # raised by put on the twin, by close on Rust
            for name in ("a.json", "b.json", "c.json"):
                writer.put(name, b"data", f"{name}\n".encode())
        failure = writer.close()
        assert isinstance(failure, OSError)
        failures.append((failure.errno, failure.strerror, failure.filename))
        assert sorted(p.name for p in out.iterdir()) == ["a.json", "b.json", "index.jsonl"]
        assert (out / "index.jsonl").read_bytes() == b"a.json\n"
    assert failures[0][:2] == failures[1][:2] == (errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert [Path(f[2]).name for f in failures] == ["b.json", "b.json"]


def test_a_directory_writer_in_a_missing_directory_raises_python_s_error(
    backend_module: ModuleType, tmp_path: Path
) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError) as raised:
        backend_module.DirectoryWriter(str(missing), "index.jsonl")
    index = missing / "index.jsonl"
    assert str(raised.value) == f"[Errno {errno.ENOENT}] No such file or directory: '{index}'"


def test_to_parquet_makes_a_row_group_from_slices_made_as_rows_come(
    batch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are made Arrow a slice at a time while a group fills: still one row group of
    all of them, the same rows as :func:`to_arrow`."""
    _pyarrow()
    import pyarrow.parquet as pq

    path = write(tmp_path / "log.jsonl", lines(two_streams()))
    out = tmp_path / "out.parquet"
    monkeypatch.setattr(batch.formats.parquet, "_SLICE", 1)
    count = batch.to_parquet(batch.merge_logs(path, group_by="stream_id", event="event"), out)
    assert count == 2
    assert pq.ParquetFile(out).metadata.num_row_groups == 1
    expected = batch.to_arrow(batch.merge_logs(path, group_by="stream_id", event="event"))
    assert pq.read_table(out).to_pylist() == expected.to_pylist()
