"""`tablier shards`: the shards the matches are spread over (docs/architecture.md "Shards").
Registered by `tablier.cli.register`.

- `tablier shards list`: each shard of the directory (`--database-url`, the first of the list),
  whether it answers and how many matches it holds, and the URL the directory keeps for it
  (password hidden). Exit 1 when one does not answer.
- `tablier shards add NAME URL`: opens the database at URL (migrations applied), records NAME as
  its shard name there (refused when it is another shard already), adds it to the directory's
  `shards` and tells every running server, which opens it: new matches then go to it too (the
  old ones stay where they are). Servers started with one URL whose directory had no other shard
  yet take it up at their next start (a single database stays on the unsharded path).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from tablier.cli_options import ConfigError, Subcommands, console, open_database

if TYPE_CHECKING:
    import psycopg


def add_shards(
    sub: Subcommands,
    add_command: Callable[..., argparse.ArgumentParser | None],
    database_options: Callable[[argparse.ArgumentParser], None],
) -> None:
    sp = add_command(sub, "shards", help="list the shards matches are spread over, or add one")
    if sp is None:
        return
    what = sp.add_subparsers(dest="shards_command", required=True)
    p = what.add_parser("list", help="each shard, whether it answers, and its matches")
    database_options(p)
    p.set_defaults(run=list_shards)
    p = what.add_parser("add", help="add a shard: running servers open it, new matches also go to it")
    p.add_argument("name", help="the shard's name (1-32 of a-z 0-9 _ -, from a letter): it never changes")
    p.add_argument("url", help="the PostgreSQL URL servers open it with (kept in the directory's `shards`)")
    database_options(p)
    p.set_defaults(run=add_shard)


async def add_shard(args: argparse.Namespace) -> int:

    from tablier.store import postgres, shard_map
    from tablier.store.base import StoreUnavailable
    from tablier.store.pg_database import PLAYERS_CHANNEL
    from tablier.store.postgres import PostgresStore
    from tablier.store.shard_map import SHARDS_NOTE, ShardConfigError, ShardSpec
    from tablier.store.shard_open import open_shard
    from tablier.store.sharded import ShardedStore

    try:
        name = shard_map.check_name(args.name)
        spec = ShardSpec(shard_map.parse_urls(args.url)[0].url, name)
    except ShardConfigError as exc:
        raise ConfigError(str(exc)) from None
    async with open_database(args) as store:
        directory = store.directory if isinstance(store, ShardedStore) else store
        if not isinstance(directory, PostgresStore):
            raise ConfigError("shards are PostgreSQL databases: this store is in memory")
        rows = dict(await directory._run(shard_map.registered))
        if name in rows:
            raise ConfigError(f"shard {name!r} exists already ({shard_map.redact(rows[name])})")
        if not rows:
            # The directory becomes a shard by name: the one it records, or shard0.
            own = await directory._run(lambda c: shard_map.identify(c, ShardSpec(""), 0, "the directory"))
            await directory._run(lambda c: shard_map.register(c, own, ""))
        try:
            got, shard = await open_shard(spec, max(len(rows), 1), None, postgres.OPERATION_TIMEOUT)
        except (ShardConfigError, StoreUnavailable) as exc:
            raise ConfigError(str(exc)) from None
        await shard.close()

        async def record(conn: psycopg.AsyncConnection) -> None:
            async with conn.transaction():
                await shard_map.register(conn, got, spec.url)
                await conn.execute("SELECT pg_notify(%s, %s)", (PLAYERS_CHANNEL, SHARDS_NOTE))

        await directory._run(record)
        console.print(f"shard {got} added ({shard_map.redact(spec.url)}): running servers open it now", markup=False)
        return 0


async def list_shards(args: argparse.Namespace) -> int:
    from tablier.store import shard_map
    from tablier.store.base import StoreError
    from tablier.store.sharded import ShardedStore

    async with open_database(args) as store:
        if not isinstance(store, ShardedStore):
            console.print("one database: no shards", markup=False)
            return 0
        urls = dict(await store.directory._run(shard_map.registered))
        down = 0
        for name in urls | store.shards:
            shard = store.shards.get(name)
            try:
                if shard is None:
                    raise StoreError(store.pending.get(name, "not opened"))
                state = f"{len(await shard.list_games())} matches"
            except StoreError as exc:
                state, down = f"unreachable: {exc}", down + 1
            role = " (directory)" if name == store.directory_name else ""
            where = f" {shard_map.redact(urls[name])}" if urls.get(name) else ""
            console.print(f"{name}{role}: {state}{where}", markup=False)
        return 1 if down else 0
