"""The integrity of a match's log, in one place: the formulas (the genesis hash, the chain of
event hashes, the salted state hashes, the seed commitment) and the one loop that replays a log
and checks it against them (`replay`), with the checks around it: the `commands` rows against
the events (`check_commands`), and the strict replay the server runs when it loads a match
(`replay_strict`: the first problem raises `Damaged`, which the repository turns into DataLoss
refusing the match). Its callers are the server's repository (`app/repository.py`), `tablier
verify` over a stored log (`verify.py`) and `tablier verify-public` over a finished match's
public log (`public_verify.py`): the same checks, each caller adding what only it has (the
commands' inputs to decide again, the viewers' transcripts, the verified heads it holds). docs/verifying.md states the scheme for
anyone writing their own verifier.

It stays in the server's distribution: replaying a log needs the rules core (`tablier._core`),
which the pure-Python SDK (`tablier-client`) does not ship; the formulas alone are SHA-256 over
bytes, which docs/verifying.md gives for a client to recompute (`tests/e2e/test_public_verify.py`
does it with hashlib only).
"""

from __future__ import annotations

import functools
import hashlib
import json
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from tablier import _core

if TYPE_CHECKING:
    from tablier.store.base import GameRecord, StoredCommand, StoredEvent


class EventFields(Protocol):
    """What the chain hash of an event covers, besides its seq and command id."""

    @property
    def kind(self) -> str: ...
    @property
    def payload(self) -> bytes: ...
    @property
    def seat(self) -> int | None: ...
    @property
    def core_version(self) -> str: ...
    @property
    def state_hash(self) -> bytes: ...


class LogEvent(EventFields, Protocol):
    """One event of a log as the checks read it: a stored event, or one of a public log."""

    @property
    def seq(self) -> int: ...
    @property
    def command_id(self) -> str | None: ...
    @property
    def chain_hash(self) -> bytes: ...
    @property
    def recorded_at(self) -> datetime | None: ...


# The integrity scheme of new matches (`GameRecord.hash_scheme`, the games row's
# `hash_scheme`): 1 plain state hashes; 2 salted state hashes and the seed commitment in the
# genesis hash; 3 as 2, and each event of a command chains the digest of the command's input
# (`command_digest`). A log keeps verifying under the scheme it was written with.
HASH_SCHEME = 3


class CommandFields(Protocol):
    """What a command asked (a stored `CommandInput`, a public log's `CommandRecord` read back)."""

    @property
    def seat(self) -> int | None: ...
    @property
    def action(self) -> bytes | None: ...
    @property
    def host_command(self) -> str | None: ...


def command_digest(command_id: str, command: CommandFields | None) -> bytes:
    """The digest of a command's input that scheme 3 chains into each of its events:
    SHA-256("tablier/command\\0" || u32 len || command id || i64 seat (-1: none) ||
    u32 len || action bytes || u32 len || host command), big-endian, strings UTF-8; a command
    without a kept input hashes as seat -1 with both empty."""
    seat = -1 if command is None or command.seat is None else command.seat
    h = hashlib.sha256(b"tablier/command\0")
    cid = command_id.encode()
    h.update(struct.pack(">I", len(cid)) + cid + struct.pack(">q", seat))
    for part in (
        (command.action or b"") if command is not None else b"",
        (command.host_command or "").encode() if command is not None else b"",
    ):
        h.update(struct.pack(">I", len(part)))
        h.update(part)
    return h.digest()


def chained_input(scheme: int, command_id: str | None, command: CommandFields | None) -> bytes:
    """What the chain hash of an event of command `command_id` covers of the command's input:
    its `command_digest` under scheme 3 and later, nothing before (or for an event no command
    wrote)."""
    if scheme < 3 or command_id is None:
        return b""
    return command_digest(command_id, command)


@functools.lru_cache(maxsize=4096)  # asked for every state sent; a match's never changes
def seed_commitment(game_id: str, seed: bytes) -> bytes:
    """The commitment to a match's seed published when the match is created:
    SHA-256("tablier/seed-commitment\\0" || game id (canonical UUID text) || seed)."""
    return hashlib.sha256(b"tablier/seed-commitment\0" + game_id.encode() + seed).digest()


def state_salt(game: GameRecord) -> bytes:
    """Per-match salt of the stored state hashes: SHA-256("tablier/state-salt\\0" || game id ||
    seed). Secret while the seed is, so no stored or published hash can be checked against
    guessed hidden cards; anyone can compute it once the seed is revealed."""
    return _state_salt(game.game_id, game.seed)


