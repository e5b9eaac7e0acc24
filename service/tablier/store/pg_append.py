"""The append statement of the PostgreSQL store and its group commit (`postgres.PostgresStore`
uses both).

One statement looks the command id up and, if it is new and nothing is at expected_seq+1 yet,
inserts the event rows and the `commands` row, and queues the notification of the append
(`pg_notify('tablier_events', '<game_id>:<last_seq>')`) in the same transaction: PostgreSQL
delivers it to every listener when, and only if, that transaction commits, so no committed
append goes unannounced (the servers' cached states rely on it, `feed.NoteFeed`). With a
fan-out bus (`bus.NatsBus`) the notification's parameter is NULL and none is queued: the store
publishes the append on the bus once it committed.

Group commit (`GroupCommit`): the appends in flight together, across matches, go as one
set-based statement (`_GROUP`: every command's checks, all their rows, one notification per
written command), so one round trip, one transaction and one commit flush; each caller gets its
own row, hence its own result or conflict, once that commit is done (`synchronous_commit`
stays on). One group is in flight at a time: the appends that arrive while its commit is
flushed wait and go together next. On an idle store a group starts at the end of the event
loop's turn that made its first append (with every other append of that turn), so a lone append
goes at once. A group that began while the one before it was committed (the server is busy)
gathers on while appends keep coming, until GROUP_GAP_S passes with none or GROUP_GATHER_S in
all: PostgreSQL's CPU per commit is mostly fixed (its flush), so it is spread over more moves
when they are many, at the cost of at most a few milliseconds of latency under load. Measured
with `tablier bench-service`, PlayMove at 16 in flight on one worker: without the gathering,
groups of 4.5-5.7 appends, 0.12-0.14 ms of PostgreSQL CPU and 0.78-0.80 ms of server CPU per
move; with it, 8.1-8.2 appends, 0.08-0.10 ms and 0.75-0.76 ms, at the same moves per second
(alternating runs, one machine). Before that: two groups in flight made groups of 1.2 appends
and cost PostgreSQL 0.52 ms per move; one in flight, 2.0 and 0.32 ms. PostgreSQL's CPU per
append falls with the group: about 0.35-0.4 ms alone, 0.12 in fours, 0.08 in eights, 0.045
in sixteens (`bench-service`'s last line). Two appends to one match never share a statement
(the second waits for the next): each command's checks see only what was committed before its
statement. A racer in another process that makes the statement fail on a primary key rolls the
group back; its appends then run again one by one.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, TypeVar

import psycopg

from tablier.store.base import CommandInput, StoredEvent

T = TypeVar("T")

CHANNEL = "tablier_events"

# Event rows and commands row: one statement, one transaction, one round trip. A command id
# already used in the match writes nothing and returns the span that command wrote; two
# requests with one command id racing each other fail on a primary key instead. The rows are
# one VALUES row of scalar parameters per event, not arrays: psycopg adapts arrays element by
# element in Python, which cost more server CPU than the rest of the append. One statement text
# per event count (`append_sql`), each prepared by psycopg on its connections after a few uses.
# Parameters go as text: binary byte strings (`%b`) measured no cheaper, on either side
# (620-750 appends/s against 650-940, 16 in flight; client 0.33 ms/append against 0.30).
_APPEND = (
    """
