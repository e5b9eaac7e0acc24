"""tablier-client: the typed async Python SDK of a tablier game server, its gRPC stubs
(`tablier_client.v1`, typed), bots and a load test. Needs neither Rust nor PostgreSQL.

    import asyncio
    from tablier_client import connect, games

    async def main() -> None:
        async with connect("127.0.0.1:50051") as client:
            created = await client.create(games.QWIRKLE, seats=2)
            ...

    asyncio.run(main())
"""

from . import errors, games
from .errors import Conflict, Refused, TablierError, Unavailable
from .kinds import GameKind
from .sdk import (
    Client,
    Created,
    Event,
    Joined,
    Match,
    Moves,
    Played,
    Retry,
    SeatPosition,
    State,
    Suggestion,
    Turn,
    Update,
    bot_seat,
    connect,
    creator_seat,
    invited_seat,
    message_class,
    open_seat,
    pack,
    unpack,
    with_game,
)
from .values import MatchNotOver, MoveValues, ValuedMove

__all__ = [
    "Client",
    "Conflict",
    "Created",
    "Event",
    "GameKind",
    "Joined",
    "Match",
    "MatchNotOver",
    "MoveValues",
    "Moves",
    "Played",
    "Refused",
    "Retry",
    "SeatPosition",
    "State",
    "Suggestion",
    "TablierError",
    "Turn",
    "Unavailable",
    "Update",
    "ValuedMove",
    "bot_seat",
    "connect",
    "creator_seat",
    "errors",
    "games",
    "invited_seat",
    "message_class",
    "open_seat",
    "pack",
    "unpack",
    "with_game",
]