@functools.lru_cache(maxsize=4096)  # asked for every event checked; a match's never changes
def _state_salt(game_id: str, seed: bytes) -> bytes:
    return hashlib.sha256(b"tablier/state-salt\0" + game_id.encode() + seed).digest()


def stored_state_hash(game: GameRecord, core_hash: bytes, salt: bytes | None = None) -> bytes:
    """What an event row stores for the core's state hash: SHA-256("tablier/state\\0" || salt ||
    core hash) (scheme 2), the core hash itself for matches of scheme 1."""
    if game.hash_scheme < 2:
        return core_hash
    return hashlib.sha256(b"tablier/state\0" + (salt or state_salt(game)) + core_hash).digest()


def genesis_hash(game: GameRecord) -> bytes:
    """The chain's anchor: binds the log to the match's type, seats and options, and (scheme 2)
    to the seed through its commitment, so a changed seed breaks the chain at seq 1. A fork's
    (`fork_genesis`) binds it to its lineage as well."""
    parts: list[object] = [game.game_id, game.game_type, game.seats, sorted(game.options.items())]
    if game.hash_scheme >= 2:
        parts.append(seed_commitment(game.game_id, game.seed).hex())
    if game.hash_scheme >= 3:
        parts.append(game.hash_scheme)
    if game.parent_game_id is not None:
        return fork_genesis(parts, game.parent_game_id, game.parent_seq or 0, game.parent_head or b"")
    head = json.dumps(parts, separators=(",", ":")).encode()
    return hashlib.sha256(b"tablier/genesis\0" + head).digest()


def rating_genesis(game_type: str) -> bytes:
    """The anchor of a game type's rating stream (`app.ranked`): its events chain from it with
    `chain_hash`, as a match's do from `genesis_hash`."""
    return hashlib.sha256(b"tablier/ratings-genesis\0" + game_type.encode()).digest()


def fork_genesis(parts: list[object], parent_game_id: str, parent_seq: int, parent_head: bytes) -> bytes:
    """A fork's genesis hash: SHA-256("tablier fork v1\0" || J), J the compact JSON of the plain
    genesis's parts followed by the parent's id, the parent's seq the fork starts from and the
    parent's chain hash there (hex), so the fork's chain commits to its lineage: a parent log
    rewritten at or before that seq no longer holds the head the fork's first event chains to."""
    lineage = [*parts, parent_game_id, parent_seq, parent_head.hex()]
    head = json.dumps(lineage, separators=(",", ":")).encode()
    return hashlib.sha256(b"tablier fork v1\0" + head).digest()


def chain_hash(prev: bytes, seq: int, event: EventFields, command_id: str | None, command: bytes = b"") -> bytes:
    """Hash of one event, chained to the previous event's hash (or the genesis hash); `command`:
    the digest of the input of the command that wrote it (`chained_input`: scheme 3), a sixth
    length-prefixed part when not empty."""
    h = hashlib.sha256(b"tablier/event\0")
    h.update(prev)
    h.update(struct.pack(">Qq", seq, -1 if event.seat is None else event.seat))
    for part in (
        event.kind.encode(),
        event.payload,
        (command_id or "").encode(),
        event.core_version.encode(),
        event.state_hash,
        *((command,) if command else ()),
    ):
        h.update(struct.pack(">I", len(part)))
        h.update(part)
    return h.digest()


@dataclass(frozen=True)
class _Fields:
    kind: str
    payload: bytes
    seat: int | None
    core_version: str
    state_hash: bytes


@dataclass(frozen=True)
class Problem:
    seq: int
    why: str

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.why}"


@dataclass
class Replayed:
    chain: bytes  # the chain hash after the last event replayed
    chains: dict[int, bytes] = field(default_factory=dict)  # each event's, as recomputed
    problems: list[Problem] = field(default_factory=list)
    # False when the replay stopped before the end (a gap in the seqs, an event that does not apply).
    complete: bool = True


def ms(at: datetime) -> int:
    """A recorded time as the core's clock counts it (milliseconds since the epoch)."""
    return int(at.timestamp() * 1000)


