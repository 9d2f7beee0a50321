"""``fastmerge bench`` on any log the engines read, on both backends: a log the naive reduce
cannot read (or reads in part) is a row, not a failure; number keys named as the engines name
them; the bundled log by its records, also without a checkout; zstd without ``zstandard``;
usage errors; a line nested deeper than ``json`` reads; the debug-build warning; a log with
nothing to merge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _support.batch import chat, interleave, lines, wrap, write
from _support.cli import (
    WRAPPED,
    batch_for_the_command,  # noqa: F401 (the autouse ``batch`` fixture)
    log,
    usage_error,
)
from _support.corpus import CORPUS
from conftest import PACKAGE_ROOT

from fastmerge import cli

# -- fastmerge bench: any log the engines read, without a checkout


@pytest.fixture
def rust_only(backend_name: str) -> None:
    if backend_name != "rust":
        pytest.skip("fastmerge bench compares the Rust engine with the twin")


def bench(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    """Exit status, stdout lines and stderr of ``fastmerge bench ARGV`` in one round."""
    status = cli.main(["bench", *argv, "--repeat", "1"])
    out, err = capsys.readouterr()
    return status, out.splitlines(), _without_debug_warning(err)


def _without_debug_warning(err: str) -> str:
    """stderr without the warning a debug build prints first (CI tests a debug build; the
    warning itself is checked by the tests of the build profile)."""
    from fastmerge.cli import bench as cli_bench

    return err.replace(f"fastmerge: {cli_bench.DEBUG_WARNING}\n", "")


NAIVE_CANNOT = (
    "| naive reduce (json.loads + join) | cannot read this log | – | – | – | – |",
    "it joins the text and tool-call arguments of OpenAI Chat, Anthropic and Responses events "
    "given as strings, as a hand-written script does",
)


@pytest.mark.parametrize(
    ("stream", "provider"),
    [
        ("mistral/magistral-medium-thinking-chunks.jsonl", "openai-chat"),  # typed-list content
        ("gemini/gemini20-flash-plain-text.jsonl", "gemini"),
        ("bedrock_converse/nova-micro-text.jsonl", "bedrock-converse"),
    ],
)
def test_bench_a_log_the_naive_reduce_cannot_read_is_a_row_not_a_failure(
    capsys: pytest.CaptureFixture[str], rust_only: None, stream: str, provider: str
) -> None:
    status, out, err = bench(capsys, str(CORPUS / stream))
    assert (status, err) == (0, "")
    assert out[5] == NAIVE_CANNOT[0]
    assert out[6] == (
        f"agree: rust and twin give the same 1 records; the naive reduce cannot read this log "
        f"({provider}): {NAIVE_CANNOT[1]}"
    )


def test_bench_a_log_the_naive_reduce_reads_in_part(
    capsys: pytest.CaptureFixture[str], rust_only: None, tmp_path: Path
) -> None:
    gemini = [
        json.loads(line)
        for line in (CORPUS / "gemini" / "gemini20-flash-plain-text.jsonl").read_text().splitlines()
    ]
    records = wrap(interleave(("a", chat("a", ["x"])), ("g", gemini), ("b", chat("b", ["y"]))))
    path = write(tmp_path / "mixed.jsonl", lines(records))
    status, out, err = bench(capsys, path, *WRAPPED)
    assert (status, err) == (0, "")
    assert out[5].startswith("| naive reduce (json.loads + join) | ")
    assert out[5] != NAIVE_CANNOT[0]
    assert out[6] == (
        "agree: rust and twin give the same 3 records; the naive reduce gives the same text and "
        "tool-call arguments for 2 streams and cannot read the others (gemini)"
    )


def test_bench_names_number_keys_as_the_engines_do(
    capsys: pytest.CaptureFixture[str], rust_only: None, tmp_path: Path
) -> None:
    # an integer key past 64 bits is a float to the engines ("1.8446744073709552e+19"); a
    # boolean key is their bad line: the naive reduce names and skips them alike
    keys: list[Any] = [2**64, 7, 1.5, "s", True]
    streams = interleave(*((key, chat(str(key), ["w"])) for key in keys))
    path = write(tmp_path / "numbers.jsonl", lines(wrap(streams)))
    status, out, err = bench(capsys, path, *WRAPPED)
    assert (status, err) == (0, "")
    assert out[6] == (
        "agree: rust and twin give the same 4 records; the naive reduce gives the same text "
        "and tool-call arguments for 4 of 4 streams"
    )


def test_bench_reads_the_bundled_log_by_its_records_however_it_is_named(
    capsys: pytest.CaptureFixture[str], rust_only: None, tmp_path: Path
) -> None:
    from fastmerge.cli import bench as cli_bench

    copy = tmp_path / "my-log.zst"
    copy.write_bytes(cli_bench.EXAMPLE.read_bytes())
    for given in (str(cli_bench.EXAMPLE), str(copy)):
        status, out, _ = bench(capsys, given)
        assert status == 0
        assert out[0] == (
            f"fastmerge bench: {given} (0.1 MB, 6020 events, 200 streams; 1 round each)"
        )


def test_bench_without_a_checkout_runs_the_packaged_log(
    capsys: pytest.CaptureFixture[str],
    rust_only: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from fastmerge.cli import bench as cli_bench

    # the copy in the package is the example, byte for byte
    assert cli_bench.PACKAGED.read_bytes() == cli_bench.EXAMPLE.read_bytes()
    monkeypatch.setattr(cli_bench, "EXAMPLE", tmp_path / "no-checkout" / "gateway.jsonl.zst")
    status, out, _ = bench(capsys)
    assert status == 0
    assert out[0] == (
        "fastmerge bench: the bundled examples/gateway.jsonl.zst (0.1 MB, 6020 events, 200 "
        "streams; 1 round each)"
    )
    monkeypatch.setattr(cli_bench, "PACKAGED", tmp_path / "gone.zst")
    status, out, err = bench(capsys)
    assert (status, out) == (1, [])
    assert err == (
        "fastmerge: error: no LOG given, and the bundled example log "
        "(examples/gateway.jsonl.zst) is not beside this installation: pass LOG\n"
    )


def test_bench_reads_zstd_without_the_zstandard_package(rust_only: None, tmp_path: Path) -> None:
    """Python without ``zstandard`` (as after ``pip install .``): the twin cannot read zstd
    itself, so the bench hands it the Rust engine's decompression of the log, and says so."""
    zstd = tmp_path / "log.jsonl.zst"
    import zstandard

    zstd.write_bytes(zstandard.ZstdCompressor().compress(Path(log(tmp_path)).read_bytes()))
    script = (
        "import sys; sys.modules['zstandard'] = None\n"
        "from fastmerge import cli\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )
    for argv in (["bench", str(zstd), *WRAPPED, "--repeat", "1"], ["bench", "--repeat", "1"]):
        proc = subprocess.run(
            [sys.executable, "-c", script, *argv],
            capture_output=True,
            env={**os.environ, "FASTMERGE_BACKEND": "rust", "PYTHONPATH": PACKAGE_ROOT},
            timeout=300,
        )
        stderr = _without_debug_warning(proc.stderr.decode())
        assert (proc.returncode, stderr) == (0, ""), stderr
        out = proc.stdout.decode().splitlines()
        streams = 2 if argv[1] != "--repeat" else 200
        assert out[6].startswith(f"agree: rust and twin give the same {streams} records;")
        assert out[6].endswith(f"arguments for {streams} of {streams} streams")
        assert out[7] == "streams where the naive reduce differs: 0"
        assert out[8] == (
            "note: the twin and the naive reduce read the log as the Rust engine decompressed "
            "it before the clock started (in Python, zstd needs the 'zstandard' package: pip "
            "install zstandard)"
        )
    # the twin alone says what it needs
    proc = subprocess.run(
        [sys.executable, "-c", script, "batch", str(zstd), *WRAPPED],
        capture_output=True,
        env={**os.environ, "FASTMERGE_BACKEND": "python", "PYTHONPATH": PACKAGE_ROOT},
        timeout=300,
    )
    assert proc.returncode == 1
    assert proc.stderr.endswith(
        b"zstd input needs the 'zstandard' package (pip install zstandard)\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--group-by", "a..b"], "--group-by 'a..b' has an empty segment"),
        (["--jobs", "5000"], "--jobs must be at most 4096, not 5000"),
    ],
)
def test_bench_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    assert usage_error(capsys, "bench", log(tmp_path), *argv) == (
        f"fastmerge bench: error: {message}"
    )


