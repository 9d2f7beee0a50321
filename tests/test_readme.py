"""The README tells the truth: its example prints what it shows, its commands exist and run.

Examples are ```python blocks followed directly by a ```text block holding their output; each
runs in a fresh interpreter on the backend under test.
"""

from __future__ import annotations

import gzip
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import fastmerge

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
PACKAGE_ROOT = Path(fastmerge.__file__).resolve().parent.parent
EXAMPLES = re.findall(r"```python\n(.*?)```\s*```text\n(.*?)```", README, re.DOTALL)
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, re.DOTALL)


def _env(backend: str) -> dict[str, str]:
    env = {**os.environ, "FASTMERGE_BACKEND": backend}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH")) if p)
    return env


def _section(title: str) -> str:
    match = re.search(
        rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.DOTALL | re.MULTILINE
    )
    assert match, f"README has no section {title!r}"
    return match.group(1)


def test_readme_has_an_example() -> None:
    assert EXAMPLES, "no ```python block followed by its ```text output in README.md"


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_example_output(backend_name: str, index: int) -> None:
    code, shown = EXAMPLES[index]
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_env(backend_name),
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == shown


def test_two_setup_commands_on_the_first_screen() -> None:
    """Exactly two commands, the demo and the test command, and .ci/run runs the latter."""
    lang, body = BLOCKS[0]
    assert lang == "sh"
    assert README.index(f"```{lang}\n{body}```") < README.index("\n## ")
    demo, tests = body.strip().splitlines()
    assert (demo, tests) == ("make demo", "make all")
    makefile = (ROOT / "Makefile").read_text("utf-8")
    assert re.search(r"^demo:", makefile, re.MULTILINE)
    assert re.search(r"^all:", makefile, re.MULTILINE)
    assert ".DEFAULT_GOAL := all" in makefile
    ci_run = (ROOT / ".ci" / "run").read_text("utf-8")
    assert re.search(r"^\s*make all\b", ci_run, re.MULTILINE), ".ci/run must run `make all`"


def test_demo_command_matches_the_makefile() -> None:
    """The command the README says `make demo` runs is the one the Makefile runs."""
    said = re.search(r"runs\n`(fastmerge merge [^`]*)`", README)
    assert said, "README does not say which command make demo runs"
    makefile = (ROOT / "Makefile").read_text("utf-8").replace("\\\n", " ")
    recipe = re.search(r"^demo:.*?\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe
    runs = [shlex.split(line) for line in recipe.group(1).splitlines()]
    assert shlex.split(said.group(1))[1:] in [
        argv[1:] for argv in runs if argv[0].endswith("fastmerge")
    ]


def _cli_lines() -> list[list[str]]:
    commands = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", _section("Command line"), re.DOTALL):
        if lang != "sh":
            continue
        for line in body.splitlines():
            argv = shlex.split(line)
            if argv and argv[0] == "fastmerge":
                commands.append(argv[1:])
    return commands


@pytest.mark.parametrize("args", _cli_lines(), ids=" ".join)
def test_cli_examples_run(backend_name: str, args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "fastmerge", *args],
        capture_output=True,
        env=_env(backend_name),
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout


def test_cli_error_message_as_shown(backend_name: str, tmp_path: Path) -> None:
    text = " ".join(_section("Command line").split())
    shown = re.findall(r"`(fastmerge: error: [^`]*)`", text)
    # in the README's order: a compressed provider stream, an empty input, a bad JSON line
    cases = [
        (["merge", "--provider", "auto"], gzip.compress(b'{"choices": []}\n')),
        (["merge"], b"\n \n"),
        (["merge"], b'{"a": "x"}\n\n{"a": \n'),
    ]
    assert len(shown) == len(cases), shown
    for (args, content), message in zip(cases, shown):
        name = message.split(": ")[2].split(":")[0]  # the file the message names
        (tmp_path / name).write_bytes(content)
        proc = subprocess.run(
            [sys.executable, "-m", "fastmerge", *args, name],
            capture_output=True,
            text=True,
            env=_env(backend_name),
            cwd=tmp_path,
            timeout=120,
        )
        assert proc.returncode == 1
        assert proc.stderr == message + "\n"
