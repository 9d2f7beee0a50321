"""Backend selection (DESIGN "Python package", ``fastmerge._backend``): ``FASTMERGE_BACKEND``
``auto|rust|python``, never a silent downgrade; both backends expose the same API and
constants.

The environment variable is read once at import, so the selection is tested in subprocesses.
An absent extension is simulated by ``sys.modules["fastmerge._fastmerge"] = None`` (import
fails with ``ModuleNotFoundError``), a stale one by a module of another version.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from types import ModuleType

import pytest
from _support.values import SPEC_ATOMIC_KEYS
from conftest import (
    EXTENSION_INSTALLED,
    PACKAGE_ROOT,
    PYTHON,
    REQUESTED,
    RUST,
    assert_isolated_ok,
    canonical,
    run_isolated,
)

import fastmerge
from fastmerge import _backend

INFO_KEYS = {
    "backend",
    "requested",
    "version",
    "extension_version",
    "build",
    "fallback_reason",
    "python",
}


_REPORT = """
import json, sys, warnings
{prelude}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import fastmerge
from fastmerge import _backend
bound = all(getattr(fastmerge, n) is getattr(_backend.impl, n) for n in _backend.API)
print(json.dumps({{
    "backend": fastmerge.BACKEND,
    "info": fastmerge.backend_info(),
    "bound": bound,
    "impl": _backend.impl.__name__,
    "warnings": [(w.category.__name__, str(w.message)) for w in caught],
    "merge": fastmerge.merge({{"a": "x"}}, {{"a": "y"}}),
}}))
"""

_ABSENT = 'sys.modules["fastmerge._fastmerge"] = None'
_STALE = """
import types
stale = types.ModuleType("fastmerge._fastmerge")
stale.__version__ = "0.0.0-stale"
sys.modules["fastmerge._fastmerge"] = stale
"""


def _report(backend: str, prelude: str = "") -> dict:  # type: ignore[type-arg]
    out = assert_isolated_ok(backend, _REPORT.format(prelude=prelude))
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


# --- in this process --------------------------------------------------------------------------


def test_backend_under_test(backend_name: str) -> None:
    assert fastmerge.BACKEND == backend_name
    for name in _backend.API:
        assert getattr(fastmerge, name) is getattr(_backend.load(backend_name), name)


@pytest.mark.single_run
def test_selected_backend_follows_the_environment() -> None:
    """What ``import fastmerge`` chose for this session (before the fixture's rebinding)."""
    expected = "python" if REQUESTED == "python" or RUST is None else "rust"
    assert _backend.selected == expected
    assert _backend.impl is (PYTHON if expected == "python" else RUST)


@pytest.mark.single_run
def test_backend_info() -> None:
    info = fastmerge.backend_info()
    assert set(info) == INFO_KEYS
    assert info["backend"] == _backend.selected
    assert info["requested"] == REQUESTED
    assert info["version"] == fastmerge.__version__
    assert info["python"] == platform.python_version()
    if RUST is not None:
        assert info["extension_version"] == RUST.__version__ == fastmerge.__version__
        assert info["fallback_reason"] is None
        # how the extension was compiled: make test builds debug, make build-prod release
        assert info["build"] == RUST.BUILD_PROFILE
        assert info["build"] in ("release", "debug")


@pytest.mark.single_run
def test_api_names_are_public() -> None:
    for name in _backend.API:
        assert name in fastmerge.__all__
        assert hasattr(PYTHON, name)
        if RUST is not None:
            assert hasattr(RUST, name)


@pytest.mark.single_run
def test_bind() -> None:
    namespace: dict[str, object] = {}
    _backend.bind(namespace, PYTHON)
    assert set(namespace) == set(_backend.API) | set(_backend.ALIASES)
    assert all(namespace[n] is getattr(PYTHON, n) for n in _backend.API)
    assert namespace["merge_parser_content"] is PYTHON.merge


@pytest.mark.single_run
def test_load_unknown_backend() -> None:
    with pytest.raises(ValueError, match="bogus"):
        _backend.load("bogus")


def test_constants_follow_the_spec(backend_module: ModuleType) -> None:
    assert canonical(backend_module.MAX_DEPTH) == canonical(256)
    assert canonical(backend_module.POLICIES) == canonical(("openjiuwen", "delta", "langchain"))
    assert canonical(backend_module.LIST_MERGES) == canonical(("concat", "by_index"))
    assert canonical(backend_module.ATOMIC_KEYS) == canonical(SPEC_ATOMIC_KEYS)
    assert backend_module.__version__ == fastmerge.__version__


@pytest.mark.differential
def test_both_modules_identical_version_and_constants(both: tuple[ModuleType, ModuleType]) -> None:
    rust, python = both
    assert rust.__version__ == python.__version__ == fastmerge.__version__
    for name in ("MAX_DEPTH", "POLICIES", "LIST_MERGES", "ATOMIC_KEYS"):
        assert canonical(getattr(rust, name)) == canonical(getattr(python, name)), name


@pytest.mark.differential
def test_both_raise_the_same_error_classes(both: tuple[ModuleType, ModuleType]) -> None:
    """The extension raises fastmerge.errors' classes themselves, not look-alikes."""
    deep_a: dict[str, object] = {"a": "x"}
    deep_b: dict[str, object] = {"a": "y"}
    for _ in range(300):
        deep_a, deep_b = {"a": deep_a}, {"a": deep_b}
    cyclic: dict[str, object] = {}
    cyclic["x"] = cyclic
    for module in both:
        with pytest.raises(fastmerge.DepthLimitError):
            module.merge(deep_a, deep_b)
        with pytest.raises(fastmerge.CycleError):
            module.merge(cyclic, cyclic)
        with pytest.raises(fastmerge.MergeTypeError):
            module.merge({"x": "a"}, {"x": 1}, policy="delta", strict=True)


# --- FASTMERGE_BACKEND in subprocesses ------------------------------------------------------

_subprocess = pytest.mark.single_run


@_subprocess
def test_env_python() -> None:
    report = _report("python")
    assert report["backend"] == "python" and report["info"]["backend"] == "python"
    assert report["info"]["requested"] == "python"
    assert report["bound"] and report["impl"] == "fastmerge._pure"
    assert report["warnings"] == []
    assert report["merge"] == {"a": "xy"}


@_subprocess
def test_env_python_ignores_an_absent_extension() -> None:
    report = _report("python", _ABSENT)
    assert report["backend"] == "python" and report["warnings"] == []


@_subprocess
def test_env_rust() -> None:
    if not EXTENSION_INSTALLED:
        pytest.skip("the extension is not installed (see test_env_rust_without_extension...)")
    report = _report("rust")
    assert report["backend"] == "rust" and report["info"]["requested"] == "rust"
    assert report["bound"] and report["impl"] == "fastmerge._fastmerge"
    assert report["info"]["extension_version"] == fastmerge.__version__
    assert report["warnings"] == []
    assert report["merge"] == {"a": "xy"}


@_subprocess
def test_env_rust_without_extension_fails_loudly() -> None:
    proc = run_isolated("rust", f"import sys\n{_ABSENT}\nimport fastmerge")
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr or "ModuleNotFoundError" in proc.stderr


@_subprocess
def test_env_auto() -> None:
    report = _report("auto")
    assert report["info"]["requested"] == "auto"
    if EXTENSION_INSTALLED:
        assert report["backend"] == "rust" and report["info"]["fallback_reason"] is None
        assert report["warnings"] == []
    else:
        assert report["backend"] == "python"


@_subprocess
def test_env_unset_means_auto() -> None:
    env = {k: v for k, v in os.environ.items() if k != "FASTMERGE_BACKEND"}
    env["PYTHONPATH"] = PACKAGE_ROOT
    code = (
        "import warnings; warnings.simplefilter('ignore'); import fastmerge; "
        "print(fastmerge.backend_info()['requested'])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "auto"


@_subprocess
def test_env_auto_without_extension_falls_back_with_a_warning() -> None:
    report = _report("auto", _ABSENT)
    assert report["backend"] == "python"
    assert report["bound"] and report["impl"] == "fastmerge._pure"
    assert report["info"]["fallback_reason"]
    assert [w[0] for w in report["warnings"]] == ["FallbackWarning"]
    assert "FASTMERGE_BACKEND=python" in report["warnings"][0][1]
    assert report["merge"] == {"a": "xy"}


@_subprocess
@pytest.mark.parametrize("backend", ["auto", "rust"])
def test_stale_extension_is_an_error_not_a_fallback(backend: str) -> None:
    proc = run_isolated(backend, f"import sys\n{_STALE}\nimport fastmerge")
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr
    assert "0.0.0-stale" in proc.stderr and fastmerge.__version__ in proc.stderr


@_subprocess
@pytest.mark.parametrize("value", ["bogus", "pure", "cpython", "rust,python"])
def test_env_bogus_is_an_import_error(value: str) -> None:
    proc = run_isolated(value, "import fastmerge")
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr
    assert value in proc.stderr
    for choice in ("auto", "rust", "python"):
        assert choice in proc.stderr.splitlines()[-1]
