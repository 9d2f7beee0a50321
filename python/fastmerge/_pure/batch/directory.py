"""The twin of the engine's ``DirectoryWriter`` (``src/py/directory.rs``): the files of
``fastmerge batch --output-dir``, each written as it is given, then its index line. The engine
writes them in the same order on a thread of its own; the files and the first error are the
same."""

from __future__ import annotations

import errno
import os

#: How a file is opened: made or emptied, written as bytes, and never through a symbolic link
#: (E108: a link planted in the directory, to a file outside or dangling, is refused).
_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_TRUNC
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
)
#: What a file of the directory that is a symbolic link fails with (the engine's ``LINK``).
LINK = "a symbolic link: no file is written through one"


def _open(path: str) -> int:
    """``path`` opened to be written (made or emptied); a symbolic link there raises
    ``OSError`` naming it, as the engine's ``create`` does."""
    try:
        return os.open(path, _FLAGS, 0o666)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OSError(error.errno, LINK, path) from None
        raise


class DirectoryWriter:
    """Writes each file given (:meth:`put`) in ``directory`` (which exists), then appends its
    line to the index file ``index`` (made or emptied now); after a failed write nothing more
    is written."""

    def __init__(self, directory: str, index: str) -> None:
        self._directory = directory
        self._index_path = os.path.join(directory, index)
        self._index: int | None = _open(self._index_path)
        self._failure: OSError | None = None

    def put(self, name: str, data: bytes, index_line: bytes) -> None:
        """Writes file ``name`` with ``data``, and its index line; raises the first failed
        write's ``OSError`` (then and at every later call)."""
        if self._failure is not None:
            raise self._failure
        if self._index is None:
            raise ValueError("the directory writer is closed")
        path = os.path.join(self._directory, name)
        try:
            # a file is one write: open, write and close it without a file object
            fd = _open(path)
            try:
                _write_all(fd, data, path)
            finally:
                os.close(fd)
            _write_all(self._index, index_line, self._index_path)
        except OSError as error:
            self._failure = error
            raise

    def close(self) -> OSError | None:
        """Closes the index; the first failed write's ``OSError``, or None."""
        if self._index is not None:
            os.close(self._index)
            self._index = None
        return self._failure


def _write_all(fd: int, data: bytes, path: str) -> None:
    """All of ``data`` to ``fd``; a failed write's ``OSError`` names ``path``, as the
    engine's does."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except OSError as error:
            raise OSError(error.errno, error.strerror, path) from None
