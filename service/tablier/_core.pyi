"""Typed surface of the compiled rules core (rust_core/src/python.rs).

Game-specific actions, events, views, positions and evaluations are protobuf bytes of the
messages in proto/tablier/<game>/v1/<game>.proto (package tablier.<game>.v1); `game_types()` and `Match.outcome()` return
`tablier.v1.GameType` / `tablier.v1.Outcome` bytes. Viewers: `seat=None, auditor=False` is a
spectator; `auditor=True` sees everything.
"""

from typing import final

__all__ = [
    "CORE_VERSION",
    "GENERIC_EVENTS",
    "TIMEOUT_COMMAND",
    "Match",
    "game_types",
    "evaluate",
    "canonical_action",
    "short_options",
    "CoreError",
    "MalformedInput",
    "InvalidOption",
    "RuleViolation",
    "Unsupported",
    "CorruptLog",
]

CORE_VERSION: str
GENERIC_EVENTS: dict[str, str]
"""Event kinds every game shares (e.g. ``seat_timed_out``) and their protobuf type names."""
TIMEOUT_COMMAND: str
"""Prefix of the host command ``timeout:<seat>`` that times out a seat of a match with a clock."""

class CoreError(Exception):
    """Base class of every error the rules core reports."""

class MalformedInput(CoreError):
    """The request cannot be decoded or names nothing that exists."""

class InvalidOption(CoreError):
    """An unknown game type, a bad player count or option."""

class RuleViolation(CoreError):
    """The rules refuse the action now. ``args == (reason, message)``."""

class Unsupported(CoreError):
    """The game does not offer this capability."""

class CorruptLog(CoreError):
    """A stored event does not apply to the state it follows."""

_Event = tuple[str, bytes]
"""(kind, payload) of one event as decided by the core (a name for typing only)."""

@final
class Match:
    """One match's state; changed only by ``apply``/``apply_all`` (replay of events)."""

    def __new__(cls, game_type: str, seats: int, options: dict[str, str] | None = None) -> Match: ...
    @property
    def game_type(self) -> str: ...
    @property
    def seats(self) -> int: ...
    def copy(self) -> Match: ...
    def start(self, seed: bytes, seq: int) -> list[_Event]:
        """Events that open the match; ``seq`` is the seq of the first of them."""
    def fork(self, request: bytes, seed: bytes, seq: int) -> list[_Event]:
        """The opening event of a fork (``forked``, ``tablier.v1.Forked``) of a match nothing
        happened in yet: ``request`` is a ``Forked`` without its deal (a seat's Position, or the
        parent's events for the auditor's fork); the deal is drawn from the seed at ``seq``."""
    def decide(self, seat: int, action: bytes, seed: bytes, seq: int) -> list[_Event]:
        """Events caused by ``action``; ``seq`` is the seq the first of them will take."""
    def host_command(self, command: str, seed: bytes, seq: int) -> list[_Event]:
        """Events caused by an operator's command (one of GameType.host_commands)."""
    def apply(
        self,
        payload: bytes,
        kind: str | None = None,
        at_ms: int | None = None,
        seat: int | None = None,
        command_id: str | None = None,
    ) -> None:
        """Applies a stored event (``kind`` as stored: needed for generic kinds). With ``at_ms``, its
        recorded time, the match clock is stepped too (``seat``, ``command_id``: its command's)."""
    def apply_all(self, payloads: list[bytes], kinds: list[str] | None = None) -> None:
        """Replay, with the GIL released (the clock is not stepped)."""
    def to_act(self) -> list[int]: ...
    def legal_actions(self, seat: int) -> list[bytes]: ...
    def legal_moves(self, seat: int, names: list[str] | None = None) -> list[tuple[bytes, str]]:
        """The legal actions of `seat`, each with its label in words (the game's own); `names`
        (per seat, "" for none) name the seats' players."""
    def event_sentence(
        self,
        redacted: bytes,
        seat: int | None = None,
        auditor: bool = False,
        kind: str | None = None,
        names: list[str] | None = None,
    ) -> str:
        """One sentence for that viewer of an event already redacted for it; `names` (per seat,
        "" for none) name the seats' players."""
    def view(self, seat: int | None = None, auditor: bool = False) -> bytes: ...
    def redact(
        self, payload: bytes, seat: int | None = None, auditor: bool = False, kind: str | None = None
    ) -> bytes | None:
        """The event as that viewer may see it; None when it must not see it at all."""
    def event_kind(self, payload: bytes, kind: str | None = None) -> str: ...
    def clock(self) -> tuple[int, int | None, int, str] | None:
        """(move limit ms (0: none), bank ms (None: none), increment ms, timeout policy), or None."""
    def clock_seats(self) -> list[tuple[int | None, int | None, int | None]]:
        """Per seat: (bank ms at the start of its wait, or now; wait start ms; deadline ms),
        each None when it does not apply. Empty without a clock."""
    def is_over(self) -> bool: ...
    def outcome(self) -> bytes | None: ...
    def timer(self) -> tuple[str, int, int] | None:
        """(host command, seconds, key) of the timer running now: the server gives that host
        command once the match has waited that long; a new key restarts the clock."""
    def timer_started_ms(self) -> int | None:
        """Recorded time (ms) of the event that started the running timer's wait, when the
        events were applied with their times (``apply(..., at_ms=...)``)."""
    def state_hash(self) -> bytes: ...
    def bot_action(self, seat: int, bot: str, seed: bytes, seq: int) -> bytes: ...
    def render(self, seat: int | None = None, auditor: bool = False) -> str: ...
    def position(self, of_seat: int, seat: int | None = None, auditor: bool = False) -> bytes:
        """The encoded Position (the input of `evaluate`) seat `of_seat` faces now, for the
        viewer `seat` / `auditor`: RuleViolation POSITION_NOT_VISIBLE for anyone but that seat
        and the auditor; Unsupported for a game without an evaluator."""

def game_types() -> list[bytes]: ...
def evaluate(game_type: str, position: bytes, rollouts: bytes | None = None) -> bytes:
    """Every legal move of `position` with its immediate effect; with `rollouts`
    (`tablier.v1.RolloutSettings` bytes), each move's value by determinized rollouts too."""

def short_options(game_type: str) -> list[tuple[str, str]]:
    """The options that keep a match of the game short (its test data's `short`)."""

def canonical_action(game_type: str, action: bytes) -> bytes:
    """The action re-encoded from what the rules decode of it (unknown fields dropped);
    MalformedInput if it does not decode."""
