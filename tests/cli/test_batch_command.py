"""``fastmerge batch`` on both backends: records out, summary, exit status, --output-dir DIR,
--errors-file, --quiet, the progress bar, and wrong inputs (never a silent empty result)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.batch import (
    COMPRESSORS,
    batch_module,
    chat,
    decodable,
    interleave,
    lines,
    wrap,
    write,
)
from conftest import PACKAGE_ROOT

import fastmerge
from fastmerge import cli


@pytest.fixture(autouse=True)
def batch(backend_name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The command runs on this test's backend (it imports ``fastmerge.batch`` when run)."""
    module = batch_module(backend_name)
    monkeypatch.setattr(fastmerge, "batch", module, raising=False)
    return module


def log(tmp_path: Path, *extra: Any, name: str = "log.jsonl") -> str:
    streams = interleave(("a", chat("a", ["x", "y"])), ("b", chat("b", ["z"])))
    return write(tmp_path / name, lines([*wrap(streams), *extra]))


WRAPPED = ["--group-by", "stream_id", "--event", "event"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[Any], str]:
    """Exit status, the JSON records on stdout, and stderr."""
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, [json.loads(line) for line in out.splitlines()], err


def test_records_and_summary_of_complete_streams_exit_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, records, err = run(capsys, "batch", log(tmp_path), *WRAPPED)
    assert status == 0
    assert [(r["key"], r["status"], r["message"]["parts"][0]["text"]) for r in records] == [
        ("b", "complete", "z"),
        ("a", "complete", "xy"),
    ]
    assert (
        err == "fastmerge: 2 streams (2 complete, 0 incomplete, 0 failed, 0 error); 0 bad lines\n"
    )


def test_an_incomplete_stream_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cut = wrap([("c", e) for e in chat("c", ["w"], usage=False)[:-1]])  # no finish, no usage
    status, records, err = run(capsys, "batch", log(tmp_path, *cut), *WRAPPED)
    assert status == 2
    assert [(r["key"], r["status"]) for r in records][-1] == ("c", "incomplete")
    assert err.endswith("(2 complete, 1 incomplete, 0 failed, 0 error); 0 bad lines\n")


def test_a_stream_that_cannot_be_merged_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, records, err = run(capsys, "batch", log(tmp_path, *wrap([("c", {"x": 1})])), *WRAPPED)
    assert status == 1
    assert records[-1]["status"] == "error"
    assert records[-1]["error"].startswith("no event could be read: event 1: cannot tell")
    # the summary, then why (the first stream without a message): not only inside the records
    summary_line, why = err.splitlines()
    assert summary_line.endswith(
        "3 streams (2 complete, 0 incomplete, 0 failed, 1 error); 0 bad lines"
    )
    assert why.startswith(
        "fastmerge: error: 1 stream could not be merged; the first, 'c': no event could be read: "
        "event 1: cannot tell the provider from this event (keys: 'x'); pass --provider one of"
    )


def test_a_bad_line_stops_the_run_by_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = log(tmp_path, b"{oops")
    status, records, err = run(capsys, "batch", path, *WRAPPED)
    assert status == 1
    assert len(records) == 2  # the streams that ended before it
    assert err == f"fastmerge: error: {path}:10: not valid JSON\n"


def test_skipped_bad_lines_are_counted_and_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, records, err = run(capsys, "batch", log(tmp_path, b"[]"), *WRAPPED, "--errors", "skip")
    assert status == 1
    assert len(records) == 2
    assert err.endswith("(2 complete, 0 incomplete, 0 failed, 0 error); 1 bad line\n")


def test_errors_file_gets_every_bad_line_and_stdout_every_stream(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = log(tmp_path, b"nope", {"stream_id": "a"}, *wrap([("d", e) for e in chat("d", ["q"])]))
    errors = tmp_path / "errors.txt"
    status, records, err = run(capsys, "batch", path, *WRAPPED, "--errors-file", str(errors))
    assert status == 1
    assert errors.read_text() == f"{path}:10: not valid JSON\n{path}:11: no event at event\n"
    assert [r["key"] for r in records] == ["b", "a", "d"]
    assert err.endswith("3 streams (3 complete, 0 incomplete, 0 failed, 0 error); 2 bad lines\n")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="a device that is always full")
