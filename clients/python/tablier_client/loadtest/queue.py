"""`tablier loadtest queue`: N simulated players queueing for ranked matches (FindMatch) and
playing them.

    tablier loadtest queue --server HOST:PORT --players 1000 --game carre --seats 2 [--no-play]

Each player signs in as a guest, then, `--rounds` times: queues, waits for its match (the time
to match is from the FindMatch call to its QueueMatch) and, unless `--no-play`, plays its seat
with its first legal move until the match is over. The players queue together (a barrier), so
the queue holds N at once. Reports the time to match (p50, p90, p99, max), the matches formed
per second from the queueing to the last match, and the moves per second played.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from .. import errors
from ..sdk import Client, Retry, connect, with_game
from ..v1 import ranked_pb2, service_pb2


def add_parser(scenarios: Any) -> None:
    from ..cli import DEFAULT_SERVER

    s = scenarios.add_parser("queue", help="N players queueing for ranked matches (FindMatch) and playing them")
    s.add_argument("--server", default=os.environ.get("TABLIER_LISTEN", DEFAULT_SERVER), help="HOST:PORT")
    s.add_argument("--players", type=int, default=100, help="simulated players (each a guest player)")
    s.add_argument("--game", default="carre", help="game type id")
    s.add_argument("--seats", type=int, default=2, help="seats per match")
    s.add_argument("--rounds", type=int, default=1, help="matches each player queues for in turn")
    s.add_argument("--no-play", action="store_true", help="only queue: do not play the matches")
    s.add_argument("--json", type=Path, help="write the report here as JSON")
    s.set_defaults(run=run)


async def _retrying(make: Any) -> Any:
    """A call the server may rate-limit (guest creation per peer): waits as it asks."""
    while True:
        try:
            return await make()
        except errors.ResourceExhausted as exc:
            wait = int(exc.metadata.get("retry_after_ms", "100"))
            await asyncio.sleep(wait / 1000)


async def _play(client: Client, game_id: str) -> int:
    """Plays the player's seat with its first legal move until the match is over; the moves played."""
    stub, md = client.stub, with_game(client._metadata(client.credential), game_id)
    moves_played = 0
    while True:
        moves = await stub.ListLegalMoves(service_pb2.ListLegalMovesRequest(game_id=game_id), metadata=md)
        view = await stub.GetView(service_pb2.GetViewRequest(game_id=game_id, min_seq=moves.seq), metadata=md)
        if view.state.over:
            return moves_played
        if not moves.moves:
            await asyncio.sleep(0.01)  # another seat's turn: looked at again shortly
            continue
        try:
            await stub.PlayMove(
                service_pb2.PlayMoveRequest(
                    game_id=game_id, command_id=str(uuid.uuid4()), action=moves.moves[0], expected_seq=moves.seq
                ),
                metadata=md,
            )
            moves_played += 1
        except Exception:  # a lost race (ABORTED) or the match ended: looked at again
            continue


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    waits: list[float] = []
    matched_at: list[float] = []
    games: set[str] = set()
    moves = 0
    bots = 0
    async with connect(args.server, retry=Retry(attempts=1), timeout=120.0) as shared:
        clients = [Client(shared.channel, timeout=120.0) for _ in range(args.players)]
        await asyncio.gather(*(_retrying(lambda c=c, n=n: c.sign_in_guest(f"load {n}")) for n, c in enumerate(clients)))
        start = time.monotonic()
        for _ in range(args.rounds):
            barrier = asyncio.Barrier(args.players)

            async def one(c: Client, barrier: asyncio.Barrier = barrier) -> None:
                nonlocal moves, bots
                await barrier.wait()
                t0 = time.monotonic()
                async for status in c.find_match(args.game, args.seats):
                    if isinstance(status, ranked_pb2.QueueMatch):
                        waits.append(time.monotonic() - t0)
                        matched_at.append(time.monotonic() - start)
                        games.add(status.game_id)
                        bots += "bot " in status.message
                        if not args.no_play:
                            played = await _play(c, status.game_id)
                            moves += played  # after the await: `moves += await ...` would lose the others'
                        return

            await asyncio.gather(*(one(c) for c in clients))
        elapsed = time.monotonic() - start
    span = (max(matched_at) - min(matched_at)) if len(matched_at) > 1 else 0.0
    return {
        "players": args.players,
        "rounds": args.rounds,
        "game": args.game,
        "seats": args.seats,
        "matched": len(waits),
        "matches": len(games),
        "with_bots": bots,
        "time_to_match_s": {
            "p50": percentile(waits, 0.50),
            "p90": percentile(waits, 0.90),
            "p99": percentile(waits, 0.99),
            "max": max(waits, default=0.0),
        },
        # From the moment the players queued to the last match: the queue's throughput.
        "matches_per_s": len(games) / max(waits) if waits and max(waits) > 0 else 0.0,
        "formation_span_s": span,
        "moves": moves,
        "moves_per_s": moves / elapsed if elapsed > 0 else 0.0,
        "elapsed_s": elapsed,
    }


async def run(args: argparse.Namespace) -> int:
    if args.players < 1 or args.seats < 1:
        raise SystemExit("--players and --seats are at least 1")
    try:
        report = await _run(args)
    except errors.TablierError as exc:
        raise SystemExit(f"tablier loadtest queue: {exc}") from None
    t = report["time_to_match_s"]
    print(
        f"{report['players']} players x {report['rounds']} rounds, {report['game']} {report['seats']} seats: "
        f"{report['matched']} matched into {report['matches']} matches ({report['with_bots']} players with a bot)"
    )
    print(f"time to match: p50 {t['p50']:.3f} s, p90 {t['p90']:.3f} s, p99 {t['p99']:.3f} s, max {t['max']:.3f} s")
    print(
        f"matches formed: {report['matches_per_s']:.1f}/s (the last {report['formation_span_s']:.2f} s after the first); "
        f"moves played: {report['moves']} ({report['moves_per_s']:.1f}/s); {report['elapsed_s']:.2f} s in all"
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0 if report["matched"] == report["players"] * report["rounds"] else 1
