"""Test setup: every test runs once per backend, hypothesis profiles, the report header, and
``canonical()`` (type-aware comparison of results).

Backends under test (``FASTMERGE_BACKEND``):

- ``python``: the pure-Python twin only;
- ``rust``: the extension and the twin; the extension MUST load (a missing or stale extension
  is an error at collection, never a skip) — this is what CI sets;
- ``auto`` (default): the extension and the twin, or the twin only when the extension is not
  installed.

The autouse fixture ``_fastmerge_backend`` rebinds the names of ``fastmerge._backend.API`` and
``MESSAGE_API`` (the chunk classes, built on that backend's ``ChunkCore``) and
``fastmerge.BACKEND`` on the ``fastmerge`` module, so tests call ``fastmerge.merge(...)`` and
get the backend of their parameter (test ids ``[rust]`` / ``[python]``). Tests marked
``differential`` compare the two modules themselves (fixture ``both``) and run once.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator

import pytest
from hypothesis import HealthCheck, settings

with warnings.catch_warnings():
    # auto without the extension warns (FallbackWarning); the header below says what runs.
    warnings.simplefilter("ignore")
    import fastmerge
    from fastmerge import _backend

# ---------------------------------------------------------------------------------------------
# Backends

REQUESTED = os.environ.get("FASTMERGE_BACKEND", "auto").strip().lower() or "auto"


def _rust_module() -> ModuleType | None:
    """The extension, or None when it is not installed (only acceptable in auto mode)."""
    if REQUESTED == "python":
        return None
    try:
        module = _backend.load("rust")
    except ModuleNotFoundError as exc:
        if REQUESTED == "rust" or exc.name != "fastmerge._fastmerge":
            raise
        return None
    missing = [name for name in _backend.API if not hasattr(module, name)]
    if missing:
        # present but incomplete: loud in every mode, never a silent downgrade
        raise ImportError(f"fastmerge._fastmerge lacks {', '.join(missing)}")
    return module


def _extension_installed() -> bool:
    """Whether a usable extension is installed, whichever backends this session tests."""
    try:
        module = _backend.load("rust")
    except ImportError:
        return False
    return all(hasattr(module, name) for name in _backend.API)


RUST: ModuleType | None = _rust_module()
#: For tests that select backends in subprocesses (test_backend.py).
EXTENSION_INSTALLED: bool = RUST is not None or _extension_installed()
PYTHON: ModuleType = _backend.load("python")
MODULES: dict[str, ModuleType] = {"python": PYTHON}
if RUST is not None:
    MODULES = {"rust": RUST, "python": PYTHON}
BACKENDS: list[str] = list(MODULES)
#: ``fastmerge.messages`` built on each backend's ChunkCore (the chunk and message classes).
MESSAGES: dict[str, ModuleType] = {name: _backend.messages(name) for name in BACKENDS}
#: ``fastmerge.aggregate`` built on each backend's AggregatorCore (Aggregator, aggregate, ...).
AGGREGATES: dict[str, ModuleType] = {name: _backend.aggregate_module(name) for name in BACKENDS}

#: Where the ``fastmerge`` package under test lives (for subprocesses).
PACKAGE_ROOT = str(Path(fastmerge.__file__).resolve().parent.parent)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "differential: compares the two backend modules directly (fixture `both`); runs once",
    )
    config.addinivalue_line(
        "markers",
        "single_run: the test covers the backends itself (loops over conftest.MODULES, or "
        "spawns interpreters with FASTMERGE_BACKEND set); runs once, id [rust+python]",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "_fastmerge_backend" not in metafunc.fixturenames:
        return
    names = BACKENDS
    ids = names
    definition = metafunc.definition
    if any(definition.get_closest_marker(m) for m in ("differential", "single_run")):
        # the test covers the backends itself: running it once per in-process backend would
        # only repeat it (fastmerge stays bound to the first backend meanwhile)
        names, ids = BACKENDS[:1], ["+".join(BACKENDS)]
    metafunc.parametrize("_fastmerge_backend", names, ids=ids, indirect=True, scope="function")


@pytest.fixture(autouse=True)
def _fastmerge_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test against one backend: rebind the public names of ``fastmerge``."""
    name: str = request.param
    namespace: dict[str, Any] = {}
    _backend.bind(namespace, MODULES[name])
    for attr in _backend.MESSAGE_API:
        namespace[attr] = getattr(MESSAGES[name], attr)
    for attr in _backend.STREAM_API:
        namespace[attr] = getattr(AGGREGATES[name], attr)
    for attr, value in namespace.items():
        monkeypatch.setattr(fastmerge, attr, value)
    monkeypatch.setattr(fastmerge, "BACKEND", name)
    return name


