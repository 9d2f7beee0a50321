"""Instructions per call, counted by valgrind's callgrind: repeatable on a noisy machine.

    python benches/instructions.py            # needs valgrind (apt-get install valgrind)

For each case it runs a small program twice under callgrind, building the same inputs, once
without and once with N calls (or one merge_all of N chunks), and prints (difference) / N: the
instructions one call (one chunk) costs, loop included; the ``stream`` case counts per event
of the benchmarks' 1,000-chunk openai_logprobs stream (N // 1,000 runs), against
``orjson.loads`` of its lines; the ``batch`` case counts per record of the small-record log
(``tools/gen_log.py --short N``, streams of 100 records, one job: the batch threads count
too), against each of its streams read alone by ``AggregatorCore`` (what ``aggregate``
does for one stream: the provider found, the messages made Python objects) and against the
same events read as one stream, per event. The ``corpus`` case (only when named: ``python
benches/instructions.py corpus``; N // 100 calls, at least 20) splits one
``aggregate(bytes, provider)`` call on two short corpus streams into its phases
(``corpus_phases``). PYTHONHASHSEED is fixed so
that dict probing is the same in every run. Wall-clock ratios are in ``make bench``;
this tells where the time goes when those ratios look surprising.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
N = int(os.environ.get("FASTMERGE_INSTRUCTIONS_N", "20000"))  # fewer: quicker, rougher

PROGRAM = r"""
import json, os, sys
sys.path.insert(0, {tests!r})
from _support import openjiuwen as _openjiuwen
import fastmerge._fastmerge as rust
import fastmerge._pure as twin

CHUNK = ('{{"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1735000000,'
         '"model":"gpt-4o-mini","system_fingerprint":"fp_0ba0d124f1","choices":[{{"index":0,'
         '"delta":{{"content":"%s"}},"logprobs":null,"finish_reason":null}}]}}')
case, impl, n, run = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "run"
if case == "merge":
    left, right = json.loads(CHUNK % "Hel"), json.loads(CHUNK % "lo")
    fn = {{"rust": rust.merge, "twin": twin.merge,
           "openjiuwen": _openjiuwen.load().merge_parser_content}}[impl]
    for _ in range(n if run else 0):
        fn(left, right)
elif case == "aggregate":
    # from bytes; rust-generic: every event parsed into values first (no typed fast path)
    if impl == "rust-generic":
        os.environ["FASTMERGE_GENERIC_EVENTS"] = "1"
    # a stream starts with the role, as every OpenAI stream does
    first = CHUNK.replace('{{"content":"%s"}}', '{{"role":"assistant","content":""}}')
    data = (first + "\n" + "".join(CHUNK % ("tok%d" % i) + "\n" for i in range(n))).encode()
    if run:
        core = rust.AggregatorCore("openai-chat")
        core.feed(data)
        core.finish()
elif case == "logprobs":
    # aggregate(bytes) of a text stream whose every chunk has a logprobs entry with 3
    # top_logprobs (benches' openai_logprobs), the message built and its logprobs read
    if impl == "rust-generic":
        os.environ["FASTMERGE_GENERIC_EVENTS"] = "1"
    def entry(i):
        top = [{{"token": "t%d" % (i + k), "logprob": -0.25 * k - 0.123456789,
                 "bytes": list(b"t%d" % (i + k))}} for k in range(3)]
        return {{"token": "t%d" % i, "logprob": -0.5123456789, "bytes": list(b"t%d" % i),
                "top_logprobs": top}}
    def chunk(i):
        choice = {{"index": 0, "delta": {{"content": "t%d" % i}},
                  "logprobs": {{"content": [entry(i)], "refusal": None}}, "finish_reason": None}}
        return json.dumps({{"id": "chatcmpl-AbC123", "object": "chat.completion.chunk",
                           "created": 1735000000, "model": "gpt-4o-mini", "choices": [choice]}},
                          separators=(",", ":"))
    # a stream starts with the role, as every OpenAI stream does
    first = chunk(0).replace('{{"content":"t0"}}', '{{"role":"assistant","content":""}}')
    data = (first + "\n" + "".join(chunk(i) + "\n" for i in range(n))).encode()
    import fastmerge
    # the first call imports the message modules: made either way, so that the difference is
    # the merge alone
    fastmerge.aggregate("".join(chunk(i) + "\n" for i in range(2)), "openai-chat").logprobs
    if run:
        fastmerge.aggregate(data, "openai-chat").logprobs["content"]
