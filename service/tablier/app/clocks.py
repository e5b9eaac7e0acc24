"""Match clocks on the service's side: the recorded time of each stored event goes to the core
with the event (`apply_stored`), so banks and deadlines derive from the log, the same on every
server and after every restart; the core's rules decide what a timeout does.

Nothing here knows a game: the clock options, the policies and the `seat_timed_out` event are
the core registry's, for every game alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from tablier import _core
from tablier.store.base import StoredEvent
from tablier.v1.common_pb2 import GameType

# Command ids of the server's timeouts: `timeout:<seat>:<seq the timeout was decided at>`.
TIMEOUT_COMMAND_PREFIX = "timeout:"


@dataclass(frozen=True)
class SeatClock:
    """One seat's clock in a state: its bank (ms; None without a bank) when its current wait
    started (or now, when it is not awaited), and when that wait times out (ms since the Unix
    epoch; None when the seat is not awaited)."""

    bank_ms: int | None
    deadline_ms: int | None


def ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def apply_stored(match: _core.Match, ev: StoredEvent) -> None:
    """Applies a stored event, stepping the match's clock with its recorded time."""
    match.apply(ev.payload, ev.kind, None if ev.recorded_at is None else ms(ev.recorded_at), ev.seat, ev.command_id)


def seat_clocks(match: _core.Match) -> tuple[SeatClock, ...]:
    return tuple(SeatClock(bank, deadline) for bank, _, deadline in match.clock_seats())


def next_timeout(match: _core.Match) -> tuple[int, int] | None:
    """(deadline ms, seat) of the wait that times out first, None when no seat is on a clock."""
    if match.is_over():
        return None
    waits = [(deadline, seat) for seat, (_, _, deadline) in enumerate(match.clock_seats()) if deadline is not None]
    return min(waits) if waits else None


def timeout_command(seat: int) -> str:
    """The core's host command that times out `seat`."""
    return f"{_core.TIMEOUT_COMMAND}{seat}"


def awaits_server(info: GameType, match: _core.Match, bots: Sequence[str]) -> bool:
    """Whether a match may await the server itself: a clock, a core timer (a game whose host
    commands a timer may give) or a bot seat. Such a match is in the store's index of waits
    (`GameRecord.clocked`) until it is over, and a starting server resumes it (`Repository.resume_all`)."""
    return match.clock() is not None or bool(info.host_commands) or any(bots)
