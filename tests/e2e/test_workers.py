"""`tablier serve --workers N`: N processes on one address and one database, and the rules that
hold across them (idempotency, lost races, watches, timers); port sharing only among them; the
browser address served by every worker; one /metrics, served by the parent, for all of them.

A client here holds one connection to each worker. A read through one worker of what was
written through the other names the seq written (`min_seq`), as the API says a client must to
read its own write on another connection; `test_a_read_names_the_seq_it_must_follow` checks
that this holds on every read, at once after the write."""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import psutil
import pytest

from tablier.v1 import grid_knock_pb2
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import START_TIMEOUT, Server, start_server, tablier_cmd
from .helpers import OPERATOR, bot_move, create, error_of, last_seq, metrics_address, raw_events, scrape, seat

WAIT = 20.0
SEED = bytes(range(32))


@pytest.fixture(scope="module")
def workers(e2e_database_url: str, tmp_path_factory) -> Iterator[Server]:
    srv = start_server(e2e_database_url, tmp_path_factory.mktemp("workers"), "workers", "--workers", "2",
                       "--metrics-listen", "127.0.0.1:0", "--web-listen", "127.0.0.1:0")
    try:
        yield srv
    finally:
        code = srv.stop()
        log = srv.log.read_text()
        assert code == 0, log
        assert "Traceback" not in log, log
        # The run's metrics directory goes with it.
        (directory,) = re.findall(r"metrics written to (\S+)", log)
        assert not Path(directory).exists(), directory


def _connections(pid: int, port: int) -> set[int]:
    """Client ports of the established connections process `pid` accepted on `port`."""
    return {c.raddr.port for c in psutil.Process(pid).net_connections("tcp")
            if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port and c.raddr}


@pytest.fixture(scope="module")
def channels(workers: Server) -> Iterator[dict[int, list[grpc.Channel]]]:
    """Channels (one connection each) grouped by the worker process that accepted them."""
    port = int(workers.address.rsplit(":", 1)[1])
    children = psutil.Process(workers.proc.pid).children()
    assert len(children) == 2, children
    by_worker: dict[int, list[grpc.Channel]] = {c.pid: [] for c in children}
    opened = []
    deadline = time.monotonic() + START_TIMEOUT
    while min(len(v) for v in by_worker.values()) < 2:
        assert time.monotonic() < deadline and len(opened) < 64, {k: len(v) for k, v in by_worker.items()}
        before = {pid: _connections(pid, port) for pid in by_worker}
        ch = grpc.insecure_channel(workers.address, options=[("grpc.use_local_subchannel_pool", 1)])
        grpc.channel_ready_future(ch).result(timeout=WAIT)
        opened.append(ch)
        for pid in by_worker:
            if _connections(pid, port) - before[pid]:
                by_worker[pid].append(ch)
    try:
        yield by_worker
    finally:
        for ch in opened:
            ch.close()


def _stubs(channels: dict[int, list[grpc.Channel]]) -> tuple[rpc.GameServiceStub, rpc.GameServiceStub]:
    a, b = (rpc.GameServiceStub(chs[0]) for chs in channels.values())
    return a, b


def test_both_workers_serve_one_database(channels):
    a, b = _stubs(channels)
    created = create(a, "qwirkle")
    # Made through one worker, seen and played through the other.
    view = b.GetView(pb.GetViewRequest(game_id=created.game_id, min_seq=created.state.seq))
    assert view.state.seq == created.state.seq
    played = bot_move(b, created)
    assert last_seq(a, created.game_id, played.state.seq) == played.state.seq > created.state.seq


