"""``fastmerge batch`` interrupted, on both backends: Ctrl-C ends a run waiting on a FIFO
with 130, leaves no half-written ``-o FILE`` and says what was written; ``-o FILE`` is written
under a temporary name and renamed only when the run ends well."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _support.batch import chat, lines, wrap, write
from _support.cli import (
    WRAPPED,
    batch_for_the_command,  # noqa: F401 (the autouse ``batch`` fixture)
    log,
    run,
)
from conftest import PACKAGE_ROOT


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_ctrl_c_ends_a_run_that_waits_on_a_fifo(backend_name: str, tmp_path: Path) -> None:
    """A named pipe no writer has opened: Ctrl-C ends the run at once with 130, on both
    backends (the engine's reader, blocked in the pipe's open, is not waited for)."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    env = {**os.environ, "FASTMERGE_BACKEND": backend_name, "PYTHONPATH": PACKAGE_ROOT}
    with subprocess.Popen(
        [sys.executable, "-m", "fastmerge", "batch", str(pipe), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as proc:
        try:
            _wait_in_a_fifo_open(proc.pid)
            assert proc.poll() is None
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 130, err


STREAMS = 20_000


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("where", ["-o", "--output-dir", "stdout"])
def test_ctrl_c_leaves_no_half_file_and_says_what_was_written(
    backend_name: str, tmp_path: Path, where: str
) -> None:
    """Ctrl-C in the middle of a run: ``-o FILE`` is not left half written (it is written
    under a temporary name, renamed when the run ends well; nothing of it is left), and
    stderr says what was written and where; ``--output-dir`` keeps the files written, and
    says how many."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    out = tmp_path / ("out.jsonl" if where == "-o" else "out")
    target = {"-o": ["-o", str(out)], "--output-dir": ["--output-dir", str(out)]}.get(where, [])
    env = {**os.environ, "FASTMERGE_BACKEND": backend_name, "PYTHONPATH": PACKAGE_ROOT}
    command = [sys.executable, "-m", "fastmerge", "batch", str(pipe), *WRAPPED, *target]
    # streams that end one after the other, then a pipe that stays open: an ended stream is
    # written once 65,536 lines came after it (a later record of its key would join it), so
    # some are written before Ctrl-C
    ended = lines(wrap((f"s{i}", e) for i in range(STREAMS) for e in chat(f"s{i}", ["x", "y"])))
    # standard output to a file: a pipe nobody reads yet would stop the run when full
    with (
        (tmp_path / "stdout").open("wb") as sink,
        subprocess.Popen(
            [*command, "--quiet"], stdout=sink, stderr=subprocess.PIPE, env=env
        ) as proc,
    ):
        try:
            with open(pipe, "wb") as writer:
                writer.write(ended)
                writer.flush()
                time.sleep(2.0)
                proc.send_signal(signal.SIGINT)
                _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    stdout = (tmp_path / "stdout").read_bytes()
    assert proc.returncode == 130, err
    *_, last = err.decode().splitlines()
    written = re.fullmatch(r"fastmerge: interrupted(?::| after) (\d+) records?\b.*", last)
    assert written is not None, last
    count = int(written[1])
    assert 0 < count < STREAMS, last
    if where == "-o":
        assert last == f"fastmerge: interrupted after {count} records: nothing written to {out}"
        assert sorted(os.listdir(tmp_path)) == ["pipe", "stdout"]  # no FILE, no temporary one
    elif where == "--output-dir":
        index = out / "index.jsonl"
        assert last == (
            f"fastmerge: interrupted: {count} records written to {out} (listed in {index})"
        )
        assert len(index.read_text().splitlines()) == count
    else:
        assert last == f"fastmerge: interrupted: {count} records written to standard output"
        assert len(stdout.splitlines()) == count


def test_o_file_is_renamed_when_the_run_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run that ends well leaves ``FILE`` with its records and no temporary file; one that
    fails on a record (``--errors raise``) leaves no ``FILE``; ``/dev/null`` is written as it
    is."""
    out = tmp_path / "out.jsonl"
    assert run(capsys, "batch", log(tmp_path), *WRAPPED, "-o", str(out))[0] == 0
    assert len(out.read_text().splitlines()) == 2
    assert sorted(os.listdir(tmp_path)) == ["log.jsonl", "out.jsonl"]
    assert run(capsys, "batch", log(tmp_path), *WRAPPED, "-o", os.devnull)[0] == 0
    bad = write(
        tmp_path / "bad.jsonl", lines(wrap(("a", e) for e in chat("a", ["x"]))) + b"not json\n"
    )
    failed = tmp_path / "failed.jsonl"
    status, _, err = run(capsys, "batch", bad, *WRAPPED, "-o", str(failed), "--errors", "raise")
    assert status == 1, err
    assert not failed.exists()
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".partial")]


def _wait_in_a_fifo_open(pid: int) -> None:
    """Until a thread of process ``pid`` waits in a FIFO's open (Linux tells by its wait
    channel; elsewhere two seconds), so that Ctrl-C comes after start-up, under any load."""
    tasks = Path(f"/proc/{pid}/task")
    # this process's parent waits for it: a kernel that shows wait channels names that one
    shown = Path(f"/proc/{os.getppid()}/wchan")
    if not tasks.is_dir() or not shown.exists() or shown.read_text() in ("", "0"):
        time.sleep(2.0)
        return
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            if any((t / "wchan").read_text() == "wait_for_partner" for t in tasks.iterdir()):
                return
        time.sleep(0.05)
    raise AssertionError("the run never waited in the FIFO's open")
