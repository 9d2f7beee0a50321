"""Docs a user can follow: ``help(fastmerge)`` starts with an example that runs (on each
backend), the package namespace holds only public names, the rules the docstrings and the
README cite ship in ``docs/`` (kept equal to ``../shared/spec`` by a check, as the corpus is),
and no text a user reads cites a spec they do not have."""

from __future__ import annotations

import doctest
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _support.corpus import SHARED_CORPUS
from _support.docs import PAGES, SPEC_COPIES, TEXT
from conftest import EXTENSION_INSTALLED, assert_isolated_ok

import fastmerge

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SHARED_SPEC = SHARED_CORPUS.parent / "spec"


def test_help_starts_with_an_example_that_runs(backend_name: str) -> None:
    doc = fastmerge.__doc__
    assert doc is not None
    assert doc.splitlines().index(">>> import fastmerge") == 5  # after the summary, one sentence
    test = doctest.DocTestParser().get_doctest(doc, {}, "fastmerge", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert (runner.failures, runner.tries) == (0, 7)


_NAMES = """
import json, types, fastmerge
print(json.dumps({
    name: getattr(getattr(fastmerge, name), "__name__", None)
    for name in dir(fastmerge)
    if not name.startswith("__") and isinstance(getattr(fastmerge, name), types.ModuleType)
}))
print(json.dumps(sorted(n for n in dir(fastmerge) if not n.startswith("__"))))
"""

#: The public submodules a plain ``import fastmerge`` binds (``aggregate`` is the function).
_MODULES = {"errors", "messages", "parts", "render"}


@pytest.mark.single_run
@pytest.mark.parametrize("backend", ["rust", "python"])
def test_the_namespace_is_the_public_names(backend: str) -> None:
    if backend == "rust" and not EXTENSION_INSTALLED:
        pytest.skip("the extension is not installed")
    modules_line, names_line = assert_isolated_ok(backend, _NAMES).splitlines()[-2:]
    modules, names = json.loads(modules_line), json.loads(names_line)
    public = {n for n in fastmerge.__all__ if not n.startswith("__")}
    assert [n for n in names if not n.startswith("_")] == sorted(public | _MODULES)
    # the private names are the package's own submodules, under their own names (no alias
    # such as ``_impl`` for the backend module)
    private = [n for n in names if n.startswith("_")]
    assert {n: modules.get(n) for n in private} == {n: f"fastmerge.{n}" for n in private}
    backend_module = "_fastmerge" if backend == "rust" else "_pure"
    assert {"_backend", "_version", backend_module} <= set(private)


def _public_docstrings() -> dict[str, str]:
    """The docstrings ``help()`` shows for the package and every public name and member."""
    docs = {"fastmerge": fastmerge.__doc__ or ""}
    for name in fastmerge.__all__:
        value = getattr(fastmerge, name)
        docs[name] = inspect.getdoc(value) or ""
        if inspect.isclass(value):
            for member, attr in vars(value).items():
                if not member.startswith("_") or member == "__init__":
                    docs[f"{name}.{member}"] = inspect.getdoc(attr) or ""
    return docs


def _cli_help() -> str:
    out = []
    for args in (["--help"], ["merge", "--help"]):
        proc = subprocess.run(
            [sys.executable, "-m", "fastmerge", *args], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        out.append(proc.stdout)
    return "\n".join(out)


def _unfollowable(text: str) -> list[str]:
    """References a reader without the project's private spec folder cannot follow: "spec",
    a § not cited as "rules §" (docs/merge-rules.md), a spec path."""
    found = re.findall(r"\bspec\b[^\n]{0,20}", text, flags=re.IGNORECASE)
    found += re.findall(r"(?<!rules )§[\d.]+", text)
    found += re.findall(r"spec/[\w.-]+", text)
    return found


def test_the_docstrings_cite_only_the_docs_that_ship(backend_name: str) -> None:
    bad = {name: refs for name, doc in _public_docstrings().items() if (refs := _unfollowable(doc))}
    assert bad == {}


@pytest.mark.single_run
def test_the_cli_help_cites_no_spec() -> None:
    assert _unfollowable(_cli_help()) == []


@pytest.mark.single_run
@pytest.mark.parametrize("page", PAGES)
def test_the_pages_cite_only_the_docs_that_ship(page: str) -> None:
    prose = re.sub(r"```.*?```", "", TEXT[page], flags=re.S)  # code may say "spec" as a word
    assert _unfollowable(prose) == []
    # every E<number> is an edge case of docs/edge-cases.md
    numbered = re.findall(r"^(\d+)\. ", (DOCS / "edge-cases.md").read_text("utf-8"), re.M)
    cases = {f"E{n}" for n in numbered}
    cited = set(re.findall(r"\bE\d+\b", prose))
    assert cited - cases == set()


@pytest.mark.single_run
def test_the_readme_links_the_rules() -> None:
    readme = TEXT["README.md"]
    assert "(docs/edge-cases.md)" in readme and "(docs/merge-rules.md)" in readme


@pytest.mark.single_run
def test_the_rules_ship_in_docs_equal_to_the_shared_spec() -> None:
    for name in SPEC_COPIES:
        assert (DOCS / name).is_file(), name
    if not SHARED_SPEC.is_dir():
        reason = f"no upstream spec at {SHARED_SPEC}: docs/ is not checked"
        if os.environ.get("FASTMERGE_REQUIRE_CORPUS"):
            pytest.fail(f"{reason}, and FASTMERGE_REQUIRE_CORPUS is set (.ci/run)")
        pytest.skip(reason)
    differ = [
        n
        for n, spec in SPEC_COPIES.items()
        if (DOCS / n).read_bytes() != (SHARED_SPEC / spec).read_bytes()
    ]
    assert differ == [], "docs/ differs from ../shared/spec: copy the files again"
