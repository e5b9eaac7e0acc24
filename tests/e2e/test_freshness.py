"""How fresh a read of the present is, across two servers on one database: a server answers from
the state it holds while its feed of appends (LISTEN) says nothing newer was committed; a read
naming a seq (`min_seq`) never gets an earlier state, whichever server answers; with the feed
down, reads ask the database and still answer the current state."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator

import grpc
import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from tablier.v1 import service_pb2 as pb
from tablier_client import Client, games
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import Server, start_server
from .helpers import OPERATOR, bot_move, create, expect_error, metrics_address, scrape, seat

WAIT = 20.0


@pytest.fixture
def two_servers(fresh_database_url, tmp_path) -> Iterator[tuple[str, Server, Server]]:
    started = []
    try:
        for name in ("writer", "reader"):
            started.append(start_server(fresh_database_url, tmp_path, name, "--metrics-listen", "127.0.0.1:0"))
        yield fresh_database_url, started[0], started[1]
    finally:
        for srv in started:
            code = srv.stop()
            assert code == 0, srv.log.read_text()
            assert "Traceback" not in srv.log.read_text(), srv.log.read_text()


def _metric(srv: Server, name: str) -> float:
    return scrape(metrics_address(srv)).get((name, ()), 0.0)


def _wait_metric(srv: Server, name: str, value: float) -> None:
    deadline = time.monotonic() + WAIT
    while _metric(srv, name) != value:
        assert time.monotonic() < deadline, (name, _metric(srv, name))
        time.sleep(0.05)


def test_reads_of_a_held_state_do_not_ask_the_database(two_servers):
    _, writer, reader = two_servers
    _wait_metric(reader, "tablier_append_feed_up", 1)
    with grpc.insecure_channel(reader.address) as ch:
        stub = rpc.GameServiceStub(ch)
        created = create(stub, "qwirkle")
        played = bot_move(stub, created, created.state)
        cached, loaded = _metric(reader, "tablier_reads_cached_total"), _metric(reader, "tablier_reads_loaded_total")
        for _ in range(20):
            assert stub.GetView(pb.GetViewRequest(game_id=created.game_id)).state.seq == played.state.seq
        md = seat(created.seat_tokens[played.state.to_act[0]])
        assert stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=created.game_id), metadata=md).seq == (
            played.state.seq
        )
        assert _metric(reader, "tablier_reads_cached_total") - cached == 21
        assert _metric(reader, "tablier_reads_loaded_total") == loaded


def _listeners(url: str) -> list[int]:
    """The backend pids of the servers' LISTEN connections to the test's database."""
    name = conninfo_to_dict(url)["dbname"]
    with psycopg.connect(url, dbname="postgres", autocommit=True) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s"
                            " AND application_name = 'tablier-listener'", (name,)).fetchall()
    return [r[0] for r in rows]


@contextlib.contextmanager
def _notifications_held(url: str) -> Iterator[None]:
    """The servers' LISTEN backends stopped (SIGSTOP): their connections stay up, so each
    server's feed looks healthy, but no notification reaches a server until they resume."""
    pids = _listeners(url)
    assert len(pids) == 2, pids
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def test_a_write_through_another_server_is_read_with_min_seq(two_servers):
    """Every read of the present, through the server that did not write, at once after the
    write, while no notification of it can have arrived: the seq named is what it follows."""
    url, writer, reader = two_servers
    _wait_metric(reader, "tablier_append_feed_up", 1)
    _wait_metric(writer, "tablier_append_feed_up", 1)
    with (grpc.insecure_channel(writer.address) as wch, grpc.insecure_channel(reader.address) as rch,
          _notifications_held(url)):
        w, r = rpc.GameServiceStub(wch), rpc.GameServiceStub(rch)
        created = create(w, "qwirkle")
        gid = created.game_id
        assert r.GetView(pb.GetViewRequest(game_id=gid, min_seq=created.state.seq)).state.seq == created.state.seq
        state = created.state
        for _ in range(8):
            state = bot_move(w, created, state).state
            seq = state.seq
            md = seat(created.seat_tokens[state.to_act[0]])
            assert r.GetView(pb.GetViewRequest(game_id=gid, min_seq=seq)).state.seq == seq
            assert r.ListLegalMoves(pb.ListLegalMovesRequest(game_id=gid, min_seq=seq), metadata=md).seq == seq
            assert r.SuggestMove(pb.SuggestMoveRequest(game_id=gid, min_seq=seq), metadata=md).seq == seq
            listed = r.ListEvents(pb.ListEventsRequest(game_id=gid, min_seq=seq), metadata=OPERATOR)
            assert listed.last_seq == seq and listed.events[-1].seq == seq
            # The next move through the reader, decided there: it follows the writer's.
            state = bot_move(r, created, state).state
            assert state.seq > seq
            assert w.GetView(pb.GetViewRequest(game_id=gid, min_seq=state.seq)).state.seq == state.seq
        # A seq the match has not reached: refused in words, after asking the database.
        code, reason, message = expect_error(r.GetView, pb.GetViewRequest(game_id=gid, min_seq=state.seq + 5))
        assert (code, reason) == (grpc.StatusCode.OUT_OF_RANGE, "MIN_SEQ_NOT_REACHED"), message
        assert f"at seq {state.seq}" in message
        # With at_seq the answer is at that seq: min_seq is moot.
        assert r.GetView(pb.GetViewRequest(game_id=gid, at_seq=1, min_seq=state.seq + 5)).state.seq == 1


