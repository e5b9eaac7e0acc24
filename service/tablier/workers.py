"""`tablier serve --workers N`: N server processes on one address and one database.

The parent starts (or names) the database, makes sure the address is free and keeps it, then
starts N `tablier serve` processes that listen on it with SO_REUSEPORT: the kernel spreads
incoming connections over them (a connection, hence a client channel, stays with one worker).
The browser address (`--web-listen`) is held and shared the same way.
Port sharing is enabled for these processes only: a plain `tablier serve`, or another worker
group, on the same address fails to start with a clear message, because the address is held
by sockets that allow sharing only among themselves (every socket on a port must ask for
sharing, and the parent checks first that nobody else holds it).

Nothing else is shared between workers: each has its own cache, timers and pool. They agree
through the database, as separate servers do: appends at (game_id, seq) let one of two racing
moves win, a command id is written once, NOTIFY tells every worker's watchers of every append,
and a timer armed in several workers gives its host command once (its command id).

Metrics (`--metrics-listen`) are the parent's to serve, for all workers: it makes a fresh
directory for the run, each worker writes its values there (prometheus-client's multiprocess
mode, `tablier.api.metrics`), and the parent adds them up at each scrape; a worker that exits
leaves the live gauges' sums, and the directory is removed after the run.

The parent prints `tablier listening on HOST:PORT` (then `tablier web on URL`) once every
worker is ready. SIGTERM or SIGINT is passed on to the workers, which drain as a single server
does; if a worker dies, the parent stops the others and exits non-zero.
"""

from __future__ import annotations

import argparse
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from tablier.embedded import EmbeddedPostgres

START_TIMEOUT = 120.0


class AddressInUse(Exception):
    """The address to listen on is held by another process (or cannot be bound)."""


def split_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit():
        raise AddressInUse(f"--listen must be HOST:PORT, not {listen!r}")
    return host.strip("[]"), int(port)


def reserve(listen: str) -> tuple[socket.socket, str]:
    """Checks that nobody holds `listen` and holds it for the workers: a bound, not listening
    socket that allows sharing (so only sockets that also ask for sharing, as the workers do,
    may join it). Returns the socket and HOST:PORT with the port chosen (for port 0)."""
    host, port = split_listen(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_STREAM)
    try:
        probe.bind((host, port))  # without SO_REUSEPORT: fails if anyone holds the port
        port = probe.getsockname()[1]
    except OSError as exc:
        raise AddressInUse(f"cannot listen on {listen}: {exc.strerror or exc}") from None
    finally:
        probe.close()
    held = socket.socket(family, socket.SOCK_STREAM)
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        held.bind((host, port))
    except OSError as exc:
        held.close()
        raise AddressInUse(f"cannot listen on {listen}: {exc.strerror or exc}") from None
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    return held, f"{shown}:{port}"


