"""Batch inputs where logs live: fsspec URLs (``s3://``, ``gs://``, ``az://``, ``https://``,
``memory://``, ...; the ``fastmerge[fsspec]`` extra, ``fastmerge[s3]`` for S3).

Both batch cores (the Rust engine and the twin) read local paths: each opens its inputs
itself, one after another in input order, once. A URL is handed to them as a named pipe (a
FIFO in a private temporary directory) that one feeder thread fills from the object, input
after input in the same order: the object is streamed, ``BLOCK`` bytes fetched at a time, so
no more than a block and the pipe's buffer are held, whatever the object's size, and nothing
is written to disk. The core tells the compression by the first bytes it reads, as for a local
file. Where the system has no named pipes (Windows), each object is first copied to a
temporary file (a chunk at a time).

What a core says names the URL, never the pipe: a stream's key (a file read as one stream),
a bad line's file, an error's message. Before anything is read, each input is checked in input
order, as the cores check local files: a URL that names nothing is ``"URL: No such file or
directory"``, with the store's reason when it gives one (a bucket that does not exist),
missing credentials or refused access are one :class:`fastmerge.errors.BatchError` line each.
An object that fails while it is read stops the batch with its error, before any item read
after the failure is given out.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import re
import shutil
import tempfile
import threading
import weakref
from typing import Any, Callable

from . import errors as _errors

__all__ = ["BLOCK", "Inputs", "RemoteCore", "expand", "is_url", "read_with"]

#: The bytes fetched from the store at a time (fsspec's ``block_size``).
BLOCK = 8 << 20
#: The bytes read from the object and written to the pipe at a time.
CHUNK = 1 << 20
#: A URL: a protocol (fsspec's chained ``simplecache::s3://`` too) and ``://``; a protocol has
#: two letters or more, so a Windows drive (``C:/``) is a path.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+(?:::[A-Za-z][A-Za-z0-9+.-]+)*://")
_GLOB = frozenset("*?[")
#: Whether URLs are streamed through named pipes (else copied to temporary files first).
PIPES = hasattr(os, "mkfifo")
#: The extra that installs a protocol's filesystem, where fastmerge has one.
_EXTRAS = {"s3": "s3", "s3a": "s3"}
#: Protocols whose URLs are files only: no listing to tell a directory (a web server's page
#: would be read whole to look for links), and read as one streamed request (no ranges).
_WEB = frozenset({"http", "https"})


def is_url(path: str) -> bool:
    """Whether the input ``path`` is an fsspec URL (``PROTOCOL://...``) rather than a file."""
    return _URL.match(path) is not None


def _protocol(url: str) -> str:
    return url.split("://", 1)[0].rsplit("::", 1)[-1].lower()


def _filesystem(url: str, storage_options: dict[str, Any] | None) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path in it."""
    try:
        # imported by name: fsspec has no type information
        fsspec = importlib.import_module("fsspec")
    except ImportError:
        raise ImportError(
            f"{url}: reading a URL needs fsspec: pip install 'fastmerge[fsspec]'"
        ) from None
    try:
        fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    except ImportError as exc:  # the protocol's own package (s3fs, gcsfs, adlfs, aiohttp)
        extra = _EXTRAS.get(_protocol(url))
        how = f"pip install 'fastmerge[{extra}]'" if extra else "install the package named"
        raise ImportError(f"{url}: {exc}; {how}") from None
    except Exception as exc:  # a protocol fsspec does not know, bad storage options
        raise _failure(url, exc) from None
    return fs, path


def _failure(url: str, exc: BaseException) -> _errors.BatchError:
    """What the store said about ``url`` (an fsspec or SDK exception) as one error line."""
    if isinstance(exc, _errors.BatchError):
        return exc
    name = type(exc).__name__
    text = str(exc)
    if "Credentials" in name:  # botocore's NoCredentialsError, PartialCredentialsError, ...
        hint = ""
        if _protocol(url) in ("s3", "s3a"):
            hint = (
                "; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE, or pass "
                "storage_options={'anon': True} for a public bucket"
            )
        return _errors.remote_error(url, f"no credentials: {text}{hint}")
    code: int | None = None
    if isinstance(exc, FileNotFoundError):
        code = errno.ENOENT
    elif isinstance(exc, PermissionError):
        code = errno.EACCES
    elif isinstance(exc, OSError) and exc.errno:
        code = exc.errno
    if code is None:
        reason, detail = "cannot be read", f"{name}: {text}" if text else name
    else:
        reason = os.strerror(code)
        detail = getattr(exc, "strerror", None) or (str(exc.args[0]) if exc.args else "")
        if detail == reason:
            detail = ""
    # the store's reason, unless it only repeats the object's name
    if detail and not url.endswith(detail.strip("'\"").lstrip("/")):
        reason = f"{reason} ({detail})"
    return _errors.remote_error(url, reason)


def _named(url: str, fs: Any, path: str) -> str:
    """The URL of ``path`` found in ``fs`` while expanding ``url`` (its chain kept)."""
    chain = url.split("://", 1)[0].rpartition("::")[0]
    found: str = fs.unstrip_protocol(path)
    return f"{chain}::{found}" if chain else found


def _marker(path: str) -> bool:
    """Whether ``path`` is a folder marker: an object whose key ends with ``/`` (the empty
    object an S3 console's "Create folder" stores), never a log (s3fs refuses to open it)."""
    return path.endswith("/")


def _hidden(path: str, top: str) -> bool:
    """Whether a name under ``top`` in ``path`` starts with ``.``."""
    rest = path[len(top.rstrip("/")) :].strip("/")
    return any(part.startswith(".") for part in rest.split("/"))


def expand(url: str, storage_options: dict[str, Any] | None = None) -> list[str]:
    """The inputs of ``url``, as :func:`fastmerge.batch.expand_paths` gives a local path's: a
    pattern's matches (``*``, ``?``, ``[``; fsspec's glob, ``**`` crosses directories) sorted,
    names starting with ``.`` matched only by a pattern part starting with ``.``; a directory's
    (a prefix's) objects, recursively, sorted, names starting with ``.`` and folder markers
    (keys ending with ``/``) left out; else
    ``url`` as given (checked when the batch starts). A pattern without matches or an empty
    directory is a ``BatchError``."""
    fs, path = _filesystem(url, storage_options)
    try:
        if _GLOB & set(path) and not fs.isfile(path):
            magic = min(path.index(c) for c in _GLOB if c in path)
            top = path[:magic].rpartition("/")[0]
            dotted = _hidden(path, top)
            found = fs.glob(path, detail=True)
            matches = sorted(
                _named(url, fs, p)
                for p, info in found.items()
                if info.get("type") == "file" and not _marker(p) and (dotted or not _hidden(p, top))
            )
            if not matches:
                raise _errors.batch_option(f"{url}: no file matches the pattern")
            return matches
        if _protocol(url) not in _WEB and fs.isdir(path):
            files = sorted(
                _named(url, fs, p) for p in fs.find(path) if not _marker(p) and not _hidden(p, path)
            )
            if not files:
                raise _errors.batch_option(f"{url}: the directory holds no file")
            return files
    except _errors.BatchError:
        raise
    except Exception as exc:
        raise _failure(url, exc) from None
    return [url]


def _open(url: str, fs: Any, path: str) -> Any:
    """The object at ``url`` open for reading, fetched ``BLOCK`` bytes at a time (a web URL:
    one streamed request)."""
    return fs.open(path, "rb", block_size=0 if _protocol(url) in _WEB else BLOCK)


def _tag(info: dict[str, Any]) -> str | None:
    """An object's version in its store's ``info`` as ``name=value`` (s3fs: ``ETag``; gcsfs:
    ``etag``; others: a modification time), or None. Only fields a listing and a look at the
    object itself both give (not s3fs's ``VersionId``, which a listing leaves out)."""
    for name in ("ETag", "etag", "generation", "LastModified", "mtime", "updated"):
        value = info.get(name)
        if value is not None:
            return f"{name}={value}"
    return None


def _local_check(path: str) -> None:
    """The cores' check of a local input (in input order with the URLs')."""
    if path == "-":
        return
    try:
        os.stat(path)
    except OSError as exc:
        raise _errors.file_error(path, exc.errno or 0) from None
    if os.path.isdir(path):
        raise _errors.file_error(path, errno.EISDIR)


def _widen(fd: int) -> None:
    """A pipe's buffer as large as a read of the object (Linux; else as it is): the core
    takes a megabyte a wake-up, not the default 64 KiB."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, CHUNK)
    except (ImportError, AttributeError, OSError):
        pass  # another system, or above /proc/sys/fs/pipe-max-size: the default buffer


class _Feeder(threading.Thread):
    """Fills each URL's pipe from its object, in input order, as the core opens them."""

    def __init__(self, sources: list[tuple[str, Any, str, str]]) -> None:
        super().__init__(name="fastmerge-remote", daemon=True)
        self.sources = sources  # (url, filesystem, path in it, pipe)
        #: The first object that failed while read; the pipes after it are left empty.
        self.error: _errors.BatchError | None = None
        #: The pipe being served (close opens it to wake a feeder that waits for a reader).
        self.current: str | None = None
        #: The batch is stopping: leave every pipe still to open empty.
        self.stopping = threading.Event()
        #: The core is closed: stop.
        self.done = threading.Event()

    def run(self) -> None:
        for url, fs, path, pipe in self.sources:
            self.current = pipe
            if self.done.is_set():
                return
            try:
                fd = os.open(pipe, os.O_WRONLY)  # waits until the core opens it
            except OSError:
                return
            try:
                _widen(fd)
                if not (self.done.is_set() or self.stopping.is_set() or self.error):
                    self._copy(url, fs, path, fd)
            finally:
                os.close(fd)  # the core reads the end of the input

    def _copy(self, url: str, fs: Any, path: str, fd: int) -> None:
        try:
            file = _open(url, fs, path)
        except Exception as exc:
            self.error = _failure(url, exc)
            return
        with file:
            while not self.stopping.is_set():
                try:
                    chunk = file.read(CHUNK)
                except Exception as exc:
                    # set before the pipe closes, so the core's next item sees it
                    self.error = _failure(url, exc)
                    return
                if not chunk:
                    return
                view = memoryview(chunk)
                try:
                    while view:
                        view = view[os.write(fd, view) :]
                except OSError:
                    return  # the core closed the input: it stopped reading it


class Inputs:
    """A batch's inputs as the cores read them: each URL (checked, in input order with the
    local files) as a named pipe fed from the object, or a temporary copy without pipes;
    :meth:`name` maps the local name back. A context manager; :meth:`close` after the core's
    ``close``."""

    def __init__(self, paths: list[str], storage_options: dict[str, Any] | None) -> None:
        #: The inputs as the core opens them.
        self.paths: list[str] = []
        #: The stored bytes of the URL inputs (None: a store did not say).
        self.remote_bytes: int | None = 0
        #: Each input's stored bytes as the store (or the file system) gave them at the check
        #: (None: not said), in input order.
        self.sizes: list[int | None] = []
        #: Each URL input's version as its store tells it (ETag, version id or modification
        #: time; None: a local file, or not told), in input order.
        self.tags: list[str | None] = []
        self._names: dict[str, str] = {}
        self._dir: str | None = None
        self._feeder: _Feeder | None = None
        self._closed = False
        sources: list[tuple[str, Any, str, str]] = []
        try:
            for path in paths:
                if not is_url(path):
                    _local_check(path)
                    self.paths.append(path)
                    self.sizes.append(None if path == "-" else os.stat(path).st_size)
                    self.tags.append(None)
                    continue
                fs, inner = _filesystem(path, storage_options)
                try:
                    info = fs.info(inner)
                except Exception as exc:
                    raise _failure(path, exc) from None
                if info.get("type") == "directory":
                    raise _errors.file_error(path, errno.EISDIR)
                size = info.get("size")
                self.sizes.append(None if size is None else int(size))
                self.tags.append(_tag(info))
                if size is None or self.remote_bytes is None:
                    self.remote_bytes = None
                else:
                    self.remote_bytes += int(size)
                if self._dir is None:
                    self._dir = tempfile.mkdtemp(prefix="fastmerge-remote-")
                local = os.path.join(self._dir, f"{len(sources):06d}")
                self._names[local] = path
                self.paths.append(local)
                sources.append((path, fs, inner, local))
            if PIPES:
                for *_, local in sources:
                    os.mkfifo(local, 0o600)
                if sources:
                    self._feeder = _Feeder(sources)
                    self._feeder.start()
            else:
                for url, fs, inner, local in sources:
                    _spill(url, fs, inner, local)
        except BaseException:
            self.close()
            raise

    def name(self, path: str) -> str:
        """The input's name as given: the URL of a pipe or copy, else ``path``."""
        return self._names.get(path, path)

    def item(self, item: Any) -> Any:
        """A core's item with the URL for a pipe's name (a stream's key, a bad line's file)."""
        if item[1] in self._names:
            return (item[0], self._names[item[1]], *item[2:])
        return item

    def failed(self) -> _errors.BatchError | None:
        """The error of an object that failed while it was read, if one did."""
        return None if self._feeder is None else self._feeder.error

    def renamed(self, exc: BaseException) -> BaseException:
        """``exc`` (a core's error) naming the URLs instead of their pipes."""
        if type(exc) is not _errors.BatchError:
            return exc
        text = original = str(exc)
        for local, url in self._names.items():
            text = text.replace(local, url)
        return exc if text == original else _errors.BatchError(text)

    def close(self, core_close: Callable[[], None] | None = None) -> None:
        """Stop feeding, let the core close (``core_close``: it may be reading a pipe), and
        remove the pipes. Idempotent."""
        if self._closed:
            return
        self._closed = True
        feeder = self._feeder
        if feeder is not None:
            feeder.stopping.set()  # the core's reader gets the end of each pipe it opens
        try:
            if core_close is not None:
                core_close()
        finally:
            if feeder is not None:
                feeder.done.set()
                while feeder.is_alive():
                    # a feeder waiting for the core to open a pipe: open it for it
                    with contextlib.suppress(OSError):
                        os.close(os.open(feeder.current or "", os.O_RDONLY | os.O_NONBLOCK))
                    feeder.join(0.01)
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Inputs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _spill(url: str, fs: Any, path: str, local: str) -> None:
    """The object at ``url`` copied to the file ``local`` (no named pipes on this system)."""
    try:
        with _open(url, fs, path) as source, open(local, "wb") as target:
            shutil.copyfileobj(source, target, CHUNK)
    except Exception as exc:
        raise _failure(url, exc) from None


class RemoteCore:
    """A batch core (``make(paths)``: ``BatchCore`` with the batch's options) over inputs
    among which are URLs: the same interface (``next``, ``progress``, ``close``) and items,
    naming the URLs. The options are checked first (on no input), then the inputs in order."""

    def __init__(
        self,
        make: Callable[[list[str]], Any],
        paths: list[str],
        storage_options: dict[str, Any] | None,
    ) -> None:
        make([]).close()  # the core's checks of the options come before any input's
        self._inputs = Inputs(paths, storage_options)
        try:
            self._core = make(self._inputs.paths)
        except BaseException as exc:
            self._inputs.close()
            raise self._inputs.renamed(exc) from None
        self._stdin = "-" in paths
        self._closer = weakref.finalize(self, self._inputs.close, self._core.close)

    def next(self, timeout: float | None = None) -> Any:
        """The core's next item (see ``BatchCore.next``), naming URLs; an object that failed
        while read raises its error in place of any later item."""
        try:
            item = self._core.next(timeout)
        except StopIteration:
            failed = self._inputs.failed()
            self.close()
            if failed is not None:
                raise failed from None
            raise
        except BaseException as exc:
            error = self._inputs.failed() or self._inputs.renamed(exc)
            self.close()
            if error is exc:
                raise
            raise error from None
        failed = self._inputs.failed()
        if failed is not None:
            self.close()
            raise failed
        return None if item is None else self._inputs.item(item)

    def progress(self) -> tuple[int, int, int, int]:
        """The core's, with the objects' stored sizes in the total (0: not known)."""
        read, total, done, bad = self._core.progress()
        remote = self._inputs.remote_bytes
        if PIPES:
            # a pipe's size is 0 to the core; a copy's is counted already
            total = 0 if self._stdin or remote is None else total + remote
        return (read, total, done, bad)

    @property
    def sizes(self) -> list[int | None]:
        """Each input's stored bytes when it was checked (None: not said), in input order."""
        return self._inputs.sizes

    @property
    def tags(self) -> list[str | None]:
        """Each URL input's version as its store told it at the check (see ``Inputs.tags``)."""
        return self._inputs.tags

    def close(self) -> None:
        """Stop reading: the core closes, the pipes go. Idempotent."""
        self._closer()


def read_with(read: Callable[[str], Any], url: str, storage_options: dict[str, Any] | None) -> Any:
    """``read(path)`` of a function that reads one input whole (``split_file``) on ``url``:
    its result, or its error naming the URL (an object that failed while read: its error)."""
    with Inputs([url], storage_options) as inputs:
        try:
            result = read(inputs.paths[0])
        except BaseException as exc:
            error = inputs.failed() or inputs.renamed(exc)
            if error is exc:
                raise
            raise error from None
        failed = inputs.failed()
        if failed is not None:
            raise failed
        return result
