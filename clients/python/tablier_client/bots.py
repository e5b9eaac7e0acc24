"""Plays a whole match of bots against a running server, over gRPC only: CreateGame, then
the awaited seat asks SuggestMove and plays the suggestion with PlayMove, until the match is
over.

    tablier bots --server 127.0.0.1:50051 --game qwirkle --seats 2
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import grpc

from .v1 import service_pb2 as pb
from .v1 import service_pb2_grpc as rpc

if TYPE_CHECKING:
    from .cli import Subcommands


@dataclass
class MatchResult:
    game_id: str
    over: bool
    moves: int
    events: int
    scores: list[int] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)
    reason: str = ""
    retries: int = 0


def seat_metadata(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def play_to_end(
    stub: rpc.GameServiceAsyncStub,
    game_id: str,
    tokens: list[str],
    state: pb.GameState,
    *,
    bot: str = "",
    max_moves: int = 10_000,
    on_play: Callable[[float], object] | None = None,
    keep_going: Callable[[], bool] | None = None,
) -> MatchResult:
    """Plays `game_id` from `state` until it is over (or `max_moves`, or `keep_going()` says
    no before a move). `on_play(seconds)` is called with the latency of each PlayMove."""
    loop = asyncio.get_running_loop()
    moves = retries = 0
    while not state.over and moves < max_moves and (keep_going is None or keep_going()):
        seat = state.to_act[0]
        md = seat_metadata(tokens[seat])
        suggestion = await stub.SuggestMove(pb.SuggestMoveRequest(game_id=game_id, bot=bot), metadata=md)
        request = pb.PlayMoveRequest(
            game_id=game_id,
            command_id=str(uuid.uuid4()),
            action=suggestion.action,
            expected_seq=suggestion.seq,
        )
        started = loop.time()
        try:
            played = await stub.PlayMove(request, metadata=md)
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.ABORTED:
                raise
            # Someone else moved first: look again and decide again.
            retries += 1
            state = (await stub.GetView(pb.GetViewRequest(game_id=game_id), metadata=md)).state
            continue
        if on_play is not None:
            on_play(loop.time() - started)
        moves += 1
        state = played.state
    return MatchResult(
        game_id=game_id,
        over=state.over,
        moves=moves,
        events=state.seq,
        scores=list(state.outcome.scores),
        winners=list(state.outcome.winners),
        reason=state.outcome.reason,
        retries=retries,
    )


async def play_match(
    address: str,
    game_type: str,
    seats: int,
    *,
    bot: str = "",
    options: dict[str, str] | None = None,
    max_moves: int = 10_000,
) -> MatchResult:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = rpc.GameServiceStub(channel)
        created = await stub.CreateGame(pb.CreateGameRequest(game_type=game_type, seats=seats, options=options or {}))
        return await play_to_end(
            stub, created.game_id, list(created.seat_tokens), created.state, bot=bot, max_moves=max_moves
        )


def register(sub: Subcommands) -> None:
    """`tablier bots` (see tablier_client.cli)."""
    from .cli import DEFAULT_SERVER, add_command

    sp = add_command(sub, "bots", help="play a whole match of bots over gRPC against a running server")
    if sp is None:
        return
    sp.add_argument("--game", required=True, help="game type id, e.g. qwirkle")
    sp.add_argument("--seats", type=int, required=True)
    sp.add_argument("--bot", default="", help="bot name (default: the game's strongest)")
    sp.add_argument("--server", default=os.environ.get("TABLIER_LISTEN", DEFAULT_SERVER))
    sp.add_argument("--max-moves", type=int, default=10_000)
    sp.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    result = asyncio.run(play_match(args.server, args.game, args.seats, bot=args.bot, max_moves=args.max_moves))
    print(f"{args.game} match {result.game_id}: " + ("over" if result.over else "NOT over"))
    print("seat  score  winner")
    for seat, score in enumerate(result.scores):
        print(f"{seat:>4}  {score:>5}  {'yes' if seat in result.winners else ''}".rstrip())
    print(f"{result.moves} moves, {result.events} events, reason {result.reason or '-'}")
    return 0 if result.over else 1


def main(argv: list[str] | None = None) -> int:
    from .cli import main as tablier_main

    return tablier_main(["bots", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