def test_moves_alternating_between_workers_are_not_refused(channels):
    """Each worker decides on its cached state; one that is behind finds out and catches up."""
    a, b = _stubs(channels)
    created = create(a, "qwirkle")
    a.GetView(pb.GetViewRequest(game_id=created.game_id))
    b.GetView(pb.GetViewRequest(game_id=created.game_id))
    state = created.state
    for i in range(12):
        stub = (a, b)[i % 2]
        s = state.to_act[0]
        md = seat(created.seat_tokens[s])
        action = stub.SuggestMove(pb.SuggestMoveRequest(game_id=created.game_id, min_seq=state.seq),
                                  metadata=md).action
        # No expected_seq: the move applies to the current state, whichever worker is behind.
        state = stub.PlayMove(pb.PlayMoveRequest(game_id=created.game_id, command_id=str(uuid.uuid4()),
                                                 action=action), metadata=md).state
    assert last_seq(a, created.game_id, state.seq) == state.seq


def test_one_command_id_through_both_workers_is_written_once(channels):
    stubs = [rpc.GameServiceStub(ch) for chs in channels.values() for ch in chs]
    created = create(stubs[0], "qwirkle")
    gid = created.game_id
    s = created.state.to_act[0]
    md = seat(created.seat_tokens[s])
    action = stubs[0].SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md).action
    request = pb.PlayMoveRequest(game_id=gid, command_id="once", action=action)
    futures = [stubs[i % len(stubs)].PlayMove.future(request, metadata=md, timeout=WAIT) for i in range(60)]
    results = [f.result() for f in futures]
    assert [r.replayed for r in results].count(False) == 1
    assert all(r.events == results[0].events and r.state == results[0].state for r in results)
    assert [e.seq for e in raw_events(stubs[0], gid).events][-1] == results[0].state.seq


def test_racing_moves_on_two_workers_one_wins(channels):
    a, b = _stubs(channels)
    created = create(a, "qwirkle")
    gid = created.game_id
    seq = created.state.seq
    for _ in range(3):
        state = a.GetView(pb.GetViewRequest(game_id=gid, min_seq=seq)).state
        md = seat(created.seat_tokens[state.to_act[0]])
        action = a.SuggestMove(pb.SuggestMoveRequest(game_id=gid, min_seq=state.seq), metadata=md).action
        futures = [s.PlayMove.future(pb.PlayMoveRequest(
            game_id=gid, command_id=str(uuid.uuid4()), action=action, expected_seq=state.seq),
            metadata=md, timeout=WAIT) for s in (a, b)]
        wins, losses = [], []
        for f in futures:
            try:
                wins.append(f.result())
            except grpc.RpcError as exc:
                losses.append(exc)
        assert len(wins) == 1 and len(losses) == 1, (wins, losses)
        assert error_of(losses[0])[:2] in {(grpc.StatusCode.ABORTED, "SEQ_CONFLICT"),
                                           (grpc.StatusCode.ABORTED, "SEQ_MISMATCH")}
        seq = wins[0].state.seq
        assert last_seq(b, gid, seq) == seq


def test_a_watch_on_one_worker_sees_moves_made_on_the_other(channels):
    (ch_a, *_), (ch_b, *_) = channels.values()
    a, b = rpc.GameServiceStub(ch_a), rpc.GameServiceStub(ch_b)
    created = create(a, "qwirkle")
    gid = created.game_id
    stream = a.WatchGame(pb.WatchGameRequest(game_id=gid, after_seq=created.state.seq), timeout=WAIT)
    state = created.state
    for _ in range(4):
        state = bot_move(b, created, state).state
    seen = []
    for update in stream:
        seen.append(update.event.seq)
        if update.state.seq >= state.seq:
            break
    stream.cancel()
    public = [e.seq for e in b.ListEvents(pb.ListEventsRequest(game_id=gid, min_seq=state.seq)).events
              if e.seq > created.state.seq]
    assert seen == public and seen[-1] == state.seq


