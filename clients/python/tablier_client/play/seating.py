"""Who fills the seats of a match the player creates, and taking a seat of another's.

The creator sits at seat 0; the server fills the others (CreateGame's seat assignments):
its bots, open seats anyone with the game id may join, or invited seats (one code each, to
hand out). The SDK has no call for these yet, so they go through its stub."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import games
from ..sdk import Client, Match
from ..v1 import service_pb2

# Lobby choice -> the kind of every seat but the creator's.
OTHERS: dict[str, service_pb2.SeatKind.ValueType] = {
    "bots": service_pb2.SEAT_KIND_BOT,
    "open": service_pb2.SEAT_KIND_OPEN,
    "invite": service_pb2.SEAT_KIND_INVITE,
}


@dataclass
class Seated:
    """A match the player holds a seat of."""

    handle: Match[Any, Any, Any]
    # Invite codes in seat order ("" where the seat is not invited).
    invite_codes: list[str] = field(default_factory=list)


async def create_match(client: Client, game: str, seats: int, options: dict[str, str], *,
                       others: str = "bots", bot: str = "") -> Seated:
    """A new match with the creator at seat 0 and the other seats filled as `others` says
    (`bots`: the server's bot `bot`, empty for the strongest; `open`; `invite`)."""
    kind = OTHERS[others]
    assignments = [service_pb2.SeatAssignment(kind=service_pb2.SEAT_KIND_CREATOR)]
    assignments += [service_pb2.SeatAssignment(kind=kind, bot=bot if kind == service_pb2.SEAT_KIND_BOT else "")
                    for _ in range(seats - 1)]
    request = service_pb2.CreateGameRequest(game_type=game, seats=seats, options=options,
                                            seat_assignments=assignments)
    # Not repeated: a repeated CreateGame would make a second match.
    response: service_pb2.CreateGameResponse = await client.call(
        client.stub.CreateGame, request, client._metadata(client.token), repeatable=False)
    handle = client.match(response.game_id, games.BY_ID.get(game), token=response.seat_tokens[0])
    return Seated(handle, list(response.invite_codes))


async def join_match(client: Client, code_or_id: str, seat: int | None = None) -> Match[Any, Any, Any]:
    """Takes a seat: the one an invite code (`<game id>.<secret>`) names, or an open seat of
    a game id (`seat`, or the lowest). A handle acting with the new seat's own token."""
    invite = "." in code_or_id
    request = service_pb2.JoinGameRequest(game_id="" if invite else code_or_id,
                                          invite_code=code_or_id if invite else "")
    if seat is not None and not invite:
        request.seat = seat
    # Not repeated: the token is shown once, so a repeated join would lose the first seat.
    response: service_pb2.JoinGameResponse = await client.call(client.stub.JoinGame, request, repeatable=False)
    kind = games.BY_ID.get(response.state.game_type)
    return client.match(response.state.game_id, kind, token=response.seat_token)
