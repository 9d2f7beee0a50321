"""The command-line tests' shared runners: ``fastmerge`` in a fresh interpreter on a backend, and
its failure as one stderr line; ``fastmerge`` in this process on the test's backend (the
autouse ``batch`` fixture of a test module that imports it), its output and its usage errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import fastmerge
from _support.batch import batch_module, chat, interleave, lines, wrap, write
from fastmerge import cli

ROOT = Path(__file__).resolve().parents[2]


#: The directory holding the ``fastmerge`` package under test, for the subprocesses.
PACKAGE_ROOT = Path(fastmerge.__file__).resolve().parent.parent


def fastmerge_cli(
    backend: str, *args: str | Path, stdin: bytes | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    """``python -m fastmerge ARGS`` with ``FASTMERGE_BACKEND=backend``."""
    return subprocess.run(
        [sys.executable, "-m", "fastmerge", *map(str, args)],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=_env(backend),
        cwd=ROOT,
        timeout=timeout,
    )


def _env(backend: str) -> dict[str, str]:
    assert backend in ("rust", "python")
    env = {**os.environ, "FASTMERGE_BACKEND": backend}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH")) if p)
    return env


def assert_fails(proc: subprocess.CompletedProcess[bytes], status: int = 1) -> str:
    assert proc.returncode == status, (proc.stdout, proc.stderr)
    assert proc.stdout == b""
    return proc.stderr.decode()


@pytest.fixture(autouse=True, name="batch")
def batch_for_the_command(backend_name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The command runs on this test's backend (it imports ``fastmerge.batch`` when run)."""
    module = batch_module(backend_name)
    monkeypatch.setattr(fastmerge, "batch", module, raising=False)
    return module


#: The options that read wrapper records (``stream_id``, ``event``).
WRAPPED = ["--group-by", "stream_id", "--event", "event"]


def log(tmp_path: Path, name: str = "log.jsonl") -> str:
    """A log of two interleaved streams in wrapper records: ``a`` (x, y) and ``b`` (z)."""
    streams = interleave(("a", chat("a", ["x", "y"])), ("b", chat("b", ["z"])))
    return write(tmp_path / name, lines(wrap(streams)))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``fastmerge ARGV``."""
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The error line of ``fastmerge ARGV``, which must be a usage error (64) that wrote
    nothing on stdout."""
    with pytest.raises(SystemExit) as info:
        cli.main(list(argv))
    out, err = capsys.readouterr()
    assert (info.value.code, out) == (64, "")
    assert len(err.splitlines()) == 1, err  # one line, no usage text
    assert err.startswith(f"fastmerge {argv[0]}: error: ")
    suffix = f" (see 'fastmerge {argv[0]} --help')\n"
    assert err.endswith(suffix)
    return err[: -len(suffix)]
