"""``merge_all`` beside a Python loop that only touches every key of the same dicts.

    python benches/merge_loop.py                 # on a release build: make build-prod
    python benches/merge_loop.py --size 1000 --repeat 41

The deltas are the benchmarks' 20,000 OpenAI chat chunks (``_bench.MERGE_ALL_DATASETS``, as
``make bench`` times them). The loop (``touch``) visits every key and value of every dict and
list in each chunk, recursively, and builds nothing: the least any reader of the same dicts
does. The two are timed in turn, ``--repeat`` times (interleaved: the machine's noise falls on
both alike), with the collector off around each sample as ``timeit`` does; each time is the
minimum of its samples (``--stat median`` for the median), and the ratio is ``merge_all``'s
time over the loop's, from one run. Before timing, ``merge_all``'s result is checked against
openJiuwen's (the data set's reference).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from _bench import MERGE_ALL_DATASETS, canonical, load_impl


def touch(value: Any) -> None:
    """Every key and value of `value`, recursively, and nothing else."""
    if isinstance(value, dict):
        for _key, item in value.items():
            touch(item)
    elif isinstance(value, list):
        for item in value:
            touch(item)


def touch_all(items: list[Any]) -> None:
    """The Python loop: :func:`touch` of every delta."""
    for item in items:
        touch(item)


def items_of(size: int) -> list[Any]:
    """The data set's deltas: ``size`` OpenAI chat chunks (``SIZES``: 1,000 or 20,000)."""
    dataset = next(d for d in MERGE_ALL_DATASETS if d.shape == "openai_chunk" and d.size == size)
    (items,) = dataset.args
    merged = load_impl("rust").merge_all(items)
    if canonical(merged) != dataset.expected():
        raise SystemExit("merge_all differs from openJiuwen's reduce on the data set")
    return items


def sample(fn: Callable[[], Any]) -> float:
    """One call's seconds, with the collector off (as ``timeit`` times)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()


def measure(size: int, repeat: int, stat: str) -> dict[str, float]:
    """Seconds of ``merge_all`` and of the loop on the same deltas, and their ratio."""
    items = items_of(size)
    merge_all = load_impl("rust").merge_all
    samples: dict[str, list[float]] = {"merge_all": [], "loop": []}
    for _ in range(repeat):
        samples["merge_all"].append(sample(lambda: merge_all(items)))
        samples["loop"].append(sample(lambda: touch_all(items)))
    pick = min if stat == "min" else statistics.median
    times = {name: pick(values) for name, values in samples.items()}
    return {**times, "ratio": times["merge_all"] / times["loop"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, choices=(1_000, 20_000), default=20_000)
    parser.add_argument("--repeat", type=int, default=21, help="samples of each (default 21)")
    parser.add_argument("--stat", choices=("min", "median"), default="min")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    result = measure(args.size, args.repeat, args.stat)
    print(
        f"merge_all of {args.size:,} OpenAI chat chunks: {result['merge_all'] * 1e3:.2f} ms; "
        f"a Python loop touching every key: {result['loop'] * 1e3:.2f} ms; "
        f"ratio {result['ratio']:.2f}x ({args.stat} of {args.repeat} interleaved samples)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
