"""`tablier bench-scale`: durable moves/s and CPU per move with 1, 2, 3... servers sharing
the database(s), the single server the baseline of the same run.

    tablier bench-scale [--servers 1,2,3] [--shards 1,2] [--rounds 3] [--seconds 3]
                        [--concurrency 16] [--database-url URL ...] [--via client|haproxy]

Each round starts, on loopback only, each server count in turn (the order rotated from round
to round, so a machine's drift falls on every count alike): that many `tablier serve`
processes, every one given the same `--database-url` options unchanged (several when the
server shards matches over databases), and nothing else running. The client spreads the
matches over the servers as a proxy would (`deploy/haproxy.cfg`): each match's calls go to one
server, chosen by a consistent (rendezvous) hash of the game id, with the `x-tablier-game`
header. It keeps `--concurrency` PlayMove calls in flight for `--seconds`: Qwirkle matches
whose moves were decided beforehand by the local core from each match's seed, so every call is
one durable move. Then the servers stop.

Reported per server count, median (range) over the rounds: durable moves/s and its ratio to
one server in the same round, server CPU per move summed over the servers, database CPU per
move (when the database runs on this machine: its postmaster and backends), the client's CPU
per move, p50 and p99 latency. Without `--database-url`, temporary embedded PostgreSQL
servers: one per shard of each `--shards` count (1 by default), every count with databases of
its own, so each (shards, servers) pair is measured alone in every round and compared with the
first pair of the same round.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import os
import secrets
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from google.protobuf import any_pb2

from tablier.benchkit import LOOPBACK, METER, Figure, Proc, _drive, _start

if TYPE_CHECKING:
    import grpc

    from tablier.bench_workloads import PlannedMatch
    from tablier.cli_options import Subcommands

GAME_HEADER = "x-tablier-game"
MOVES_PER_MATCH = 45  # about, for a 2-seat Qwirkle match between greedy bots


def owner(game_id: str, servers: int) -> int:
    """The server (index) of a match among `servers`: rendezvous hashing, consistent as a
    proxy's ring is (a server added or removed moves only its share of the matches)."""
    return max(range(servers), key=lambda i: hashlib.sha256(f"{i}:{game_id}".encode()).digest())


@dataclass
class Measured:
    shards: int
    servers: int
    rates: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)  # ms per move, summed over servers
    db_cpu: list[float] = field(default_factory=list)
    client_cpu: list[float] = field(default_factory=list)
    proxy_cpu: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    errors: list[int] = field(default_factory=list)
    dry: list[int] = field(default_factory=list)  # lanes whose planned moves ran out
    grouped: list[float] = field(default_factory=list)  # appends per commit
    appends: list[list[int]] = field(default_factory=list)  # per round, on each database


def span(xs: list[float], fmt: str) -> str:
    if not xs:
        return "-"
    return f"{format(statistics.median(xs), fmt)} ({format(min(xs), fmt)}-{format(max(xs), fmt)})"


@contextlib.contextmanager
def databases(urls: list[str], shard_counts: list[int]) -> Iterator[dict[int, list[str]]]:
    """The databases of each shard count: the given URLs (one count, theirs), or that many
    temporary embedded servers per count (the first of each its directory)."""
    if urls:
        yield {len(urls): urls}
        return
    from tablier import embedded

    with contextlib.ExitStack() as stack:
        yield {
            s: [stack.enter_context(embedded.start(None, temporary=True)).dsn for _ in range(s)] for s in shard_counts
        }


def database_pids(urls: list[str]) -> list[int]:
    """The postmaster of each database that runs on this machine (its CPU is metered)."""
    import psutil
    import psycopg

    pids = []
    for url in urls:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT pg_backend_pid()").fetchone()
            assert row is not None
            # Asked while connected: once closed, the backend may be gone before it is looked up.
            try:
                parent = psutil.Process(row[0]).parent()
            except psutil.Error:  # not on this machine
                continue
        if parent is not None and parent.name() == "postgres" and parent.pid not in pids:
            pids.append(parent.pid)
    return pids


