"""Opening the shards (`sharded.ShardedStore`): one shard's store, its name checked
(`open_shard`), and the store of a `--database-url` list (`open_sharded`): one database whose
directory lists no other shard is today's `PostgresStore`; otherwise a `ShardedStore`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import psycopg

from tablier.seeds import SeedKeys
from tablier.store import postgres, shard_map
from tablier.store.base import StoreUnavailable
from tablier.store.postgres import PostgresStore
from tablier.store.shard_map import SHARDS_NOTE, ShardConfigError, ShardSpec

if TYPE_CHECKING:
    from tablier.store.sharded import ShardedStore

log = logging.getLogger(__name__)


async def open_shard(
    spec: ShardSpec, position: int, seed_keys: SeedKeys | None, timeout: float
) -> tuple[str, PostgresStore]:
    """A shard's name and store (migrations applied, its name checked), its monitor not
    started."""
    where = f"--database-url #{position + 1} ({shard_map.redact(spec.url)})"
    try:
        # One connection first, within the bound: a pool would retry for its own 30 s.
        async with asyncio.timeout(timeout):
            probe = await psycopg.AsyncConnection.connect(spec.url, connect_timeout=max(2, int(timeout)))
        await probe.close()
        store = await postgres.open_store(spec.url, seed_keys=seed_keys, timeout=timeout, monitor=False)
    except (psycopg.Error, OSError, TimeoutError) as exc:
        raise StoreUnavailable(
            f"{where} cannot be opened: {(str(exc).strip().splitlines() or [f'no answer within {timeout:g} s'])[0][:200]}"
        ) from exc
    try:
        name = await store._run(lambda conn: shard_map.identify(conn, spec, position, where))
    except BaseException:
        await store.close()
        raise
    return name, store


async def open_sharded(
    specs: list[ShardSpec],
    *,
    seed_keys: SeedKeys | None,
    timeout: float,
    monitor: bool,
    bus: str | None = None,
) -> PostgresStore | ShardedStore:
    """The store of `specs` (the directory first). One database whose directory lists no other
    shard is a plain `PostgresStore`, today's path; otherwise a `ShardedStore` of the shards
    given and those the directory's `shards` lists. `bus`: appends announced over that NATS
    server (`postgres.open_store`; each shard's own connection to it)."""
    first = specs[0]
    if len(specs) == 1 and first.name is None:
        single = await postgres.open_store(first.url, seed_keys=seed_keys, timeout=timeout, monitor=False, bus=bus)
        try:
            rows = await single._run(shard_map.registered)
        except BaseException:
            await single.close()
            raise
        if len(rows) <= 1:
            _warn_of_shards(single)
            if monitor:
                single.start_monitor()
            return single
        await single.close()
    opened: dict[str, PostgresStore] = {}
    urls: dict[str, str] = {}
    pending: dict[str, str] = {}
    try:
        for position, spec in enumerate(specs):
            try:
                name, shard = await open_shard(spec, position, seed_keys, timeout)
            except StoreUnavailable as exc:
                if position == 0:
                    raise
                # Down at start: served once it answers, if the directory knows its name.
                rows = await opened[next(iter(opened))]._run(shard_map.registered)
                name = spec.name or {u: n for n, u in rows}.get(spec.url, "")
                if name not in {n for n, _ in rows}:
                    raise StoreUnavailable(f"{exc}; the directory knows no such shard: it is needed to start") from exc
                log.error("shard %s cannot be opened (%s): its matches are unavailable until it can", name, exc)
                pending[name], urls[name] = str(exc), spec.url
                continue
            if name in opened or name in pending:
                await shard.close()
                raise ShardConfigError(f"--database-url #{position + 1} is shard {name!r} again")
            opened[name], urls[name] = shard, spec.url
        directory_name = next(iter(opened))
        for name in opened:
            await opened[directory_name]._run(_registering(name, urls[name]))
        from tablier.store.sharded import ShardedStore

        store = ShardedStore(directory_name, opened, seed_keys, timeout, urls, bus=bus)
        store.pending.update(pending)
    except BaseException:
        await asyncio.gather(*(s.close() for s in opened.values()))
        raise
    try:
        await store.reload()
    except BaseException:
        await store.close()
        raise
    if monitor:
        store.start_monitor()
    return store


def _warn_of_shards(single: PostgresStore) -> None:
    """A server on one database hears of a shard added to it (`tablier shards add`): it does
    not see the matches placed there until restarted (it stays on the unsharded path)."""
    forward = single.player_notes

    def heard(note: str) -> None:
        if note == SHARDS_NOTE:
            log.error(
                "a shard was added to this database's directory: this server, started on one database,"
                " does not see the matches placed on it; restart it (it then opens every shard)"
            )
        elif forward is not None:
            forward(note)

    single.player_notes = heard


def _registering(name: str, url: str) -> Callable[[psycopg.AsyncConnection], Awaitable[None]]:
    return lambda conn: shard_map.register(conn, name, url)
