"""Watching a match: one feed per match and process, shared by all its watchers.

A `MatchFeed` follows one match in the store (one `Repository.watch`), loads each new event once,
applies it to one shared state, and redacts it once per distinct viewer (every spectator is
the same viewer; each seat is one; the auditor is one): the (event, state) item is built once
per viewer and appended to that viewer's log (`Viewer`). An append therefore costs a
redaction per distinct viewer, not per watcher.

Watchers are paced. A viewer's new items are released to its watchers together, at most once
per tick, and a watcher takes everything released since it last took, as one `WatchBatch`
(the same object for every watcher of the viewer that was at the same place, so a transport
renders it once). The tick is the pace (`PACE_PER_WATCHER`, `--watch-pace`) times the number
of watchers in the process: a lone watcher is sent each event at once, while each of 2,000
watchers gets one batch every two seconds, and the writes of all watchers stay a bounded
share of the event loop however many there are (each watcher makes at most one write per
tick). Nothing is lost or reordered: a batch is a contiguous run of the viewer's log.

Each watcher has a bounded buffer: it may lag at most `limit` released items behind the
viewer's log. A watcher that does not read (its client stopped reading, so its writes stall)
falls behind: it is dropped from the feed and its stream ends with RESOURCE_EXHAUSTED
`WATCH_BUFFER_FULL`, whose metadata `resume_after_seq` is the last seq it was sent; the client
resumes from there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import aclosing

from tablier._core import Match
from tablier.store.base import GameRecord, StoredEvent

from .auth import Principal
from .model import EventOut, MatchState
from .repository import Repository
from .views import event_out, match_state

# Seconds of tick per watcher in the process, by default (`--watch-pace`). A write of one
# message to one stream costs the event loop about 0.1-0.2 ms (grpc.aio, on a loaded 2-core
# VM); at most one write per watcher per tick, so at most 1,000 writes a second in all,
# keeps the watchers' writes to about a tenth to a fifth of the loop whatever their number.
PACE_PER_WATCHER = 1e-3
# Watchers woken per turn of the event loop when a release wakes many.
WAKE_SLICE = 64


class WatchItem:
    """(EventOut, MatchState) for one viewer. The same object reaches every watcher of that
    viewer, so a transport may render it once (keyed by the object: weak references work)."""

    __slots__ = ("event", "state", "__weakref__")

    def __init__(self, item: tuple[EventOut, MatchState]) -> None:
        self.event, self.state = item

    def __iter__(self) -> Iterator[EventOut | MatchState]:
        return iter((self.event, self.state))

    def __getitem__(self, index: int) -> EventOut | MatchState:
        return (self.event, self.state)[index]

    def __len__(self) -> int:
        return 2

    @property
    def seq(self) -> int:
        return self.event.seq


class WatchBatch(list[WatchItem]):
    """Consecutive `WatchItem`s of one viewer, oldest first, sent as one message where the
    transport allows it. Shared by the watchers that took the same run of items, so a
    transport may render it once (keyed by the object: weak references work)."""

    # Hashed as an object (a list is not hashable): batches equal as lists hold the same
    # items, so a rendering found through either is the right one.
    __hash__ = object.__hash__  # type: ignore[assignment]  # list sets it to None


class Subscriber:
    """One watcher's place in a feed: its viewer, how far it took, and how it ended."""

    __slots__ = ("principal", "viewer", "cursor", "taken", "limit", "waiting", "overflowed", "ended", "shutdown")

    def __init__(self, viewer: Viewer, limit: int) -> None:
        self.principal = viewer.principal
        self.viewer = viewer
        self.cursor = viewer.head  # index in the viewer's log of the next item to send
        self.taken = self.cursor  # ... once the batch taken last is sent (`sent`)
        self.limit = limit
        self.waiting: asyncio.Future[None] | None = None
        self.overflowed = False
        self.ended = False
        self.shutdown = False  # ended because this server is stopping (resume elsewhere)

    def take(self) -> WatchBatch | None:
        """Everything released since the last batch sent (None: nothing yet). It counts as
        buffered for this watcher until `sent`."""
        return None if self.overflowed else self.viewer.take(self)

    def sent(self) -> None:
        """The batch taken last was sent (its transport took all of it)."""
        self.cursor = self.taken

    async def wait(self) -> None:
        """Until the viewer releases items, or this watcher ends."""
        if self.ended or self.overflowed or self.cursor < self.viewer.released:
            return
        self.waiting = asyncio.get_running_loop().create_future()
        self.viewer.waiting[self] = None
        try:
            await self.waiting
        finally:
            self.waiting = None
            self.viewer.waiting.pop(self, None)  # still there if it was not woken (cancelled)

    def wake(self) -> None:
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_result(None)

    def end(self) -> None:
        self.ended = True
        self.wake()


