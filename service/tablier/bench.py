"""`tablier bench-service`: the service's speed as ratios to a bare gRPC echo, from one run.

    tablier bench-service [--rounds 3] [--seconds 3] [--workers 1,2] [--deep 64,256] [--database-url URL]
                          [--shards N]

Starts, on loopback only, a bare grpc.aio echo server (a unary method returning its request)
and a real `tablier serve` per worker count asked (`--workers 1,2` runs both side by side on one
database), then in each round measures, with the same client and the same number of calls in
flight:

- echo: the bare server;
- echo + durable append: the same echo server answering after one append of a synthetic
  event through the server's own store (`PostgresStore.append`: its group commit, its feed of
  appends), as many in flight as PlayMove: the floor of a durable move with no game in it;
- EvaluatePosition: one mid-game Qwirkle position (from a greedy self-play match);
- PlayMove: Qwirkle matches whose moves were decided beforehand by the local core from the
  match's seed (the server decides the same events), so every call is one durable move;
- GetView, GetView at the middle seq, and WatchGame resumed one event before the end, on one
  6-player Démocratie match of about 1,000 events;
- the same GetView over Connect (binary, as the web app speaks it) to the server's browser
  address (`--web-listen`), on kept-alive HTTP/1.1 connections: as many in flight, then one
  call in flight on each transport, whose median latencies give the Connect/gRPC ratio;
- with `--deep` (64 and 256 by default), the echo and PlayMove again with that many calls in
  flight (lanes sharing the channels), each PlayMove compared with the echo at its depth;
  PlayMove on every worker count, the other calls on the first only;
- the rebuild of a 300-event match cold from PostgreSQL (this process, the server's code path:
  every event read and checked), as a median time.

PlayMove rows also give how many appends each commit held (the commands the window wrote over
their distinct transactions in PostgreSQL): the server's group commit at work. After the
rounds, with the servers idle, PostgreSQL's CPU per append is measured for groups of 1, 4, 8
and 16 appends in flight through the store's own append path: what a commit costs, spread over
the appends it holds. Every row gives its server CPU per call as a multiple of the echo's (at
the same depth for the deeper queues), the figure the service's goals are stated in.

Each figure is printed with its ratio to the echo of the same round; the summary gives the
median and range over the rounds. Everything stops by itself; the temporary embedded
PostgreSQL (unless --database-url; `--shards N`: N of them, the servers' matches spread over
them, the database CPU theirs together) and the servers are stopped at the end. A machine's speed
drifts within minutes: compare ratios, not absolute rates, across runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import secrets
import statistics
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from google.protobuf import any_pb2

from tablier.benchkit import (
    ASYNC_ECHO_METHOD,
    DURABLE_METHOD,
    ECHO_METHOD,
    LOOPBACK,
    METER,
    START_TIMEOUT,
    Figure,
    Proc,
    _channels,
    _drive,
    _echo_main,
    _lanes,
    _start,
)

if TYPE_CHECKING:
    import grpc

    from tablier.bench_workloads import PlannedMatch
    from tablier.cli_options import Subcommands
    from tablier.v1.service_pb2_grpc import GameServiceStub

# --------------------------------------------------------------------------- the run

PACED_ECHO = "echo at PlayMove's pace"
DURABLE_ECHO = "echo + durable append"
ASYNC_ECHO = "echo, async def handler"
ON_ECHO = 0  # a figure's "workers" when the echo server made it
CONNECT_VIEW = "GetView over Connect"
ONE_VIEW = "GetView, 1 in flight"
ONE_CONNECT_VIEW = "GetView over Connect, 1 in flight"


@dataclass
class Row:
    label: str
    rates: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    cpu: dict[str, list[float]] = field(default_factory=dict)  # client/server/database ms per call
    grouped: list[float] = field(default_factory=list)  # PlayMove: appends per commit

    def add_cpu(self, fig: Figure, server: str) -> None:
        for name, group in (("client", "client"), ("server", server), ("database", "database")):
            if group in fig.cpu:
                self.cpu.setdefault(name, []).append(fig.cpu[group])

    def cpu_text(self) -> str:
        return "/".join(
            f"{statistics.median(self.cpu[n]):.2f}" if self.cpu.get(n) else "-"
            for n in ("client", "server", "database")
        )


def _span(xs: list[float], fmt: str) -> str:
    if not xs:
        return "-"
    med = statistics.median(xs)
    return f"{med:{fmt}} ({min(xs):{fmt}}-{max(xs):{fmt}})"


async def _bench(args: argparse.Namespace, servers: dict[int, Proc], echo: Proc, operator: str) -> list[Row]:
    from tablier.bench_workloads import (
        GAME,
        _call,
        _cold_rebuilds,
        _connect_client,
        _connect_get_view,
        _create_planned,
        _echo,
        _get_view,
        _long_match,
        _mid_game_position,
        _play_lane,
        _resume,
        _type_url,
    )
    from tablier.v1 import service_pb2 as pb
    from tablier.v1 import service_pb2_grpc as rpc

    n = args.concurrency
    position = any_pb2.Any(type_url=_type_url(GAME, "Position"), value=_mid_game_position())
    evaluate_request = pb.EvaluatePositionRequest(game_type=GAME, position=position)
    sample_move = pb.PlayMoveRequest(
        game_id=str(os.urandom(16).hex()),
        command_id="x" * 36,
        action=any_pb2.Any(type_url=_type_url(GAME, "Action"), value=b"\x0a" * 24),
        expected_seq=20,
    )
    echo_body = sample_move.SerializeToString()

    echo_channels = _channels(echo.address, n)
    echo_calls: list[grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]] = [
        ch.unary_unary(ECHO_METHOD) for ch in echo_channels
    ]
    durable_calls: list[grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]] = [
        ch.unary_unary(DURABLE_METHOD) for ch in echo_channels
    ]
    async_echo_calls: list[grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]] = [
        ch.unary_unary(ASYNC_ECHO_METHOD) for ch in echo_channels
    ]
    per_server: dict[int, tuple[list[grpc.aio.Channel], list[GameServiceStub]]] = {}
    for workers, proc in servers.items():
        channels = _channels(proc.address, n)
        # grpcio-tools generates the stub without annotations (and no .pyi for it).
        stubs = [rpc.GameServiceStub(ch) for ch in channels]  # type: ignore[no-untyped-call]
        for ch in channels:
            await asyncio.wait_for(ch.channel_ready(), START_TIMEOUT)
        per_server[workers] = (channels, stubs)
    for ch in echo_channels:
        await asyncio.wait_for(ch.channel_ready(), START_TIMEOUT)

    # The long match for reads into the past, on the first server.
    first_stubs = per_server[min(servers)][1]
    long_id, long_seq = await _long_match(first_stubs[0], operator, args.history)
    past = max(1, long_seq // 2)
    print(f"long match {long_id}: {long_seq} events; reads at seq {past}", file=sys.stderr)
    cold = []
    if "reads" in args.only:
        rebuilt_id, rebuilt_seq = await _long_match(first_stubs[0], operator, 300)
        cold = await _cold_rebuilds("\n".join(args.shard_dsns), args.seed_dir, rebuilt_id, 15)
        print(
            f"cold rebuild of a {rebuilt_seq}-event match: median {statistics.median(cold):.1f} ms "
            f"({min(cold):.1f}-{max(cold):.1f}, {len(cold)} times)",
            file=sys.stderr,
        )
        args.cold = (rebuilt_seq, cold)

    rows: dict[str, Row] = {}
    grouped: dict[str, float] = {}

    async def play(label: str, lanes: list[Callable[[], Awaitable[bool]]]) -> Figure:
        """PlayMove through `lanes`, and how many appends each commit held (the commands
        written in the window over their distinct transactions)."""
        import psycopg

        async with contextlib.AsyncExitStack() as stack:
            conns = [
                await stack.enter_async_context(await psycopg.AsyncConnection.connect(dsn, autocommit=True))
                for dsn in args.shard_dsns
            ]
            since = [await (await conn.execute("SELECT now()")).fetchone() for conn in conns]
            fig = await _drive(lanes, args.seconds)
            counted = [
                await (
                    await conn.execute(
                        "SELECT count(DISTINCT (game_id, command_id)), count(DISTINCT xmin::text) FROM events"
                        " WHERE recorded_at >= %s AND command_id IS NOT NULL",
                        at,
                    )
                ).fetchone()
                for conn, at in zip(conns, since, strict=True)
            ]
        commands, commits = (sum(c[i] for c in counted if c is not None) for i in (0, 1))
        if commits:
            grouped[label] = commands / commits
        return fig

    def row(label: str) -> Row:
        return rows.setdefault(label, Row(label))

    async def run_echo(seconds: float = args.seconds) -> Figure:
        return await _drive(_lanes(lambda c: _echo(c, echo_body), echo_calls), seconds)

    async def run_echo_paced(rate: float) -> Figure:
        """The echo at `rate` calls/s over the same lanes, each lane waiting out the rest of its
        share of the time after each call: a server's CPU per call grows as its calls come
        further apart (fewer handled per wake-up of its event loop), so this is the echo's cost
        at a slower call's pace."""
        interval = n / rate
        loop = asyncio.get_running_loop()

        def paced(call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]) -> Callable[[], Awaitable[bool]]:
            async def one() -> bool:
                started = loop.time()
                await call(echo_body)
                await asyncio.sleep(max(0.0, interval - (loop.time() - started)))
                return True

            return one

        return await _drive([paced(c) for c in echo_calls], args.seconds)

    deep = [d for d in args.deep if d != n]

    async def run_echo_deep(depth: int) -> Figure:
        return await _drive(
            [_lanes(lambda c: _echo(c, echo_body), echo_calls)[i % n] for i in range(depth)], args.seconds
        )

    # Enough planned matches for the lanes never to run dry at the echo's rate (~50 moves each).
    per_lane = max(2, int((await run_echo(1.0)).rate * args.seconds * 1.5 / n / 45) + 1)
    for r in range(args.rounds):
        planned: dict[tuple[int, int], list[PlannedMatch]] = {}
        if "play" in args.only:
            for workers, (_, stubs) in per_server.items():
                for depth in [n, *deep]:
                    lanes_matches = max(2, per_lane * n // depth + 1) * depth
                    planned[workers, depth] = await _create_planned(stubs[0], operator, lanes_matches)
        # Echo first and last in each round: the baseline is the mean of the two.
        paced_echo: Figure | None = None
        echo_a = await run_echo()
        measured: list[tuple[str, Figure, int]] = []
        # The same echo from an `async def` handler: no thread pool, the floor of our handlers.
        measured.append(
            (ASYNC_ECHO, await _drive(_lanes(lambda c: _echo(c, echo_body), async_echo_calls), args.seconds), ON_ECHO)
        )
        # Deeper queues: the echo and PlayMove with more calls in flight (lanes share channels).
        deep_echo: dict[int, Figure] = {d: await run_echo_deep(d) for d in deep} if "play" in args.only else {}
        for workers, (_, stubs) in per_server.items():
            tag = f"[{workers} worker{'s' if workers > 1 else ''}]"

            async def play_deep(
                workers: int = workers,
                stubs: list[GameServiceStub] = stubs,
                tag: str = tag,
                planned: dict[tuple[int, int], list[PlannedMatch]] = planned,
                measured: list[tuple[str, Figure, int]] = measured,
            ) -> None:
                # Last: the deeper queues' many matches must not crowd the others' out of the cache.
                for depth in deep if "play" in args.only else []:
                    queues = [planned[workers, depth][i::depth] for i in range(depth)]
                    lanes = [_play_lane(stubs[i % n], queues[i]) for i in range(depth)]
                    label = f"PlayMove {tag} {depth} in flight"
                    measured.append((label, await play(label, lanes), workers))

            if workers != min(per_server):
                # Reads and evaluations are per process: measured on the first worker count only.
                if "play" in args.only:
                    queues = [planned[workers, n][i::n] for i in range(n)]
                    lanes = [_play_lane(stubs[i], queues[i]) for i in range(n)]
                    measured.append((f"PlayMove {tag}", await play(f"PlayMove {tag}", lanes), workers))
                await play_deep()
                continue
            if "evaluate" in args.only:
                measured.append(
                    (
                        f"EvaluatePosition {tag}",
                        await _drive(
                            _lanes(lambda s: _call(s.EvaluatePosition(evaluate_request)), stubs), args.seconds
                        ),
                        workers,
                    )
                )
            if "play" in args.only:
                queues = [planned[workers, n][i::n] for i in range(n)]
                lanes = [_play_lane(stubs[i], queues[i]) for i in range(n)]
                moves = await play(f"PlayMove {tag}", lanes)
                measured.append((f"PlayMove {tag}", moves, workers))
                if moves.rate:
                    paced_echo = await run_echo_paced(moves.rate)
                # The floor of a durable move: the echo after one append through the store.
                fig = await play(DURABLE_ECHO, _lanes(lambda c: _echo(c, echo_body), durable_calls))
                measured.append((DURABLE_ECHO, fig, ON_ECHO))
            if "reads" in args.only:
                measured.append(
                    (
                        f"GetView {tag}",
                        await _drive(
                            _lanes(lambda s: _call(s.GetView(pb.GetViewRequest(game_id=long_id))), stubs),
                            args.seconds,
                        ),
                        workers,
                    )
                )
                measured.append(
                    (
                        f"GetView at_seq={past} {tag}",
                        await _drive(
                            _lanes(lambda s: _call(s.GetView(pb.GetViewRequest(game_id=long_id, at_seq=past))), stubs),
                            args.seconds,
                        ),
                        workers,
                    )
                )
                # A watcher reconnecting: everything before its seq is history to rebuild.
                measured.append(
                    (
                        f"WatchGame after_seq={long_seq - 1} {tag}",
                        await _drive(
                            _lanes(lambda s: _resume(s, long_id, long_seq - 1, long_seq), stubs), args.seconds
                        ),
                        workers,
                    )
                )
            if "web" in args.only and servers[workers].web_url:
                # The browser transport beside gRPC: the same read over kept-alive connections.
                web = _connect_client(servers[workers].web_url)
                view = pb.GetViewRequest(game_id=long_id)
                measured.append(
                    (
                        f"{CONNECT_VIEW} {tag}",
                        await _drive([functools.partial(_connect_get_view, web, view)] * n, args.seconds),
                        workers,
                    )
                )
                # One call in flight: a call's latency, each transport on a connection it reuses.
                measured.append(
                    (
                        f"{ONE_VIEW} {tag}",
                        await _drive([functools.partial(_get_view, stubs[0], view)], args.seconds),
                        workers,
                    )
                )
                measured.append(
                    (
                        f"{ONE_CONNECT_VIEW} {tag}",
                        await _drive([functools.partial(_connect_get_view, web, view)], args.seconds),
                        workers,
                    )
                )
                await web.close()
            await play_deep()
        echo_b = await run_echo()
        base = (echo_a.rate + echo_b.rate) / 2
        e = row("bare grpc.aio echo")
        e.rates.append(base)
        e.ratios.append(1.0)
        e.p50.append((echo_a.pct(0.5) + echo_b.pct(0.5)) / 2)
        e.p99.append(max(echo_a.pct(0.99), echo_b.pct(0.99)))
        e.add_cpu(echo_a, "echo")
        e.add_cpu(echo_b, "echo")
        line = [f"round {r + 1}: echo {base:,.0f}/s"]
        if paced_echo is not None:
            pe = row(PACED_ECHO)
            pe.rates.append(paced_echo.rate)
            pe.ratios.append(paced_echo.rate / base)
            pe.p50.append(paced_echo.pct(0.5))
            pe.p99.append(paced_echo.pct(0.99))
            pe.add_cpu(paced_echo, "echo")
            paced_echo = None
        for depth, fig in deep_echo.items():
            d = row(f"bare grpc.aio echo {depth} in flight")
            d.rates.append(fig.rate)
            d.ratios.append(fig.rate / base)
            d.p50.append(fig.pct(0.5))
            d.p99.append(fig.pct(0.99))
            d.add_cpu(fig, "echo")
        for label, fig, workers in measured:
            if fig.errors and not fig.rate:
                raise SystemExit(f"tablier bench-service: every {label} call failed (the errors above); no figure")
            x = row(label)
            x.add_cpu(fig, f"serve-{workers}" if workers != ON_ECHO else "echo")
            x.rates.append(fig.rate)
            depth_of = next((d for d in deep if label.endswith(f" {d} in flight")), None)
            # Deeper queues are compared with the echo at the same depth.
            x.ratios.append(fig.rate / (deep_echo[depth_of].rate if depth_of is not None else base))
            x.p50.append(fig.pct(0.5))
            x.p99.append(fig.pct(0.99))
            if label in grouped:
                x.grouped.append(grouped.pop(label))
            line.append(
                f"{label} {fig.rate:,.0f}/s ({fig.rate / base:.2f}, p50 {fig.pct(0.5):.1f} ms)"
                + (f" {fig.errors} errors" if fig.errors else "")
            )
        print("; ".join(line), file=sys.stderr)

    for channels in [echo_channels] + [c for c, _ in per_server.values()]:
        for ch in channels:
            await ch.close()
    if "play" in args.only:
        # The servers idle: what a commit costs PostgreSQL, spread over the appends it holds.
        from tablier.bench_workloads import _append_groups

        args.groups = await _append_groups(args.dsn)
    return list(rows.values())


@contextlib.contextmanager
def _database(url: str | None, shards: int = 1) -> Iterator[list[str]]:
    """The databases (the first the directory): `url`'s, or `shards` temporary embedded ones."""
    if url:
        from tablier.store.shard_map import parse_urls

        yield [spec.url for spec in parse_urls(url)]
        return
    from tablier import embedded

    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(embedded.start(None, temporary=True)).dsn for _ in range(shards)]