def replay(
    game: GameRecord,
    events: Iterable[LogEvent],
    match: _core.Match,
    *,
    prev: bytes | None = None,
    after_seq: int = 0,
    expected: dict[int, tuple[str, bytes]] | None = None,
    accounted: bool = False,
    current_only: bool = False,
    clock: bool = False,
    kinds: bool = False,
    resync: bool = False,
    inputs: Mapping[str, CommandFields | None] | None = None,
    before: Callable[[LogEvent, _core.Match], None] | None = None,
    after: Callable[[LogEvent, _core.Match, bytes], None] | None = None,
    on_problem: Callable[[Problem], None] | None = None,
) -> Replayed:
    """Applies `events` (those after `after_seq`, chained from `prev`, the genesis hash when
        None) to `match`, checking each: the seqs run on without a gap; the event is what the seed
        decides where `expected` says what that is (by seq: the opening deal, a command decided
        again; with `accounted`, every event must be); it applies (`clock`: stepping the match
        clock with its recorded time; `kinds`: its stored kind is the payload's); the state hash
        after it is the stored one (salted per match); its chain hash recomputes from the one
        before. `current_only`: the seed and state-hash checks skip events another core version
        wrote (it may deal and hash differently). `resync`: after a chain mismatch, go on from the
        stored hash, so later breaks are reported on their own. `inputs`: the commands' inputs by
    command id, whose digests the chain covers under scheme 3 (a command missing from it hashes
    as one without input, so its events no longer chain). `before` sees each event before it
        applies (to decide its command again), `after` with its chain hash once applied.

        Each problem goes to `on_problem` (which may raise to stop at the first) and into the
        result; a gap or an event that does not apply ends the replay (`complete` False). Events
        still `expected` when the log ends are a problem too."""
    chain = genesis_hash(game) if prev is None else prev
    salt = state_salt(game)
    out = Replayed(chain)

    def problem(seq: int, why: str) -> None:
        found = Problem(seq, why)
        if on_problem is not None:
            on_problem(found)
        out.problems.append(found)

    for n, ev in enumerate(events, start=after_seq + 1):
        if ev.seq != n:
            problem(n, f"the log skips from seq {n - 1} to seq {ev.seq}")
            out.complete = False
            break
        if before is not None:
            before(ev, match)
        checked = not current_only or ev.core_version == _core.CORE_VERSION
        if expected is not None:
            wanted = expected.pop(ev.seq, None)
            if wanted is None:
                if accounted:
                    problem(ev.seq, "no command or opening deal accounts for this event")
            elif checked and wanted != (ev.kind, bytes(ev.payload)):
                problem(ev.seq, "not what the core decides from the seed")
        if ev.state_hash:
            # The chain covers what is stored: checked before the event is applied, so a
            # changed event is named even when it no longer applies.
            chain = _step(chain, ev, ev, _input(game, ev, inputs), problem, resync)
        try:
            kind = match.event_kind(ev.payload, ev.kind) if kinds else ev.kind
            at = ms(ev.recorded_at) if clock and ev.recorded_at is not None else None
            match.apply(ev.payload, ev.kind, at, ev.seat, ev.command_id)
        except _core.CoreError as exc:
            problem(ev.seq, f"the event does not apply ({exc})")
            out.complete = False
            break
        if kind != ev.kind:
            problem(ev.seq, f"stored kind {ev.kind!r}, payload is {kind!r}")
        state_hash = stored_state_hash(game, match.state_hash(), salt)
        if not ev.state_hash:
            # A log without state hashes (a public one may leave them out): chained over the
            # state hash the replay gives.
            fields = _Fields(ev.kind, ev.payload, ev.seat, ev.core_version, state_hash)
            chain = _step(chain, ev, fields, _input(game, ev, inputs), problem, resync)
        elif checked and ev.state_hash != state_hash:
            problem(ev.seq, f"state hash mismatch (core {ev.core_version})")
        out.chains[ev.seq] = chain
        if after is not None:
            after(ev, match, chain)
    out.chain = chain
    if out.complete and expected:
        problem(min(expected), "events decided from the seed are missing from the log")
    return out


def _input(game: GameRecord, ev: LogEvent, inputs: Mapping[str, CommandFields | None] | None) -> bytes:
    if ev.command_id is None:
        return b""
    return chained_input(game.hash_scheme, ev.command_id, (inputs or {}).get(ev.command_id))


def _step(
    prev: bytes,
    ev: LogEvent,
    fields: EventFields,
    command: bytes,
    problem: Callable[[int, str], None],
    resync: bool,
) -> bytes:
    """The chain hash of `ev` after `prev` (`command`: its command's chained input), checked
    against the one it carries."""
    chain = chain_hash(prev, ev.seq, fields, ev.command_id, command)
    if chain == ev.chain_hash:
        return chain
    if command:
        problem(ev.seq, f"chain hash mismatch (the event, or what command {ev.command_id!s:.64} asked, changed)")
    else:
        problem(ev.seq, "chain hash mismatch")
    return ev.chain_hash if resync else chain


