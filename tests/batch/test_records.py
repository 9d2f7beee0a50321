"""Reading a record of a JSON-lines log: the engine reads a plain line in one pass with its own
JSON scanner and leaves anything unusual (an escaped key, a path through an array, a surrogate
escape, a long number, deep nesting, a line that is not UTF-8 or not JSON) to the thorough
reader. Both must give what the twin gives, line for line: the same key, event, order value,
or the same bad-line reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _support.fuzz import items
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

Both = tuple[ModuleType, ModuleType]

CHUNK = '{"id":"c1","choices":[{"index":0,"delta":{"content":"hi"}}]}'
DEEP = 99  # the record is one level: 99 more is the deepest line the events parser reads

#: Lines the plain reader must read as the thorough one does, or leave to it.
LINES = [
    f'{{"sid":"a","event":{CHUNK}}}',
    f'  {{ "sid" : "a" , "event" : {CHUNK} }}  ',
    f'{{"event":{CHUNK},"sid":"a"}}',
    f'{{"sid":"a","sid":"b","event":{CHUNK}}}',  # the last of duplicates
    f'{{"sid": "zz", "event": {CHUNK}, "sid": "a"}}',
    f'{{"sid":"a","event":{CHUNK},"event":{CHUNK}}}',  # an event key twice
    f'{{"sid":"a","event":{{"x":tru}},"event":{CHUNK}}}',  # the first of them not JSON
    f'{{"s\\u0069d":"a","event":{CHUNK}}}',  # an escaped key: the same key
    f'{{"sid":"a\\"b","event":{CHUNK}}}',  # an escaped key text
    f'{{"sid":7,"event":{CHUNK}}}',
    f'{{"sid":7.0,"event":{CHUNK}}}',
    # halfway between two shortest digit strings: Python's repr takes the even one (...128.2)
    f'{{"sid":1446596859160128.25,"event":{CHUNK}}}',
    f'{{"sid":1e400,"event":{CHUNK}}}',
    f'{{"sid":123456789012345678901234567890,"event":{CHUNK}}}',
    f'{{"sid":null,"event":{CHUNK}}}',
    f'{{"sid":["a"],"event":{CHUNK}}}',
    '{"sid":"a","event":null}',
    '{"sid":"a","event":"[DONE]"}',
    '{"sid":"a","event":"data: {}"}',
    '{"sid":"a","event":[1]}',
    '{"sid":"a","event":3}',
    '{"sid":"a"}',
    f'{{"event":{CHUNK}}}',
    f'{{"sid":"a","event":{CHUNK},}}',  # a trailing comma
    f'{{"sid":"a","event":{CHUNK}}} x',  # text after the record
    f'{{"sid":"a","event":{CHUNK}',  # cut
    f'{{"sid":"a","event":{CHUNK[:-2]}}}',  # the event cut inside
    f'{{"sid":"a","event":{CHUNK},"x":"\\ud800"}}',  # a lone surrogate elsewhere
    f'{{"sid":"a","event":{CHUNK},"x":"\\ud83d\\ude00"}}',  # a pair
    f'{{"sid":"\\ud83d\\ude00","event":{CHUNK}}}',
    f'{{"sid":"a","event":{CHUNK},"x":01}}',
    f'{{"sid":"a","event":{CHUNK},"x":"tab\there"}}',  # a raw control character
    '{"sid":"a","event":' + "[" * DEEP + "]" * DEEP + "}",
    '{"sid":"a","event":' + "[" * (DEEP + 1) + "]" * (DEEP + 1) + "}",
    '{"sid":"a","x":' + "{" * DEEP + "}" * DEEP + f',"event":{CHUNK}}}',
    '{"sid":"a","x":' + '{"y":' * (DEEP - 1) + "1" + "}" * (DEEP - 1) + f',"event":{CHUNK}}}',
    '{"sid":"a","x":' + '{"y":' * DEEP + "1" + "}" * DEEP + f',"event":{CHUNK}}}',
    "[1,2]",
    '"a string"',
    "{}",
    "not json",
    # an event that ends the line is taken without being read: these end like one but are not
    f'{{"sid":"a","event":{CHUNK},"x":{{"y":1}}}}',  # another member after it
    f'{{"sid":"a","event":{CHUNK},"sid":"b","m":{{}}}}',  # the key again after it
    f'{{"sid":"a","event":{CHUNK},"s\\u0069d":"b","m":{{}}}}',  # escaped, after it
    f'{{"sid":"a","event":{CHUNK},"event":{{"z":1}}}}',  # the event again
    '{"sid":"a","event":{"a":{"b":1}}',  # the line cut: the event's braces end it
    f'{{"sid":"a","event":{CHUNK} }}\r  ',  # blanks and a CR after it: a record
    '{"sid":"a","event":{"x":"\\"sid\\"","y":{}}}',  # a string that quotes the key
    '{"sid":"a","event":{"a":' + "[]," * 120 + '"b":{}}}',  # many brackets, shallow
    '{"sid":"a","event":' + '{"a":' * DEEP + "1" + "}" * DEEP + "}",
    '{"sid":"a","event":' + '{"a":' * (DEEP + 1) + "1" + "}" * (DEEP + 1) + "}",
    # a value a repeated key replaces is read all the same: what is not JSON text in it
    # makes the line bad, as it does where it is kept
    f'{{"sid":"a","x":"\\ud800","x":1,"event":{CHUNK}}}',
    f'{{"sid":"\\udc00","sid":"a","event":{CHUNK}}}',
    f'{{"sid":"a","event":{CHUNK[:-1]},"id":"\\ud800","id":"c1"}}}}',
    f'{{"sid":"a","x":[{{"y":"\\ud800","y":2}}],"event":{CHUNK}}}',
    '{"sid":"a","x":' + "[" * DEEP + "]" * DEEP + ',"x":1,"event":' + CHUNK + "}",
    '{"sid":"a","x":' + "[" * (DEEP - 1) + "]" * (DEEP - 1) + ',"x":1,"event":' + CHUNK + "}",
    f'{{"sid":"a","x":1e400,"x":1,"event":{CHUNK}}}',
    f'{{"sid":"a","event":{CHUNK[:-1]},"q":1e400,"q":1}}}}',  # in the event: unreadable
    f'{{"sid":"a","event":{CHUNK[:-1]},"q":[{{"r":{"9" * 400},"r":2}}]}}}}',
    f'{{"sid":1e400,"sid":"a","event":{CHUNK}}}',
]


#: one file for every read, so that the items (which name it) compare equal (set below)
_LOG = Path()


@pytest.fixture(scope="module", autouse=True)
def _log(tmp_path_factory: pytest.TempPathFactory) -> None:
    global _LOG
    _LOG = tmp_path_factory.mktemp("records") / "log.jsonl"


def _read(module: ModuleType, lines: list[str], **options: Any) -> list[Any]:
    _LOG.write_bytes("".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass"))
    try:
        return items(module, [str(_LOG)], **options)
    finally:
        _LOG.unlink()


@pytest.mark.parametrize("event", ["event", None], ids=["wrapped", "the record is the event"])
@pytest.mark.parametrize("line", LINES, ids=range(len(LINES)))
def test_a_line_reads_as_the_twin_reads_it(both: Both, line: str, event: str | None) -> None:
    rust, python = both
    options = {"group_by": "sid", "event": event}
    expected = _read(python, [line], **options)
    assert _read(rust, [line], jobs=1, **options) == expected
    assert _read(rust, [line], jobs=2, **options) == expected


def test_the_lines_give_what_they_hold(both: Both) -> None:
    """Not only alike: a plain line's key and event are found, a duplicate key's last value
    wins, and a bad line names its reason."""
    rust, _ = both
    out = _read(rust, LINES[:5], group_by="sid", event="event")
    streams = [item for item in out if item[0] == "stream"]
    assert [item[1] for item in streams] == ["a", "b"]
    text = json.dumps(out)
    assert '"hihihihi"' in text  # four lines of key a ("hi" each), in order
    trailing_comma = f'{{"sid":"a","event":{CHUNK},}}'
    bad = _read(
        rust, [trailing_comma, f'{{"sid":["a"],"event":{CHUNK}}}'], group_by="sid", event="event"
    )
    assert [item[0] for item in bad] == ["bad", "bad"]
    assert "not valid JSON" in json.dumps(bad[0])
    assert "not a string or a number" in json.dumps(bad[1])


NESTED = [
    ("meta.sid", "data.event", '{"meta":{"sid":"a"},"data":{"event":' + CHUNK + "}}"),
    (
        "meta.sid",
        "data.event",
        '{"meta":{"x":1,"sid":"a","sid":"b"},"data":{"event":' + CHUNK + "}}",
    ),
    ("meta.sid", "data.event", '{"meta":{"s\\u0069d":"a"},"data":{"event":' + CHUNK + "}}"),
    ("meta.sid", "data.event", '{"meta":["a"],"data":{"event":' + CHUNK + "}}"),
    ("meta.0", "data.event", '{"meta":["a"],"data":{"event":' + CHUNK + "}}"),
    ("meta.0", "data.event", '{"meta":{"0":"a"},"data":{"event":' + CHUNK + "}}"),
    ("/meta/0", "/data/event", '{"meta":["a"],"data":{"event":' + CHUNK + "}}"),
    ("meta.sid", "data.event", '{"meta":"a","data":{"event":' + CHUNK + "}}"),
    ("meta.sid", "data.event", '{"meta":{},"data":{"event":' + CHUNK + "}}"),
    ("meta.sid", "data.event", '{"meta":{"sid":"a"},"data":{}}'),
]


@pytest.mark.parametrize(("group_by", "event", "line"), NESTED, ids=range(len(NESTED)))
def test_a_nested_path_reads_as_the_twin_reads_it(
    both: Both, group_by: str, event: str, line: str
) -> None:
    rust, python = both
    options = {"group_by": group_by, "event": event, "order_by": None}
    assert _read(rust, [line], jobs=1, **options) == _read(python, [line], **options)


_PIECES = st.sampled_from(
    [
        '"sid"',
        '"s\\u0069d"',
        '"event"',
        '"seq"',
        '"x"',
        ":",
        ",",
        " ",
        "{",
        "}",
        "[",
        "]",
        '"a"',
        '"\\ud800"',
        '"é"',
        "7",
        "-0.5e3",
        "01",
        "null",
        "true",
        CHUNK,
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(_PIECES, max_size=14).map("".join), min_size=1, max_size=4))
def test_drawn_lines_read_as_the_twin_reads_them(both: Both, lines: list[str]) -> None:
    rust, python = both
    lines = ["{" + line for line in lines]  # mostly objects, often broken ones
    for options in (
        {"group_by": "sid", "event": "event"},
        {"group_by": "sid", "event": "event", "order_by": "seq"},
        {"group_by": "sid", "event": None},
    ):
        expected = _read(python, lines, **options)
        assert _read(rust, lines, jobs=1, **options) == expected
        # each shard reads the lines whose keys are its own
        assert _read(rust, lines, jobs=2, **options) == expected


_ROLE = '{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}'
_STOP = '{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(CHUNK) - 1),
            st.sampled_from(list('{}[]",:\\ 0a\x01') + ["\\u", "\\ud800", "é", "1e400", ""]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_a_damaged_event_inside_an_open_stream_reads_as_the_twin_reads_it(
    both: Both, damage: list[tuple[int, str]]
) -> None:
    """The event of a plain record is checked as its stream's aggregator reads it: a record
    whose event is not JSON, in the middle of an open stream, is a bad line (and the stream
    goes on), exactly as the twin reads the line."""
    rust, python = both
    events = []
    for at, piece in damage:
        events.append(CHUNK[:at] + piece + CHUNK[at + 1 :])
    lines = [f'{{"sid":"a","event":{_ROLE}}}']
    lines += [f'{{"sid":"a","event":{event}}}' for event in events]
    lines += [f'{{"sid":"a","event":{CHUNK}}}', f'{{"sid":"a","event":{_STOP}}}']
    options = {"group_by": "sid", "event": "event"}
    expected = _read(python, lines, **options)
    assert _read(rust, lines, jobs=1, **options) == expected
    assert _read(rust, lines, jobs=2, **options) == expected


def test_a_bad_event_in_an_open_stream_is_a_bad_line(both: Both) -> None:
    rust, _ = both
    lines = [
        f'{{"sid":"a","event":{_ROLE}}}',
        f'{{"sid":"a","event":{CHUNK}}}',
        # not JSON inside the event, its brackets whole (the record reader skips it)
        f'{{"sid":"a","event":{CHUNK.replace(":0", ":01")}}}',
        f'{{"sid":"a","event":{CHUNK}}}',
        f'{{"sid":"a","event":{_STOP}}}',
    ]
    out = _read(rust, lines, group_by="sid", event="event")
    assert [item[0] for item in out] == ["bad", "stream"]
    assert out[0][2] == 3 and "not valid JSON" in out[0][3]
    assert '"hihi"' in json.dumps(out[1])


def test_an_event_followed_by_another_member_is_read_whole(both: Both) -> None:
    """A line that ends with two braces looks like one whose event is its last member; when
    another member follows the event, the line is read again whole, in an open stream too:
    its event goes on the stream, the member after it is not part of it."""
    rust, python = both
    lines = [
        f'{{"sid":"a","event":{_ROLE}}}',
        f'{{"sid":"a","event":{CHUNK},"meta":{{"n":1}}}}',
        f'{{"sid":"a","event":{CHUNK}}}',
        f'{{"sid":"a","event":{{"id":"c1","choices":[]}},"event":{CHUNK},"m":{{}}}}',
        f'{{"sid":"a","event":{_STOP},"meta":{{}}}}',
    ]
    options = {"group_by": "sid", "event": "event"}
    out = _read(rust, lines, **options)
    assert [item[0] for item in out] == ["stream"]
    assert '"hihihi"' in json.dumps(out[0])
    assert '"stop"' in json.dumps(out[0])
    assert out == _read(python, lines, **options)
    assert _read(rust, lines, jobs=2, **options) == out


@pytest.mark.parametrize("name", ['"sid"', '"s\\u0069d"'])
def test_a_key_repeated_after_the_event_routes_the_line(both: Both, name: str) -> None:
    """The key that counts is the last one, also when it comes after an event that ends like
    the line's last member: the record goes to that key's stream, whichever thread holds it
    (ten first keys, so that some hash to another shard than the last one's)."""
    rust, python = both
    lines = [f'{{"sid":"b","event":{_ROLE}}}']
    lines += [f'{{"sid":"zz{n}","event":{CHUNK},{name}:"b","m":{{}}}}' for n in range(10)]
    lines += [f'{{"sid":"b","event":{_STOP}}}']
    options = {"group_by": "sid", "event": "event"}
    out = _read(rust, lines, jobs=2, **options)
    assert [(item[0], item[1]) for item in out] == [("stream", "b")]
    assert '"' + "hi" * 10 + '"' in json.dumps(out[0])
    assert out == _read(python, lines, **options)
