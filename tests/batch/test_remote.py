"""Logs where they live: ``fastmerge.batch.merge_logs``, ``fastmerge batch`` and
``fastmerge.dask.merge_logs`` on fsspec URLs (an S3 of moto's server on 127.0.0.1, fsspec's
memory://) give what they give on local copies of the same objects: the same items in the same
order, the same bad lines and errors with the URL as the file's name; plain and compressed
objects alike (told by their first bytes); globs and prefixes expanded as local globs and
directories are; a missing object, bucket or credential one ``BatchError`` line."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import fsspec
import pytest
from _support.batch import (
    COMPRESSORS,
    chat,
    corpus_events,
    corpus_files,
    dumped,
    generated_log,
    interleave,
    lines,
    wrap,
    write,
)
from _support.s3 import BUCKET, moto_s3, put
from fsspec.implementations.memory import MemoryFileSystem

from fastmerge import _remote, cli, errors

WRAPPED = dict(group_by="stream_id", event="event")


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """moto's S3 (see ``_support.s3``); its endpoint."""
    with moto_s3() as endpoint:
        yield endpoint


def corpus_log() -> bytes:
    """Every corpus stream interleaved in one log of wrapper records, with bad lines."""
    streams = corpus_events()
    records: list[Any] = []
    longest = max(len(events) for events in streams.values())
    for i in range(longest):
        for key, events in streams.items():
            if i < len(events):
                records.append({"stream_id": key, "seq": i, "event": events[i]})
    records[5:5] = [b"not json", {"seq": 1}]
    return lines(records)


def named(values: list[Any], local: list[str], urls: list[str]) -> list[Any]:
    """``values`` (bytes or text) with each local path as the URL of its copy."""
    out = []
    for value in values:
        for path, url in zip(local, urls):
            if isinstance(value, bytes):
                value = value.replace(json.dumps(path).encode(), json.dumps(url).encode())
            else:
                value = value.replace(path, url)
        out.append(value)
    return out


def both(batch: ModuleType, local: list[str], urls: list[str], **options: Any) -> None:
    """``merge_logs`` on the URLs gives what it gives on the local copies: records, bad lines
    and counts, with the URLs as names."""
    one = batch.merge_logs(local, errors="collect", **options)
    expected = dumped(one)
    remote = batch.merge_logs(urls, errors="collect", **options)
    assert dumped(remote) == named(expected, local, urls)
    assert remote.bad_lines == named(one.bad_lines, local, urls)
    assert remote.counts == one.counts


@pytest.mark.parametrize("compress", [None, *COMPRESSORS])
def test_an_s3_log_gives_what_its_local_copy_gives(
    s3: str, batch: ModuleType, tmp_path: Path, compress: str | None
) -> None:
    data = corpus_log()
    local = write(tmp_path / "gateway.log", data, compress)
    url = put(f"corpus/{compress}/gateway.log", Path(local).read_bytes())
    both(batch, [local], [url], **WRAPPED, jobs=2)
    run = batch.merge_logs(url, **WRAPPED, errors="collect")
    results = list(run)
    assert len(results) == len(corpus_events())
    assert run.bad_lines == [
        f"{url}:6: not valid JSON",
        f"{url}:7: no stream key at stream_id",
    ]
    # the progress counts the object's stored bytes
    assert run.progress()[:2] == (len(Path(local).read_bytes()),) * 2


def test_corpus_files_under_a_prefix_and_a_glob_are_read_as_a_local_directory_and_glob(
    s3: str, batch: ModuleType, tmp_path: Path
) -> None:
    files = corpus_files()
    formats = [None, *COMPRESSORS]
    for i, path in enumerate(files):
        rel = f"{path.parent.name}/{path.name}"
        (tmp_path / "corpus" / path.parent.name).mkdir(parents=True, exist_ok=True)
        data = write(tmp_path / "corpus" / rel, path.read_bytes(), formats[i % 5])
        put(f"files/{rel}", Path(data).read_bytes())
    (tmp_path / "corpus" / ".hidden").write_bytes(b"never read\n")
    put("files/.hidden", b"never read\n")
    local = batch.expand_paths(str(tmp_path / "corpus"))
    urls = batch.expand_paths(f"s3://{BUCKET}/files/")
    assert len(urls) == len(local) == len(files)
    assert urls == [f"s3://{BUCKET}/files/{p.parent.name}/{p.name}" for p in files]
    both(batch, local, urls)
    # one pattern per folder: the same files, in the same order
    glob = batch.expand_paths(f"s3://{BUCKET}/files/*/*.jsonl")
    assert glob == urls
    with pytest.raises(errors.BatchError) as none:
        batch.merge_logs(f"s3://{BUCKET}/files/*/*.parquet")
    assert str(none.value) == f"s3://{BUCKET}/files/*/*.parquet: no file matches the pattern"


