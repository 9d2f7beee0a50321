"""The house a newcomer walks into: the Python package's import graph has no cycle, the two
backends never import the public layer, every source file stays under 800 lines and every
function under 150, and no comment points at an issue number or a file outside the repository.

Layers, bottom up: the low-level modules (errors, read-only trees, version, option types, the
message's field table) <- the
twin (``fastmerge._pure``) and the Rust bindings (``src/py``) <- the public layer (everything
else). Imports under ``if TYPE_CHECKING:`` are for annotations only and are not edges.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "fastmerge"
LOW = {
    "fastmerge.errors",
    "fastmerge._frozen",
    "fastmerge._version",
    "fastmerge._types",
    "fastmerge._message_fields",
}
#: ``fastmerge.message_chunk`` is openJiuwen's module name as an alias of the package: it reads
#: each name from the package at access (so it follows the backend a test binds there), and
#: the package binds it as a submodule. The one deliberate edge back to the package.
ALIAS_EDGES = {("fastmerge.message_chunk", "fastmerge")}
MAX_LINES = 800
MAX_FUNCTION_LINES = 150

pytestmark = pytest.mark.single_run


def _modules() -> dict[str, tuple[Path, bool]]:
    mods = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return mods


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                inside.update(id(n) for n in ast.walk(stmt))
    return inside


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (at any depth of its code)."""
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in mods.items():
        tree = ast.parse(path.read_text("utf-8"))
        skip = _type_checking_nodes(tree)
        edges: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name.split(".")[0] == "fastmerge")
            elif isinstance(node, ast.ImportFrom):
                base = name if is_package else name.rpartition(".")[0]
                if node.level:
                    base = ".".join(base.split(".")[: len(base.split(".")) - node.level + 1])
                    target = f"{base}.{node.module}" if node.module else base
                else:
                    target = node.module or ""
                if target.split(".")[0] != "fastmerge":
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    edges.add(sub if sub in mods else target)
        graph[name] = {e for e in edges if e != name and (e in mods or e.endswith("._fastmerge"))}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    for source, target in ALIAS_EDGES:
        graph[source].discard(target)
    assert cycles(graph) == []


def test_the_cycle_check_can_fail() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = import_graph()
    assert "fastmerge._frozen" in graph["fastmerge.parts"]  # edges are read at all


def test_the_backends_import_nothing_above_them() -> None:
    graph = import_graph()
    upward = {
        module: sorted(e for e in edges if not (e.startswith("fastmerge._pure") or e in LOW))
        for module, edges in graph.items()
        if module.startswith("fastmerge._pure") or module in LOW
    }
    assert {m: e for m, e in upward.items() if e} == {}


def test_the_bindings_import_only_the_low_level_modules() -> None:
    imported = set()
    for path in (ROOT / "src").rglob("*.rs"):
        imported.update(re.findall(r'"(fastmerge(?:\.\w+)*)"', path.read_text("utf-8")))
    imported = {m for m in imported if m not in ("fastmerge._fastmerge", "fastmerge._unpack")}
    assert imported and imported <= LOW, imported - LOW


def _sources() -> list[Path]:
    roots = ("src", "python", "tests", "benches", "tools")
    return [
        p
        for root in roots
        for p in sorted((ROOT / root).rglob("*"))
        if p.suffix in (".rs", ".py", ".pyi") and "corpus" not in p.parts
    ]


def test_every_source_file_is_under_800_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in _sources()
        if (n := len(p.read_text("utf-8").splitlines())) >= MAX_LINES
    }
    assert long == {}


#: A Rust function's first line (its body's end is the first line at its indentation that
#: starts with ``}``; rustfmt writes every function so).
_RUST_FN = re.compile(r"^(\s*)(?:pub(?:\([a-z]+\))? )?(?:const )?(?:unsafe )?(?:async )?fn (\w+)")


def long_functions(path: Path) -> dict[str, int]:
    """The functions of a Rust or Python file longer than :data:`MAX_FUNCTION_LINES`."""
    text = path.read_text("utf-8")
    found: dict[str, int] = {}
    if path.suffix == ".py":
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    found[f"{node.name}:{node.lineno}"] = n
        return found
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _RUST_FN.match(line)
        if m is None or line.rstrip().endswith(";"):
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(m[1] + "}")), i)
        if end - i + 1 > MAX_FUNCTION_LINES:
            found[f"{m[2]}:{i + 1}"] = end - i + 1
    return found


def test_no_function_is_over_150_lines() -> None:
    long = {
        f"{p.relative_to(ROOT)}:{name}": n
        for p in _sources()
        if p.suffix in (".rs", ".py")
        for name, n in long_functions(p).items()
    }
    assert long == {}


def test_the_function_length_check_can_fail(tmp_path: Path) -> None:
    body = "\n".join(["    x = 1"] * MAX_FUNCTION_LINES)
    (tmp_path / "long.py").write_text(f"def long():\n{body}\n\n\ndef short():\n    pass\n")
    assert long_functions(tmp_path / "long.py") == {"long:1": MAX_FUNCTION_LINES + 1}
    rust = "\n".join(["        let x = 1;"] * MAX_FUNCTION_LINES)
    (tmp_path / "long.rs").write_text(
        f"impl A {{\n    pub(crate) fn long() {{\n{rust}\n    }}\n}}\n"
    )
    assert long_functions(tmp_path / "long.rs") == {"long:2": MAX_FUNCTION_LINES + 2}


def test_no_comment_points_at_an_issue_or_outside_the_repository() -> None:
    pattern = re.compile(r"\bissues? ?#?\d+\b|/work/|\.\./shared/notes|\bnotes/[\w-]+\.md", re.I)
    found = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in _sources()
        if p.name != "test_layout.py"
        for i, line in enumerate(p.read_text("utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
