"""``BatchCore`` itself, on both backends (fixture ``backend_module``): every stream's
``choices`` equal an ``AggregatorCore`` fed that stream's events, on the whole corpus
(``group_by="file"``) and on a generated gateway log (``group_by="stream_id"``,
``event="event"``, and ``order_by="seq"`` on a shuffled copy), for 1 and 2 jobs, with the same
items in the same order; ``next(timeout)``, ``progress()``, ``close()`` and errors."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from _support.batch import decodable, drain
from _support.corpus import CORPUS
from _support.fuzz import plain
from conftest import PACKAGE_ROOT

from fastmerge.errors import BatchError, EventError

ROOT = Path(__file__).resolve().parents[2]


def _gen_log() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_log", ROOT / "tools" / "gen_log.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _gen_log()


def canon(items: list[tuple[Any, ...]]) -> list[bytes]:
    """Items as bytes: what "byte-identical results" compares."""
    return [orjson.dumps(list(item), default=plain) for item in items]


def alone(module: ModuleType, texts: list[bytes]) -> tuple[str | None, Any, str | None]:
    """``(provider, choices, error)`` of an ``AggregatorCore`` fed ``texts``, one event each."""
    core = module.AggregatorCore()
    try:
        for text in texts:
            core.add_text(text)
        return core.provider, core.finish(), None
    except (EventError, ValueError) as exc:
        return core.provider, None, str(exc)


def write_log(path: Path, lines: list[bytes]) -> str:
    path.write_bytes(b"".join(lines))
    return str(path)


@pytest.fixture(scope="module")
def log_lines() -> list[bytes]:
    """A small generated gateway log: 60 interleaved OpenAI streams, 12 in flight."""
    return list(GEN.records(60, 200_000, 12, 7))


def by_stream(lines: list[bytes]) -> dict[str, list[bytes]]:
    """Each stream's event texts, in file order."""
    events: dict[str, list[bytes]] = {}
    for line in lines:
        record = json.loads(line)
        events.setdefault(record["stream_id"], []).append(
            json.dumps(record["event"], separators=(",", ":")).encode()
        )
    return events


@pytest.mark.parametrize("jobs", [1, 2])
def test_generated_log_equals_each_stream_alone_in_the_order_streams_end(
    backend_module: ModuleType, tmp_path: Path, log_lines: list[bytes], jobs: int
) -> None:
    path = write_log(tmp_path / "gateway.jsonl", log_lines)
    items = drain(backend_module.BatchCore([path], group_by="stream_id", event="event", jobs=jobs))
    events = by_stream(log_lines)
    # a stream ends at its usage chunk: the order of the streams' last records
    last = {json.loads(line)["stream_id"]: i for i, line in enumerate(log_lines)}
    assert [item[1] for item in items] == sorted(events, key=last.__getitem__)
    for kind, key, provider, choices, error in items:
        assert kind == "stream"
        assert (provider, choices, error) == alone(backend_module, events[key])
        assert choices[0]["status"] == "complete"
        assert choices[0]["finish_reason"] in ("stop", "tool_calls")


@pytest.mark.parametrize("jobs", [1, 2])
def test_order_by_seq_puts_a_shuffled_log_back_in_order(
    backend_module: ModuleType, tmp_path: Path, log_lines: list[bytes], jobs: int
) -> None:
    shuffled = list(log_lines)
    random.Random(11).shuffle(shuffled)
    path = write_log(tmp_path / "shuffled.jsonl", shuffled)
    items = drain(
        backend_module.BatchCore(
            [path], group_by="stream_id", event="event", order_by="seq", jobs=jobs
        )
    )
    events = by_stream(log_lines)  # the original order: what seq restores
    # with order_by every stream ends with the input, in the order of its first record
    first: dict[str, int] = {}
    for i, line in enumerate(shuffled):
        first.setdefault(json.loads(line)["stream_id"], i)
    assert [item[1] for item in items] == sorted(events, key=first.__getitem__)
    for _, key, provider, choices, error in items:
        assert (provider, choices, error) == alone(backend_module, events[key])


def test_corpus_files_are_one_stream_each_for_every_jobs(
    backend_module: ModuleType,
) -> None:
    files = sorted(str(p) for p in CORPUS.glob("*/*.jsonl"))
    assert len(files) >= 90
    expected = []
    for path in files:
        core = backend_module.AggregatorCore()
        try:
            core.feed(Path(path).read_bytes())
            expected.append(("stream", path, core.provider, core.finish(), None))
        except (EventError, ValueError) as exc:
            expected.append(("stream", path, core.provider, None, str(exc)))
    for jobs in (1, 2):
        got = drain(backend_module.BatchCore(files, group_by="file", jobs=jobs))
        assert canon(got) == canon(expected), jobs