def _die_with_parent() -> None:
    """In a worker, before it runs: SIGTERM it if the parent dies (even by SIGKILL), so that no
    worker outlives its group holding the address (Linux; elsewhere a no-op)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def worker_command(
    args: argparse.Namespace, address: str, dsn: str, web_address: str | None = None, shared_metrics: bool = False
) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "tablier.cli",
        "serve",
        "--listen",
        address,
        "--database-url",
        dsn,
        "--data-dir",
        str(args.data_dir),
        "--grace",
        str(args.grace),
        "--reuse-port",
    ]
    for flag, value in (
        ("--tls-cert", args.tls_cert),
        ("--tls-key", args.tls_key),
        ("--tls-client-ca", args.tls_client_ca),
        ("--web-listen", web_address),
        ("--web-dir", args.web_dir if web_address else None),
        ("--witness-url", args.witness_url),
        ("--bus", getattr(args, "bus", None)),
    ):
        if value:
            cmd += [flag, str(value)]
    if args.witness_dir is not None:  # '' (no witness) too
        cmd += ["--witness-dir", str(args.witness_dir)]
    if web_address:
        for origin in args.cors_origin:
            cmd += ["--cors-origin", origin]
    if shared_metrics:
        cmd.append("--shared-metrics")
    # Shutdown, logging and the limits (each worker counts its own peers and streams).
    for name in (
        "drain",
        "access_log",
        "max_request_bytes",
        "database_timeout",
        "watch_per_peer",
        "watch_per_match",
        "watch_unbatched_per_match",
        "watch_buffer",
        "watch_pace",
        "create_policy",
        "create_rate",
        "create_burst",
        "bad_credential_rate",
        "bad_credential_burst",
        "witness_every",
        "recheck_every",
    ):
        cmd += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    return cmd


def _ready_line(proc: subprocess.Popen[bytes], deadline: float) -> str:
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    line = b""
    try:
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise RuntimeError("a worker did not start in time")
            chunk = os.read(proc.stdout.fileno(), 1)
            if not chunk:
                raise RuntimeError(f"a worker exited while starting (exit code {proc.wait()})")
            line += chunk
    finally:
        sel.close()
    return line.decode().strip()


def supervise(args: argparse.Namespace, dsn: str, err: Console) -> int:
    """Runs `args.workers` workers until SIGTERM/SIGINT or until one of them dies."""
    held: list[socket.socket] = []
    web_address = None
    try:
        sock, address = reserve(args.listen)
        held.append(sock)
        if args.web_listen:
            sock, web_address = reserve(args.web_listen)
            held.append(sock)
    except AddressInUse as exc:
        for sock in held:
            sock.close()
        err.print(f"[red]refusing to start: {exc}[/red]")
        return 2
    metrics = None
    if args.metrics_listen:
        from tablier.api.metrics import WorkersMetrics

        directory = tempfile.mkdtemp(prefix="tablier-metrics-")
        try:
            metrics = WorkersMetrics(directory, args.metrics_listen)
        except OSError as exc:
            shutil.rmtree(directory, ignore_errors=True)
            for sock in held:
                sock.close()
            err.print(f"[red]refusing to start: --metrics-listen {args.metrics_listen}: {exc.strerror or exc}[/red]")
            return 2
    stop_requested = False

    def on_signal(signum: int, frame: FrameType | None) -> None:
        nonlocal stop_requested
        stop_requested = True

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    workers: list[subprocess.Popen[bytes]] = []
    env = dict(os.environ, **(metrics.worker_env() if metrics else {}))
    try:
        deadline = time.monotonic() + START_TIMEOUT
        command = worker_command(args, address, dsn, web_address, shared_metrics=metrics is not None)
        for _ in range(args.workers):
            # A worker's SIGINT comes from us, not from the terminal's process group.
            workers.append(
                subprocess.Popen(
                    command, stdout=subprocess.PIPE, env=env, start_new_session=True, preexec_fn=_die_with_parent
                )
            )
        for proc in workers:
            text = _ready_line(proc, deadline)
            if not text.startswith("tablier listening on "):
                raise RuntimeError(f"a worker said {text!r}")
            if web_address:
                text = _ready_line(proc, deadline)
                if not text.startswith("tablier web on "):
                    raise RuntimeError(f"a worker said {text!r}")
        if metrics is not None:
            print(f"tablier metrics on http://{metrics.address}/metrics", file=sys.stderr, flush=True)
        # Tests and scripts wait for these exact lines (with the bound ports).
        print(f"tablier listening on {address}", flush=True)
        if web_address:
            print(f"tablier web on {'https' if args.tls_cert else 'http'}://{web_address}/", flush=True)
        err.print(
            f"{args.workers} workers on {address}"
            + (f" and {web_address}" if web_address else "")
            + (f", metrics written to {metrics.directory}" if metrics else ""),
            soft_wrap=True,
        )
        while not stop_requested:
            if any(p.poll() is not None for p in workers):
                dead = [p.pid for p in workers if p.poll() is not None]
                err.print(f"[red]worker(s) {dead} stopped: stopping the others[/red]")
                break
            time.sleep(0.2)  # polling children and the signal flag (no wait primitive covers both)
    except RuntimeError as exc:
        err.print(f"[red]{exc}[/red]")
    finally:
        for proc in workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        codes = []
        for proc in workers:
            try:
                codes.append(proc.wait(args.drain + args.grace + 30))
            except subprocess.TimeoutExpired:
                proc.kill()
                codes.append(proc.wait())
            if metrics is not None:
                metrics.worker_exited(proc.pid)
        if metrics is not None:
            metrics.close()
            shutil.rmtree(metrics.directory, ignore_errors=True)
        for sock in held:
            sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    clean = stop_requested and len(codes) == args.workers and all(c == 0 for c in codes)
    err.print("stopped" if clean else f"[red]workers exited with {codes}[/red]")
    return 0 if clean else 1


def start_database(args: argparse.Namespace) -> tuple[str, EmbeddedPostgres | None]:
    """The database URL the workers share, and the embedded server to stop after them (or None)."""
    if args.database_url:
        return args.database_url, None
    from tablier import embedded

    pg = embedded.start(Path(args.data_dir) / "pgdata", temporary=False)
    return pg.dsn, pg
