"""A directory of records: one file per stream, named from its key (:func:`file_name`), and
:data:`INDEX` beside them. The backend's ``DirectoryWriter`` writes the files: on the Rust
backend on a thread of its own, beside the batch (each file's open, write and close are system
calls the merge does not wait on)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Iterable

from ... import _backend
from ..._types import Provider
from ..lines import json_line
from ..results import Rows, StreamResult, Written
from ..run import as_written

if TYPE_CHECKING:
    from ..._pure.batch import DirectoryWriter as _DirectoryWriter
else:
    _DirectoryWriter = _backend.backend_of(__name__)[1].DirectoryWriter

__all__ = ["INDEX", "STEM_LENGTH", "DirectoryOut", "file_name", "to_directory", "write_directory"]

#: The index of :func:`to_directory`: one JSON line per file, ``{"key", "file", "status"}``.
INDEX = "index.jsonl"
#: Characters of a key kept in its file name (the others become ``_``).
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: The longest stem taken from a key (a file name stays far below 255 bytes).
STEM_LENGTH = 100
#: Names Windows keeps for devices, whatever the extension (``nul.json`` too).
_DEVICES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{p}{n}" for p in ("com", "lpt") for n in range(10)]
)


def file_name(key: str, taken: set[str]) -> str:
    """A safe, unique file name for a stream's record: the key's letters, digits, ``.``,
    ``_`` and ``-`` (every other run of characters as one ``_``; no leading ``.``; at most
    :data:`STEM_LENGTH` of them; ``_`` for a key that keeps none; a Windows device name gets
    a leading ``_``) and ``.json``, with ``-2``, ``-3``, ... when the name is taken, compared
    case-insensitively (a key met again, keys that read the same, or differ only by case).
    ``taken`` holds the names given so far (lower case) and gets this one."""
    stem = _UNSAFE.sub("_", key).lstrip(".")[:STEM_LENGTH] or "_"
    if stem.split(".")[0].lower() in _DEVICES:
        stem = "_" + stem
    name = f"{stem}.json"
    number = 1
    while name.lower() in taken:
        number += 1
        name = f"{stem}-{number}.json"
    taken.add(name.lower())
    return name


def to_directory(
    results: Iterable[StreamResult], directory: str | os.PathLike[str], to: Provider | None = None
) -> int:
    """Write each result's record (:meth:`StreamResult.record`) to its own file in
    ``directory`` (made if missing), named by :func:`file_name`, as results come; and beside
    them :data:`INDEX`, one line per file, ``{"key", "file", "status"}``, written as each file
    is. The number of files written."""
    return write_directory(as_written(results, to, False), directory)


_AFTER_KEY = b',"provider":'


def _index_line(written: Written, name: str) -> bytes:
    """The :data:`INDEX` line of ``written`` in file ``name``: ``json_line({"key", "file",
    "status"})``, its key's JSON taken from the record's line when that is the same text (a
    line made ASCII for a lone surrogate elsewhere has the key's other characters escaped)."""
    line = written.line
    if not line.startswith(b'{"key":') or (not written.key.isascii() and line.isascii()):
        return json_line({"key": written.key, "file": name, "status": written.status})
    # every quote inside a JSON string is escaped: the first `,"provider":` ends the key
    end = line.index(_AFTER_KEY, 7)
    # a file name holds only ASCII letters, digits, ".", "_" and "-": nothing to escape
    return b"".join(
        (line[:end], b',"file":"', name.encode(), b'","status":"', written.status.encode(), b'"}\n')
    )


def write_directory(records: Iterable[Written], directory: str | os.PathLike[str]) -> int:
    """Write each of ``records`` to its own file in ``directory``, and :data:`INDEX`, as
    :func:`to_directory` does; the number of files written."""
    out = DirectoryOut(directory)
    finished = False
    try:
        for written in records:
            out.add(written)
        finished = True
    finally:
        out.close(finished)
    return out.count


class DirectoryOut:
    """The ``directory`` format's writer: each record to its own file in ``directory`` (made
    if missing), :data:`INDEX` beside them."""

    rows = False

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._directory = os.fspath(directory)
        os.makedirs(self._directory, exist_ok=True)
        self._taken: set[str] = set()
        self._writer = _DirectoryWriter(self._directory, INDEX)
        #: the records queued to be written
        self.count = 0

    def room(self) -> tuple[int, int]:
        """Unused: records are files, not rows."""
        return (1, 1)

    def add(self, piece: Written | Rows) -> None:
        """Queue ``piece``'s record (a :class:`Written` made without its row) as a file."""
        assert isinstance(piece, Written)
        name = file_name(piece.key, self._taken)
        self._writer.put(name, piece.line, _index_line(piece, name))
        self.count += 1

    def close(self, finish: bool = True) -> None:
        """Wait until every file queued is written (either way: an interrupt leaves them
        listed); with ``finish``, the first error of writing them is raised (without it,
        another error is being reported)."""
        failure = self._writer.close()
        if failure is not None and finish:
            raise failure
