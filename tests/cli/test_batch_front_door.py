"""The front door of ``fastmerge batch``, on both backends: directories reached through links
(followed, a cycle reported once), ``--output-dir`` with keys no file system takes as they are,
one spelling per output (``-o/--output FILE``, ``--output-dir DIR``), usage errors as usage
errors (64), a file that is not JSON lines named for what it looks like, and the Parquet
``finish_reason_normalized`` column."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import pytest
from _support.batch import batch_module, chat, interleave, lines, wrap, write
from _support.corpus import CORPUS
from conftest import PACKAGE_ROOT

import fastmerge
from fastmerge import cli


@pytest.fixture(autouse=True)
def batch(backend_name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The command runs on this test's backend (it imports ``fastmerge.batch`` when run)."""
    module = batch_module(backend_name)
    monkeypatch.setattr(fastmerge, "batch", module, raising=False)
    return module


WRAPPED = ["--group-by", "stream_id", "--event", "event"]


def log(tmp_path: Path, name: str = "log.jsonl") -> str:
    streams = interleave(("a", chat("a", ["x", "y"])), ("b", chat("b", ["z"])))
    return write(tmp_path / name, lines(wrap(streams)))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``fastmerge ARGV``."""
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The error line of ``fastmerge ARGV``, which must be a usage error (64) that wrote
    nothing on stdout."""
    with pytest.raises(SystemExit) as info:
        cli.main(list(argv))
    out, err = capsys.readouterr()
    assert (info.value.code, out) == (64, "")
    assert len(err.splitlines()) == 1, err  # one line, no usage text
    assert err.startswith(f"fastmerge {argv[0]}: error: ")
    suffix = f" (see 'fastmerge {argv[0]} --help')\n"
    assert err.endswith(suffix)
    return err[: -len(suffix)]


def stream_file(path: Path, text: str) -> str:
    """A one-stream OpenAI Chat file saying ``text``."""
    return write(path, lines(chat(path.stem, [text])))


