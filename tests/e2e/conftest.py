"""End-to-end fixtures: real `tablier serve` processes on loopback against a real PostgreSQL
(the session's `database_url` server, one database for the e2e session)."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from tablier import _core
from tablier.v1 import common_pb2
from tablier.v1 import service_pb2_grpc as rpc

ROOT = Path(__file__).resolve().parents[2]

OPERATOR_TOKEN = "e2e-operator-" + uuid.uuid4().hex
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0

GAME_TYPES = [common_pb2.GameType.FromString(b) for b in _core.game_types()]
GAME_IDS = [t.id for t in GAME_TYPES]


def tablier_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "tablier.cli", *args]


@dataclass
class Server:
    address: str
    proc: subprocess.Popen
    log: Path

    signalled: bool = False
    # The browser address (Connect / gRPC-Web and the web app), when started with one.
    web_url: str = ""

    def terminate(self) -> None:
        """One SIGTERM (a second one while it shuts down would not be a clean stop)."""
        if not self.signalled and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        self.signalled = True

    def stop(self) -> int:
        """SIGTERM, then wait for the drain; returns the exit code."""
        self.terminate()
        return self.proc.wait(STOP_TIMEOUT)


def _read_line(proc: subprocess.Popen, log: Path, deadline: float) -> str:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None or not sel.select(left):
            proc.kill()
            raise RuntimeError(f"tablier serve did not start: {log.read_text()}")
        chunk = os.read(proc.stdout.fileno(), 1)
        line += chunk
        if not chunk:
            proc.kill()
            raise RuntimeError(f"tablier serve exited: {log.read_text()}")
    sel.close()
    return line.decode().strip()


# Every test client is the one peer 127.0.0.1: the shared servers lift the per-peer limits
# (tests/e2e/test_limits.py starts servers with the real ones).
GENEROUS = ("--create-burst", "1000000", "--watch-per-peer", "100000", "--bad-credential-burst", "1000000")


def start_server(database_url: str, log_dir: Path, name: str, *extra: str,
                 env: dict[str, str] | None = None, limits: tuple[str, ...] = GENEROUS) -> Server:
    """`extra` arguments for `tablier serve`; with `--web-listen`, `web_url` is set too. `env`
    replaces the operator token in its environment. `limits`: the per-peer limit options (the
    real defaults with `()`)."""
    log = log_dir / f"{name}.log"
    env = dict(os.environ, **(env if env is not None else {"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN}))
    proc = subprocess.Popen(
        tablier_cmd("serve", "--listen", "127.0.0.1:0", "--database-url", database_url, "--grace", "2",
                    "--drain", "0", *limits, *extra),
        stdout=subprocess.PIPE,
        stderr=log.open("wb"),
        env=env,
    )
    deadline = time.monotonic() + START_TIMEOUT
    text = _read_line(proc, log, deadline)
    assert text.startswith("tablier listening on "), text
    srv = Server(text.rsplit(" ", 1)[1], proc, log)
    if "--web-listen" in extra:
        text = _read_line(proc, log, deadline)
        assert text.startswith(("tablier web on http://", "tablier web on https://")), text
        srv.web_url = text.rsplit(" ", 1)[1].rstrip("/")
    return srv


@pytest.fixture(scope="session")
def e2e_database_url(database_url: str) -> Iterator[str]:
    name = f"tablier_e2e_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name)))
    try:
        yield make_conninfo(database_url, dbname=name)
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _serving(database_url: str, tmp_path_factory, name: str) -> Iterator[Server]:
    """A `tablier serve` process for the session; it must stop cleanly at the end."""
    srv = start_server(database_url, tmp_path_factory.mktemp("servers"), name)
    try:
        yield srv
    finally:
        code = srv.stop()
        assert code == 0, srv.log.read_text()


@pytest.fixture(scope="session")
def server(e2e_database_url: str, tmp_path_factory) -> Iterator[Server]:
    yield from _serving(e2e_database_url, tmp_path_factory, "a")


@pytest.fixture(scope="session")
def second_server(e2e_database_url: str, tmp_path_factory) -> Iterator[Server]:
    """Another process on the same database (scale-out: watchers learn of its appends)."""
    yield from _serving(e2e_database_url, tmp_path_factory, "b")


@pytest.fixture(scope="session")
def channel(server: Server) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.address) as ch:
        grpc.channel_ready_future(ch).result(timeout=START_TIMEOUT)
        yield ch


@pytest.fixture(scope="session")
def stub(channel: grpc.Channel) -> rpc.GameServiceStub:
    return rpc.GameServiceStub(channel)


@pytest.fixture
def serving(e2e_database_url, tmp_path) -> Iterator:
    """start(*args, env=..., database_url=...) -> (server, stub); every server is stopped at
    the end. The session's database unless `database_url` names another (a test that counts
    everything its server does needs one of its own: a starting server also arms the clocks of
    the running matches it finds, other tests' included)."""
    started: list[tuple[Server, grpc.Channel]] = []

    def start(*args: str, env: dict[str, str] | None = None,
              database_url: str | None = None) -> tuple[Server, rpc.GameServiceStub]:
        srv = start_server(database_url or e2e_database_url, tmp_path, f"s{len(started)}", *args,
                           env={"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN, **(env or {})}, limits=())
        ch = grpc.insecure_channel(srv.address)
        grpc.channel_ready_future(ch).result(timeout=START_TIMEOUT)
        started.append((srv, ch))
        return srv, rpc.GameServiceStub(ch)

    yield start
    for srv, ch in started:
        ch.close()
        assert srv.stop() == 0, srv.log.read_text()
