"""The session stores under test: SQLite always; PostgreSQL at ``FASTMERGE_PG_DSN`` (which
``.ci/run`` starts and sets, with ``FASTMERGE_REQUIRE_PG=1`` so that an unreachable server
fails instead of skipping)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

STORES = ["sqlite", "postgres"]


def pg_dsn() -> str:
    """The PostgreSQL DSN, or a skip saying why there is none (outside CI only)."""
    dsn = os.environ.get("FASTMERGE_PG_DSN")
    required = bool(os.environ.get("FASTMERGE_REQUIRE_PG"))
    if not dsn:
        if required:
            raise RuntimeError("FASTMERGE_REQUIRE_PG is set but FASTMERGE_PG_DSN is not")
        pytest.skip(
            "no PostgreSQL server: set FASTMERGE_PG_DSN (bash .ci/run starts one and sets it)"
        )
    try:
        import psycopg

        psycopg.connect(dsn, connect_timeout=5).close()
    except Exception as exc:
        if required:
            raise
        pytest.skip(f"PostgreSQL at FASTMERGE_PG_DSN is not reachable: {exc}")
    return dsn


def make_store(kind: str, tmp_path: Path) -> Any:
    """A fresh store of ``kind`` (SQLite: a file in ``tmp_path``)."""
    from fastmerge.session import PostgresStore, SQLiteStore

    if kind == "sqlite":
        return SQLiteStore(str(tmp_path / "session.db"))
    return PostgresStore(pg_dsn())


def new_id() -> str:
    """A session id no other test uses (the PostgreSQL tables are shared)."""
    return f"s-{uuid.uuid4().hex}"
