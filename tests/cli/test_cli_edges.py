"""The ``fastmerge`` command at its edges: exit statuses a pipeline can trust, cut
tool calls never rendered as complete, write errors as one line, messages in the command
line's terms. Every test runs on both backends (the subprocess gets the backend under test).

The cut streams are real corpus streams cut after a line in the middle of a tool call.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _support.cli import ROOT, _env, fastmerge_cli
from _support.corpus import CORPUS

import fastmerge

INCOMPLETE = "the stream is incomplete (--allow-incomplete accepts it)"
# provider -> (corpus file, number of its lines kept: the stream ends inside a tool call)
CUTS = {
    "anthropic": ("anthropic_messages/haiku45-text-then-tool-use.jsonl", 11),
    "openai-chat": ("openai_chat/gpt4o-parallel-tool-calls.jsonl", 4),
    "openai-responses": ("openai_responses/gpt4o-function-call.jsonl", 6),
    "gemini": ("gemini/vertex-gemini31-pro-partial-args-streaming.jsonl", 2),
    "bedrock-converse": ("bedrock_converse/nova-micro-tool-use.jsonl", 23),
}
FAILED = (
    b'{"type":"response.created","sequence_number":0,"response":{"id":"resp_1",'
    b'"object":"response","status":"in_progress","model":"gpt-4o","output":[]}}\n'
    b'{"type":"response.failed","sequence_number":1,"response":{"id":"resp_1",'
    b'"object":"response","status":"failed","model":"gpt-4o","output":[],'
    b'"error":{"code":"server_error","message":"boom"}}}\n'
)


def cut_stream(provider: str, tmp_path: Path) -> Path:
    name, keep = CUTS[provider]
    lines = (CORPUS / name).read_bytes().splitlines(keepends=True)
    path = tmp_path / f"cut-{provider}.jsonl"
    path.write_bytes(b"".join(lines[:keep]))
    return path


def error_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and err.endswith("\n"), err
    return err


# ---------------------------------------------------------------------------------------------
# Exit statuses


@pytest.mark.parametrize("provider", list(CUTS))
def test_cut_stream_exits_2_with_the_message_printed(
    backend_name: str, provider: str, tmp_path: Path
) -> None:
    path = cut_stream(provider, tmp_path)
    proc = fastmerge_cli(backend_name, "merge", "--provider", provider, path)
    assert proc.returncode == 2
    assert error_line(proc) == f"fastmerge: error: {path}: {INCOMPLETE}\n"
    agg = fastmerge.Aggregator(provider)
    agg.feed(path.read_bytes())
    [message] = agg.finish_choices()
    assert message.status == "incomplete"
    assert json.loads(proc.stdout) == message.to_dict()


@pytest.mark.parametrize("provider", list(CUTS))
def test_allow_incomplete_exits_0(backend_name: str, provider: str, tmp_path: Path) -> None:
    path = cut_stream(provider, tmp_path)
    cut = fastmerge_cli(backend_name, "merge", "--provider", provider, path)
    allowed = fastmerge_cli(
        backend_name, "merge", "--allow-incomplete", "--provider", provider, path
    )
    assert (allowed.returncode, allowed.stderr) == (0, b"")
    assert allowed.stdout == cut.stdout


def test_failed_stream_exits_2(backend_name: str) -> None:
    proc = fastmerge_cli(backend_name, "merge", "--provider", "auto", "-", stdin=FAILED)
    assert proc.returncode == 2
    assert error_line(proc) == (
        "fastmerge: error: <stdin>: the stream failed (--allow-incomplete accepts it)\n"
    )
    assert json.loads(proc.stdout)["status"] == "failed"
    allowed = fastmerge_cli(
        backend_name, "merge", "--provider", "auto", "--allow-incomplete", "-", stdin=FAILED
    )
    assert (allowed.returncode, allowed.stderr, allowed.stdout) == (0, b"", proc.stdout)


def test_incomplete_choices_are_named(backend_name: str) -> None:
    lines = (CORPUS / "openai_chat/gpt4o-n3-interleaved-choices.jsonl").read_bytes().splitlines()
    proc = fastmerge_cli(
        backend_name, "merge", "--provider", "openai-chat", "-", stdin=b"\n".join(lines[:5])
    )
    assert proc.returncode == 2
    assert error_line(proc) == (
        "fastmerge: error: <stdin>: choice 0 is incomplete, choice 1 is incomplete, choice 2 is "
        "incomplete (--allow-incomplete accepts it)\n"
    )


def test_strict_with_provider_is_allowed(backend_name: str) -> None:
    path = CORPUS / "openai_chat/gpt4o-parallel-tool-calls.jsonl"
    plain = fastmerge_cli(backend_name, "merge", "--provider", "openai-chat", path)
    strict = fastmerge_cli(backend_name, "merge", "--strict", "--provider", "openai-chat", path)
    assert (strict.returncode, strict.stderr) == (0, b"")
    assert strict.stdout == plain.stdout
    assert json.loads(strict.stdout)["status"] == "complete"


def test_strict_cut_stream_exits_2_in_flag_terms(backend_name: str, tmp_path: Path) -> None:
    path = cut_stream("openai-chat", tmp_path)
    for extra in ((), ("--allow-incomplete",)):
        proc = fastmerge_cli(
            backend_name, "merge", "--strict", *extra, "--provider", "openai-chat", path
        )
        assert (proc.returncode, proc.stdout) == (2, b"")
        assert error_line(proc) == (
            f"fastmerge: error: {path}: truncated: choice 0: the stream ended inside tool call "
            "'call_JMW1whyEaYG438VE1OIflxA2' ('GetWeatherArgs') without a finish_reason; its "
            "arguments are kept as streamed (--strict)\n"
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--list-merge", "by_index"), "--list-merge by_index requires --policy delta"),
        (("--strict",), "--strict requires --policy delta"),
        (
            ("--list-merge", "concat", "--allow-incomplete"),
            "--allow-incomplete needs a provider stream, not --policy or --list-merge",
        ),
        (
            ("--policy", "delta", "--to", "anthropic"),
            "--to needs a provider stream, not --policy or --list-merge",
        ),
        (
            ("--policy", "nope"),
            "argument --policy: invalid choice: 'nope' "
            "(choose from 'openjiuwen', 'delta', 'langchain')",
        ),
    ],
)
def test_usage_errors_exit_64_in_flag_terms(
    backend_name: str, args: tuple[str, ...], message: str
) -> None:
    proc = fastmerge_cli(backend_name, "merge", *args, "-")
    assert (proc.returncode, proc.stdout) == (64, b"")
    # one line: the error in flag terms and where the usage is
    assert proc.stderr.decode() == (
        f"fastmerge merge: error: {message} (see 'fastmerge merge --help')\n"
    )
    assert "=" not in proc.stderr.decode()


def test_undetectable_provider_names_the_flag(backend_name: str) -> None:
    proc = fastmerge_cli(backend_name, "merge", "--provider", "auto", "-", stdin=b'{"x": 1}\n')
    assert (proc.returncode, proc.stdout) == (1, b"")
    choices = ", ".join(repr(p) for p in fastmerge.PROVIDERS)
    assert error_line(proc) == (
        # its one event unreadable, the stream has none read (spec §6, §8)
        "fastmerge: error: <stdin>: no event could be read: event 1: cannot tell the provider "
        f"from this event (keys: 'x'); pass --provider one of {choices}\n"
    )


def test_to_a_shape_that_cannot_hold_the_choices(backend_name: str) -> None:
    path = CORPUS / "openai_chat/gpt4o-n3-interleaved-choices.jsonl"
    proc = fastmerge_cli(
        backend_name, "merge", "--provider", "openai-chat", "--to", "anthropic", path
    )
    assert (proc.returncode, proc.stdout) == (1, b"")
    assert error_line(proc) == (
        f"fastmerge: error: {path}: --to anthropic: an Anthropic Message holds one choice, not 3\n"
    )


# ---------------------------------------------------------------------------------------------
# Writing the output


def test_write_error_is_one_line(backend_name: str) -> None:
    path = CORPUS / "openai_chat/gpt4o-parallel-tool-calls.jsonl"
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "fastmerge", "merge", "--provider", "auto", str(path)],
            stdout=full,
            stderr=subprocess.PIPE,
            env=_env(backend_name),
            cwd=ROOT,
            timeout=120,
        )
    assert proc.returncode == 1
    assert proc.stderr == b"fastmerge: error: cannot write the output: No space left on device\n"


def test_broken_pipe_exits_quietly(backend_name: str) -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "fastmerge", "merge", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(backend_name),
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before anything is written (``| head``)
        proc.stdin.write(b'"x"\n' * 1000)
        proc.stdin.close()
        status = proc.wait(timeout=120)
        err = proc.stderr.read()
    assert (status, err) == (141, b"")


# ---------------------------------------------------------------------------------------------
# --to of a cut tool call: raw arguments and a marker, never a parsed, executable call


def _cut_call(provider: str, rendered: dict[str, Any]) -> Any:
    if provider == "anthropic":
        return [b for b in rendered["content"] if b["type"] == "tool_use"]
    if provider == "openai-chat":
        return rendered["choices"][0]["message"]["tool_calls"]
    if provider == "openai-responses":
        return [i for i in rendered["output"] if i["type"] == "function_call"]
    if provider == "gemini":
        parts = rendered["candidates"][0]["content"]["parts"]
        return [p["functionCall"] for p in parts if "functionCall" in p]
    return [b["toolUse"] for b in rendered["output"]["message"]["content"] if "toolUse" in b]


CUT_CALLS = {
    # complete-looking JSON, but the block never stopped: still not parsed into an object
    "anthropic": {
        "type": "tool_use",
        "id": "toolu_01KFbKqPYSuAKujiL6mTfzYA",
        "name": "json",
        "input": '{"elements": [{"location": "San Francisco", "temperature": 58, '
        '"condition": "sunny"}]}',
        "truncated": True,
    },
    "openai-chat": {
        "id": "call_JMW1whyEaYG438VE1OIflxA2",
        "type": "function",
        "function": {"name": "GetWeatherArgs", "arguments": '{"city": '},
        "truncated": True,
    },
    "openai-responses": {
        "type": "function_call",
        "id": "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2",
        "call_id": "call_kL0PCQV7M2WMoVX8V8OtYSAL",
        "name": "get_capital",
        "arguments": '{"country":"',
        "status": "incomplete",
        "truncated": True,
    },
    "gemini": {"name": "getWeather", "args": '{"location":"Boston', "truncated": True},
    "bedrock-converse": {
        "toolUseId": "tooluse_lAG_zP8QRHmSYOwZzzaCqA",
        "name": "get_temperature",
        "input": '{"city":"Paris"}',
        "truncated": True,
    },
}


@pytest.mark.parametrize("provider", list(CUTS))
def test_cut_call_rendered_raw_and_marked(backend_name: str, provider: str, tmp_path: Path) -> None:
    path = cut_stream(provider, tmp_path)
    proc = fastmerge_cli(backend_name, "merge", "--provider", provider, "--to", provider, path)
    assert proc.returncode == 2
    assert _cut_call(provider, json.loads(proc.stdout)) == [CUT_CALLS[provider]]


def test_cut_call_marked_for_every_renderer(tmp_path: Path) -> None:
    agg = fastmerge.Aggregator("openai-chat")
    agg.feed(cut_stream("openai-chat", tmp_path).read_bytes())
    [message] = agg.finish_choices()
    raw = '{"city": '
    anthropic = fastmerge.to_provider(message, "anthropic")
    assert [b for b in anthropic["content"] if b["type"] == "tool_use"] == [
        {
            "type": "tool_use",
            "id": "call_JMW1whyEaYG438VE1OIflxA2",
            "name": "GetWeatherArgs",
            "input": raw,
            "truncated": True,
        }
    ]
    gemini = fastmerge.to_provider(message, "gemini")
    assert _cut_call("gemini", gemini) == [
        {
            "id": "call_JMW1whyEaYG438VE1OIflxA2",
            "name": "GetWeatherArgs",
            "args": raw,
            "truncated": True,
        }
    ]
    bedrock = fastmerge.to_provider(message, "bedrock-converse")
    assert _cut_call("bedrock-converse", bedrock) == [
        {
            "toolUseId": "call_JMW1whyEaYG438VE1OIflxA2",
            "name": "GetWeatherArgs",
            "input": raw,
            "truncated": True,
        }
    ]
    ollama = fastmerge.to_provider(message, "ollama")
    assert ollama["message"]["tool_calls"] == [
        {
            "id": "call_JMW1whyEaYG438VE1OIflxA2",
            "function": {"name": "GetWeatherArgs", "arguments": raw},
            "truncated": True,
        }
    ]
    responses = fastmerge.to_provider(message, "openai-responses")
    [item] = _cut_call("openai-responses", responses)
    assert (item["arguments"], item["status"], item["truncated"]) == (raw, "incomplete", True)


def test_complete_call_is_not_marked(tmp_path: Path) -> None:
    # of two parallel calls, only the one the stream ended in is cut
    lines = (CORPUS / CUTS["openai-chat"][0]).read_bytes().splitlines(keepends=True)
    first_done = next(i for i, line in enumerate(lines) if b'"index":1' in line)
    agg = fastmerge.Aggregator("openai-chat")
    agg.feed(b"".join(lines[: first_done + 2]))
    [message] = agg.finish_choices()
    calls = fastmerge.to_provider(message, "anthropic")["content"]
    assert [(c["id"], c["input"], c.get("truncated")) for c in calls] == [
        (
            "call_JMW1whyEaYG438VE1OIflxA2",
            {"city": "Edinburgh", "country": "GB", "units": "c"},
            None,
        ),
        ("call_DNYTawLBoN8fj3KN6qU9N1Ou", '{"ti', True),
    ]
