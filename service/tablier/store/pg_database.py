"""The PostgreSQL connection side of the store (`postgres.PostgresStore` is built on it): the
connection pool, every operation run on it within a bound, the availability monitor, the
notifications of appends and the LISTEN connection that fans them out to this process's
watchers.

Every append queues its notification, `pg_notify('tablier_events', '<game_id>:<last_seq>')`,
in its own transaction (`pg_append`): PostgreSQL delivers it to every listener at that commit,
and never for an append that did not commit. (Measured before group commit: the notification
lock, held through the commit flush, halved the durable commits per second of 16 separate
writers. With the appends in flight committed together, 16 in flight, in the same runs:
768-976 appends/s against 781-1,049 with the notification sent after the commit in a
statement of its own, and 0.31-0.39 ms of the server's CPU per append against 0.39-0.58.)

Watching: one LISTEN connection per store, opened with the monitor (or on the first `watch()`),
fans notifications out to the watchers of this process, so a watcher sees appends made by any
process on the same database, and keeps what it heard in `feed` (`feed.NoteFeed`): whether a
state this process read is still the latest, without asking the database. When that connection
drops it is reopened, every watcher re-reads its match's last seq, so no append is missed, and
every state read before is no longer known to be current. Likewise an operation that finds
its pooled connection dead checks the whole pool and is retried once, so a database restart
costs no failed calls.

With a fan-out bus (`bus.NatsBus`, `use_bus`) the LISTEN connection listens to the players'
channel only: the bus feeds the watchers and `feed`.

Servers of both kinds on one database do not hear each other's appends: the bus servers queue
no NOTIFY, the others publish nothing on the bus. So each kind names its LISTEN connection apart
(`LISTENER_APPLICATION_NAME`, `BUS_LISTENER_APPLICATION_NAME`), and the monitor's probe counts
the other kind's in `pg_stat_activity` (`mixed_fanout`). While there are any, this process logs
the error once, no state it holds is taken as current (every read asks the database), and the
metric `tablier_mixed_fanout` shows them; watchers still miss the other kind's moves, which only
one kind of server on a database cures.

Outages: every operation is bounded (`timeout`, seconds: waiting for a connection included)
and ends as `StoreUnavailable` when the database cannot be reached, never hangs. A monitor
task probes the database (every `probe_interval` s on one connection while it answers, every
`retry_interval` s with a new connection while it does not, and at once when an operation
fails): while it is down, operations fail at once, `available` is False and `on_availability`
is told; when it answers again the store takes a fresh pool (the old one may be backing off
its reconnection attempts for seconds) before it reports itself available.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool

from tablier.store._shared import WatchHub
from tablier.store.base import StoreUnavailable
from tablier.store.feed import Mark, NoteFeed
from tablier.store.pg_append import CHANNEL

if TYPE_CHECKING:
    from tablier.store.bus import NatsBus

# The players' notifications (revocations, renames): `players.PgPlayers`.
PLAYERS_CHANNEL = "tablier_players"

log = logging.getLogger(__name__)
T = TypeVar("T")

POOL_APPLICATION_NAME = "tablier-store"
LISTENER_APPLICATION_NAME = "tablier-listener"
BUS_LISTENER_APPLICATION_NAME = "tablier-listener-bus"


def _listener_name(bus: bool) -> str:
    """The LISTEN connection's name for a server with a bus, or without one."""
    return BUS_LISTENER_APPLICATION_NAME if bus else LISTENER_APPLICATION_NAME


# Outage handling (see the module docstring), in seconds.
OPERATION_TIMEOUT = 5.0
PROBE_INTERVAL = 1.0
RETRY_INTERVAL = 0.2
PROBE_TIMEOUT = 2.0