class Viewer:
    """One viewer's log in a feed: the items built for it, and its watchers. Items up to
    `released` may be taken; the log keeps the last `limit` of them (and the unreleased)."""

    __slots__ = ("principal", "items", "base", "released", "subs", "waiting", "batches", "limit")

    def __init__(self, principal: Principal) -> None:
        self.principal = principal
        self.items: list[WatchItem] = []
        self.base = 0  # index of items[0] since the viewer was made
        self.released = 0
        self.subs: dict[Subscriber, None] = {}  # in subscription order
        self.waiting: dict[Subscriber, None] = {}  # watchers waiting for the next release
        self.batches: dict[int, WatchBatch] = {}  # this release's batches, by where they start
        self.limit = 1

    @property
    def head(self) -> int:
        return self.base + len(self.items)

    @property
    def unreleased(self) -> int:
        return self.head - self.released

    def take(self, sub: Subscriber) -> WatchBatch | None:
        start = sub.cursor
        if start >= self.released:
            return None
        batch = self.batches.get(start)
        if batch is None:
            batch = self.batches[start] = WatchBatch(self.items[start - self.base : self.released - self.base])
        sub.taken = self.released
        return batch

    def release(self) -> list[Subscriber]:
        """Releases every item built so far and wakes the waiting watchers; returns the
        watchers that fell more than their limit behind (now overflowed)."""
        if self.released == self.head:
            return []
        self.released = self.head
        self.batches.clear()
        dropped = [s for s in self.subs if self.released - s.cursor > s.limit]
        for sub in dropped:
            sub.overflowed = True
        # Keep what a watcher within its limit may still take (the overflowed take nothing).
        keep_from = self.released - self.limit
        if keep_from > self.base:
            del self.items[: keep_from - self.base]
            self.base = keep_from
        waiting, self.waiting = list(self.waiting), {}
        _wake(waiting)
        for sub in dropped:
            sub.wake()
        return dropped


def _wake(subs: list[Subscriber], start: int = 0) -> None:
    """Wakes `WAKE_SLICE` watchers now and the next ones on the loop's next turn, so that
    calls arriving meanwhile are served between the slices rather than after all the writes."""
    for sub in subs[start : start + WAKE_SLICE]:
        sub.wake()
    if start + WAKE_SLICE < len(subs):
        asyncio.get_running_loop().call_soon(_wake, subs, start + WAKE_SLICE)


