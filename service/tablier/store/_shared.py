"""Pieces both stores share: game id validation, hash chaining and the watcher fan-out.

`WatchHub` keeps, per match, the watchers of this process. A store calls `publish(game_id,
last_seq)` when it learns of an append (its own, or for PostgreSQL one announced by NOTIFY),
and `resync()` when it may have missed some (the LISTEN connection was lost): every watcher
then re-reads the match's last seq from the store. `watch()` turns this into the async
iterator of `EventStore.watch`: the current last seq first, then each later, higher one.
Watchers coalesce: a watcher that is slow to resume gets the latest seq, not every one.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from datetime import datetime

from tablier.store.base import CommandInput, NewEvent, StoredEvent, UnknownGame, chain_hash


def game_key(game_id: str) -> str:
    """The canonical form of a match id (a UUID); UnknownGame when it is not one."""
    try:
        return _canonical(game_id)
    except (ValueError, TypeError, AttributeError):
        raise UnknownGame(game_id) from None


@functools.lru_cache(maxsize=8192)  # asked on every store call, mostly for ids of matches in play
def _canonical(game_id: str) -> str:
    return str(uuid.UUID(game_id))


def new_game_key(game_id: str) -> str:
    """As `game_key`, for an id about to be created: ValueError when it is not a UUID."""
    try:
        return str(uuid.UUID(game_id))
    except (ValueError, TypeError, AttributeError):
        raise ValueError(f"game_id must be a UUID, got {game_id!r}") from None


class _Watcher:
    __slots__ = ("generation", "latest", "wakeup")

    def __init__(self, generation: int) -> None:
        self.latest = 0
        self.generation = generation
        self.wakeup = asyncio.Event()


class WatchHub:
    def __init__(self) -> None:
        self._watchers: dict[str, set[_Watcher]] = {}
        self._generation = 0
        self._closed = False

    def publish(self, game_id: str, last_seq: int) -> None:
        for w in self._watchers.get(game_id, ()):
            if last_seq > w.latest:
                w.latest = last_seq
                w.wakeup.set()

    def resync(self) -> None:
        """Every watcher re-reads its match's last seq before waiting again."""
        self._generation += 1
        for watchers in self._watchers.values():
            for w in watchers:
                w.wakeup.set()

    def close(self) -> None:
        """Ends every watch."""
        self._closed = True
        for watchers in self._watchers.values():
            for w in watchers:
                w.wakeup.set()

    async def watch(
        self,
        game_id: str,
        last_seq: Callable[[str], Awaitable[int]],
        ready: Callable[[], Awaitable[None]] | None = None,
        known: Callable[[], int | None] | None = None,
    ) -> AsyncGenerator[int, None]:
        """`last_seq(game_id)` reads the store; `ready()` returns once the store will hear of
        every later append (for PostgreSQL: once LISTEN is active); `known()`, asked after
        that, may answer the first seq instead of `last_seq` (`EventLog.watch`): an append
        heard from then on reaches this watcher, so nothing falls between the two."""
        w = _Watcher(self._generation)
        # Registered before the first read, so an append between the two is not missed.
        self._watchers.setdefault(game_id, set()).add(w)
        try:
            if ready is not None:
                await ready()
            if self._closed:
                return
            first = None if known is None else known()
            sent = first if first is not None else await last_seq(game_id)
            w.latest = max(w.latest, sent)
            yield sent
            while not self._closed:
                if w.generation != self._generation:
                    w.generation = self._generation
                    w.latest = max(w.latest, await last_seq(game_id))
                if w.latest > sent:
                    sent = w.latest
                    yield sent
                    continue
                w.wakeup.clear()
                if self._closed or w.generation != self._generation or w.latest > sent:
                    continue
                await w.wakeup.wait()
        finally:
            watchers = self._watchers.get(game_id)
            if watchers is not None:
                watchers.discard(w)
                if not watchers:
                    del self._watchers[game_id]


def chain_events(
    game_id: str,
    prev: bytes,
    expected_seq: int,
    events: list[NewEvent],
    command_id: str | None,
    recorded_at: datetime | None = None,
    command: CommandInput | None = None,
    chained: bytes = b"",
) -> list[StoredEvent]:
    """The rows for `events` appended after seq `expected_seq`, whose chain hash is `prev`
    (`chained`: the command's input as the chain covers it, `EventLog.append`)."""
    stored = []
    for seq, event in enumerate(events, start=expected_seq + 1):
        prev = chain_hash(prev, seq, event, command_id, chained)
        stored.append(
            StoredEvent(
                game_id=game_id,
                seq=seq,
                kind=event.kind,
                payload=event.payload,
                seat=event.seat,
                command_id=command_id,
                core_version=event.core_version,
                state_hash=event.state_hash,
                chain_hash=prev,
                recorded_at=recorded_at,
                command=command if command_id is not None else None,
            )
        )
    return stored
