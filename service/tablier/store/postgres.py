"""PostgreSQL event store (psycopg 3 async, psycopg_pool).

    store = await open_store(dsn)      # opens a pool and applies pending migrations
    ...
    await store.close()

Appends are optimistic: the events of a command are inserted at expected_seq+1.. and the
primary key (game_id, seq) lets only one of two racing commands commit; the loser gets
`SeqConflict`. One statement looks the command id up and, if it is new and nothing is at
expected_seq+1 yet, inserts the event rows and the `commands` row. Group commit: the
statements of the appends in flight together, across matches, go in one transaction, one round
trip (pipeline mode, prepared statements) and one commit flush; each caller gets its own row,
hence its own result or conflict, once that commit is done (`synchronous_commit` stays on). A
racer in another process that makes one statement fail rolls the group back; its appends then
run again one by one (`_grouped`). The previous event's
chain hash is taken from a small cache of chain heads (filled by appends and by reads of a
match's latest events) or read first: event rows are immutable, so the value cannot change
under us, and if the match moved on meanwhile the insert at expected_seq+1 fails. A command id
already used writes nothing (found by that statement, or, when the same command races itself,
by the `commands` key or the seq failing); the events that command wrote first are returned,
marked as not written by this call.

The connection side (the pool, bounded operations, the availability monitor, notifications
and LISTEN) is `pg_database.Database`'s, which this store is built on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from tablier.seeds import SeedKeyError, SeedKeys, SeedUnreadable
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
)
from tablier.store.migrate import migrate
from tablier.store.pg_database import (
    CHANNEL as CHANNEL,
)
from tablier.store.pg_database import (
    LISTENER_APPLICATION_NAME as LISTENER_APPLICATION_NAME,
)
from tablier.store.pg_database import (
    OPERATION_TIMEOUT as OPERATION_TIMEOUT,
)
from tablier.store.pg_database import (
    POOL_APPLICATION_NAME as POOL_APPLICATION_NAME,
)
from tablier.store.pg_database import (
    Database,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

# Chain heads (game -> (seq, chain_hash)) remembered to save a read per append.
_HEAD_CACHE_SIZE = 4096

_EVENT_COLUMNS = "game_id, seq, kind, payload, seat, command_id, core_version, state_hash, chain_hash, recorded_at"

# Event rows and commands row: one statement, one transaction, one round trip. A command id
# already used in the match writes nothing and returns the span that command wrote; two
# requests with one command id racing each other fail on a primary key instead. The rows are
# one VALUES row of scalar parameters per event, not arrays: psycopg adapts arrays element by
# element in Python, which cost more server CPU than the rest of the append. One statement text
# per event count (`_append_sql`), each prepared by psycopg on its connections after a few uses.
_APPEND = """
WITH prior AS (
    SELECT first_seq, last_seq FROM commands
    WHERE game_id = %(game_id)s AND command_id = %(command_id)s
), anchor AS (
    -- The event appended after must still be there with the chain hash it continues.
    SELECT %(expected_seq)s::bigint = 0 OR EXISTS (
        SELECT FROM events WHERE game_id = %(game_id)s AND seq = %(expected_seq)s
                             AND chain_hash = %(prev_chain)s) AS ok
), free AS (
    -- Nothing committed (or written earlier in this transaction) at the first seq yet: in a
    -- group commit, a lost race must not abort the other commands' inserts. A racer not yet
    -- committed still makes the insert fail on the primary key (see `_flush`).
    SELECT NOT EXISTS (SELECT FROM events WHERE game_id = %(game_id)s AND seq = %(first_seq)s) AS ok
), ins AS (
    INSERT INTO events (game_id, seq, kind, payload, seat, command_id, core_version,
                        state_hash, chain_hash)
    SELECT %(game_id)s, e.seq, e.kind, e.payload, e.seat, %(command_id)s, e.core_version,
           e.state_hash, e.chain_hash
    FROM (VALUES {rows}) AS e(seq, kind, payload, seat, core_version, state_hash, chain_hash)
    WHERE NOT EXISTS (SELECT FROM prior) AND (SELECT ok FROM anchor) AND (SELECT ok FROM free)
    RETURNING recorded_at
), cmd AS (
    INSERT INTO commands (game_id, command_id, first_seq, last_seq, seat, action, host_command)
    SELECT %(game_id)s, %(command_id)s, %(first_seq)s, %(last_seq)s, %(command_seat)s,
           %(action)s, %(host_command)s
    WHERE %(command_id)s::text IS NOT NULL AND NOT EXISTS (SELECT FROM prior) AND (SELECT ok FROM anchor)
          AND (SELECT ok FROM free)
)
SELECT (SELECT min(recorded_at) FROM ins), (SELECT first_seq FROM prior), (SELECT last_seq FROM prior),
       (SELECT ok FROM anchor), (SELECT ok FROM free)
