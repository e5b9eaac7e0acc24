"""Who fills each seat of a match: the creator, whoever joins (an open seat, or an invited one
with its invite code), or a bot the server plays itself.

A match starts when it is created, whatever its seats: the opening is dealt at once, and a seat
nobody holds yet is simply not answered until someone joins it (the match waits there, as it
would for an absent player; the core's timers still run). `GameState.seats` tells everyone
which seats are still open.

Tokens and invite codes are `<game id>.<secret>`; the server keeps only their SHA-256. A bot
seat has no token: nobody but the server acts for it. The server decides a bot's move from the
seat's own view with randomness derived from the match seed and the seat (`bot_seed`), so any
server gives the same move, and records it as that seat's command like any other.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
from dataclasses import dataclass

from tablier.store.base import GameRecord
from tablier.store.players import NAMES

from .auth import new_seat_token, token_hash
from .errors import BadRequest

MIN_JOIN_KEY, MAX_JOIN_KEY = 32, 128


class SeatKind(enum.Enum):
    """How a seat is filled when the match is created."""

    CREATOR = "creator"  # its token goes to the creator
    OPEN = "open"  # anyone may join it
    INVITE = "invite"  # whoever holds its invite code may join it
    BOT = "bot"  # the server plays it


class SeatStatus(enum.Enum):
    """Public: who fills a seat now."""

    TAKEN = "taken"
    OPEN = "open"
    INVITED = "invited"
    BOT = "bot"


@dataclass(frozen=True)
class SeatAssignment:
    # None: the client sent a kind this server does not know.
    kind: SeatKind | None
    # For BOT: one of GameType.bots; "": the strongest.
    bot: str = ""


@dataclass(frozen=True)
class SeatInfo:
    status: SeatStatus
    bot: str = ""
    # The player bound to the seat (a signed-in player created or joined it), or None, with
    # its display name and colour as this server knows them now.
    player_id: str | None = None
    name: str = ""
    colour: int = 0


@dataclass(frozen=True)
class SeatPlan:
    """What CreateGame stores and what it hands the creator, per seat in seat order."""

    token_hashes: tuple[bytes, ...]
    invite_hashes: tuple[bytes, ...]
    bots: tuple[str, ...]
    # The creator's seat tokens ("" for the seats it does not hold) and invite codes ("" for
    # seats that are not invited; empty when no seat is).
    tokens: list[str]
    invite_codes: list[str]


def plan_seats(game_id: str, seats: int, assignments: list[SeatAssignment], bots: list[str]) -> SeatPlan:
    """Tokens and codes for a new match. No assignments: the creator holds every seat."""
    if not assignments:
        assignments = [SeatAssignment(SeatKind.CREATOR)] * seats
    if len(assignments) != seats:
        raise BadRequest(f"{len(assignments)} seat assignments for {seats} seats", "SEAT_ASSIGNMENTS_MISMATCH")
    tokens, codes, named = [], [], []
    for seat, a in enumerate(assignments):
        if a.kind is None:
            raise BadRequest(
                f"seat {seat}: the seat assignment needs a kind (creator, open, invite or bot)", "BAD_SEAT_ASSIGNMENT"
            )
        if a.bot and a.kind is not SeatKind.BOT:
            raise BadRequest(f"seat {seat}: only a bot seat names a bot", "BAD_SEAT_ASSIGNMENT")
        bot = ""
        if a.kind is SeatKind.BOT:
            if not bots:
                raise BadRequest("this game has no bots", "UNKNOWN_BOT")
            bot = a.bot or bots[-1]
            if bot not in bots:
                raise BadRequest(f"seat {seat}: unknown bot {a.bot[:64]!r} (known: {', '.join(bots)})", "UNKNOWN_BOT")
        tokens.append(new_seat_token(game_id) if a.kind is SeatKind.CREATOR else "")
        codes.append(new_seat_token(game_id) if a.kind is SeatKind.INVITE else "")
        named.append(bot)
    return SeatPlan(
        token_hashes=tuple(token_hash(t) if t else b"" for t in tokens),
        invite_hashes=tuple(token_hash(c) if c else b"" for c in codes) if any(codes) else (),
        bots=tuple(named) if any(named) else (),
        tokens=tokens,
        invite_codes=codes if any(codes) else [],
    )


def bound_players(plan: SeatPlan, player_id: str | None) -> tuple[str | None, ...]:
    """The seats a signed-in creator is bound to: the first seat it holds (its other seats, if
    it holds several, stay anonymous: a player acts for one seat of a match)."""
    if player_id is None or not any(plan.tokens):
        return ()
    first = next(s for s, t in enumerate(plan.tokens) if t)
    return tuple(player_id if s == first else None for s in range(len(plan.tokens)))


def seat_names(game: GameRecord) -> list[str] | None:
    """Per seat, the display name of its player ("" for none), for the core's words; None when
    no seat is bound to a player."""
    if not any(game.seat_players):
        return None
    names = []
    for player in game.seat_players:
        named = NAMES.get(player) if player else None
        names.append(named[0] if named else "")
    return names


def seat_infos(game: GameRecord) -> tuple[SeatInfo, ...]:
    out = []
    for seat in range(game.seats):
        if game.bot(seat):
            out.append(SeatInfo(SeatStatus.BOT, game.bot(seat)))
        elif game.token_hashes[seat]:
            player = game.player(seat)
            named = NAMES.get(player) if player else None
            if player and named:
                out.append(SeatInfo(SeatStatus.TAKEN, player_id=player, name=named[0], colour=named[1]))
            else:
                out.append(SeatInfo(SeatStatus.TAKEN, player_id=player))
        elif seat < len(game.invite_hashes) and game.invite_hashes[seat]:
            out.append(SeatInfo(SeatStatus.INVITED))
        else:
            out.append(SeatInfo(SeatStatus.OPEN))
    return tuple(out)


def invited_seat(code: str, game: GameRecord) -> int | None:
    """The seat an invite code is for, compared in constant time (whether or not it was joined)."""
    digest = token_hash(code)
    found = None
    for seat, stored in enumerate(game.invite_hashes):
        if stored and hmac.compare_digest(digest, stored):
            found = seat
    return found


def join_token(game_id: str, join_key: str) -> str:
    """The seat token a join with `join_key` gives: derived from the key, so the same join
    repeated (its response was lost) finds its seat again and gets the same token."""
    if not MIN_JOIN_KEY <= len(join_key) <= MAX_JOIN_KEY or not join_key.isascii() or not join_key.isprintable():
        raise BadRequest(
            f"a join_key is {MIN_JOIN_KEY} to {MAX_JOIN_KEY} printable ASCII characters (a fresh random one per join)",
            "BAD_JOIN_KEY",
        )
    digest = hashlib.sha256(b"tablier/join-token\0" + game_id.encode() + b"\0" + join_key.encode()).digest()
    return f"{game_id}.{base64.urlsafe_b64encode(digest).rstrip(b'=').decode()}"


def bot_seed(seed: bytes, seat: int) -> bytes:
    """The randomness of a bot seat's choices: derived from the match seed (so every server
    chooses the same move) and apart from the stream the core draws cards from (so a bot's
    choice says nothing about the cards drawn at the same seq)."""
    return hashlib.sha256(b"tablier/bot-seat\0" + seed + seat.to_bytes(4, "big")).digest()
