"""The typed API: the examples of the README and the docs pages, and tests/typed_api.py, pass
``mypy --strict`` (the latter pins the result types of merge, merge_all, ``+``, to_message(),
content and the ``Literal`` options), and the ``Literal`` aliases name exactly the options the
backends take.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import pytest
from _support.docs import EXAMPLES as DOC_EXAMPLES

import fastmerge

ROOT = Path(__file__).resolve().parents[2]
#: Every page's examples: ```python blocks followed by their ```text output
#: (tests/_support/docs.py).
EXAMPLES: list[str] = [code for _, _, code, _ in DOC_EXAMPLES]


def _mypy(*paths: Path) -> subprocess.CompletedProcess[str]:
    # from the project root: the project's mypy settings, and its cache; MYPYPATH finds the
    # package under test where it is not installed (make test-pure: PYTHONPATH=python)
    env = {**os.environ, "MYPYPATH": str(Path(fastmerge.__file__).resolve().parent.parent)}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )


@pytest.mark.single_run
def test_readme_examples_and_typed_api_pass_mypy_strict(tmp_path: Path) -> None:
    assert len(EXAMPLES) >= 3
    paths = [ROOT / "tests" / "typed_api.py"]
    for i, code in enumerate(EXAMPLES):
        ast.parse(code)  # a block that is not Python is not an example
        paths.append(tmp_path / f"readme_example_{i}.py")
        paths[-1].write_text(code, "utf-8")
    proc = _mypy(*paths)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"Success: no issues found in {len(paths)} source files")


@pytest.mark.single_run
def test_mypy_rejects_what_the_types_forbid(tmp_path: Path) -> None:
    """The check above can fail: a wrong expected type and an untyped user script are errors."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from typing import assert_type\n"
        "import fastmerge\n"
        "assert_type(fastmerge.merge_all(['a']), str)\n"
        "message = fastmerge.aggregate(b'')\n"
        "message.tool_calls[0]\n",
        "utf-8",
    )
    proc = _mypy(bad)
    assert proc.returncode == 1
    assert 'bad.py:3: error: Expression is of type "str | None", not "str"' in proc.stdout
    assert 'bad.py:5: error: Value of type "list[ToolCall] | None" is not indexable' in proc.stdout


def _expected_names(call: Any) -> tuple[str, ...]:
    """The names an option's ValueError lists (``expected one of 'a', 'b'``)."""
    with pytest.raises(ValueError, match="expected one of") as info:
        call()
    return tuple(ast.literal_eval(f"[{str(info.value).split('expected one of ')[1]}]"))


def test_literal_aliases_are_the_options_the_backend_takes(backend_module: ModuleType) -> None:
    assert (
        get_args(fastmerge.Policy)
        == backend_module.POLICIES
        == ("openjiuwen", "delta", "langchain")
    )
    assert get_args(fastmerge.ListMerge) == backend_module.LIST_MERGES == ("concat", "by_index")
    assert get_args(fastmerge.Provider) == backend_module.PROVIDERS
    assert get_args(fastmerge.Provider) == fastmerge.PROVIDERS
    assert fastmerge.MergeOptions.__optional_keys__ == {"policy", "list_merge", "strict"}
    chunk = fastmerge.AssistantMessageChunk(content="a")
    usage = _expected_names(lambda: fastmerge.fold_chunks([chunk], usage="x"))  # type: ignore[arg-type]
    assert get_args(fastmerge.UsageMerge) == usage == ("merge", "sum", "last")
    signature = _expected_names(
        lambda: fastmerge.fold_chunks([chunk], signature_merge="x")  # type: ignore[arg-type]
    )
    assert get_args(fastmerge.SignatureMerge) == signature == ("replace", "concat")
    providers = _expected_names(lambda: fastmerge.aggregate([], provider="x"))  # type: ignore[arg-type]
    assert providers == ("auto", *get_args(fastmerge.Provider))
