"""The one-line wordings of ``fastmerge batch`` and ``fastmerge.batch``, on both backends: an
empty input, binary input (worded as ``fastmerge merge`` words it), the option an API user
passes (``group_by=``, not the command's flag), and raw provider events given with
``--group-by``."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from _support.batch import batch_module, chat, lines, wrap, write
from _support.corpus import CORPUS

import fastmerge
from fastmerge import cli
from fastmerge.errors import BatchError

WRAPPED = ["--group-by", "stream_id", "--event", "event"]
BINARY = "binary input, not provider events"


@pytest.fixture(autouse=True)
def batch(backend_name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = batch_module(backend_name)
    monkeypatch.setattr(fastmerge, "batch", module, raising=False)
    return module


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_empty_files_are_one_error_line_and_nothing_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    empty = write(tmp_path / "a.jsonl", b"")
    blank = write(tmp_path / "b.jsonl", b" \n\n")
    out = tmp_path / "out.jsonl"
    status, stdout, err = run(capsys, "batch", empty, blank, "-o", str(out))
    assert (status, stdout) == (1, "")
    assert err == f"fastmerge: error: {empty}, {blank}: empty input, no records\n"
    assert not out.exists()
    # an empty file beside a log is no error: the log's streams are the run
    log = write(tmp_path / "log.jsonl", lines(wrap([("a", e) for e in chat("a", ["x"])])))
    status, stdout, err = run(capsys, "batch", empty, log, *WRAPPED)
    assert status == 0 and "empty input" not in err


@pytest.mark.parametrize(
    "data", [bytes(range(256)) * 4, b"\x00\x01garbage\xff\xfe\n"], ids=["bytes", "garbage"]
)
def test_binary_input_is_worded_as_merge_words_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, data: bytes
) -> None:
    path = write(tmp_path / "core.bin", data)
    status, _, err = run(capsys, "batch", path, *WRAPPED)
    assert status == 1
    assert err == f"fastmerge: error: {path}:1: not valid JSON: {BINARY}\n"
    status, _, err = run(capsys, "merge", "--provider", "auto", path)
    assert status == 1
    assert err == f"fastmerge: error: {path}: no event could be read: {BINARY}\n"


def test_a_text_line_that_is_not_json_is_not_called_binary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "notes.txt", b"hello there\n")
    status, _, err = run(capsys, "batch", path, *WRAPPED)
    assert (status, err) == (1, f"fastmerge: error: {path}:1: not valid JSON\n")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"event": "event"},
            "wrapper records need a stream key: pass group_by (e.g. group_by='stream_id')",
        ),
        (
            {"order_by": "seq"},
            "order_by sorts the records of a stream: pass group_by (e.g. "
            "group_by='stream_id'); a file read as one stream is read in its order",
        ),
    ],
)
def test_batch_error_names_the_keyword_argument_the_command_the_flag(
    capsys: pytest.CaptureFixture[str],
    batch: ModuleType,
    tmp_path: Path,
    options: dict[str, str],
    message: str,
) -> None:
    path = write(tmp_path / "log.jsonl", lines(chat("a", ["x"])))
    with pytest.raises(BatchError) as info:
        batch.merge_logs(path, **options)
    assert str(info.value) == message
    assert "--" not in str(info.value)
    flag = "--event" if "event" in options else "--order-by"
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["batch", path, flag, next(iter(options.values()))])
    assert exit_info.value.code == 64
    said = capsys.readouterr().err
    assert "pass --group-by (e.g. --group-by stream_id)" in said
    assert "group_by" not in said


@pytest.mark.parametrize(
    ("stream", "provider"),
    [
        ("anthropic_messages/sonnet45-text.jsonl", "anthropic"),
        ("gemini/gemini20-flash-plain-text.jsonl", "gemini"),
    ],
)
def test_raw_events_given_with_group_by_are_named_as_events(
    capsys: pytest.CaptureFixture[str], stream: str, provider: str
) -> None:
    path = str(CORPUS / stream)
    status, out, err = run(capsys, "batch", path, "--group-by", "id")
    assert (status, out) == (1, "")
    assert err == (
        f"fastmerge: error: {path}:1: no stream key at id: these lines look like raw "
        f"{provider} events, not records: each file of them is one stream (fastmerge batch "
        "without --group-by), or merge one with fastmerge merge; --group-by reads records "
        "that carry a stream key\n"
    )


def test_a_record_without_its_key_has_no_events_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    records = wrap([("a", e) for e in chat("a", ["x"])])
    del records[1]["stream_id"]
    path = write(tmp_path / "log.jsonl", lines(records))
    status, _, err = run(capsys, "batch", path, *WRAPPED)
    assert (status, err) == (1, f"fastmerge: error: {path}:2: no stream key at stream_id\n")