def test_an_errors_file_that_cannot_be_written_is_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The bad lines are written when the file closes, after the run: a full disk there is
    one error line naming the file (it was a traceback), not a silent loss."""
    path = log(tmp_path, b"nope")
    status, _, err = run(capsys, "batch", path, *WRAPPED, "--errors-file", "/dev/full")
    assert status == 1
    assert err == (
        "fastmerge: error: cannot write the errors file /dev/full: No space left on device\n"
    )


def test_collect_without_a_file_writes_bad_lines_on_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = log(tmp_path, b"nope")
    status, _, err = run(capsys, "batch", path, *WRAPPED, "--errors", "collect", "--quiet")
    assert status == 1
    assert err == f"{path}:10: not valid JSON\n"


def test_output_dir_writes_one_file_per_stream(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    again = wrap([("a", e) for e in chat("a-again", ["again"])])  # another response
    out = tmp_path / "out"
    status, records, _ = run(
        capsys, "batch", log(tmp_path, *again), *WRAPPED, "--output-dir", str(out)
    )
    assert status == 0
    assert records == []
    assert sorted(os.listdir(out)) == ["a-2.json", "a.json", "b.json", "index.jsonl"]
    second = json.loads((out / "a-2.json").read_text())
    assert second["message"]["parts"][0]["text"] == "again"


def test_quiet_and_no_tty_draw_no_progress(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _, err = run(capsys, "batch", log(tmp_path), *WRAPPED, "--quiet")
    assert (status, err) == (0, "")
    status, _, err = run(capsys, "batch", log(tmp_path), *WRAPPED)  # stderr is not a TTY
    assert "\r" not in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_progress_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    packed = write(tmp_path / "log.zst", Path(log(tmp_path)).read_bytes(), "zstd")
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert cli.main(["batch", packed, *WRAPPED]) == 0
    text = terminal.getvalue()
    bar = re.compile(r"\d+\.\d MB / \d+\.\d MB \(\d+%\)  \d streams  \d+\.\d MB/s\x1b\[K")
    draws = text.split("\r")[1:-1]
    assert draws and all(bar.fullmatch(draw) for draw in draws), text
    assert text.split("\r")[-1] == (
        "\x1b[Kfastmerge: 2 streams (2 complete, 0 incomplete, 0 failed, 0 error); 0 bad lines\n"
    )
    quiet = _Terminal()
    monkeypatch.setattr("sys.stderr", quiet)
    assert cli.main(["batch", packed, *WRAPPED, "--quiet"]) == 0
    assert quiet.getvalue() == ""


def test_to_and_parquet(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, records, _ = run(capsys, "batch", log(tmp_path), *WRAPPED, "--to", "anthropic")
    assert status == 0
    assert records[0]["message"]["type"] == "message"
    assert records[0]["message"]["content"] == [{"type": "text", "text": "z", "citations": None}]
    if not os.environ.get("CI"):
        pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    out = tmp_path / "out.parquet"
    assert cli.main(["batch", log(tmp_path), *WRAPPED, "--format", "parquet", "-o", str(out)]) == 0
    assert pq.read_table(out).column("text").to_pylist() == ["z", "xy"]


def test_a_message_to_cannot_hold_is_an_error_record_and_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Two choices rendered ``--to anthropic`` (one choice a message): an ``error`` record,
    counted as one, and exit 1, as ``fastmerge merge --to`` does."""
    delta = {"role": "assistant", "content": "a"}
    chunks: list[Any] = [
        {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": c}
        for c in (
            [{"index": i, "delta": delta, "finish_reason": None} for i in (0, 1)],
            [{"index": i, "delta": {}, "finish_reason": "stop"} for i in (0, 1)],
        )
    ]
    path = write(tmp_path / "two.jsonl", lines(wrap([("two", c) for c in chunks])))
    status, records, err = run(capsys, "batch", path, *WRAPPED, "--to", "anthropic")
    assert status == 1
    assert [(r["key"], r["status"], r["message"]) for r in records] == [("two", "error", None)]
    assert err.splitlines() == [
        "fastmerge: 1 stream (0 complete, 0 incomplete, 0 failed, 1 error); 0 bad lines",
        "fastmerge: error: 1 stream could not be merged; the first, 'two': to='anthropic': "
        "an Anthropic Message holds one choice, not 2",
    ]
    # without --to the same stream is complete
    assert run(capsys, "batch", path, *WRAPPED)[0] == 0


# -- wrong inputs: an error naming them, never an empty result


def test_a_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.jsonl")
    status, records, err = run(capsys, "batch", missing)
    assert (status, records) == (1, [])
    assert err == f"fastmerge: error: {missing}: No such file or directory\n"


def test_a_directory_without_logs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "empty" / ".cache").mkdir(parents=True)
    (tmp_path / "empty" / ".cache" / "x.jsonl").write_text("{}")
    status, records, err = run(capsys, "batch", str(tmp_path / "empty"))
    assert (status, records) == (1, [])
    assert err == f"fastmerge: error: {tmp_path}/empty: the directory holds no file\n"


@pytest.mark.parametrize("content", [b"", b"\n\n", b"\r\n"])
@pytest.mark.parametrize("grouped", [True, False])
def test_an_empty_log_is_no_silent_success(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, grouped: bool
) -> None:
    """An empty or blank file: one error line (no summary of nothing), nothing written, 1."""
    path = write(tmp_path / "empty.jsonl", content)
    status, records, err = run(capsys, "batch", path, *(WRAPPED if grouped else ()))
    assert (status, records) == (1, [])
    assert err == f"fastmerge: error: {path}: empty input, no records\n"