def start_servers(count: int, urls: list[str], env: dict[str, str], logs: Path, tag: str) -> list[Proc]:
    """`count` servers, started side by side; each gets every database URL as given."""
    from concurrent.futures import ThreadPoolExecutor

    cmd = [sys.executable, "-m", "tablier.cli", "serve", "--listen", f"{LOOPBACK}:0", "--grace", "1"]
    for url in urls:
        cmd += ["--database-url", url]
    cmd += ["--data-dir", str(logs), "--access-log", "off"]

    def one(i: int) -> Proc:
        return _start(f"tablier serve {i + 1}/{count}", cmd, env, logs / f"serve-{tag}-{i + 1}.log")

    with ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(one, i) for i in range(count)]
    procs = [f.result() for f in futures if f.exception() is None]
    if len(procs) < count:
        for p in procs:
            p.stop()
        raise next(exc for f in futures if (exc := f.exception()) is not None)
    return procs


PROXY_CONFIG = """global
    maxconn 1024
defaults
    mode http
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    option redispatch
    retries 2
frontend grpc
    bind {bind} proto h2
    default_backend tablier
backend tablier
    balance hdr(x-tablier-game)
    hash-type consistent
{servers}
"""


def start_proxy(procs: list[Proc], logs: Path, tag: str) -> tuple[subprocess.Popen[bytes], str]:
    """HAProxy on a free loopback port in front of `procs` (as deploy/haproxy.cfg, without
    health checks): the process and its address."""
    import shutil
    import socket

    binary = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    if binary is None:
        raise SystemExit("--via haproxy needs the haproxy binary (apt-get install haproxy)")
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port = sock.getsockname()[1]
    config = logs / f"haproxy-{tag}.cfg"
    servers = "\n".join(f"    server s{i + 1} {p.address} proto h2" for i, p in enumerate(procs))
    config.write_text(PROXY_CONFIG.format(bind=f"{LOOPBACK}:{port}", servers=servers))
    log = logs / f"haproxy-{tag}.log"
    proc = subprocess.Popen([binary, "-db", "-f", str(config)], stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"haproxy did not start:\n{log.read_text()}")
        with socket.socket() as sock:
            if sock.connect_ex((LOOPBACK, port)) == 0:
                return proc, f"{LOOPBACK}:{port}"
        time.sleep(0.05)


def lane(stubs: list[object], matches: list[PlannedMatch], dry: list[int]) -> Callable[[], Awaitable[bool]]:
    """One PlayMove per call through the lane's planned matches, each sent to its match's server."""
    from tablier.bench_workloads import GAME, _type_url
    from tablier.v1 import service_pb2 as pb

    type_url = _type_url(GAME, "Action")
    calls = iter(
        [
            (
                stubs[owner(m.game_id, len(stubs))],
                pb.PlayMoveRequest(
                    game_id=m.game_id,
                    command_id=secrets.token_hex(16),
                    action=any_pb2.Any(type_url=type_url, value=action),
                    expected_seq=expected,
                ),
                (("authorization", f"Bearer {m.tokens[seat]}"), (GAME_HEADER, m.game_id)),
            )
            for m in matches
            for seat, action, expected in m.moves
        ]
    )

    async def one() -> bool:
        item = next(calls, None)
        if item is None:
            dry[0] += 1
            return False
        stub, request, metadata = item
        await stub.PlayMove(request, metadata=metadata)  # type: ignore[attr-defined]
        return True

    return one


async def database_now(url: str) -> object:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (await conn.execute("SELECT now()")).fetchone()
    assert row is not None
    return row[0]


