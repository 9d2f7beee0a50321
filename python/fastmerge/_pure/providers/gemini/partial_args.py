"""Vertex AI's streamed arguments (``src/engine/providers/gemini/partial_args.rs``): each
``partialArgs`` fragment a JSON path and a value, written as the call's arguments JSON text as
they arrive (``_Streamed``), and the anomaly of a call the stream cut before its arguments
ended (``_cut``).

``_expect``, the adapter's check of a field's JSON kind, sits here too: the adapter
(``gemini``) and these writers both check fields with it, and this is the lower module of the
two.
"""

from __future__ import annotations

from typing import Any

from ...events import kind_name
from .._common import AdapterError, cut_call_anomaly

_VALUE_KEYS = ("stringValue", "numberValue", "boolValue", "nullValue")


def _expect(value: Any, kind: str, path: str) -> None:
    if kind_name(value) != kind:
        article = "an" if kind in ("array", "object") else "a"
        raise AdapterError(f"{path} must be {article} {kind}, got {kind_name(value)}")


def _json_string(text: str) -> str:
    """The inside of a JSON string literal (``json.dumps(text, ensure_ascii=False)[1:-1]``)."""
    out = []
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _parse_path(path: str) -> list[Any] | None:
    """``$.a.b[0]['c d']`` -> ``["a", "b", 0, "c d"]``; None if it is not such a path."""
    if not path.startswith("$"):
        return None
    segments: list[Any] = []
    i, n = 1, len(path)
    while i < n:
        ch = path[i]
        if ch == ".":
            j = i + 1
            while j < n and path[j] not in ".[":
                j += 1
            if j == i + 1:
                return None
            segments.append(path[i + 1 : j])
            i = j
        elif ch == "[":
            end = path.find("]", i)
            if end < 0:
                return None
            inner = path[i + 1 : end]
            if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
                segments.append(inner[1:-1])
            elif inner.isascii() and inner.isdigit() and len(inner) <= 18:
                segments.append(int(inner))
            else:
                return None
            i = end + 1
        else:
            return None
    return segments if segments else None


class _Container:
    __slots__ = ("segment", "array", "count")

    def __init__(self, segment: Any, array: bool) -> None:
        self.segment = segment
        self.array = array
        self.count = 0


class _Streamed:
    """A call whose arguments arrive as ``partialArgs``: the containers open along the path
    written last, and the path of a string still open (``willContinue``)."""

    __slots__ = ("number", "name", "stack", "string_path")

    def __init__(self, number: int, name: Any) -> None:
        self.number = number
        self.name = name
        self.stack: list[_Container] = []  # [root, ...] once the first value is written
        self.string_path: list[Any] | None = None

    def write(self, arg: dict[str, Any], where: str, anomalies: list[dict[str, Any]]) -> str:
        """The JSON text one ``partialArgs`` item adds."""
        raw_path = arg.get("jsonPath")
        _expect(raw_path, "string", f"{where}.jsonPath")
        assert isinstance(raw_path, str)
        segments = _parse_path(raw_path)
        if segments is None:
            raise AdapterError(f"{where}.jsonPath {raw_path!r} is not a JSON path")
        key = next((k for k in _VALUE_KEYS if arg.get(k) is not None), None)
        if key is None:
            return ""  # nothing to write yet
        value = arg[key]
        if key == "stringValue":
            _expect(value, "string", f"{where}.stringValue")
        elif key == "numberValue":
            _expect(value, "number", f"{where}.numberValue")
        elif key == "boolValue":
            _expect(value, "boolean", f"{where}.boolValue")
        more = arg.get("willContinue") is True
        out: list[str] = []
        if self.string_path is not None:
            if key == "stringValue" and segments == self.string_path:
                out.append(_json_string(value))
                if not more:
                    out.append('"')
                    self.string_path = None
                return "".join(out)
            out.append('"')
            self.string_path = None
        if not self.stack:
            out.append("{")
            self.stack.append(_Container(None, False))
        parent = segments[:-1]
        shared = 0
        while (
            shared < len(parent)
            and shared + 1 < len(self.stack)
            and self.stack[shared + 1].segment == parent[shared]
        ):
            shared += 1
        while len(self.stack) > shared + 1:
            out.append("]" if self.stack.pop().array else "}")
        for position in range(shared, len(parent)):
            self._member(parent[position], raw_path, out, anomalies)
            array = type(segments[position + 1]) is int
            out.append("[" if array else "{")
            self.stack.append(_Container(parent[position], array))
        self._member(segments[-1], raw_path, out, anomalies)
        if key == "stringValue":
            out.append('"')
            out.append(_json_string(value))
            if more:
                self.string_path = segments
            else:
                out.append('"')
        elif key == "numberValue":
            out.append(repr(value))
        elif key == "boolValue":
            out.append("true" if value else "false")
        else:
            out.append("null")
        return "".join(out)

    def _member(
        self, segment: Any, path: str, out: list[str], anomalies: list[dict[str, Any]]
    ) -> None:
        """The separator and key of a new member of the innermost open container."""
        top = self.stack[-1]
        if top.count:
            out.append(",")
        if top.array:
            if segment != top.count:
                anomalies.append(
                    {
                        "code": "mismatched_delta",
                        "detail": f"call {self.name!r}: jsonPath {path!r} is not the next "
                        f"item ({top.count}) of its array",
                    }
                )
        elif type(segment) is int:
            anomalies.append(
                {
                    "code": "mismatched_delta",
                    "detail": f"call {self.name!r}: jsonPath {path!r} indexes an object",
                }
            )
            out.append(f'"{segment}":')
        else:
            out.append(f'"{_json_string(segment)}":')
        top.count += 1

    def close(self) -> str:
        """The text that ends the arguments."""
        out = []
        if self.string_path is not None:
            out.append('"')
            self.string_path = None
        while self.stack:
            out.append("]" if self.stack.pop().array else "}")
        return "".join(out)


def _cut(streamed: _Streamed) -> dict[str, Any]:
    detail = f"call {streamed.name!r}: the stream ended before its streamed arguments did"
    return cut_call_anomaly(detail, None, streamed.name, streamed.number)
