"""Auditing a stored match without trusting the server that wrote it.

The checks are `tablier.integrity.replay`'s, with every problem reported. For each event, in
order: the seqs run 1, 2, ... without gaps; the chain hash recomputes from
the previous one (the first from the genesis hash of the match record); the stored kind is
what the core reads from the payload; the event applies to the state before it; the state
hash after it equals the stored one. The opening events must be exactly what the core's
`start` derives from the match's seed, so the deal was not chosen by hand; and every later
command is decided again from what it asked (kept with the command) and the seed, and must
give exactly its stored events, so no later shuffle or draw was chosen by hand either.
Commands stored before their inputs were kept (schema version 1) cannot be decided again and
are counted apart. The `commands` rows must agree with the events (an acknowledged command's
events are all there and carry its id). Given transcripts (logs a client kept, with the chain
hashes it received), every event and head they pinned must still be in the log: a log cut or
rewritten after a client saw it fails here even when it is consistent in itself; and so does
one shorter than, or different from, a signed receipt a client kept (`tablier.receipts`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tablier import _core, receipts, witness
from tablier.integrity import LogEvent, check_commands, opening, replay
from tablier.seeds import SeedUnreadable
from tablier.store.base import EventStore, StoredCommand, StoredEvent, UnknownGame
from tablier.v1.service_pb2 import MatchLog, Receipt


@dataclass
class Verdict:
    game_id: str
    game_type: str = "?"
    events: int = 0
    # Commands decided again from the seed and found to give their stored events.
    redecided: int = 0
    # Commands stored without their input, which cannot be decided again.
    without_input: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


async def verify_game(
    store: EventStore,
    game_id: str,
    transcripts: Sequence[MatchLog] = (),
    kept: Sequence[Receipt] = (),
    keys: Mapping[str, bytes] | None = None,
    witnessed: witness.Chain | None = None,
) -> Verdict:
    """Checks the stored log of a match; `transcripts` and signed receipts (`kept`, checked
    against `keys`: key id -> Ed25519 public key) a client kept must agree with it."""
    try:
        game = await store.get_game(game_id)
    except UnknownGame:
        return Verdict(game_id, problems=["no such match"])
    except SeedUnreadable as exc:
        return Verdict(game_id, problems=[str(exc)])
    verdict = Verdict(game.game_id, game.game_type)
    events = await store.load_events(game.game_id)
    verdict.events = len(events)
    # By first event; a command that wrote no event has nothing to compare.
    stored_commands = await store.commands(game.game_id)
    commands = {c.first_seq: c for c in stored_commands if c.last_seq >= c.first_seq}
    problems = verdict.problems
    mismatch = check_commands(events, stored_commands)
    if mismatch is not None:
        problems.append(str(mismatch))
    problems.extend(check_transcripts(game.game_id, events, transcripts))
    chains = {e.seq: e.chain_hash for e in events}
    problems.extend(receipts.check_log(game.game_id, chains, kept, keys or {}))
    if witnessed is not None:
        problems.extend(witness.check_log(game.game_id, chains, witnessed))
    try:
        match = _core.Match(game.game_type, game.seats, dict(game.options))
        expected = opening(game, match)
    except _core.CoreError as exc:
        problems.append(f"the core refuses the match record: {exc}")
        return verdict

    def redecide(ev: LogEvent, match: _core.Match) -> None:
        command = commands.get(ev.seq)
        if command is not None:
            _redecide(match, game.seed, command, events, verdict)

    inputs = {c.command_id: c.input for c in stored_commands}
    checked = replay(game, events, match, expected=expected, kinds=True, resync=True, inputs=inputs, before=redecide)
    problems.extend(str(p) for p in checked.problems)
    return verdict


def check_transcripts(game_id: str, events: list[StoredEvent], transcripts: Sequence[MatchLog]) -> list[str]:
    """What the transcripts of this match pinned that the log no longer holds."""
    chains = {e.seq: e.chain_hash for e in events}
    problems = []
    for i, t in enumerate(transcripts, start=1):
        if t.state.game_id != game_id:
            continue
        pinned = [(ev.seq, ev.chain_hash) for ev in t.events if ev.chain_hash]
        if t.state.chain_head:
            pinned.append((t.state.seq, t.state.chain_head))
        for seq, chain in sorted(set(pinned)):
            if seq not in chains:
                problems.append(f"seq {seq}: transcript {i} received it; the log no longer holds it (cut)")
                break
            if chains[seq] != chain:
                problems.append(f"seq {seq}: transcript {i} received another event there (rewritten)")
                break
    return problems


def _redecide(
    match: _core.Match, seed: bytes, command: StoredCommand, events: list[StoredEvent], verdict: Verdict
) -> None:
    """Decides `command` again on the state before its first event and compares."""
    given = command.input
    if given is None:
        verdict.without_input += 1
        return
    where = f"seq {command.first_seq}: command {command.command_id!r}"
    try:
        if given.host_command is not None:
            again = match.host_command(given.host_command, seed, command.first_seq)
        else:
            again = match.decide(given.seat or 0, given.action or b"", seed, command.first_seq)
    except _core.CoreError as exc:
        verdict.problems.append(f"{where} is refused when decided again ({exc})")
        return
    stored = [(e.kind, bytes(e.payload)) for e in events[command.first_seq - 1 : command.last_seq]]
    if [(k, bytes(p)) for k, p in again] != stored:
        verdict.problems.append(f"{where}: its events are not what the core decides from the seed")
    else:
        verdict.redecided += 1
