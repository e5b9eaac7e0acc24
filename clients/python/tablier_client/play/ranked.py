"""`tablier play --leaderboard GAME` and `tablier play --ranked GAME`: a game type's
leaderboard, one line a subject; and the matchmaking queue, its status in words until the
match is found (then the terminal player opens it)."""

from __future__ import annotations

import sys

from .. import errors
from ..sdk import connect
from ..v1 import ranked_pb2


def board_line(r: ranked_pb2.Rating) -> str:
    return (
        f"{r.rank:>4}  {r.rating:>6,}  {r.display_name:<32} {r.matches:>5} {'match' if r.matches == 1 else 'matches'}"
    )


async def print_leaderboard(server: str, game: str, page: int = 0, tls: bool | None = None) -> int:
    try:
        async with connect(server, tls=tls) as client:
            rows, total = await client.leaderboard(game, page=page)
    except errors.TablierError as exc:
        print(f"{exc.reason or exc.code.name}: {exc.message}", file=sys.stderr)
        return 1
    print(f"Leaderboard of {game} ({total} rated; page {page + 1}):")
    print(f"{'rank':>4}  {'rating':>6}  {'name':<32} {'played':>13}")
    for r in rows:
        print(board_line(r))
    return 0


async def find_ranked(
    server: str, game: str, seats: int, credential: str, name: str = "", tls: bool | None = None
) -> tuple[str, str] | None:
    """Queues the player (its credential, or a new guest named `name`) and prints its status
    until matched; returns (game id, credential), or None when it failed."""
    try:
        async with connect(server, tls=tls) as client:
            if credential:
                await client.use_credential(credential)
            elif name:
                me = await client.sign_in_guest(name)
                print(f"Signed in as {me.display_name}; your credential: {client.credential}")
            else:
                print("--ranked needs --credential or --name (a ranked match is played by signed-in players)")
                return None
            async for status in client.find_match(game, seats):
                if isinstance(status, ranked_pb2.QueueMatch):
                    print(status.message)
                    return status.game_id, client.credential or ""
                print(status.message, flush=True)
    except errors.TablierError as exc:
        print(f"{exc.reason or exc.code.name}: {exc.message}", file=sys.stderr)
    except KeyboardInterrupt:
        print("Left the queue.")
    return None
