"""The implementations compared, the data sets, and their reference results.

Implementations (the ``impl`` parameter):

- ``rust``: the compiled extension ``fastmerge._fastmerge``;
- ``twin``: the pure-Python twin ``fastmerge._pure``;
- ``openjiuwen``: openJiuwen's ``merge_parser_content`` (per call for ``merge``,
  ``functools.reduce`` of it for ``merge_all``), the function fastmerge is a drop-in for.

Each implementation is loaded directly, whatever ``FASTMERGE_BACKEND`` says, so one run compares
all three. A missing extension skips the ``rust`` benchmarks, except with
``FASTMERGE_BACKEND=rust`` (CI, ``make bench``), where it is an error. openJiuwen is loaded from
its schema modules by ``tests/_openjiuwen.py`` (``pip install --no-deps openjiuwen``).

Every benchmark checks its result against the data set's reference result (the openJiuwen
result, computed once per session) before it is timed.
"""

from __future__ import annotations

import functools
import json
import os
import random
import string
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import orjson
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _openjiuwen import load as load_openjiuwen  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # auto without the extension warns; we load both ourselves
    from fastmerge import _backend

REQUESTED = os.environ.get("FASTMERGE_BACKEND", "auto").strip().lower() or "auto"
IMPLS = ("rust", "twin", "openjiuwen")
#: The two sizes of the merge_all benchmarks.
SIZES = (1_000, 20_000)
SEED = 20240926


# ---------------------------------------------------------------------------------------------
# Implementations


@dataclass(frozen=True)
class Impl:
    """One implementation under comparison: a pairwise ``merge`` and a fold ``merge_all``."""

    name: str
    merge: Callable[[Any, Any], Any]
    merge_all: Callable[[list[Any]], Any]


@functools.cache
def _load_rust() -> ModuleType | str:
    """The extension, or why it cannot be benchmarked."""
    try:
        module = _backend.load("rust")
    except ImportError as exc:
        return f"the Rust extension does not load: {exc}"
    missing = [name for name in _backend.API if not hasattr(module, name)]
    if missing:
        return f"the Rust extension lacks {', '.join(missing)} (stale build?)"
    return module


def load_impl(name: str) -> Impl:
    """The implementation ``name``; skips (or fails, for a required backend) if unavailable."""
    if name == "rust":
        module = _load_rust()
        if isinstance(module, str):
            if REQUESTED == "rust":
                pytest.fail(f"FASTMERGE_BACKEND=rust but {module}")
            pytest.skip(module)
        return Impl("rust", module.merge, module.merge_all)
    if name == "twin":
        twin = _backend.load("python")
        return Impl("twin", twin.merge, twin.merge_all)
    if name == "openjiuwen":
        oj = load_openjiuwen()
        if oj is None:
            pytest.skip("openjiuwen is not installed (pip install --no-deps openjiuwen)")
        merge = oj.merge_parser_content
        return Impl("openjiuwen", merge, functools.partial(functools.reduce, merge))
    raise ValueError(name)


# ---------------------------------------------------------------------------------------------
# Data sets


@dataclass
class Dataset:
    """Inputs of one benchmark group, built on first use, with their reference result."""

    id: str
    title: str
    kind: str  # "merge" (args = left, right) or "merge_all" (args = items,)
    shape: str
    size: int
    build: Callable[[], tuple[Any, ...]]
    _args: tuple[Any, ...] | None = field(default=None, repr=False)
    _expected: bytes | None = field(default=None, repr=False)

    @property
    def args(self) -> tuple[Any, ...]:
        if self._args is None:
            self._args = self.build()
        return self._args

    def expected(self) -> bytes:
        """Canonical bytes of openJiuwen's result on these inputs (computed once)."""
        if self._expected is None:
            self._expected = canonical(self._reference())
        return self._expected

    def _reference(self) -> Any:
        if self.shape == "str200" and self.kind == "merge_all":
            # openJiuwen's rule for str + str is concatenation, so its reduce is a join; the
            # reduce itself takes ~30 s at 20,000 strings (quadratic copying).
            # test_str_reference_is_openjiuwen_reduce checks the two agree at 1,000.
            return "".join(self.args[0])
        oj = load_impl("openjiuwen")
        return oj.merge(*self.args) if self.kind == "merge" else oj.merge_all(*self.args)


def canonical(value: Any) -> bytes:
    """Type-exact bytes of a JSON-shaped result: key order and ``1`` vs ``1.0`` count."""
    return orjson.dumps(value)


def _corpus_lines(name: str) -> list[dict[str, Any]]:
    with (ROOT / "examples" / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _text(rng: random.Random, size: int) -> str:
    return "".join(rng.choices(string.ascii_letters + "      .,", k=size))


def _openai_pair() -> tuple[Any, ...]:
    """Two consecutive real chunks of a tool-call stream (nested deltas)."""
    lines = _corpus_lines("openai_tool_call_deltas.jsonl")
    return (lines[0], lines[1])


def _nested_dict(rng: random.Random, depth: int, width: int) -> dict[str, Any]:
    node: dict[str, Any] = {}
    for i in range(width):
        if depth > 1:
            node[f"k{i}"] = _nested_dict(rng, depth - 1, width)
        else:
            node[f"s{i}"] = _text(rng, 16)
    node["list"] = [rng.randrange(1000) for _ in range(4)]
    node["n"] = rng.randrange(1000)
    node["none"] = None
    return node


def _nested_pair() -> tuple[Any, ...]:
    """Two dicts of the same shape, 4 levels of 4 sub-dicts, str/list/int/None leaves."""
    rng = random.Random(SEED)
    return (_nested_dict(rng, 4, 4), _nested_dict(rng, 4, 4))


def _str_deltas(n: int) -> tuple[Any, ...]:
    rng = random.Random(SEED)
    return ([_text(rng, 200) for _ in range(n)],)


def _chunk_deltas(n: int) -> tuple[Any, ...]:
    """n OpenAI chat.completion.chunk dicts shaped like a real stream's content chunks."""
    template = _corpus_lines("openai_chat_deltas.jsonl")[2]
    rng = random.Random(SEED)
    chunks = []
    for _ in range(n):
        chunk = json.loads(json.dumps(template))
        chunk["choices"][0]["delta"]["content"] = _text(rng, rng.randrange(2, 9))
        chunks.append(chunk)
    return (chunks,)


MERGE_DATASETS = [
    Dataset(
        "openai_chunk_pair",
        "merge: two OpenAI tool-call chunks",
        "merge",
        "openai_chunk",
        2,
        _openai_pair,
    ),
    Dataset(
        "nested_dicts",
        "merge: nested dicts (4 levels x 4)",
        "merge",
        "nested",
        2,
        _nested_pair,
    ),
]
MERGE_ALL_DATASETS = [
    Dataset(
        f"{shape}x{n}",
        f"merge_all: {n} {label}",
        "merge_all",
        shape,
        n,
        functools.partial(builder, n),
    )
    for shape, label, builder in (
        ("str200", "str deltas of 200 chars", _str_deltas),
        ("openai_chunk", "OpenAI chat chunks", _chunk_deltas),
    )
    for n in SIZES
]