@pytest.fixture
def backend_name(_fastmerge_backend: str) -> str:
    """``"rust"`` or ``"python"``: the backend this test run uses."""
    return _fastmerge_backend


@pytest.fixture
def backend_module(_fastmerge_backend: str) -> ModuleType:
    return MODULES[_fastmerge_backend]


@pytest.fixture
def batch(_fastmerge_backend: str) -> ModuleType:
    """``fastmerge.batch`` as the test's backend builds it (tests/batch)."""
    from _support.batch import batch_module

    return batch_module(_fastmerge_backend)


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A real Dask ``LocalCluster``, two worker processes of one thread each, for one test
    module (the Dask tests; only they pay for importing ``distributed``)."""
    import distributed

    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with distributed.Client(cluster) as dask_client:
        yield dask_client
    cluster.close()


@pytest.fixture
def messages_module(_fastmerge_backend: str) -> ModuleType:
    """``fastmerge.messages`` on this test's backend (its chunk and message classes)."""
    return MESSAGES[_fastmerge_backend]


@pytest.fixture
def aggregate_module(_fastmerge_backend: str) -> ModuleType:
    """``fastmerge.aggregate`` on this test's backend (Aggregator, aggregate, ...)."""
    return AGGREGATES[_fastmerge_backend]


@pytest.fixture
def both() -> tuple[ModuleType, ModuleType]:
    """``(rust, python)`` modules for direct differential comparisons."""
    if RUST is None:
        # only reachable with FASTMERGE_BACKEND=python, or auto without the extension
        pytest.skip(f"rust backend not under test (FASTMERGE_BACKEND={REQUESTED})")
    return RUST, PYTHON


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [
        f"fastmerge backends under test: {', '.join(BACKENDS)} "
        f"(FASTMERGE_BACKEND={REQUESTED}; package at {PACKAGE_ROOT})",
        f"fastmerge.backend_info(): {fastmerge.backend_info()}",
        f"hypothesis profile: {_profile_name()}",
    ]


#: How the session tests' skips begin when they have no PostgreSQL server (_session_helpers.py).
PG_SKIPS = ("no PostgreSQL server", "PostgreSQL at FASTMERGE_PG_DSN is not reachable")
#: How to run them, said under the run's summary when they were skipped.
PG_HOW = (
    "to run them: make test where the PostgreSQL server is installed (tools/with-postgres "
    "starts one), bash .ci/run (installs and starts one), or set "
    "FASTMERGE_PG_DSN=postgresql://USER@HOST/DB"
)


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return ""


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """A line for the PostgreSQL tests skipped for want of a server (how many, why, and how to
    run them): a run that leaves them out never looks like a whole one."""
    reasons = [_skip_reason(report) for report in terminalreporter.stats.get("skipped", ())]
    skipped = [reason for reason in reasons if reason.startswith(PG_SKIPS)]
    if skipped:
        tests = f"{len(skipped)} PostgreSQL test{'s' * (len(skipped) != 1)}"
        why = (
            "FASTMERGE_PG_DSN is not set"
            if skipped[0].startswith(PG_SKIPS[0])
            else "the server at FASTMERGE_PG_DSN is not reachable"
        )
        terminalreporter.write_line(
            f"NOTE: {tests} of the session store skipped ({why}); {PG_HOW}", yellow=True
        )


# ---------------------------------------------------------------------------------------------
# openJiuwen, the reference of the default policy


def load_openjiuwen() -> ModuleType:
    """openJiuwen's ``message_chunk`` module; skips the caller if it is not installed (outside
    CI, where a missing reference must fail rather than hide the parity tests)."""
    from _support import openjiuwen as _openjiuwen

    module = _openjiuwen.load()
    if module is None:
        if os.environ.get("CI"):
            raise ImportError("openjiuwen is not installed: pip install --no-deps openjiuwen")
        pytest.skip(
            "openjiuwen is not installed (pip install --no-deps openjiuwen)",
            allow_module_level=True,
        )
    return module


@pytest.fixture(scope="session")
def oj() -> ModuleType:
    return load_openjiuwen()


# ---------------------------------------------------------------------------------------------
# Hypothesis