@pytest.mark.differential
def test_both_backends_give_the_same_items_in_the_same_order(
    both: tuple[ModuleType, ModuleType], tmp_path: Path, log_lines: list[bytes]
) -> None:
    rust, python = both
    # rotated into two files, the second gzip-compressed, with bad lines among the records
    half = len(log_lines) // 2
    noisy = log_lines[:half] + [b"not json\n", b'{"stream_id": true}\n', b"\n", b"[1]\n"]
    first = write_log(tmp_path / "part1.jsonl", noisy)
    second = tmp_path / "part2.log"
    second.write_bytes(gzip.compress(b"".join(log_lines[half:])))
    args = ([first, str(second)],)
    options = {"group_by": "/stream_id", "event": "event"}
    expected = canon(drain(python.BatchCore(*args, **options)))
    bad = [orjson.loads(item) for item in expected if orjson.loads(item)[0] == "bad"]
    assert bad == [
        ["bad", first, half + 1, "not valid JSON"],
        [
            "bad",
            first,
            half + 2,
            "the stream key at /stream_id is a boolean, not a string or a number",
        ],
        ["bad", first, half + 4, "a record must be a JSON object, not array"],
    ]
    for jobs in (1, 2, 3):
        assert canon(drain(rust.BatchCore(*args, **options, jobs=jobs))) == expected, jobs


def test_next_with_a_timeout_gives_the_same_items_and_progress_counts_them(
    backend_module: ModuleType, tmp_path: Path, log_lines: list[bytes]
) -> None:
    path = write_log(tmp_path / "gateway.jsonl", log_lines + [b"oops\n"])
    options = {"group_by": "stream_id", "event": "event"}
    expected = canon(drain(backend_module.BatchCore([path], **options)))
    core = backend_module.BatchCore([path], **options)
    size = Path(path).stat().st_size
    # bytes_read grows as the input is read (the Rust reader starts at once)
    assert core.progress()[1:] == (size, 0, 0)
    got = []
    while True:
        try:
            item = core.next(0.0)
        except StopIteration:
            break
        if item is not None:
            got.append(item)
    assert canon(got) == expected
    assert core.progress() == (size, size, 60, 1)
    with pytest.raises(StopIteration):
        core.next()


def test_close_stops_early_and_is_idempotent(
    backend_module: ModuleType, tmp_path: Path, log_lines: list[bytes]
) -> None:
    path = write_log(tmp_path / "gateway.jsonl", log_lines)
    core = backend_module.BatchCore([path], group_by="stream_id", event="event", jobs=2)
    assert core.next()[0] == "stream"
    core.close()
    core.close()
    with pytest.raises(StopIteration):
        core.next()
    assert core.progress()[2] == 1


