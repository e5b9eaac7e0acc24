"""Schema migrations for the PostgreSQL event store.

Migrations are the files `migrations/NNNN_name.sql`, applied in order of NNNN. `migrate(conn)`
applies the ones not yet recorded in `schema_migrations`, all in one transaction that first
takes a transaction-scoped advisory lock: several processes starting at once against a new
database serialise on the lock, the first applies everything, the others find nothing to do.
A database that records a version this code does not know is refused (it was migrated by a
newer release). Migrations are never edited once released; a change is a new file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

import psycopg

# Arbitrary constant: "tablier" in ASCII, as a signed 64-bit advisory lock key.
ADVISORY_LOCK_KEY = int.from_bytes(b"tablier\0", "big") - (1 << 63)

_FILE_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class MigrationError(Exception):
    """The database's schema cannot be brought to this code's version."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """The migrations shipped with this code, in version order."""
    found = []
    for entry in resources.files("tablier.store").joinpath("migrations").iterdir():
        match = _FILE_NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migrations share a version: {versions}")
    return found


async def migrate(conn: psycopg.AsyncConnection) -> list[int]:
    """Applies pending migrations; returns the versions it applied (empty when up to date).

    `conn` must not be inside a transaction; the work is done in one transaction of its own."""
    known = migrations()
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (ADVISORY_LOCK_KEY,))
        await conn.execute(
            """CREATE TABLE IF NOT EXISTS schema_migrations (
                   version    integer     PRIMARY KEY,
                   name       text        NOT NULL,
                   applied_at timestamptz NOT NULL DEFAULT now()
               )"""
        )
        cur = await conn.execute("SELECT version FROM schema_migrations")
        applied = {row[0] for row in await cur.fetchall()}
        unknown = applied - {m.version for m in known}
        if unknown:
            raise MigrationError(f"the database has migrations this code does not know: {sorted(unknown)}")
        done = []
        for m in known:
            if m.version in applied:
                continue
            # No parameters: psycopg sends the file as one simple query, several statements.
            await conn.execute(m.sql.encode())
            await conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                (m.version, m.name),
            )
            done.append(m.version)
        return done