class Database:
    """A pool of connections to one database, with the availability monitor and the
    notifications of appends (see the module docstring)."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        dsn: str,
        make_pool: Callable[[], AsyncConnectionPool] | None = None,
        timeout: float = OPERATION_TIMEOUT,
    ) -> None:
        self._pool = pool
        self._dsn = dsn  # for the LISTEN connection, which is not the pool's
        self._make_pool = make_pool
        self.timeout = timeout
        self._hub = WatchHub()
        # What the LISTEN connection heard: the freshness of the states read (`mark`, `current`).
        self.feed = NoteFeed()
        # Told each notification on the players' channel (`players.PgPlayers.heard`).
        self.player_notes: Callable[[str], None] | None = None
        # With a fan-out bus (`bus.NatsBus`), appends are heard over it, not on CHANNEL.
        self.bus: NatsBus | None = None
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        self._closed = False
        # Availability: the monitor's verdict, why, and who wants to hear of a change.
        self.available = True
        self._down_reason = ""
        self.on_availability: Callable[[bool], None] | None = None
        # Which database this is, in the log ("": the only one; " (shard NAME)": `sharded`).
        self.label = ""
        self._suspect = asyncio.Event()
        self._monitor: asyncio.Task[None] | None = None
        # LISTEN connections of servers of the other kind (bus or not) on this database, as the
        # monitor's last probe counted them (see the module docstring).
        self.mixed_fanout = 0
        self._retired: set[asyncio.Task[None]] = set()

    def use_bus(self, bus: NatsBus) -> None:
        """Appends are announced over `bus` from now on, and heard from it (no NOTIFY, no
        LISTEN on the events channel); call before the listener starts."""
        self.bus = bus
        bus.start(self)

    def _announce(self, key: str, seq: int) -> None:
        """Tells this process's watchers now of an append this process made or found (every
        process hears it at its commit, `pg_append`)."""
        self._hub.publish(key, seq)

    def mark(self) -> Mark | None:
        """Take before reading a match (or appending to it); see `feed.NoteFeed`. None while
        the feed or the database is down."""
        return self.feed.mark() if self.available else None

    def current(self, game_id: str, seq: int, mark: Mark | None) -> bool:
        """Whether the state of `game_id` at `seq`, read after `mark`, is still its latest,
        as far as the feed tells without asking the database (False: ask it)."""
        return self.available and not self.mixed_fanout and self.feed.current(game_id, seq, mark)

    async def _run(self, op: Callable[[psycopg.AsyncConnection], Awaitable[T]]) -> T:
        """Runs `op` on a pooled connection. If the connection turns out dead (the server
        restarted or dropped it), checks every idle pooled connection, discarding the dead
        ones, and runs `op` once more on a live one. Repeating any operation here is safe:
        a write that did commit the first time fails its second insert on the seq or the
        command id, and `append` then returns what the command wrote, or SeqConflict.

        Bounded by `timeout`; StoreUnavailable when the database cannot be reached (at once
        while the monitor knows it is down)."""
        if not self.available:
            raise StoreUnavailable(self._down_reason or "the database is not answering")
        try:
            async with asyncio.timeout(self.timeout):
                try:
                    async with self._pool.connection() as conn:
                        return await op(conn)
                except psycopg.OperationalError as exc:
                    log.warning("database%s connection failed (%s); checking the pool and retrying", self.label, exc)
                await self._pool.check()
                async with self._pool.connection() as conn:
                    return await op(conn)
        except (psycopg.OperationalError, TimeoutError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else f"no answer within {self.timeout:g} s"
            self.suspect()
            raise StoreUnavailable(reason[:200]) from exc

    # -- availability ---------------------------------------------------------------------

    def start_monitor(self) -> None:
        """Starts the availability monitor and the listener (the feed of `current`)."""
        if self._monitor is None and not self._closed:
            self._monitor = asyncio.get_running_loop().create_task(self._watch_database(), name="tablier-store-monitor")
            self._start_listener()

    def suspect(self) -> None:
        """An operation saw the database fail: probe it now."""
        self._suspect.set()

    def pool_stats(self) -> dict[str, int]:
        stats = self._pool.get_stats()
        stats["pool_max"] = self._pool.max_size
        return stats

    async def _probe(self, conn: psycopg.AsyncConnection | None) -> psycopg.AsyncConnection:
        """Asks `conn`, or a new connection, for the LISTEN connections of servers of the
        other kind on this database (`mixed_fanout`); returns the live connection."""
        async with asyncio.timeout(PROBE_TIMEOUT):
            if conn is None or conn.closed:
                conn = await psycopg.AsyncConnection.connect(
                    self._dsn,
                    autocommit=True,
                    application_name="tablier-probe",
                    connect_timeout=max(2, int(PROBE_TIMEOUT)),
                )
            cur = await conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s",
                (_listener_name(bus=self.bus is None),),
            )
            row = await cur.fetchone()
            self._count_mixed(int(row[0]) if row else 0)
            return conn

    def _count_mixed(self, others: int) -> None:
        if others and not self.mixed_fanout:
            kinds = ("from PostgreSQL's notifications (no --bus)", "on a bus (--bus)")
            mine, theirs = kinds[::-1] if self.bus is not None else kinds
            log.error(
                "database%s: %d other server(s) on it hear appends %s, this one %s: neither hears the"
                " other's moves, so their watchers miss them, and this server answers every read from"
                " the database; start every server on a database with the same --bus, or none with it",
                self.label,
                others,
                theirs,
                mine,
            )
        elif self.mixed_fanout and not others:
            log.warning("database%s: no server of the other kind (bus or not) is left on it", self.label)
        if bool(others) != bool(self.mixed_fanout):
            # Their appends went unheard meanwhile: no state read before is known current.
            self.feed.void()
        self.mixed_fanout = others

    async def _watch_database(self) -> None:
        conn: psycopg.AsyncConnection | None = None
        try:
            while not self._closed:
                if self.available:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(PROBE_INTERVAL):
                            await self._suspect.wait()
                self._suspect.clear()
                try:
                    try:
                        conn = await self._probe(conn)
                    except (psycopg.Error, OSError, TimeoutError):
                        # That one connection may be all that died: ask once more, anew.
                        await _close_quietly(conn)
                        conn = await self._probe(None)
                except (psycopg.Error, OSError, TimeoutError) as exc:
                    await _close_quietly(conn)
                    conn = None
                    if self.available:
                        self._down_reason = (str(exc).strip().splitlines() or ["no answer"])[0][:200]
                        log.error("database%s unreachable: %s", self.label, self._down_reason)
                        self._set_available(False)
                    await asyncio.sleep(RETRY_INTERVAL)  # the retry period while it is down
                    continue
                if not self.available:
                    await self._renew_pool()
                    log.warning("database%s reachable again", self.label)
                    self._set_available(True)
        finally:
            await _close_quietly(conn)

    def _set_available(self, up: bool) -> None:
        self.available = up
        if self.on_availability is not None:
            try:
                self.on_availability(up)
            except Exception:
                log.exception("availability callback failed")

    async def _renew_pool(self) -> None:
        """A fresh pool: the old one's reconnection attempts back off for seconds."""
        if self._make_pool is None:
            await self._pool.check()
            return
        old, self._pool = self._pool, self._make_pool()
        await self._pool.open(wait=False)
        task = asyncio.get_running_loop().create_task(old.close(timeout=1.0))
        self._retired.add(task)
        task.add_done_callback(self._retired.discard)

    # -- watching -------------------------------------------------------------------------

    def _start_listener(self) -> None:
        if self._listener is None and not self._closed:
            self._listener = asyncio.create_task(self._listen(), name="tablier-store-listener")
            self._listener.add_done_callback(self._listener_done)

    async def _ready(self) -> None:
        self._start_listener()
        await self._listening.wait()

    async def _listen(self) -> None:
        delay = 0.05
        connected_before = False
        while not self._closed:
            try:
                # TCP keepalives: a connection silently dropped on the way (no reset) is found
                # within about 25 s, not the system's 2 hours, and the feed reported down.
                async with await psycopg.AsyncConnection.connect(
                    self._dsn,
                    autocommit=True,
                    application_name=_listener_name(bus=self.bus is not None),
                    keepalives=1,
                    keepalives_idle=10,
                    keepalives_interval=5,
                    keepalives_count=3,
                ) as conn:
                    # Notifications that come with the LISTEN statements' results, then those
                    # read by `_hear`, go through psycopg's handler to `_heard`.
                    conn.add_notify_handler(self._heard)
                    if self.bus is None:
                        await conn.execute(f"LISTEN {CHANNEL}")
                    await conn.execute(f"LISTEN {PLAYERS_CHANNEL}")
                    delay = 0.05
                    if connected_before and self.bus is None:
                        # Appends may have been announced while we were not listening.
                        self._hub.resync()
                    connected_before = True
                    if self.bus is None:
                        self.feed.connected()
                    self._listening.set()
                    await _hear(conn)
            except (psycopg.Error, OSError) as exc:
                log.warning("event listener%s connection lost: %s; reconnecting", self.label, exc)
            finally:
                if self.bus is None:
                    self.feed.lost()
            self._listening.clear()
            # Back off between reconnection attempts (not waiting for a condition).
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    def _listener_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            # A bug, not a lost connection: end the watches rather than leave them hanging.
            log.error("event listener failed", exc_info=task.exception())
            self.feed.lost()
            self._hub.close()
            self._listening.set()

    def _heard(self, note: psycopg.Notify) -> None:
        if note.channel == PLAYERS_CHANNEL:
            if self.player_notes is not None:
                self.player_notes(note.payload)
        else:
            self._on_notify(note.payload)

    def _on_notify(self, payload: str) -> None:
        key, _, seq = payload.rpartition(":")
        try:
            last = int(seq)
        except ValueError:
            log.warning("ignoring malformed %s notification %r", CHANNEL, payload)
            return
        self.feed.heard(key, last)
        self._hub.publish(key, last)

    async def last_seqs(self, games: list[str]) -> dict[str, int]:
        """The last seq of each of `games` (the bus's safety net), in one query."""

        async def read(conn: psycopg.AsyncConnection) -> dict[str, int]:
            cur = await conn.execute(
                """SELECT g.game_id::text, coalesce((SELECT max(seq) FROM events e WHERE e.game_id = g.game_id), 0)
                   FROM games g WHERE g.game_id = ANY(%s::uuid[])""",
                (games,),
            )
            return {str(game): int(seq) for game, seq in await cur.fetchall()}

        return await self._run(read)

    async def close(self) -> None:
        """Ends every watch, stops listening and closes the pool."""
        self._closed = True
        self.feed.lost()
        if self.bus is not None:
            await self.bus.close()
        self._hub.close()
        self._listening.set()  # releases watchers still waiting for the listener
        if self._monitor is not None:
            self._monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._monitor
            self._monitor = None
        await asyncio.gather(*self._retired, return_exceptions=True)
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        await self._pool.close()