async def appends_and_commits(url: str, since: object) -> tuple[int, int]:
    """The commands appended to this database since `since`, and the transactions that held
    them: how many appends each commit held (the servers' group commit at work)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (
            await conn.execute(
                "SELECT count(DISTINCT (game_id, command_id)), count(DISTINCT xmin::text) FROM events"
                " WHERE recorded_at >= %s AND command_id IS NOT NULL",
                (since,),
            )
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


async def measure(
    procs: list[Proc],
    urls: list[str],
    db_pids: list[int],
    operator: str,
    args: argparse.Namespace,
    per_lane: int,
    proxy: tuple[subprocess.Popen[bytes], str] | None = None,
) -> tuple[Figure, int]:
    """`args.concurrency` lanes of planned moves for `args.seconds` on these servers, each
    match's moves sent to its server, or all through `proxy` (its process, its address)."""
    import grpc

    from tablier.bench_workloads import _create_planned
    from tablier.v1.service_pb2_grpc import GameServiceStub

    channels: list[grpc.aio.Channel] = []
    try:
        addresses = [p.address for p in procs] if proxy is None else [proxy[1]]
        for address in addresses:
            # Two connections per address, as several clients would open.
            for _ in range(2):
                channel = grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
                channels.append(channel)
        stubs: list[object] = [GameServiceStub(channels[2 * i]) for i in range(len(addresses))]  # type: ignore[no-untyped-call]
        spare: list[object] = [GameServiceStub(channels[2 * i + 1]) for i in range(len(addresses))]  # type: ignore[no-untyped-call]
        n = args.concurrency
        planned = await _create_planned(stubs[0], operator, per_lane * n)  # type: ignore[arg-type]
        dry = [0]
        lanes = []
        for i in range(n):
            chosen = spare if i % 2 else stubs
            lanes.append(lane(chosen, planned[i::n], dry))
        METER.groups = {"client": [os.getpid()], "database": list(db_pids)}
        for i, p in enumerate(procs):
            METER.add(f"server-{i + 1}", p.proc.pid)
        if proxy is not None:
            METER.add("proxy", proxy[0].pid)
        since = [await database_now(url) for url in urls]
        fig = await _drive(lanes, args.seconds)
        written = [await appends_and_commits(url, t) for url, t in zip(urls, since, strict=True)]
        commits = sum(c for _, c in written)
        args.grouped = sum(a for a, _ in written) / commits if commits else float("nan")
        args.appends = [a for a, _ in written]
        return fig, dry[0]
    finally:
        for channel in channels:
            await channel.close()


def run(args: argparse.Namespace) -> int:
    counts = [int(x) for x in dict.fromkeys(str(args.servers).split(",")) if x]
    if not counts or min(counts) < 1:
        raise SystemExit("--servers: server counts of at least 1, e.g. 1,2,3")
    shard_counts = [int(x) for x in dict.fromkeys(str(args.shards or "").split(",")) if x]
    if args.database_url and shard_counts:
        raise SystemExit("--shards starts its own databases: give it or --database-url, not both")
    if any(s < 1 for s in shard_counts):
        raise SystemExit("--shards: shard counts of at least 1, e.g. 1,2")
    logs = Path(args.log_dir or os.environ.get("TMPDIR", "/tmp")) / f"tablier-bench-scale-{os.getpid()}"
    logs.mkdir(parents=True, exist_ok=True)
    operator = secrets.token_hex(16)
    env = dict(os.environ, TABLIER_OPERATOR_TOKEN=operator, GRPC_ENABLE_FORK_SUPPORT="false")
    with databases(args.database_url or [], shard_counts or [1]) as by_shards:
        pairs = [(s, k) for s in by_shards for k in counts]
        results = {pair: Measured(*pair) for pair in pairs}
        pids = {s: database_pids(urls) for s, urls in by_shards.items()}
        # Enough planned moves for every lane at the fastest pair's rate, with room to spare.
        per_lane = max(
            2,
            math.ceil(
                args.expect * max(counts) * max(by_shards) * args.seconds * 1.5 / args.concurrency / MOVES_PER_MATCH
            ),
        )
        for r in range(args.rounds):
            order = pairs[r % len(pairs) :] + pairs[: r % len(pairs)]
            figures: dict[tuple[int, int], Figure] = {}
            for s, k in order:
                urls, db_pids = by_shards[s], pids[s]
                tag = f"r{r + 1}-{s}x{k}"
                procs = start_servers(k, urls, env, logs, tag)
                proxy = None
                try:
                    if args.via == "haproxy":
                        proxy = start_proxy(procs, logs, tag)
                    fig, dry = asyncio.run(measure(procs, urls, db_pids, operator, args, per_lane, proxy))
                finally:
                    if proxy is not None:
                        proxy[0].terminate()
                        proxy[0].wait(10)
                    for p in procs:
                        p.stop()
                figures[s, k] = fig
                m = results[s, k]
                m.rates.append(fig.rate)
                m.server_cpu.append(sum(v for g, v in fig.cpu.items() if g.startswith("server-")))
                if "database" in fig.cpu and db_pids:
                    m.db_cpu.append(fig.cpu["database"])
                m.client_cpu.append(fig.cpu.get("client", 0.0))
                if "proxy" in fig.cpu:
                    m.proxy_cpu.append(fig.cpu["proxy"])
                m.p50.append(fig.pct(0.5))
                m.p99.append(fig.pct(0.99))
                m.errors.append(fig.errors)
                m.grouped.append(args.grouped)
                m.appends.append(args.appends)
                m.dry.append(dry)
                print(
                    f"round {r + 1}, {s} shard{'s' if s > 1 else ''}, {k} server{'s' if k > 1 else ''}: "
                    f"{fig.rate:,.0f} moves/s, "
                    f"server CPU {m.server_cpu[-1]:.2f} ms/move, database CPU {fig.cpu.get('database', 0):.3f} "
                    f"ms/move, {args.grouped:.2f} appends/commit, errors {fig.errors}, lanes run dry {dry}",
                    file=sys.stderr,
                )
            baseline = figures[pairs[0]].rate
            for pair in pairs:
                results[pair].ratios.append(figures[pair].rate / baseline if baseline else float("nan"))
    report(results, pairs, args)
    # A run whose moves all failed says so by its exit status, not with zeros alone.
    return 0 if all(min(m.rates) > 0 for m in results.values()) else 1