# The kind of a fork's opening event (tablier.v1.Forked), the same in every game.
FORKED = "forked"


def opening(game: GameRecord, match: _core.Match, first: EventFields | None = None) -> dict[int, tuple[str, bytes]]:
    """The opening events the match's seed deals, by seq (for `replay`'s `expected`); raises
    the core's error when it refuses the match record. A fork's opening is decided again from
    what its stored first event `first` asked (its lineage, and a seat's position or the
    parent's events) and the seed, which draws its deal: a first event that is no fork's
    opening is not what the seed decides."""
    if game.parent_game_id is not None:
        if first is None or first.kind != FORKED:
            return {1: (FORKED, b"")}
        return {i: (k, bytes(p)) for i, (k, p) in enumerate(match.copy().fork(bytes(first.payload), game.seed, 1), 1)}
    return {i: (k, bytes(p)) for i, (k, p) in enumerate(match.copy().start(game.seed, 1), start=1)}


# --------------------------------------------------------------------------- the server's checks


class Damaged(Exception):
    """The first problem a strict check met (`replay_strict`, `first_problem`)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


def event_chain(game: GameRecord, prev: bytes, ev: StoredEvent) -> bytes:
    """The chain hash `ev` should carry after an event whose chain hash is `prev` (under
    scheme 3, over what its command asked as the `commands` row keeps it)."""
    return chain_hash(prev, ev.seq, ev, ev.command_id, chained_input(game.hash_scheme, ev.command_id, ev.command))


def replay_strict(
    game: GameRecord,
    events: list[StoredEvent],
    match: _core.Match,
    prev_chain: bytes | None = None,
    after_seq: int = 0,
    check_opening: bool = True,
) -> bytes:
    """What the live server checks of the events it loads: applies `events` (those after
    `after_seq`, whose chain continues from `prev_chain`, the genesis hash when None) to `match`,
    checking each (`replay`, the match clock stepped with the recorded times); returns the last
    chain hash. From seq 1, the opening events must also be what the match's seed deals (when
    written by this core version: another may deal differently). Raises `Damaged` at the first
    bad event (`match` is then unusable)."""
    expected = None
    if after_seq == 0 and check_opening:
        try:
            expected = opening(game, match, events[0] if events else None)
        except _core.CoreError as exc:
            raise Damaged(Problem(1, f"the core refuses the match record ({exc})")) from None

    def refuse(problem: Problem) -> None:
        raise Damaged(problem)

    return replay(
        game,
        events,
        match,
        prev=prev_chain,
        after_seq=after_seq,
        expected=expected,
        current_only=True,
        clock=True,
        inputs={ev.command_id: ev.command for ev in events if ev.command_id is not None},
        on_problem=refuse,
    ).chain


def check_commands(
    events: list[StoredEvent],
    commands: list[StoredCommand],
    later: list[StoredCommand] | None = None,
) -> Problem | None:
    """Whether the `commands` rows agree with the events: each acknowledged command's events
    exist and carry its id, and each event of a command has its row. The problem at the first
    bad seq, or None.

    On a live database, read `commands` before the events and `later` after them: a command row
    commits with its events, so every command read before has its events in what was read, and
    every event read has its row in what is read after (commands appended in between are in
    neither check's way)."""
    later = commands if later is None else later
    last = events[-1].seq if events else 0
    by_seq = {ev.seq: ev for ev in events}
    problems: list[Problem] = []
    rows = {c.command_id for c in later}
    for c in commands:
        if c.last_seq < c.first_seq:
            continue
        if c.last_seq > last:
            problems.append(
                Problem(
                    max(c.first_seq, last + 1),
                    f"command {c.command_id[:64]!r} was acknowledged with events up to seq "
                    f"{c.last_seq}, but the log ends at seq {last}",
                )
            )
            continue
        for seq in range(c.first_seq, c.last_seq + 1):
            ev = by_seq.get(seq)
            if ev is None or ev.command_id != c.command_id:
                problems.append(Problem(seq, f"the event is not the one command {c.command_id[:64]!r} wrote"))
                break
    for ev in events:
        if ev.command_id is not None and ev.command_id not in rows:
            problems.append(Problem(ev.seq, f"the event's command {ev.command_id[:64]!r} has no commands row"))
            break
    return min(problems, key=lambda p: (p.seq, p.why)) if problems else None