_COMMON = dict(
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
settings.register_profile("ci", max_examples=200, print_blob=True, **_COMMON)
settings.register_profile("dev", max_examples=50, **_COMMON)
# on demand (HYPOTHESIS_PROFILE=thorough), to hunt for rare differences: ~15x the CI time
settings.register_profile("thorough", max_examples=3000, print_blob=True, **_COMMON)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def _profile_name() -> str:
    getter = getattr(settings, "get_current_profile_name", None)
    return getter() if getter else str(getattr(settings, "_current_profile", "?"))


#: The openJiuwen parity test runs this many examples whatever the profile (>= 2000).
PARITY_EXAMPLES = max(2000, settings.default.max_examples)

# ---------------------------------------------------------------------------------------------
# Canonical form


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def canonical(value: Any) -> Any:
    """A nested tuple that tags every node with its exact type and value.

    Two values have equal canonical forms iff they are equal *and* of identical types at every
    node: ``1`` vs ``True`` vs ``1.0``, ``str`` vs a ``str`` subclass, ``dict`` vs
    ``OrderedDict``, and key order all count. Floats go by ``repr``, so NaN equals NaN and
    ``-0.0`` differs from ``0.0``. A container met again on its own path is written as
    ``("<cycle>", n)``, n levels up.
    """
    return _canon(value, [])


def _canon(value: Any, path: list[int]) -> Any:
    name = _type_name(value)
    if value is None or isinstance(value, bool):
        return (name, value)
    if isinstance(value, int):
        return (name, int(value))
    if isinstance(value, float):
        return (name, float.__repr__(value))
    if isinstance(value, complex):
        return (name, repr(complex(value)))
    if isinstance(value, str):
        return (name, str.__str__(value), _attrs(value, path))
    if isinstance(value, (bytes, bytearray)):
        return (name, bytes(value))
    ident = id(value)
    if ident in path:
        return ("<cycle>", len(path) - path.index(ident))
    path.append(ident)
    try:
        if isinstance(value, dict):
            items = tuple((_canon(k, path), _canon(v, path)) for k, v in dict.items(value))
            factory = getattr(value, "default_factory", None)
            extra = (getattr(factory, "__qualname__", repr(factory)),) if factory else ()
            return (name, items, *extra, _attrs(value, path))
        if isinstance(value, (list, tuple)):
            return (name, tuple(_canon(v, path) for v in value), _attrs(value, path))
        if isinstance(value, (set, frozenset)):
            return (name, tuple(sorted((_canon(v, path) for v in value), key=repr)))
        fields = getattr(type(value), "model_fields", None)
        if isinstance(fields, dict):  # pydantic model: its fields and extras, in order
            extra = getattr(value, "__pydantic_extra__", None) or {}
            state = [*vars(value).items(), *extra.items()]
            return (name, tuple((k, _canon(v, path)) for k, v in state))
        if hasattr(value, "__getstate__") and not isinstance(value, type):
            state = value.__getstate__()
            if state is not None and state is not value:
                return (name, _canon(state, path))
        if hasattr(value, "__dict__") and not isinstance(value, type):
            return (name, _canon(dict(vars(value)), path))
        return (name, repr(value))
    finally:
        path.pop()


def _attrs(value: Any, path: list[int]) -> Any:
    """Instance attributes of a builtin subclass (usually none)."""
    state = getattr(value, "__dict__", None)
    return _canon(dict(state), path) if state else None


def outcome(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """``("ok", canonical(result))`` or ``("raise", exception class, message)``."""
    try:
        result = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the exception *is* the outcome
        return ("raise", type(exc), str(exc))
    return ("ok", canonical(result))


def same_float(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (
        a == b and math.copysign(1, a) == math.copysign(1, b)
    )


# ---------------------------------------------------------------------------------------------
# Subprocesses (inputs that could crash a broken backend run outside the test process)


def run_isolated(backend: str, code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter with ``FASTMERGE_BACKEND=backend``."""
    env = {**os.environ, "FASTMERGE_BACKEND": backend}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (PACKAGE_ROOT, str(Path(__file__).parent), env.get("PYTHONPATH")) if p
    )
    return subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_isolated_ok(backend: str, code: str, timeout: float = 120) -> str:
    """Run ``code`` isolated; it must exit 0 (a crash or failed assert shows its stderr)."""
    proc = run_isolated(backend, code, timeout)
    assert proc.returncode == 0, (
        f"[{backend}] exit code {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    )
    return proc.stdout