def report(results: dict[tuple[int, int], Measured], pairs: list[tuple[int, int]], args: argparse.Namespace) -> None:
    print(
        f"\n{args.concurrency} moves in flight through {args.via}, {args.rounds} rounds of {args.seconds:g} s, "
        f"client on the same machine ({os.cpu_count()} cores, load average "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}); median (range) over the rounds"
    )
    s0, k0 = pairs[0]
    print(
        f"\n{'shards':>6} {'servers':>7} {'durable moves/s':>24} {f'x {s0}/{k0}':>20} {'server CPU ms/move':>22} "
        f"{'db CPU ms/move':>20} {'client CPU ms/move':>20} {'proxy CPU ms/move':>20} {'p50 ms':>18} "
        f"{'p99 ms':>20} {'appends/commit':>18} {'errors':>7}"
    )
    for pair in pairs:
        m = results[pair]
        print(
            f"{m.shards:>6} {m.servers:>7} {span(m.rates, ',.0f'):>24} {span(m.ratios, '.2f'):>20} "
            f"{span(m.server_cpu, '.2f'):>22} {span(m.db_cpu, '.3f'):>20} {span(m.client_cpu, '.2f'):>20} "
            f"{span(m.proxy_cpu, '.2f'):>20} {span(m.p50, '.1f'):>18} "
            f"{span(m.p99, '.1f'):>20} {span(m.grouped, '.2f'):>18} {sum(m.errors):>7}"
        )
    print(f"\n(x {s0}/{k0}: the rate's ratio to {s0} shard(s) and {k0} server(s) in the same round)")
    if any(sum(m.dry) for m in results.values()):
        print("\nnote: some lanes ran out of planned moves before the end: raise --expect")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "format": "tablier-bench-scale/2",
                    "concurrency": args.concurrency,
                    "rounds": args.rounds,
                    "seconds": args.seconds,
                    "via": args.via,
                    "results": [vars(results[pair]) for pair in pairs],
                },
                indent=1,
            )
            + "\n"
        )


def add_parser(sub: Subcommands, add_command: Callable[..., argparse.ArgumentParser | None]) -> None:
    sp = add_command(
        sub,
        "bench-scale",
        help="durable moves/s and CPU per move with 1, 2, 3... servers over 1, 2... shards (loopback, stops by itself)",
    )
    if sp is None:
        return
    sp.add_argument(
        "--servers", default="1,2,3", help="server counts to measure, e.g. 1,2,3 (the first is the baseline)"
    )
    sp.add_argument(
        "--shards",
        default=None,
        help="shard counts to measure, e.g. 1,2: that many temporary embedded PostgreSQL servers for each "
        "(default 1; not with --database-url)",
    )
    sp.add_argument("--rounds", type=int, default=3)
    sp.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    sp.add_argument("--concurrency", type=int, default=16, help="moves in flight")
    sp.add_argument(
        "--database-url",
        action="append",
        help="PostgreSQL for the servers, given to each `tablier serve` unchanged; repeat it for several "
        "(a server that shards matches over them). Default: a temporary embedded server",
    )
    sp.add_argument(
        "--expect",
        type=float,
        default=700.0,
        help="moves/s one server is expected to reach (sizes the planned matches)",
    )
    sp.add_argument(
        "--via",
        choices=("client", "haproxy"),
        default="client",
        help="who hashes each match to its server: the client, or HAProxy in front of the servers (one address)",
    )
    sp.add_argument("--json", default=None, help="write the figures here as JSON")
    sp.add_argument("--log-dir", default=None, help="where the servers' logs go")
    sp.set_defaults(run=run)