def test_errors_name_the_file_the_format_and_the_limit(
    backend_module: ModuleType, tmp_path: Path, log_lines: list[bytes]
) -> None:
    packed = gzip.compress(b"".join(log_lines))
    cut = tmp_path / "cut.log"
    cut.write_bytes(packed[: len(packed) // 2])
    core = backend_module.BatchCore([str(cut)], group_by="stream_id", event="event", jobs=2)
    with pytest.raises(BatchError) as raised:
        drain(core)
    offset = decodable("gzip", packed[: len(packed) // 2])
    assert str(raised.value) == f"{cut}: gzip stream is truncated after {offset} decompressed bytes"
    with pytest.raises(StopIteration):
        core.next()
    missing = str(tmp_path / "missing.jsonl")
    with pytest.raises(BatchError, match="^" + missing + ": No such file or directory$"):
        backend_module.BatchCore([missing], group_by="stream_id", event="event")
    with pytest.raises(BatchError, match="^" + str(tmp_path) + ": Is a directory$"):
        backend_module.BatchCore([str(tmp_path)])
    path = write_log(tmp_path / "gateway.jsonl", log_lines)
    core = backend_module.BatchCore(
        [path], group_by="stream_id", event="event", max_open_streams=3, jobs=2
    )
    with pytest.raises(BatchError) as raised:
        drain(core)
    # the line of the fourth key (no stream ends that early: each has dozens of records)
    keys = [json.loads(line)["stream_id"] for line in log_lines]
    fourth = next(i for i in range(len(keys)) if len(set(keys[: i + 1])) == 4) + 1
    assert str(raised.value) == (
        f"more than 3 streams open at {path}:{fourth}; raise --max-open-streams "
        "(max_open_streams=), or pass 0 for no limit"
    )
    with pytest.raises(BatchError) as raised:
        backend_module.BatchCore([path], group_by="a..b")
    assert str(raised.value) == "group_by 'a..b' has an empty segment"
    with pytest.raises(BatchError) as raised:
        backend_module.BatchCore([path], event="event")
    assert str(raised.value).startswith("wrapper records need a stream key")
    with pytest.raises(TypeError):
        backend_module.BatchCore(path)


@pytest.mark.differential
def test_both_backends_read_odd_records_alike(
    both: tuple[ModuleType, ModuleType], tmp_path: Path, log_lines: list[bytes]
) -> None:
    rust, python = both
    event = json.dumps(json.loads(log_lines[0])["event"])
    odd = [
        '{"k": 12345678901234567890, "e": EV}',  # an int beyond 64 bits: a float key
        '{"k": 1.50, "e": EV}',
        '{"k": -0, "e": EV}',
        '{"k": "s", "e": null}',  # no event (null); a number, an array: unreadable events
        '{"k": "s", "e": 5}',
        '{"k": "s", "e": [1, 2]}',
        '{"k": "s", "e": "  [DONE]\\n"}',  # ends stream s
        '{"k": "s", "e": "[DONE]"}',  # no open stream: opens none
        '{"k": "t", "e": "data: {}"}',  # a string event is the event's text
        '{"k": "u", "e": EV, "x": NEST99}',
        '{"k": "u", "e": EV, "x": NEST100}',
        '{"k": "u", "e": EV, "x": "\\ud83d\\ude00 \\udc00"}',
        '{"k": "u\\u00e9", "e": EV, "x": "\\ud83d\\ude00"}',
        '{"k": {"a": 1}, "e": {}}',
        '{"k": "v"}',
        "\ufeff" + '{"k": "w", "e": {}}',  # a BOM past the first line is not JSON
    ]
    nests = {"NEST100": "[" * 100 + "]" * 100, "NEST99": "[" * 99 + "]" * 99, "EV": event}
    for name, text in nests.items():
        odd = [line.replace(name, text) for line in odd]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(odd), encoding="utf-8")
    options = {"group_by": "k", "event": "e"}
    expected = canon(drain(python.BatchCore([str(path)], **options)))
    assert len(expected) == 13
    for jobs in (1, 2):
        assert canon(drain(rust.BatchCore([str(path)], **options, jobs=jobs))) == expected
    for order_by in ("/k",):
        got = canon(drain(rust.BatchCore([str(path)], **options, order_by=order_by)))
        assert got == canon(drain(python.BatchCore([str(path)], **options, order_by=order_by)))


class _Count(int):
    """An int subclass: refused where a count is asked for, on both backends."""


@pytest.mark.differential
@pytest.mark.parametrize(
    "options",
    [
        {"group_by": "k", "event": "a..b", "order_by": 5},  # a type error before a syntax error
        {"group_by": "k", "event": 5, "order_by": "a..b"},
        {"group_by": "a..b", "event": "e", "order_by": 5},
        {"group_by": 5, "event": "a..b"},
        {"group_by": "k", "event": "/a~2", "order_by": "b..c"},
        {"event": "e", "order_by": "x"},
        {"order_by": "x"},
        {"group_by": "k", "jobs": -1, "event": 5},
        # a count beyond any machine's threads, or any int, and one that is not quite an int
        {"group_by": "k", "jobs": 4097},
        {"group_by": "k", "jobs": 2**70, "max_open_streams": -1},
        {"group_by": "k", "jobs": -(2**200)},
        {"group_by": "k", "max_open_streams": 2**200, "jobs": 2**200},
        {"group_by": "k", "jobs": _Count(2)},
        {"group_by": "k", "bucket": (_Count(0), 2)},
    ],
)
def test_both_backends_refuse_bad_options_alike(
    both: tuple[ModuleType, ModuleType], tmp_path: Path, options: dict[str, Any]
) -> None:
    """The same exception, class and text, whatever mix of bad options: the argument types
    are checked first, then the paths' syntax, on both backends."""
    path = tmp_path / "log.jsonl"
    path.write_text('{"k": "s", "e": {}}\n', encoding="utf-8")
    raised = []
    for module in both:
        with pytest.raises((TypeError, BatchError)) as info:
            module.BatchCore([str(path)], **options)
        raised.append((type(info.value), str(info.value)))
    assert raised[0] == raised[1]


@pytest.mark.skipif(sys.platform != "linux", reason="file names of any bytes")
def test_a_file_name_that_is_not_utf8_is_refused_by_name(
    both: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    """A name the file system holds as Latin-1 comes as a lone surrogate: the engine cannot
    name it in items and errors, so both backends refuse it, naming it (the Rust backend
    raised UnicodeEncodeError from inside), and so does every way in."""
    name = os.fsdecode(b"caf\xe9.jsonl")
    path = tmp_path / name
    path.write_text('{"k": "s", "e": {}}\n', encoding="utf-8")
    expected = (
        f"{str(path)!r}: the file name is not UTF-8: rename the file (the batch engine names "
        "each input by its text)"
    )
    for module in both:
        with pytest.raises(BatchError) as info:
            module.BatchCore([str(path)], group_by="k", event="e")
        assert str(info.value) == expected
        with pytest.raises(BatchError) as info:
            module.split_file(str(path), "k", "e")
        assert str(info.value) == expected
        # the types first, then the names (a list of a bad name and a non-str: the type)
        with pytest.raises(TypeError, match="paths must be a list of str"):
            module.BatchCore([str(path), 5], group_by="k")
    rust = both[0]
    with pytest.raises(BatchError, match="not UTF-8"):
        rust.read_input(str(path))
    proc = subprocess.run(
        [sys.executable, "-m", "fastmerge", "batch", str(tmp_path)],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": PACKAGE_ROOT},
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.count(b"\n") == 1 and b"the file name is not UTF-8" in proc.stderr
