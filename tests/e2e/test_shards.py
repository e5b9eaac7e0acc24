"""Matches spread over two PostgreSQL servers, end to end: two Debian PostgreSQL 15 clusters
started by the test, real `tablier serve` processes given both (`--database-url` twice, and as
one comma-separated list).

Matches land on both shards and are played on both through either server; players (the
directory's) are named on matches of either shard; ListGames pages
through every match of both, newest first, none twice; a shard killed (`pg_ctl stop -m
immediate`): its matches are UNAVAILABLE with a reason naming it, the other shard's are served
(by a server started during the outage too), ListGames is UNAVAILABLE naming it, health stays
SERVING; after its restart nothing acknowledged
is lost and `tablier verify` passes over both; a third shard added live (`tablier shards add`)
takes new matches without a restart, the old ones stay where they were; a server given the
directory alone serves every shard's matches. A database given in
another position than the one it was first given in is refused at start."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tablier.v1 import players_pb2 as ppb
from tablier.v1 import players_pb2_grpc as prpc
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import START_TIMEOUT, start_server, tablier_cmd
from .helpers import bot_move, create, error_of, last_seq, seat

BIN = Path("/usr/lib/postgresql/15/bin")
GAME = "grid_knock"
WAIT = 30.0

pytestmark = pytest.mark.skipif(not BIN.is_dir(), reason="Debian PostgreSQL 15 (apt-get install postgresql)")


def _as_postgres(*cmd: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else list(cmd)


class Cluster:
    """A throwaway trust-auth PostgreSQL 15 cluster on a loopback port (socket in its dir)."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="tablier-shard-"))
        self.dir.chmod(0o755)
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.data = self.dir / "data"
        subprocess.run(_as_postgres(str(BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                                    "-E", "UTF8", "--no-sync"), check=True, capture_output=True, timeout=120)
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        opts = f"-h 127.0.0.1 -p {self.port} -k {self.dir} -c fsync=on"
        subprocess.run(_as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-w", "-l", str(self.dir / "log"),
                                    "-o", opts, "start"), check=True, capture_output=True, timeout=120)

    def kill(self) -> None:
        subprocess.run(_as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-w", "-m", "immediate", "stop"),
                       check=True, capture_output=True, timeout=120)

    def remove(self) -> None:
        subprocess.run(_as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-w", "-m", "immediate", "stop"),
                       capture_output=True, timeout=120)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def clusters() -> Iterator[list[Cluster]]:
    made = [Cluster() for _ in range(3)]
    try:
        for c in made[:2]:
            c.start()
        yield made
    finally:
        for c in made:
            c.remove()


def shard_of(directory_url: str) -> dict[str, str]:
    with psycopg.connect(directory_url) as conn:
        return {str(g): s for g, s in conn.execute("SELECT game_id, shard FROM match_directory").fetchall()}


def tablier(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(tablier_cmd(*args), capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})


def all_pages(stub, size: int) -> list[str]:
    ids, token = [], ""
    while True:
        page = stub.ListGames(pb.ListGamesRequest(game_type=GAME, page_size=size, page_token=token))
        ids += [g.game_id for g in page.games]
        token = page.next_page_token
        if not token:
            return ids


def until(check, what: str):
    deadline = time.monotonic() + WAIT
    while True:
        try:
            return check()
        except (grpc.RpcError, AssertionError):
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {WAIT} s: {what}") from None
            time.sleep(0.1)  # a client's pause between retries


