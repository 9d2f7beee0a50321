"""Say when a build is about to replace the other profile's extension in the venv.

``python tools/build_note.py PROFILE`` (``debug`` or ``release``), run by the Makefile before
``maturin develop``: when the extension installed now is of the other profile, one line says so
on standard output, and how to get it back (``make demo`` and ``make build-prod`` install a
release build, ``make all``, ``make dev`` and ``make build-dev`` a debug one, in the same
place). Nothing when none is installed or it is of the same profile. Exits 0 whatever it finds.
"""

from __future__ import annotations

import importlib
import sys
import warnings

#: The targets that install each profile.
TARGETS = {"debug": "make build-dev (make dev, make all)", "release": "make build-prod (make demo)"}


def installed() -> str | None:
    """The installed extension's build profile, or None when none is installed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the package's fallback warning, without it
        try:
            module = importlib.import_module("fastmerge._fastmerge")
        except ImportError:
            return None
    profile = getattr(module, "BUILD_PROFILE", None)
    return profile if isinstance(profile, str) else None


def note(profile: str, current: str | None) -> str | None:
    """The line for a ``profile`` build replacing ``current``, or None."""
    if current is None or current == profile or profile not in TARGETS:
        return None
    slower = " (its times are many times slower)" if profile == "debug" else ""
    return (
        f"note: this replaces the {current} extension in the venv with a {profile} build"
        f"{slower}; {TARGETS[current]} puts a {current} build back"
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tools/build_note.py debug|release", file=sys.stderr)
        return 64
    line = note(argv[0], installed())
    if line is not None:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
