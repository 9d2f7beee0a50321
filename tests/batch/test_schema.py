"""The record schema is declared once (``fastmerge.batch.schema``): the Python writers read it,
and the Rust core's writers declare the same fields and columns, in the same order."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from types import ModuleType
from typing import Any, get_type_hints

import pytest
from _support.batch import chat, chunk, interleave, lines, wrap, write

from fastmerge import _backend
from fastmerge.batch import options as batch_options
from fastmerge.batch import schema


def two_choices(sid: str) -> list[dict[str, Any]]:
    """A stream of two choices (``n=2``): its record has ``choices``."""
    return [
        chunk(sid, choices=[{"index": i, "delta": {"role": "assistant", "content": f"c{i}"}}])
        for i in (0, 1)
    ] + [chunk(sid, choices=[{"index": i, "delta": {}, "finish_reason": "stop"}]) for i in (0, 1)]


def log(tmp_path: Path) -> str:
    """A log with a stream of one choice, one of two choices, and one that cannot be merged."""
    streams = interleave(("a", chat("a", ["x", "y"])), ("b", two_choices("b")))
    records = wrap(streams) + [{"stream_id": "c", "event": {"not": "an event"}}]
    return write(tmp_path / "log.jsonl", lines(records))


def test_the_rust_core_declares_the_schema_python_declares() -> None:
    """A field or column added in one language only fails here."""
    core = _backend.load("rust").BatchCore
    assert core.RECORD_FIELDS == schema.RECORD_FIELDS
    assert core.COLUMNS == schema.COLUMNS
    assert core.STATUSES == schema.STATUSES
    assert core.WRITES_RECORDS is True
    assert _backend.load("python").BatchCore.WRITES_RECORDS is False


def test_every_record_written_has_the_declared_keys_in_order(
    batch: ModuleType, tmp_path: Path
) -> None:
    """Lines written by the core (Rust) or from the results (the twin) alike."""
    run = batch.merge_logs(log(tmp_path), group_by="stream_id", event="event", errors="skip")
    keys = [list(json.loads(w.line)) for w in run.written()]
    several = list(schema.RECORD_FIELDS)
    one = [name for name in several if name != "choices"]
    assert keys == [one, several, one]


def test_every_row_has_the_declared_columns(batch: ModuleType, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "out.parquet"
    run = batch.merge_logs(log(tmp_path), group_by="stream_id", event="event", errors="skip")
    assert batch.to_parquet(run, out) == 3
    table = pq.read_table(out)
    assert [(f.name, str(f.type)) for f in table.schema] == [
        (name, "int64" if kind == "int64" else "string") for name, kind in schema.COLUMNS
    ]
    rows = table.to_pylist()
    assert [r["key"] for r in rows] == ["a", "b", "c"]
    assert [r["status"] for r in rows] == ["complete", "complete", "error"]
    assert [r["text"] for r in rows] == ["xy", "c0", None]


def test_the_options_and_their_keywords_are_one_list() -> None:
    """``merge_logs(paths, group_by=...)`` takes exactly :class:`BatchOptions`' fields."""
    declared = {f.name: f.type for f in fields(batch_options.BatchOptions)}
    keywords = get_type_hints(batch_options.OptionValues)
    assert list(keywords) == list(declared)
    hints = get_type_hints(batch_options.BatchOptions)
    assert keywords == hints


def test_options_as_an_object_or_as_keywords_give_the_same_run(
    batch: ModuleType, tmp_path: Path
) -> None:
    path = log(tmp_path)
    options = batch.BatchOptions(group_by="stream_id", event="event")
    by_object = [w.line for w in batch.merge_logs(path, options, errors="skip").written()]
    by_keywords = [
        w.line
        for w in batch.merge_logs(
            path, group_by="stream_id", event="event", errors="skip"
        ).written()
    ]
    assert by_object == by_keywords
    # keywords given beside the object replace its values
    changed = batch.merge_logs(path, options, group_by="nothing", errors="collect")
    assert list(changed) == []
    assert len(changed.bad_lines) == len(Path(path).read_text().splitlines())
    with pytest.raises(TypeError):
        batch.merge_logs(path, colour="blue")
