"""Auditing a stored match without trusting the server that wrote it.

For each event, in order: the seqs run 1, 2, ... without gaps; the chain hash recomputes from
the previous one (the first from the genesis hash of the match record); the stored kind is
what the core reads from the payload; the event applies to the state before it; the state
hash after it equals the stored one. The opening events must be exactly what the core's
`start` derives from the match's seed, so the deal was not chosen by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tablier import _core
from tablier.store.base import EventStore, NewEvent, UnknownGame, chain_hash, genesis_hash


@dataclass
class Verdict:
    game_id: str
    game_type: str = "?"
    events: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


async def verify_game(store: EventStore, game_id: str) -> Verdict:
    try:
        game = await store.get_game(game_id)
    except UnknownGame:
        return Verdict(game_id, problems=["no such match"])
    verdict = Verdict(game.game_id, game.game_type)
    events = await store.load_events(game.game_id)
    verdict.events = len(events)
    problems = verdict.problems
    try:
        match = _core.Match(game.game_type, game.seats, dict(game.options))
        opening = match.start(game.seed, 1)
    except _core.CoreError as exc:
        problems.append(f"the core refuses the match record: {exc}")
        return verdict
    stored_opening = [(e.kind, e.payload) for e in events[: len(opening)]]
    if stored_opening != [(k, bytes(p)) for k, p in opening]:
        problems.append("opening events differ from what the seed gives")

    prev = genesis_hash(game)
    for expected_seq, ev in enumerate(events, start=1):
        where = f"seq {ev.seq}"
        if ev.seq != expected_seq:
            problems.append(f"{where}: expected seq {expected_seq}")
            break
        new = NewEvent(ev.kind, ev.payload, ev.seat, ev.core_version, ev.state_hash)
        prev = chain_hash(prev, ev.seq, new, ev.command_id)
        if prev != ev.chain_hash:
            problems.append(f"{where}: chain hash mismatch")
            prev = ev.chain_hash  # report later breaks independently
        try:
            kind = match.event_kind(ev.payload)
            match.apply(ev.payload)
        except _core.CoreError as exc:
            problems.append(f"{where}: does not apply ({exc})")
            break
        if kind != ev.kind:
            problems.append(f"{where}: stored kind {ev.kind!r}, payload is {kind!r}")
        if match.state_hash() != ev.state_hash:
            problems.append(f"{where}: state hash mismatch (core {ev.core_version})")
    return verdict
