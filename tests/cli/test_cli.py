"""The ``fastmerge`` command, run in a subprocess on the backend under test.

Expected outputs come from computations independent of ``merge_all``: ``functools.reduce`` of
openJiuwen's ``merge_parser_content`` (the drop-in reference) for the default policy, a
``reduce`` of the twin's pairwise ``merge`` for the delta policy, and literal values taken from
the provider SDK's own merged result (openai-python's snapshot of ``get_final_completion()``).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _support.cli import ROOT, _env, assert_fails, fastmerge_cli
from _support.openjiuwen import load as load_openjiuwen

import fastmerge
from fastmerge import _pure

EXAMPLES = ROOT / "examples"
CHAT = EXAMPLES / "openai_chat_deltas.jsonl"
TOOL_CALL = EXAMPLES / "openai_tool_call_deltas.jsonl"
#: What openai-python's get_final_completion() snapshot says the two streams merge to.
CHAT_CONTENT = '{"city":"San Francisco","temperature":61,"units":"f"}'
TOOL_ARGUMENTS = '{"city":"Edinburgh","country":"UK","units":"c"}'
DELTA = ("--policy", "delta", "--list-merge", "by_index")


def read_jsonl(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def compact(value: Any) -> bytes:
    """The CLI's documented default output format."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def openjiuwen_reduce(items: list[Any]) -> Any:
    module = load_openjiuwen()
    if module is None:
        pytest.skip("openjiuwen is not installed (pip install --no-deps openjiuwen)")
    return functools.reduce(module.merge_parser_content, items)


def delta_reduce(items: list[Any]) -> Any:
    merge = functools.partial(_pure.merge, policy="delta", list_merge="by_index")
    return functools.reduce(merge, items)


def assert_ok(proc: subprocess.CompletedProcess[bytes]) -> bytes:
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert proc.stderr == b""
    return proc.stdout


# ---------------------------------------------------------------------------------------------
# The examples


@pytest.mark.parametrize("path", [CHAT, TOOL_CALL], ids=["chat", "tool_call"])
def test_the_openjiuwen_policy_is_openjiuwen_reduce(backend_name: str, path: Path) -> None:
    expected = openjiuwen_reduce(read_jsonl(path))
    got = fastmerge_cli(backend_name, "merge", "--policy", "openjiuwen", path)
    assert assert_ok(got) == compact(expected)


def test_lines_of_no_provider_merge_with_the_openjiuwen_policy(
    backend_name: str, tmp_path: Path
) -> None:
    lines = [{"id": "x", "text": "a", "n": [1]}, {"id": "x", "text": "b", "n": [2]}]
    path = tmp_path / "values.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert assert_ok(fastmerge_cli(backend_name, "merge", path)) == compact(
        openjiuwen_reduce(lines)
    )


@pytest.mark.parametrize("path", [CHAT, TOOL_CALL], ids=["chat", "tool_call"])
def test_delta_policy_is_pairwise_reduce(backend_name: str, path: Path) -> None:
    expected = delta_reduce(read_jsonl(path))
    assert assert_ok(fastmerge_cli(backend_name, "merge", *DELTA, path)) == compact(expected)


def test_delta_chat_example_gives_the_sdk_message(backend_name: str) -> None:
    merged = json.loads(assert_ok(fastmerge_cli(backend_name, "merge", *DELTA, CHAT)))
    assert merged["id"] == "chatcmpl-ABfw1e5abtU8OwGr15vOreYVb2MiF"
    assert merged["object"] == "chat.completion.chunk"
    [choice] = merged["choices"]
    assert choice["delta"] == {"role": "assistant", "content": CHAT_CONTENT, "refusal": None}
    assert choice["finish_reason"] == "stop"
    assert merged["usage"]["total_tokens"] == 93


def test_delta_tool_call_example_gives_the_sdk_message(backend_name: str) -> None:
    merged = json.loads(assert_ok(fastmerge_cli(backend_name, "merge", *DELTA, TOOL_CALL)))
    [choice] = merged["choices"]
    [call] = choice["delta"]["tool_calls"]
    assert call == {
        "index": 0,
        "id": "call_c91SqDXlYFuETYv8mUHzz6pp",
        "type": "function",
        "function": {"name": "GetWeatherArgs", "arguments": TOOL_ARGUMENTS},
    }
    assert choice["finish_reason"] == "tool_calls"


def test_indent(backend_name: str) -> None:
    expected = delta_reduce(read_jsonl(CHAT))
    out = assert_ok(fastmerge_cli(backend_name, "merge", *DELTA, "--indent", "2", CHAT))
    assert out == json.dumps(expected, ensure_ascii=False, indent=2).encode() + b"\n"


