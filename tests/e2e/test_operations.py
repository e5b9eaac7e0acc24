"""What an operator sees, end to end on real `tablier serve` processes: shutdown that a load
balancer can follow, metrics, the access log, the version, one-line configuration errors."""

from __future__ import annotations

import json
import subprocess
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tablier import _core
from tablier.v1 import service_pb2 as pb

from .conftest import tablier_cmd
from .helpers import bot_move, create, error_of, info_metadata, metrics_address, open_watch, scrape, seat

WAIT = 20.0


def _health(channel: grpc.Channel) -> str:
    try:
        status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=2).status
        return health_pb2.HealthCheckResponse.ServingStatus.Name(status)
    except grpc.RpcError as exc:
        return exc.code().name


def test_shutdown_drains_not_serving_first_then_refuses_then_stops(serving):
    srv, stub = serving("--drain", "3", "--grace", "2")
    created = create(stub, "grid_knock")
    watch_channel, stream = open_watch(srv.address, created.game_id)
    first = next(stream)
    with grpc.insecure_channel(srv.address) as channel:
        assert _health(channel) == "SERVING"
        srv.terminate()
        deadline = time.monotonic() + WAIT
        while _health(channel) != "NOT_SERVING":
            assert time.monotonic() < deadline, "health never reported NOT_SERVING"
            time.sleep(0.02)
        # Draining: not serving for new traffic, but calls are still answered (a move too).
        played = bot_move(stub, created)
        assert played.events
        view = stub.GetView(pb.GetViewRequest(game_id=created.game_id))
        assert view.state.seq == played.state.seq
        # Then the watch stream ends, resumable elsewhere, and new calls are refused.
        received = [first]
        try:
            for item in stream:
                received.append(item)
            raise AssertionError("the watch ended without a status")
        except grpc.RpcError as exc:
            code, reason, _ = error_of(exc)
            assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN")
            assert int(info_metadata(exc)["resume_after_seq"]) == received[-1].event.seq == played.state.seq
        watch_channel.close()
        deadline = time.monotonic() + WAIT
        while True:
            try:
                stub.GetView(pb.GetViewRequest(game_id=created.game_id), timeout=2)
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.UNAVAILABLE, exc
                break
            assert time.monotonic() < deadline, "calls were never refused"
            time.sleep(0.02)
    assert srv.proc.wait(WAIT) == 0


def test_metrics_count_calls_appends_cache_streams_and_pool(serving, fresh_database_url):
    # A database of its own: on the session's, the clock of another test's match may time out
    # through this server (it arms every running clock it finds), one append more.
    srv, stub = serving("--metrics-listen", "127.0.0.1:0", database_url=fresh_database_url)
    url = metrics_address(srv)
    created = create(stub, "grid_knock")
    for _ in range(3):
        bot_move(stub, created)
    try:
        stub.GetView(pb.GetViewRequest(game_id="not-a-uuid"))
    except grpc.RpcError:
        pass
    watch_channel, stream = open_watch(srv.address, created.game_id)
    try:
        next(stream)
        got = scrape(url)
        assert got[("tablier_rpc_duration_seconds_count", (("code", "OK"), ("method", "PlayMove")))] == 3
        assert got[("tablier_rpc_duration_seconds_count", (("code", "OK"), ("method", "SuggestMove")))] == 3
        assert got[("tablier_rpc_duration_seconds_count", (("code", "INVALID_ARGUMENT"), ("method", "GetView")))] == 1
        assert got[("tablier_append_duration_seconds_count", ())] == 3
        assert got[("tablier_open_streams", (("method", "WatchGame"),))] == 1
        assert got[("tablier_watchers", ())] == 1
        assert got[("tablier_cache_hits_total", ())] >= 6
        assert got[("tablier_database_up", ())] == 1
        assert got[("tablier_pool_max", ())] >= got[("tablier_pool_connections", ())] >= 1
        assert got[("tablier_timers", ())] >= 0
        assert ("tablier_database_errors_total", (("operation", "append"),)) not in got or \
            got[("tablier_database_errors_total", (("operation", "append"),))] == 0
    finally:
        watch_channel.close()


