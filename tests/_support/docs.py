"""The pages a user reads (the README and ``docs/``) and the examples in them, for the tests that
hold every page to the truth: each example runs and prints what it shows, passes ``mypy
--strict``, and each link leads somewhere.

An example is a ```python block followed directly by a ```text block holding its output.
``docs/merge-rules.md``, ``docs/edge-cases.md`` and ``docs/wire-facts.md`` are copies of the shared
spec, checked for equality instead (their blocks are rule text, not runnable examples)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: The spec's pages: their name in ``docs/`` -> their name in ``../shared/spec``, kept byte-equal
#: (tests/docs/test_docstrings.py).
SPEC_COPIES: dict[str, str] = {
    "merge-rules.md": "merge-rules.md",
    "edge-cases.md": "edge-cases.md",
    "wire-facts.md": "providers.md",
}
#: Every page, README first, as its path relative to the root.
PAGES: tuple[str, ...] = ("README.md",) + tuple(
    f"docs/{p.name}" for p in sorted(DOCS.glob("*.md")) if p.name not in SPEC_COPIES
)
TEXT: dict[str, str] = {page: (ROOT / page).read_text("utf-8") for page in PAGES}

_EXAMPLE = re.compile(r"```python\n((?:(?!```).)*)```\s*```text\n(.*?)```", re.DOTALL)

#: ``(page, number in the page, code, output shown)`` for every example of every page.
EXAMPLES: list[tuple[str, int, str, str]] = [
    (page, i, code, shown)
    for page in PAGES
    for i, (code, shown) in enumerate(_EXAMPLE.findall(TEXT[page]))
]


def example_id(example: tuple[str, int, str, str]) -> str:
    """``docs/batch.md#2``: where an example is, for test ids."""
    return f"{example[0]}#{example[1]}"


def section(page: str, title: str) -> str:
    """The text of the ``## title`` (or, for a page's title, ``# title``) section of ``page``."""
    match = re.search(
        rf"^#{{1,2}} {re.escape(title)}\n(.*?)(?=^## |\Z)", TEXT[page], re.DOTALL | re.MULTILINE
    )
    assert match, f"{page} has no section {title!r}"
    return match.group(1)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces as ``-``."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page_text: str) -> set[str]:
    """The anchors of a page's headings (outside code blocks), with GitHub's ``-1``, ``-2``
    suffixes for repeated ones."""
    prose = re.sub(r"```.*?```", "", page_text, flags=re.DOTALL)
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", prose, re.MULTILINE):
        base = slug(heading)
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out
