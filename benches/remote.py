"""Time ``fastmerge.batch.merge_logs`` on a generated gateway log read from a local file and
from S3 (moto's server on 127.0.0.1: no network, the object served from memory), streamed
through a named pipe and copied to a temporary file first; one run each, each in its own
process (its peak RSS is the reader's alone: the server runs in this one).

    .venv/bin/python benches/remote.py --size-mb 50 [--compress zstd] [--jobs 0]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def s3_objects(objects: dict[str, bytes]) -> Iterator[tuple[list[str], dict[str, Any]]]:
    """moto's S3 server on 127.0.0.1 (this process; test credentials in the environment, so
    that child processes find it too) holding ``objects`` (key: bytes) in the bucket
    ``bench``: their URLs, in order, and the ``storage_options`` that reach them from any
    process (Dask's workers). The environment is restored on exit."""
    import boto3
    from moto.server import ThreadedMotoServer

    names = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL")
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
    )
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        os.environ["AWS_ENDPOINT_URL"] = endpoint
        s3 = boto3.client("s3", endpoint_url=endpoint)
        s3.create_bucket(Bucket="bench")
        for key, data in objects.items():
            s3.put_object(Bucket="bench", Key=key, Body=data)
        storage = {"endpoint_url": endpoint, "key": "testing", "secret": "testing"}
        yield [f"s3://bench/{key}" for key in objects], storage
    finally:
        server.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def child(path: str, pipes: bool, jobs: int) -> None:
    """One timed run: ``{"seconds", "streams", "max_rss_mb"}`` on stdout."""
    import resource

    from fastmerge import _remote, batch

    _remote.PIPES = pipes
    start = time.perf_counter()
    streams = sum(1 for _ in batch.merge_logs(path, group_by="stream_id", event="event", jobs=jobs))
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"seconds": seconds, "streams": streams, "max_rss_mb": rss}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=float, default=50)
    parser.add_argument("--compress", choices=("gzip", "zstd", "bzip2", "xz"))
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--child", nargs=2, metavar=("PATH", "PIPES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1] == "1", args.jobs)
        return
    spec = importlib.util.spec_from_file_location("gen_log", ROOT / "tools" / "gen_log.py")
    assert spec is not None and spec.loader is not None
    gen_log = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_log)
    size = int(args.size_mb * 1e6)
    data = b"".join(gen_log.records(max(size // 100_000, 10), size, 16, 7))
    if args.compress:
        import bz2
        import gzip
        import lzma

        import zstandard

        pack = {
            "gzip": gzip.compress,
            "zstd": zstandard.ZstdCompressor().compress,
            "bzip2": bz2.compress,
            "xz": lzma.compress,
        }[args.compress]
        data = pack(data)
    with s3_objects({"gateway.log": data}) as ((url,), _):
        with tempfile.TemporaryDirectory() as tmp:
            local = os.path.join(tmp, "gateway.log")
            Path(local).write_bytes(data)
            print(f"log: {len(data) / 1e6:.1f} MB stored ({args.compress or 'plain'})")
            runs = [
                ("local file", local, "1"),
                ("s3://, streamed (pipe)", url, "1"),
                ("s3://, copied first", url, "0"),
            ]
            for name, path, pipes in runs:
                out = subprocess.run(
                    [sys.executable, __file__, "--jobs", str(args.jobs), "--child", path, pipes],
                    env=os.environ,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                result = json.loads(out)
                print(
                    f"{name:24} {result['seconds']:7.3f} s  {result['streams']} streams  "
                    f"peak RSS {result['max_rss_mb']:.0f} MB"
                )


if __name__ == "__main__":
    main()
