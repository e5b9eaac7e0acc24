"""PostgreSQL event store (psycopg 3 async, psycopg_pool).

    store = await open_store(dsn)      # opens a pool and applies pending migrations
    ...
    await store.close()

Appends are optimistic: the events of a command are inserted at expected_seq+1.. and the
primary key (game_id, seq) lets only one of two racing commands commit; the loser gets
`SeqConflict`. The statement, its notification and the group commit of the appends in flight
are `pg_append`'s. The previous event's chain hash is taken from a small cache of chain heads
(filled by appends and by reads of a match's latest events) or read first: event rows are
immutable, so the value cannot change under us, and if the match moved on meanwhile the insert
at expected_seq+1 fails. A command id already used writes nothing (found by that statement, or,
when the same command races itself, by the `commands` key or the seq failing); the events that
command wrote first are returned, marked as not written by this call.

The connection side (the pool, bounded operations, the availability monitor, notifications
and LISTEN) is `pg_database.Database`'s, which this store is built on.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable
from dataclasses import replace
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from tablier.seeds import SeedKeys
from tablier.store._shared import chain_events, game_key, new_game_key
from tablier.store.base import (
    Appended,
    ChainBroken,
    CommandInput,
    DuplicateGame,
    GameRecord,
    NewEvent,
    SeqConflict,
    StoredCommand,
    StoredEvent,
    UnknownGame,
    genesis_hash,
    recorded,
)
from tablier.store.migrate import migrate
from tablier.store.pg_append import CHANNEL as CHANNEL
from tablier.store.pg_append import Append, GroupCommit, insert_one
from tablier.store.pg_database import (
    LISTENER_APPLICATION_NAME as LISTENER_APPLICATION_NAME,
)
from tablier.store.pg_database import (
    OPERATION_TIMEOUT as OPERATION_TIMEOUT,
)
from tablier.store.pg_database import (
    POOL_APPLICATION_NAME as POOL_APPLICATION_NAME,
)
from tablier.store.pg_records import MatchRecords

log = logging.getLogger(__name__)

# Chain heads (game -> (seq, chain_hash)) remembered to save a read per append.
_HEAD_CACHE_SIZE = 4096

_EVENT_COLUMNS = "game_id, seq, kind, payload, seat, command_id, core_version, state_hash, chain_hash, recorded_at"


class PostgresStore(MatchRecords):
    """An `EventStore` on a connection pool. Use `open_store(dsn)` to make one."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        dsn: str,
        seed_keys: SeedKeys | None = None,
        make_pool: Callable[[], AsyncConnectionPool] | None = None,
        timeout: float = OPERATION_TIMEOUT,
    ) -> None:
        super().__init__(pool, dsn, seed_keys, make_pool, timeout)
        self._heads: OrderedDict[str, tuple[int, bytes]] = OrderedDict()
        # The appends in flight, committed together.
        self._group = GroupCommit(self._run)

    # -- writes ---------------------------------------------------------------------------

    async def create_game(self, game: GameRecord, events: list[NewEvent]) -> list[StoredEvent]:
        key = new_game_key(game.game_id)
        stored = chain_events(key, genesis_hash(replace(game, game_id=key)), 0, events, None)
        plain: bytes | None = game.seed
        kid, sealed = None, None
        if self._seed_keys is not None:
            kid, sealed = self._seed_keys.seal(key, game.seed)
            plain = None

        async def create(conn: psycopg.AsyncConnection) -> Any:
            async with conn.transaction():
                await conn.execute(
                    """INSERT INTO games (game_id, game_type, seats, options, seed, token_hashes,
                                          sealed_seed, seed_key_id, hash_scheme, clock_running)
                       VALUES (%s, %s, %s, %s, %s, %s::bytea[], %s, %s, %s, %s)""",
                    (
                        key,
                        game.game_type,
                        game.seats,
                        Jsonb(dict(game.options)),
                        plain,
                        list(game.token_hashes),
                        sealed,
                        kid,
                        game.hash_scheme,
                        game.clocked,
                    ),
                )
                if game.seat_players:
                    await conn.execute(
                        "UPDATE games SET seat_players = %s::uuid[] WHERE game_id = %s", (list(game.seat_players), key)
                    )
                if game.ranked:
                    await conn.execute("UPDATE games SET ranked = true WHERE game_id = %s", (key,))
                if game.invite_hashes or game.bots:
                    await conn.execute(
                        "UPDATE games SET invite_hashes = %s::bytea[], bots = %s::text[] WHERE game_id = %s",
                        (list(game.invite_hashes), list(game.bots), key),
                    )
                if game.parent_game_id is not None:
                    await conn.execute(
                        """UPDATE games SET parent_game_id = %s, parent_seq = %s, parent_head = %s, fork_as = %s
                           WHERE game_id = %s""",
                        (game.parent_game_id, game.parent_seq, game.parent_head, game.fork_as, key),
                    )
                return (await self._insert(conn, key, 0, stored, None))[0]

        try:
            recorded_at = await self._run(create)
        except psycopg.errors.UniqueViolation:
            raise DuplicateGame(key) from None
        return self._committed(key, stored, recorded_at)

    async def append(
        self,
        game_id: str,
        expected_seq: int,
        events: list[NewEvent],
        command_id: str | None,
        command: CommandInput | None = None,
        chained: bytes = b"",
    ) -> Appended:
        key = game_key(game_id)
        if expected_seq < 0:
            raise SeqConflict(f"{key}: no seq {expected_seq}")
        cached = self._heads.get(key)
        try:
            if events and cached is not None and cached[0] == expected_seq:
                # The usual move: chained from the remembered head, committed with the other
                # appends in flight (`pg_append.GroupCommit`).
                stored = chain_events(key, cached[1], expected_seq, events, command_id, None, command, chained)
                row = await self._group.append(
                    Append(key, expected_seq, stored, command_id, command, cached[1], self.bus is None)
                )
            else:

                async def write(conn: psycopg.AsyncConnection) -> tuple[list[StoredEvent], Any]:
                    prev = await self._chain_head(conn, key, expected_seq)
                    if not events and await self._last_seq(conn, key) != expected_seq:
                        raise SeqConflict(f"{key} is no longer at seq {expected_seq}")
                    stored = chain_events(key, prev, expected_seq, events, command_id, None, command, chained)
                    return stored, await insert_one(
                        conn, Append(key, expected_seq, stored, command_id, command, prev, self.bus is None)
                    )

                stored, row = await self._run(write)
            prior = (row[1], row[2]) if row is not None and row[1] is not None else None
            if prior is None and row is not None:
                if not row[3]:
                    raise ChainBroken(f"{key}: event {expected_seq} is gone or changed")
                if not row[4]:
                    raise SeqConflict(f"{key} is no longer at seq {expected_seq}")
        except (psycopg.errors.UniqueViolation, SeqConflict):
            # The seq is taken (lost race), or the command id is (the same command racing).
            if command_id is not None:
                earlier = await self.command_events(key, command_id)
                if earlier is not None:
                    self._announce(key, earlier[-1].seq if earlier else expected_seq)
                    return Appended(earlier, written=False)
            raise SeqConflict(f"{key} is no longer at seq {expected_seq}") from None
        if prior is not None:
            first, last = prior
            earlier = await self._run(lambda conn: self._load(conn, key, first - 1, last))
            return Appended(earlier, written=False)
        return Appended(self._committed(key, stored, row[0] if row else None), written=True)

    async def _insert(
        self,
        conn: psycopg.AsyncConnection,
        key: str,
        expected_seq: int,
        stored: list[StoredEvent],
        command_id: str | None,
        command: CommandInput | None = None,
        prev_chain: bytes | None = None,
    ) -> Any:
        """Inserts the rows; returns the statement's row (`pg_append.insert_one`)."""
        return await insert_one(
            conn, Append(key, expected_seq, stored, command_id, command, prev_chain, self.bus is None)
        )

    def _committed(self, key: str, stored: list[StoredEvent], recorded_at: Any) -> list[StoredEvent]:
        if not stored:
            return []
        stored = [recorded(e, recorded_at) for e in stored]
        self._remember_head(key, stored[-1].seq, stored[-1].chain_hash)
        self._announce(key, stored[-1].seq)
        if self.bus is not None:  # committed: told to the other servers over the bus
            self.bus.committed(key, stored[-1].seq, stored[-1].chain_hash)
        return stored

    async def _chain_head(self, conn: psycopg.AsyncConnection, key: str, seq: int) -> bytes:
        """The chain hash of event `seq` (genesis for 0). SeqConflict if there is no such
        event yet, UnknownGame if there is no such match."""
        cached = self._heads.get(key)
        if cached is not None and cached[0] == seq:
            return cached[1]
        if seq == 0:
            return genesis_hash(await self._get_game(conn, key))
        cur = await conn.execute("SELECT chain_hash FROM events WHERE game_id = %s AND seq = %s", (key, seq))
        row = await cur.fetchone()
        if row is None:
            await self._get_game(conn, key)
            raise SeqConflict(f"{key} has no event {seq}")
        return bytes(row[0])

    def _remember_head(self, key: str, seq: int, chain: bytes) -> None:
        self._heads[key] = (seq, chain)
        self._heads.move_to_end(key)
        while len(self._heads) > _HEAD_CACHE_SIZE:
            self._heads.popitem(last=False)

    # -- reads ----------------------------------------------------------------------------

    async def command_events(self, game_id: str, command_id: str) -> list[StoredEvent] | None:
        key = game_key(game_id)

        async def read(conn: psycopg.AsyncConnection) -> list[StoredEvent] | None:
            cur = await conn.execute(
                """SELECT c.first_seq, c.last_seq FROM games g
                   LEFT JOIN commands c ON c.game_id = g.game_id AND c.command_id = %s
                   WHERE g.game_id = %s""",
                (command_id, key),
            )
            row = await cur.fetchone()
            if row is None:
                raise UnknownGame(key)
            if row[0] is None:
                return None
            return await self._load(conn, key, row[0] - 1, row[1])

        return await self._run(read)

    async def commands(self, game_id: str) -> list[StoredCommand]:
        key = game_key(game_id)

        async def read(conn: psycopg.AsyncConnection) -> list[StoredCommand]:
            await self._get_game(conn, key)
            cur = await conn.execute(
                """SELECT command_id, first_seq, last_seq, seat, action, host_command
                   FROM commands WHERE game_id = %s ORDER BY first_seq""",
                (key,),
            )
            return [
                StoredCommand(
                    command_id=cid,
                    first_seq=first,
                    last_seq=last,
                    input=None
                    if action is None and host_command is None
                    else CommandInput(seat, None if action is None else bytes(action), host_command),
                )
                for cid, first, last, seat, action, host_command in await cur.fetchall()
            ]

        return await self._run(read)

    async def load_events(self, game_id: str, after_seq: int = 0, upto_seq: int | None = None) -> list[StoredEvent]:
        key = game_key(game_id)

        async def read(conn: psycopg.AsyncConnection) -> list[StoredEvent]:
            events = await self._load(conn, key, after_seq, upto_seq)
            if not events:
                await self._get_game(conn, key)  # UnknownGame, or truly nothing in range
            elif upto_seq is None:
                # The match's last event when read: the next append chains to it.
                head = self._heads.get(key)
                if head is None or head[0] < events[-1].seq:
                    self._remember_head(key, events[-1].seq, events[-1].chain_hash)
            return events

        return await self._run(read)

    async def _load(
        self, conn: psycopg.AsyncConnection, key: str, after_seq: int, upto_seq: int | None
    ) -> list[StoredEvent]:
        cur = conn.cursor(row_factory=dict_row)
        # With each event, what its command asked (its chain hash covers it under scheme 3).
        columns = ", ".join(f"e.{c}" for c in _EVENT_COLUMNS.split(", "))
        await cur.execute(
            f"""SELECT {columns}, c.command_id AS row_command_id, c.seat AS command_seat, c.action,
                       c.host_command
                FROM events e
                LEFT JOIN commands c ON c.game_id = e.game_id AND c.command_id = e.command_id
                WHERE e.game_id = %s AND e.seq > %s AND (%s::bigint IS NULL OR e.seq <= %s)
                ORDER BY e.seq""",
            (key, after_seq, upto_seq, upto_seq),
        )
        return [
            StoredEvent(
                game_id=key,
                seq=r["seq"],
                kind=r["kind"],
                payload=bytes(r["payload"]),
                seat=r["seat"],
                command_id=r["command_id"],
                core_version=r["core_version"],
                state_hash=bytes(r["state_hash"]),
                chain_hash=bytes(r["chain_hash"]),
                recorded_at=r["recorded_at"],
                command=None
                if r["row_command_id"] is None or (r["action"] is None and r["host_command"] is None)
                else CommandInput(
                    r["command_seat"], None if r["action"] is None else bytes(r["action"]), r["host_command"]
                ),
            )
            for r in await cur.fetchall()
        ]

    async def last_seq(self, game_id: str) -> int:
        key = game_key(game_id)
        return await self._run(lambda conn: self._last_seq(conn, key))

    async def _last_seq(self, conn: psycopg.AsyncConnection, key: str) -> int:
        cur = await conn.execute(
            """SELECT coalesce((SELECT max(seq) FROM events e WHERE e.game_id = g.game_id), 0)
               FROM games g WHERE g.game_id = %s""",
            (key,),
        )
        row = await cur.fetchone()
        if row is None:
            raise UnknownGame(key)
        return int(row[0])

    # -- watching (the LISTEN connection is `Database`'s) -------------------------------

    def watch(self, game_id: str, known: Callable[[], int | None] | None = None) -> AsyncGenerator[int, None]:
        key = game_key(game_id)
        if self.bus is None:
            return self._hub.watch(key, self.last_seq, ready=self._ready, known=known)
        bus = self.bus
        # Subscribed while watched: the first watcher of the match subscribes, the last unsubscribes.
        return bus.watch(key, self._hub.watch(key, self.last_seq, ready=lambda: bus.ready(key), known=known))