def _meter_database(backend_pid: int) -> None:
    """Counts the database's CPU when it runs here (its postmaster is a backend's parent)."""
    import psutil

    try:
        parent = psutil.Process(backend_pid).parent()
    except psutil.Error:
        return
    if parent is not None and parent.name() == "postgres":
        METER.add("database", parent.pid)


def run(args: argparse.Namespace) -> int:
    import psycopg

    if "bus" in args.only.split(","):  # its own servers and NATS (`bench_bus`)
        from tablier import bench_bus

        return bench_bus.run(args)

    workers = sorted({int(w) for w in str(args.workers).split(",")})
    logs = Path(args.log_dir or os.environ.get("TMPDIR", "/tmp")) / f"tablier-bench-{os.getpid()}"
    logs.mkdir(parents=True, exist_ok=True)
    operator = secrets.token_hex(16)
    env = dict(os.environ, TABLIER_OPERATOR_TOKEN=operator, GRPC_ENABLE_FORK_SUPPORT="false")
    procs: list[Proc] = []
    with _database(args.database_url, args.shards) as dsns:
        dsn = dsns[0]
        for each in dsns:
            with psycopg.connect(each) as conn:
                shown = conn.execute("SHOW synchronous_commit").fetchone()
                backend = conn.execute("SELECT pg_backend_pid()").fetchone()
                assert shown is not None and backend is not None
                sync_commit = shown[0]
                _meter_database(backend[0])
        try:
            echo = _start(
                "echo", [sys.executable, "-m", "tablier.bench", "echo-server", "--durable", dsn], env, logs / "echo.log"
            )
            procs.append(echo)
            METER.add("echo", echo.proc.pid)
            servers = {}
            for w in workers:
                web = "web" in args.only and w == workers[0]  # the browser transport on the first only
                servers[w] = _start(
                    f"tablier serve --workers {w}",
                    [
                        sys.executable,
                        "-m",
                        "tablier.cli",
                        "serve",
                        "--listen",
                        f"{LOOPBACK}:0",
                        "--database-url",
                        "\n".join(dsns),
                        "--workers",
                        str(w),
                        "--grace",
                        "1",
                        "--data-dir",
                        str(logs),
                        *(["--web-listen", f"{LOOPBACK}:0"] if web else []),
                    ],
                    env,
                    logs / f"serve-{w}.log",
                    lines=2 if web else 1,
                )
                procs.append(servers[w])
                METER.add(f"serve-{w}", servers[w].proc.pid)
            args.dsn, args.seed_dir, args.cold, args.groups = dsn, logs, None, {}
            args.shard_dsns = dsns
            rows = asyncio.run(_bench(args, servers, echo, operator))
        finally:
            for p in reversed(procs):
                p.stop()
    print(
        f"\n{args.concurrency} calls in flight, {args.rounds} rounds of {args.seconds:g} s, "
        f"client on the same machine ({os.cpu_count()} cores, load average "
        f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}), synchronous_commit={sync_commit}"
    )
    print("median (range) over the rounds\n")
    print(
        f"{'what':<46} {'calls/s':>22} {'ratio to echo':>18} {'p50 ms':>18} {'p99 ms':>20} "
        f"{'CPU ms/call client/server/db':>30} {'server CPU x echo':>18} {'appends/commit':>16}"
    )
    echo_server = {r.label: statistics.median(r.cpu["server"]) for r in rows if r.cpu.get("server")}
    for r in rows:
        # Server CPU per call against the echo's, at the same depth for the deeper queues.
        depth = next((d for d in args.deep if r.label.endswith(f" {d} in flight")), None)
        echo_label = "bare grpc.aio echo" + (f" {depth} in flight" if depth is not None else "")
        times = (
            f"{statistics.median(r.cpu['server']) / echo_server[echo_label]:.2f}"
            if r.cpu.get("server") and echo_server.get(echo_label)
            else "-"
        )
        print(
            f"{r.label:<46} {_span(r.rates, ',.0f'):>22} {_span(r.ratios, '.2f'):>18} "
            f"{_span(r.p50, '.1f'):>18} {_span(r.p99, '.1f'):>20} {r.cpu_text():>30} {times:>18} "
            f"{_span(r.grouped, '.1f'):>16}"
        )
    moves = next((r for r in rows if r.label.startswith("PlayMove") and r.cpu.get("server")), None)
    if moves is not None and echo_server.get(PACED_ECHO):
        print(
            f"\n{moves.label}: server CPU per call {statistics.median(moves.cpu['server']) / echo_server[PACED_ECHO]:.2f}x"
            f" the echo's at the same pace ({statistics.median(moves.rates):,.0f} calls/s)"
        )
    by_label = {r.label: r for r in rows}
    grpc_one = by_label.get(f"{ONE_VIEW} [{workers[0]} worker{'s' if workers[0] > 1 else ''}]")
    web_one = by_label.get(f"{ONE_CONNECT_VIEW} [{workers[0]} worker{'s' if workers[0] > 1 else ''}]")
    if grpc_one is not None and web_one is not None and grpc_one.p50 and web_one.p50:
        ratios = [w / g for w, g in zip(web_one.p50, grpc_one.p50, strict=True)]
        print(
            f"\nGetView, one call in flight on a kept-alive connection: Connect p50 {_span(web_one.p50, '.2f')} ms,"
            f" gRPC {_span(grpc_one.p50, '.2f')} ms; Connect/gRPC {_span(ratios, '.2f')}"
        )
    if args.groups:
        print(
            "\nPostgreSQL CPU per append, g appends to g matches in flight (the store's group commit): "
            + ", ".join(f"g={g} {ms:.3f} ms" for g, ms in args.groups.items())
        )
    if args.cold:
        events, ms = args.cold
        print(
            f"\nrebuilding a {events}-event match cold from PostgreSQL: median {statistics.median(ms):.1f} ms "
            f"(range {min(ms):.1f}-{max(ms):.1f}, {len(ms)} times)"
        )
    return 0


