"""Who fills the seats of a match the player creates, and taking a seat of another's.

The creator sits at seat 0; the server fills the others (CreateGame's seat assignments):
its bots, open seats anyone with the game id may join, or invited seats (one code each, to
hand out)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..sdk import Client, Match, bot_seat, creator_seat, invited_seat, open_seat
from ..v1 import service_pb2

# Lobby choice -> how each seat but the creator's is filled (given the bot's name).
OTHERS: dict[str, Callable[[str], service_pb2.SeatAssignment]] = {
    "bots": bot_seat,
    "open": lambda bot: open_seat(),
    "invite": lambda bot: invited_seat(),
}


@dataclass
class Seated:
    """A match the player holds a seat of."""

    handle: Match[Any, Any, Any]
    # Invite codes in seat order ("" where the seat is not invited).
    invite_codes: list[str] = field(default_factory=list)


async def create_match(
    client: Client, game: str, seats: int, options: dict[str, str], *, others: str = "bots", bot: str = ""
) -> Seated:
    """A new match with the creator at seat 0 and the other seats filled as `others` says
    (`bots`: the server's bot `bot`, empty for the strongest; `open`; `invite`)."""
    assignments = [creator_seat()] + [OTHERS[others](bot) for _ in range(seats - 1)]
    created = await client.create(game, seats, options, assignments=assignments)
    return Seated(created.seats[0], created.invite_codes)


async def join_match(client: Client, code_or_id: str) -> Match[Any, Any, Any]:
    """Takes a seat: the one an invite code (`<game id>.<secret>`) names, or the lowest open
    seat of a game id. A handle acting with the new seat's own token."""
    if "." in code_or_id:
        joined = await client.join(invite_code=code_or_id)
    else:
        joined = await client.join(code_or_id)
    return joined.match