# -- directories reached through links


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """``logs/`` with a file of its own and ``old -> ../archive``, whose ``back -> ../logs``
    leads to ``logs`` again (a cycle)."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "archive" / "2025").mkdir(parents=True)
    stream_file(tmp_path / "logs" / "now.jsonl", "now")
    stream_file(tmp_path / "archive" / "2025" / "then.jsonl", "then")
    (tmp_path / "logs" / "old").symlink_to(Path("..") / "archive")
    (tmp_path / "archive" / "back").symlink_to(Path("..") / "logs")
    return tmp_path / "logs"


def test_files_under_a_linked_directory_are_read_and_a_cycle_reported_once(
    batch: ModuleType, linked: Path
) -> None:
    run_ = batch.merge_logs(str(linked))
    contents = {Path(r.key).name: r.message.content for r in run_}
    assert contents == {"now.jsonl": "now", "then.jsonl": "then"}
    assert run_.skipped == [f"{linked}/old/back: not followed: a link cycle back to {linked}"]
    skipped: list[str] = []
    assert batch.expand_paths(str(linked), skipped) == [
        f"{linked}/now.jsonl",
        f"{linked}/old/2025/then.jsonl",
    ]
    assert skipped == run_.skipped


def test_the_command_says_which_link_it_did_not_follow(
    capsys: pytest.CaptureFixture[str], linked: Path
) -> None:
    status, out, err = run(capsys, "batch", str(linked))
    assert status == 0
    assert sorted(json.loads(line)["message"]["parts"][0]["text"] for line in out.splitlines()) == [
        "now",
        "then",
    ]
    assert err == (
        f"fastmerge: {linked}/old/back: not followed: a link cycle back to {linked}\n"
        "fastmerge: 2 streams (2 complete, 0 incomplete, 0 failed, 0 error); 0 bad lines\n"
    )


def test_on_dask_too_the_command_says_which_link_it_did_not_follow(
    capsys: pytest.CaptureFixture[str], linked: Path
) -> None:
    pytest.importorskip("distributed")
    status, out, err = run(capsys, "batch", str(linked), "--dask", "local", "--jobs", "1")
    assert status == 0
    assert len(out.splitlines()) == 2
    assert err.startswith(
        f"fastmerge: {linked}/old/back: not followed: a link cycle back to {linked}\n"
    )


def test_a_second_link_to_a_directory_or_file_is_read_once(
    batch: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "archive").mkdir()
    (tmp_path / "logs").mkdir()
    stream_file(tmp_path / "archive" / "a.jsonl", "a")
    (tmp_path / "logs" / "current").symlink_to(Path("..") / "archive")
    (tmp_path / "logs" / "previous").symlink_to(Path("..") / "archive")
    (tmp_path / "logs" / "z.jsonl").symlink_to(Path("..") / "archive" / "a.jsonl")
    skipped: list[str] = []
    logs = tmp_path / "logs"
    assert batch.expand_paths(str(logs), skipped) == [f"{logs}/current/a.jsonl"]
    assert skipped == [
        f"{logs}/previous: not followed: the same directory as {logs}/current, read once",
        f"{logs}/z.jsonl: not read: the same file as {logs}/current/a.jsonl",
    ]


def test_a_link_that_leads_nowhere_is_an_error_not_a_silent_skip(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "logs").mkdir()
    stream_file(tmp_path / "logs" / "a.jsonl", "a")
    (tmp_path / "logs" / "gone.jsonl").symlink_to(tmp_path / "missing.jsonl")
    status, _, err = run(capsys, "batch", str(tmp_path / "logs"))
    assert status == 1
    assert err == f"fastmerge: error: {tmp_path}/logs/gone.jsonl: No such file or directory\n"


# -- --output-dir: a file per stream, whatever the key

HOSTILE = [
    "k" * 300,
    "k" * 300 + "2",  # the same first 100 characters
    "a/b",
    "../../escape",
    "..",
    ".",
    "",
    "nul\x00byte",
    "new\nline",
    "CamelKey",
    "camelkey",  # the same name on a case-insensitive file system
    "ünïcödé-キー",
    "nul",  # a Windows device name
    "index",  # not the index file
    "plain-key.1",
]


def hostile_log(tmp_path: Path) -> str:
    records = [{"k": key, "e": e} for key in HOSTILE for e in chat("s", [f"<{key}>"])]
    return write(tmp_path / "hostile.jsonl", lines(records))


def test_output_dir_takes_any_key(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    status, stdout, err = run(
        capsys,
        "batch",
        hostile_log(tmp_path),
        "--group-by",
        "k",
        "--event",
        "e",
        "--output-dir",
        str(out),
    )
    assert (status, stdout) == (0, "")
    assert err.endswith(
        f"{len(HOSTILE)} streams ({len(HOSTILE)} complete, 0 incomplete, 0 failed, 0 error); "
        "0 bad lines\n"
    )
    names = sorted(os.listdir(out))
    assert len(names) == len(HOSTILE) + 1  # nothing written outside, nothing overwritten
    assert not list(tmp_path.glob("escape*"))
    assert all(len(name.encode()) <= 110 for name in names)
    assert all(
        name.isascii() and name.replace("-", "").replace("_", "").replace(".", "").isalnum()
        for name in names
    )
    assert not any(name.startswith(".") for name in names)
    assert len({name.lower() for name in names}) == len(names)
    index = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert sorted(entry["key"] for entry in index) == sorted(HOSTILE)
    for entry in index:
        record = json.loads((out / entry["file"]).read_text())
        assert record["key"] == entry["key"]
        assert record["message"]["parts"][0]["text"] == f"<{entry['key']}>"
        assert entry["status"] == record["status"] == "complete"
    files = {entry["key"]: entry["file"] for entry in index}
    assert files["plain-key.1"] == "plain-key.1.json"  # a safe key is its own name
    assert files["index"] == "index.json"
    assert files["nul"] == "_nul.json"
    assert {files["CamelKey"], files["camelkey"]} == {"CamelKey.json", "camelkey-2.json"}
    assert files["a/b"] == "a_b.json"
    assert files["k" * 300] == "k" * 100 + ".json"
    assert files["k" * 300 + "2"] == "k" * 100 + "-2.json"


def test_the_index_is_written_as_each_file_is(batch: ModuleType, tmp_path: Path) -> None:
    """Each file's index line is written as the file is, not when the batch ends (on the
    Rust backend by the writer thread, beside the batch): before the second result is given,
    a reader of the directory finds the first one's line."""
    out = tmp_path / "out"
    results = list(batch.merge_logs(log(tmp_path), group_by="stream_id", event="event"))
    seen: list[list[str]] = []

    def index_of(files: int) -> list[str]:
        """The index's lines once it has ``files`` of them (10 s at most)."""
        deadline = time.monotonic() + 10
        while True:
            index = out / "index.jsonl"
            lines_ = index.read_text().splitlines() if index.exists() else []
            if len(lines_) >= files or time.monotonic() > deadline:
                return lines_
            time.sleep(0.001)

    def slowly() -> Iterator[Any]:
        for done, result in enumerate(results):
            seen.append(index_of(done))
            yield result

    assert batch.to_directory(slowly(), out) == 2
    assert [len(lines_) for lines_ in seen] == [0, 1]
    assert json.loads(seen[1][0]) == {"key": "b", "file": "b.json", "status": "complete"}