def test_folder_markers_are_read_as_the_same_prefix_without_them(
    s3: str, batch: ModuleType, tmp_path: Path
) -> None:
    """E108: the empty ``logs/`` object an S3 console's "Create folder" stores (and one for a
    sub-folder) is no input: the prefix reads as the same prefix without them."""
    data = lines(wrap(interleave(*[(f"s{i}", chat(f"s{i}", ["a", "b"])) for i in range(3)])))
    put("marked/", b"")
    put("marked/sub/", b"")
    url = put("marked/sub/log.jsonl", data)
    local = write(tmp_path / "log.jsonl", data)
    for prefix in (f"s3://{BUCKET}/marked/", f"s3://{BUCKET}/marked", f"s3://{BUCKET}/marked/**"):
        assert batch.expand_paths(prefix) == [url]
    both(batch, [local], batch.expand_paths(f"s3://{BUCKET}/marked/"), **WRAPPED)
    put("only-markers/", b"")
    put("only-markers/empty/", b"")
    with pytest.raises(errors.BatchError) as none:
        batch.expand_paths(f"s3://{BUCKET}/only-markers/")
    assert str(none.value) == f"s3://{BUCKET}/only-markers/: the directory holds no file"


def test_a_damaged_object_stops_where_its_local_copy_stops(
    s3: str, batch: ModuleType, tmp_path: Path
) -> None:
    data = lines(wrap(interleave(*[(f"s{i}", chat(f"s{i}", ["a"] * 40)) for i in range(30)])))
    packed = COMPRESSORS["gzip"](data)
    local = write(tmp_path / "cut.gz", packed[: len(packed) // 2])
    url = put("cut.gz", packed[: len(packed) // 2])
    got: dict[str, list[Any]] = {}
    for name, path in (("local", local), ("url", url)):
        run = batch.merge_logs(path, **WRAPPED)
        items = []
        with pytest.raises(errors.BatchError) as exc:
            for result in run:
                items.append(result.record())
        got[name] = [items, str(exc.value).replace(path, "NAME")]
    assert got["url"] == got["local"]
    assert "NAME: gzip stream is truncated after" in got["url"][1]


def test_missing_objects_buckets_and_credentials_are_one_error_line(
    s3: str, batch: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    present = put("present.jsonl", lines(chat("p", ["x"])))
    cases = {
        f"s3://{BUCKET}/absent.jsonl": f"s3://{BUCKET}/absent.jsonl: No such file or directory",
        "s3://no-such-bucket/a.jsonl": (
            "s3://no-such-bucket/a.jsonl: No such file or directory (The specified bucket "
            "does not exist)"
        ),
    }
    for url, message in cases.items():
        with pytest.raises(errors.BatchError) as exc:
            batch.merge_logs([present, url])
        assert str(exc.value) == message
    # the inputs are checked in order, as local files are
    with pytest.raises(errors.BatchError) as first:
        batch.merge_logs([str(tmp_path / "gone.jsonl"), f"s3://{BUCKET}/absent.jsonl"])
    assert str(first.value) == f"{tmp_path / 'gone.jsonl'}: No such file or directory"
    # no credentials anywhere botocore looks
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(errors.BatchError) as exc:
        batch.merge_logs(present, storage_options={"skip_instance_cache": True})
    assert str(exc.value) == (
        f"{present}: no credentials: Unable to locate credentials; set AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY or AWS_PROFILE, or pass storage_options={'anon': True} for a "
        "public bucket"
    )


def test_storage_options_name_the_endpoint(
    s3: str, batch: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = put("options/one.jsonl", lines(chat("o", ["x", "y"])))
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    (result,) = batch.merge_logs(url, storage_options={"endpoint_url": s3})
    assert (result.key, result.status, result.message.content) == (url, "complete", "xy")
    # without the endpoint the name is looked for elsewhere: not on this server
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    once = {"retries": {"max_attempts": 1}, "connect_timeout": 2}
    with pytest.raises(errors.BatchError) as exc:
        batch.merge_logs(url, storage_options={"skip_instance_cache": True, "config_kwargs": once})
    assert str(exc.value).startswith(f"{url}: cannot be read (EndpointConnectionError: "), exc


def test_the_cli_reads_s3_urls(s3: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = generated_log(30, 200_000)
    local = write(tmp_path / "gateway.jsonl.zst", data, "zstd")
    url = put("cli/gateway.jsonl.zst", Path(local).read_bytes())
    argv = ["batch", "--group-by", "stream_id", "--event", "event", "--quiet"]
    assert cli.main([*argv, local, "-o", str(tmp_path / "local.jsonl")]) == 0
    assert cli.main([*argv, f"s3://{BUCKET}/cli/*.zst", "-o", str(tmp_path / "s3.jsonl")]) == 0
    expected = (tmp_path / "local.jsonl").read_bytes()
    assert expected.count(b"\n") == 30
    assert (tmp_path / "s3.jsonl").read_bytes() == expected
    capsys.readouterr()
    # a missing object: exit 1 and one line, no traceback, as a missing local file
    absent = str(tmp_path / "absent.zst")
    assert cli.main([*argv, absent, local]) == 1
    assert capsys.readouterr() == ("", f"fastmerge: error: {absent}: No such file or directory\n")
    assert cli.main([*argv, f"s3://{BUCKET}/cli/absent.zst", url]) == 1
    assert capsys.readouterr() == (
        "",
        f"fastmerge: error: s3://{BUCKET}/cli/absent.zst: No such file or directory\n",
    )


def test_the_dask_job_reads_s3_urls(
    s3: str, batch: ModuleType, backend_name: str, tmp_path: Path
) -> None:
    import distributed

    from fastmerge import dask as fdask

    data = generated_log(30, 300_000)
    cuts = [0, data.index(b"\n", len(data) // 3) + 1, data.index(b"\n", 2 * len(data) // 3) + 1]
    parts = [data[a:b] for a, b in zip(cuts, [*cuts[1:], len(data)])]
    local = [
        write(tmp_path / f"log.{i}", part, ["gzip", None, "xz"][i]) for i, part in enumerate(parts)
    ]
    urls = [put(f"dask/log.{i}", Path(p).read_bytes()) for i, p in enumerate(local)]
    bad = [f"s3://{BUCKET}/dask/absent"]
    options: dict[str, Any] = dict(WRAPPED, errors="collect")
    expected = dumped(batch.merge_logs(local, **options))
    files = [put(f"dask/one/{i}.jsonl", lines(chat(f"f{i}", ["a", "b"]))) for i in range(3)]
    # the workers are other processes: the endpoint travels in storage_options
    storage = {"endpoint_url": s3, "key": "testing", "secret": "testing"}
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster),
    ):
        job = fdask.merge_logs(
            f"s3://{BUCKET}/dask/log.*", backend=backend_name, storage_options=storage, **options
        )
        assert dumped(job.compute()) == expected
        whole = fdask.merge_logs(files, backend=backend_name, storage_options=storage).compute()
        assert [(r.key, r.message.content) for r in whole] == [(f, "ab") for f in files]
        with pytest.raises(errors.BatchError) as exc:
            fdask.merge_logs(urls + bad, backend=backend_name, **options)
        assert str(exc.value) == f"{bad[0]}: No such file or directory"


# -- memory://: no server at all


@pytest.fixture
def memory() -> Iterator[MemoryFileSystem]:
    fs = fsspec.filesystem("memory")
    yield fs
    fs.rm("/", recursive=True)


@pytest.mark.parametrize("pipes", [True, False], ids=["streamed", "copied"])
def test_memory_urls_give_what_local_copies_give_streamed_or_copied(
    memory: MemoryFileSystem,
    batch: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    pipes: bool,
) -> None:
    if pipes and not _remote.PIPES:
        pytest.skip("no named pipes on this system")
    monkeypatch.setattr(_remote, "PIPES", pipes)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    data = corpus_log()
    local, urls = [], []
    for i, fmt in enumerate([None, *COMPRESSORS]):
        part = data[i * len(data) // 5 : (i + 1) * len(data) // 5]
        local.append(write(tmp_path / f"part{i}", part, fmt))
        memory.pipe(f"/logs/part{i}", Path(local[-1]).read_bytes())
        urls.append(f"memory:///logs/part{i}")
    assert batch.expand_paths("memory://logs/part*") == urls
    both(batch, local, urls, **WRAPPED)
    # a file a stream: the URL is the key
    memory.pipe("/one.jsonl", lines(chat("one", ["x"])))
    (result,) = batch.merge_logs("memory://one.jsonl")
    assert (result.key, result.message.content) == ("memory://one.jsonl", "x")
    # stopped early: nothing left behind
    run = batch.merge_logs(urls, **WRAPPED, errors="skip")
    next(run)
    run.close()
    assert sorted(os.listdir(tmp_path)) == [f"part{i}" for i in range(5)]
    assert not [t for t in threading.enumerate() if t.name == "fastmerge-remote"]


class _Flaky(MemoryFileSystem):
    """memory://, except that an object named ``*flaky*`` fails after its first 64 KiB."""

    protocol = ("flaky",)

    @classmethod
    def _strip_protocol(cls, path: str) -> str:
        return str(super()._strip_protocol(path.removeprefix("flaky://")))

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> Any:
        file = super()._open(path, mode, **kwargs)
        if "flaky" not in path:
            return file
        read = file.read

        def failing(size: int = -1) -> bytes:
            if file.tell() >= 1 << 16:
                raise ConnectionResetError(104, "Connection reset by peer")
            return read(min(size, 1 << 16) if size >= 0 else 1 << 16)

        file.read = failing
        return file


def test_an_object_that_fails_while_read_is_the_error_not_an_early_end(
    batch: ModuleType, memory: MemoryFileSystem
) -> None:
    fsspec.register_implementation("flaky", _Flaky, clobber=True)
    data = lines(wrap(interleave(*[(f"s{i}", chat(f"s{i}", ["a"] * 200)) for i in range(20)])))
    assert len(data) > 4 << 16
    memory.pipe("/flaky.jsonl", data)
    memory.pipe("/fine.jsonl", data)
    (*_, last) = batch.merge_logs("flaky://fine.jsonl", **WRAPPED)
    assert last.status == "complete"
    for options in (WRAPPED, {}):
        with pytest.raises(errors.BatchError) as exc:
            # no stream is cut short by the failure and given out as if the object ended
            for result in batch.merge_logs(
                ["flaky://flaky.jsonl", "flaky://fine.jsonl"], **options
            ):
                assert result.status == "complete"
        assert str(exc.value) == ("flaky://flaky.jsonl: Connection reset by peer")


def test_without_fsspec_the_message_names_the_extra(
    batch: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "fsspec", None)
    with pytest.raises(ImportError) as exc:
        batch.merge_logs("s3://bucket/log.jsonl")
    assert str(exc.value) == (
        "s3://bucket/log.jsonl: reading a URL needs fsspec: pip install 'fastmerge[fsspec]'"
    )
    # a local path needs no fsspec
    assert not _remote.is_url("C://logs/a.jsonl") and _remote.is_url("simplecache::s3://b/k")


# -- https:// and http://: a web server on 127.0.0.1 (no ranges, no listing)


@pytest.fixture
def web(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A plain HTTP server of the directory ``tmp_path / "site"`` (it answers no range
    request); its base URL and the directory."""
    import functools
    import http.server

    site = tmp_path / "site"
    site.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", site
    finally:
        server.shutdown()
        server.server_close()


def test_a_web_url_is_streamed_in_one_request(
    web: tuple[str, Path], batch: ModuleType, tmp_path: Path
) -> None:
    base, site = web
    data = corpus_log()
    local = write(site / "gateway.log.xz", data, "xz")
    url = f"{base}/gateway.log.xz"
    both(batch, [local], [url], **WRAPPED)
    with pytest.raises(errors.BatchError) as exc:
        batch.merge_logs(f"{base}/absent.log")
    assert str(exc.value) == f"{base}/absent.log: No such file or directory"


def test_a_feeding_pipe_holds_a_whole_read(tmp_path: Path) -> None:
    """The pipe a URL is fed through takes a whole read of the object (the core then wakes
    once a megabyte); on anything that is not a pipe the call leaves it as it is."""
    fcntl = pytest.importorskip("fcntl")
    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("pipe sizes are Linux's")
    limit = Path("/proc/sys/fs/pipe-max-size")
    if os.geteuid() != 0 and limit.exists() and int(limit.read_text()) < _remote.CHUNK:
        pytest.skip("this system keeps pipes below a read's size")
    read, write = os.pipe()
    try:
        assert fcntl.fcntl(write, fcntl.F_GETPIPE_SZ) < _remote.CHUNK
        _remote._widen(write)
        assert fcntl.fcntl(write, fcntl.F_GETPIPE_SZ) == _remote.CHUNK
    finally:
        os.close(read)
        os.close(write)
    with open(tmp_path / "file", "wb") as file:
        _remote._widen(file.fileno())  # not a pipe: nothing happens, nothing is raised
