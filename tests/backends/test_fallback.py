"""The fallback with the extension really absent (``fastmerge._backend``): a copy of the package
without the compiled file, imported in a fresh interpreter, as ``PYTHONPATH=python`` in a clone
or a venv whose ``.so`` was removed. ``auto`` falls back to the twin with a FallbackWarning;
``rust`` fails loudly; a present but broken or stale extension is an error in every mode.

(test_backend.py fakes absence with ``sys.modules[...] = None``, which raises the
``ModuleNotFoundError`` that a real missing file did not: ``from . import _fastmerge`` raised a
plain ``ImportError`` about a circular import instead.)
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fastmerge

pytestmark = pytest.mark.single_run

_REPORT = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import fastmerge
print(json.dumps({
    "file": fastmerge.__file__,
    "backend": fastmerge.BACKEND,
    "fallback_reason": fastmerge.backend_info()["fallback_reason"],
    "build": fastmerge.backend_info()["build"],
    "warnings": [(w.category.__name__, str(w.message)) for w in caught],
    "merge": fastmerge.merge({"a": "x"}, {"a": "y"}),
}))
"""

_FAILURE = """
try:
    import fastmerge
except ImportError as exc:
    print(type(exc).__name__, exc, sep=": ")
else:
    print("imported:", fastmerge.BACKEND)
"""


@pytest.fixture
def bare_package(tmp_path: Path) -> Path:
    """A copy of the installed package without its compiled extension; returns its parent."""
    source = Path(fastmerge.__file__).resolve().parent
    shutil.copytree(
        source,
        tmp_path / "fastmerge",
        ignore=shutil.ignore_patterns("_fastmerge*.so", "_fastmerge*.pyd", "__pycache__"),
    )
    names = sorted(p.name for p in (tmp_path / "fastmerge").glob("_fastmerge*"))
    assert names == ["_fastmerge.pyi"]  # the stub only
    return tmp_path


def _run(root: Path, backend: str, code: str) -> subprocess.CompletedProcess[str]:
    # Only the copy on the path (the installed fastmerge must not answer the import).
    env = {**os.environ, "FASTMERGE_BACKEND": backend, "PYTHONPATH": str(root)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def _report(root: Path, backend: str) -> dict:  # type: ignore[type-arg]
    proc = _run(root, backend, _REPORT)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_auto_falls_back_when_the_extension_file_is_absent(bare_package: Path) -> None:
    report = _report(bare_package, "auto")
    reason = "the compiled extension fastmerge._fastmerge is not installed"
    assert report == {
        "file": str(bare_package / "fastmerge" / "__init__.py"),
        "backend": "python",
        "fallback_reason": reason,
        "build": None,  # no extension, no build profile
        "warnings": [
            [
                "FallbackWarning",
                f"{reason}; using the pure-Python twin (set FASTMERGE_BACKEND=python to silence)",
            ]
        ],
        "merge": {"a": "xy"},
    }


def test_python_backend_without_the_extension_is_silent(bare_package: Path) -> None:
    report = _report(bare_package, "python")
    assert (report["backend"], report["fallback_reason"], report["warnings"]) == (
        "python",
        None,
        [],
    )
    assert report["build"] is None  # no extension, no build profile


def test_rust_backend_without_the_extension_fails_loudly(bare_package: Path) -> None:
    proc = _run(bare_package, "rust", _FAILURE)
    assert proc.stdout == "ModuleNotFoundError: No module named 'fastmerge._fastmerge'\n"


@pytest.mark.parametrize("backend", ["auto", "rust"])
def test_a_broken_extension_file_is_an_error_not_a_fallback(
    bare_package: Path, backend: str
) -> None:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (bare_package / "fastmerge" / f"_fastmerge{suffix}").write_bytes(b"not a shared library")
    proc = _run(bare_package, backend, _FAILURE)
    first = proc.stdout.split(":")[0]
    assert first == "ImportError", proc.stdout


@pytest.mark.parametrize("backend", ["auto", "rust"])
def test_a_stale_extension_is_an_error_not_a_fallback(bare_package: Path, backend: str) -> None:
    (bare_package / "fastmerge" / "_fastmerge.py").write_text('__version__ = "0.0.0-stale"\n')
    proc = _run(bare_package, backend, _FAILURE)
    assert proc.stdout == (
        f"ImportError: fastmerge._fastmerge is version 0.0.0-stale, the Python package is "
        f"{fastmerge.__version__}: rebuild the extension (maturin develop / pip install .)\n"
    )