def test_a_file_that_cannot_be_written_is_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    (out / "a.json").mkdir(parents=True)  # the second stream's file ("b" comes first)
    status, stdout, stderr = run(capsys, "batch", log(tmp_path), *WRAPPED, "--output-dir", str(out))
    assert (status, stdout) == (1, "")
    assert stderr.splitlines()[0] == (
        f"fastmerge: error: cannot write the output {out / 'a.json'}: Is a directory"
    )
    assert (out / "b.json").is_file()
    assert [
        json.loads(line)["file"] for line in (out / "index.jsonl").read_text().splitlines()
    ] == ["b.json"]


def test_file_names_of_a_key_met_again(batch: ModuleType) -> None:
    taken: set[str] = set()
    assert [batch.file_name(key, taken) for key in ["a", "a", "A", "a_", "a?"]] == [
        "a.json",
        "a-2.json",
        "A-3.json",
        "a_.json",
        "a_-2.json",
    ]


# -- one spelling per output


def test_output_is_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for flag in ("--output", "-o"):
        out = tmp_path / f"merged{flag}.jsonl"
        status, stdout, _ = run(capsys, "batch", log(tmp_path), *WRAPPED, flag, str(out))
        assert (status, stdout) == (0, "")
        assert [json.loads(line)["key"] for line in out.read_text().splitlines()] == ["b", "a"]


@pytest.mark.parametrize("planted", ["a stream's file", "the index"])
@pytest.mark.parametrize("target", ["a file outside", "nothing (dangling)"])
def test_output_dir_writes_through_no_link(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, planted: str, target: str
) -> None:
    """E108: a symbolic link already in the output directory, where a stream's file or the
    index goes, is never written through: the run names the file and exits 1, and the file
    the link points to is left as it was (or never made)."""
    source = log(tmp_path)
    first = tmp_path / "first"
    assert run(capsys, "batch", source, *WRAPPED, "--output-dir", str(first))[0] == 0
    name = "index.jsonl" if planted == "the index" else sorted(os.listdir(first))[0]
    assert name.endswith((".json", ".jsonl"))
    victim = tmp_path / "victim.txt"
    if target == "a file outside":
        victim.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim)
    status, stdout, err = run(capsys, "batch", source, *WRAPPED, "--output-dir", str(out))
    assert (status, stdout) == (1, "")
    assert err == (
        f"fastmerge: error: cannot write the output {out / name}: "
        "a symbolic link: no file is written through one\n"
    )
    assert (out / name).is_symlink()
    if target == "a file outside":
        assert victim.read_text() == "keep me\n"
    else:
        assert not victim.exists()


def test_output_naming_a_directory_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "out").mkdir()
    for target in (str(tmp_path / "out"), str(tmp_path / "new") + "/"):
        line = usage_error(capsys, "batch", log(tmp_path), *WRAPPED, "--output", target)
        assert line == (
            f"fastmerge batch: error: -o/--output {target} is a directory: -o/--output writes "
            f"one file; for a file per stream, pass --output-dir {target}"
        )
    assert os.listdir(tmp_path / "out") == []
    assert not (tmp_path / "new").exists()


