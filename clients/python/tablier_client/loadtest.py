"""A small, bounded load test of a tablier server on loopback (never a remote host).

    python -m tablier_client.loadtest evaluate --game qwirkle --position pos.bin
    python -m tablier_client.loadtest play --game qwirkle --seats 2 --matches 8

`evaluate` sends EvaluatePosition with the game's Position message read from a file (binary
protobuf); `play` runs bot matches side by side (SuggestMove + PlayMove) and measures PlayMove.
Both stop after --requests calls or --duration seconds, whichever comes first, and report the
median, p90 and p99 latency and the throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import socket
import statistics
import sys
from dataclasses import dataclass, field

import grpc
from google.protobuf import any_pb2

from .v1 import service_pb2 as pb
from .v1 import service_pb2_grpc as rpc

from .bots import play_to_end


@dataclass
class Report:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        n = len(self.latencies)
        if not n:
            return f"0 ok, {self.errors} errors"
        ms = sorted(x * 1000 for x in self.latencies)
        p = statistics.quantiles(ms, n=100, method="inclusive") if n > 1 else [ms[0]] * 99
        return (
            f"{n} ok, {self.errors} errors in {self.seconds:.2f} s: {n / self.seconds:.0f} req/s; "
            f"median {statistics.median(ms):.2f} ms, p90 {p[89]:.2f} ms, p99 {p[98]:.2f} ms"
        )


def require_loopback(address: str) -> None:
    host = address.rsplit(":", 1)[0].strip("[]")
    for info in socket.getaddrinfo(host, None):
        if not ipaddress.ip_address(info[4][0]).is_loopback:
            raise SystemExit(f"refusing to load-test {address}: not a loopback address")


async def evaluate(stub: rpc.GameServiceAsyncStub, args: argparse.Namespace, report: Report,
                   deadline: float) -> None:
    types = {t.id: t for t in (await stub.ListGameTypes(pb.ListGameTypesRequest())).game_types}
    info = types[args.game]
    if not info.position_type:
        raise SystemExit(f"{args.game} has no position evaluator")
    with open(args.position, "rb") as f:
        position = any_pb2.Any(type_url=f"type.googleapis.com/{info.position_type}", value=f.read())
    request = pb.EvaluatePositionRequest(game_type=args.game, position=position)
    loop = asyncio.get_running_loop()
    budget = iter(range(args.requests))

    async def worker() -> None:
        for _ in budget:
            if loop.time() > deadline:
                return
            started = loop.time()
            try:
                await stub.EvaluatePosition(request)
            except grpc.aio.AioRpcError:
                report.errors += 1
                continue
            report.latencies.append(loop.time() - started)

    await asyncio.gather(*(worker() for _ in range(args.concurrency)))


async def play(stub: rpc.GameServiceAsyncStub, args: argparse.Namespace, report: Report, deadline: float) -> None:
    loop = asyncio.get_running_loop()
    started = 0

    def take() -> bool:
        """One more PlayMove, if the budget (count and time) allows."""
        nonlocal started
        if started >= args.requests or loop.time() > deadline:
            return False
        started += 1
        return True

    async def one_match() -> None:
        while started < args.requests and loop.time() < deadline:
            created = await stub.CreateGame(pb.CreateGameRequest(game_type=args.game, seats=args.seats))
            await play_to_end(stub, created.game_id, list(created.seat_tokens), created.state,
                              bot=args.bot, on_play=report.latencies.append, keep_going=take)

    await asyncio.gather(*(one_match() for _ in range(args.matches)))


async def run(args: argparse.Namespace) -> Report:
    require_loopback(args.server)
    report = Report()
    async with grpc.aio.insecure_channel(args.server) as channel:
        stub = rpc.GameServiceStub(channel)
        loop = asyncio.get_running_loop()
        started = loop.time()
        await args.run(stub, args, report, started + args.duration)
        report.seconds = loop.time() - started
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="bounded loopback load test of a tablier server")
    p.add_argument("--server", default="127.0.0.1:50051")
    p.add_argument("--requests", type=int, default=2000, help="stop after this many calls")
    p.add_argument("--duration", type=float, default=10.0, help="stop after this many seconds")
    sub = p.add_subparsers(dest="mode", required=True)
    e = sub.add_parser("evaluate")
    e.add_argument("--game", required=True)
    e.add_argument("--position", required=True, help="file holding the game's Position message")
    e.add_argument("--concurrency", type=int, default=16)
    e.set_defaults(run=evaluate)
    g = sub.add_parser("play")
    g.add_argument("--game", required=True)
    g.add_argument("--seats", type=int, default=2)
    g.add_argument("--bot", default="")
    g.add_argument("--matches", type=int, default=8, help="matches played side by side")
    g.set_defaults(run=play)
    args = p.parse_args(argv)
    report = asyncio.run(run(args))
    print(f"{args.mode} {args.game}: {report.summary()}")
    return 0 if report.latencies and not report.errors else 1


if __name__ == "__main__":
    sys.exit(main())
