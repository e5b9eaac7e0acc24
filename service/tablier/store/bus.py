"""The fan-out bus (`tablier serve --bus nats://HOST:PORT`): committed appends announced over NATS
instead of PostgreSQL's LISTEN/NOTIFY on the events channel.

Publishing: once an append COMMITS, the store calls `committed(game_id, seq, chain_hash)`, and
the bus publishes on subject `tablier.events.<game id>` the payload `encode(seq, chain)`: the
last seq the append wrote as 8 bytes big-endian, then its chain hash (32 bytes). The appends then
queue no NOTIFY (`pg_append`: no notification lock held through their commit flush, no backend
woken per commit). A publish never delays or fails a move: while NATS is away it is dropped,
counted (`tablier_bus_publish_failures_total`) and logged once per outage.

Hearing: a server subscribes only to the matches its watchers follow (`watch`: the first
watcher of a match subscribes, the last one to leave unsubscribes), and hands what it hears to
the store's watchers (`WatchHub`) and to its feed of freshness (`BusFeed`).

The bus is a hint, the log is the truth. A watcher told of seq N reads every event up to N from
PostgreSQL (`app.watch.MatchFeed`), so a lost message costs nothing once a later one arrives;
and a match quiet for `quiet` seconds has its last seq re-read from the log (one query for all
such matches, `_safety_net`), so a message lost at a match's last move delays its watchers by at
most about twice `quiet`. When the connection to NATS is lost, every state read before is no
longer known to be current; nats-py reconnects and subscribes again, and then every watcher
re-reads its match's last seq (`WatchHub.resync`), as after a lost LISTEN connection.

Freshness of cached states (`BusFeed.current`): only a match subscribed since before a state
was read can be told current. The matches held in the cache are not subscribed: the cache
holds up to thousands of matches, most with nobody watching them here, and subscribing them
would bring back, per message, the fan-out to every server that NOTIFY had. What this costs is
small: commands always read the log's tail (`Repository.load`), and only reads of a match no
watcher follows on this server (GetView, ListLegalMoves) ask the database instead of the cache.
A lost message may leave a watched match's cached state taken as current until the next
message or the safety net (`quiet`); a client that must read its own write passes `min_seq`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from nats.aio.client import Client as Nats
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.errors import Error as NatsError

from tablier.store.feed import Mark, NoteFeed

if TYPE_CHECKING:
    from tablier.store.pg_database import Database

log = logging.getLogger(__name__)

SUBJECT_PREFIX = "tablier.events."
# Seconds a followed match may stay silent before its last seq is re-read from the log.
QUIET_S = 2.0
# Seconds a new watcher waits for its subscription before it reads the log anyway.
SUBSCRIBE_WAIT_S = 2.0
_SEQ = struct.Struct(">Q")


def subject(game_id: str) -> str:
    return SUBJECT_PREFIX + game_id


def encode(seq: int, chain: bytes) -> bytes:
    """The payload: the last seq written (8 bytes, big-endian), then its chain hash."""
    return _SEQ.pack(seq) + chain


def decode(payload: bytes) -> tuple[int, bytes]:
    """(seq, chain hash); ValueError for a payload that is not one."""
    if len(payload) < _SEQ.size:
        raise ValueError(f"bus payload of {len(payload)} bytes")
    return _SEQ.unpack_from(payload)[0], payload[_SEQ.size :]


class BusFeed(NoteFeed):
    """`NoteFeed` over the bus: a state is current only if its match was subscribed (the
    subscription confirmed by NATS) before the state was read, and stayed so."""

    def __init__(self) -> None:
        super().__init__()
        # game -> `_heard` when its subscription was confirmed
        self._since: dict[str, int] = {}

    def subscribed(self, game_id: str) -> None:
        self._heard += 1
        self._since[game_id] = self._heard

    def unsubscribed(self, game_id: str) -> None:
        self._since.pop(game_id, None)

    def last_heard(self, game_id: str) -> int | None:
        entry = self._seqs.get(game_id)
        return None if entry is None else entry[0]

    def current(self, game_id: str, seq: int, mark: Mark | None) -> bool:
        since = self._since.get(game_id)
        if since is None or mark is None or since > mark[1]:
            return False
        return super().current(game_id, seq, mark)


class NatsBus:
    """One NATS connection per store: publishes its appends, subscribes its watched matches."""

    def __init__(self, url: str, quiet: float = QUIET_S) -> None:
        self.url = url
        self.quiet = quiet
        self.feed = BusFeed()
        self._db: Database | None = None
        self._nc: Nats | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False
        # Publishing: what waits for the publisher task.
        self._outbox: list[tuple[str, bytes]] = []
        self._outbox_ready = asyncio.Event()
        # Following: watchers per match, the subscriptions made, the new ones' confirmations.
        self._follows: dict[str, int] = {}
        self._subs: dict[str, Subscription] = {}
        self._active: set[str] = set()  # subscriptions NATS confirmed
        self._confirmed: dict[str, asyncio.Event] = {}
        self._changed = asyncio.Event()
        self._last_heard: dict[str, float] = {}
        # Counters (metrics, `stats`).
        self.published = 0
        self.publish_failures = 0
        self.received = 0
        self.repaired = 0  # seqs the safety net found that no message had told
        self._dropping = False  # publishes failing: logged once
        self._unreachable = False  # connection attempts failing: logged once

    @property
    def up(self) -> bool:
        return self._nc is not None and self._nc.is_connected

    def stats(self) -> dict[str, int]:
        return {
            "up": int(self.up),
            "published": self.published,
            "publish_failures": self.publish_failures,
            "received": self.received,
            "repaired": self.repaired,
            "subscriptions": len(self._subs),
        }

    # -- life -----------------------------------------------------------------------------

    def start(self, db: Database) -> None:
        """Takes over `db`'s feed of appends and starts connecting (in the background: a
        server starts, and serves moves, while NATS is down)."""
        self._db = db
        db.feed = self.feed
        loop = asyncio.get_running_loop()
        for run, name in ((self._connect, "connect"), (self._publisher, "publish"), (self._follower, "follow")):
            self._tasks.append(loop.create_task(run(), name=f"tablier-bus-{name}"))
        self._tasks.append(loop.create_task(self._safety_net(), name="tablier-bus-safety-net"))

    async def close(self) -> None:
        self._closed = True
        self.feed.lost()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._nc is not None:
            with contextlib.suppress(NatsError, OSError, TimeoutError):
                async with asyncio.timeout(2):
                    await self._nc.close()

    async def _connect(self) -> None:
        """Connects, trying again and again while NATS is away (nats-py does, told to retry
        forever; `_error` logs the first failure of each outage)."""
        delay = 0.1
        while not self._closed:
            nc = self._nc = Nats()  # kept from the start, so `close` ends its attempts too
            try:
                await nc.connect(
                    self.url,
                    name="tablier",
                    connect_timeout=2,
                    reconnect_time_wait=1,
                    max_reconnect_attempts=-1,
                    ping_interval=5,
                    max_outstanding_pings=2,
                    disconnected_cb=self._disconnected,
                    reconnected_cb=self._reconnected,
                    error_cb=self._error,
                )
            except (TimeoutError, NatsError, OSError) as exc:
                log.warning("bus %s not reachable (%s); retrying", self.url, exc or type(exc).__name__)
                with contextlib.suppress(NatsError, OSError, asyncio.TimeoutError):
                    await nc.close()
                await asyncio.sleep(delay)  # backing off between attempts, not waiting for a condition
                delay = min(delay * 2, 2.0)
                continue
            log.info("bus connected: %s", self.url)
            self._changed.set()  # subscribe what watchers already follow
            await self._reconnected()
            return

    async def _disconnected(self) -> None:
        if not self._closed:
            log.warning("bus connection lost: watchers fall back to re-reading the log")
        self.feed.lost()

    async def _reconnected(self) -> None:
        """Subscriptions are active again (nats-py replays them before this): nothing heard
        while away is known, so every watcher re-reads its match's last seq."""
        if self._closed:
            return
        self._unreachable = False
        if self._dropping:
            log.warning("bus reachable again after %d unpublished appends", self.publish_failures)
            self._dropping = False
        self.feed.connected()
        self._active = set(self._subs)  # nats-py made them again, confirmed by its flush
        for game in self._subs:
            self.feed.subscribed(game)
        self._release_ready()
        self._changed.set()  # what watchers began to follow meanwhile
        if self._db is not None:
            self._db._hub.resync()

    async def _error(self, exc: Exception) -> None:
        if self._unreachable:
            log.debug("bus: %s", exc)
        else:
            self._unreachable = True
            log.warning("bus %s: %s; retrying", self.url, str(exc) or type(exc).__name__)

    # -- publishing -----------------------------------------------------------------------

    def committed(self, game_id: str, seq: int, chain: bytes) -> None:
        """An append committed: announce it (soon, on the publisher task)."""
        if not self.up:
            self._failed("not connected")
            return
        self._outbox.append((subject(game_id), encode(seq, chain)))
        self._outbox_ready.set()

    def _failed(self, why: str) -> None:
        self.publish_failures += 1
        if not self._dropping:
            self._dropping = True
            log.warning("bus publish failed (%s): watchers elsewhere learn of appends from the log", why)

    async def _publisher(self) -> None:
        while True:
            await self._outbox_ready.wait()
            self._outbox_ready.clear()
            batch, self._outbox = self._outbox, []
            nc = self._nc
            for subj, payload in batch:
                try:
                    if nc is None:
                        raise NatsError("not connected")
                    await nc.publish(subj, payload)
                    self.published += 1
                except (NatsError, OSError) as exc:
                    self._failed(str(exc) or type(exc).__name__)

    # -- following ------------------------------------------------------------------------

    async def watch(self, game_id: str, seqs: AsyncGenerator[int, None]) -> AsyncGenerator[int, None]:
        """`seqs` (the store's `WatchHub.watch` of `game_id`) while the match is followed."""
        self._follows[game_id] = self._follows.get(game_id, 0) + 1
        self._changed.set()
        try:
            async with contextlib.aclosing(seqs):
                async for seq in seqs:
                    yield seq
        finally:
            left = self._follows[game_id] - 1
            if left:
                self._follows[game_id] = left
            else:
                del self._follows[game_id]
                self.feed.unsubscribed(game_id)
                self._changed.set()

    async def ready(self, game_id: str) -> None:
        """Returns once the match's subscription is active (from then on every message
        published reaches this server), or after SUBSCRIBE_WAIT_S, or at once while the
        bus is down: the safety net covers what a missing subscription misses."""
        if not self.up:
            return
        if game_id in self._active:
            return
        event = self._confirmed.setdefault(game_id, asyncio.Event())
        self._changed.set()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SUBSCRIBE_WAIT_S):
                await event.wait()

    async def _follower(self) -> None:
        """Brings the subscriptions in line with the followed matches, in batches: one
        round trip to NATS confirms every subscription made in a pass."""
        while True:
            await self._changed.wait()
            self._changed.clear()
            nc = self._nc
            if nc is None or not nc.is_connected:
                continue  # `_reconnected`/`_connect` set `_changed` again
            try:
                for game in [g for g in self._subs if g not in self._follows]:
                    self._active.discard(game)
                    self._last_heard.pop(game, None)
                    await self._subs.pop(game).unsubscribe()
                new = [g for g in self._follows if g not in self._subs]
                for game in new:
                    self._subs[game] = await nc.subscribe(subject(game), cb=self._on_message)
                await nc.flush(timeout=2)
            except (TimeoutError, NatsError, OSError) as exc:
                log.warning("bus subscription failed (%s); retrying on reconnection", exc or type(exc).__name__)
                continue
            now = asyncio.get_running_loop().time()
            self._active.update(new)
            for game in new:
                if game in self._follows:
                    self.feed.subscribed(game)
                    self._last_heard[game] = now
            self._release_ready()

    def _release_ready(self) -> None:
        """Releases the watchers waiting in `ready` for a subscription now active, or for a
        match no longer followed."""
        for game in [g for g in self._confirmed if g in self._active or g not in self._follows]:
            self._confirmed.pop(game).set()

    async def _on_message(self, msg: Msg) -> None:
        game = msg.subject[len(SUBJECT_PREFIX) :]
        try:
            seq, _ = decode(msg.data)
        except ValueError as exc:
            log.warning("ignoring bus message on %s: %s", msg.subject, exc)
            return
        self.received += 1
        self._last_heard[game] = asyncio.get_running_loop().time()
        self._heard(game, seq)

    def _heard(self, game: str, seq: int) -> None:
        self.feed.heard(game, seq)
        if self._db is not None:
            self._db._hub.publish(game, seq)

    async def _safety_net(self) -> None:
        """Every `quiet` seconds, re-reads from the log the last seq of every followed match
        not heard from for that long (all of them while the bus is down), in one query."""
        while True:
            await asyncio.sleep(self.quiet)  # a period, not a wait for a condition
            db = self._db
            if db is None or not db.available:
                continue
            now = asyncio.get_running_loop().time()
            quiet = [g for g in self._follows if not self.up or now - self._last_heard.get(g, 0.0) >= self.quiet]
            if not quiet:
                continue
            try:
                found = await db.last_seqs(quiet)
            except Exception as exc:  # the database away: tried again next period
                log.info("bus safety net: %s", exc)
                continue
            for game, seq in found.items():
                self._last_heard[game] = now
                known = self.feed.last_heard(game)
                if known is not None and seq > known:
                    self.repaired += 1
                self._heard(game, seq)