def test_output_and_output_dir_exclude_each_other(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    line = usage_error(capsys, "batch", log(tmp_path), "-o", "x", "--output-dir", "d")
    assert (
        line == "fastmerge batch: error: -o/--output FILE and --output-dir DIR exclude each other"
    )


# -- usage errors: exit 64, in flag terms, before any input is read


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--event", "event"],
            "wrapper records need a stream key: pass --group-by (e.g. --group-by stream_id)",
        ),
        (["--group-by", "a..b"], "--group-by 'a..b' has an empty segment"),
        (["--group-by", ""], "--group-by is empty: pass a dotted path or a JSON pointer"),
        (["--group-by", "id", "--event", "x."], "--event 'x.' has an empty segment"),
        (
            ["--group-by", "id", "--order-by", "/~2"],
            "--order-by '/~2' is not a valid JSON pointer: '~' must be followed by 0 or 1",
        ),
        (
            ["--order-by", "seq"],
            "--order-by sorts the records of a stream: pass --group-by (e.g. --group-by "
            "stream_id); a file read as one stream is read in its order",
        ),
        (["--group-by", "id", "--jobs", "4097"], "--jobs must be at most 4096, not 4097"),
    ],
)
def test_option_errors_are_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    missing = str(tmp_path / "not-read.jsonl")  # options are checked before inputs
    assert usage_error(capsys, "batch", missing, *argv) == f"fastmerge batch: error: {message}"


def test_a_missing_event_path_says_so_on_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run(capsys, "batch", log(tmp_path), "--group-by", "stream_id")
    assert status == 1
    assert [json.loads(line)["status"] for line in out.splitlines()] == ["error", "error"]
    summary, why = err.splitlines()
    assert summary == (
        "fastmerge: 2 streams (0 complete, 0 incomplete, 0 failed, 2 error); 0 bad lines"
    )
    assert why == (
        "fastmerge: error: 2 streams could not be merged; the first, 'a': no event could be "
        "read: event 1: cannot tell the provider from this event (keys: 'stream_id', 'seq', "
        "'event'); its 'event' is an event of openai-chat: read a log of such records with "
        "fastmerge batch --group-by KEY --event event"
    )


# -- a file that is not JSON lines of records


def test_an_sse_capture_given_as_records(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sse = "".join(f"data: {json.dumps(e)}\n\n" for e in chat("s", ["hi"])) + "data: [DONE]\n\n"
    path = write(tmp_path / "capture.txt", ("event: x\n" + sse).encode())
    status, out, err = run(capsys, "batch", path, "--group-by", "id")
    assert (status, out) == (1, "")
    assert err == (
        f"fastmerge: error: {path}:1: not valid JSON: it looks like an SSE capture (one stream), "
        f"not JSON lines of records: read it with fastmerge merge --provider auto {path}, or "
        f"fastmerge batch {path} without --group-by (each file one stream)\n"
    )
    # and the command it names reads it
    status, out, _ = run(capsys, "batch", path)
    assert (status, json.loads(out)["message"]["parts"][0]["text"]) == (0, "hi")


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("compress", [None, "gzip", "xz"])
def test_a_json_array_given_as_records(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, indent: int | None, compress: str | None
) -> None:
    text = json.dumps(chat("s", ["hi"]), indent=indent).encode()
    path = write(tmp_path / "array.json", text, compress)
    status, out, err = run(capsys, "batch", path, "--group-by", "id")
    assert (status, out) == (1, "")
    reason = "not valid JSON" if indent else "a record must be a JSON object, not array"
    assert err == (
        f"fastmerge: error: {path}:1: {reason}: it looks like a JSON array (one stream), not "
        f"JSON lines of records: read it with fastmerge batch {path} without --group-by (each "
        f"file one stream), or fastmerge merge --provider auto {path}; an array of wrapper "
        "records needs to be JSON lines first (jq -c '.[]')\n"
    )
    status, out, _ = run(capsys, "batch", path)
    assert (status, json.loads(out)["message"]["parts"][0]["text"]) == (0, "hi")


def test_one_indented_document_and_a_plain_bad_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "one.json", json.dumps(chat("s", ["hi"])[0], indent=2).encode())
    _, _, err = run(capsys, "batch", path, "--group-by", "id")
    assert err.startswith(
        f"fastmerge: error: {path}:1: not valid JSON: it looks like one JSON document over "
        "several lines (one stream)"
    )
    # a line that is simply broken gets no guess
    path = write(tmp_path / "broken.jsonl", b'{"id": \n')
    _, _, err = run(capsys, "batch", path, "--group-by", "id")
    assert err == f"fastmerge: error: {path}:1: not valid JSON\n"


# -- Parquet: the normalized finish reason beside the provider's