elif case == "stream":
    # the benchmarks' 1,000-chunk openai_logprobs stream (test_bench_streams.py), n // 1,000
    # times: aggregate(bytes) and message.logprobs (rust), or orjson.loads of every line
    sys.path.insert(0, {benches!r})
    from _streams import STREAMS
    import orjson
    import fastmerge
    stream = [s for s in STREAMS if s.shape == "openai_logprobs" and s.size == 1000][0]
    data, lines = stream.jsonl, stream.lines
    fastmerge.aggregate(data, "openai-chat").logprobs  # imports, as in the logprobs case
    for _ in range(n // 1000 if run else 0):
        if impl == "orjson":
            for line in lines:
                orjson.loads(line)
        else:
            fastmerge.aggregate(data, "openai-chat").logprobs["content"]
elif case == "batch":
    # the small-record log (gen_log --short: n records, streams of 100) as a batch with one
    # job, per record (rust); or the same events as one stream's bytes, per event (stream)
    import importlib.util, tempfile
    spec = importlib.util.spec_from_file_location("gen_log", {gen_log!r})
    gen_log = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_log)
    lines = list(gen_log.short_records(n, max(1, n // 100), 64, 20261204))
    if impl == "streams":
        # each stream of the log read alone, as aggregate reads it (its events' bytes, the
        # provider found from them, the messages made Python objects), per event
        by_key = {{}}
        for line in lines:
            record = json.loads(line)
            by_key.setdefault(record["stream_id"], []).append(record["event"])
        streams = [
            "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events).encode()
            for events in by_key.values()
        ]
        for data in streams if run else ():
            core = rust.AggregatorCore()
            core.feed(data)
            core.finish()
    elif impl == "stream":
        # one response: every event of the log, its id and time made one, a role chunk first
        events = [json.loads(line)["event"] for line in lines]
        for event in events:
            event["id"], event["created"] = "chatcmpl-000000", 1770933892
        head = [e for e in events if "role" in e["choices"][0]["delta"]][:1]
        body = [e for e in events if "content" in e["choices"][0]["delta"]]
        body = [e for e in body if "role" not in e["choices"][0]["delta"]]
        data = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in head + body)
        if run:
            core = rust.AggregatorCore("openai-chat")
            core.feed(data.encode())
            core.finish()
    else:
        with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as log:
            log.writelines(lines)
        core = rust.BatchCore([log.name], group_by="stream_id", event="event", jobs=1)
        while run:
            try:
                core.next()
            except StopIteration:
                break
        os.unlink(log.name)
elif case == "corpus":
    # one step of aggregate(bytes) on a corpus stream (impl: "<step>@<folder>/<name>"), n times;
    # every step runs once first in every program, so that lazy imports and first-call caches
    # are in the set-up that the "skip" program subtracts
    import importlib, orjson
    import fastmerge
    step, stream = impl.split("@")
    folder, name = stream.split("/")
    sys.path.insert(0, {benches!r})
    from _corpus import CORPUS, KINDS
    provider = KINDS[folder]
    data = (CORPUS / folder / (name + ".jsonl")).read_bytes()
    lines = [line for line in data.splitlines() if line.strip()]
    Core = rust.AggregatorCore
    from_data = importlib.import_module("fastmerge.aggregate").AssistantMessage._from_data
    def finish():
        core = Core(provider)
        core.feed(data)
        return core.finish()
    finished = finish()
    steps = {{
        "core": lambda: Core(provider),
        "feed": lambda: Core(provider).feed(data),
        "finish": finish,
        "one_call": lambda: Core.aggregate(data, provider),
        "message": lambda: from_data(finished[0]),
        "aggregate": lambda: fastmerge.aggregate(data, provider),
        "content": lambda: fastmerge.aggregate(data, provider).content,
        "to_dict": lambda: fastmerge.aggregate(data, provider).to_dict(),
        "auto": lambda: fastmerge.aggregate(data),
        "orjson": lambda: [orjson.loads(line) for line in lines],
    }}
    for fn in steps.values():
        fn()
    # the collector's passes would fall on other calls in each program: without it, each
    # difference is the step's own work
    import gc
    gc.disable()
    fn = steps[step]
    for _ in range(n if run else 0):
        fn()
else:
    items = [json.loads(CHUNK % ("tok%d" % i)) for i in range(n)]
    if run:
        (rust if impl == "rust" else twin).merge_all(items)
"""


def count(program: Path, *args: str) -> int:
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            str(program),
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    match = re.search(r"Collected : (\d+)", proc.stderr)
    if match is None:
        raise RuntimeError(proc.stderr[-2000:])
    return int(match.group(1))


#: The short corpus streams the ``corpus`` case splits: a 3-event Gemini stream and an OpenAI
#: Chat stream of the corpus' median length (17 events).
CORPUS_STREAMS = ("gemini/gemini20-flash-plain-text", "openai_chat/gpt4o-json-schema-content-usage")
#: The steps timed, each a whole program's loop (see PROGRAM's corpus case).
STEPS = (
    "core",
    "feed",
    "finish",
    "one_call",
    "message",
    "aggregate",
    "content",
    "to_dict",
    "auto",
    "orjson",
)


def corpus_phases(program: Path, n: int) -> None:
    """One ``aggregate(bytes, provider)`` call split into phases, per stream, by differencing
    programs that stop after each step (``_fastmerge.AggregatorCore``: construction, ``feed``,
    ``finish``, and its one-call ``aggregate``; then ``AssistantMessage._from_data`` of its data,
    the whole call, and the call followed by ``.content`` or ``.to_dict()``)."""
    os.environ["FASTMERGE_BACKEND"] = "rust"  # fastmerge.aggregate on the extension
    for stream in CORPUS_STREAMS:
        base = count(program, "corpus", f"core@{stream}", str(n), "skip")
        per = {
            step: (count(program, "corpus", f"{step}@{stream}", str(n), "run") - base) / n
            for step in STEPS
        }
        total = per["aggregate"]
        phases = [
            ("entering: the core made (AggregatorCore(provider))", per["core"]),
            (
                "entering: the Python wrapper (aggregate -> AggregatorCore.aggregate)",
                total - per["one_call"] - per["message"],
            ),
            (
                "detecting the format: an explicit provider detects only the transport "
                "(first byte), inside feed",
                None,
            ),
            ("reading events (JSON parse) + folding: feed(data)", per["feed"] - per["core"]),
            (
                "building the message data: finish() (its fields made when first read)",
                per["finish"] - per["feed"],
            ),
            ("building the Python message: AssistantMessage._from_data", per["message"]),
        ]
        print(f"  corpus {stream} ({len(_lines(stream))} events), per call:")
        for label, value in phases:
            shown = "   (inside feed)" if value is None else f"{value:10.0f}  {value / total:6.1%}"
            print(f"    {label:100} {shown}")
        print(f"    {'aggregate(bytes, provider) whole':100} {total:10.0f}  100.0%")
        for step, label in (("content", "then .content"), ("to_dict", "then .to_dict()")):
            read = per[step] - total
            print(f"    {'reading the message: ' + label:100} {read:10.0f}  {read / total:6.1%}")
        auto = per["auto"] - total
        print(
            f"    {'detecting the provider: aggregate(bytes) auto minus explicit':100} {auto:10.0f}"
        )
        print(f"    {'orjson.loads of its lines':100} {per['orjson']:10.0f}")
    print(
        "  reading and folding are one pass of feed() (each event is parsed and folded before "
        "the next is read): the exposed API cannot split them"
    )


def _lines(stream: str) -> list[bytes]:
    data = (ROOT / "tests" / "corpus" / f"{stream}.jsonl").read_bytes()
    return [line for line in data.splitlines() if line.strip()]


def main() -> None:
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    program = ROOT / ".benchmarks" / "instructions_program.py"
    program.parent.mkdir(exist_ok=True)
    program.write_text(
        PROGRAM.format(
            tests=str(ROOT / "tests"),
            benches=str(ROOT / "benches"),
            gen_log=str(ROOT / "tools" / "gen_log.py"),
        ),
        "utf-8",
    )
    print(f"instructions per call (callgrind, N = {N}, PYTHONHASHSEED=0)")
    cases = [("merge", impl) for impl in ("openjiuwen", "twin", "rust")]
    cases += [("merge_all", impl) for impl in ("twin", "rust")]
    cases += [("aggregate", impl) for impl in ("rust-generic", "rust")]
    cases += [("logprobs", impl) for impl in ("rust-generic", "rust")]
    cases += [("stream", impl) for impl in ("rust", "orjson")]
    cases += [("batch", impl) for impl in ("rust", "streams", "stream")]
    if len(sys.argv) > 1:  # only the cases named: python benches/instructions.py logprobs
        cases = [case for case in cases if case[0] in sys.argv[1:]]
    if "corpus" in sys.argv[1:]:
        corpus_phases(program, max(20, N // 100))
    for case, impl in cases:
        base = count(program, case, impl, str(N), "skip")
        total = count(program, case, impl, str(N), "run")
        unit = {"merge": "call", "stream": "event"}.get(case, "chunk")
        if case == "batch":
            unit = "record" if impl == "rust" else "event"
        print(f"  {case:9} {impl:10} {(total - base) / N:10.0f} per {unit}")


if __name__ == "__main__":
    main()