def test_a_timer_armed_on_both_workers_fires_once(channels):
    a, b = _stubs(channels)
    created = a.CreateGame(pb.CreateGameRequest(
        game_type="grid_knock", seats=3, seed=SEED, options={"knock_timeout": "1"}), metadata=OPERATOR)
    gid, state = created.game_id, created.state
    for i in range(500):
        if grid_knock_pb2.View.FromString(state.view.value).phase == grid_knock_pb2.PHASE_KNOCK_WINDOW:
            break
        state = bot_move((a, b)[i % 2], created, state).state
    else:
        pytest.fail("no knock window opened in 500 moves")
    # Both workers hold the match with the window open: both run its timer.
    for stub in (a, b):
        assert stub.GetView(pb.GetViewRequest(game_id=gid, min_seq=state.seq)).state.seq == state.seq
    stream = a.WatchGame(pb.WatchGameRequest(game_id=gid, after_seq=state.seq), metadata=OPERATOR, timeout=WAIT)
    for update in stream:
        if update.event.type == "knock_window_closed":
            break
    stream.cancel()
    after = a.GetView(pb.GetViewRequest(game_id=gid, min_seq=update.state.seq), metadata=OPERATOR).state
    # The other worker has seen the close too.
    b.GetView(pb.GetViewRequest(game_id=gid, min_seq=update.state.seq))
    kinds = [e.type for e in raw_events(b, gid, after.seq).events if e.seq > state.seq]
    assert kinds.count("knock_window_closed") == 1, kinds
    assert last_seq(a, gid) == after.seq


def test_no_other_server_shares_the_workers_address(workers, e2e_database_url, tmp_path):
    for extra in ((), ("--workers", "2")):
        proc = subprocess.run(
            tablier_cmd("serve", "--listen", workers.address, "--database-url", e2e_database_url, *extra),
            capture_output=True, text=True, timeout=START_TIMEOUT)
        assert proc.returncode == 2, (extra, proc.stdout, proc.stderr)
        assert "refusing to start: cannot listen on" in proc.stderr and "tablier listening" not in proc.stdout


def test_a_plain_server_does_not_share_its_port(server, e2e_database_url):
    """Without --workers a port in use is refused, never silently shared."""
    proc = subprocess.run(
        tablier_cmd("serve", "--listen", server.address, "--database-url", e2e_database_url),
        capture_output=True, text=True, timeout=START_TIMEOUT)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "in use" in proc.stderr and "tablier listening" not in proc.stdout


def _count(samples, method: str, code: str = "OK") -> float:
    return samples.get(("tablier_rpc_duration_seconds_count", (("code", code), ("method", method))), 0.0)


def _web_call(conn: http.client.HTTPConnection, method: str, body: bytes = b"{}") -> tuple[int, bytes]:
    conn.request("POST", f"/tablier.v1.GameService/{method}", body=body,
                 headers={"content-type": "application/json"})
    resp = conn.getresponse()
    return resp.status, resp.read()


def test_the_parent_serves_the_metrics_of_both_workers(workers, channels):
    """Calls spread over both workers (several channels each) are all counted on the one
    /metrics; a different number per worker, so that neither worker's count alone matches."""
    url = metrics_address(workers)
    before = scrape(url)
    made = {"ListGameTypes": 0, "GetView": 0}
    for n, chs in zip((3, 5), channels.values()):
        for ch in chs:
            stub = rpc.GameServiceStub(ch)
            for _ in range(n):
                stub.ListGameTypes(pb.ListGameTypesRequest())
                made["ListGameTypes"] += 1
            with pytest.raises(grpc.RpcError):
                stub.GetView(pb.GetViewRequest(game_id="not-a-uuid"))
            made["GetView"] += 1
    # And over the browser address, whichever worker each connection reaches.
    web_host = workers.web_url.removeprefix("http://")
    for _ in range(4):
        conn = http.client.HTTPConnection(web_host, timeout=WAIT)
        assert _web_call(conn, "ListGameTypes")[0] == 200
        conn.close()
        made["ListGameTypes"] += 1
    after = scrape(url)
    assert _count(after, "ListGameTypes") - _count(before, "ListGameTypes") == made["ListGameTypes"]
    assert (_count(after, "GetView", "INVALID_ARGUMENT") - _count(before, "GetView", "INVALID_ARGUMENT")
            == made["GetView"])