def test_held_matches_bounds_the_states_held_and_a_dropped_match_is_read_again(serving, fresh_database_url):
    """`--held-matches 2`: three matches played, two held (the gauge says so); a move on the
    match dropped first is still played, its state read and verified from the log (a miss)."""
    srv, stub = serving("--metrics-listen", "127.0.0.1:0", "--held-matches", "2", database_url=fresh_database_url)
    url = metrics_address(srv)
    matches = [create(stub, "grid_knock") for _ in range(3)]
    for created in matches:
        bot_move(stub, created)
    before = scrape(url)
    assert before[("tablier_held_matches", ())] == 2
    played = bot_move(stub, matches[0])
    assert played.events
    after = scrape(url)
    assert after[("tablier_held_matches", ())] == 2
    assert after[("tablier_cache_misses_total", ())] > before[("tablier_cache_misses_total", ())]


def test_access_log_has_one_json_line_per_call(serving):
    srv, stub = serving("--access-log", "json")
    created = create(stub, "grid_knock")
    stub.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(created.seat_tokens[0]))
    marker = str(__import__("uuid").uuid4())
    try:
        stub.GetView(pb.GetViewRequest(game_id=marker), metadata=seat("wrong"))
    except grpc.RpcError:
        pass
    deadline = time.monotonic() + WAIT
    while True:
        lines = [json.loads(line) for line in srv.log.read_text().splitlines() if line.startswith("{")]
        calls = [c for c in lines if c.get("method") == "GetView"]
        if len(calls) >= 2:
            break
        assert time.monotonic() < deadline, srv.log.read_text()
        time.sleep(0.05)
    ok, refused = calls[0], calls[1]
    assert (ok["code"], ok["game_id"], ok["peer"]) == ("OK", created.game_id, "127.0.0.1")
    assert (refused["code"], refused["reason"], refused["game_id"]) == ("NOT_FOUND", "UNKNOWN_MATCH", marker)
    assert ok["ms"] >= 0 and "time" in ok
    assert any(c.get("method") == "CreateGame" and c["code"] == "OK" for c in lines)


def test_version():
    out = subprocess.run(tablier_cmd("--version"), capture_output=True, text=True, timeout=WAIT)
    assert out.returncode == 0
    # One version: the distribution's is the core's (pyproject takes it from Cargo.toml).
    assert out.stdout.strip() == f"tablier {_core.CORE_VERSION} (core {_core.CORE_VERSION})"


def test_bad_configuration_is_one_line():
    cases = [
        (["serve", "--create-rate", "-1"], {}, "--create-rate"),
        (["serve", "--create-policy", "closed"], {}, "--create-policy"),
        (["serve", "--listen", "nowhere"], {}, "--listen"),
        (["serve"], {"TABLIER_LOG_LEVEL": "LOUD"}, "TABLIER_LOG_LEVEL"),
        (["serve"], {"TABLIER_WATCH_BUFFER": "many"}, "--watch-buffer"),
        (["serve", "--watch-pace", "-1"], {}, "--watch-pace"),
        (["serve", "--create-policy", "token"], {"TABLIER_OPERATOR_TOKEN": "", "TABLIER_CREATOR_TOKEN": ""},
         "TABLIER_CREATOR_TOKEN"),
    ]
    import os

    for args, env, named in cases:
        out = subprocess.run(tablier_cmd(*args, "--database-url", "postgresql://127.0.0.1:1/none"),
                             capture_output=True, text=True, timeout=WAIT, env={**os.environ, **env})
        assert out.returncode == 2, (args, env, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tablier") and "error" in lines[0], (args, out.stderr)
        assert named in lines[0], (args, lines)
        assert "Traceback" not in out.stderr
