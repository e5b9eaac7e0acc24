"""Snapshots of past states: the nearest one at or before a seq, recent states included."""

from tablier._core import Match
from tablier.app.cache import Snapshots
from tablier.store.base import StoredEvent


def _match() -> Match:
    return Match("qwirkle", 2, {})


def test_before_takes_the_latest_of_snapshots_and_recent_states() -> None:
    snaps = Snapshots(every=32, recent=3)
    every, recent = _match(), _match()
    snaps.offer("g", 32, every, b"c32")
    assert snaps.before("g", 40)[0] == 32
    snaps.keep_recent("g", 38, recent, b"c38")
    assert snaps.before("g", 40) == (38, recent, b"c38")
    assert snaps.before("g", 37)[0] == 32  # a recent state after the seq asked is no start
    assert snaps.before("g", 31) is None


def test_recent_states_are_bounded_and_only_move_forward() -> None:
    snaps = Snapshots(every=32, recent=2)
    for seq in (5, 6, 7):
        snaps.keep_recent("g", seq, _match(), b"c%d" % seq)
    snaps.keep_recent("g", 6, _match(), b"older")  # behind the last kept: ignored
    assert snaps.before("g", 7)[2] == b"c7"
    assert snaps.before("g", 6)[2] == b"c6"
    assert snaps.before("g", 5) is None  # the oldest made room
    snaps.drop("g")
    assert snaps.before("g", 7) is None


def _events(first: int, last: int) -> list[StoredEvent]:
    return [
        StoredEvent("g", seq, "k", b"", None, None, "v", b"s", b"c%d" % seq, None)
        for seq in range(first, last + 1)
    ]


def test_held_events_answer_only_a_span_held_whole() -> None:
    snaps = Snapshots(tail=4)
    snaps.keep_events("g", _events(1, 3))
    snaps.keep_events("g", _events(3, 6))  # overlaps what is held: only the new ones are added
    assert [e.seq for e in snaps.events("g", 2, 6) or []] == [3, 4, 5, 6]
    assert [e.seq for e in snaps.events("g", 4, 5) or []] == [5]
    assert snaps.events("g", 1, 6) is None  # seq 2 made room: not all held
    assert snaps.events("g", 4, 7) is None  # past the tail
    snaps.keep_events("g", _events(9, 9))  # a gap: the tail starts again from it
    assert snaps.events("g", 5, 6) is None
    assert [e.seq for e in snaps.events("g", 8, 9) or []] == [9]
    snaps.drop("g")
    assert snaps.events("g", 8, 9) is None


def test_states_kept_for_reads_start_the_next_read_at_their_seq() -> None:
    snaps = Snapshots(every=32, recent=2)
    snaps.offer("g", 32, _match(), b"c32")
    for seq in (40, 50, 60):
        snaps.keep_read("g", seq, _match(), b"r%d" % seq)
    assert snaps.before("g", 55)[2] == b"r50"
    assert snaps.before("g", 45)[0] == 32  # 40 made room for 60
    assert snaps.before("g", 61)[2] == b"r60"
    snaps.drop("g")
    assert snaps.before("g", 61) is None