# Connections per store. Commits wait for the disk; PostgreSQL flushes the commits waiting
# together at once (group commit), so the pool must not be the limit on how many wait: with
# 10 connections for 16 moves in flight, half the durable appends per second of 20.
DEFAULT_POOL_SIZE = 32


async def open_store(
    dsn: str,
    *,
    min_size: int = 1,
    max_size: int = DEFAULT_POOL_SIZE,
    seed_keys: SeedKeys | None = None,
    timeout: float = OPERATION_TIMEOUT,
    monitor: bool = True,
    bus: str | None = None,
) -> PostgresStore:
    """Connects to `dsn` (URL or key=value conninfo), applies pending migrations and returns
    the store. Close it with `await store.close()`. With `seed_keys`, seeds are sealed at rest.
    `timeout` bounds every operation; `monitor` starts the availability monitor (see the
    module docstring). `bus` (nats://HOST:PORT): appends are announced and heard over that
    NATS server instead of LISTEN/NOTIFY (`bus.NatsBus`)."""

    def make_pool() -> AsyncConnectionPool:
        return AsyncConnectionPool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            kwargs={"autocommit": True, "application_name": POOL_APPLICATION_NAME},
            open=False,
            name="tablier-store",
        )

    pool = make_pool()
    await pool.open(wait=True)
    try:
        async with pool.connection() as conn:
            applied = await migrate(conn)
        if applied:
            log.info("applied migrations %s", applied)
    except BaseException:
        await pool.close()
        raise
    store = PostgresStore(pool, dsn, seed_keys, make_pool=make_pool, timeout=timeout)
    if bus:
        from tablier.store.bus import NatsBus

        store.use_bus(NatsBus(bus))
    if monitor:
        store.start_monitor()
    return store
