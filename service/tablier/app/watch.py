"""Watching a match: one feed per match and process, shared by all its watchers.

A `MatchFeed` follows one match in the store (one `store.watch`), loads each new event once,
applies it to one shared state, and redacts it once per distinct viewer (every spectator is
the same viewer; each seat is one; the auditor is one): the (event, state) item is built once
and handed, as the same object, to every watcher of that viewer. An append therefore costs a
redaction per distinct viewer, not per watcher.

Each watcher has a bounded buffer. A watcher that does not read (its client stopped reading,
so its writes stall) finds its buffer full: it is dropped from the feed and its stream ends
with RESOURCE_EXHAUSTED `WATCH_BUFFER_FULL`, whose metadata `resume_after_seq` is the last seq
it was sent; the client resumes from there.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from contextlib import aclosing

from tablier._core import Match
from tablier.store.base import EventStore, GameRecord, StoredEvent

from .auth import Principal


class WatchItem(tuple):
    """(EventOut, MatchState) for one viewer. The same object reaches every watcher of that
    viewer, so a transport may keep its message for it on it (`rendered`) and build it once."""

    rendered: object = None

    @property
    def seq(self) -> int:
        return self[0].seq


class Subscriber:
    """One watcher's place in a feed: its buffer and how it ended."""

    __slots__ = ("principal", "items", "limit", "wakeup", "overflowed", "ended", "shutdown")

    def __init__(self, principal: Principal, limit: int) -> None:
        self.principal = principal
        self.items: deque[WatchItem] = deque()
        self.limit = limit
        self.wakeup = asyncio.Event()
        self.overflowed = False
        self.ended = False
        self.shutdown = False  # ended because this server is stopping (resume elsewhere)

    def push(self, item: WatchItem) -> None:
        if self.overflowed:
            return
        if len(self.items) >= self.limit:
            self.overflowed = True
            self.items.clear()
            self.wakeup.set()
            return
        self.items.append(item)
        self.wakeup.set()

    def end(self) -> None:
        self.ended = True
        self.wakeup.set()


EventOutFn = Callable[[GameRecord, Match, StoredEvent, Principal], object]
# (game, event, match, chain before it, seq before it) -> its chain hash: applies the event to
# the match, checked against the hash chain (raises the app's DataLoss on a damaged log).
StepFn = Callable[[GameRecord, StoredEvent, Match, bytes, int], bytes]
StateFn = Callable[[GameRecord, int, Match, Principal, bytes], object]


class MatchFeed:
    def __init__(self, feeds: Feeds, game: GameRecord, seq: int, match: Match, chain: bytes) -> None:
        self._feeds = feeds
        self.game = game
        self.seq = seq
        self.match = match
        self.chain = chain  # the chain hash at `seq`, verified
        self.subscribers: dict[Principal, list[Subscriber]] = {}
        self.error: BaseException | None = None
        self.done = match.is_over()
        self.task: asyncio.Task[None] | None = None
        if not self.done:
            self.task = asyncio.get_running_loop().create_task(self._run(), name=f"watch-feed-{game.game_id}")

    def subscribe(self, principal: Principal, limit: int) -> Subscriber:
        """A watcher that gets every event after `self.seq` (read it before awaiting)."""
        sub = Subscriber(principal, limit)
        if self.done:
            sub.end()
        else:
            self.subscribers.setdefault(principal, []).append(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        subs = self.subscribers.get(sub.principal)
        if subs is not None and sub in subs:
            subs.remove(sub)
            if not subs:
                del self.subscribers[sub.principal]
        if not self.subscribers and not self.done:
            self._stop()

    @property
    def watchers(self) -> int:
        return sum(len(s) for s in self.subscribers.values())

    def _stop(self) -> None:
        self.done = True
        self._feeds._forget(self)
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()

    async def _run(self) -> None:
        store, gid = self._feeds.store, self.game.game_id
        try:
            async with aclosing(store.watch(gid)) as latest_seqs:
                async for latest in latest_seqs:
                    if latest > self.seq:
                        for ev in await store.load_events(gid, after_seq=self.seq, upto_seq=latest):
                            self.chain = self._feeds.step(self.game, ev, self.match, self.chain, self.seq)
                            self.seq = ev.seq
                            self._fan_out(ev)
                        if self._feeds.after is not None:
                            self._feeds.after(self.game, self.match)
                    if self.match.is_over() or self.done:
                        break
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # handed to every watcher, whose stream maps it
            self.error = exc
        finally:
            self._stop()
            for subs in self.subscribers.values():
                for sub in subs:
                    sub.end()

    def _fan_out(self, ev: StoredEvent) -> None:
        event_out, state = self._feeds.event_out, self._feeds.state
        dropped = []
        for principal, subs in self.subscribers.items():
            out = event_out(self.game, self.match, ev, principal)
            if out is None:
                continue
            item = WatchItem((out, state(self.game, self.seq, self.match, principal, ev.chain_hash)))
            for sub in subs:
                sub.push(item)
                if sub.overflowed:
                    dropped.append(sub)
        for sub in dropped:  # it ends with WATCH_BUFFER_FULL once its transport moves again
            self.unsubscribe(sub)


class Feeds:
    """The feeds of one process, one per watched match."""

    def __init__(
        self, store: EventStore, event_out: EventOutFn, state: StateFn, step: StepFn,
        after: Callable[[GameRecord, Match], None] | None = None,
    ) -> None:
        self.store = store
        self.event_out = event_out
        self.state = state
        self.step = step
        # Called with the feed's state after each batch of new events (bot-seat backstops).
        self.after = after
        self._feeds: dict[str, MatchFeed] = {}

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
        return sum(f.watchers for f in self._feeds.values())

    @property
    def count(self) -> int:
        return len(self._feeds)

    def end_all(self) -> list[MatchFeed]:
        """Ends every watcher as the server stops: they resume on another server."""
        feeds = list(self._feeds.values())
        for feed in feeds:
            feed._stop()
            for subs in feed.subscribers.values():
                for sub in subs:
                    sub.shutdown = True
                    sub.end()
        return feeds

    async def close(self) -> None:
        feeds = self.end_all()
        await asyncio.gather(*(f.task for f in feeds if f.task is not None), return_exceptions=True)