WITH prior AS (
    SELECT first_seq, last_seq FROM commands
    WHERE game_id = %(game_id)s AND command_id = %(command_id)s
), anchor AS (
    -- The event appended after must still be there with the chain hash it continues.
    SELECT %(expected_seq)s::bigint = 0 OR EXISTS (
        SELECT FROM events WHERE game_id = %(game_id)s AND seq = %(expected_seq)s
                             AND chain_hash = %(prev_chain)s::bytea) AS ok
), free AS (
    -- Nothing committed (or written earlier in this transaction) at the first seq yet: in a
    -- group commit, a lost race must not abort the other commands' inserts. A racer not yet
    -- committed still makes the insert fail on the primary key (see `GroupCommit._flush`).
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
           %(action)s::bytea, %(host_command)s
    WHERE %(command_id)s::text IS NOT NULL AND NOT EXISTS (SELECT FROM prior) AND (SELECT ok FROM anchor)
          AND (SELECT ok FROM free)
)
SELECT (SELECT min(recorded_at) FROM ins), (SELECT first_seq FROM prior), (SELECT last_seq FROM prior),
       (SELECT ok FROM anchor), (SELECT ok FROM free),
       (SELECT pg_notify('"""
    + CHANNEL
    + """', %(note)s) FROM ins WHERE %(note)s::text IS NOT NULL LIMIT 1)
"""
)
_APPEND_ROW = (
    "(%(seq{i})s::bigint, %(kind{i})s::text, %(payload{i})s::bytea, %(seat{i})s::int, "
    "%(core_version{i})s::text, %(state_hash{i})s::bytea, %(chain_hash{i})s::bytea)"
)
_APPEND_SQL: dict[int, str] = {}


def append_sql(rows: int) -> str:
    """The append statement for `rows` events (an empty VALUES list is not SQL: for none, one
    row of NULLs cut by LIMIT 0)."""
    sql = _APPEND_SQL.get(rows)
    if sql is None:
        values = ", ".join(_APPEND_ROW.format(i=i) for i in range(max(rows, 1)))
        if rows == 0:
            values += " LIMIT 0"
        sql = _APPEND_SQL[rows] = _APPEND.format(rows=values)
    return sql


class Append(NamedTuple):
    """One append, as the store hands it to `insert_one` or the group commit: the rows
    (`stored`, chained after `prev_chain`) of the command `command_id` at seq expected_seq+1..;
    `notify` False: no NOTIFY (the appends are announced over a fan-out bus after their commit,
    `bus.NatsBus`). Each statement's parameters are made from it only when it goes
    (`append_params`, `group_params`): no intermediate form per append."""

    key: str
    expected_seq: int
    stored: list[StoredEvent]
    command_id: str | None
    command: CommandInput | None
    prev_chain: bytes | None
    notify: bool = True

    @property
    def last_seq(self) -> int:
        return self.expected_seq + len(self.stored)

    @property
    def note(self) -> str | None:
        return f"{self.key}:{self.last_seq}" if self.notify else None


def append_params(a: Append) -> dict[str, Any]:
    """The parameters of `append_sql(len(a.stored))`."""
    given = a.command or CommandInput()
    params: dict[str, Any] = {
        "game_id": a.key,
        "command_id": a.command_id,
        "expected_seq": a.expected_seq,
        "prev_chain": a.prev_chain,
        "first_seq": a.expected_seq + 1,
        "last_seq": a.last_seq,
        "command_seat": given.seat,
        "action": given.action,
        "host_command": given.host_command,
        "note": a.note,
    }
    for i, e in enumerate(a.stored):
        params[f"seq{i}"] = e.seq
        params[f"kind{i}"] = e.kind
        params[f"payload{i}"] = e.payload
        params[f"seat{i}"] = e.seat
        params[f"core_version{i}"] = e.core_version
        params[f"state_hash{i}"] = e.state_hash
        params[f"chain_hash{i}"] = e.chain_hash
    if not a.stored:
        params.update(
            seq0=None, kind0=None, payload0=None, seat0=None, core_version0=None, state_hash0=None, chain_hash0=None
        )
    return params


async def insert_one(conn: psycopg.AsyncConnection, a: Append) -> Any:
    """Runs one append statement; returns its row: (recorded_at, None, None, True, True) when
    written, (None, first_seq, last_seq, _, _) of the earlier command when command_id was used
    before, (None, None, None, False, _) when event expected_seq is not there with chain hash
    `prev_chain`, (None, None, None, True, False) when an event is at expected_seq+1 already
    (nothing written but in the first case)."""
    cur = await conn.execute(append_sql(len(a.stored)), append_params(a), prepare=True)
    return await cur.fetchone()


# The appends of a group, as one statement: the commands and their events go as two JSON
# arrays (byte strings in hex), each checked by index lookups (LATERAL: without them the planner
# hashes whole tables), then the rows of the commands that pass are inserted. Measured against
# the pipelined statements it replaces (one `_APPEND` per command in one transaction), 16 appends
# at a time: PostgreSQL CPU 0.07-0.09 ms per append against 0.12-0.14, the server's own psycopg
# CPU 0.04-0.07 against 0.12-0.15. Typed arrays (`unnest`) cost more on both sides, in binary
# format too (0.12 and 0.09), as psycopg adapts them element by element.
_GROUP = (
    """
WITH c AS (
    SELECT * FROM json_to_recordset(%s::json) AS c(
        i int, game_id uuid, command_id text, expected_seq bigint, prev_chain text,
        first_seq bigint, last_seq bigint, seat int, action text, host_command text, note text)
), e AS (
    SELECT * FROM json_to_recordset(%s::json) AS e(
        i int, seq bigint, kind text, payload text, seat int, core_version text,
        state_hash text, chain_hash text)
), checked AS (
    SELECT c.*, p.first_seq AS prior_first, p.last_seq AS prior_last,
           -- the event appended after must still be there with the chain hash it continues
           (c.expected_seq = 0 OR a.ok IS NOT NULL) AS anchor_ok,
           -- nothing committed at the first seq yet (a lost race must not abort the others)
           f.taken IS NULL AS free_ok
    FROM c
    LEFT JOIN LATERAL (SELECT p.first_seq, p.last_seq FROM commands p
                       WHERE p.game_id = c.game_id AND p.command_id = c.command_id LIMIT 1) p ON true
    LEFT JOIN LATERAL (SELECT true AS ok FROM events x
                       WHERE x.game_id = c.game_id AND x.seq = c.expected_seq
                         AND x.chain_hash = decode(c.prev_chain, 'hex') LIMIT 1) a ON true
    LEFT JOIN LATERAL (SELECT true AS taken FROM events x
                       WHERE x.game_id = c.game_id AND x.seq = c.first_seq LIMIT 1) f ON true
), ok AS MATERIALIZED (
    SELECT * FROM checked WHERE prior_first IS NULL AND anchor_ok AND free_ok
), ins AS (
    INSERT INTO events (game_id, seq, kind, payload, seat, command_id, core_version,
                        state_hash, chain_hash)
    SELECT ok.game_id, e.seq, e.kind, decode(e.payload, 'hex'), e.seat, ok.command_id,
           e.core_version, decode(e.state_hash, 'hex'), decode(e.chain_hash, 'hex')
    FROM e JOIN ok ON ok.i = e.i
), cmd AS (
    INSERT INTO commands (game_id, command_id, first_seq, last_seq, seat, action, host_command)
    SELECT game_id, command_id, first_seq, last_seq, seat, decode(action, 'hex'), host_command
    FROM ok WHERE command_id IS NOT NULL
)
SELECT CASE WHEN ok.i IS NOT NULL THEN now() END, checked.prior_first, checked.prior_last,
       checked.anchor_ok, checked.free_ok,
       CASE WHEN ok.i IS NOT NULL AND ok.note IS NOT NULL THEN pg_notify('"""
    + CHANNEL
    + """', ok.note) END
FROM checked LEFT JOIN ok ON ok.i = checked.i ORDER BY checked.i
"""
)


def _hex(value: bytes | None) -> str | None:
    return None if value is None else value.hex()


def group_params(batch: list[_Pending]) -> tuple[str, str]:
    """The two JSON parameters of `_GROUP` for the appends of `batch`."""
    commands, events = [], []
    for i, (a, _) in enumerate(batch):
        given = a.command or CommandInput()
        commands.append(
            {
                "i": i,
                "game_id": a.key,
                "command_id": a.command_id,
                "expected_seq": a.expected_seq,
                "prev_chain": _hex(a.prev_chain),
                "first_seq": a.expected_seq + 1,
                "last_seq": a.last_seq,
                "seat": given.seat,
                "action": _hex(given.action),
                "host_command": given.host_command,
                "note": a.note,
            }
        )
        for e in a.stored:
            events.append(
                {
                    "i": i,
                    "seq": e.seq,
                    "kind": e.kind,
                    "payload": e.payload.hex(),
                    "seat": e.seat,
                    "core_version": e.core_version,
                    "state_hash": e.state_hash.hex(),
                    "chain_hash": e.chain_hash.hex(),
                }
            )
    return json.dumps(commands), json.dumps(events)


async def insert_group(batch: list[_Pending], conn: psycopg.AsyncConnection) -> list[Any]:
    """The appends of `batch` (at most one per match) in one statement, hence one
    transaction; their rows (`insert_one`'s) once committed. A failing insert rolls all of
    them back and raises."""
    if len(batch) == 1:
        return [await insert_one(conn, batch[0][0])]
    cur = await conn.execute(_GROUP, group_params(batch), prepare=True)
    return await cur.fetchall()


# Group commit: appends in one transaction at most, and transactions in flight at once (while
# one waits for its commit flush, the next group gathers; see the module docstring).
GROUP_MAX = 64
GROUP_FLUSHES = 1
# A group that began while the one before it was being committed (the server is busy) goes on
# gathering while appends keep coming: it goes once GROUP_GAP_S passes with none, or once it
# has gathered for GROUP_GATHER_S.
GROUP_GAP_S = 0.001
GROUP_GATHER_S = 0.008

# (the append, the caller waiting for its row)
_Pending = tuple[Append, "asyncio.Future[Any]"]

Run = Callable[[Callable[[psycopg.AsyncConnection], Awaitable[T]]], Awaitable[T]]


def _take(pending: list[_Pending]) -> tuple[list[_Pending], list[_Pending]]:
    """The next group out of `pending` (in order, at most GROUP_MAX, one append per match)
    and what waits for the next."""
    batch: list[_Pending] = []
    later: list[_Pending] = []
    games: set[str] = set()
    for item in pending:
        game = item[0].key
        if len(batch) < GROUP_MAX and game not in games:
            games.add(game)
            batch.append(item)
        else:
            later.append(item)
    return batch, later


class GroupCommit:
    """The appends in flight, committed together (see the module docstring). `run` runs an
    operation on a pooled connection (`pg_database.Database._run`)."""

    def __init__(self, run: Run[Any]) -> None:
        self._run = run
        self._pending: list[_Pending] = []
        self._flushing = 0
        self._flushes: set[asyncio.Task[None]] = set()
        self._kicked = False
        self._gathering: asyncio.TimerHandle | None = None
        self._gather_since = 0.0
        self._arrived = False  # an append came since the gathering group last looked

    async def append(self, a: Append) -> Any:
        """Runs one append together with the others in flight: the appends waiting when a
        connection is free (one per match) go as one statement, one round trip and one
        transaction, committed (flushed to disk) once; this returns once that commit is done.
        Each append is still conditional on its own match's head and command id and gets its
        own row. Should the statement fail (a racer in another process took a seq or command
        id first and the primary key refused the insert), nothing of the group was written and
        each of its appends runs again alone, getting its own outcome."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Any] = loop.create_future()
        self._pending.append((a, waiter))
        self._arrived = True
        if not self._kicked and self._gathering is None and self._flushing < GROUP_FLUSHES:
            # An idle store: at the end of this turn of the event loop, with the appends of
            # the requests it handled together.
            self._kicked = True
            loop.call_soon(self._kick)
        return await waiter

    def _kick(self) -> None:
        self._kicked = False
        if self._gathering is None:
            self._flush_more()

    def _gather(self) -> None:
        """Appends came while a group was being committed: the next group waits for more
        while they keep coming (see GROUP_GAP_S)."""
        loop = asyncio.get_running_loop()
        self._gather_since = loop.time()
        self._arrived = False
        self._gathering = loop.call_later(GROUP_GAP_S, self._gathered)

    def _gathered(self) -> None:
        loop = asyncio.get_running_loop()
        if self._arrived and len(self._pending) < GROUP_MAX and loop.time() - self._gather_since < GROUP_GATHER_S:
            self._arrived = False
            self._gathering = loop.call_later(GROUP_GAP_S, self._gathered)
            return
        self._gathering = None
        self._flush_more()

    def _flush_more(self) -> None:
        while self._pending and self._flushing < GROUP_FLUSHES:
            batch, self._pending = _take(self._pending)
            self._flushing += 1
            task = asyncio.get_running_loop().create_task(self._flush(batch), name="tablier-store-group-commit")
            self._flushes.add(task)
            task.add_done_callback(self._flushes.discard)

    async def _flush(self, batch: list[_Pending]) -> None:
        try:
            try:
                rows = await self._run(functools.partial(insert_group, batch))
            except psycopg.IntegrityError:
                if len(batch) == 1:
                    raise
                await asyncio.gather(*(self._flush_alone(item) for item in batch))
                return
            for (_, waiter), row in zip(batch, rows, strict=True):
                if not waiter.done():
                    waiter.set_result(row)
        except BaseException as exc:
            for _, waiter in batch:
                if not waiter.done():
                    waiter.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            self._flushing -= 1
            if self._pending and self._gathering is None:
                self._gather()

    async def _flush_alone(self, item: _Pending) -> None:
        a, waiter = item
        try:
            row = await self._run(functools.partial(insert_one, a=a))
        except Exception as exc:
            if not waiter.done():
                waiter.set_exception(exc)
        else:
            if not waiter.done():
                waiter.set_result(row)