def test_gauges_add_up_the_live_workers(workers, channels):
    """A watch on each worker: two open streams and two watchers on the parent's /metrics
    (the app's state is written by each worker every second: waited for, not slept)."""
    url = metrics_address(workers)
    created = create(rpc.GameServiceStub(next(iter(channels.values()))[0]), "qwirkle")
    streams = []
    try:
        for chs in channels.values():
            stream = rpc.GameServiceStub(chs[-1]).WatchGame(pb.WatchGameRequest(game_id=created.game_id),
                                                            timeout=WAIT)
            next(stream)  # the stream is open on that worker
            streams.append(stream)
        got = scrape(url)
        assert got[("tablier_open_streams", (("method", "WatchGame"),))] == 2
        deadline = time.monotonic() + WAIT
        while got.get(("tablier_watchers", ()), 0) != 2:
            assert time.monotonic() < deadline, got
            time.sleep(0.1)
            got = scrape(url)
        assert got[("tablier_database_up", ())] == 1
    finally:
        for stream in streams:
            stream.cancel()
    deadline = time.monotonic() + WAIT
    while scrape(url)[("tablier_open_streams", (("method", "WatchGame"),))] != 0:
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_both_workers_serve_the_browser_address(workers, channels):
    """Connections to the web port are spread over the workers (SO_REUSEPORT, as for gRPC); a
    match made over gRPC is seen over either worker's browser address."""
    created = create(rpc.GameServiceStub(next(iter(channels.values()))[0]), "qwirkle")
    host, port = workers.web_url.removeprefix("http://").rsplit(":", 1)
    pids = list(channels)
    by_worker: dict[int, http.client.HTTPConnection] = {}
    opened = []
    try:
        while len(by_worker) < 2:
            assert len(opened) < 64, "every connection went to one worker"
            conn = http.client.HTTPConnection(host, int(port), timeout=WAIT)
            opened.append(conn)
            assert _web_call(conn, "ListGameTypes")[0] == 200  # accepted by now (kept alive)
            local = conn.sock.getsockname()[1]
            for pid in pids:
                if local in _connections(pid, int(port)):
                    by_worker.setdefault(pid, conn)
        for conn in by_worker.values():
            status, body = _web_call(conn, "GetView", f'{{"gameId": "{created.game_id}"}}'.encode())
            assert status == 200 and created.game_id.encode() in body, body
    finally:
        for conn in opened:
            conn.close()


def test_no_other_server_shares_the_workers_browser_address(workers, e2e_database_url):
    web = workers.web_url.removeprefix("http://")
    proc = subprocess.run(
        tablier_cmd("serve", "--listen", "127.0.0.1:0", "--web-listen", web, "--database-url", e2e_database_url),
        capture_output=True, text=True, timeout=START_TIMEOUT)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "refusing to start: cannot listen on" in proc.stderr and "Traceback" not in proc.stderr


def test_an_exited_worker_leaves_the_live_sums_not_the_counts(tmp_path):
    """What the parent does as each worker exits (mark_process_dead): its open streams leave
    the sum, its calls stay counted. Two real processes write as workers do."""
    from tablier.api.metrics import WorkersMetrics

    parent = WorkersMetrics(str(tmp_path), "127.0.0.1:0")
    url = f"http://{parent.address}/metrics"
    script = ("from tablier.api.metrics import Metrics\n"
              "m = Metrics(shared=True)\n"
              "m.streams.labels('WatchGame').inc()\n"
              "m.rpc.labels('GetView', 'OK').observe(0.01)\n")
    try:
        pids = []
        for _ in range(2):
            proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, **parent.worker_env()})
            assert proc.wait(WAIT) == 0
            pids.append(proc.pid)
        got = scrape(url)
        assert got[("tablier_open_streams", (("method", "WatchGame"),))] == 2
        assert _count(got, "GetView") == 2
        parent.worker_exited(pids[0])
        got = scrape(url)
        assert got[("tablier_open_streams", (("method", "WatchGame"),))] == 1
        assert _count(got, "GetView") == 2
    finally:
        parent.close()
