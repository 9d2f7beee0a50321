"""``fastmerge bench`` on real logs, on both backends: the corpus's streams as one log end with
a table and exit 0, a stream the naive reduce reads differently is a counted row (never the end
of the report), the table names the build profile and each engine's best, median and worst
round, and a progress line is drawn on a terminal.

The bench runs the Rust engine and the twin whichever backend the test runs on; the tests skip
only where the extension is not built."""

from __future__ import annotations

import os
import re
import types
from pathlib import Path
from typing import Any

import pytest
from _support.batch import batch_module, chat, corpus_events, interleave, lines, wrap, write
from _support.corpus import CORPUS
from conftest import EXTENSION_INSTALLED

import fastmerge
from fastmerge import _backend, cli
from fastmerge.cli import bench as cli_bench

pytestmark = pytest.mark.skipif(
    not EXTENSION_INSTALLED, reason="fastmerge bench compares the Rust engine with the twin"
)

WRAPPED = ["--group-by", "stream_id", "--event", "event"]

#: The corpus streams whose text and tool-call arguments a hand-written join reads otherwise:
#: Anthropic's server tools (web search, MCP, code execution, tool search), whose input is no
#: tool call, and LM Studio's Responses arguments, sent whole rather than in deltas.
DIFFER = [
    "anthropic_messages/sonnet4-thinking-web-search-citations",
    "anthropic_messages/sonnet4-web-search-many-citation-blocks",
    "anthropic_messages/sonnet45-thinking-mcp-tool-use-result",
    "anthropic_messages/sonnet46-thinking-bash-code-execution",
    "anthropic_messages/sonnet46-tool-search-then-client-tool-use",
    "openai_responses/lmstudio-glm47-flash-reasoning-text-function-call",
]
WHY = (
    "(it joins every fragment it sees; the engines follow each provider's rules, e.g. a server "
    "tool's input is no tool call's arguments, and arguments sent whole count)"
)
ROW = re.compile(
    r"\| (?P<name>[^|]+) \| (?P<best>[\d.]+ m?s) \| (?P<median>[\d.]+ m?s) \| "
    r"(?P<worst>[\d.]+ m?s) \| [\d,]+ \| [\d.]+× \|"
)


@pytest.fixture(autouse=True)
def batch(backend_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's option checks run on this test's backend."""
    monkeypatch.setattr(fastmerge, "batch", batch_module(backend_name), raising=False)


def bench(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    """Exit status, stdout lines and stderr (without the debug build's warning)."""
    status = cli.main(["bench", *argv])
    out, err = capsys.readouterr()
    return status, out.splitlines(), err.replace(f"fastmerge: {cli_bench.DEBUG_WARNING}\n", "")


def seconds(text: str) -> float:
    number, unit = text.split()
    return float(number) / (1000 if unit == "ms" else 1)


@pytest.fixture(scope="module")
def corpus_log(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Every corpus stream, interleaved in one log of wrapper records."""
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    return write(path, lines(wrap(interleave(*corpus_events().items()))))


def test_bench_of_every_corpus_stream_ends_with_the_table(
    capsys: pytest.CaptureFixture[str], corpus_log: str
) -> None:
    status, out, err = bench(capsys, corpus_log, *WRAPPED, "--repeat", "2")
    assert (status, err) == (0, "")
    assert re.fullmatch(
        rf"fastmerge bench: {re.escape(corpus_log)} \(\d\.\d MB, \d+ events, 94 streams; "
        r"2 rounds each\)",
        out[0],
    )
    assert out[1:3] == [
        "| engine | best | median | worst | events/s | best / rust's |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    rows = [ROW.fullmatch(line) for line in out[3:6]]
    assert all(rows), out[3:6]
    profile = _backend.load("rust").BUILD_PROFILE
    assert profile in ("debug", "release")
    assert [row["name"] for row in rows if row] == [
        f"rust (BatchCore, {profile} build, {os.cpu_count()} jobs)",
        "twin (pure Python)",
        "naive reduce (json.loads + join)",
    ]
    for row in rows:
        assert row is not None
        times = [seconds(row[part]) for part in ("best", "median", "worst")]
        assert times == sorted(times)
    assert out[6] == (
        "agree: rust and twin give the same 94 records; the naive reduce gives the same text "
        "and tool-call arguments for 60 of the 66 streams it reads, and cannot read the others "
        "(bedrock-converse, gemini, ollama, openai-chat)"
    )
    named = ", ".join(f"{key!r} (tool-call arguments)" for key in DIFFER[:5])
    assert out[7] == (f"streams where the naive reduce differs: 6: {named}, and 1 more {WHY}")
    assert len(out) == 8


@pytest.mark.parametrize(
    ("stream", "differs"),
    [
        *((name, f"1: '{CORPUS / name}.jsonl' (tool-call arguments) {WHY}") for name in DIFFER),
        # the failed response's empty message holds no text or arguments, as the join reads it
        ("openai_responses/openai-response-failed-insufficient-quota", "0"),
    ],
)
def test_bench_a_stream_the_naive_reduce_reads_otherwise_is_a_counted_row(
    capsys: pytest.CaptureFixture[str], stream: str, differs: str
) -> None:
    status, out, err = bench(capsys, str(CORPUS / f"{stream}.jsonl"), "--repeat", "1")
    assert (status, err) == (0, "")
    read = "0 of 1" if differs != "0" else "1 of 1"
    assert out[6] == (
        "agree: rust and twin give the same 1 records; the naive reduce gives the same text "
        f"and tool-call arguments for {read} streams"
    )
    assert out[7] == f"streams where the naive reduce differs: {differs}"


def test_bench_the_engine_and_the_twin_disagreeing_is_still_an_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = _backend._copy

    def copy(base: str, name: str) -> Any:
        module = real(base, name)
        if name != "python":
            return module
        # a twin that loses the last stream
        return types.SimpleNamespace(
            merge_logs=lambda *a, **k: list(module.merge_logs(*a, **k))[:-1],
            json_line=module.json_line,
        )

    monkeypatch.setattr(_backend, "_copy", copy)
    log = write(
        tmp_path / "log.jsonl",
        lines(wrap(interleave(("a", chat("a", ["x"])), ("b", chat("b", ["y"]))))),
    )
    status, out, err = bench(capsys, log, *WRAPPED, "--repeat", "1")
    assert (status, out) == (1, [])
    assert err == (
        "fastmerge: error: the Rust engine and the twin disagree: please report it with the log\n"
    )


def test_bench_draws_its_progress_on_a_terminal_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = write(tmp_path / "log.jsonl", lines(wrap(interleave(("a", chat("a", ["x", "y"]))))))
    status, quiet_out, err = bench(capsys, log, *WRAPPED, "--repeat", "2")
    assert (status, err) == (0, "")  # not a terminal: no progress line
    monkeypatch.setattr(cli_bench, "_isatty", lambda stream: True)
    status, out, err = bench(capsys, log, *WRAPPED, "--repeat", "2")
    assert status == 0
    assert len(out) == len(quiet_out) and out[6:] == quiet_out[6:]
    for engine in ("rust", "twin"):
        for round_ in (1, 2):
            assert re.search(rf"\r{engine}, round {round_} of 2: [\d.]+ MB / [\d.]+ MB", err)
    count = len(Path(log).read_bytes().splitlines())
    for round_ in (1, 2):
        assert f"\rnaive reduce, round {round_} of 2: 0 of {count} lines (0%)\x1b[K" in err
    assert err.endswith("\r\x1b[K")  # cleared before the table
