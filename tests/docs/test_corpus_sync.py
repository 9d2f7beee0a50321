"""``tests/corpus`` is the project's conformance corpus, copied into the repository so that the
tests of a plain clone need nothing beside it; this check keeps the copy equal, file for file
and byte for byte, to the upstream ``../shared/corpus`` wherever that folder exists.

Without ``../shared/corpus`` the check is skipped, unless ``FASTMERGE_REQUIRE_CORPUS`` is set
(as ``.ci/run`` does, where the upstream corpus sits beside the checkout): then the missing
folder fails the run, so a CI that lost the upstream cannot pass with a stale copy. To update
the copy: ``rm -r tests/corpus && cp -r ../shared/corpus tests/corpus``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _support.corpus import CORPUS, KINDS, SHARED_CORPUS

pytestmark = pytest.mark.single_run


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_the_corpus_is_in_the_repository() -> None:
    files = _files(CORPUS)
    assert "SOURCES.md" in files  # the sources and their licenses travel with the data
    assert sorted({f.split("/")[0] for f in files if "/" in f}) == sorted(KINDS)


def test_the_corpus_copy_equals_the_shared_corpus() -> None:
    if not SHARED_CORPUS.is_dir():
        reason = f"no upstream corpus at {SHARED_CORPUS}: the copy in tests/corpus is not checked"
        if os.environ.get("FASTMERGE_REQUIRE_CORPUS"):
            pytest.fail(f"{reason}, and FASTMERGE_REQUIRE_CORPUS is set (.ci/run)")
        pytest.skip(reason)
    ours, upstream = _files(CORPUS), _files(SHARED_CORPUS)
    assert [f for f in upstream if f not in ours] == [], "files missing from tests/corpus"
    assert [f for f in ours if f not in upstream] == [], "files only in tests/corpus"
    differ = [f for f in ours if (CORPUS / f).read_bytes() != (SHARED_CORPUS / f).read_bytes()]
    assert differ == [], "tests/corpus differs from ../shared/corpus"
