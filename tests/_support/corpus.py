"""The recorded provider streams of ``tests/corpus`` and how the conformance tests read them:
aggregate a stream on both backends, compare the results byte for byte, compare a rendered
message with the ``.expected.json`` subset and the ``.nonstream.json`` shape.

``tests/corpus`` is a byte-for-byte copy of the project's conformance corpus
(``../shared/corpus``, recorded by third parties: see ``tests/corpus/SOURCES.md`` for every
source and its license), in the repository so that a clone's tests need nothing beside it.
``test_corpus_sync.py`` keeps the copy equal to ``../shared/corpus`` where that folder exists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
from conftest import AGGREGATES, BACKENDS

from _support.kinds import CORPUS
from _support.kinds import KINDS as KINDS  # the conformance tests import it from here

#: The upstream corpus the copy follows (absent in a plain clone).
SHARED_CORPUS = (Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus").resolve()


def streams(kind: str) -> list[Path]:
    """The ``.jsonl`` streams of one corpus folder."""
    folder = CORPUS / kind
    assert folder.is_dir(), f"no corpus folder {folder}"
    return sorted(folder.glob("*.jsonl"))


def stream_ids(kind: str) -> list[str]:
    """Names of the streams of ``kind``, for parametrize ids."""
    return [p.stem for p in streams(kind)]


def path_of(kind: str, name: str) -> Path:
    """The stream ``name`` of ``kind``."""
    return CORPUS / kind / f"{name}.jsonl"


def sibling(path: Path, suffix: str) -> Any | None:
    """The ``<name>.expected.json`` / ``<name>.nonstream.json`` beside a stream, parsed."""
    other = path.with_name(path.stem + suffix)
    return json.loads(other.read_text(encoding="utf-8")) if other.exists() else None


def aggregate_choices(backend: str, path: Path, provider: str = "auto", **options: Any) -> Any:
    """The messages of one recorded stream on ``backend``, from its raw bytes."""
    module = AGGREGATES[backend]
    return module.aggregate_choices(path.read_bytes(), provider, **options)


def dumps(messages: Any) -> bytes:
    return orjson.dumps([m.to_dict() for m in messages], option=orjson.OPT_SORT_KEYS)


def aggregate_both(path: Path, provider: str = "auto", **options: Any) -> list[Any]:
    """The messages of a stream, checked byte-identical on every backend under test (from
    the raw bytes, and from the events as dicts); returns the first backend's."""
    results = {name: aggregate_choices(name, path, provider, **options) for name in BACKENDS}
    first = next(iter(results.values()))
    reference = dumps(first)
    for name, messages in results.items():
        assert dumps(messages) == reference, f"{name} differs from {BACKENDS[0]} on {path.name}"
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for name in BACKENDS:
        from_dicts = AGGREGATES[name].aggregate_choices(events, provider, **options)
        assert dumps(from_dicts) == reference, f"{name}: dict events differ from bytes"
    return list(first)


def assert_subset(expected: Any, actual: Any, path: str = "$") -> None:
    """Every field ``expected`` holds is in ``actual`` with the same value (dicts compare on
    expected's keys, lists item by item and in length)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{path}: missing key {key!r} (have {sorted(actual)})"
            assert_subset(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list), f"{path}: expected a list, got {actual!r}"
        assert len(actual) == len(expected), (
            f"{path}: {len(actual)} items, expected {len(expected)}"
        )
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_subset(e, a, f"{path}[{i}]")
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__


def assert_same_structure(nonstream: Any, rendered: Any, path: str = "$", ignore=()) -> None:
    """``rendered`` has the shape of ``nonstream`` (a separate generation): the same keys
    (except those in ``ignore``), list items of the same kinds in the same order where they
    are typed objects (``type`` keys), and the same value types (null matches anything)."""
    if isinstance(nonstream, dict):
        assert isinstance(rendered, dict), f"{path}: expected an object, got {rendered!r}"
        missing = [k for k in nonstream if k not in rendered and k not in ignore]
        assert not missing, f"{path}: missing keys {missing}"
        for key, value in nonstream.items():
            if key in rendered and key not in ignore:
                assert_same_structure(value, rendered[key], f"{path}.{key}", ignore)
    elif isinstance(nonstream, list):
        assert isinstance(rendered, list), f"{path}: expected a list, got {rendered!r}"
        kinds = [i.get("type") for i in nonstream if isinstance(i, dict)]
        if kinds and all(k is not None for k in kinds):
            got = [i.get("type") for i in rendered if isinstance(i, dict)]
            assert got == kinds, f"{path}: item kinds {got} != {kinds}"
            for i, (e, a) in enumerate(zip(nonstream, rendered)):
                assert_same_structure(e, a, f"{path}[{i}]", ignore)
    elif nonstream is not None and rendered is not None:
        ok = type(rendered) is type(nonstream) or (
            isinstance(nonstream, (int, float)) and isinstance(rendered, (int, float))
        )
        assert ok, (
            f"{path}: {type(rendered).__name__} where nonstream has {type(nonstream).__name__}"
        )


def _outcome(backend: str, events: Any, provider: str, **options: Any) -> Any:
    """The messages' JSON text (key order included), or the exception's class and text."""
    try:
        messages = AGGREGATES[backend].aggregate_choices(events, provider, **options)
    except ValueError as exc:  # MergeError and the argument errors
        return (type(exc).__name__, str(exc))
    return json.dumps([m.to_dict() for m in messages])


def assert_backends_agree(events: list[Any], provider: str, **options: Any) -> None:
    """Every backend gives the same messages or the same error for ``events``, as dicts and as
    JSON lines."""
    lines = b"".join(json.dumps(e).encode() + b"\n" for e in events)
    for given in (events, lines):
        outcomes = [_outcome(name, given, provider, **options) for name in BACKENDS]
        assert all(o == outcomes[0] for o in outcomes)
