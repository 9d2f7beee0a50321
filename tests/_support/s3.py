"""An S3 for batch tests: moto's server on 127.0.0.1 (a free port) with test credentials and
the bucket ``BUCKET``, and :func:`put` to store an object there."""

from __future__ import annotations

import contextlib
from typing import Iterator

import boto3
import pytest
import s3fs
from moto.server import ThreadedMotoServer

BUCKET = "gateway-logs"


@contextlib.contextmanager
def moto_s3() -> Iterator[str]:
    """moto's S3, found through ``AWS_ENDPOINT_URL`` as botocore reads it, with test
    credentials in the environment, and the bucket ``BUCKET``; its endpoint."""
    env = pytest.MonkeyPatch()
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        env.delenv(name, raising=False)
    env.setenv("AWS_ACCESS_KEY_ID", "testing")
    env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    env.setenv("AWS_DEFAULT_REGION", "us-east-1")
    env.setenv("AWS_EC2_METADATA_DISABLED", "true")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    env.setenv("AWS_ENDPOINT_URL", endpoint)
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=BUCKET)
    try:
        yield endpoint
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        server.stop()
        env.undo()


def put(key: str, data: bytes) -> str:
    """``data`` stored at ``key`` of ``BUCKET`` (the current endpoint); its URL."""
    boto3.client("s3").put_object(Bucket=BUCKET, Key=key, Body=data)
    return f"s3://{BUCKET}/{key}"
