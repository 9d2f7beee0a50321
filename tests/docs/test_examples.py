"""The README and the docs pages tell the truth: every example prints what it shows, every
command exists and runs, every link leads to a page and a heading that exist, and the README
stays one page long.

Examples are ```python blocks followed directly by a ```text block holding their output
(``tests/_support/docs.py``); each runs in a fresh interpreter on the backend under test.
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
from _support.docs import EXAMPLES, PAGES, TEXT, anchors, example_id, section

import fastmerge

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")
PACKAGE_ROOT = Path(fastmerge.__file__).resolve().parent.parent
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, re.DOTALL)


def _env(backend: str) -> dict[str, str]:
    env = {**os.environ, "FASTMERGE_BACKEND": backend}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH")) if p)
    return env


@pytest.mark.single_run
def test_every_page_with_code_has_examples() -> None:
    pages = {page for page, _, _, _ in EXAMPLES}
    assert {"README.md", "docs/chunks.md", "docs/providers.md", "docs/batch.md"} <= pages
    assert len(EXAMPLES) >= 12


@pytest.mark.parametrize("example", EXAMPLES, ids=example_id)
def test_example_output(
    backend_name: str, example: tuple[str, int, str, str], tmp_path: Path
) -> None:
    _, _, code, shown = example
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        # an example's temporary files (tempfile.mkdtemp) go with the test's
        env={**_env(backend_name), "TMPDIR": str(tmp_path)},
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
    for lang, body in re.findall(
        r"```(\w*)\n(.*?)```", section("docs/cli.md", "Command line"), re.DOTALL
    ):
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
    text = " ".join(section("docs/cli.md", "Command line").split())
    shown = re.findall(r"`(fastmerge: error: [^`]*)`", text)
    # in the page's order: a compressed provider stream, compressed JSON lines, an empty
    # input, a bad JSON line
    cases = [
        (["merge", "--provider", "auto"], gzip.compress(b'{"choices": []}\n')),
        (["merge"], gzip.compress(b'{"a": 1}\n')),
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


@pytest.mark.single_run
def test_the_readme_fits_on_a_page() -> None:
    assert len(README.splitlines()) <= 300


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.single_run
@pytest.mark.parametrize("page", PAGES)
def test_every_link_leads_somewhere(page: str) -> None:
    """A relative link names a file of the repository, and its ``#anchor`` a heading there."""
    prose = re.sub(r"```.*?```", "", TEXT[page], flags=re.DOTALL)
    broken = []
    for target in _LINK.findall(prose):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (ROOT / page).parent / path if path else ROOT / page
        if not file.exists():
            broken.append(target)
        elif anchor and anchor not in anchors(file.read_text("utf-8")):
            broken.append(target)
    assert broken == []


@pytest.mark.single_run
def test_the_link_check_can_fail() -> None:
    assert "batch-merge-logged-streams" in anchors(TEXT["docs/batch.md"])
    assert "no-such-heading" not in anchors(TEXT["docs/batch.md"])


@pytest.mark.single_run
def test_every_docs_page_is_reachable_from_the_readme() -> None:
    """Following links from the README reaches every page of ``docs/`` (the rules too)."""
    seen, todo = set(), ["README.md"]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        base = (ROOT / page).parent
        for target in _LINK.findall((ROOT / page).read_text("utf-8")):
            path = target.partition("#")[0]
            if path.endswith(".md") and not re.match(r"[a-z]+:", path):
                todo.append(str((base / path).resolve().relative_to(ROOT)))
    on_disk = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert on_disk - seen == set()


@pytest.mark.single_run
def test_the_synopsis_names_every_option() -> None:
    """docs/cli.md's synopsis shows every option of every command (their --help says what
    each does)."""
    import argparse

    from fastmerge.cli import build_parser

    synopsis = re.search(r"```text\n(.*?)```", section("docs/cli.md", "Command line"), re.S)
    assert synopsis
    by_command: dict[str, str] = {}
    for line in synopsis.group(1).splitlines():
        if line.startswith("fastmerge "):
            command = line.split()[1]
        by_command[command] = by_command.get(command, "") + line + "\n"
    (commands,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    missing = {
        f"{name} {option}"
        for name, parser in commands.choices.items()
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--")
        and option != "--help"
        and not re.search(rf"{re.escape(option)}\b", by_command.get(name, ""))
    }
    assert missing == set()
