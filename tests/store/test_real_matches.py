"""Whole matches of every registered game, played by the core's bots, through each store.

The core decides and evolves, the store keeps the events; replaying the stored log in a fresh
match must reproduce every recorded state hash, the chain, and the outcome. This checks that
payloads survive the store byte for byte, whatever the game.
"""

from __future__ import annotations

import hashlib
import uuid

import pytest

from storekit import recompute_chain
from tablier import _core
from tablier.store.base import CommandInput, GameRecord, NewEvent
from tablier.v1 import common_pb2
from tablier.verify import verify_game

MAX_COMMANDS = 20_000  # far beyond any real match; a bug that never ends fails, not hangs


def registered() -> list[common_pb2.GameType]:
    return [common_pb2.GameType.FromString(raw) for raw in _core.game_types()]


def cases() -> list[pytest.param]:
    return [
        pytest.param(t.id, seats, t.bots[0], id=f"{t.id}-{seats}p")
        for t in registered()
        for seats in sorted({t.min_players, t.max_players})
    ]


def evolve(match: _core.Match, decided: list[tuple[str, bytes]], seat: int | None) -> list[NewEvent]:
    events = []
    for kind, payload in decided:
        match.apply(payload)
        events.append(NewEvent(kind, payload, seat, _core.CORE_VERSION, match.state_hash()))
    return events


def record_for(game_type: str, seats: int, seed: bytes) -> GameRecord:
    return GameRecord(
        game_id=str(uuid.uuid4()),
        game_type=game_type,
        seats=seats,
        options={},
        seed=seed,
        token_hashes=tuple(hashlib.sha256(bytes([s])).digest() for s in range(seats)),
    )


@pytest.mark.parametrize(("game_type", "seats", "bot"), cases())
async def test_a_played_match_replays_from_the_store(backend, game_type, seats, bot):
    seed = hashlib.sha256(f"store-test/{game_type}/{seats}".encode()).digest()
    record = record_for(game_type, seats, seed)
    match = _core.Match(game_type, seats, {})
    async with backend.open() as store:
        opening = await store.create_game(record, evolve(match, match.start(seed, 1), None))
        seq = opening[-1].seq if opening else 0
        commands = 0
        while not match.is_over():
            assert commands < MAX_COMMANDS, "the match did not end"
            seat = match.to_act()[0]
            action = match.bot_action(seat, bot, seed, seq + 1)
            events = evolve(match, match.decide(seat, action, seed, seq + 1), seat)
            given = CommandInput(seat=seat, action=action)
            stored = await store.append(record.game_id, seq, events, f"cmd-{commands}", given)
            assert [e.payload for e in stored] == [e.payload for e in events]
            seq = stored[-1].seq if stored else seq
            commands += 1

        log = await store.load_events(record.game_id)
        assert [e.seq for e in log] == list(range(1, seq + 1))
        stored_record = await store.get_game(record.game_id)
        assert [e.chain_hash for e in log] == recompute_chain(stored_record, log)
        replay = _core.Match(game_type, seats, {})
        for e in log:
            assert replay.event_kind(e.payload) == e.kind
            replay.apply(e.payload)
            assert replay.state_hash() == e.state_hash, f"state after seq {e.seq} differs"
        assert replay.is_over()
        assert replay.outcome() == match.outcome()
        assert replay.view(auditor=True) == match.view(auditor=True)

        kept = await store.commands(record.game_id)
        assert [c.command_id for c in kept] == [f"cmd-{i}" for i in range(commands)]
        assert all(c.input is not None and c.input.action for c in kept)
        verdict = await verify_game(store, record.game_id)
        assert verdict.ok, verdict.problems
        assert (verdict.redecided, verdict.without_input) == (commands, 0)


async def test_verify_catches_a_later_deal_chosen_by_hand(backend):
    """A server that picks one later shuffle itself (here: draws it from another seed) and
    stores it with consistent state hashes and chain passes every check but re-deciding."""
    seed, chosen = hashlib.sha256(b"fair").digest(), hashlib.sha256(b"chosen").digest()
    record = record_for("democratie", 2, seed)
    match = _core.Match("democratie", 2, {})
    async with backend.open() as store:
        opening = await store.create_game(record, evolve(match, match.start(seed, 1), None))
        seq, commands, forged = opening[-1].seq, 0, None
        while not match.is_over() and commands < MAX_COMMANDS:
            seat = match.to_act()[0]
            action = match.bot_action(seat, "random", seed, seq + 1)
            fair = match.decide(seat, action, seed, seq + 1)
            decided = fair
            if forged is None and match.decide(seat, action, chosen, seq + 1) != fair:
                decided, forged = match.decide(seat, action, chosen, seq + 1), (seq + 1, f"cmd-{commands}")
            events = evolve(match, decided, seat)
            stored = await store.append(record.game_id, seq, events, f"cmd-{commands}",
                                        CommandInput(seat=seat, action=action))
            seq, commands = stored[-1].seq, commands + 1
        assert forged is not None, "no command drew randomness"

        verdict = await verify_game(store, record.game_id)
        first_seq, command_id = forged
        assert verdict.problems == [
            f"seq {first_seq}: command {command_id!r}: its events are not what the core decides from the seed"
        ]
        assert verdict.redecided == commands - 1
