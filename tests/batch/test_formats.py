"""Output formats come from one registry (``fastmerge.batch.FORMATS``): a format is a module
with a writer and a line in the registry, and ``fastmerge batch`` offers it."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.batch import batch_module, chat, interleave, lines, wrap, write

import fastmerge
from fastmerge.cli import main


class TsvOut:
    """A test-only format: the key and status of each record, a line each."""

    rows = False

    def __init__(self, path: str) -> None:
        self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed by close())
        self.count = 0

    def room(self) -> tuple[int, int]:
        return (1, 1)

    def add(self, piece: Any) -> None:
        record = json.loads(piece.line)
        self._file.write(f"{record['key']}\t{record['status']}\n")
        self.count += 1

    def close(self, finish: bool = True) -> None:
        self._file.close()


@pytest.fixture
def batch(backend_name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = batch_module(backend_name)
    # the one registry line a new format needs (in the registry the command's parser reads
    # too, that of the selected backend's package, when the test's is another's copy)
    for registry in (module.FORMATS, importlib.import_module("fastmerge.batch").FORMATS):
        monkeypatch.setitem(registry, "tsv", module.Format("tsv", "file", TsvOut))
    monkeypatch.setattr(fastmerge, "batch", module, raising=False)
    return module


def log(tmp_path: Path) -> str:
    streams = interleave(("a", chat("a", ["x"])), ("b", chat("b", ["y"], usage=False)))
    return write(tmp_path / "log.jsonl", lines(wrap(streams)))


def test_a_registered_format_is_written_by_the_api(batch: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "out.tsv"
    run = batch.merge_logs(log(tmp_path), group_by="stream_id", event="event")
    assert batch.write(run, batch.FORMATS["tsv"].open(str(out))) == 2
    assert out.read_text() == "a\tcomplete\nb\tcomplete\n"


def test_a_registered_format_is_a_choice_of_the_command(
    batch: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.tsv"
    args = ["batch", log(tmp_path), "--group-by", "stream_id", "--event", "event", "--quiet"]
    assert main([*args, "--format", "tsv", "-o", str(out)]) == 0
    assert out.read_text() == "a\tcomplete\nb\tcomplete\n"
    # a format that cannot write to standard output needs -o
    with pytest.raises(SystemExit) as exc:
        main([*args, "--format", "tsv"])
    assert exc.value.code == 64
    assert "--format tsv needs -o FILE" in capsys.readouterr().err


def test_every_registered_format_writes_the_same_records(batch: ModuleType, tmp_path: Path) -> None:
    """jsonl, directory and parquet: the same keys and statuses, from one registry."""
    path = log(tmp_path)
    seen: dict[str, list[tuple[str, str]]] = {}
    for name, output in batch.FORMATS.items():
        if name == "parquet":
            pytest.importorskip("pyarrow")
        target = tmp_path / f"out-{name}"
        run = batch.merge_logs(path, group_by="stream_id", event="event")
        assert batch.write(run, output.open(str(target))) == 2
        if name == "jsonl":
            records = [json.loads(line) for line in target.read_text().splitlines()]
            seen[name] = [(r["key"], r["status"]) for r in records]
        elif name == "directory":
            index = (target / batch.INDEX).read_text().splitlines()
            seen[name] = [(e["key"], e["status"]) for e in map(json.loads, index)]
        elif name == "parquet":
            rows = __import__("pyarrow.parquet").parquet.read_table(target).to_pylist()
            seen[name] = [(r["key"], r["status"]) for r in rows]
        else:
            seen[name] = [tuple(line.split("\t")) for line in target.read_text().splitlines()]  # type: ignore[misc]
    assert all(value == [("a", "complete"), ("b", "complete")] for value in seen.values()), seen
