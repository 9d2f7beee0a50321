"""The ``fastmerge`` command line: ``merge`` (:mod:`.merge`), ``batch`` (:mod:`.batch`) and
``bench`` (:mod:`.bench`), each a module with ``add_parser`` and ``run``; what they share is in
:mod:`._common`.

::

    fastmerge merge [--policy openjiuwen|delta|langchain] [--list-merge concat|by_index]
                    [--strict] [--indent N] FILE|-
    fastmerge merge --provider NAME|auto [--to PROVIDER] [--strict] [--allow-incomplete]
                    [--indent N] FILE|-
    fastmerge batch PATHS... [--group-by ...] [--event PATH] ...   (fastmerge.cli.batch)
    fastmerge bench [LOG] [--group-by ...] [--event PATH]           (fastmerge.cli.bench)
    fastmerge --version

With ``--provider``, ``fastmerge merge`` reads a recorded provider stream (SSE, JSON lines, or a
JSON array of events; see :class:`fastmerge.Aggregator`), feeds it to an aggregator block by
block (the backend parses the bytes), and prints the message as JSON: ``message.to_dict()``
(a list of them for a stream with several choices), or with ``--to PROVIDER`` the provider's
non-streaming response (:func:`fastmerge.to_provider`). ``--strict`` raises on the first
anomaly (rules §8) instead of recording it. A stream that did not end complete (cut before its
terminal event, or failed by the provider) is still printed, but exits 2 with one line on
stderr, unless ``--allow-incomplete`` is given; a cut tool call is rendered with its raw
arguments and a marker, never as a parsed, executable call (:mod:`fastmerge.render`).

``fastmerge merge`` reads JSON Lines (one JSON value a line; blank lines are skipped) from a
file or, with ``-``, from standard input, and prints :func:`fastmerge.merge_all` of the values
as one JSON document. The input is read line by line and handed to ``merge_all`` as an
iterator: the file is never held in memory as one string. No merge rule lives here. An input
that ``Aggregator("auto")`` reads as provider events (other than OpenAI Chat chunks, the generic
merge's own input), or as a compressed input, is refused with one line on stderr that names
``--provider auto`` or says it is compressed, as ``--provider`` words it (exit 1).

JSON is read and written with the standard library's :mod:`json` module, whether or not orjson
is installed, so that the output never depends on what else is installed: orjson turns integers
beyond 64 bits into floats and rejects ``NaN`` and lone surrogates, which :mod:`json` reads and
writes back unchanged. Output is compact (``","`` and ``":"`` separators, as orjson writes) or
indented with ``--indent``, UTF-8, not ASCII-escaped; a result holding a lone surrogate, which
UTF-8 cannot encode, is written with every non-ASCII character escaped instead.

Exit status (the ``EXIT_*`` constants): 0 on success; 1 when the input cannot be read or holds
no JSON value (empty or blank: not a ``null`` that would pass for a merged result), a line
is not JSON (the message names the file and the line number), the merge fails (for example
``--strict``, or nesting deeper than :data:`fastmerge.MAX_DEPTH`), or the output cannot be
written; 2 when a provider stream is incomplete or failed (without ``--allow-incomplete``);
64 for a usage error (``EX_USAGE``: argparse's own 2 is taken by the incomplete stream);
130 on Ctrl-C; 141 when the reader of the output went away (``| head``), quietly, as a tool
killed by ``SIGPIPE`` reports it in the shell. Every other failure writes one line on stderr
(a usage error after the usage), in the command line's terms (``--provider``, not the
library's ``provider=``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .. import BACKEND, __version__, backend_info
from . import batch, bench, merge
from ._common import EXIT_INTERRUPT, PROG, Parser, dump_json
from .merge import InputError, read_json_lines

__all__ = ["InputError", "build_parser", "dump_json", "main", "read_json_lines"]


def _version() -> str:
    """``fastmerge 0.1.0 (rust backend, release build)``; the twin has no build."""
    build = backend_info()["build"] if BACKEND == "rust" else None
    return f"{PROG} {__version__} ({BACKEND} backend{f', {build} build' if build else ''})"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fastmerge`` command."""
    parser = Parser(
        prog=PROG,
        description="Merge streamed LLM output (chunks, deltas, provider events, logs) back into "
        "complete messages.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=_version(),
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS.values():
        command.add_parser(commands)
    return parser


#: Each command's module: ``add_parser(subparsers)`` and ``run(args) -> exit status``.
COMMANDS = {"merge": merge, "batch": batch, "bench": bench}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        status: int = COMMANDS[args.command].run(args)
        return status
    except KeyboardInterrupt:
        return EXIT_INTERRUPT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
