"""What the live server checks when it loads a match from the log (`tablier.integrity`'s
checks, stopping at the first problem).

A match loaded cold (not in this process's cache) is replayed with every event checked: the
seqs run on without a gap, each chain hash recomputes from the previous one (the first from the
match's genesis hash), each event applies, the state hash after it is the stored one, the opening
events are what the match's seed deals, and the `commands` rows agree with the events (every
acknowledged command's events are still there and carry its id). A state brought forward from a
verified cached one checks only the newer events, from the verified chain head. Any mismatch is
`DataLoss` naming the first bad seq; the caller refuses the match from then on.
"""

from __future__ import annotations

from tablier import _core
from tablier.integrity import Problem, chain_hash, chained_input, opening, replay
from tablier.store.base import GameRecord, StoredCommand, StoredEvent

from .errors import DataLoss


def damaged(game: GameRecord, seq: int, why: str) -> DataLoss:
    return DataLoss(f"the event log of match {game.game_id} is damaged at seq {seq}: {why}", seq=seq)


def event_chain(game: GameRecord, prev: bytes, ev: StoredEvent) -> bytes:
    """The chain hash `ev` should carry after an event whose chain hash is `prev` (under
    scheme 3, over what its command asked as the `commands` row keeps it)."""
    return chain_hash(prev, ev.seq, ev, ev.command_id, chained_input(game.hash_scheme, ev.command_id, ev.command))


def replay_checked(
    game: GameRecord,
    events: list[StoredEvent],
    match: _core.Match,
    prev_chain: bytes | None = None,
    after_seq: int = 0,
    check_opening: bool = True,
) -> bytes:
    """Applies `events` (those after `after_seq`, whose chain continues from `prev_chain`, the
    genesis hash when None) to `match`, checking each (`tablier.integrity.replay`, the match
    clock stepped with the recorded times); returns the last chain hash. From seq 1, the opening
    events must also be what the match's seed deals (when written by this core version: another
    may deal differently). Raises DataLoss at the first bad event (`match` is then unusable)."""
    expected = None
    if after_seq == 0 and check_opening:
        try:
            expected = opening(game, match)
        except _core.CoreError as exc:
            raise damaged(game, 1, f"the core refuses the match record ({exc})") from None

    def refuse(problem: Problem) -> None:
        raise damaged(game, problem.seq, problem.why)

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
    game: GameRecord,
    events: list[StoredEvent],
    commands: list[StoredCommand],
    later: list[StoredCommand] | None = None,
) -> None:
    """The `commands` rows agree with the events: each acknowledged command's events exist and
    carry its id, and each event of a command has its row. Raises DataLoss at the first bad seq.

    On a live database, read `commands` before the events and `later` after them: a command row
    commits with its events, so every command read before has its events in what was read, and
    every event read has its row in what is read after (commands appended in between are in
    neither check's way)."""
    later = commands if later is None else later
    last = events[-1].seq if events else 0
    by_seq = {ev.seq: ev for ev in events}
    problems: list[tuple[int, str]] = []
    rows = {c.command_id for c in later}
    for c in commands:
        if c.last_seq < c.first_seq:
            continue
        if c.last_seq > last:
            problems.append(
                (
                    max(c.first_seq, last + 1),
                    f"command {c.command_id[:64]!r} was acknowledged with events up to seq "
                    f"{c.last_seq}, but the log ends at seq {last}",
                )
            )
            continue
        for seq in range(c.first_seq, c.last_seq + 1):
            ev = by_seq.get(seq)
            if ev is None or ev.command_id != c.command_id:
                problems.append((seq, f"the event is not the one command {c.command_id[:64]!r} wrote"))
                break
    for ev in events:
        if ev.command_id is not None and ev.command_id not in rows:
            problems.append((ev.seq, f"the event's command {ev.command_id[:64]!r} has no commands row"))
            break
    if problems:
        seq, why = min(problems)
        raise damaged(game, seq, why)
