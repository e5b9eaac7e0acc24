"""Reads into the past (GetView at_seq, WatchGame after_seq) start from snapshots of the match
every few dozen events: what they serve must be what replaying the log gives, at every seq,
the first time (no snapshots yet) and after (from the snapshots)."""

from __future__ import annotations

from tablier.v1 import service_pb2 as pb

from .helpers import OPERATOR, bot_move, create, raw_events, replay_locally

WAIT = 20.0


def test_views_at_every_past_seq_are_the_replayed_ones(stub):
    created = create(stub, "qwirkle")
    state = created.state
    while state.seq < 120 and not state.over:
        state = bot_move(stub, created, state).state
    last = state.seq
    log = raw_events(stub, created.game_id).events
    assert [e.seq for e in log] == list(range(1, last + 1))
    for rounds in range(2):
        for k in [*range(1, last, 7), last - 1]:
            got = stub.GetView(pb.GetViewRequest(game_id=created.game_id, at_seq=k), metadata=OPERATOR).state
            assert got.seq == k
            assert got.view.value == replay_locally(stub, created, upto=k).view(auditor=True), (rounds, k)
            assert got.chain_head == log[k - 1].chain_hash


def test_a_watch_resumed_in_the_past_sends_the_log_from_there(stub):
    created = create(stub, "qwirkle")
    state = created.state
    while state.seq < 100 and not state.over:
        state = bot_move(stub, created, state).state
    log = raw_events(stub, created.game_id).events
    for after in (3, 40, 41, 75, state.seq - 2):
        stream = stub.WatchGame(pb.WatchGameRequest(game_id=created.game_id, after_seq=after),
                                metadata=OPERATOR, timeout=WAIT)
        seen = []
        for update in stream:
            seen.append((update.event.seq, update.event.payload.value))
            if update.state.seq >= state.seq:
                break
        stream.cancel()
        assert seen == [(e.seq, e.payload.value) for e in log if e.seq > after], after
        assert update.state.view.value == replay_locally(stub, created).view(auditor=True)