async def _close_quietly(conn: psycopg.AsyncConnection | None) -> None:
    if conn is not None and not conn.closed:
        with contextlib.suppress(psycopg.Error, OSError):
            await conn.close()


async def _hear(conn: psycopg.AsyncConnection) -> None:
    """Reads the notifications of an idle LISTEN connection as they arrive, into the
    connection's notify handlers, until the connection fails (raised) or the task is cancelled.
    One reader kept on the socket: psycopg's `notifies()` waits afresh for every packet
    (a future, the socket added to and removed from the loop's selector, a timer): 34-39 us of
    CPU a notification under a PlayMove load against 14-15 us read this way, about 3% of a
    move's server CPU (docs/load-testing.md)."""
    pgconn = conn.pgconn
    fd = pgconn.socket
    loop = asyncio.get_running_loop()
    lost: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        try:
            pgconn.consume_input()
            while (pgn := pgconn.notifies()) is not None:
                if pgconn.notify_handler is not None:
                    pgconn.notify_handler(pgn)
        except Exception as exc:  # the connection failed (psycopg.OperationalError), or a handler did
            loop.remove_reader(fd)
            if not lost.done():
                lost.set_exception(exc)

    loop.add_reader(fd, readable)
    try:
        await lost
    finally:
        loop.remove_reader(fd)