@pytest.mark.parametrize(
    ("stream", "raw", "normalized"),
    [
        ("anthropic_messages/sonnet45-text.jsonl", "end_turn", "stop"),
        ("anthropic_messages/sonnet4-text-then-tool-use.jsonl", "tool_use", "tool_calls"),
        (
            "anthropic_messages/sonnet37-max-tokens-truncated-tool-json.jsonl",
            "max_tokens",
            "length",
        ),
        ("gemini/gemini20-flash-plain-text.jsonl", "STOP", "stop"),
    ],
)
def test_parquet_has_the_normalized_finish_reason(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    stream: str,
    raw: str,
    normalized: str,
) -> None:
    if not os.environ.get("CI"):
        pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    out = tmp_path / "out.parquet"
    status, _, _ = run(capsys, "batch", str(CORPUS / stream), "--format", "parquet", "-o", str(out))
    assert status in (0, 2)  # the cut stream is incomplete
    table = pq.read_table(out)
    columns = table.column_names
    assert columns.index("finish_reason_normalized") == columns.index("finish_reason") + 1
    row = table.to_pylist()[0]
    assert (row["finish_reason"], row["finish_reason_normalized"]) == (raw, normalized)
    assert table.schema.field("finish_reason_normalized").type == "string"


# -- fastmerge bench: any log the engines read, without a checkout


@pytest.fixture
def rust_only(backend_name: str) -> None:
    if backend_name != "rust":
        pytest.skip("fastmerge bench compares the Rust engine with the twin")