class MatchFeed:
    def __init__(self, feeds: Feeds, game: GameRecord, seq: int, match: Match, chain: bytes) -> None:
        self._feeds = feeds
        self.game = game
        self.seq = seq
        self.match = match
        self.chain = chain  # the chain hash at `seq`, verified
        self.viewers: dict[Principal, Viewer] = {}
        self.error: BaseException | None = None
        self.done = match.is_over()
        self.task: asyncio.Task[None] | None = None
        self._released_at = float("-inf")  # loop time of the last release
        self._timer: asyncio.TimerHandle | None = None
        if not self.done:
            self.task = asyncio.get_running_loop().create_task(self._run(), name=f"watch-feed-{game.game_id}")

    def subscribe(self, principal: Principal, limit: int) -> Subscriber:
        """A watcher that gets every event after `self.seq` (read it before awaiting)."""
        viewer = self.viewers.get(principal)
        if viewer is None:
            viewer = Viewer(principal)
            if not self.done:
                self.viewers[principal] = viewer
        sub = Subscriber(viewer, limit)
        if self.done:
            sub.end()
        else:
            viewer.subs[sub] = None
            viewer.limit = max(viewer.limit, limit)
            self._feeds.watching += 1
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        viewer = sub.viewer
        if sub in viewer.subs:
            del viewer.subs[sub]
            self._feeds.watching -= 1
            if not viewer.subs and self.viewers.get(sub.principal) is viewer:
                del self.viewers[sub.principal]
        if not self.viewers and not self.done:
            self._stop()

    @property
    def watchers(self) -> int:
        return sum(len(v.subs) for v in self.viewers.values())

    def _stop(self) -> None:
        self.done = True
        self._feeds._forget(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()

    async def _run(self) -> None:
        repo, gid = self._feeds.repository, self.game.game_id
        try:
            # The first seq from the held head when the feed of appends says it is current.
            async with aclosing(repo.watch(gid)) as latest_seqs:
                async for latest in latest_seqs:
                    if latest > self.seq:
                        events = await repo.new_events(gid, self.seq, latest)
                        if any(self.game.vacant(s) for s in range(self.game.seats)):
                            # A seat joined since (through any server) shows in the states sent
                            # from now on: the record is read after the events, so it is as
                            # recent as they are.
                            self.game = await repo.game(gid)
                        for ev in events:
                            self.chain = repo.checked_step(self.game, ev, self.match, self.chain, self.seq)
                            self.seq = ev.seq
                            self._fan_out(ev)
                        self._pace()
                        repo.seen(self.game, self.seq, self.match)
                    if self.match.is_over() or self.done:
                        break
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # handed to every watcher, whose stream maps it
            self.error = exc
        finally:
            self._stop()
            self._release()  # what was built reaches the watchers before they end
            for viewer in self.viewers.values():
                for sub in viewer.subs:
                    sub.end()

    def _fan_out(self, ev: StoredEvent) -> None:
        catalogue = self._feeds.repository.catalogue
        full = False
        for principal, viewer in self.viewers.items():
            out = event_out(catalogue, self.game, self.match, ev, principal)
            if out is None:
                continue
            state = match_state(catalogue, self.game, self.seq, self.match, principal, ev.chain_hash)
            viewer.items.append(WatchItem((out, state)))
            full = full or viewer.unreleased >= viewer.limit
        if full:  # a watcher that kept up must never lag more than its limit behind
            self._release()

    def _pace(self) -> None:
        """Releases the new items now if a tick has passed since the last release, else
        at the end of that tick."""
        if self._timer is not None or self.done:
            return
        loop = asyncio.get_running_loop()
        due = self._released_at + self._feeds.tick()
        if loop.time() >= due:
            self._release()
        else:
            self._timer = loop.call_at(due, self._release)

    def _release(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._released_at = asyncio.get_running_loop().time()
        dropped = []
        for viewer in self.viewers.values():
            dropped += viewer.release()
        for sub in dropped:  # it ends with WATCH_BUFFER_FULL once its transport moves again
            self.unsubscribe(sub)


class Feeds:
    """The feeds of one process, one per watched match."""

    def __init__(self, repository: Repository, pace: float = PACE_PER_WATCHER) -> None:
        """The feeds read the log through `repository`, check each event against its verified
        chain (`Repository.checked_step`) and tell it what they applied (`Repository.seen`)."""
        self.repository = repository
        self._feeds: dict[str, MatchFeed] = {}
        self.watching = 0  # watchers subscribed to a feed of this process
        self.pace = pace  # seconds of tick per watcher

    def tick(self) -> float:
        """The shortest time between two releases of one feed (see `PACE_PER_WATCHER`)."""
        return self.watching * self.pace

    def feed(self, game: GameRecord, seq: int, match: Match, chain: bytes) -> MatchFeed:
        """The match's feed, started at (seq, a copy of match, its chain hash) if there is
        none yet."""
        feed = self._feeds.get(game.game_id)
        if feed is None or feed.done:
            feed = MatchFeed(self, game, seq, match.copy(), chain)
            if not feed.done:
                self._feeds[game.game_id] = feed
        return feed

    def _forget(self, feed: MatchFeed) -> None:
        if self._feeds.get(feed.game.game_id) is feed:
            del self._feeds[feed.game.game_id]

    @property
    def watchers(self) -> int:
        return self.watching

    @property
    def count(self) -> int:
        return len(self._feeds)

    def end_all(self) -> list[MatchFeed]:
        """Ends every watcher as the server stops: they resume on another server."""
        feeds = list(self._feeds.values())
        for feed in feeds:
            feed._stop()
            feed._release()
            for viewer in feed.viewers.values():
                for sub in viewer.subs:
                    sub.shutdown = True
                    sub.end()
        return feeds

    async def close(self) -> None:
        feeds = self.end_all()
        await asyncio.gather(*(f.task for f in feeds if f.task is not None), return_exceptions=True)