def test_matches_on_two_shards_survive_one_down_and_a_shard_joins_live(clusters, tmp_path):
    a, b, c = clusters
    data = ("--data-dir", str(tmp_path / "data"))
    one = start_server(a.url, tmp_path, "one", "--database-url", b.url, "--database-timeout", "2", *data)
    two = start_server(f"{a.url},{b.url}", tmp_path, "two", "--database-timeout", "2", *data)
    servers = [one, two]
    try:
        stubs = []
        for srv in servers:
            channel = grpc.insecure_channel(srv.address)
            grpc.channel_ready_future(channel).result(timeout=START_TIMEOUT)
            stubs.append(rpc.GameServiceStub(channel))
        health = health_pb2_grpc.HealthStub(grpc.insecure_channel(one.address))

        # Matches on both shards, created and played through either server.
        made = [create(stubs[i % 2], GAME) for i in range(16)]
        where = shard_of(a.url)
        assert {where[m.game_id] for m in made} == {"shard0", "shard1"}, where
        played: dict[str, int] = {}
        for i, m in enumerate(made):
            state = m.state
            for turn in range(2):
                state = bot_move(stubs[(i + turn) % 2], m, state).state
            played[m.game_id] = state.seq
        with psycopg.connect(b.url) as conn:
            on_b = {str(r[0]) for r in conn.execute("SELECT game_id FROM games").fetchall()}
        assert on_b == {g for g, s in where.items() if s == "shard1"}

        # ListGames: every match of both shards, newest first, none twice, in pages of 5.
        for stub in stubs:
            listed = all_pages(stub, 5)
            assert sorted(listed) == sorted(played) and len(listed) == len(set(listed))
            assert listed == all_pages(stub, 100)

        # Players are the directory's; their names show on matches of either shard.
        players = [prpc.PlayerServiceStub(grpc.insecure_channel(srv.address)) for srv in servers]
        alice = players[0].CreateGuestPlayer(ppb.CreateGuestPlayerRequest(display_name="Alice"))
        bob = players[1].CreateGuestPlayer(ppb.CreateGuestPlayerRequest(display_name="Bob"))
        theirs = [stubs[0].CreateGame(pb.CreateGameRequest(game_type="qwirkle", seat_assignments=[
            pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR), pb.SeatAssignment(kind=pb.SEAT_KIND_OPEN)]),
            metadata=seat(alice.credential)) for _ in range(6)]
        where = shard_of(a.url)
        assert {where[m.game_id] for m in theirs} == {"shard0", "shard1"}, where
        for m in theirs:
            joined = stubs[1].JoinGame(pb.JoinGameRequest(game_id=m.game_id), metadata=seat(bob.credential))
            names = [s.player.display_name for s in joined.state.seats]
            assert names == ["Alice", "Bob"], names
        listed = stubs[1].ListGames(pb.ListGamesRequest(mine=True, page_size=4), metadata=seat(bob.credential))
        assert [g.game_id for g in listed.games] == [m.game_id for m in reversed(theirs)][:4]
        assert all([s.player.display_name for s in g.seats] == ["Alice", "Bob"] for g in listed.games)

        # Shard1 killed: its matches UNAVAILABLE naming it, shard0's served.
        b_match = next(m for m in made if where[m.game_id] == "shard1")
        a_match = next(m for m in made if where[m.game_id] == "shard0")
        b.kill()
        try:
            code, reason, message = until(lambda: _fails(lambda: bot_move(stubs[0], b_match)), "shard1 seen down")
            assert code == grpc.StatusCode.UNAVAILABLE and reason == "DATABASE_UNAVAILABLE", (code, reason)
            assert "shard1" in message, message
            for stub in stubs:
                played[a_match.game_id] = bot_move(stub, a_match).state.seq
            code, reason, message = _fails(lambda: stubs[1].ListGames(pb.ListGamesRequest(game_type=GAME)))
            assert code == grpc.StatusCode.UNAVAILABLE and "shard1" in message, (code, message)
            st = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5).status
            assert st == health_pb2.HealthCheckResponse.SERVING
            # New matches while a shard is down: made on the shards that answer (this server
            # has seen shard1 down; one created before that is refused naming it).
            # A server started while shard1 is down serves shard0's matches at once.
            three = start_server(f"{a.url}\n{b.url}", tmp_path, "three", "--database-timeout", "2", *data)
            servers.append(three)
            channel = grpc.insecure_channel(three.address)
            grpc.channel_ready_future(channel).result(timeout=START_TIMEOUT)
            stubs.append(rpc.GameServiceStub(channel))
            played[a_match.game_id] = bot_move(stubs[2], a_match).state.seq
            code, _, message = _fails(lambda: bot_move(stubs[2], b_match))
            assert code == grpc.StatusCode.UNAVAILABLE and "shard1" in message, (code, message)
            fresh = []
            for _ in range(8):
                try:
                    fresh.append(create(stubs[0], GAME))
                except grpc.RpcError as exc:
                    code, _, message = error_of(exc)
                    assert code == grpc.StatusCode.UNAVAILABLE and "shard1" in message, (code, message)
            assert len(fresh) == 8 and {shard_of(a.url)[m.game_id] for m in fresh} == {"shard0"}
        except grpc.RpcError as exc:
            raise AssertionError(error_of(exc)) from None
        finally:
            b.start()

        # Back: nothing acknowledged lost; shard1's matches served again by both servers.
        for i, stub in enumerate(stubs):
            seq = until(lambda stub=stub: bot_move(stub, b_match).state.seq, f"shard1's match served by {i}")
            played[b_match.game_id] = seq
        for gid, seq in played.items():
            assert last_seq(stubs[1], gid) == seq, gid
        for m in fresh:
            assert last_seq(stubs[0], m.game_id) == m.state.seq
            played[m.game_id] = m.state.seq
        urls = f"{a.url},{b.url}"
        ok = tablier("verify", "--all", "--database-url", urls, *data)
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert ok.stdout.count(" ok ") >= len(played), ok.stdout

        # Shard2 added live: new matches also land on it; the old ones stay where they were.
        where = shard_of(a.url)
        c.start()
        added = tablier("shards", "add", "shard2", c.url, "--database-url", urls, *data)
        assert added.returncode == 0, added.stdout + added.stderr
        newer = until(lambda: _landed(stubs, a.url, "shard2"), "a new match on shard2")
        for stub in stubs:
            bot_move(stub, newer)
        assert {g: s for g, s in shard_of(a.url).items() if g in played} == {g: where[g] for g in played}
        listed = all_pages(stubs[1], 7)
        assert newer.game_id in listed and set(played) <= set(listed)
        # A server given the directory alone opens every shard it lists.
        four = start_server(a.url, tmp_path, "four", *data)
        servers.append(four)
        channel = grpc.insecure_channel(four.address)
        grpc.channel_ready_future(channel).result(timeout=START_TIMEOUT)
        alone = rpc.GameServiceStub(channel)
        for m in (a_match, b_match, newer):
            bot_move(alone, m)
        shown = tablier("shards", "list", "--database-url", a.url, *data)
        assert shown.returncode == 0, shown.stderr
        counts = {line.split(":")[0]: line for line in shown.stdout.splitlines()}
        assert set(counts) == {"shard0 (directory)", "shard1", "shard2"} and "matches" in counts["shard2"], counts

        # The list reordered: refused at start, naming the shard.
        bad = tablier("verify", "--all", "--database-url", f"{b.url},{a.url}", *data)
        assert bad.returncode == 2 and "shard1" in bad.stderr and "directory" in bad.stderr, bad.stderr
    finally:
        for srv in servers:
            code = srv.stop()
            assert code == 0, srv.log.read_text()


def _fails(call) -> tuple[grpc.StatusCode, str, str]:
    try:
        call()
    except grpc.RpcError as exc:
        return error_of(exc)
    raise AssertionError("the call succeeded")


def _landed(stubs, directory_url: str, shard: str) -> pb.CreateGameResponse:
    """Creates matches until one lands on `shard` (a third of them do)."""
    for _ in range(30):
        m = create(stubs[0], GAME)
        if shard_of(directory_url).get(m.game_id) == shard:
            return m
    raise AssertionError(f"no new match on {shard}")
