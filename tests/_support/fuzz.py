"""The differential fuzz's inputs and runners (``test_fuzz_differential.py``): provider streams
made from the corpus (``tests/corpus/**/*.jsonl`` as seeds) and damaged, batch logs of them
with random wrappers, keys, compression and damage, and the outcome of each backend on them
as plain values to compare.

Every input is drawn from hypothesis strategies (so a difference shrinks to a small input)
and described by plain data (mutations as tuples), so the failing input prints as a Python
literal that rebuilds it.

``FASTMERGE_FUZZ_EXAMPLES`` sets how many inputs each fuzz test draws (the test command runs a
smoke budget; ``make fuzz`` runs the long one).
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Mapping

import zstandard
from hypothesis import strategies as st

from _support.corpus import CORPUS

#: Inputs each fuzz test draws: the environment's ``FASTMERGE_FUZZ_EXAMPLES``, else ``smoke``.
_ENV = os.environ.get("FASTMERGE_FUZZ_EXAMPLES", "").strip()


def examples(smoke: int) -> int:
    return int(_ENV) if _ENV else smoke


#: The seeds: every recorded stream, as its lines (without line ends).
SEEDS: dict[str, list[bytes]] = {
    str(path.relative_to(CORPUS)): path.read_bytes().splitlines()
    for path in sorted(CORPUS.glob("**/*.jsonl"))
}
SEED_NAMES = sorted(SEEDS)

# -- values that replace a part of an event (the shapes a provider never sends)

HOSTILE: list[Any] = [
    None,
    [],
    {},
    [None],
    [{}],
    0,
    -1,
    1.5,
    2**64,
    "",
    "x",
    "\ud800",
    True,
    {"type": None},
    {"index": -1},
    {"index": "0"},
    [{"index": 0}],
    "[DONE]",
]


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value, in document order (the root first)."""
    out = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*at, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*at, index)))
    return out


