"""Plays a whole match of bots against a running server, over gRPC only: CreateGame, then
the awaited seat asks SuggestMove and plays the suggestion with PlayMove, until the match is
over.

    python -m tablier_clients.bots --server 127.0.0.1:50051 --game qwirkle --seats 2
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from dataclasses import dataclass, field

import grpc

from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc


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
    stub: rpc.GameServiceStub,
    game_id: str,
    tokens: list[str],
    state: pb.GameState,
    *,
    bot: str = "",
    max_moves: int = 10_000,
    on_play=None,
    keep_going=None,
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
        created = await stub.CreateGame(
            pb.CreateGameRequest(game_type=game_type, seats=seats, options=options or {})
        )
        return await play_to_end(
            stub, created.game_id, list(created.seat_tokens), created.state, bot=bot, max_moves=max_moves
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", default="127.0.0.1:50051")
    p.add_argument("--game", required=True)
    p.add_argument("--seats", type=int, required=True)
    p.add_argument("--bot", default="")
    p.add_argument("--max-moves", type=int, default=10_000)
    args = p.parse_args(argv)
    r = asyncio.run(play_match(args.server, args.game, args.seats, bot=args.bot, max_moves=args.max_moves))
    print(f"{args.game} {r.game_id}: over={r.over} moves={r.moves} events={r.events} "
          f"scores={r.scores} winners={r.winners} reason={r.reason or '-'}")
    return 0 if r.over else 1


if __name__ == "__main__":
    sys.exit(main())
