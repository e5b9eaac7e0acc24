"""The shard map: which databases hold matches, what each is called, and which one a new
match goes to (`sharded.ShardedStore` is built on it).

`--database-url` names one database or several: repeated (`cli_options` joins them with
newlines), or as one comma-separated list (a comma starts a new URL only before
`postgresql://`, `postgres://` or `NAME=postgresql://`, so a multi-host URL keeps its commas;
key=value conninfo strings are given by repeating the option). The first is the directory
(players, ratings, the queue, `match_directory`, `shards`) and a shard as well. A URL may be
given as `NAME=URL`.

Names are stable and checked: each database records its own shard name the first time it is
opened as a shard (`shard_identity`), and whether it is the directory. A URL given without a
name takes the name its database records (a new database: `shard<position>`); a URL given with
a name must be that database's; the directory must come first. So a reordered list, or a URL
that now reaches another database, is refused at start with a message, never taken for another
shard.

A new match's shard is the one of highest rendezvous score (SHA-256 of the shard's name and
the game id) among the shards open: adding a shard takes new matches from every shard evenly,
and moves none (the directory records each match's shard).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import psycopg

from tablier.store.base import StoreError

# The directory's notification (on `pg_database.PLAYERS_CHANNEL`) that `shards` changed.
SHARDS_NOTE = "shards"

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
_SPLIT = re.compile(r",\s*(?=(?:[a-z][a-z0-9_-]{0,31}=)?postgres(?:ql)?://)")
_NAMED = re.compile(r"^([a-z][a-z0-9_-]{0,31})=(postgres(?:ql)?://.*)$", re.DOTALL)


class ShardConfigError(StoreError):
    """The shards named cannot be used as given (a name taken by another database, the
    directory not first, ...): the server refuses to start."""


@dataclass(frozen=True)
class ShardSpec:
    url: str
    # None: the name the database records (a new one: `shard<position>`).
    name: str | None = None


def parse_urls(text: str) -> list[ShardSpec]:
    """The databases of a `--database-url` value (one per line, or comma-separated URLs)."""
    specs = []
    for part in (p for line in text.strip().splitlines() for p in _SPLIT.split(line)):
        part = part.strip()
        if not part:
            raise ShardConfigError(f"--database-url {text!r} has an empty entry")
        named = _NAMED.match(part)
        specs.append(ShardSpec(named[2], named[1]) if named else ShardSpec(part))
    return specs


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise ShardConfigError(f"shard name {name!r}: 1-32 of a-z, 0-9, '_' and '-', starting with a letter")
    return name


def rendezvous(game_id: str, names: list[str]) -> str:
    """The shard of a new match: highest SHA-256(name, game id) among `names`."""
    return max(names, key=lambda n: hashlib.sha256(f"{n}\0{game_id}".encode()).digest())


async def identify(conn: psycopg.AsyncConnection, spec: ShardSpec, position: int, where: str) -> str:
    """The shard name of the database on `conn`, given as `spec` at `position` (0: the
    directory), recorded there if it has none yet. ShardConfigError when it records another
    name than the one given, or was (not) the directory. `where` names it in messages."""
    directory = position == 0
    # Recorded by whichever server opens it first: servers started together on a new database
    # all insert, one row stays, and every one of them reads it back.
    async with conn.transaction():
        await conn.execute(
            "INSERT INTO shard_identity (name, directory) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (check_name(spec.name or f"shard{position}"), directory),
        )
        cur = await conn.execute("SELECT name, directory FROM shard_identity")
        row = await cur.fetchone()
    assert row is not None  # inserted, or there already
    name, was_directory = str(row[0]), bool(row[1])
    if spec.name is not None and spec.name != name:
        raise ShardConfigError(
            f"{where} is shard {name!r}, not {spec.name!r}: a URL reaches another database than"
            " the one named (give NAME=URL as first used)"
        )
    if was_directory != directory:
        raise ShardConfigError(
            f"{where} is shard {name!r}, which "
            + ("is the directory: it must be the first --database-url" if was_directory else "is not the directory")
            + " (was the list reordered? the directory comes first)"
        )
    return name


async def registered(conn: psycopg.AsyncConnection) -> list[tuple[str, str]]:
    """The directory's `shards` rows (name, url), oldest first."""
    cur = await conn.execute("SELECT name, url FROM shards ORDER BY added_at, name")
    return [(str(n), str(u)) for n, u in await cur.fetchall()]


async def register(conn: psycopg.AsyncConnection, name: str, url: str) -> None:
    """Records the shard in the directory's `shards` (a name recorded already keeps its URL:
    each server may reach a shard by its own URL)."""
    await conn.execute("INSERT INTO shards (name, url) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING", (name, url))


def redact(url: str) -> str:
    """A URL for messages: its password replaced."""
    url = re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)
    return re.sub(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", url)
