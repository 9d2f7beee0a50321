"""Exceptions raised by fastmerge, identical on both backends.

The Rust extension imports this module and raises these classes, so a ``except
fastmerge.MergeError`` works whichever backend runs. Every message is formatted here, in one
place, from the data the engine reports: both backends therefore raise the same class with the
same message.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

__all__ = [
    "MergeError",
    "DepthLimitError",
    "CycleError",
    "MergeTypeError",
    "MergeConflictError",
    "MergeConflictTypeError",
    "MergeConflictValueError",
    "AnomalyError",
    "EventError",
    "BatchError",
    "AggregatorClosedError",
]


class MergeError(ValueError):
    """Base class for bad data met while merging (a ``ValueError``)."""


#: How many dict levels one merge may descend, and how deep chunk and message fields may nest
#: (their constructors, ``+`` and readers). Deeper input raises DepthLimitError. It is far
#: below Python's recursion limit, so openJiuwen itself still answers at every depth we accept.
#: (``fastmerge.MAX_DEPTH``; here, beside its error, so that every module can import it.)
MAX_DEPTH = 256


class DepthLimitError(MergeError):
    """The merge would recurse deeper than the documented nesting limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(
            f"nesting deeper than the limit of {limit} levels "
            f"(fastmerge.MAX_DEPTH = {limit}); flatten the input or merge it in parts"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.limit,))


class CycleError(MergeError):
    """A container on the right-hand side contains itself along the merge path."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        super().__init__(
            f"self-referencing container met at nesting level {depth}: "
            "a value that contains itself cannot be merged"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.depth,))


class MergeTypeError(MergeError):
    """``strict=True``: the two sides hold values of kinds that cannot be merged."""

    def __init__(self, keys: tuple[Any, ...], left_kind: str, right_kind: str) -> None:
        self.keys = tuple(keys)
        self.path = "$" + "".join(f"[{k!r}]" for k in self.keys)
        self.left_kind = left_kind
        self.right_kind = right_kind
        super().__init__(f"cannot merge {left_kind} with {right_kind} at {self.path} (strict=True)")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.keys, self.left_kind, self.right_kind))


class MergeConflictError(Exception):
    """``policy="langchain"``: two values that LangChain's merge cannot combine. The message
    is LangChain's own, and so is the class: a :class:`MergeConflictTypeError` (a
    ``TypeError`` only) where LangChain raises ``TypeError`` (``merge_dicts``: a key's values
    of two types or of a type it cannot add; ``merge_obj``: two values of two types), a
    :class:`MergeConflictValueError` (a ``ValueError`` only, and a :class:`MergeError`) where
    it raises ``ValueError`` (``merge_obj``: two unequal values; ``add_usage``). Never both:
    LangChain's stream aggregator catches ``TypeError`` around chunk ``+`` and keeps the last
    chunk, so an error LangChain lets through must not be one. ``code`` says which rule
    refused. ``except MergeConflictError`` catches either."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.code, self.args[0]))


class MergeConflictTypeError(MergeConflictError, TypeError):
    """A :class:`MergeConflictError` where LangChain raises ``TypeError``."""


class MergeConflictValueError(MergeConflictError, MergeError):
    """A :class:`MergeConflictError` where LangChain raises ``ValueError``."""


# The rules whose refusal LangChain raises as TypeError (merge_dicts, merge_obj's types); the
# others (merge_obj's unequal values, add_usage) raise ValueError.
_TYPE_ERROR_CODES = frozenset({"kwargs_type", "kwargs_unsupported", "types"})


def langchain_conflict(code: str, *values: Any) -> MergeConflictError:
    """The error LangChain raises for ``code``, of LangChain's class, worded as LangChain
    words it."""
    if code == "kwargs_type":
        message = (
            f'additional_kwargs["{values[0]}"] already exists in this message,'
            " but with a different type."
        )
    elif code == "kwargs_unsupported":
        message = (
            f"Additional kwargs key {values[0]} already exists in left dict and "
            f"value has unsupported type {type(values[1])}."
        )
    elif code == "types":
        message = (
            f"left and right are of different types. Left type:  {type(values[0])}. Right "
            f"type: {type(values[1])}."
        )
    elif code == "unequal":
        left, right = values
        message = (
            f"Unable to merge {left=} and {right=}. Both must be of type str, dict, or "
            f"list, or else be two equal objects."
        )
    elif code == "usage_types":
        types = [type(value) for value in values]
        message = f"Unknown value types: {types}. Only dict and int values are supported."
    else:  # usage_depth
        message = "max_depth=100 exceeded, unable to combine dicts."
    if code in _TYPE_ERROR_CODES:
        return MergeConflictTypeError(code, message)
    return MergeConflictValueError(code, message)


