"""``make all`` says what it does: the install shows pip's progress, the PostgreSQL tests get a
server where one is installed (``tools/with-postgres``) or a line says they were skipped and how
to run them (the wrapper, and the test run's own summary), and a build that replaces the other
profile's extension says so (``tools/build_note.py``). ``make`` itself is only dry-run here."""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXTENSION_INSTALLED, PACKAGE_ROOT, PG_HOW

ROOT = Path(__file__).resolve().parents[2]
WITH_POSTGRES = str(ROOT / "tools" / "with-postgres")

pytestmark = pytest.mark.single_run


def _without_pg() -> dict[str, str]:
    """This environment without a PostgreSQL server named."""
    return {
        k: v for k, v in os.environ.items() if k not in ("FASTMERGE_PG_DSN", "FASTMERGE_REQUIRE_PG")
    }


def _dry_run(*targets: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    proc = subprocess.run(
        ["make", "-n", "-B", *targets, f"VENV={sys.prefix}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_install_shows_each_step_and_pips_progress() -> None:
    venv = f"{sys.prefix}/.dev-deps"
    out = _dry_run(venv)
    steps = re.findall(r"== pip install \((\d) of 3\)", out)
    assert steps == ["1", "2", "3"]
    installs = [line for line in out.splitlines() if " -m pip install " in line]
    assert len(installs) == 3
    assert all("--progress-bar on" in line and " -q" not in line for line in installs)


def test_the_test_runs_are_given_a_postgres_server() -> None:
    out = _dry_run("test", "test-pure", "bench-smoke")
    runs = [line for line in out.splitlines() if " -m pytest" in line]
    assert len(runs) == 3
    assert all("tools/with-postgres " in line for line in runs)


def test_with_postgres_says_what_is_skipped_without_a_server() -> None:
    env = {**_without_pg(), "FASTMERGE_PG_BIN": "/nonexistent"}
    proc = subprocess.run(
        [WITH_POSTGRES, "sh", "-c", 'echo "dsn=${FASTMERGE_PG_DSN:-none}"; exit 3'],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout) == (3, "dsn=none\n")
    why = "with-postgres: no PostgreSQL server installed (no initdb in /nonexistent)"
    assert proc.stderr.splitlines() == [
        f"{why}: the PostgreSQL tests of the session store will be skipped",
        f"{why}: the PostgreSQL tests of the session store were skipped; to run them: install "
        "the server (Debian: apt-get install postgresql, as root; .ci/run does it) and run the "
        "target again, or set FASTMERGE_PG_DSN=postgresql://USER@HOST/DB to a server of yours, "
        "or run bash .ci/run",
    ]


def test_with_postgres_leaves_a_named_server_alone() -> None:
    env = {**_without_pg(), "FASTMERGE_PG_DSN": "postgresql://mine@db/x"}
    proc = subprocess.run(
        [WITH_POSTGRES, "sh", "-c", 'echo "$FASTMERGE_PG_DSN"'],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "postgresql://mine@db/x\n", "")


def _server_installed() -> bool:
    found = [d for d in glob.glob("/usr/lib/postgresql/*/bin") if os.access(f"{d}/initdb", os.X_OK)]
    if not found or importlib.util.find_spec("psycopg") is None:
        return False
    if os.geteuid() != 0:
        return True
    import pwd

    try:
        pwd.getpwnam("postgres")  # root starts the server as this user
    except KeyError:
        return False
    return shutil.which("runuser") is not None


@pytest.mark.skipif(not _server_installed(), reason="no PostgreSQL server installed here")
def test_with_postgres_starts_a_server_for_the_command_and_stops_it() -> None:
    script = (
        "import os, psycopg\n"
        "dsn = os.environ['FASTMERGE_PG_DSN']\n"
        "with psycopg.connect(dsn) as db:\n"
        "    print(db.execute('select 41 + 1').fetchone()[0], os.environ['FASTMERGE_REQUIRE_PG'])\n"
        "print(dsn)\n"
    )
    proc = subprocess.run(
        [WITH_POSTGRES, sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=_without_pg(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    answer, dsn = proc.stdout.splitlines()
    assert answer == "42 1"
    folder = re.fullmatch(r"postgresql://postgres@/postgres\?host=(.+)&port=5432", dsn)
    assert folder is not None
    assert not os.path.exists(folder[1])  # stopped and removed after the command
    assert "started at" in proc.stderr


def test_the_test_run_names_the_postgres_tests_it_skipped() -> None:
    env = {
        **_without_pg(),
        "FASTMERGE_BACKEND": "python",
        "PYTHONPATH": PACKAGE_ROOT,
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "tests" / "session" / "test_async.py"),
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout
    notes = [line for line in proc.stdout.splitlines() if line.startswith("NOTE: ")]
    assert len(notes) == 1, proc.stdout
    assert re.fullmatch(
        r"NOTE: \d+ PostgreSQL tests? of the session store skipped \(FASTMERGE_PG_DSN is not "
        rf"set\); {re.escape(PG_HOW)}",
        notes[0],
    )


def _build_note() -> object:
    spec = importlib.util.spec_from_file_location("build_note", ROOT / "tools" / "build_note.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_build_that_replaces_the_other_profile_says_so() -> None:
    note = _build_note().note  # type: ignore[attr-defined]
    assert note("debug", "release") == (
        "note: this replaces the release extension in the venv with a debug build (its times "
        "are many times slower); make build-prod (make demo) puts a release build back"
    )
    assert note("release", "debug") == (
        "note: this replaces the debug extension in the venv with a release build; make "
        "build-dev (make dev, make all) puts a debug build back"
    )
    assert note("debug", "debug") is None
    assert note("release", None) is None  # nothing installed: nothing replaced
    develop = _dry_run("build-dev")
    assert "tools/build_note.py debug" in develop.split("maturin develop")[1]


@pytest.mark.skipif(not EXTENSION_INSTALLED, reason="the extension is not built")
def test_the_build_note_reads_the_installed_extension() -> None:
    from fastmerge import _backend

    installed = _backend.load("rust").BUILD_PROFILE
    other = "release" if installed == "debug" else "debug"
    run = [sys.executable, str(ROOT / "tools" / "build_note.py")]
    env = {**os.environ, "PYTHONPATH": PACKAGE_ROOT}
    said = subprocess.run([*run, other], capture_output=True, text=True, env=env, timeout=60)
    assert said.returncode == 0
    assert said.stdout == _build_note().note(other, installed) + "\n"  # type: ignore[attr-defined]
    same = subprocess.run([*run, installed], capture_output=True, text=True, env=env, timeout=60)
    assert (same.returncode, same.stdout) == (0, "")
