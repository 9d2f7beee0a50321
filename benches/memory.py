"""Peak memory of merging one large OpenAI Chat text stream from bytes, as a multiple of the
input's size (the memory target: ``aggregate(bytes)`` ≤ 1.5×, ``feed`` in 64 KiB
blocks ≤ 0.3×).

    python benches/memory.py                  # 100 MB, both modes, the Rust backend
    python benches/memory.py --mb 20 --backend python

Rust allocations are invisible to tracemalloc, so each measurement is its own process reading
its peak resident set (``VmHWM``; ``ru_maxrss`` where there is no ``/proc``): it reads the
stream file into one bytes object, imports fastmerge and merges a small stream (so neither
counts), takes the peak so far as the baseline, merges the stream, and reports
(peak − baseline) / input size. The stream is the benchmarks' generated ``openai_text``
stream (``_streams.py``), its content chunks repeated up to the size asked.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
#: What each mode measures.
MODES = {
    "aggregate": "aggregate(bytes): the whole stream in one call",
    "feed": "Aggregator.feed in 64 KiB blocks",
}
BLOCK = 64 * 1024

CHILD = r"""
import json, resource, sys
path, mode, backend, block = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with open(path, "rb") as file:
    data = file.read()
import fastmerge._backend as _backend
agg = _backend.aggregate_module(backend)
agg.aggregate(data[: data.index(b"\n") + 1] * 2, "openai-chat")  # lazy set-up off the peak
def peak():
    # VmHWM is this process's own peak: ru_maxrss also counts the parent's RSS when it forked
    # (Linux keeps the pre-exec peak), which can be above this process's baseline
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
base = peak()
if mode == "aggregate":
    message = agg.aggregate(data, "openai-chat")
else:
    aggregator = agg.Aggregator("openai-chat")
    view = memoryview(data)
    for start in range(0, len(data), block):
        aggregator.feed(bytes(view[start : start + block]))
    message = aggregator.finish()
top = peak()
print(json.dumps({"input": len(data), "base": base, "peak": top, "text": len(message.content)}))
"""


def write_stream(path: Path, size: int) -> int:
    """Writes an OpenAI Chat text stream of about ``size`` bytes to ``path`` (JSON lines);
    returns the length of its merged text."""
    sys.path.insert(0, str(HERE))
    from _streams import _openai_text

    events, _ = _openai_text(False, 2_000)
    lines = [orjson.dumps(event) + b"\n" for event in events]
    head, body, tail = lines[0], lines[1:-2], lines[-2:]
    text = 0
    with open(path, "wb") as file:
        file.write(head)
        written = len(head) + sum(map(len, tail))
        i = 0
        while written < size:
            line = body[i % len(body)]
            file.write(line)
            written += len(line)
            text += len(events[1 + i % len(body)]["choices"][0]["delta"]["content"])
            i += 1
        file.writelines(tail)
    return text


def measure(path: Path, mode: str, backend: str, text: int) -> dict[str, float]:
    """One measurement in a fresh process: input size, baseline, peak (bytes) and the ratio."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), mode, backend, str(BLOCK)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "FASTMERGE_BACKEND": backend},
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    if result["text"] != text:
        raise AssertionError(f"{mode}: merged {result['text']} characters, expected {text}")
    result["ratio"] = (result["peak"] - result["base"]) / result["input"]
    return result


def main() -> None:
    """Prints the table: one row per mode."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100.0, help="stream size in MB (1e6 bytes)")
    parser.add_argument("--backend", default="rust", choices=("rust", "python"))
    parser.add_argument("--mode", action="append", choices=tuple(MODES))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stream.jsonl"
        text = write_stream(path, int(args.mb * 1e6))
        print(
            f"| {args.backend} backend, {args.mb:g} MB stream "
            "| baseline | peak − baseline | ×input |"
        )
        print("|---|---:|---:|---:|")
        for mode in args.mode or MODES:
            r = measure(path, mode, args.backend, text)
            above = (r["peak"] - r["base"]) / 1e6
            print(
                f"| {MODES[mode]} | {r['base'] / 1e6:.1f} MB | {above:.1f} MB | {r['ratio']:.2f}× |"
            )


if __name__ == "__main__":
    main()