class AnomalyError(MergeError):
    """``strict=True``: a provider quirk that a chunk merge would otherwise record as an anomaly
    (rules §8); ``code`` is the anomaly's code (``ambiguous_fragment``, ``name_conflict``, ...)."""

    def __init__(self, code: str, detail: str) -> None:
        self.code = code
        self.detail = detail
        super().__init__(f"{code}: {detail} (strict=True)")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.code, self.detail))


class EventError(MergeError):
    """A provider event that cannot be read: not JSON, not an object, of no known provider, or
    of a shape its adapter cannot map. ``event`` is its 1-based number in the stream; 0 means
    the stream as a whole had no event that could be read (compressed or binary bytes, an
    empty input, JSON that is not an object)."""

    def __init__(self, event: int, detail: str) -> None:
        self.event = event
        self.detail = detail
        super().__init__(
            f"event {event}: {detail}" if event else f"no event could be read: {detail}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.event, self.detail))


class BatchError(MergeError):
    """A batch input that cannot be read: a file, a compressed stream, an option, a limit."""


class AggregatorClosedError(MergeError):
    """An aggregator was used after :meth:`finish`, or after an event broke its state."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"the aggregator is closed: {reason}; start a new one")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.reason,))


def event_error(event: int, detail: str) -> EventError:
    return EventError(event, detail)


def no_events(detail: str) -> EventError:
    """A stream that ended with no event read (spec §6): an error, never an empty message."""
    return EventError(0, detail)


def empty_input() -> EventError:
    """:func:`no_events` for a stream with nothing in it: no event, no byte but blanks. One
    wording whatever the input was (an empty list, empty bytes, a file of blank lines, a
    ``feed`` that raised before any byte was read) and on both backends."""
    return no_events("the input is empty")


def too_large_sum(event: int) -> EventError:
    """Usage counts that add up beyond 64 bits (the engine's ints are 64-bit; the twin checks
    the same bound so both backends agree)."""
    return EventError(event, "usage counts add up beyond 64 bits (more than 2**63 - 1)")


# Batch errors (``fastmerge.batch``): both cores build them through these helpers.


def file_error(source: str, errno: int) -> BatchError:
    """A batch input that cannot be opened or read; ``errno`` is the OS error number (0 when
    the system gave none)."""
    reason = os.strerror(errno) if errno else "cannot be read"
    return BatchError(f"{source}: {reason}")


def compressed_error(source: str, fmt: str, truncated: bool, offset: int) -> BatchError:
    """A compressed batch input (``fmt``: gzip, zstd, bzip2, xz) that ends inside a member or
    frame (``truncated``), or whose bytes do not decode, after ``offset`` bytes of decompressed
    text (the whole lines among them were read)."""
    state = "truncated" if truncated else "corrupt"
    return BatchError(f"{source}: {fmt} stream is {state} after {offset} decompressed bytes")


def bad_line(source: str, line: int, reason: str) -> BatchError:
    """``errors="raise"``: the first record of a batch input that belongs to no stream."""
    return BatchError(f"{source}:{line}: {reason}")


def too_many_streams(limit: int, source: str, line: int) -> BatchError:
    """More streams open at once than ``max_open_streams`` allows."""
    return BatchError(
        f"more than {limit} streams open at {source}:{line}; raise --max-open-streams "
        "(max_open_streams=), or pass 0 for no limit"
    )


def long_line(source: str, line: int, limit: int) -> BatchError:
    """A record line longer than ``limit`` bytes: its input ends there (the whole lines before
    it were read); ``FASTMERGE_MAX_LINE_BYTES`` sets another limit."""
    return BatchError(
        f"{source}:{line}: a line longer than {limit} bytes is not read, and the input ends "
        "here; set FASTMERGE_MAX_LINE_BYTES to read longer lines"
    )


def remote_error(source: str, reason: str) -> BatchError:
    """A batch input at a URL (``fastmerge[fsspec]``) that cannot be listed, opened or read;
    ``reason`` says why: no such object or bucket, no credentials, access refused, ..."""
    return BatchError(f"{source}: {reason}")


def batch_option(detail: str) -> BatchError:
    """A batch option that cannot be used (a path's syntax, options that exclude each other,
    a provider or rule name that is not known)."""
    return BatchError(detail)


def closed(reason: str) -> AggregatorClosedError:
    return AggregatorClosedError(reason)


def anomaly(code: str, detail: str) -> AnomalyError:
    return AnomalyError(code, detail)


def cannot_add(name: str, other: object) -> TypeError:
    """``chunk + other`` of another family (openJiuwen's message)."""
    return TypeError(f"Cannot add {name} to {type(other)}")


# Argument errors. Both backends build them through these two functions so that the text is
# the same: a wrong type is a TypeError, a wrong value a ValueError naming the valid ones.


def invalid_option(name: str, value: object, valid: Iterable[str]) -> ValueError:
    choices = ", ".join(repr(v) for v in valid)
    return ValueError(f"unknown {name} {value!r}; expected one of {choices}")


def requires_delta(name: str, value: object) -> ValueError:
    return ValueError(f"{name}={value!r} requires policy='delta'")


def wrong_type(name: str, expected: str, value: object) -> TypeError:
    return TypeError(f"{name} must be {expected}, not {type(value).__name__}")


# ---------------------------------------------------------------------------------------------
# Session (fastmerge.session): the log of a conversation. Each error names the session, and
# the row (its sequence number) where one is at fault; nothing stored is changed by an error.

__all__ += [
    "SessionError",
    "SessionTypeError",
    "CorruptRowError",
    "SchemaVersionError",
    "SessionExistsError",
    "SessionEmptyError",
    "SessionIdError",
]


def _shown(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to about ``limit`` characters (a row's value may be kilobytes)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f"{len(value)} characters" if isinstance(value, (str, bytes)) else "cut"
    return f"{text[: limit - 20]}... ({size})"


def _seq(seq: object) -> str:
    # a row is named by its seq as stored: an int as it is, anything else (a damaged row's
    # text, NULL) by its repr
    return str(seq) if type(seq) is int else _shown(seq)


class SessionError(ValueError):
    """Base class for a session's bad data (a ``ValueError``): a stored row that cannot be
    read, a schema of a newer fastmerge, a session id no store holds, an unknown provider."""


class SessionTypeError(SessionError, TypeError):
    """``append`` was given something that is not a message the session stores (also a
    ``TypeError``): ``AssistantMessage``, ``ToolMessage`` or a ``{"role": "user" | "system",
    "content": ...}`` dict. ``position`` is its place in the list given (0 for one item)."""

    def __init__(self, position: int, detail: str) -> None:
        self.position = position
        self.detail = detail
        super().__init__(f"append item {position}: {detail}; nothing was appended")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.position, self.detail))


class CorruptRowError(SessionError):
    """A stored row of a session that cannot be read back (not JSON, not an event, a message
    that ``from_dict`` refuses, data nested too deep, a ``seq`` or ``turn`` that is not the
    int the log's order needs). ``seq`` is the row's ``seq`` as stored (not an int in a
    damaged row). The row is left as it is."""

    def __init__(self, session_id: str, seq: object, detail: str) -> None:
        self.session_id = session_id
        self.seq = seq
        self.detail = detail
        super().__init__(f"session {session_id!r}, row seq={_seq(seq)}: {detail}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.session_id, self.seq, self.detail))


class SchemaVersionError(SessionError):
    """A database or a row whose schema version this fastmerge cannot read: written by a
    newer fastmerge (upgrade fastmerge), or damaged (a version that is not a positive int:
    text, NULL, 0). ``version`` is the value as stored. Nothing is written to it."""

    def __init__(self, where: str, version: object, supported: int) -> None:
        self.where = where
        self.version = version
        self.supported = supported
        if type(version) is int and version > supported:
            detail = (
                f"schema version {version} is newer than this fastmerge reads "
                f"(up to {supported}); upgrade fastmerge"
            )
        else:
            detail = (
                f"schema version {_shown(version)} is not a schema version (this fastmerge "
                f"reads 1 to {supported}); the database is damaged"
            )
        super().__init__(f"{where}: {detail}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.where, self.version, self.supported))


class SessionExistsError(SessionError):
    """``fork(new_id)`` onto a session that already has events."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"session {session_id!r} already has events; fork to a new id")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.session_id,))


class SessionEmptyError(SessionError):
    """``pop()`` on a session whose history holds no message."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"session {session_id!r} has no message to pop")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.session_id,))


class SessionIdError(SessionError):
    """A session id that no store holds: one with a NUL, a lone surrogate (it is not UTF-8
    text), or longer than :data:`fastmerge.session.MAX_SESSION_ID_BYTES` bytes of UTF-8.
    Every store refuses the same ids (PostgreSQL's ``text`` cannot hold a NUL and its index
    rows are limited to about 2,700 bytes; SQLite follows the same rule), before anything is
    read or written."""

    def __init__(self, session_id: str, reason: str, limit: int) -> None:
        self.session_id = session_id
        self.reason = reason
        self.limit = limit
        super().__init__(
            f"session id {_shown(session_id)} {reason}; a session id is 1 to {limit} bytes of "
            "UTF-8 text without NUL"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.session_id, self.reason, self.limit))


def unknown_request_provider(provider: object, valid: Iterable[str]) -> SessionError:
    """``to_request`` for a provider with no request format."""
    choices = ", ".join(repr(v) for v in valid)
    return SessionError(f"unknown provider {provider!r} for to_request; expected one of {choices}")


def corrupt_row(session_id: str, seq: object, detail: str) -> CorruptRowError:
    return CorruptRowError(session_id, seq, detail)


def not_a_message(position: int, item: object) -> SessionTypeError:
    return SessionTypeError(
        position,
        f"{type(item).__name__} is not a message a session stores (AssistantMessage, "
        'ToolMessage, or a {"role": "user" | "system", "content": str | list} dict)',
    )
