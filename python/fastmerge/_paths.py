"""The input files of a batch's paths: a directory's files, a pattern's matches, URLs
expanded in their store, each file once (:func:`expand_paths`, re-exported by
:mod:`fastmerge.batch`)."""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
from typing import Any, Iterable

from . import _remote
from . import errors as _errors

_GLOB = frozenset("*?[")


def expand_paths(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    skipped: list[str] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> list[str]:
    """The input files of ``paths``, in order: a file as given; a directory's files,
    recursively, sorted by path (names starting with ``.`` are skipped; links to files and
    directories are followed); a pattern's matches (``*``, ``?``, ``[``; ``**`` crosses
    directories) sorted; ``"-"`` (stdin) as is. A directory without files or a pattern without
    matches is a ``BatchError``; a path that does not exist is left for the reader to report.

    Inside a directory, a file or directory already reached another way (a link back to a
    directory above it, a cycle; or a second link to the same place) is read once: each one
    left out is appended to ``skipped`` as ``"PATH: reason"``.

    An fsspec URL is expanded the same way in its store (:func:`fastmerge._remote.expand`,
    with ``storage_options``)."""
    if skipped is None:
        skipped = []
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[str] = []
    for item in paths:
        path = os.fspath(item)
        if not isinstance(path, str):
            raise _errors.wrong_type("a path", "a str or os.PathLike[str]", item)
        if _remote.is_url(path):
            out.extend(_remote.expand(path, storage_options))
        elif path != "-" and os.path.isdir(path):
            found = _directory_files(path, skipped)
            if not found:
                raise _errors.batch_option(f"{path}: the directory holds no file")
            out.extend(found)
        elif path != "-" and not os.path.exists(path) and _GLOB & set(path):
            matches = _glob_files(path, skipped)
            if not matches:
                raise _errors.batch_option(f"{path}: no file matches the pattern")
            out.extend(matches)
        else:
            out.append(path)
    return out


def _glob_files(pattern: str, skipped: list[str]) -> list[str]:
    """The files a pattern matches, sorted, as ``glob.glob(pattern, recursive=True)`` finds
    them (``**`` crosses directories; names starting with ``.`` match only a component that
    starts with one), but safe from link cycles: ``**`` follows links into a directory once
    along a path (``glob`` followed them round a cycle up to the system's limit of 40 links:
    a file met 40 times over, or billions of paths for two cycles), and a file reached a
    second way is read once (each one left out is appended to ``skipped``)."""
    if "**" not in pattern:
        return sorted(m for m in glob.glob(pattern) if os.path.isfile(m))
    found: dict[tuple[int, int], str] = {}  # (device, inode) -> the path it was matched at
    matched: list[str] = []

    def visible(name: str, part: str) -> bool:
        return not name.startswith(".") or part.startswith(".")

    def match(base: str, parts: list[str], above: frozenset[tuple[int, int]]) -> None:
        if not parts:
            try:
                info = os.stat(base)
            except OSError:
                return
            if stat.S_ISREG(info.st_mode):
                identity = (info.st_dev, info.st_ino)
                if identity in found:
                    skipped.append(f"{base}: not read: the same file as {found[identity]}")
                else:
                    found[identity] = base
                    matched.append(base)
            return
        part, rest = parts[0], parts[1:]
        if part == "**":
            try:
                info = os.stat(base or ".")
            except OSError:
                return
            above = above | {(info.st_dev, info.st_ino)}
            match(base, rest, above)  # no directory
            for entry in _entries(base):
                if not entry.name.startswith("."):
                    directory = _directory(entry)
                    if directory is None and not rest:  # a trailing `**` matches files too
                        match(os.path.join(base, entry.name), rest, above)
                    elif directory is not None and directory not in above:
                        match(os.path.join(base, entry.name), parts, above)
        elif glob.has_magic(part):
            for entry in _entries(base):
                if visible(entry.name, part) and fnmatch.fnmatchcase(entry.name, part):
                    match(os.path.join(base, entry.name), rest, above)
        else:
            match(os.path.join(base, part), rest, above)

    root = os.sep if pattern.startswith(os.sep) else ""
    parts = [p for p in pattern.split(os.sep) if p]
    match(root, parts, frozenset())
    return sorted(matched)


def _entries(directory: str) -> list[os.DirEntry[str]]:
    """A directory's entries by name (none when it cannot be listed, as ``glob`` has it):
    of two ways to a file, the first in this order is the one read."""
    try:
        with os.scandir(directory or ".") as listing:
            return sorted(listing, key=lambda e: e.name)
    except OSError:
        return []


def _directory(entry: os.DirEntry[str]) -> tuple[int, int] | None:
    """The identity of the directory ``entry`` is, or leads to; None for anything else."""
    try:
        info = entry.stat()  # through a link
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _directory_files(top: str, skipped: list[str]) -> list[str]:
    """The files under directory ``top``, sorted by path, following links; names starting
    with ``.`` are left out. A directory is entered once: a link back to one of the directories
    above it (a cycle) or to a directory already read is not followed, and a second way to a
    file already listed is not listed; each is reported in ``skipped``. A link that leads
    nowhere is listed (the reader reports it)."""
    found: list[str] = []
    seen: dict[tuple[int, int], str] = {}  # (device, inode) -> the path it was first met at

    def walk(directory: str, above: frozenset[tuple[int, int]]) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            raise _errors.file_error(directory, exc.errno or 0) from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                info = entry.stat()  # through a link
            except OSError:
                found.append(entry.path)  # a link that leads nowhere: the reader says so
                continue
            identity = (info.st_dev, info.st_ino)
            if stat.S_ISDIR(info.st_mode):
                if identity in above:
                    skipped.append(
                        f"{entry.path}: not followed: a link cycle back to {seen[identity]}"
                    )
                elif identity in seen:
                    skipped.append(
                        f"{entry.path}: not followed: the same directory as {seen[identity]}, "
                        "read once"
                    )
                else:
                    seen[identity] = entry.path
                    walk(entry.path, above | {identity})
            elif identity in seen:
                skipped.append(f"{entry.path}: not read: the same file as {seen[identity]}")
            else:
                seen[identity] = entry.path
                found.append(entry.path)

    try:
        info = os.stat(top)
    except OSError as exc:
        raise _errors.file_error(top, exc.errno or 0) from None
    seen[(info.st_dev, info.st_ino)] = top
    walk(top, frozenset({(info.st_dev, info.st_ino)}))
    return sorted(found)