def test_stdin(backend_name: str) -> None:
    from_file = assert_ok(fastmerge_cli(backend_name, "merge", *DELTA, CHAT))
    from_stdin = assert_ok(
        fastmerge_cli(backend_name, "merge", *DELTA, "-", stdin=CHAT.read_bytes())
    )
    assert from_stdin == from_file


# ---------------------------------------------------------------------------------------------
# Input handling


def test_blank_lines_skipped_and_crlf(backend_name: str, tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'\n{"a": "x", "n": [1]}\r\n   \n\t\r\n{"a": "y", "n": [2]}\n\n')
    assert assert_ok(fastmerge_cli(backend_name, "merge", path)) == b'{"a":"xy","n":[1,2]}\n'


@pytest.mark.parametrize("content", [b"", b"\n \n", b"\xef\xbb\xbf\r\n"])
def test_empty_input_is_an_error_not_null(
    backend_name: str, tmp_path: Path, content: bytes
) -> None:
    """merge_all of nothing is None; the command says the input was empty instead of printing
    a ``null`` that a pipeline would take for a merged result."""
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    done = fastmerge_cli(backend_name, "merge", path)
    assert (done.returncode, done.stdout) == (1, b"")
    assert (
        done.stderr
        == (
            f"fastmerge: error: {path}: no JSON value to merge: the input is empty or blank\n"
        ).encode()
    )
    done = fastmerge_cli(backend_name, "merge", "-", stdin=content)
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.endswith(b": no JSON value to merge: the input is empty or blank\n")


def test_a_pretty_printed_document_is_named_as_one(backend_name: str, tmp_path: Path) -> None:
    """A response saved pretty-printed is not 'invalid JSON at line 1': the run says what it
    is and what merge reads."""
    path = tmp_path / "response.json"
    path.write_text('{\n  "id": "msg_1",\n  "content": []\n}\n')
    done = fastmerge_cli(backend_name, "merge", str(path))
    assert (done.returncode, done.stdout) == (1, b"")
    assert (
        done.stderr
        == (
            f"fastmerge: error: {path}: one JSON document over several lines, not one JSON value "
            "a line: merge reads JSON Lines, SSE or a JSON array of a provider's events (jq -c "
            "writes a document on one line)\n"
        ).encode()
    )
    # a broken document keeps the line's own error
    path.write_text('{\n  "id": \n')
    done = fastmerge_cli(backend_name, "merge", str(path))
    assert done.returncode == 1
    assert b":1: invalid JSON" in done.stderr


def test_a_null_line_is_merged_not_empty(backend_name: str) -> None:
    assert assert_ok(fastmerge_cli(backend_name, "merge", "-", stdin=b"null\n")) == b"null\n"


def test_byte_order_mark_ignored(backend_name: str) -> None:
    out = assert_ok(fastmerge_cli(backend_name, "merge", "-", stdin=b'\xef\xbb\xbf"a"\n"b"\n'))
    assert out == b'"ab"\n'


def test_values_kept_exactly(backend_name: str) -> None:
    # ints beyond 64 bits, non-ASCII text, floats, NaN: read and written back unchanged
    stdin = (
        '{"n": 123456789012345678901234567890, "t": "h\u00e9 \U0001f389", "f": 0.1}\n'
        '{"t": "!", "f": -0.0, "x": NaN}\n'
    ).encode()
    out = assert_ok(fastmerge_cli(backend_name, "merge", "-", stdin=stdin))
    assert (
        out
        == (
            '{"n":123456789012345678901234567890,"t":"h\u00e9 \U0001f389!","f":-0.0,"x":NaN}\n'
        ).encode()
    )


def test_lone_surrogate_written_escaped(backend_name: str) -> None:
    out = assert_ok(fastmerge_cli(backend_name, "merge", "-", stdin=b'"\\ud800"\n"\\u00e9"\n'))
    assert out == b'"\\ud800\\u00e9"\n'


# ---------------------------------------------------------------------------------------------
# Errors


