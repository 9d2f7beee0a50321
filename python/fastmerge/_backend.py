"""Backend selection: the Rust extension or the pure-Python twin, chosen once at import.

``FASTMERGE_BACKEND``:

- ``auto`` (default): the extension; if it is *absent*, the twin, with a
  :class:`FallbackWarning`. An extension that is present but broken or of another version is
  an error, never a silent downgrade.
- ``rust``: the extension or an ``ImportError``.
- ``python``: the twin.

Both implementations expose the names in :data:`API`; :func:`bind` copies them onto a
namespace (the ``fastmerge`` package, or a test fixture switching backends).
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from types import ModuleType
from typing import Any

from ._version import __version__

__all__ = [
    "ALIASES",
    "API",
    "BACKENDS",
    "MESSAGE_API",
    "STREAM_API",
    "aggregate_module",
    "backend_of",
    "FallbackWarning",
    "bind",
    "chunk_core",
    "info",
    "load",
    "messages",
    "selected",
]

#: The functions and constants every backend provides, with the same behaviour.
API = (
    "merge",
    "merge_all",
    "merge_dicts",
    "concat_token_ids",
    "merge_logprobs",
    "add_ai_message_chunks",
    "MAX_DEPTH",
    "POLICIES",
    "LIST_MERGES",
    "ATOMIC_KEYS",
)

#: Other names of functions in :data:`API`: openJiuwen's, so that changing an import is the
#: whole migration (``fastmerge.message_chunk``).
ALIASES = {"merge_parser_content": "merge"}

#: The message names (``fastmerge.messages``), built on a backend's ``ChunkCore``.
MESSAGE_API = (
    "BaseMessageChunk",
    "AssistantMessageChunk",
    "ToolMessageChunk",
    "AssistantMessage",
    "ToolMessage",
    "fold_chunks",
)

#: The stream names (``fastmerge.aggregate``), built on a backend's ``AggregatorCore``.
STREAM_API = ("Aggregator", "aggregate", "aggregate_choices")

BACKENDS = ("rust", "python")
_CHOICES = ("auto", "rust", "python")


class FallbackWarning(UserWarning):
    """The Rust extension is not installed; fastmerge runs on its pure-Python twin."""


def load(name: str) -> ModuleType:
    """Import one backend by name (``"rust"`` or ``"python"``), checking its version."""
    if name == "python":
        from . import _pure

        return _pure
    if name == "rust":
        # import_module, not ``from . import _fastmerge``: an absent submodule then raises
        # ModuleNotFoundError naming it, which _select() tells apart from a broken extension
        # (``from . import`` turns absence into a plain ImportError about a circular import).
        _fastmerge = importlib.import_module(f"{__package__}._fastmerge")

        ext_version = getattr(_fastmerge, "__version__", None)
        if ext_version != __version__:
            raise ImportError(
                f"fastmerge._fastmerge is version {ext_version}, the Python package is "
                f"{__version__}: rebuild the extension (maturin develop / pip install .)"
            )
        module: ModuleType = _fastmerge
        return module
    raise ValueError(f"unknown backend {name!r}; expected one of 'rust', 'python'")


def _select() -> tuple[ModuleType, str, str, str | None]:
    requested = os.environ.get("FASTMERGE_BACKEND", "auto").strip().lower() or "auto"
    if requested not in _CHOICES:
        raise ImportError(f"FASTMERGE_BACKEND={requested!r} is not one of {', '.join(_CHOICES)}")
    if requested == "python":
        return load("python"), "python", requested, None
    if requested == "rust":
        return load("rust"), "rust", requested, None
    try:
        return load("rust"), "rust", requested, None
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}._fastmerge":
            raise
        reason = "the compiled extension fastmerge._fastmerge is not installed"
        warnings.warn(
            f"{reason}; using the pure-Python twin (set FASTMERGE_BACKEND=python to silence)",
            FallbackWarning,
            stacklevel=3,
        )
        return load("python"), "python", requested, reason


impl, selected, _requested, _fallback_reason = _select()


def bind(namespace: dict[str, Any], module: ModuleType) -> None:
    """Point every name of :data:`API` (and :data:`ALIASES`) in ``namespace`` at
    ``module``'s implementation."""
    for name in API:
        namespace[name] = getattr(module, name)
    for alias, name in ALIASES.items():
        namespace[alias] = getattr(module, name)


# module name -> backend name, for copies of fastmerge.messages / .aggregate on another backend
_CORE_OVERRIDES: dict[str, str] = {}


def backend_of(module_name: str) -> tuple[str, ModuleType]:
    """The backend (name, module) that the module ``module_name`` is built on."""
    name = _CORE_OVERRIDES.get(module_name)
    if name is None:
        # a module of a copied package (``fastmerge._batch_python.run``): its package's
        package = module_name.rsplit(".", 1)[0]
        while name is None and "." in package:
            name = _CORE_OVERRIDES.get(package)
            package = package.rsplit(".", 1)[0]
    name = name or selected
    return name, impl if name == selected else load(name)


def chunk_core(module_name: str) -> Any:
    """The ``ChunkCore`` that the messages module ``module_name`` derives its classes from."""
    return backend_of(module_name)[1].ChunkCore


def _copy(base: str, name: str) -> ModuleType:
    """``fastmerge.<base>`` built on backend ``name``: the package's own module for the
    selected backend, else a second copy of the same source (for tests and comparisons)."""
    import importlib.util

    own = importlib.import_module(f"{__package__}.{base}")
    if name == selected:
        return own
    module_name = f"{__package__}._{base}_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    load(name)
    _CORE_OVERRIDES[module_name] = name
    # a package's copy finds its own submodules, which are copied with it
    spec = importlib.util.spec_from_file_location(
        module_name, own.__file__, submodule_search_locations=getattr(own, "__path__", None)
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def messages(name: str) -> ModuleType:
    """``fastmerge.messages`` built on backend ``name``."""
    return _copy("messages", name)


def aggregate_module(name: str) -> ModuleType:
    """``fastmerge.aggregate`` built on backend ``name`` (with that backend's messages)."""
    return _copy("aggregate", name)


def info() -> dict[str, Any]:
    """What runs, and why: see :func:`fastmerge.backend_info`."""
    ext_version = build = None
    try:
        extension = importlib.import_module(f"{__package__}._fastmerge")
    except ImportError:
        pass
    else:
        ext_version = getattr(extension, "__version__", None)
        build = getattr(extension, "BUILD_PROFILE", None)
    return {
        "backend": selected,
        "requested": _requested,
        "version": __version__,
        "extension_version": ext_version,
        "build": build,
        "fallback_reason": _fallback_reason,
        "python": sys.version.split()[0],
    }
