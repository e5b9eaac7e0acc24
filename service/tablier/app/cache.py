"""An LRU cache of match states at their last known seq. A cached state is only an
accelerator: callers check it against the log and drop it on any doubt."""

from __future__ import annotations

from collections import OrderedDict

from tablier._core import Match


class MatchCache:
    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, tuple[int, Match]] = OrderedDict()

    def get(self, game_id: str) -> tuple[int, Match] | None:
        entry = self._entries.get(game_id)
        if entry is not None:
            self._entries.move_to_end(game_id)
        return entry

    def put(self, game_id: str, seq: int, match: Match) -> None:
        """Stores the state at `seq` unless a later one is cached already (states only move
        forward; a slower request must not swap an older state back in)."""
        if self.capacity <= 0:
            return
        current = self._entries.get(game_id)
        if current is not None and current[0] > seq:
            return
        self._entries[game_id] = (seq, match)
        self._entries.move_to_end(game_id)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def drop(self, game_id: str) -> None:
        self._entries.pop(game_id, None)

    def __len__(self) -> int:
        return len(self._entries)