def test_bad_line_names_file_and_line(backend_name: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"a": "x"}\n\n{"a": \n{"a": "y"}\n')
    err = assert_fails(fastmerge_cli(backend_name, "merge", path))
    assert err == f"fastmerge: error: {path}:3: invalid JSON: Expecting value (column 7)\n"


def test_bad_line_far_down(backend_name: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    with path.open("wb") as f:
        f.writelines(b'{"content": "tok"}\n' for _ in range(4999))
        f.write(b'{"content": "tok"} trailing\n')
    err = assert_fails(fastmerge_cli(backend_name, "merge", path))
    assert err.startswith(f"fastmerge: error: {path}:5000: invalid JSON: Extra data")


def test_bad_line_on_stdin(backend_name: str) -> None:
    err = assert_fails(fastmerge_cli(backend_name, "merge", "-", stdin=b'"a"\n[1,\n'))
    assert err.startswith("fastmerge: error: <stdin>:2: invalid JSON")


def test_line_not_utf8(backend_name: str) -> None:
    err = assert_fails(fastmerge_cli(backend_name, "merge", "-", stdin=b'"a"\n"\xff"\n'))
    assert err.startswith("fastmerge: error: <stdin>:2: not valid UTF-8")


def test_missing_file(backend_name: str, tmp_path: Path) -> None:
    path = tmp_path / "missing.jsonl"
    err = assert_fails(fastmerge_cli(backend_name, "merge", path))
    assert err == f"fastmerge: error: {path}: No such file or directory\n"


def test_directory(backend_name: str, tmp_path: Path) -> None:
    err = assert_fails(fastmerge_cli(backend_name, "merge", tmp_path))
    assert err.startswith(f"fastmerge: error: {tmp_path}: ")


def test_strict_mismatch_is_a_merge_error(backend_name: str) -> None:
    stdin = b'{"a": "x"}\n{"a": 1}\n'
    err = assert_fails(
        fastmerge_cli(backend_name, "merge", "--policy", "delta", "--strict", "-", stdin=stdin)
    )
    # the library's "(strict=True)" in the command line's terms
    assert err == (
        "fastmerge: error: <stdin>: cannot merge: cannot merge str with number at $['a'] "
        "(--strict)\n"
    )


def test_nesting_beyond_max_depth(backend_name: str) -> None:
    depth = fastmerge.MAX_DEPTH + 5
    line = ('{"a":' * depth + '"x"' + "}" * depth + "\n").encode()
    err = assert_fails(fastmerge_cli(backend_name, "merge", "-", stdin=line * 2))
    expected = fastmerge.errors.DepthLimitError(fastmerge.MAX_DEPTH)
    assert err == f"fastmerge: error: <stdin>: cannot merge: {expected}\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--list-merge", "by_index"), "--list-merge by_index requires --policy delta"),
        (("--policy", "openjiuwen", "--strict"), "--strict requires --policy delta"),
        (("--policy", "nope"), "argument --policy: invalid choice: 'nope'"),
        (("--indent", "-1"), "argument --indent: must be 0 or more: -1"),
    ],
)
def test_usage_errors(backend_name: str, args: tuple[str, ...], message: str) -> None:
    err = assert_fails(fastmerge_cli(backend_name, "merge", *args, CHAT), status=64)
    assert message in err


def test_strict_alone_is_the_streams_strict(backend_name: str) -> None:
    """Without --policy, a detected stream takes ``--strict`` as ``--provider auto`` does."""
    strict = assert_ok(fastmerge_cli(backend_name, "merge", "--strict", CHAT))
    assert strict == assert_ok(fastmerge_cli(backend_name, "merge", "--provider", "auto", CHAT))


def test_no_command(backend_name: str) -> None:
    err = assert_fails(fastmerge_cli(backend_name), status=64)
    # one line: the error, and where the usage is
    assert err.splitlines() == [
        "fastmerge: error: the following arguments are required: COMMAND (see 'fastmerge --help')"
    ]


