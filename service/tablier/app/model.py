"""What the application layer hands the transports: payloads, match states, events and the
results of commands; and the checks of a call's plain arguments. No gRPC types here."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from tablier.store.base import GameRecord

from .auth import Principal
from .clocks import TIMEOUT_COMMAND_PREFIX, SeatClock
from .errors import BadRequest
from .seats import SeatInfo

MAX_COMMAND_ID = 128


@dataclass(frozen=True)
class Payload:
    """A game-specific protobuf message: its full type name and its bytes."""

    type_name: str
    data: bytes


@dataclass(frozen=True)
class ForkInfo:
    """Where a fork comes from (public): the parent, its seq, its chain head there, and whose
    knowledge the fork starts from (`seat:<n>` or `auditor`). A fork is never rated."""

    parent_game_id: str
    parent_seq: int
    parent_head: bytes
    fork_as: str

    @staticmethod
    def of(game: GameRecord) -> ForkInfo | None:
        if game.parent_game_id is None:
            return None
        return ForkInfo(game.parent_game_id, game.parent_seq or 0, game.parent_head or b"", game.fork_as or "")


@dataclass(frozen=True)
class GameSummary:
    """What anyone may know of a match without opening it (a lobby's line)."""

    game_id: str
    game_type: str
    seats: tuple[SeatInfo, ...]
    over: bool
    seq: int
    created_at: datetime | None
    to_act: tuple[int, ...] = ()
    outcome: bytes | None = None  # tablier.v1.Outcome, once over
    # With ListGames(mine): the seats the caller's player holds.
    your_seats: tuple[int, ...] = ()
    ranked: bool = False
    fork: ForkInfo | None = None


@dataclass(frozen=True)
class MatchState:
    """A match at one seq, as one viewer may see it."""

    game_id: str
    game_type: str
    seq: int
    principal: Principal
    to_act: list[int]
    over: bool
    outcome: bytes | None  # tablier.v1.Outcome
    view: Payload
    seat_count: int
    # Integrity (docs/verifying.md): the chain hash of event `seq` (None when it is
    # not published to this viewer), the seed commitment, the seed once the match is over.
    chain_head: bytes | None = None
    seed_commitment: bytes = b""
    seed: bytes | None = None
    options: dict[str, str] = field(default_factory=dict)
    integrity_scheme: int = 1
    # Who fills each seat now, in seat order (public).
    seats: tuple[SeatInfo, ...] = ()
    # Each seat's clock, in seat order; () when the match has no clock (public).
    clocks: tuple[SeatClock, ...] = ()
    ranked: bool = False
    # Set when the match is a fork (public).
    fork: ForkInfo | None = None


@dataclass(frozen=True)
class EventOut:
    seq: int
    kind: str
    seat: int | None
    payload: Payload
    recorded_at: datetime | None
    chain_hash: bytes | None = None
    # The auditor's only: what the rest of the chain hash covers, and on a command's first
    # event what the command asked.
    command_id: str | None = None
    core_version: str | None = None
    command: CommandOut | None = None
    state_hash: bytes | None = None
    # The event in one sentence for the viewer it was redacted for (the game's own words).
    description: str = ""


@dataclass(frozen=True)
class CommandOut:
    """What a command asked: a seat's action, or a host command."""

    seat: int | None
    action: Payload | None
    host_command: str | None


@dataclass(frozen=True)
class Created:
    game_id: str
    # The creator's seat tokens in seat order ("" for seats it does not hold).
    seat_tokens: list[str]
    state: MatchState
    # Invite codes in seat order ("" for seats that are not invited; empty when none is).
    invite_codes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Joined:
    seat: int
    seat_token: str
    state: MatchState
    # True when this join_key had joined already: the same seat and token again.
    replayed: bool = False


@dataclass(frozen=True)
class Played:
    events: list[EventOut]
    state: MatchState
    replayed: bool


def parse_game_id(game_id: str) -> str:
    if not game_id:
        raise BadRequest("game_id is required", "MISSING_FIELD")
    try:
        return str(uuid.UUID(game_id))
    except ValueError:
        raise BadRequest(f"game_id {game_id[:64]!r} is not a uuid", "BAD_GAME_ID") from None


# Command ids the server gives its own commands (a core timer's host command) start with this.
SERVER_COMMAND_PREFIX = "timer:"
# ... and those of the moves it plays for bot seats (`bot:<seat>:<seq before the move>`).
BOT_COMMAND_PREFIX = "bot:"


def check_command_id(command_id: str) -> None:
    if not command_id:
        raise BadRequest("command_id is required (a client-chosen id, unique per command)", "MISSING_FIELD")
    if len(command_id) > MAX_COMMAND_ID:
        raise BadRequest(f"command_id is longer than {MAX_COMMAND_ID} characters", "BAD_COMMAND_ID")
    if not command_id.isprintable():
        raise BadRequest("command_id holds a control character", "BAD_COMMAND_ID")
    if command_id.startswith((SERVER_COMMAND_PREFIX, BOT_COMMAND_PREFIX, TIMEOUT_COMMAND_PREFIX)):
        raise BadRequest(
            f"command ids starting with {SERVER_COMMAND_PREFIX!r}, {BOT_COMMAND_PREFIX!r} or "
            f"{TIMEOUT_COMMAND_PREFIX!r} are the server's own",
            "BAD_COMMAND_ID",
        )


def check_type(payload: Payload, expected: str, what: str) -> None:
    if payload.type_name != expected:
        raise BadRequest(
            f"{what} must be a {expected}, not {payload.type_name or 'an untyped payload'}",
            "WRONG_PAYLOAD_TYPE",
        )
