"""Load openJiuwen's merge functions (the drop-in reference) without its heavy package.

``pip install --no-deps openjiuwen`` installs the package, but importing it through
``openjiuwen/__init__`` pulls in many dependencies. Its schema modules need only pydantic, so we
register empty parent packages in ``sys.modules`` and load the three modules by file.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from types import ModuleType

_SCHEMA = "openjiuwen.core.foundation.llm.schema"


def _schema_dir() -> Path | None:
    spec = importlib.util.find_spec("openjiuwen")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    path = root / "core" / "foundation" / "llm" / "schema"
    return path if (path / "message_chunk.py").exists() else None


def load() -> ModuleType | None:
    """The ``message_chunk`` module of openJiuwen, or ``None`` if it is not installed."""
    name = f"{_SCHEMA}.message_chunk"
    if name in sys.modules:
        return sys.modules[name]
    directory = _schema_dir()
    if directory is None:
        return None
    parts = _SCHEMA.split(".")
    for i in range(1, len(parts) + 1):
        pkg = ".".join(parts[:i])
        if pkg not in sys.modules:
            module = types.ModuleType(pkg)
            module.__path__ = []
            sys.modules[pkg] = module
    for leaf in ("tool_call", "message", "message_chunk"):
        full = f"{_SCHEMA}.{leaf}"
        spec = importlib.util.spec_from_file_location(full, directory / f"{leaf}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
