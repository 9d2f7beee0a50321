"""Helpers of the batch tests: ``fastmerge.batch`` on a backend (and the ``batch`` fixture),
logs to write, and results as plain values to compare."""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import json
import lzma
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable

import orjson
import pytest
import zstandard

from _support.corpus import CORPUS
from fastmerge import _backend

ROOT = Path(__file__).resolve().parents[2]

COMPRESSORS = {
    "gzip": lambda data: gzip.compress(data, mtime=0),
    "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
    "bzip2": bz2.compress,
    "xz": lzma.compress,
}


def dumps_line(value: Any) -> bytes:
    """A record's line as the standard library writes it (``fastmerge merge``'s lines, and
    ``batch.json_line``'s specification): compact JSON and a newline, ASCII with escapes when
    a lone surrogate has no UTF-8 form."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii") + b"\n"


def batch_module(backend: str) -> ModuleType:
    """``fastmerge.batch`` built on ``backend``'s ``BatchCore`` and messages."""
    return _backend._copy("batch", backend)


@pytest.fixture(name="batch")
def batch_fixture(backend_name: str) -> ModuleType:
    """``fastmerge.batch`` on this test's backend: the ``batch`` fixture of a test module that
    imports this."""
    return batch_module(backend_name)


def chunk(sid: str, **fields: Any) -> dict[str, Any]:
    """An OpenAI Chat chunk of stream ``sid`` (``choices`` and ``usage`` from ``fields``)."""
    return {"id": f"chatcmpl-{sid}", "object": "chat.completion.chunk", "model": "gpt-4o", **fields}


def chat(sid: str, words: Iterable[str], usage: bool = True) -> list[dict[str, Any]]:
    """The chunks of a text stream: role, one delta per word, finish, usage (the last)."""
    events = [chunk(sid, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}}])]
    for word in words:
        events.append(chunk(sid, choices=[{"index": 0, "delta": {"content": word}}]))
    events.append(chunk(sid, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    if usage:
        counts = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        events.append(chunk(sid, choices=[], usage=counts))
    return events


def wrap(records: Iterable[tuple[str, dict[str, Any] | str]], **extra: Any) -> list[dict[str, Any]]:
    """Wrapper records ``{"stream_id", "seq", "event"}`` of (key, event) pairs, ``seq``
    numbering each stream's records from 0."""
    seq: dict[str, int] = {}
    out = []
    for key, event in records:
        n = seq.get(key, 0)
        seq[key] = n + 1
        out.append({"stream_id": key, "seq": n, "event": event, **extra})
    return out


def interleave(*streams: tuple[str, list[Any]]) -> list[tuple[str, Any]]:
    """(key, event) pairs taking one event of each stream in turn."""
    out = []
    longest = max(len(events) for _, events in streams)
    for i in range(longest):
        for key, events in streams:
            if i < len(events):
                out.append((key, events[i]))
    return out


def two_streams() -> list[dict[str, Any]]:
    """Wrapper records of two interleaved streams: ``a`` (3 words) ends before ``b`` (4)."""
    return wrap(
        interleave(("a", chat("a", ["x", "y", "z"])), ("b", chat("b", ["1", "2", "3", "4"])))
    )


#: :func:`run`'s summary of :func:`two_streams`.
TWO = [("a", "openai-chat", "complete", "xyz"), ("b", "openai-chat", "complete", "1234")]


def lines(records: Iterable[Any]) -> bytes:
    """JSON lines of ``records`` (bytes are written as they are)."""
    return b"".join(
        (r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records
    )


def decodable(fmt: str, packed: bytes) -> int:
    """How many bytes the standard library's decoder (``zstandard`` for zstd) gives for a
    damaged compressed blob before it stops: where a batch error says reading stopped."""
    decoders = {
        "gzip": lambda: zlib.decompressobj(wbits=31),
        "zstd": lambda: zstandard.ZstdDecompressor().decompressobj(),
        "bzip2": bz2.BZ2Decompressor,
        "xz": lzma.LZMADecompressor,
    }
    try:
        return len(decoders[fmt]().decompress(packed))
    except Exception:  # the blob's damage is before anything decodes
        return 0


def write(path: Path, data: bytes, compress: str | None = None) -> str:
    path.write_bytes(data if compress is None else COMPRESSORS[compress](data))
    return str(path)


def summary(results: Iterable[Any]) -> list[tuple[Any, ...]]:
    """(key, provider, status, content of choice 0 or the error) of each result."""
    return [
        (r.key, r.provider, r.status, r.error if r.message is None else r.message.content)
        for r in results
    ]


def run(batch: ModuleType, paths: Any, **options: Any) -> list[tuple[Any, ...]]:
    """The :func:`summary` of ``batch.merge_logs(paths, **options)``, wrapper records
    (``stream_id``, ``event``) unless the options say otherwise."""
    options.setdefault("group_by", "stream_id")
    options.setdefault("event", "event")
    return summary(batch.merge_logs(paths, **options))


def dumped(results: Iterable[Any]) -> list[bytes]:
    """Each result's record as orjson bytes (the byte-identity the backends promise)."""
    return [orjson.dumps(r.record()) for r in results]


def aggregated(aggregate_module: ModuleType, events: list[Any]) -> list[bytes] | str:
    """``aggregate_choices`` of a stream's events given as their JSON text (or the text of a
    string event), one ``add`` each: the messages' ``to_dict()`` as orjson bytes, or the
    error's message."""
    agg = aggregate_module.Aggregator()
    try:
        for event in events:
            agg.add(event if isinstance(event, str) else json.dumps(event))
        return [orjson.dumps(m.to_dict()) for m in agg.finish_choices()]
    except ValueError as exc:
        return str(exc)


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*/*.jsonl"))


def corpus_events() -> dict[str, list[Any]]:
    """Each corpus stream's events (the JSON value of each line), by folder/name."""
    out = {}
    for path in corpus_files():
        text = path.read_text(encoding="utf-8")
        out[f"{path.parent.name}/{path.stem}"] = [
            json.loads(line) for line in text.splitlines() if line.strip()
        ]
    return out


def generated_log(streams: int, size: int) -> bytes:
    """A gateway log from tools/gen_log.py (seeded: the same bytes on every run)."""
    spec = importlib.util.spec_from_file_location("gen_log", ROOT / "tools" / "gen_log.py")
    assert spec is not None and spec.loader is not None
    gen_log = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_log)
    return b"".join(gen_log.records(streams, size, 16, 7))


def drain(core: Any) -> list[tuple[Any, ...]]:
    """Every item of a core (``next()`` until ``StopIteration``)."""
    items = []
    while True:
        try:
            item = core.next()
        except StopIteration:
            return items
        assert item is not None  # no timeout: never None
        items.append(item)