def _replace(value: Any, at: tuple[Any, ...], new: Any) -> Any:
    if not at:
        return new
    head, rest = at[0], at[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _reshape(line: bytes, place: int, new: Any) -> bytes:
    """``line`` with the value at its ``place``-th place (modulo their number) replaced."""
    try:
        value = json.loads(line)
    except ValueError:
        return line
    places = _paths(value)
    return json.dumps(_replace(value, places[place % len(places)], new)).encode()


def mutate(lines: list[bytes], mutations: list[tuple[Any, ...]]) -> bytes:
    """The stream text of ``lines`` after ``mutations`` (see :func:`mutations`)."""
    lines = list(lines)
    tail: list[tuple[Any, ...]] = []
    for op, *args in mutations:
        n = len(lines)
        if op in ("flip", "cut"):
            tail.append((op, *args))
        elif not n:
            continue
        elif op == "drop":
            del lines[args[0] % n]
        elif op == "dup":
            lines.insert(args[0] % n, lines[args[0] % n])
        elif op == "swap":
            i, j = args[0] % n, args[1] % n
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "shape":
            i = args[0] % n
            lines[i] = _reshape(lines[i], args[1], args[2])
    data = b"".join(line + b"\n" for line in lines)
    for op, *args in tail:
        if not data:
            break
        if op == "flip":
            at = args[0] % len(data)
            data = data[:at] + bytes([data[at] ^ (1 << args[1])]) + data[at + 1 :]
        else:
            data = data[: args[0] % (len(data) + 1)]
    return data


_index = st.integers(0, 1 << 16)
MUTATION = st.one_of(
    st.tuples(st.just("flip"), _index, st.integers(0, 7)),
    st.tuples(st.just("cut"), _index),
    st.tuples(st.just("drop"), _index),
    st.tuples(st.just("dup"), _index),
    st.tuples(st.just("swap"), _index, _index),
    st.tuples(st.just("shape"), _index, _index, st.sampled_from(HOSTILE)),
)


#: How a stream's events are framed: JSON lines (as recorded), SSE ``data:`` events (CRLF or
#: LF, some with an ``event:`` line), a JSON array.
FORMS = ["jsonl", "sse", "sse-crlf", "array"]


@st.composite
def streams(draw: Any) -> tuple[str, int, list[tuple[Any, ...]], str]:
    """A corpus stream (its first ``size`` lines), the mutations to make of it (of its lines
    and bytes, in the form it is framed in)."""
    name = draw(st.sampled_from(SEED_NAMES))
    size = draw(st.integers(1, 60))
    return name, size, draw(st.lists(MUTATION, max_size=4)), draw(st.sampled_from(FORMS))


def framed(lines: list[bytes], form: str) -> list[bytes]:
    """The lines of a stream framed in ``form`` (see :data:`FORMS`)."""
    if form == "array":
        return [
            b"[",
            *(line + (b"," if i < len(lines) - 1 else b"") for i, line in enumerate(lines)),
            b"]",
        ]
    if form.startswith("sse"):
        end = b"\r" if form == "sse-crlf" else b""
        out = []
        for i, line in enumerate(lines):
            if i % 3 == 1:
                out.append(b"event: message" + end)
            out += [b"data: " + line + end, end]
        return out
    return lines


def stream_bytes(spec: tuple[Any, ...]) -> bytes:
    name, size, mutations, *form = spec
    return mutate(framed(SEEDS[name][:size], form[0] if form else "jsonl"), mutations)


# -- what each backend gives


def plain(value: Any) -> Any:
    """``json.dumps``' default: a message's data as the dict it reads as (the Rust backend
    hands out a read-only ``Mapping``, ``MessageData``), anything else as its repr."""
    return dict(value) if isinstance(value, Mapping) else repr(value)


def folded(module: ModuleType, data: bytes, pieces: list[int] | None = None) -> Any:
    """``AggregatorCore.feed`` of ``data`` (whole, or cut at ``pieces``) then ``finish()``:
    the choices, or the exception's class and message."""
    try:
        core = module.AggregatorCore()
        start = 0
        for cut in sorted(pieces or []):
            core.feed(data[start:cut])
            start = cut
        core.feed(data[start:])
        return ("ok", json.dumps(core.finish(), sort_keys=False, default=plain))
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome
        return ("raise", type(exc).__name__, str(exc))


def items(module: ModuleType, paths: list[str], **options: Any) -> list[Any]:
    """Every item of a ``BatchCore`` (with its place) as plain values, then the exception that
    stopped it (class and message), if any."""
    out: list[Any] = []
    try:
        core = module.BatchCore(paths, positions=True, **options)
        while True:
            try:
                item = core.next()
            except StopIteration:
                break
            out.append(json.loads(json.dumps(item, default=plain)))
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome
        out.append(("raise", type(exc).__name__, str(exc)))
    return out


# -- batch logs

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda data: gzip.compress(data, mtime=0),
    "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
    "bzip2": bz2.compress,
    "xz": lzma.compress,
}
#: Where the stream key, the event and the order value go in a record: (group_by, its
#: segments, event, its segments or None (the record is the event), order_by).
WRAPPERS: list[tuple[str, tuple[str, ...], str | None, tuple[str, ...], str | None]] = [
    ("sid", ("sid",), "event", ("event",), None),
    ("meta.sid", ("meta", "sid"), "data.event", ("data", "event"), None),
    ("/a~1b", ("a/b",), "/e", ("e",), None),
    ("sid", ("sid",), "event", ("event",), "seq"),
    ("/meta/0", ("meta", "0"), "event", ("event",), "/seq"),
    ("_sid", ("_sid",), None, (), None),
]
KEYS = st.sampled_from(["s0", "s1", "", "é/ü", "[DONE]", 7, 0, -3, 2**40])
#: Damage done to a log's stored bytes: after compression, a cut (truncation), bytes appended
#: (null bytes, garbage, a member's start) or up to 16 bytes flipped (inside a member of a
#: compressed file: the backends decode it in the same steps); before it, a flipped byte of
#: the text.
DAMAGE = st.one_of(
    st.just(("none",)),
    st.tuples(st.just("cut"), _index),
    st.tuples(st.just("garble"), _index, st.integers(1, 16)),
    st.tuples(
        st.just("tail"),
        st.sampled_from([b"\0", b"\0" * 4, b"\0" * 7, b"garbage!", b"\x1f\x8b", b"\xfd7z", b"BZ"]),
    ),
    st.tuples(st.just("flip"), _index, st.integers(0, 7)),
)


def _put(record: dict[str, Any], at: tuple[str, ...], value: Any) -> None:
    """Sets ``value`` at ``at`` in ``record``, making objects (or, for a digit segment, an
    array) on the way."""
    for i, segment in enumerate(at[:-1]):
        nxt = at[i + 1]
        if segment not in record:
            record[segment] = [None] if nxt.isdigit() else {}
        record = record[segment]
    last = at[-1]
    if isinstance(record, list):
        record[int(last)] = value
    else:
        record[last] = value


@st.composite
def logs(draw: Any) -> dict[str, Any]:
    """A batch log: events of up to three streams (corpus streams, maybe damaged) under keys,
    interleaved, in a wrapper, across one or two files, each stored plain or compressed (in
    one or more members), maybe damaged."""
    count = draw(st.integers(1, 3))
    keys = draw(st.lists(KEYS, min_size=count, max_size=count))
    specs = [draw(streams()) for _ in range(count)]
    order = draw(st.lists(st.integers(0, count - 1), max_size=120))
    extra = draw(
        st.lists(
            st.tuples(_index, st.sampled_from([b"", b"  \r", b"not json", b"[1]", b'{"x":1}'])),
            max_size=3,
        )
    )
    return {
        "keys": keys,
        "streams": specs,
        "order": order,
        "wrapper": draw(st.integers(0, len(WRAPPERS) - 1)),
        "as_text": draw(st.booleans()),
        "extra": extra,
        "crlf": draw(st.booleans()),
        "bom": draw(st.booleans()),
        "files": draw(st.integers(1, 2)),
        "compress": draw(st.sampled_from([None, *COMPRESS])),
        "members": draw(st.integers(1, 3)),
        "damage": draw(DAMAGE),
    }


