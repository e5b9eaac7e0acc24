"""Checking a finished match from its public log and its revealed seed, with no database.

Once a match is over anyone may read it as the auditor (`x-tablier-role: auditor`): every
event unredacted, each with its chain hash, command id, core version and (on each command's
first event) what the command asked; the state carries the revealed seed. `tablier export`
writes that as a `tablier.v1.MatchLog`. From it, `verify_log` checks, trusting nothing the
server says:

1. the seed matches the commitment published when the match was created
   (SHA-256("tablier/seed-commitment\\0" || game id || seed)), and the one a viewer pinned;
2. the opening events are exactly what the core deals from the seed (`start(seed, seq 1)`);
3. every later command, decided again from what it asked and the seed (the RNG of the command
   appending at seq n is ChaCha20 keyed by the seed with stream n), gives exactly the events
   that follow it; so every chance outcome (deal, draw, reshuffle) is re-derived;
4. the chain: each event's hash recomputes from the previous one (the first from the genesis
   hash, which binds the commitment), with the state hash salted per match;
5. the outcome in the final state is the core's;
6. each viewer transcript (a log a seat or a spectator kept during the match, with the chain
   hashes it received): every event it received is the redaction, for that viewer, of the
   event at that seq, and carries the same chain hash; its head is in the chain. A log cut or
   rewritten after the viewer saw it is caught here.

The scheme is in docs/verifying.md for anyone writing their own verifier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from tablier import _core, receipts
from tablier.integrity import FORKED, LogEvent, opening, replay, seed_commitment
from tablier.store.base import CommandInput, GameRecord
from tablier.v1 import common_pb2, service_pb2


@dataclass
class PublicVerdict:
    game_id: str
    game_type: str = "?"
    events: int = 0
    # Commands decided again from the seed and found to give their events.
    redecided: int = 0
    # Viewer events checked against their unredacted event.
    transcript_events: int = 0
    problems: list[str] = field(default_factory=list)
    # A fork's lineage and how far it was checked ("" for a match that is not a fork).
    lineage: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


def read_log(path: str | Path) -> service_pb2.MatchLog:
    """A MatchLog file: protobuf JSON (what `tablier export` writes) or binary."""
    data = Path(path).read_bytes()
    log = service_pb2.MatchLog()
    if data.lstrip()[:1] == b"{":
        from tablier.api.server import load_protos

        load_protos()  # every game's messages, for the Any payloads
        json_format.Parse(data.decode(), log)
    else:
        log.ParseFromString(data)
    return log


def write_log(path: str | Path, log: service_pb2.MatchLog) -> None:
    Path(path).write_text(json_format.MessageToJson(log, indent=1) + "\n")


def verify_log(
    log: service_pb2.MatchLog,
    seed: bytes | None = None,
    transcripts: Sequence[service_pb2.MatchLog] = (),
    kept: Sequence[service_pb2.Receipt] = (),
    keys: Mapping[str, bytes] | None = None,
    parents: Sequence[service_pb2.MatchLog] = (),
) -> PublicVerdict:
    """Checks a finished match's public log; `kept`: signed receipts a client kept, checked
    against `keys` (key id -> Ed25519 public key), whose chain heads the log must hold. A
    fork's lineage is checked against its parent's public log when `parents` holds it (and
    the grandparent's for a fork of a fork, and so on)."""
    st = log.state
    verdict = PublicVerdict(st.game_id, st.game_type, len(log.events))
    problems = verdict.problems
    problems.extend(receipts.check_log(st.game_id, {ev.seq: ev.chain_hash for ev in log.events}, kept, keys or {}))
    seed = seed or st.seed
    if len(seed) != 32:
        problems.append("no revealed seed (it is published once the match is over; or give --seed)")
        return verdict
    if st.integrity_scheme < 2:
        problems.append(f"integrity scheme {st.integrity_scheme}: the match predates seed commitments")
        return verdict
    commitment = seed_commitment(st.game_id, seed)
    for name, pinned in [("the state's", st.seed_commitment), ("the pinned", log.pinned_commitment)] + [
        (f"transcript {i + 1}'s", t.pinned_commitment or t.state.seed_commitment) for i, t in enumerate(transcripts)
    ]:
        if pinned and pinned != commitment:
            problems.append(f"the seed does not match {name} seed commitment")

    game = GameRecord(
        st.game_id,
        st.game_type,
        st.seat_count,
        dict(st.options),
        seed,
        (),
        hash_scheme=st.integrity_scheme,
        **fork_lineage(st),
    )
    events = [_PublicEvent.of(ev) for ev in log.events]
    try:
        match = _core.Match(st.game_type, st.seat_count, dict(st.options))
        expected = opening(game, match, events[0] if events else None)
    except _core.CoreError as exc:
        problems.append(f"the core refuses the match ({exc})")
        return verdict
    # The viewers' events by seq: (transcript number, viewer, event).
    seen: dict[int, list[tuple[int, service_pb2.GameState, service_pb2.Event]]] = {}
    for i, t in enumerate(transcripts, start=1):
        if t.state.game_id != st.game_id:
            problems.append(f"transcript {i} is of match {t.state.game_id}, not {st.game_id}")
            continue
        for ev in t.events:
            seen.setdefault(ev.seq, []).append((i, t.state, ev))

    def redecide(ev: LogEvent, match: _core.Match) -> None:
        asked = events[ev.seq - 1].asked
        if asked is None:
            return
        again = _redecide(match, seed, asked, ev.seq, ev.command_id)
        if isinstance(again, str):
            problems.append(f"seq {ev.seq}: {again}")
        else:
            verdict.redecided += 1
            expected.update({ev.seq + i: (k, bytes(p)) for i, (k, p) in enumerate(again)})

    def check_seen(ev: LogEvent, match: _core.Match, chain: bytes) -> None:
        for i, viewer, got in seen.pop(ev.seq, []):
            verdict.transcript_events += 1
            _check_seen(match, ev.kind, ev.payload, chain, i, viewer, got, problems)

    # What each command asked, as its first event carries it (scheme 3 chains its digest).
    inputs = {ev.command_id: _asked(ev.asked) for ev in events if ev.command_id and ev.asked is not None}
    checked = replay(
        game, events, match, expected=expected, accounted=True, inputs=inputs, before=redecide, after=check_seen
    )
    problems.extend(str(p) for p in checked.problems)
    if not checked.complete:
        return verdict
    chains = checked.chains
    for seq, views in sorted(seen.items()):
        problems.append(f"seq {seq}: transcript {views[0][0]} received an event the log does not hold (cut?)")
    if st.seq and chains.get(st.seq, b"") != st.chain_head:
        problems.append(f"seq {st.seq}: the state's chain head is not the log's")
    for i, t in enumerate(transcripts, start=1):
        if t.state.chain_head and chains.get(t.state.seq) != t.state.chain_head:
            problems.append(f"seq {t.state.seq}: transcript {i}'s chain head is not in the log (cut or rewritten)")
    if not match.is_over():
        problems.append("the log does not reach the end of the match")
    elif st.HasField("outcome") and match.outcome() != st.outcome.SerializeToString():
        problems.append("the final state's outcome is not the core's")
    if st.HasField("fork"):
        _check_lineage(log, parents, verdict)
    return verdict


def _check_lineage(log: service_pb2.MatchLog, parents: Sequence[service_pb2.MatchLog], verdict: PublicVerdict) -> None:
    """A fork's public log against its parent's: the parent's log verifies, holds the head the
    fork names at its seq, and what the fork's opening started from (when the log holds it
    whole, as the auditor's export does) is the parent's: the seat's Position there, or the
    parent's events up to it."""
    f = log.state.fork
    verdict.lineage = f"fork of {f.parent_game_id} at seq {f.parent_seq}"
    parent = next((p for p in parents if p.state.game_id == f.parent_game_id), None)
    if parent is None:
        verdict.lineage += ": lineage not checked (give the parent's log with --parent)"
        return

    def problem(why: str) -> None:
        verdict.problems.append(f"lineage: {why}")

    checked = verify_log(parent, parents=[p for p in parents if p is not parent])
    if not checked.ok:
        problem(f"the parent's log does not verify: {'; '.join(checked.problems[:3])}")
    events = list(parent.events)
    at = f.parent_seq
    if len(events) < at or events[at - 1].seq != at:
        problem(f"the parent's log does not reach seq {at}")
        return
    if events[at - 1].chain_hash != f.parent_head:
        problem(f"the parent's chain hash at seq {at} is not the head the fork names")
    first = log.events[0] if log.events else None
    if first is None or first.type != FORKED:
        problem("the fork's first event is not a fork's opening")
        return
    opened = common_pb2.Forked.FromString(first.payload.value)
    if (opened.parent_game_id, opened.parent_seq, opened.parent_head) != (f.parent_game_id, at, f.parent_head):
        problem("the fork's opening names another parent, seq or head than its state")
    kind = opened.forked_as.WhichOneof("kind")
    if kind == "seat" and opened.position:
        st = parent.state
        state = _core.Match(st.game_type, st.seat_count, dict(st.options))
        try:
            state.apply_all([e.payload.value for e in events[:at]], [e.type for e in events[:at]])
            position = state.position(opened.forked_as.seat, auditor=True)
        except _core.CoreError as exc:
            problem(f"the parent's log does not replay to seq {at} ({exc})")
            return
        if position != opened.position:
            problem(f"the position the fork started from is not seat {opened.forked_as.seat}'s at seq {at}")
    elif kind == "auditor" and opened.parent_events:
        if [(e.kind, e.payload) for e in opened.parent_events] != [(e.type, e.payload.value) for e in events[:at]]:
            problem(f"the events the fork started from are not the parent's up to seq {at}")
    elif kind in ("seat", "auditor"):
        verdict.lineage += ": the head checked; what the fork started from is not in this log (export it --auditor)"
        return
    verdict.lineage += ": lineage checked against the parent's log"


def fork_lineage(st: service_pb2.GameState) -> dict[str, Any]:
    """A fork's lineage as its GameState publishes it (GameState.fork), as GameRecord fields
    (its genesis hash covers it); none for a match that is not a fork."""
    if not st.HasField("fork"):
        return {}
    f = st.fork
    kind = f.forked_as.WhichOneof("kind")
    return {
        "parent_game_id": f.parent_game_id,
        "parent_seq": f.parent_seq,
        "parent_head": f.parent_head,
        "fork_as": f"seat:{f.forked_as.seat}" if kind == "seat" else "auditor",
    }


@dataclass(frozen=True)
class _PublicEvent:
    """An event of a public log, as `tablier.integrity.replay` reads it."""

    seq: int
    kind: str
    payload: bytes
    seat: int | None
    command_id: str | None
    core_version: str
    state_hash: bytes
    chain_hash: bytes
    asked: service_pb2.CommandRecord | None
    recorded_at: datetime | None = None

    @classmethod
    def of(cls, ev: service_pb2.Event) -> _PublicEvent:
        return cls(
            ev.seq,
            ev.type,
            ev.payload.value,
            ev.seat if ev.HasField("seat") else None,
            ev.command_id or None,
            ev.core_version,
            ev.state_hash,
            ev.chain_hash,
            ev.command if ev.HasField("command") else None,
        )


def _asked(asked: service_pb2.CommandRecord) -> CommandInput:
    """A command record of a public log as the store keeps what a command asked."""
    return CommandInput(
        asked.seat if asked.HasField("seat") else None,
        asked.action.value if asked.HasField("action") else None,
        asked.host_command or None,
    )


def _redecide(
    match: _core.Match, seed: bytes, asked: service_pb2.CommandRecord, seq: int, command_id: str | None
) -> list[tuple[str, bytes]] | str:
    try:
        if asked.host_command:
            return match.host_command(asked.host_command, seed, seq)
        if not asked.HasField("seat"):
            return "a command with neither a seat nor a host command"
        return match.decide(asked.seat, asked.action.value, seed, seq)
    except _core.CoreError as exc:
        return f"command {command_id!r} is refused when decided again ({exc})"


def _check_seen(
    match: _core.Match,
    kind: str,
    payload: bytes,
    chain: bytes,
    i: int,
    viewer: service_pb2.GameState,
    got: service_pb2.Event,
    problems: list[str],
) -> None:
    where = f"seq {got.seq}: transcript {i}"
    if got.chain_hash and got.chain_hash != chain:
        problems.append(f"{where} received another chain hash than the log's (rewritten?)")
    auditor = viewer.role == service_pb2.ROLE_AUDITOR
    seat = viewer.seat if viewer.role == service_pb2.ROLE_SEAT else None
    if match.redact(payload, seat=seat, auditor=auditor, kind=kind) != got.payload.value:
        problems.append(f"{where} received an event that is not this event as its viewer may see it")
