"""What a process heard of appends on its LISTEN connection, and whether a state it read from
the store is still the latest: the freshness of cached states without a database round trip.

Every append queues its notification (`<game_id>:<last_seq>`) in its own transaction, so
PostgreSQL delivers it to every listener when the append commits (`pg_append`). A state read
from the store (or written by this process) after `mark()` was taken is the latest one for as
long as:

- the listener stayed connected since the mark (a reconnection starts a new epoch: what was
  said while it was away is unknown, so every mark taken before is void), and
- no notification for that match named a later seq since.

Notifications are kept per match in a bounded table (`capacity` matches, least recently
announced dropped first); a match whose entry was dropped after a mark was taken is unknown
again. When the listener is down, `mark()` is None and `current` is False: the caller asks the
database, as a server without a feed always does.

What "current" cannot tell: an append committed by another process whose notification is still
on its way (sent at its commit, typically received within a millisecond or two). A client that
must read its own write made through another server or connection passes the seq it got
(`min_seq` on the reads): a state below it is never taken as current.
"""

from __future__ import annotations

from collections import OrderedDict

# (epoch, notifications heard when the mark was taken)
Mark = tuple[int, int]

DEFAULT_CAPACITY = 65536


class NoteFeed:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self.up = False
        self.epoch = 0
        self._heard = 0
        # game -> (last seq heard, `_heard` when it was)
        self._seqs: OrderedDict[str, tuple[int, int]] = OrderedDict()
        # `_heard` of the newest entry dropped from `_seqs`.
        self._dropped = 0

    def mark(self) -> Mark | None:
        """Take before reading a match from the store (or appending to it); None when the
        feed is down (nothing read then is known to stay current)."""
        return (self.epoch, self._heard) if self.up else None

    def current(self, game_id: str, seq: int, mark: Mark | None) -> bool:
        """Whether the state at `seq`, read after `mark`, is still the match's latest."""
        if mark is None or not self.up or mark[0] != self.epoch:
            return False
        entry = self._seqs.get(game_id)
        if entry is None:
            return self._dropped <= mark[1]
        return entry[0] <= seq

    def heard(self, game_id: str, seq: int) -> None:
        """A notification: match `game_id` reached `seq`."""
        self._heard += 1
        entry = self._seqs.get(game_id)
        if entry is not None and entry[0] > seq:
            seq = entry[0]
        self._seqs[game_id] = (seq, self._heard)
        self._seqs.move_to_end(game_id)
        while len(self._seqs) > self.capacity:
            _, (_, heard) = self._seqs.popitem(last=False)
            self._dropped = heard

    def connected(self) -> None:
        """LISTEN is active on a new connection: notifications from now on arrive."""
        self.epoch += 1
        self.up = True

    def void(self) -> None:
        """Appends may have gone unheard (servers of the other kind came or went,
        `pg_database`): every mark taken before is void."""
        self.epoch += 1

    def lost(self) -> None:
        """The listener (or the database) went away: nothing is known to be current."""
        if self.up:
            self.epoch += 1
        self.up = False
