"""In-memory event store: the same contract as the PostgreSQL store, for tests and for
running the service without a database. Nothing survives the process.

One asyncio lock makes each append atomic; watchers in this process are woken directly.
Used from one event loop only.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from dataclasses import replace
from datetime import UTC, datetime

from tablier.store._shared import WatchHub, chain_events, game_key, new_game_key
from tablier.store.base import (
    Appended,
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
from tablier.store.players import MemoryPlayers


class MemoryStore:
    def __init__(self) -> None:
        self._games: dict[str, GameRecord] = {}
        self._events: dict[str, list[StoredEvent]] = {}
        # (game_id, command_id) -> (first_seq, last_seq, input)
        self._commands: dict[tuple[str, str], tuple[int, int, CommandInput | None]] = {}
        self._lock = asyncio.Lock()
        self._hub = WatchHub()
        self._clocks: set[str] = set()
        self.players = MemoryPlayers(self._games)

    async def create_game(self, game: GameRecord, events: list[NewEvent]) -> list[StoredEvent]:
        key = new_game_key(game.game_id)
        async with self._lock:
            if key in self._games:
                raise DuplicateGame(key)
            record = replace(
                game,
                game_id=key,
                options=dict(game.options),
                token_hashes=tuple(game.token_hashes),
                created_at=datetime.now(UTC),
            )
            stored = chain_events(key, genesis_hash(record), 0, events, None, record.created_at)
            self._games[key] = record
            self._events[key] = stored
            if game.clocked:
                self._clocks.add(key)
        if stored:
            self._hub.publish(key, stored[-1].seq)
        return list(stored)

    async def get_game(self, game_id: str) -> GameRecord:
        key = game_key(game_id)
        try:
            return self._games[key]
        except KeyError:
            raise UnknownGame(game_id) from None

    async def claim_seat(
        self, game_id: str, seat: int, token_hash: bytes, player_id: str | None = None
    ) -> GameRecord | None:
        key = game_key(game_id)
        async with self._lock:
            game = self._games.get(key)
            if game is None:
                raise UnknownGame(game_id)
            if 0 <= seat < game.seats and game.token_hashes[seat] == token_hash:
                return game  # claimed by this very claim before
            if not 0 <= seat < game.seats or not game.vacant(seat):
                return None
            hashes = list(game.token_hashes)
            hashes[seat] = token_hash
            claimed = replace(game, token_hashes=tuple(hashes))
            if player_id is not None:
                bound = list(game.seat_players or (None,) * game.seats)
                bound[seat] = player_id
                claimed = replace(claimed, seat_players=tuple(bound))
            self._games[key] = claimed
            return claimed

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
        async with self._lock:
            game = self._games.get(key)
            if game is None:
                raise UnknownGame(game_id)
            log = self._events[key]
            if command_id is not None and (key, command_id) in self._commands:
                first, last, _ = self._commands[key, command_id]
                return Appended(log[first - 1 : last], written=False)
            if expected_seq != len(log):
                raise SeqConflict(f"{key} is at seq {len(log)}, not {expected_seq}")
            prev = log[-1].chain_hash if log else genesis_hash(game)
            stored = chain_events(key, prev, expected_seq, events, command_id, datetime.now(UTC), command, chained)
            log.extend(stored)
            if command_id is not None:
                self._commands[key, command_id] = (expected_seq + 1, expected_seq + len(stored), command)
        if stored:
            self._hub.publish(key, stored[-1].seq)
        return Appended(stored, written=True)

    async def command_events(self, game_id: str, command_id: str) -> list[StoredEvent] | None:
        key = game_key(game_id)
        if key not in self._games:
            raise UnknownGame(game_id)
        span = self._commands.get((key, command_id))
        if span is None:
            return None
        return self._events[key][span[0] - 1 : span[1]]

    async def commands(self, game_id: str) -> list[StoredCommand]:
        key = game_key(game_id)
        if key not in self._games:
            raise UnknownGame(game_id)
        found = [
            StoredCommand(cid, first, last, given)
            for (k, cid), (first, last, given) in self._commands.items()
            if k == key
        ]
        return sorted(found, key=lambda c: c.first_seq)

    async def load_events(self, game_id: str, after_seq: int = 0, upto_seq: int | None = None) -> list[StoredEvent]:
        key = game_key(game_id)
        try:
            log = self._events[key]
        except KeyError:
            raise UnknownGame(game_id) from None
        end = len(log) if upto_seq is None else min(max(upto_seq, 0), len(log))
        return log[max(after_seq, 0) : end]

    def mark(self) -> tuple[int, int] | None:
        """None: a read always looks at the log (a dictionary lookup here)."""
        return None

    def current(self, game_id: str, seq: int, mark: tuple[int, int] | None) -> bool:
        return False

    async def last_seq(self, game_id: str) -> int:
        key = game_key(game_id)
        try:
            return len(self._events[key])
        except KeyError:
            raise UnknownGame(game_id) from None

    async def list_games(self) -> list[str]:
        return list(self._games)

    async def game_page(
        self,
        limit: int,
        game_type: str | None = None,
        before: tuple[datetime, str] | None = None,
        player_id: str | None = None,
        parent: str | None = None,
    ) -> list[GameRecord]:
        records = sorted(
            self._games.values(),
            key=lambda g: (g.created_at or datetime.min.replace(tzinfo=UTC), g.game_id),
            reverse=True,
        )
        page = [
            replace(g, seed=b"")
            for g in records
            if (game_type is None or g.game_type == game_type)
            and (player_id is None or player_id in g.seat_players)
            and (parent is None or g.parent_game_id == parent)
            and (before is None or (g.created_at or datetime.min.replace(tzinfo=UTC), g.game_id) < before)
        ]
        return page[:limit]

    async def running_clocks(self) -> list[str]:
        return sorted(self._clocks)

    async def clock_stopped(self, game_id: str) -> None:
        self._clocks.discard(game_key(game_id))

    def watch(self, game_id: str, known: Callable[[], int | None] | None = None) -> AsyncGenerator[int, None]:
        return self._hub.watch(game_key(game_id), self.last_seq, known=known)

    async def close(self) -> None:
        self._hub.close()
