"""The command-line tests' shared runner: ``fastmerge`` in a fresh interpreter on a backend, and
its failure as one stderr line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import fastmerge

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