def log_records(spec: dict[str, Any]) -> tuple[list[bytes], dict[Any, list[Any]] | None]:
    """The log's lines, and each key's (order value, event) pairs in order (None when a line
    is not plain JSON written here: a damaged event, a junk line)."""
    group_by, key_at, event, event_at, order_by = WRAPPERS[spec["wrapper"]]
    queues = []
    for name, size, mutations, *_ in spec["streams"]:
        text = mutate(SEEDS[name][:size], mutations)
        queues.append([line for line in text.split(b"\n") if line.strip()])
    events: dict[Any, list[Any]] | None = {}
    out: list[bytes] = []
    seq: dict[int, int] = {}
    taken = [0] * len(queues)
    # the drawn order first, then what is left of each stream
    order = list(spec["order"]) + [i for i, q in enumerate(queues) for _ in q]
    for which in order:
        if taken[which] >= len(queues[which]):
            continue
        line = queues[which][taken[which]]
        taken[which] += 1
        try:
            value: Any = json.loads(line)
        except ValueError:
            value = line.decode("utf-8", "replace")
            events = None
        if spec["as_text"] or event is None and not isinstance(value, dict):
            value = line.decode("utf-8", "replace")
            if event is None:
                events = None  # a record must be an object
        key = spec["keys"][which]
        n = seq[which] = seq.get(which, -1) + 1
        if event is None:
            record = dict(value) if isinstance(value, dict) else {"text": value}
            _put(record, key_at, key)
        else:
            record = {}
            _put(record, key_at, key)
            _put(record, event_at, value)
        if order_by is not None:
            _put(record, tuple(order_by.strip("/").split("/")), n)
        if events is not None:
            events.setdefault(key, []).append((n, record if event is None else value))
        out.append(json.dumps(record).encode())
    for at, junk in spec["extra"]:
        out.insert(at % (len(out) + 1), junk)
        if junk.strip():
            events = None
    return out, events


def log_files(spec: dict[str, Any], folder: Path) -> tuple[list[str], bool]:
    """The log written to ``folder``; whether its bytes are as written (no damage)."""
    lines, _ = log_records(spec)
    end = b"\r\n" if spec["crlf"] else b"\n"
    files = spec["files"]
    cut = len(lines) // 2 if files == 2 else len(lines)
    parts = [lines[:cut], lines[cut:]][:files]
    paths = []
    whole = spec["damage"][0] == "none"
    for i, part in enumerate(parts):
        text = b"".join(line + end for line in part)
        if i == 0 and spec["bom"]:
            text = b"\xef\xbb\xbf" + text
        damage = spec["damage"] if i == len(parts) - 1 else ("none",)
        if damage[0] == "flip" and text:
            at = damage[1] % len(text)
            text = text[:at] + bytes([text[at] ^ (1 << damage[2])]) + text[at + 1 :]
        data = text
        fmt = spec["compress"]
        if fmt is not None:
            step = max(1, -(-len(text) // spec["members"]))
            pieces = [text[j : j + step] for j in range(0, len(text), step)] or [b""]
            data = b"".join(COMPRESS[fmt](piece) for piece in pieces)
        if damage[0] == "cut":
            data = data[: damage[1] % (len(data) + 1)]
        elif damage[0] == "tail":
            data += damage[1]
        elif damage[0] == "garble" and data:
            at = damage[1] % len(data)
            data = (
                data[:at]
                + bytes(b ^ 0xFF for b in data[at : at + damage[2]])
                + data[at + damage[2] :]
            )
        path = folder / f"log{i}.bin"
        path.write_bytes(data)
        paths.append(str(path))
    return paths, whole


def options_of(spec: dict[str, Any]) -> dict[str, Any]:
    group_by, _, event, _, order_by = WRAPPERS[spec["wrapper"]]
    return {"group_by": group_by, "event": event, "order_by": order_by}


def aggregated(module: ModuleType, events: list[Any]) -> tuple[Any, Any]:
    """What a fresh ``AggregatorCore`` gives for a stream's events, fed as the batch feeds
    them (an object with ``add``, a string with ``add_text``, ``[DONE]`` not at all): the
    choices, or the error's message."""
    core = module.AggregatorCore()
    try:
        for event in events:
            if isinstance(event, str):
                if event.strip(" \t\r\n") == "[DONE]":
                    continue
                core.add_text(event)
            else:
                core.add(event)
        return core.provider, json.loads(json.dumps(core.finish(), default=plain))
    except ValueError as exc:
        return core.provider, str(exc)
