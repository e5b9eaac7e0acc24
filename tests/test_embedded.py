"""The embedded PostgreSQL wrapper: persistence, and servers left behind by killed owners."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tablier import embedded

# Starts a server and dies by SIGKILL, as a crashed or OOM-killed service would.
KILLED_OWNER = """
import os, signal, sys
from tablier import embedded
pg = embedded.start(sys.argv[1] if len(sys.argv) > 1 else None, temporary=len(sys.argv) == 1)
print(pg.data_dir, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def scratch() -> Iterator[Path]:
    # Not pytest's tmp_path: the wheel opens up every ancestor of a data directory.
    path = Path(tempfile.mkdtemp(prefix="tablier-embedded-test-"))
    try:
        yield path
    finally:
        for data_dir in [path, *path.iterdir()]:
            if data_dir.is_dir():
                embedded.stop_leftovers(data_dir)
        shutil.rmtree(path, ignore_errors=True)


def run_killed_owner(*args: str, env: dict[str, str] | None = None) -> Path:
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_OWNER, *args],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert proc.returncode == -9, proc.stderr
    return Path(proc.stdout.strip())


def query(dsn: str, sql: str) -> list[tuple]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute(sql)
        return cur.fetchall() if cur.description else []


def gone(proc) -> bool:
    return embedded._exited(proc, 10.0)


def test_persistent_server_keeps_its_data(scratch):
    data_dir = scratch / "pgdata"
    with embedded.start(data_dir, temporary=False) as pg:
        query(pg.dsn, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)")
        # A server with a live owner is not a leftover.
        assert embedded.stop_leftovers(data_dir) is False
        assert embedded.stop_stale_temporaries(scratch) == []
        assert query(pg.dsn, "SELECT count(*) FROM kept") == [(1,)]
    assert embedded._postmaster(data_dir) is None
    with embedded.start(data_dir, temporary=False) as pg:
        assert query(pg.dsn, "SELECT x FROM kept") == [(42,)]
    assert embedded._postmaster(data_dir) is None
    assert data_dir.exists()


def test_temporary_server_is_deleted():
    pg = embedded.start(None, temporary=True)
    assert pg.data_dir.name.startswith(embedded.TEMP_PREFIX)
    assert query(pg.dsn, "SELECT 1") == [(1,)]
    pg.stop()
    pg.stop()
    assert not pg.data_dir.exists()


def test_server_of_a_killed_owner_is_joined_then_stopped(scratch):
    data_dir = scratch / "pgdata"
    assert run_killed_owner(str(data_dir)) == data_dir
    orphan = embedded._postmaster(data_dir)
    assert orphan is not None and orphan.is_running()
    # A new owner joins the running server, and being the only live handle, stops it.
    with embedded.start(data_dir, temporary=False) as pg:
        assert query(pg.dsn, "SELECT 1") == [(1,)]
    assert gone(orphan)
    assert embedded._postmaster(data_dir) is None


def test_leftovers_of_a_killed_owner_are_stopped_and_removed(scratch):
    env = {**os.environ, "TMPDIR": str(scratch)}
    data_dir = run_killed_owner(env=env)
    assert data_dir.parent == scratch and data_dir.name.startswith(embedded.TEMP_PREFIX)
    orphan = embedded._postmaster(data_dir)
    assert orphan is not None and orphan.is_running()
    assert embedded.stop_leftovers(data_dir) is True
    assert gone(orphan)
    assert embedded.stop_leftovers(data_dir) is False
    assert embedded.stop_stale_temporaries(scratch) == [data_dir]
    assert not data_dir.exists()
