"""Where the witness's checkpoints are kept (`tablier.witness`): anywhere that can append a
record at a numbered position unless the position is taken, and read the records after one.

* a directory (the default, `<data dir>/witness`): ``checkpoints.jsonl``, one record a line,
  position n the n-th line, appended under an exclusive lock (`flock`);
* ``postgresql://...``: the table ``tablier_witness`` of another PostgreSQL database, position
  the primary key; the server's role needs SELECT and INSERT only (docs/verifying.md gives the
  table and the grants);
* ``s3://bucket/prefix``: one object a record, ``<prefix>/checkpoints/<position, 20 digits>``,
  written only if absent (``If-None-Match: *``); boto3 (``pip install 'tablier[s3]'``), with
  its usual credentials and ``AWS_ENDPOINT_URL`` for a store other than AWS.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

FILE = "checkpoints.jsonl"
TABLE = "tablier_witness"

# The table, its append-only triggers (they hold for the owner too), for `psql` or the server.
POSTGRES_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    position   bigint PRIMARY KEY CHECK (position > 0),
    record     text NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now()
);
CREATE OR REPLACE FUNCTION {TABLE}_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '{TABLE} is append-only';
END $$;
CREATE OR REPLACE TRIGGER {TABLE}_no_update_delete BEFORE UPDATE OR DELETE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION {TABLE}_append_only();
CREATE OR REPLACE TRIGGER {TABLE}_no_truncate BEFORE TRUNCATE ON {TABLE}
    FOR EACH STATEMENT EXECUTE FUNCTION {TABLE}_append_only();
"""


class Backend(Protocol):
    where: str  # for messages, without credentials

    def read(self, after: int) -> list[tuple[int, bytes]]:
        """The records at positions after `after`, in order."""
        ...

    def append(self, position: int, record: bytes) -> bool:
        """Writes `record` at `position` unless a record is there (False then)."""
        ...

    def close(self) -> None: ...


def open_backend(location: str | Path) -> Backend:
    """A directory (a path, or ``file://DIR``), ``postgresql://...`` or ``s3://bucket[/prefix]``."""
    text = str(location)
    if text.startswith(("postgresql://", "postgres://")):
        return PostgresBackend(text)
    if text.startswith("s3://"):
        return S3Backend(text)
    if text.startswith("file://") or "://" not in text:
        return FileBackend(Path(text.removeprefix("file://")))
    raise ValueError(f"a witness is a directory, file://DIR, postgresql://... or s3://bucket/prefix, not {text!r}")


class FileBackend:
    def __init__(self, directory: Path) -> None:
        self.path = directory / FILE
        self.where = str(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Lines read so far and the byte offset after them (a line still being written waits).
        self._count = 0
        self._end = 0

    def _lines(self, start: int, offset: int) -> Iterator[tuple[int, int, bytes]]:
        """(position, offset after it, line) of each whole line from byte `offset` (line `start`)."""
        try:
            with self.path.open("rb") as f:
                f.seek(offset)
                data = f.read()
        except FileNotFoundError:
            return
        at = 0
        while (nl := data.find(b"\n", at)) >= 0:
            start += 1
            yield start, offset + nl + 1, data[at:nl]
            at = nl + 1

    def read(self, after: int) -> list[tuple[int, bytes]]:
        count, end = (self._count, self._end) if after >= self._count else (0, 0)
        out = []
        for position, offset, line in self._lines(count, end):
            self._count, self._end = position, offset
            if position > after:
                out.append((position, line))
        return out

    def append(self, position: int, record: bytes) -> bool:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # the count and the write, one writer at a time
            count, end = (self._count, self._end) if position > self._count else (0, 0)
            lines = max((p for p, _, _ in self._lines(count, end)), default=count)
            if lines != position - 1:
                return False
            os.write(fd, record + b"\n")
            os.fsync(fd)
            return True
        finally:
            os.close(fd)  # and the lock with it

    def close(self) -> None:
        pass


class PostgresBackend:
    def __init__(self, url: str) -> None:
        from psycopg.conninfo import conninfo_to_dict

        self.url = url
        info = conninfo_to_dict(url)
        self.where = f"postgresql://{info.get('host', '')}:{info.get('port', 5432)}/{info.get('dbname', '')}"
        self._conn: Any = None
        with self._connection() as conn:
            if conn.execute("SELECT to_regclass(%s)", (TABLE,)).fetchone()[0] is None:
                conn.execute(POSTGRES_SCHEMA)

    def _connection(self) -> Any:
        import psycopg

        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        return _Reuse(self._conn)

    def read(self, after: int) -> list[tuple[int, bytes]]:
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT position, record FROM {TABLE} WHERE position > %s ORDER BY position", (after,)
            ).fetchall()
        return [(int(p), r.encode()) for p, r in rows]

    def append(self, position: int, record: bytes) -> bool:
        with self._connection() as conn:
            cur = conn.execute(
                f"INSERT INTO {TABLE} (position, record) VALUES (%s, %s) ON CONFLICT (position) DO NOTHING",
                (position, record.decode()),
            )
            return bool(cur.rowcount == 1)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


class _Reuse:
    """A kept connection used in a `with` block without closing it (psycopg's closes)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def __enter__(self) -> Any:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        pass


class S3Backend:
    def __init__(self, url: str) -> None:
        try:
            import boto3
        except ImportError:
            raise RuntimeError(f"{url} needs boto3: pip install 'tablier[s3]'") from None
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        if not bucket:
            raise ValueError(f"{url}: no bucket (s3://bucket/prefix)")
        self.bucket = bucket
        self.prefix = (prefix.strip("/") + "/" if prefix.strip("/") else "") + "checkpoints/"
        self.where = f"s3://{bucket}/{self.prefix}"
        self.client = boto3.client("s3")

    def _key(self, position: int) -> str:
        return f"{self.prefix}{position:020d}"

    def read(self, after: int) -> list[tuple[int, bytes]]:
        out = []
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix, StartAfter=self._key(after)
        )
        for page in pages:
            for obj in page.get("Contents", []):
                name = obj["Key"][len(self.prefix) :]
                if not name.isdigit():
                    continue
                body = self.client.get_object(Bucket=self.bucket, Key=obj["Key"])["Body"].read()
                out.append((int(name), body))
        return out

    def append(self, position: int, record: bytes) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(position), Body=record, IfNoneMatch="*")
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("PreconditionFailed", "ConditionalRequestConflict"):
                return False
            raise
        return True

    def close(self) -> None:
        self.client.close()