def _set_connections(url: str, allowed: bool) -> None:
    """Lets (or stops) new connections to the test's database; with False, also ends the
    servers' LISTEN connections (which then cannot come back)."""
    name = conninfo_to_dict(url)["dbname"]
    with psycopg.connect(url, dbname="postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS {}").format(
            sql.Identifier(name), sql.SQL("true" if allowed else "false")))
        if not allowed:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                         " WHERE datname = %s AND application_name = 'tablier-listener'", (name,))


def test_with_the_feed_down_reads_answer_the_current_state(two_servers):
    """No LISTEN connection (it cannot reconnect), the database otherwise up: the reader can
    no longer tell whether the state it holds is the latest, so it asks the database."""
    url, writer, reader = two_servers
    with grpc.insecure_channel(writer.address) as wch, grpc.insecure_channel(reader.address) as rch:
        w, r = rpc.GameServiceStub(wch), rpc.GameServiceStub(rch)
        created = create(w, "qwirkle")
        gid = created.game_id
        state = bot_move(w, created, created.state).state
        assert r.GetView(pb.GetViewRequest(game_id=gid, min_seq=state.seq)).state.seq == state.seq
        _wait_metric(reader, "tablier_append_feed_up", 1)
        try:
            _set_connections(url, False)
            _wait_metric(reader, "tablier_append_feed_up", 0)
            assert _metric(reader, "tablier_database_up") == 1
            loaded = _metric(reader, "tablier_reads_loaded_total")
            for _ in range(3):
                # Written through the other server, nothing heard of it: read without min_seq.
                state = bot_move(w, created, state).state
                assert r.GetView(pb.GetViewRequest(game_id=gid)).state.seq == state.seq
                md = seat(created.seat_tokens[state.to_act[0]])
                assert r.ListLegalMoves(pb.ListLegalMovesRequest(game_id=gid), metadata=md).seq == state.seq
            assert _metric(reader, "tablier_reads_loaded_total") - loaded == 6
        finally:
            _set_connections(url, True)
        # The listener comes back; reads of a held state are answered without the database again.
        _wait_metric(reader, "tablier_append_feed_up", 1)
        assert r.GetView(pb.GetViewRequest(game_id=gid)).state.seq == state.seq
        cached = _metric(reader, "tablier_reads_cached_total")
        assert r.GetView(pb.GetViewRequest(game_id=gid)).state.seq == state.seq
        assert _metric(reader, "tablier_reads_cached_total") == cached + 1


async def test_the_sdk_reads_its_own_writes_across_servers(two_servers):
    """One SDK client whose calls alternate between the two servers (round robin over both
    addresses), notifications held: every read follows the client's last move, because the
    client sends the highest seq it saw (min_seq) by itself."""
    url, writer, reader = two_servers
    _wait_metric(reader, "tablier_append_feed_up", 1)
    _wait_metric(writer, "tablier_append_feed_up", 1)
    channel = grpc.aio.insecure_channel(f"ipv4:{writer.address},{reader.address}",
                                        options=[("grpc.lb_policy_name", "round_robin")])
    async with Client(channel) as client:
        created = await client.create(games.QWIRKLE, seats=2)
        for seat_handle in created.seats:  # both servers hold the match, with the feed up
            await seat_handle.state()
            await seat_handle.state()
        with _notifications_held(url):
            seq = created.state.seq
            for _ in range(6):
                state = await created.seats[0].state()
                assert state.seq == seq
                me = created.seats[state.to_act[0]]
                moves = await me.legal_moves()
                assert moves.seq == seq
                suggestion = await me.suggest()
                assert suggestion.seq == seq
                played = await me.play(suggestion.action, expected_seq=seq)
                seq = played.state.seq
            assert client.seen[created.game_id] == seq
    # The calls went to both servers in turn, and reads were answered by the server that had
    # not written the move before them (it asked the database, as min_seq made it).
    got = [scrape(metrics_address(srv)) for srv in (writer, reader)]
    plays = [g.get(("tablier_rpc_duration_seconds_count", (("code", "OK"), ("method", "PlayMove"))), 0) for g in got]
    assert sum(plays) == 6
    assert all(g.get(("tablier_rpc_duration_seconds_count", (("code", "OK"), ("method", "GetView"))), 0) for g in got)
    assert sum(g[("tablier_reads_loaded_total", ())] for g in got) >= 6
