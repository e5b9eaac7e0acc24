"""The event store over several PostgreSQL databases (shards): `base.EventStore`, each match
on exactly one shard (`shard_map`: names, placement, the checks at start).

A match's shard is chosen when it is created (rendezvous hashing of its game id over the open
shards that answer) and recorded in the directory's `match_directory` before the match is written there; a
match with no row lives on the directory database. Where a match lives is cached once known (a
match never moves). Everything about one match (appends, the hash chain, receipts, commands,
seat claims, watching, its clock) is its shard's `PostgresStore`, unchanged. Players, ratings
and the queue are the directory's (`shard_parts`).

A shard down: the calls on its matches fail as `StoreUnavailable` naming the shard (the API's
UNAVAILABLE, DATABASE_UNAVAILABLE), the other shards' matches are served. ListGames needs every
shard (a lobby page merged from the shards that answer would skip matches without saying):
while one is down it is UNAVAILABLE, naming it. `available` (health, `tablier_database_up`) is
the directory's: a shard outage is the same for every server, so taking servers out of rotation
would not help; it is logged, and in `shards_up` (`tablier_shard_up`).

Shards added live: `tablier shards add NAME URL` records the shard in the directory's `shards`
table and notifies `tablier_players` with `shards`; every server (on the directory's LISTEN
connection) then opens the shards it lacks, and new matches go to them too. A server meeting a
match on a shard it has not opened yet reads the table at once.

With a fan-out bus (`--bus`), each shard's store announces its appends and follows its watched
matches over its own NATS connection (`bus.NatsBus`, `bus` here sums their figures). The
freshness of cached states then stays off (`mark()` is None: reads ask the shard): each bus's
feed counts on its own, and one mark, taken before the match is known, cannot carry one per
shard. Watching and moves are unaffected; only reads of a held state cost a query.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg

from tablier.seeds import SeedKeys
from tablier.store import shard_map
from tablier.store._shared import game_key, new_game_key
from tablier.store.base import (
    Appended,
    CommandInput,
    DuplicateGame,
    GameRecord,
    NewEvent,
    StoredCommand,
    StoredEvent,
    StoreUnavailable,
)
from tablier.store.feed import Mark
from tablier.store.postgres import PostgresStore
from tablier.store.ratings import PgRatings
from tablier.store.shard_map import SHARDS_NOTE, ShardConfigError, ShardSpec
from tablier.store.shard_open import open_shard
from tablier.store.shard_parts import ShardedPlayers, SharedFeed

if TYPE_CHECKING:
    from tablier.store.bus import NatsBus

log = logging.getLogger(__name__)

# Seconds between attempts to open a shard that could not be opened.
RETRY_INTERVAL = 1.0
# Where matches live, remembered (a match never moves).
_WHERE_CACHE_SIZE = 1 << 18


class BusGroup:
    """The shards' buses as one, for the metrics (`NatsBus.stats`): up only while every one is,
    the counts summed."""

    def __init__(self) -> None:
        self.members: list[NatsBus] = []

    def stats(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for bus in self.members:
            for key, value in bus.stats().items():
                total[key] = min(total.get(key, value), value) if key == "up" else total.get(key, 0) + value
        return total


class ShardedStore:
    """An `EventStore` over shards (see the module docstring); `shard_open.open_sharded` makes one."""

    def __init__(
        self,
        directory: str,
        shards: dict[str, PostgresStore],
        seed_keys: SeedKeys | None,
        timeout: float,
        urls: dict[str, str] | None = None,
        bus: str | None = None,
    ):
        self.directory_name = directory
        # The NATS server each shard's appends are announced on (None: LISTEN/NOTIFY).
        self._bus_url = bus
        self.bus: BusGroup | None = BusGroup() if bus else None
        self.directory = shards[directory]
        self.shards: dict[str, PostgresStore] = {}
        self._seed_keys = seed_keys
        self._timeout = timeout
        self._monitoring = False
        self._where: OrderedDict[str, str] = OrderedDict()
        self._reloading: asyncio.Lock | None = None
        # The URLs this server was given (by shard name): used over the directory's `shards`.
        self._urls = dict(urls or {})
        # Shards known (the directory lists them) but not opened yet, and why: their matches
        # are UNAVAILABLE, ListGames too, until a retry opens them (`_retry`).
        self.pending: dict[str, str] = {}
        self._retrying: asyncio.Task[None] | None = None
        self._closed = False
        self.feed = SharedFeed()
        self.players = ShardedPlayers(self, self.directory.players)
        # The directory's rating streams, queue and list of ranked matches to rate (each
        # listed there before the append that ends it, whatever its shard).
        self.ratings = PgRatings(self.directory)
        self.on_availability: Callable[[bool], None] | None = None
        # Told the running clocks of a shard opened after it was pending (the server resumes
        # them: `Repository.resume_ids`).
        self.on_resume: Callable[[list[str]], Awaitable[None]] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.directory.on_availability = self._directory_availability
        forward = self.directory.player_notes
        self.directory.player_notes = lambda note: self._directory_note(note, forward)
        for name, shard in shards.items():
            self._join(name, shard)

    # -- the shards -----------------------------------------------------------------------

    def _join(self, name: str, shard: PostgresStore) -> None:
        shard.label = f" (shard {name})"
        shard.feed = self.feed.source()
        if self._bus_url and self.bus is not None:
            from tablier.store.bus import NatsBus

            bus = NatsBus(self._bus_url)
            shard.use_bus(bus)  # its feed is the bus's from now on: `SharedFeed` stays down
            self.bus.members.append(bus)
        self.shards[name] = shard
        self.players.joined(shard)
        if self._monitoring:
            shard.start_monitor()

    def start_monitor(self) -> None:
        self._monitoring = True
        for shard in self.shards.values():
            shard.start_monitor()
        self._retry_pending()

    def _retry_pending(self) -> None:
        if self.pending and self._monitoring and self._retrying is None and not self._closed:
            self._retrying = asyncio.get_running_loop().create_task(self._retry(), name="tablier-shards-retry")

    async def _retry(self) -> None:
        """Tries the shards not opened yet, every RETRY_INTERVAL s, until all are open."""
        try:
            while self.pending and not self._closed:
                await asyncio.sleep(RETRY_INTERVAL)  # the retry period while a shard is unreachable
                try:
                    await self.reload()
                except StoreUnavailable as exc:
                    log.warning("shards not reloaded: %s", exc)
        finally:
            self._retrying = None

    @property
    def available(self) -> bool:
        return self.directory.available

    def shards_up(self) -> dict[str, bool]:
        return {name: shard.available for name, shard in self.shards.items()} | dict.fromkeys(self.pending, False)

    def _directory_availability(self, up: bool) -> None:
        if self.on_availability is not None:
            self.on_availability(up)

    def _directory_note(self, note: str, forward: Callable[[str], None] | None) -> None:
        if note == SHARDS_NOTE:
            self._spawn(self.reload())
        elif forward is not None:
            forward(note)

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_log_failure)

    async def _resume(self, name: str, shard: PostgresStore) -> None:
        if self.on_resume is not None:
            with self.naming(name):
                waiting = await shard.running_clocks()
            await self.on_resume(waiting)

    async def reload(self) -> list[str]:
        """Opens the shards the directory's `shards` lists that this store lacks; returns
        their names. One that cannot be opened now is `pending` (retried); one that is another
        shard than named is pending too, with the reason, and logged as an error."""
        if self._reloading is None:
            self._reloading = asyncio.Lock()
        async with self._reloading:
            with self.naming(self.directory_name):
                rows = await self.directory._run(shard_map.registered)
            added = []
            for name, url in rows:
                if name in self.shards or self._closed:
                    continue
                url = self._urls.get(name, url)
                try:
                    _, shard = await open_shard(
                        ShardSpec(url, name), max(len(self.shards), 1), self._seed_keys, self._timeout
                    )
                except (StoreUnavailable, ShardConfigError) as exc:
                    if self.pending.get(name) != str(exc):
                        log.error("shard %s cannot be opened: %s", name, exc)
                    self.pending[name] = str(exc)
                    continue
                was_pending = self.pending.pop(name, None) is not None
                self._join(name, shard)
                if was_pending:
                    self._spawn(self._resume(name, shard))
                log.warning("shard %s joined (%s)", name, shard_map.redact(url))
                added.append(name)
            self._retry_pending()
            return added

    @contextlib.contextmanager
    def naming(self, name: str) -> Iterator[None]:
        """StoreUnavailable raised within names the shard."""
        try:
            yield
        except StoreUnavailable as exc:
            raise StoreUnavailable(f"shard {name}: {exc}") from exc

    async def locate(self, game_id: str) -> tuple[str, PostgresStore]:
        """The shard of a match (UnknownGame for an id that is not a match id)."""
        key = game_key(game_id)
        name = self._where.get(key)
        if name is None:
            with self.naming(self.directory_name):
                name, known = await self.directory._run(lambda conn: _lookup(conn, key))
            if name is None:
                # No row: the directory database's, if it is there (made before sharding);
                # not remembered otherwise (it may be being created through another server).
                name = self.directory_name
            if known:
                self._remember(key, name)
        shard = self.shards.get(name)
        if shard is None and name not in self.pending:
            await self.reload()
            shard = self.shards.get(name)
        if shard is None:
            if name in self.pending:
                raise StoreUnavailable(f"shard {name}: not opened yet ({self.pending[name]})")
            raise StoreUnavailable(f"match {key} is on shard {name}, which is not in the directory's shards")
        return name, shard

    def _remember(self, key: str, name: str) -> None:
        self._where[key] = name
        while len(self._where) > _WHERE_CACHE_SIZE:
            self._where.popitem(last=False)

    # -- one match: its shard's -------------------------------------------------------------

    async def create_game(self, game: GameRecord, events: list[NewEvent]) -> list[StoredEvent]:
        key = new_game_key(game.game_id)
        # Among the shards answering (a new match need not wait for one that is down).
        chosen = shard_map.rendezvous(key, [n for n, s in self.shards.items() if s.available] or list(self.shards))
        with self.naming(self.directory_name):
            placed = await self.directory._run(lambda conn: _place(conn, key, chosen))
        if placed is None:
            raise DuplicateGame(key)
        shard = self.shards.get(placed) or (await self.locate(key))[1]
        self._remember(key, placed)
        with self.naming(placed):
            return await shard.create_game(game, events)

    async def get_game(self, game_id: str) -> GameRecord:
        name, shard = await self.locate(game_id)
        with self.naming(name):
            record = await shard.get_game(game_id)
        await self._names(record)
        return record

    async def claim_seat(
        self, game_id: str, seat: int, token_hash: bytes, player_id: str | None = None
    ) -> GameRecord | None:
        name, shard = await self.locate(game_id)
        with self.naming(name):
            record = await shard.claim_seat(game_id, seat, token_hash, player_id)
        if record is not None:
            await self._names(record)
        return record

    async def _names(self, *records: GameRecord) -> None:
        """The players' names are the directory's (a shard's own `players` table is empty)."""
        if any(r.seat_players for r in records):
            with self.naming(self.directory_name):
                await self.players.learn_names(p for r in records for p in r.seat_players)

    async def append(
        self,
        game_id: str,
        expected_seq: int,
        events: list[NewEvent],
        command_id: str | None,
        command: CommandInput | None = None,
        chained: bytes = b"",
    ) -> Appended:
        name, shard = await self.locate(game_id)
        with self.naming(name):
            return await shard.append(game_id, expected_seq, events, command_id, command, chained)

    async def command_events(self, game_id: str, command_id: str) -> list[StoredEvent] | None:
        name, shard = await self.locate(game_id)
        with self.naming(name):
            return await shard.command_events(game_id, command_id)

    async def commands(self, game_id: str) -> list[StoredCommand]:
        name, shard = await self.locate(game_id)
        with self.naming(name):
            return await shard.commands(game_id)

    async def load_events(self, game_id: str, after_seq: int = 0, upto_seq: int | None = None) -> list[StoredEvent]:
        name, shard = await self.locate(game_id)
        with self.naming(name):
            return await shard.load_events(game_id, after_seq, upto_seq)

    async def last_seq(self, game_id: str) -> int:
        name, shard = await self.locate(game_id)
        with self.naming(name):
            return await shard.last_seq(game_id)

    async def clock_stopped(self, game_id: str) -> None:
        name, shard = await self.locate(game_id)
        with self.naming(name):
            await shard.clock_stopped(game_id)

    async def watch(self, game_id: str, known: Callable[[], int | None] | None = None) -> AsyncGenerator[int, None]:
        name, shard = await self.locate(game_id)
        with self.naming(name):
            async with contextlib.aclosing(shard.watch(game_id, known)) as seqs:
                async for seq in seqs:
                    yield seq

    def mark(self) -> Mark | None:
        if self.bus is not None or not all(s.available for s in self.shards.values()):
            return None
        return self.feed.mark()

    def current(self, game_id: str, seq: int, mark: Mark | None) -> bool:
        return all(s.available and not s.mixed_fanout for s in self.shards.values()) and self.feed.current(
            game_id, seq, mark
        )

    @property
    def mixed_fanout(self) -> int:
        """Servers of the other kind (bus or not) on the shards (`pg_database`), all counted."""
        return sum(s.mixed_fanout for s in self.shards.values())

    # -- every shard -----------------------------------------------------------------------

    async def _each(self, op: Callable[[str, PostgresStore], Any]) -> list[Any]:
        """`op` on every shard at once; StoreUnavailable naming the first shard down."""
        for name, reason in self.pending.items():
            raise StoreUnavailable(f"shard {name}: not opened yet ({reason})")
        shards = list(self.shards.items())
        results = await asyncio.gather(*(op(n, s) for n, s in shards), return_exceptions=True)
        for (name, _), result in zip(shards, results, strict=True):
            if isinstance(result, StoreUnavailable):
                raise StoreUnavailable(f"shard {name}: {result}") from result
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results

    async def list_games(self) -> list[str]:
        pages = await self._each(lambda _, s: s._run(_every_game))
        return [gid for _, gid in sorted(row for page in pages for row in page)]

    async def game_page(
        self,
        limit: int,
        game_type: str | None = None,
        before: tuple[datetime, str] | None = None,
        player_id: str | None = None,
        parent: str | None = None,
    ) -> list[GameRecord]:
        # Keyset paging merged: each shard's `limit` newest before the cursor, merged, cut.
        # The page's last record is the cursor of the next, so pages neither skip nor repeat.
        pages = await self._each(lambda _, s: s.game_page(limit, game_type, before, player_id, parent))
        merged = sorted((g for page in pages for g in page), key=lambda g: (g.created_at, g.game_id), reverse=True)[
            :limit
        ]
        await self._names(*merged)
        return merged

    async def running_clocks(self) -> list[str]:
        """Every shard's; a shard down is logged and skipped (its matches' clocks are taken up
        by their next command, or by the next server to start)."""
        found: list[str] = []
        for name, reason in self.pending.items():
            log.error("shard %s is not opened (%s): its running clocks are not taken up now", name, reason)
        for name, shard in list(self.shards.items()):
            try:
                found += await shard.running_clocks()
            except StoreUnavailable as exc:
                log.error("shard %s is unreachable (%s): its running clocks are not taken up now", name, exc)
        return sorted(found)

    async def reseal_seeds(self) -> int:
        done = 0
        for name, shard in list(self.shards.items()):
            with self.naming(name):
                done += await shard.reseal_seeds()
        return done

    def pool_stats(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for shard in self.shards.values():
            for k, v in shard.pool_stats().items():
                total[k] = total.get(k, 0) + v
        return total

    async def close(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._retrying is not None:
            self._retrying.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retrying
        self.feed.lost()
        await asyncio.gather(*(s.close() for s in self.shards.values()))


async def _lookup(conn: psycopg.AsyncConnection, key: str) -> tuple[str | None, bool]:
    """(the match's shard, or None when no row; whether the match is known to exist)."""
    cur = await conn.execute(
        """SELECT (SELECT shard FROM match_directory WHERE game_id = %(g)s),
                  EXISTS (SELECT FROM games WHERE game_id = %(g)s)""",
        {"g": key},
    )
    row = await cur.fetchone()
    assert row is not None
    return (None if row[0] is None else str(row[0])), row[0] is not None or bool(row[1])


async def _place(conn: psycopg.AsyncConnection, key: str, chosen: str) -> str | None:
    """Records a new match's shard (`chosen`, unless a row exists already: a retry, or the
    same id created twice, which the shard then refuses). None when a match made before
    sharding has this id on the directory database."""
    cur = await conn.execute(
        """WITH ins AS (
               INSERT INTO match_directory (game_id, shard)
               SELECT %(g)s, %(s)s WHERE NOT EXISTS (SELECT FROM games WHERE game_id = %(g)s)
               ON CONFLICT (game_id) DO NOTHING RETURNING shard)
           SELECT shard FROM ins UNION ALL SELECT shard FROM match_directory WHERE game_id = %(g)s""",
        {"g": key, "s": chosen},
    )
    row = await cur.fetchone()
    return None if row is None else str(row[0])


async def _every_game(conn: psycopg.AsyncConnection) -> list[tuple[datetime, str]]:
    cur = await conn.execute("SELECT created_at, game_id FROM games ORDER BY created_at, game_id")
    return [(r[0], str(r[1])) for r in await cur.fetchall()]


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("shards: %s", task.exception())
