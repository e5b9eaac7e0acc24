"""An LRU cache of match states at their last known seq. A cached state is only an
accelerator: callers check it against the log and drop it on any doubt."""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Sequence
from itertools import islice

from tablier._core import Match
from tablier.store.base import StoredEvent


class MatchCache:
    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, tuple[int, Match]] = OrderedDict()
        self.hits = 0  # lookups that found a state (metrics)
        self.misses = 0

    def get(self, game_id: str) -> tuple[int, Match] | None:
        entry = self._entries.get(game_id)
        if entry is not None:
            self._entries.move_to_end(game_id)
            self.hits += 1
        else:
            self.misses += 1
        return entry

    def peek(self, game_id: str) -> tuple[int, Match] | None:
        """As `get`, without counting a lookup or refreshing the entry."""
        return self._entries.get(game_id)

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


class Snapshots:
    """States of matches at past seqs, about every `every` events, for reads into the past
    (GetView at_seq, WatchGame resumed after a seq): such a read starts from the nearest
    snapshot at or before its seq and checks the events after it, instead of replaying the
    match from its first event. Each snapshot carries the chain hash of its last event, as
    verified when the state was made; the events read after it must chain to it.

    Besides those, the `recent` states a match's cached state replaced last (`keep_recent`): a
    watcher that reconnects a few events behind, the usual resume, then starts from its own
    seq or one command before it, with nothing to replay.

    And the last `recent` past states reads replayed to (`keep_read`): a replay viewer or a
    client reading at one past seq again starts from it, with nothing to read or replay.

    And the last `tail` events up to the cached state, as this server wrote or verified them
    (`keep_events`): what a watcher resumed within them is sent, replayed from a snapshot or
    recent state, comes from memory with no database round trip (`events`).

    The Match objects kept are never changed afterwards (callers copy before applying).
    Kept for the `matches` most recently used matches."""

    def __init__(self, every: int = 32, matches: int = 256, recent: int = 4, tail: int = 64) -> None:
        self.every = every
        self.capacity = matches
        self._by_match: OrderedDict[str, list[tuple[int, Match, bytes]]] = OrderedDict()
        self._recent: OrderedDict[str, deque[tuple[int, Match, bytes]]] = OrderedDict()
        self._tail: OrderedDict[str, deque[StoredEvent]] = OrderedDict()
        self._read: OrderedDict[str, deque[tuple[int, Match, bytes]]] = OrderedDict()
        self.recent = recent
        self.tail = tail

    def wants(self, game_id: str, seq: int) -> bool:
        """Whether a state at `seq` would be kept (none kept within `every` events before it)."""
        if self.capacity <= 0 or seq <= 0:
            return False
        snaps = self._by_match.get(game_id)
        if not snaps:
            return seq >= self.every
        below = [s for s, _, _ in snaps if s <= seq]
        return not below or seq - below[-1] >= self.every

    def offer(self, game_id: str, seq: int, match: Match, chain: bytes) -> None:
        """Keeps the state at `seq` if `wants` says so. `match` must not change afterwards."""
        if not self.wants(game_id, seq):
            return
        snaps = self._by_match.setdefault(game_id, [])
        snaps.append((seq, match, chain))
        snaps.sort(key=lambda s: s[0])
        self._by_match.move_to_end(game_id)
        while len(self._by_match) > self.capacity:
            self._by_match.popitem(last=False)

    def keep_recent(self, game_id: str, seq: int, match: Match, chain: bytes) -> None:
        """Keeps a state the cache just replaced with a later one (among the last `recent`).
        `match` must not change afterwards."""
        if self.capacity <= 0 or self.recent <= 0 or seq <= 0:
            return
        states = self._recent.get(game_id)
        if states is None:
            states = self._recent[game_id] = deque(maxlen=self.recent)
        elif states and states[-1][0] >= seq:
            return
        states.append((seq, match, chain))
        self._recent.move_to_end(game_id)
        while len(self._recent) > self.capacity:
            self._recent.popitem(last=False)

    def keep_read(self, game_id: str, seq: int, match: Match, chain: bytes) -> None:
        """Keeps a past state a read replayed to (among the match's last `recent`), so that
        reads at that seq again start from it. `match` must not change afterwards."""
        if self.capacity <= 0 or self.recent <= 0 or seq <= 0:
            return
        states = self._read.get(game_id)
        if states is None:
            states = self._read[game_id] = deque(maxlen=self.recent)
        elif any(s == seq for s, _, _ in states):
            return
        states.append((seq, match, chain))
        self._read.move_to_end(game_id)
        while len(self._read) > self.capacity:
            self._read.popitem(last=False)

    def keep_events(self, game_id: str, events: Sequence[StoredEvent]) -> None:
        """Adds `events` (consecutive seqs, verified or just written) to the match's tail; a
        gap after what is held starts the tail again from them."""
        if self.capacity <= 0 or self.tail <= 0 or not events:
            return
        held = self._tail.get(game_id)
        if held is None:
            held = self._tail[game_id] = deque(maxlen=self.tail)
        elif held:
            events = [e for e in events if e.seq > held[-1].seq]
            if events and events[0].seq != held[-1].seq + 1:
                held.clear()
        held.extend(events)
        self._tail.move_to_end(game_id)
        while len(self._tail) > self.capacity:
            self._tail.popitem(last=False)

    def events(self, game_id: str, after_seq: int, upto_seq: int) -> list[StoredEvent] | None:
        """The held events after `after_seq` up to `upto_seq`, or None unless all are held."""
        held = self._tail.get(game_id)
        if not held or held[0].seq > after_seq + 1 or held[-1].seq < upto_seq:
            return None
        self._tail.move_to_end(game_id)
        start = after_seq + 1 - held[0].seq
        return list(islice(held, start, start + upto_seq - after_seq))

    def holds(self, game_id: str, after_seq: int, upto_seq: int) -> bool:
        """Whether every event after `after_seq` up to `upto_seq` is held (see `events`)."""
        held = self._tail.get(game_id)
        return held is not None and bool(held) and held[0].seq <= after_seq + 1 and held[-1].seq >= upto_seq

    def held_events(self, game_id: str) -> list[StoredEvent]:
        """Every event held for the match (`keep_events`), in order."""
        return list(self._tail.get(game_id, ()))

    def before(self, game_id: str, seq: int) -> tuple[int, Match, bytes] | None:
        """The latest snapshot (or recent state, or state kept for reads) at or before `seq`."""
        found = None
        snaps = self._by_match.get(game_id)
        if snaps:
            self._by_match.move_to_end(game_id)
            for snap in snaps:
                if snap[0] > seq:
                    break
                found = snap
        for state in reversed(self._recent.get(game_id, ())):
            if state[0] <= seq:
                if found is None or state[0] > found[0]:
                    found = state
                break
        for state in self._read.get(game_id, ()):
            if state[0] <= seq and (found is None or state[0] > found[0]):
                found = state
        return found

    def drop(self, game_id: str) -> None:
        self._by_match.pop(game_id, None)
        self._recent.pop(game_id, None)
        self._tail.pop(game_id, None)
        self._read.pop(game_id, None)