def test_reads_lazily(backend_name: str) -> None:
    """A bad line is reported as soon as it arrives, while the input is still open."""
    with subprocess.Popen(
        [sys.executable, "-m", "fastmerge", "merge", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(backend_name),
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(b'{"a": "x"}\n{"a": oops}\n')
        proc.stdin.flush()
        try:
            # stdin stays open: a reader that waits for the end of the input would hang here
            status = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        out, err = proc.stdout.read(), proc.stderr.read()
    assert status == 1
    assert out == b""
    assert err.decode().startswith("fastmerge: error: <stdin>:2: invalid JSON")


# ---------------------------------------------------------------------------------------------
# Provider streams and compressed input without --provider

ANTHROPIC_SSE = "examples/anthropic_tool_use.sse"
ANTHROPIC_LINES = "tests/corpus/anthropic_messages/sonnet45-text.jsonl"


@pytest.mark.parametrize(
    "path",
    [
        ANTHROPIC_SSE,
        ANTHROPIC_LINES,
        CHAT,
        TOOL_CALL,
        "tests/corpus/gemini/gemini20-flash-plain-text.jsonl",
        "tests/corpus/ollama/generate-deepseek-v31-turbo-text.jsonl",
    ],
)
def test_a_provider_stream_is_detected_without_provider(backend_name: str, path: str) -> None:
    """A recorded stream, SSE or JSON lines, is aggregated as ``--provider auto`` does (merged
    as JSON values, its ids and types would be concatenated, exit 0)."""
    auto = assert_ok(fastmerge_cli(backend_name, "merge", "--provider", "auto", path))
    assert assert_ok(fastmerge_cli(backend_name, "merge", path)) == auto
    assert json.loads(auto)["status"] == "complete"
    to = ("--to", "openai-chat", "--indent", "2")
    expected = assert_ok(fastmerge_cli(backend_name, "merge", "--provider", "auto", *to, path))
    assert assert_ok(fastmerge_cli(backend_name, "merge", *to, path)) == expected


def test_an_openai_chat_sse_capture_on_stdin_is_detected(backend_name: str) -> None:
    sse = b"".join(b"data: " + line + b"\n\n" for line in CHAT.read_bytes().splitlines())
    got = assert_ok(fastmerge_cli(backend_name, "merge", "-", stdin=sse + b"data: [DONE]\n\n"))
    assert got == assert_ok(fastmerge_cli(backend_name, "merge", "--provider", "auto", CHAT))


def test_records_that_hold_events_name_fastmerge_batch(backend_name: str, tmp_path: Path) -> None:
    records = [{"stream_id": "s1", "seq": i, "event": e} for i, e in enumerate(read_jsonl(CHAT))]
    path = tmp_path / "gateway.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    err = assert_fails(fastmerge_cli(backend_name, "merge", path))
    assert err == (
        f"fastmerge: error: {path}: the lines are records that hold provider events: its "
        "'event' is an event of openai-chat: read a log of such records with fastmerge batch "
        "--group-by KEY --event event (--policy merges them as JSON values)\n"
    )
    # asked, they are merged as JSON values
    got = assert_ok(fastmerge_cli(backend_name, "merge", "--policy", "openjiuwen", path))
    assert got == compact(openjiuwen_reduce(records))


@pytest.mark.parametrize("provider", [None, "auto"])
def test_compressed_input_has_one_wording(
    backend_name: str, tmp_path: Path, provider: str | None
) -> None:
    import gzip

    path = tmp_path / "log.jsonl.gz"
    path.write_bytes(gzip.compress((ROOT / ANTHROPIC_LINES).read_bytes()))
    options = () if provider is None else ("--provider", provider)
    err = assert_fails(fastmerge_cli(backend_name, "merge", *options, path))
    reading = "" if provider is None else "no event could be read: "
    assert err == f"fastmerge: error: {path}: {reading}gzip-compressed input: decompress it first\n"


def test_zstd_example_is_compressed_input(backend_name: str) -> None:
    err = assert_fails(fastmerge_cli(backend_name, "merge", "examples/gateway.jsonl.zst"))
    assert err == (
        "fastmerge: error: examples/gateway.jsonl.zst: zstd-compressed input: decompress it first\n"
    )


def test_binary_input_keeps_its_utf8_error(backend_name: str) -> None:
    err = assert_fails(fastmerge_cli(backend_name, "merge", "-", stdin=b"\xff\xfe{}\n"))
    assert err == "fastmerge: error: <stdin>:1: not valid UTF-8 (byte 1: invalid start byte)\n"


def test_line_across_the_first_block_is_read_whole(backend_name: str, tmp_path: Path) -> None:
    """The first block is read ahead to look at it; a line it cuts is still one line."""
    values = [{"text": "a" * 40_000, "n": [i]} for i in range(4)]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(value) + "\r\n" for value in values))
    assert assert_ok(fastmerge_cli(backend_name, "merge", path)) == compact(
        openjiuwen_reduce(values)
    )


# ---------------------------------------------------------------------------------------------
# Entry points


def test_version(backend_name: str) -> None:
    out = assert_ok(fastmerge_cli(backend_name, "--version"))
    build = fastmerge.backend_info()["build"]
    # the build is the extension's (release from make build-prod, debug from make test)
    said = f"{backend_name} backend, {build} build" if backend_name == "rust" else "python backend"
    assert build in ("release", "debug")
    assert out == f"fastmerge {fastmerge.__version__} ({said})\n".encode()


def test_help_lists_merge(backend_name: str) -> None:
    top = b" ".join(assert_ok(fastmerge_cli(backend_name, "--help")).split())
    assert b"merge a recorded provider stream (SSE, JSON lines or a JSON array of events;" in top
    assert b"--list-merge" in assert_ok(fastmerge_cli(backend_name, "merge", "--help"))


def test_console_script(backend_name: str) -> None:
    script = Path(sys.executable).with_name("fastmerge")
    if not script.exists():
        pytest.skip(f"no console script at {script}: fastmerge is not installed in this venv")
    proc = subprocess.run(
        [str(script), "merge", *DELTA, CHAT],
        capture_output=True,
        env=_env(backend_name),
        timeout=120,
    )
    assert assert_ok(proc) == compact(delta_reduce(read_jsonl(CHAT)))
