"""What the commands share: exit statuses, the one-line error, the output writer, the usage
error of the parser, JSON output, and the batch options' check (``batch`` and ``bench`` make
it alike). The commands import this module and never one another."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from typing import Any, BinaryIO, NoReturn

from ..errors import MergeError

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_DATA",
    "EXIT_INCOMPLETE",
    "EXIT_INTERRUPT",
    "EXIT_OK",
    "EXIT_USAGE",
    "PROG",
    "Parser",
    "STDIN",
    "STDIN_NAME",
    "check_options",
    "dump_json",
]

EXIT_OK = 0
EXIT_DATA = 1
EXIT_INCOMPLETE = 2
EXIT_USAGE = 64  # sysexits.h EX_USAGE
EXIT_INTERRUPT = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what the shell shows for a tool SIGPIPE ended
PROG = "fastmerge"
STDIN = "-"
STDIN_NAME = "<stdin>"


def dump_json(value: Any, indent: int | None = None) -> bytes:
    """``value`` as UTF-8 JSON followed by a newline (see the module docstring for the format)."""
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate: valid as a JSON escape, not encodable as UTF-8.
        data = json.dumps(value, ensure_ascii=True, indent=indent, separators=separators).encode(
            "ascii"
        )
    return data + b"\n"


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


# A Python argument as the library's messages spell it (``provider=``, ``strict=True``,
# ``list_merge='by_index'``), for the command line's spelling of the same option.
_PY_ARGUMENT = re.compile(
    r"\b(provider|policy|list_merge|strict|group_by|order_by)=(?:'([^']*)'|True\b|(?=\s))"
)


def _flags(message: str) -> str:
    """``message`` with the library's Python arguments named as this command's flags:
    ``list_merge='by_index' requires policy='delta'`` -> ``--list-merge by_index requires
    --policy delta``."""

    def flag(match: re.Match[str]) -> str:
        name = "--" + match[1].replace("_", "-")
        return name if match[2] is None else f"{name} {match[2]}"

    return _PY_ARGUMENT.sub(flag, message)


def _fail(message: str, status: int = EXIT_DATA) -> int:
    with contextlib.suppress(OSError):  # nowhere left to report to
        sys.stderr.write(f"{PROG}: error: {_flags(message)}\n")
        sys.stderr.flush()
    return status


def _write_stdout(data: bytes) -> int:
    out: BinaryIO = sys.stdout.buffer
    try:
        out.write(data)
        out.flush()
    except OSError as exc:
        return _stdout_failed(exc)
    return EXIT_OK


def _stdout_failed(exc: OSError) -> int:
    """The exit status when writing standard output failed with ``exc`` (said on stderr,
    except for a reader that went away)."""
    # Unwritten bytes stay buffered: without this, the flush at interpreter exit fails
    # again and prints a traceback after our line.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    if isinstance(exc, BrokenPipeError):
        return EXIT_BROKEN_PIPE  # the reader went away (``| head``): quietly
    return _fail(f"cannot write the output: {_os_reason(exc)}")


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value}")
    return value


class Parser(argparse.ArgumentParser):
    """argparse with usage errors on :data:`EXIT_USAGE` (argparse's 2 means an incomplete
    stream here), in the command line's terms: one stderr line, naming ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_USAGE,
            f"{self.prog}: error: {_flags(message)} (see '{self.prog} --help')\n",
        )


# an argument given a value (group_by='stream_id') is left to _flags
_OPTION = re.compile(r"(?<![\w-])(group_by|order_by|max_open_streams)(?![\w=])|^(event|jobs)\b")


def check_options(parser: argparse.ArgumentParser, batch: Any, **options: Any) -> None:
    """The batch engine's own checks of ``options`` (:func:`fastmerge.batch.merge_logs`'s: a
    path's syntax, options that need each other), made before any input is opened, as a usage
    error of ``parser`` (exit 64) in flag terms."""
    try:
        batch.merge_logs([], **options).close()
    except MergeError as exc:

        def flag(match: re.Match[str]) -> str:
            return "--" + match[0].replace("_", "-")

        parser.error(_OPTION.sub(flag, str(exc)))