def bench(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    """Exit status, stdout lines and stderr of ``fastmerge bench ARGV`` in one round."""
    status = cli.main(["bench", *argv, "--repeat", "1"])
    out, err = capsys.readouterr()
    return status, out.splitlines(), _without_debug_warning(err)


def _without_debug_warning(err: str) -> str:
    """stderr without the warning a debug build prints first (CI tests a debug build; the
    warning itself is checked by the tests of the build profile)."""
    from fastmerge.cli import bench as cli_bench

    return err.replace(f"fastmerge: {cli_bench.DEBUG_WARNING}\n", "")


NAIVE_CANNOT = (
    "| naive reduce (json.loads + join) | cannot read this log | – | – | – | – |",
    "it joins the text and tool-call arguments of OpenAI Chat, Anthropic and Responses events "
    "given as strings, as a hand-written script does",
)


@pytest.mark.parametrize(
    ("stream", "provider"),
    [
        ("mistral/magistral-medium-thinking-chunks.jsonl", "openai-chat"),  # typed-list content
        ("gemini/gemini20-flash-plain-text.jsonl", "gemini"),
        ("bedrock_converse/nova-micro-text.jsonl", "bedrock-converse"),
    ],
)
def test_bench_a_log_the_naive_reduce_cannot_read_is_a_row_not_a_failure(
    capsys: pytest.CaptureFixture[str], rust_only: None, stream: str, provider: str
) -> None:
    status, out, err = bench(capsys, str(CORPUS / stream))
    assert (status, err) == (0, "")
    assert out[5] == NAIVE_CANNOT[0]
    assert out[6] == (
        f"agree: rust and twin give the same 1 records; the naive reduce cannot read this log "
        f"({provider}): {NAIVE_CANNOT[1]}"
    )


def test_bench_a_log_the_naive_reduce_reads_in_part(
    capsys: pytest.CaptureFixture[str], rust_only: None, tmp_path: Path
) -> None:
    gemini = [
        json.loads(line)
        for line in (CORPUS / "gemini" / "gemini20-flash-plain-text.jsonl").read_text().splitlines()
    ]
    records = wrap(interleave(("a", chat("a", ["x"])), ("g", gemini), ("b", chat("b", ["y"]))))
    path = write(tmp_path / "mixed.jsonl", lines(records))
    status, out, err = bench(capsys, path, *WRAPPED)
    assert (status, err) == (0, "")
    assert out[5].startswith("| naive reduce (json.loads + join) | ")
    assert out[5] != NAIVE_CANNOT[0]
    assert out[6] == (
        "agree: rust and twin give the same 3 records; the naive reduce gives the same text and "
        "tool-call arguments for 2 streams and cannot read the others (gemini)"
    )


def test_bench_names_number_keys_as_the_engines_do(
    capsys: pytest.CaptureFixture[str], rust_only: None, tmp_path: Path
) -> None:
    # an integer key past 64 bits is a float to the engines ("1.8446744073709552e+19"); a
    # boolean key is their bad line: the naive reduce names and skips them alike
    keys: list[Any] = [2**64, 7, 1.5, "s", True]
    streams = interleave(*((key, chat(str(key), ["w"])) for key in keys))
    path = write(tmp_path / "numbers.jsonl", lines(wrap(streams)))
    status, out, err = bench(capsys, path, *WRAPPED)
    assert (status, err) == (0, "")
    assert out[6] == (
        "agree: rust and twin give the same 4 records; the naive reduce gives the same text "
        "and tool-call arguments for 4 of 4 streams"
    )


def test_bench_reads_the_bundled_log_by_its_records_however_it_is_named(
    capsys: pytest.CaptureFixture[str], rust_only: None, tmp_path: Path
) -> None:
    from fastmerge.cli import bench as cli_bench

    copy = tmp_path / "my-log.zst"
    copy.write_bytes(cli_bench.EXAMPLE.read_bytes())
    for given in (str(cli_bench.EXAMPLE), str(copy)):
        status, out, _ = bench(capsys, given)
        assert status == 0
        assert out[0] == (
            f"fastmerge bench: {given} (0.1 MB, 6020 events, 200 streams; 1 round each)"
        )


def test_bench_without_a_checkout_runs_the_packaged_log(
    capsys: pytest.CaptureFixture[str],
    rust_only: None,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from fastmerge.cli import bench as cli_bench

    # the copy in the package is the example, byte for byte
    assert cli_bench.PACKAGED.read_bytes() == cli_bench.EXAMPLE.read_bytes()
    monkeypatch.setattr(cli_bench, "EXAMPLE", tmp_path / "no-checkout" / "gateway.jsonl.zst")
    status, out, _ = bench(capsys)
    assert status == 0
    assert out[0] == (
        "fastmerge bench: the bundled examples/gateway.jsonl.zst (0.1 MB, 6020 events, 200 "
        "streams; 1 round each)"
    )
    monkeypatch.setattr(cli_bench, "PACKAGED", tmp_path / "gone.zst")
    status, out, err = bench(capsys)
    assert (status, out) == (1, [])
    assert err == (
        "fastmerge: error: no LOG given, and the bundled example log "
        "(examples/gateway.jsonl.zst) is not beside this installation: pass LOG\n"
    )


def test_bench_reads_zstd_without_the_zstandard_package(rust_only: None, tmp_path: Path) -> None:
    """Python without ``zstandard`` (as after ``pip install .``): the twin cannot read zstd
    itself, so the bench hands it the Rust engine's decompression of the log, and says so."""
    zstd = tmp_path / "log.jsonl.zst"
    import zstandard

    zstd.write_bytes(zstandard.ZstdCompressor().compress(Path(log(tmp_path)).read_bytes()))
    script = (
        "import sys; sys.modules['zstandard'] = None\n"
        "from fastmerge import cli\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )
    for argv in (["bench", str(zstd), *WRAPPED, "--repeat", "1"], ["bench", "--repeat", "1"]):
        proc = subprocess.run(
            [sys.executable, "-c", script, *argv],
            capture_output=True,
            env={**os.environ, "FASTMERGE_BACKEND": "rust", "PYTHONPATH": PACKAGE_ROOT},
            timeout=300,
        )
        stderr = _without_debug_warning(proc.stderr.decode())
        assert (proc.returncode, stderr) == (0, ""), stderr
        out = proc.stdout.decode().splitlines()
        streams = 2 if argv[1] != "--repeat" else 200
        assert out[6].startswith(f"agree: rust and twin give the same {streams} records;")
        assert out[6].endswith(f"arguments for {streams} of {streams} streams")
        assert out[7] == "streams where the naive reduce differs: 0"
        assert out[8] == (
            "note: the twin and the naive reduce read the log as the Rust engine decompressed "
            "it before the clock started (in Python, zstd needs the 'zstandard' package: pip "
            "install zstandard)"
        )
    # the twin alone says what it needs
    proc = subprocess.run(
        [sys.executable, "-c", script, "batch", str(zstd), *WRAPPED],
        capture_output=True,
        env={**os.environ, "FASTMERGE_BACKEND": "python", "PYTHONPATH": PACKAGE_ROOT},
        timeout=300,
    )
    assert proc.returncode == 1
    assert proc.stderr.endswith(
        b"zstd input needs the 'zstandard' package (pip install zstandard)\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--group-by", "a..b"], "--group-by 'a..b' has an empty segment"),
        (["--jobs", "5000"], "--jobs must be at most 4096, not 5000"),
    ],
)
def test_bench_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    assert usage_error(capsys, "bench", log(tmp_path), *argv) == (
        f"fastmerge bench: error: {message}"
    )