def test_a_compressed_empty_log_is_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "empty.jsonl.gz", b"", "gzip")
    status, records, err = run(capsys, "batch", path, *WRAPPED)
    assert (status, records) == (1, [])
    assert err == f"fastmerge: error: no stream in the input: no line of {path} holds an event\n"


def test_an_empty_log_among_others_is_not_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    empty = write(tmp_path / "empty.jsonl", b"")
    status, records, err = run(capsys, "batch", empty, log(tmp_path), *WRAPPED)
    assert status == 0
    assert [r["key"] for r in records] == ["b", "a"]


def test_a_binary_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path / "core.bin", bytes(range(256)) * 4)
    status, records, err = run(capsys, "batch", path)
    assert status == 1
    assert [(r["key"], r["status"], r["error"]) for r in records] == [
        (path, "error", "no event could be read: binary input, not provider events")
    ]
    assert err.endswith(
        "1 stream (0 complete, 0 incomplete, 0 failed, 1 error); 0 bad lines\n"
        f"fastmerge: error: 1 stream could not be merged; the first, {path!r}: no event could be "
        "read: binary input, not provider events\n"
    )


def test_a_gz_name_that_is_not_gzip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    plain = write(tmp_path / "plain.jsonl.gz", lines(chat("p", ["plain"])))
    status, records, _ = run(capsys, "batch", plain)
    assert (status, [r["message"]["parts"][0]["text"] for r in records]) == (0, ["plain"])
    packed = COMPRESSORS["gzip"](lines(chat("p", ["x"])))[:30]
    broken = write(tmp_path / "broken.gz", packed)
    status, records, err = run(capsys, "batch", broken)
    assert (status, records) == (1, [])
    offset = decodable("gzip", packed)
    assert err == (
        f"fastmerge: error: {broken}: gzip stream is truncated after {offset} decompressed bytes\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--format", "parquet"], "--format parquet needs -o FILE"),
        (["-o", "x", "--output-dir", "d"], "-o/--output FILE and --output-dir DIR exclude"),
        (["--errors", "skip", "--errors-file", "f"], "--errors-file needs --errors collect"),
    ],
)
def test_usage_errors_exit_64(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["batch", log(tmp_path), *argv])
    assert info.value.code == 64
    assert capsys.readouterr().err.splitlines()[-1].startswith(f"fastmerge batch: error: {message}")


def test_a_bad_option_value_names_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["batch", log(tmp_path), "--event", "event"])
    assert info.value.code == 64
    assert capsys.readouterr().err == (
        "fastmerge batch: error: wrapper records need a stream key: pass --group-by (e.g. "
        "--group-by stream_id) (see 'fastmerge batch --help')\n"
    )


# -- fastmerge bench


def test_bench_runs_the_bundled_log_through_three_engines(
    capsys: pytest.CaptureFixture[str], backend_name: str
) -> None:
    if backend_name != "rust":
        pytest.skip("fastmerge bench compares the Rust engine with the twin")
    from fastmerge import _backend

    assert cli.main(["bench", "--repeat", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(
        "examples/gateway.jsonl.zst (0.1 MB, 6020 events, 200 streams; 2 rounds each)"
    )
    assert out[1:3] == [
        "| engine | best | median | worst | events/s | best / rust's |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    profile = _backend.load("rust").BUILD_PROFILE
    assert [row.split(" | ")[0] for row in out[3:6]] == [
        f"| rust (BatchCore, {profile} build, {os.cpu_count()} jobs)",
        "| twin (pure Python)",
        "| naive reduce (json.loads + join)",
    ]
    assert out[6] == (
        "agree: rust and twin give the same 200 records; the naive reduce gives the same text "
        "and tool-call arguments for 200 of 200 streams"
    )
    assert out[7] == "streams where the naive reduce differs: 0"


def test_bench_says_when_the_rust_engine_is_not_built(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def load(name: str) -> Any:
        raise ModuleNotFoundError("No module named 'fastmerge._fastmerge'")

    monkeypatch.setattr("fastmerge._backend.load", load)
    assert cli.main(["bench"]) == 1
    assert capsys.readouterr().err == (
        "fastmerge: error: the Rust extension (fastmerge._fastmerge with BatchCore) is not "
        "built, so there is nothing to compare the twin with: build it (pip install ., or make "
        "build-prod in a checkout) and run fastmerge bench again\n"
    )


def test_stdin_compressed_through_the_command(backend_name: str, tmp_path: Path) -> None:
    data = Path(log(tmp_path)).read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "fastmerge", "batch", "-", *WRAPPED, "--errors", "skip"],
        input=COMPRESSORS["bzip2"](data + b"oops\n"),
        capture_output=True,
        env={**os.environ, "FASTMERGE_BACKEND": backend_name, "PYTHONPATH": PACKAGE_ROOT},
        timeout=120,
    )
    assert proc.returncode == 1  # the bad line
    assert [json.loads(line)["key"] for line in proc.stdout.splitlines()] == ["b", "a"]
    assert proc.stderr == (
        b"fastmerge: 2 streams (2 complete, 0 incomplete, 0 failed, 0 error); 1 bad line\n"
    )