"""
_APPEND_ROW = (
    "(%(seq{i})s::bigint, %(kind{i})s::text, %(payload{i})s::bytea, %(seat{i})s::int, "
    "%(core_version{i})s::text, %(state_hash{i})s::bytea, %(chain_hash{i})s::bytea)"
)
_APPEND_SQL: dict[int, str] = {}


def _append_sql(rows: int) -> str:
    """The append statement for `rows` events (an empty VALUES list is not SQL: for none, one
    row of NULLs cut by LIMIT 0)."""
    sql = _APPEND_SQL.get(rows)
    if sql is None:
        values = ", ".join(_APPEND_ROW.format(i=i) for i in range(max(rows, 1)))
        if rows == 0:
            values += " LIMIT 0"
        sql = _APPEND_SQL[rows] = _APPEND.format(rows=values)
    return sql


# Group commit: appends in one transaction at most, and transactions in flight at once (while
# one waits for its commit flush, the next group gathers and is sent).
_GROUP_MAX = 64
_GROUP_FLUSHES = 2

# (event count, statement parameters, the caller waiting for its row)
_Pending = tuple[int, dict[str, Any], "asyncio.Future[Any]"]


def _append_params(
    key: str,
    expected_seq: int,
    stored: list[StoredEvent],
    command_id: str | None,
    command: CommandInput | None,
    prev_chain: bytes | None,
) -> dict[str, Any]:
    given = command or CommandInput()
    params: dict[str, Any] = {
        "game_id": key,
        "command_id": command_id,
        "expected_seq": expected_seq,
        "prev_chain": prev_chain,
        "first_seq": expected_seq + 1,
        "last_seq": expected_seq + len(stored),
        "command_seat": given.seat,
        "action": given.action,
        "host_command": given.host_command,
    }
    for i, e in enumerate(stored):
        params[f"seq{i}"] = e.seq
        params[f"kind{i}"] = e.kind
        params[f"payload{i}"] = e.payload
        params[f"seat{i}"] = e.seat
        params[f"core_version{i}"] = e.core_version
        params[f"state_hash{i}"] = e.state_hash
        params[f"chain_hash{i}"] = e.chain_hash
    if not stored:
        params.update(
            seq0=None, kind0=None, payload0=None, seat0=None, core_version0=None, state_hash0=None, chain_hash0=None
        )
    return params


async def _insert_one(conn: psycopg.AsyncConnection, rows: int, params: dict[str, Any]) -> Any:
    cur = await conn.execute(_append_sql(rows), params, prepare=True)
    return await cur.fetchone()


async def _insert_group(batch: list[_Pending], conn: psycopg.AsyncConnection) -> list[Any]:
    """The append statements of `batch` in one transaction, sent in one round trip with its
    BEGIN and COMMIT (pipeline mode); their rows once committed. A failing statement rolls
    all of them back and raises."""
    if len(batch) == 1:
        return [await _insert_one(conn, batch[0][0], batch[0][1])]
    cursors = []
    async with conn.pipeline(), conn.transaction():
        for rows, params, _ in batch:
            cur = conn.cursor()
            await cur.execute(_append_sql(rows), params, prepare=True)
            cursors.append(cur)
    return [await cur.fetchone() for cur in cursors]


class PostgresStore(Database):
    """An `EventStore` on a connection pool. Use `open_store(dsn)` to make one."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        dsn: str,
        seed_keys: SeedKeys | None = None,
        make_pool: Callable[[], AsyncConnectionPool] | None = None,
        timeout: float = OPERATION_TIMEOUT,
    ) -> None:
        super().__init__(pool, dsn, make_pool, timeout)
        # Seeds are sealed with these keys (tablier.seeds); without keys they are kept in
        # clear (tests of the store only: `tablier serve` always has a key).
        self._seed_keys = seed_keys
        self._heads: OrderedDict[str, tuple[int, bytes]] = OrderedDict()
        # Group commit (`_grouped`): appends waiting for a transaction, transactions in flight.
        self._pending: list[_Pending] = []
        self._flushing = 0
        self._flushes: set[asyncio.Task[None]] = set()

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
                if game.invite_hashes or game.bots:
                    await conn.execute(
                        "UPDATE games SET invite_hashes = %s::bytea[], bots = %s::text[] WHERE game_id = %s",
                        (list(game.invite_hashes), list(game.bots), key),
                    )
                return (await self._insert(conn, key, 0, stored, None))[0]

        try:
            recorded_at = await self._run(create)
        except psycopg.errors.UniqueViolation:
            raise DuplicateGame(key) from None
        return self._committed(key, stored, recorded_at)

    async def claim_seat(self, game_id: str, seat: int, token_hash: bytes) -> GameRecord | None:
        key = game_key(game_id)

        async def claim(conn: psycopg.AsyncConnection) -> GameRecord | None:
            # One conditional UPDATE: a second claim waits for the first's row lock, then finds
            # the entry no longer empty and updates nothing. Out-of-range seats read NULL. The
            # same hash again (a retry after a lost connection) finds its own claim.
            cur = await conn.execute(
                """UPDATE games SET token_hashes[%(i)s] = %(h)s
                   WHERE game_id = %(g)s AND %(i)s BETWEEN 1 AND seats
                     AND token_hashes[%(i)s] IN (''::bytea, %(h)s) AND coalesce(bots[%(i)s], '') = ''
                   RETURNING game_id""",
                {"i": seat + 1, "h": token_hash, "g": key},
            )
            claimed = await cur.fetchone() is not None
            record = await self._get_game(conn, key)  # UnknownGame when there is no match
            return record if claimed else None

        return await self._run(claim)

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
                # appends in flight (`_grouped`).
                stored = chain_events(key, cached[1], expected_seq, events, command_id, None, command, chained)
                params = _append_params(key, expected_seq, stored, command_id, command, cached[1])
                row = await self._grouped(len(stored), params)
            else:

                async def write(conn: psycopg.AsyncConnection) -> tuple[list[StoredEvent], Any]:
                    prev = await self._chain_head(conn, key, expected_seq)
                    if not events and await self._last_seq(conn, key) != expected_seq:
                        raise SeqConflict(f"{key} is no longer at seq {expected_seq}")
                    stored = chain_events(key, prev, expected_seq, events, command_id, None, command, chained)
                    params = _append_params(key, expected_seq, stored, command_id, command, prev)
                    return stored, await _insert_one(conn, len(stored), params)

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

    # -- group commit ---------------------------------------------------------------------

    async def _grouped(self, rows: int, params: dict[str, Any]) -> Any:
        """Runs one append statement together with the others in flight: the appends waiting
        when a connection is free go in one transaction, sent in one round trip (pipeline
        mode) and committed (flushed to disk) once; this returns once that commit is done.
        Each statement is still conditional on its own match's head and command id and
        returns its own row. Should a statement fail (a racer in another process took a seq
        or command id first and the primary key refused the insert), nothing of the group
        was written and each of its appends runs again alone, getting its own outcome."""
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.append((rows, params, waiter))
        self._flush_more()
        return await waiter

    def _flush_more(self) -> None:
        while self._pending and self._flushing < _GROUP_FLUSHES:
            batch, self._pending = self._pending[:_GROUP_MAX], self._pending[_GROUP_MAX:]
            self._flushing += 1
            task = asyncio.get_running_loop().create_task(self._flush(batch), name="tablier-store-group-commit")
            self._flushes.add(task)
            task.add_done_callback(self._flushes.discard)

    async def _flush(self, batch: list[_Pending]) -> None:
        try:
            try:
                rows = await self._run(functools.partial(_insert_group, batch))
            except psycopg.IntegrityError:
                if len(batch) == 1:
                    raise
                await asyncio.gather(*(self._flush_alone(item) for item in batch))
                return
            for (_, _, waiter), row in zip(batch, rows, strict=True):
                if not waiter.done():
                    waiter.set_result(row)
        except BaseException as exc:
            for _, _, waiter in batch:
                if not waiter.done():
                    waiter.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            self._flushing -= 1
            self._flush_more()

    async def _flush_alone(self, item: _Pending) -> None:
        rows, params, waiter = item
        try:
            row = await self._run(lambda conn: _insert_one(conn, rows, params))
        except Exception as exc:
            if not waiter.done():
                waiter.set_exception(exc)
        else:
            if not waiter.done():
                waiter.set_result(row)

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
        """Inserts the rows; returns (recorded_at, None, None, True, True), or (None,
        first_seq, last_seq, _, _) of the earlier command when command_id was used before, or
        (None, None, None, False, _) when event expected_seq is not there with chain hash
        `prev_chain`, or (None, None, None, True, False) when an event is at expected_seq+1
        already (nothing written but in the first case)."""
        params = _append_params(key, expected_seq, stored, command_id, command, prev_chain)
        return await _insert_one(conn, len(stored), params)

    def _committed(self, key: str, stored: list[StoredEvent], recorded_at: Any) -> list[StoredEvent]:
        if not stored:
            return []
        stored = [replace(e, recorded_at=recorded_at) for e in stored]
        self._remember_head(key, stored[-1].seq, stored[-1].chain_hash)
        self._announce(key, stored[-1].seq)
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

    async def get_game(self, game_id: str) -> GameRecord:
        key = game_key(game_id)
        return await self._run(lambda conn: self._get_game(conn, key))

    async def _get_game(self, conn: psycopg.AsyncConnection, key: str) -> GameRecord:
        cur = await conn.execute(
            """SELECT game_id, game_type, seats, options, seed, token_hashes, created_at,
                      sealed_seed, seed_key_id, hash_scheme, invite_hashes, bots
               FROM games WHERE game_id = %s""",
            (key,),
        )
        row = await cur.fetchone()
        if row is None:
            raise UnknownGame(key)
        return GameRecord(
            game_id=str(row[0]),
            game_type=row[1],
            seats=row[2],
            options=dict(row[3]),
            seed=self._open_seed(key, row[4], row[7], row[8]),
            token_hashes=tuple(bytes(h) for h in row[5]),
            created_at=row[6],
            hash_scheme=row[9],
            invite_hashes=tuple(bytes(h) for h in row[10]),
            bots=tuple(row[11]),
        )

    def _open_seed(self, key: str, plain: bytes | None, sealed: bytes | None, kid: str | None) -> bytes:
        if sealed is None:
            return bytes(plain or b"")
        if self._seed_keys is None:
            raise SeedUnreadable(
                f"the seed of match {key} is sealed and this store has no seed key", "SEED_KEY_UNKNOWN", key
            )
        return self._seed_keys.open(key, kid or "", bytes(sealed))

    async def reseal_seeds(self) -> int:
        """Seals every seed with the current key: seeds sealed with an older key, and seeds kept
        in clear by earlier versions. Returns how many it resealed. Each row is rewritten only
        if it is still what was read (a concurrent create or reseal is left alone)."""
        keys = self._seed_keys
        if keys is None:
            raise SeedKeyError("resealing needs a seed key")

        async def reseal(conn: psycopg.AsyncConnection) -> int:
            cur = await conn.execute(
                """SELECT game_id, seed, sealed_seed, seed_key_id FROM games
                   WHERE seed_key_id IS DISTINCT FROM %s""",
                (keys.current_id,),
            )
            done = 0
            for gid, plain, sealed, kid in await cur.fetchall():
                key = str(gid)
                seed = self._open_seed(key, plain, sealed, kid)
                new_kid, new_sealed = keys.seal(key, seed)
                done += (
                    await conn.execute(
                        """UPDATE games SET seed = NULL, sealed_seed = %s, seed_key_id = %s
                       WHERE game_id = %s AND seed_key_id IS NOT DISTINCT FROM %s""",
                        (new_sealed, new_kid, key, kid),
                    )
                ).rowcount
            return done

        return await self._run(reseal)

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

    async def list_games(self) -> list[str]:
        async def read(conn: psycopg.AsyncConnection) -> list[str]:
            cur = await conn.execute("SELECT game_id FROM games ORDER BY created_at, game_id")
            return [str(r[0]) for r in await cur.fetchall()]

        return await self._run(read)

    async def game_page(
        self, limit: int, game_type: str | None = None, before: tuple[datetime, str] | None = None
    ) -> list[GameRecord]:
        async def read(conn: psycopg.AsyncConnection) -> list[GameRecord]:
            # Newest first along games_created_at_idx (created_at, game_id), read backwards.
            cur = await conn.execute(
                """SELECT game_id, game_type, seats, options, token_hashes, created_at, hash_scheme,
                          invite_hashes, bots
                   FROM games
                   WHERE (%(type)s::text IS NULL OR game_type = %(type)s)
                     AND (%(at)s::timestamptz IS NULL OR (created_at, game_id) < (%(at)s, %(id)s::uuid))
                   ORDER BY created_at DESC, game_id DESC
                   LIMIT %(n)s""",
                {
                    "type": game_type,
                    "at": before[0] if before else None,
                    "id": before[1] if before else None,
                    "n": limit,
                },
            )
            return [
                GameRecord(
                    game_id=str(r[0]),
                    game_type=r[1],
                    seats=r[2],
                    options=dict(r[3]),
                    seed=b"",
                    token_hashes=tuple(bytes(h) for h in r[4]),
                    created_at=r[5],
                    hash_scheme=r[6],
                    invite_hashes=tuple(bytes(h) for h in r[7]),
                    bots=tuple(r[8]),
                )
                for r in await cur.fetchall()
            ]

        return await self._run(read)

    async def running_clocks(self) -> list[str]:
        async def read(conn: psycopg.AsyncConnection) -> list[str]:
            cur = await conn.execute("SELECT game_id FROM games WHERE clock_running ORDER BY game_id")
            return [str(r[0]) for r in await cur.fetchall()]

        return await self._run(read)

    async def clock_stopped(self, game_id: str) -> None:
        key = game_key(game_id)

        async def write(conn: psycopg.AsyncConnection) -> None:
            await conn.execute("UPDATE games SET clock_running = false WHERE game_id = %s AND clock_running", (key,))

        await self._run(write)

    # -- watching (the LISTEN connection is `Database`'s) -------------------------------

    def watch(self, game_id: str) -> AsyncGenerator[int, None]:
        return self._hub.watch(game_key(game_id), self.last_seq, ready=self._ready)


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
) -> PostgresStore:
    """Connects to `dsn` (URL or key=value conninfo), applies pending migrations and returns
    the store. Close it with `await store.close()`. With `seed_keys`, seeds are sealed at rest.
    `timeout` bounds every operation; `monitor` starts the availability monitor (see the
    module docstring)."""

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
    if monitor:
        store.start_monitor()
    return store
