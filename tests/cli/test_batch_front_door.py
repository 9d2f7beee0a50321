"""The front door of ``fastmerge batch``, on both backends: directories reached through links
(followed, a cycle reported once), ``--output-dir`` with keys no file system takes as they are,
one spelling per output (``-o/--output FILE``, ``--output-dir DIR``), usage errors as usage
errors (64), a file that is not JSON lines named for what it looks like, and the Parquet
``finish_reason_normalized`` column. ``fastmerge bench`` on any log and Ctrl-C have their own
files (``test_bench_any_log``, ``test_batch_interrupt``)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import pytest
from _support.batch import chat, lines, write
from _support.cli import (
    WRAPPED,
    batch_for_the_command,  # noqa: F401 (the autouse ``batch`` fixture)
    log,
    run,
    usage_error,
)
from _support.corpus import CORPUS


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
