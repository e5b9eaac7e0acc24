"""The parts of `tablier bench-service` that measure: the bare gRPC echo server it compares
with, the processes it starts and waits for, the CPU meter, and the closed-loop driver that
keeps one call in flight per lane (`tablier.bench` runs them)."""

from __future__ import annotations

import asyncio
import functools
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import grpc
from connectrpc.errors import ConnectError

LOOPBACK = "127.0.0.1"
START_TIMEOUT = 90.0
ECHO_METHOD = "/tablier.bench.Echo/Echo"
DURABLE_METHOD = "/tablier.bench.Echo/Durable"
ASYNC_ECHO_METHOD = "/tablier.bench.Echo/AsyncEcho"


# --------------------------------------------------------------------------- the echo server


async def _echo_main(dsn: str | None = None) -> None:
    """The bare echo; with `dsn`, also `DURABLE_METHOD`: the echo after one durable append
    through the server's own store (`PostgresStore.append`, its group commit, its feed of
    appends), the floor of a durable move with no game in it."""

    def echo(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        return request

    async def async_echo(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        return request

    # "Echo", the baseline every ratio of the bench is given against: a plain function, which
    # grpc.aio runs in its thread pool. "AsyncEcho": the same answer from an `async def`
    # handler on the event loop, as the service's handlers are.
    methods: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
        "Echo": grpc.unary_unary_rpc_method_handler(echo),  # bytes in, bytes out
        "AsyncEcho": grpc.unary_unary_rpc_method_handler(async_echo),
    }
    store = None
    if dsn is not None:
        from tablier.bench_workloads import SyntheticMatches
        from tablier.store.postgres import open_store

        store = await open_store(dsn)
        matches = SyntheticMatches(store)

        async def durable(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
            await matches.append_one()
            return request

        methods["Durable"] = grpc.unary_unary_rpc_method_handler(durable)
    handler = grpc.method_handlers_generic_handler("tablier.bench.Echo", methods)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port(f"{LOOPBACK}:0")
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"echo listening on {LOOPBACK}:{port}", flush=True)
    await stop.wait()
    await server.stop(0)
    if store is not None:
        await store.close()


# --------------------------------------------------------------------------- processes


@dataclass
class Proc:
    name: str
    proc: subprocess.Popen[bytes]
    address: str
    web_url: str = ""  # its browser address (Connect), when started with one

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _start(name: str, cmd: list[str], env: dict[str, str], log: Path, lines: int = 1) -> Proc:
    """Starts `cmd` and waits for its '... listening on HOST:PORT' line (and, with `lines=2`,
    for `tablier serve`'s 'tablier web on URL' after it)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log.open("wb"), env=env)
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + START_TIMEOUT
    line = b""
    try:
        while line.count(b"\n") < lines:
            left = deadline - time.monotonic()
            if left <= 0 or proc.poll() is not None or not sel.select(left):
                raise RuntimeError(f"{name} did not start:\n{log.read_text()}")
            chunk = os.read(proc.stdout.fileno(), 1)
            if not chunk:
                raise RuntimeError(f"{name} exited:\n{log.read_text()}")
            line += chunk
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        sel.close()
    words = [text.rsplit(" ", 1)[1] for text in line.decode().strip().splitlines()]
    return Proc(name, proc, words[0], words[1].rstrip("/") if lines > 1 else "")


# --------------------------------------------------------------------------- measuring


class CpuMeter:
    """CPU seconds used by groups of processes (each with its children): the client (this
    process), the servers, the database when it runs on this machine."""

    def __init__(self) -> None:
        self.groups: dict[str, list[int]] = {"client": [os.getpid()]}

    def add(self, name: str, pid: int) -> None:
        self.groups.setdefault(name, []).append(pid)

    def read(self) -> dict[str, float]:
        import psutil

        out = {}
        for name, pids in self.groups.items():
            total = 0.0
            for pid in pids:
                try:
                    root = psutil.Process(pid)
                    procs = [root] if name == "client" else [root, *root.children(recursive=True)]
                except psutil.Error:
                    continue
                for p in procs:
                    try:
                        t = p.cpu_times()
                        total += t.user + t.system
                    except psutil.Error:
                        pass
            out[name] = total
        return out


METER = CpuMeter()


@dataclass
class Figure:
    calls: int = 0
    errors: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)  # ms per call, per process group

    def cpu_text(self, names: list[str]) -> str:
        return "/".join(f"{self.cpu[n]:.2f}" if n in self.cpu else "-" for n in names)

    @property
    def rate(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        ms = sorted(self.latencies)
        return 1000 * ms[min(len(ms) - 1, int(q * len(ms)))] if ms else float("nan")


_Target = TypeVar("_Target")


def _lanes(call: Callable[[_Target], Awaitable[bool]], targets: list[_Target]) -> list[Callable[[], Awaitable[bool]]]:
    """One lane per target, each calling `call(target)` again and again."""
    return [functools.partial(call, target) for target in targets]


async def _drive(lanes: list[Callable[[], Awaitable[bool]]], seconds: float) -> Figure:
    """Runs every lane's calls back to back for `seconds` (one call in flight per lane).
    A lane's call returns False when it has nothing more to send."""
    fig = Figure()
    loop = asyncio.get_running_loop()
    cpu_before = METER.read()
    started = loop.time()
    deadline = started + seconds

    async def lane(call: Callable[[], Awaitable[bool]]) -> None:
        while loop.time() < deadline:
            t = loop.time()
            try:
                more = await call()
            except (grpc.aio.AioRpcError, ConnectError) as exc:
                fig.errors += 1
                if fig.errors <= 3:
                    code, details = (
                        (exc.code().name, exc.details())
                        if isinstance(exc, grpc.aio.AioRpcError)
                        else (exc.code.name, exc.message)
                    )
                    print(f"  error: {code} {details}", file=sys.stderr)
                continue
            fig.latencies.append(loop.time() - t)
            fig.calls += 1
            if not more:
                return

    await asyncio.gather(*(lane(c) for c in lanes))
    fig.seconds = loop.time() - started
    cpu_after = METER.read()
    fig.cpu = {k: 1000 * (cpu_after[k] - cpu_before.get(k, 0.0)) / max(fig.calls, 1) for k in cpu_after}
    return fig


def _channels(address: str, n: int) -> list[grpc.aio.Channel]:
    """n channels with a connection each (so that several worker processes share the load)."""
    return [grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(n)]