def test_bench_reads_past_a_line_nested_deeper_than_json_reads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A line nested 100,000 deep: json.loads raises RecursionError, which the naive reduce
    takes as a line it cannot read (it was a traceback), as the engines do."""
    deep = b'{"stream_id": "z", "event": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    path = tmp_path / "deep.jsonl"
    path.write_bytes(Path(log(tmp_path)).read_bytes() + deep)
    status = cli.main(
        ["bench", str(path), "--group-by", "stream_id", "--event", "event", "--repeat", "1"]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "agree: rust and twin give the same 2 records;" in out


def test_read_input_is_the_engines_decompression(rust_only: None, tmp_path: Path) -> None:
    from _support.batch import COMPRESSORS

    from fastmerge import _backend
    from fastmerge.errors import BatchError

    read_input = _backend.load("rust").read_input
    data = Path(log(tmp_path)).read_bytes()
    for fmt in (None, *COMPRESSORS):
        path = write(tmp_path / f"log.{fmt}", data, fmt)
        assert read_input(path) == data
    with pytest.raises(BatchError, match=r"missing\.zst: No such file or directory"):
        read_input(str(tmp_path / "missing.zst"))
    cut = write(tmp_path / "cut.zst", COMPRESSORS["zstd"](data)[:-8])
    with pytest.raises(BatchError, match=r"cut\.zst: zstd stream is truncated after \d+"):
        read_input(cut)


@pytest.mark.parametrize("profile", ["release", "debug"])
def test_bench_warns_that_a_debug_build_times_slow(
    capsys: pytest.CaptureFixture[str],
    rust_only: None,
    monkeypatch: pytest.MonkeyPatch,
    profile: str,
) -> None:
    from fastmerge import _backend
    from fastmerge.cli import bench as cli_bench

    monkeypatch.setattr(_backend.load("rust"), "BUILD_PROFILE", profile)
    status = cli.main(["bench", "--repeat", "1"])
    out_text, err = capsys.readouterr()
    assert status == 0 and out_text.startswith("fastmerge bench: the bundled")
    warned = f"fastmerge: {cli_bench.DEBUG_WARNING}\n"
    assert cli_bench.DEBUG_WARNING.startswith("warning: the Rust extension is a debug build")
    assert (warned in err) == (profile == "debug")


def test_bench_warns_on_the_installed_build_as_backend_info_says(
    capsys: pytest.CaptureFixture[str], rust_only: None
) -> None:
    """The build under test, not a patched one: the warning follows backend_info()["build"]."""
    import fastmerge
    from fastmerge.cli import bench as cli_bench

    build = fastmerge.backend_info()["build"]
    assert build in ("release", "debug")
    status = cli.main(["bench", "--repeat", "1"])
    out_text, err = capsys.readouterr()
    assert status == 0 and out_text.startswith("fastmerge bench: the bundled")
    assert (f"fastmerge: {cli_bench.DEBUG_WARNING}\n" in err) == (build == "debug")


def test_bench_of_a_log_with_nothing_to_merge_fails(
    capsys: pytest.CaptureFixture[str], rust_only: None, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    status, out, err = bench(capsys, str(empty))
    assert (status, out) == (1, [])
    assert err == (
        f"fastmerge: error: {empty}: nothing to time: no stream could be merged "
        "(no event could be read: the input is empty)\n"
    )
