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
from tablier.integrity import FORKED, LogEvent, check_commands, opening, replay
from tablier.seeds import SeedUnreadable
from tablier.store.base import EventStore, GameRecord, StoredCommand, StoredEvent, UnknownGame
from tablier.v1.common_pb2 import Forked
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
    # A fork's lineage, as checked against its parent's log ("" for a match that is not a fork).
    lineage: str = ""

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
    ancestry: tuple[str, ...] = (),
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
        expected = opening(game, match, events[0] if events else None)
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
    if game.parent_game_id is not None:
        await _check_lineage(store, game, events, verdict, ancestry)
    return verdict


async def _check_lineage(
    store: EventStore, fork: GameRecord, events: list[StoredEvent], verdict: Verdict, ancestry: tuple[str, ...]
) -> None:
    """A fork against its parent's log: the parent verifies (its own lineage too); its chain
    hash at the fork's seq is the head the fork's record (and so its genesis hash) names; the
    fork's opening event names the same lineage; and what the opening started from is the
    parent's: a seat's Position at that seq, or the parent's events up to it."""
    problems = verdict.problems
    parent_id, at, head = fork.parent_game_id or "", fork.parent_seq or 0, fork.parent_head or b""
    verdict.lineage = f"fork of {parent_id} at seq {at} ({fork.fork_as})"

    def problem(why: str) -> None:
        problems.append(f"lineage: {why}")

    if parent_id in ancestry:
        problem(f"the parent {parent_id} is the fork's own descendant")
        return
    parent_verdict = await verify_game(store, parent_id, ancestry=(*ancestry, fork.game_id))
    if not parent_verdict.ok:
        problem(f"the parent {parent_id} does not verify: {'; '.join(parent_verdict.problems[:3])}")
        if parent_verdict.problems == ["no such match"]:
            return
    parent = await store.get_game(parent_id)
    parent_events = await store.load_events(parent_id, upto_seq=at)
    if len(parent_events) < at:
        problem(f"the parent's log ends at seq {len(parent_events)}, before the fork's seq {at}")
        return
    if parent_events[at - 1].chain_hash != head:
        problem(f"the parent's chain hash at seq {at} is not the head the fork's record names")
    if not events or events[0].kind != FORKED:
        problem("the fork's first event is not a fork's opening")
        return
    opened = Forked.FromString(events[0].payload)
    kind = opened.forked_as.WhichOneof("kind")
    named = f"seat:{opened.forked_as.seat}" if kind == "seat" else kind
    if (opened.parent_game_id, opened.parent_seq, opened.parent_head, named) != (
        parent_id,
        at,
        head,
        fork.fork_as,
    ):
        problem("the fork's opening names another parent, seq, head or knowledge than its record")
    if kind == "seat":
        state = _core.Match(parent.game_type, parent.seats, dict(parent.options))
        try:
            state.apply_all([e.payload for e in parent_events], [e.kind for e in parent_events])
            position = state.position(opened.forked_as.seat, auditor=True)
        except _core.CoreError as exc:
            problem(f"the parent's log does not replay to seq {at} ({exc})")
            return
        if position != opened.position:
            problem(
                f"the position the fork started from is not seat {opened.forked_as.seat}'s at the parent's seq {at}"
            )
    elif [(e.kind, bytes(e.payload)) for e in opened.parent_events] != [
        (e.kind, bytes(e.payload)) for e in parent_events
    ]:
        problem(f"the events the fork started from are not the parent's up to seq {at}")


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