def test_bench_reads_past_a_line_nested_deeper_than_json_reads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A line nested 100,000 deep: json.loads raises RecursionError, which the naive reduce
    takes as a line it cannot read (it was a traceback), as the engines do."""
    deep = b'{"stream_id": "z", "event": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    path = tmp_path / "deep.jsonl"
    path.write_bytes(Path(log(tmp_path)).read_bytes() + deep)
    status = cli.main(
        ["bench", str(path), "--group-by", "stream_id", "--event", "event", "--repeat", "1"]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "agree: rust and twin give the same 2 records;" in out


def test_read_input_is_the_engines_decompression(rust_only: None, tmp_path: Path) -> None:
    from _support.batch import COMPRESSORS

    from fastmerge import _backend
    from fastmerge.errors import BatchError

    read_input = _backend.load("rust").read_input
    data = Path(log(tmp_path)).read_bytes()
    for fmt in (None, *COMPRESSORS):
        path = write(tmp_path / f"log.{fmt}", data, fmt)
        assert read_input(path) == data
    with pytest.raises(BatchError, match=r"missing\.zst: No such file or directory"):
        read_input(str(tmp_path / "missing.zst"))
    cut = write(tmp_path / "cut.zst", COMPRESSORS["zstd"](data)[:-8])
    with pytest.raises(BatchError, match=r"cut\.zst: zstd stream is truncated after \d+"):
        read_input(cut)


@pytest.mark.parametrize("profile", ["release", "debug"])
def test_bench_warns_that_a_debug_build_times_slow(
    capsys: pytest.CaptureFixture[str],
    rust_only: None,
    monkeypatch: pytest.MonkeyPatch,
    profile: str,
) -> None:
    from fastmerge import _backend
    from fastmerge.cli import bench as cli_bench

    monkeypatch.setattr(_backend.load("rust"), "BUILD_PROFILE", profile)
    status = cli.main(["bench", "--repeat", "1"])
    out_text, err = capsys.readouterr()
    assert status == 0 and out_text.startswith("fastmerge bench: the bundled")
    warned = f"fastmerge: {cli_bench.DEBUG_WARNING}\n"
    assert cli_bench.DEBUG_WARNING.startswith("warning: the Rust extension is a debug build")
    assert (warned in err) == (profile == "debug")


def test_bench_warns_on_the_installed_build_as_backend_info_says(
    capsys: pytest.CaptureFixture[str], rust_only: None
) -> None:
    """The build under test, not a patched one: the warning follows backend_info()["build"]."""
    import fastmerge
    from fastmerge.cli import bench as cli_bench

    build = fastmerge.backend_info()["build"]
    assert build in ("release", "debug")
    status = cli.main(["bench", "--repeat", "1"])
    out_text, err = capsys.readouterr()
    assert status == 0 and out_text.startswith("fastmerge bench: the bundled")
    assert (f"fastmerge: {cli_bench.DEBUG_WARNING}\n" in err) == (build == "debug")


def test_bench_of_a_log_with_nothing_to_merge_fails(
    capsys: pytest.CaptureFixture[str], rust_only: None, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    status, out, err = bench(capsys, str(empty))
    assert (status, out) == (1, [])
    assert err == (
        f"fastmerge: error: {empty}: nothing to time: no stream could be merged "
        "(no event could be read: the input is empty)\n"
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_ctrl_c_ends_a_run_that_waits_on_a_fifo(backend_name: str, tmp_path: Path) -> None:
    """A named pipe no writer has opened: Ctrl-C ends the run at once with 130, on both
    backends (the engine's reader, blocked in the pipe's open, is not waited for)."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    env = {**os.environ, "FASTMERGE_BACKEND": backend_name, "PYTHONPATH": PACKAGE_ROOT}
    with subprocess.Popen(
        [sys.executable, "-m", "fastmerge", "batch", str(pipe), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as proc:
        try:
            _wait_in_a_fifo_open(proc.pid)
            assert proc.poll() is None
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 130, err


STREAMS = 20_000


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("where", ["-o", "--output-dir", "stdout"])
def test_ctrl_c_leaves_no_half_file_and_says_what_was_written(
    backend_name: str, tmp_path: Path, where: str
) -> None:
    """Ctrl-C in the middle of a run: ``-o FILE`` is not left half written (it is written
    under a temporary name, renamed when the run ends well; nothing of it is left), and
    stderr says what was written and where; ``--output-dir`` keeps the files written, and
    says how many."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    out = tmp_path / ("out.jsonl" if where == "-o" else "out")
    target = {"-o": ["-o", str(out)], "--output-dir": ["--output-dir", str(out)]}.get(where, [])
    env = {**os.environ, "FASTMERGE_BACKEND": backend_name, "PYTHONPATH": PACKAGE_ROOT}
    command = [sys.executable, "-m", "fastmerge", "batch", str(pipe), *WRAPPED, *target]
    # streams that end one after the other, then a pipe that stays open: an ended stream is
    # written once 65,536 lines came after it (a later record of its key would join it), so
    # some are written before Ctrl-C
    ended = lines(wrap((f"s{i}", e) for i in range(STREAMS) for e in chat(f"s{i}", ["x", "y"])))
    # standard output to a file: a pipe nobody reads yet would stop the run when full
    with (
        (tmp_path / "stdout").open("wb") as sink,
        subprocess.Popen(
            [*command, "--quiet"], stdout=sink, stderr=subprocess.PIPE, env=env
        ) as proc,
    ):
        try:
            with open(pipe, "wb") as writer:
                writer.write(ended)
                writer.flush()
                time.sleep(2.0)
                proc.send_signal(signal.SIGINT)
                _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    stdout = (tmp_path / "stdout").read_bytes()
    assert proc.returncode == 130, err
    *_, last = err.decode().splitlines()
    written = re.fullmatch(r"fastmerge: interrupted(?::| after) (\d+) records?\b.*", last)
    assert written is not None, last
    count = int(written[1])
    assert 0 < count < STREAMS, last
    if where == "-o":
        assert last == f"fastmerge: interrupted after {count} records: nothing written to {out}"
        assert sorted(os.listdir(tmp_path)) == ["pipe", "stdout"]  # no FILE, no temporary one
    elif where == "--output-dir":
        index = out / "index.jsonl"
        assert last == (
            f"fastmerge: interrupted: {count} records written to {out} (listed in {index})"
        )
        assert len(index.read_text().splitlines()) == count
    else:
        assert last == f"fastmerge: interrupted: {count} records written to standard output"
        assert len(stdout.splitlines()) == count


def test_o_file_is_renamed_when_the_run_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run that ends well leaves ``FILE`` with its records and no temporary file; one that
    fails on a record (``--errors raise``) leaves no ``FILE``; ``/dev/null`` is written as it
    is."""
    out = tmp_path / "out.jsonl"
    assert run(capsys, "batch", log(tmp_path), *WRAPPED, "-o", str(out))[0] == 0
    assert len(out.read_text().splitlines()) == 2
    assert sorted(os.listdir(tmp_path)) == ["log.jsonl", "out.jsonl"]
    assert run(capsys, "batch", log(tmp_path), *WRAPPED, "-o", os.devnull)[0] == 0
    bad = write(
        tmp_path / "bad.jsonl", lines(wrap(("a", e) for e in chat("a", ["x"]))) + b"not json\n"
    )
    failed = tmp_path / "failed.jsonl"
    status, _, err = run(capsys, "batch", bad, *WRAPPED, "-o", str(failed), "--errors", "raise")
    assert status == 1, err
    assert not failed.exists()
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".partial")]


def _wait_in_a_fifo_open(pid: int) -> None:
    """Until a thread of process ``pid`` waits in a FIFO's open (Linux tells by its wait
    channel; elsewhere two seconds), so that Ctrl-C comes after start-up, under any load."""
    tasks = Path(f"/proc/{pid}/task")
    # this process's parent waits for it: a kernel that shows wait channels names that one
    shown = Path(f"/proc/{os.getppid()}/wchan")
    if not tasks.is_dir() or not shown.exists() or shown.read_text() in ("", "0"):
        time.sleep(2.0)
        return
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            if any((t / "wchan").read_text() == "wait_for_partner" for t in tasks.iterdir()):
                return
        time.sleep(0.05)
    raise AssertionError("the run never waited in the FIFO's open")