def add_parser(sub: Subcommands, add_command: Callable[..., argparse.ArgumentParser | None]) -> None:
    sp = add_command(
        sub,
        "bench-service",
        help="PlayMove, EvaluatePosition and reads as ratios to a bare gRPC echo (loopback, stops by itself)",
    )
    if sp is None:
        return
    sp.add_argument("--rounds", type=int, default=3)
    sp.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    sp.add_argument("--concurrency", type=int, default=16, help="calls in flight")
    sp.add_argument(
        "--workers",
        default="1,2",
        help="worker counts to measure side by side (PlayMove on each; reads on the first), e.g. 1,2",
    )
    sp.add_argument(
        "--deep",
        default="64,256",
        type=lambda v: [int(x) for x in v.split(",") if x],
        help="more calls in flight to measure the echo and PlayMove at, e.g. 64,256 ('' for none)",
    )
    sp.add_argument("--history", type=int, default=1000, help="events of the match read into the past")
    sp.add_argument(
        "--database-url",
        default=os.environ.get("TABLIER_DATABASE_URL"),
        help="PostgreSQL to use (default: a temporary embedded server)",
    )
    sp.add_argument(
        "--shards",
        type=int,
        default=1,
        help="temporary embedded PostgreSQL servers the matches are spread over (without --database-url)",
    )
    sp.add_argument("--log-dir", default=None, help="where the servers' logs go")
    sp.add_argument(
        "--only",
        default="evaluate,play,reads,web",
        help="which of evaluate,play,reads,web to measure; bus alone: 1,000 watchers through the bus"
        " (NATS) against LISTEN/NOTIFY (`bench_bus`)",
    )
    sp.set_defaults(run=run)


if __name__ == "__main__":
    if sys.argv[1:2] == ["echo-server"] and len(sys.argv) in (2, 4) and sys.argv[2:3] in ([], ["--durable"]):
        asyncio.run(_echo_main(sys.argv[3] if len(sys.argv) == 4 else None))
    else:
        sys.exit("usage: python -m tablier.bench echo-server [--durable DATABASE_URL]")
