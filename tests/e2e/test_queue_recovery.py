"""The matchmaking queue makes a match in two steps (app/queue.py, migration 0011): the plan and
the tickets taken in one transaction, then the match created under the planned game id. A
server killed between the two leaves the plan; another server makes that very match, once, and
no ticket is told a match that does not exist. Real servers and PostgreSQL: the test holds a
lock on `games`, so the first server's creation waits there, between the steps, when it is
killed."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import grpc
import psycopg
import pytest
from tablier.store import open_store
from tablier.v1 import ranked_pb2 as rk
from tablier.v1 import service_pb2 as pb

from .conftest import Server, start_server
from .helpers import seat
from .test_ranked import GAME, Stubs

WAIT = 30.0


def until(what: str, check, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.05)


async def told(database_url: str, tickets: list[str]) -> list[tuple[str | None, int | None]]:
    """The tickets' matches as a server reads them to tell their players (`PgRatings.tickets`)."""
    store = await open_store(database_url)
    try:
        return [(t.game_id, t.seat) for t in await store.ratings.tickets(tickets)]
    finally:
        await store.close()


@pytest.fixture
def servers(fresh_database_url: str, tmp_path) -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for srv in started:
        if srv.proc.poll() is None:
            assert srv.stop() == 0, srv.log.read_text()


def test_a_server_killed_between_taking_the_tickets_and_creating_the_match(
    fresh_database_url: str, servers: list[Server], tmp_path
) -> None:
    a = start_server(fresh_database_url, tmp_path, "queue-a")
    servers.append(a)
    sa = Stubs(a)
    ann, ben = sa.guest("Ann"), sa.guest("Ben")
    players = {ann.player.player_id, ben.player.player_id}

    def queue(cred: str) -> None:  # a player waiting on server A, until A dies
        try:
            for _ in sa.ranked.FindMatch(rk.FindMatchRequest(game_type=GAME, seats=2), metadata=seat(cred), timeout=60):
                pass
        except grpc.RpcError:
            pass

    with psycopg.connect(fresh_database_url, autocommit=True) as watch, psycopg.connect(fresh_database_url) as lock:
        lock.execute("LOCK TABLE games IN SHARE MODE")  # creations wait here: between the steps
        waiting = [threading.Thread(target=queue, args=(c,), daemon=True) for c in (ann.credential, ben.credential)]
        for t in waiting:
            t.start()

        def planned() -> tuple[str, set[str]] | None:
            row = watch.execute("SELECT game_id, players FROM queue_matches").fetchone()
            if row is None:
                return None
            marked = watch.execute("SELECT count(*) FROM match_queue WHERE game_id = %s", (row[0],)).fetchone()
            return (str(row[0]), {str(p) for p in row[1]}) if marked and marked[0] == 2 else None

        game_id, seated = until("the plan and its tickets taken", planned)
        assert seated == players
        assert watch.execute("SELECT 1 FROM games WHERE game_id = %s", (game_id,)).fetchone() is None
        # Taken, but no player is told a match that does not exist yet.
        tickets = [str(r[0]) for r in watch.execute("SELECT ticket FROM match_queue").fetchall()]
        assert asyncio.run(told(fresh_database_url, tickets)) == [(None, None), (None, None)]
        a.proc.kill()  # between the two steps
        a.proc.wait(WAIT)
        sa.channel.close()
        lock.rollback()
        for t in waiting:
            t.join(WAIT)

        # No ticket is told a match that does not exist: server B's look at them shows none
        # until the match is made; B, starting, makes the planned match under its game id.
        b = start_server(fresh_database_url, tmp_path, "queue-b")
        servers.append(b)
        sb = Stubs(b)
        try:
            state = until(
                "the planned match made by server B",
                lambda: watch.execute("SELECT 1 FROM games WHERE game_id = %s", (game_id,)).fetchone()
                and sb.games.GetView(pb.GetViewRequest(game_id=game_id)).state,
            )
            assert state.ranked and {s.player.player_id for s in state.seats} == players
            until("the plan deleted", lambda: watch.execute("SELECT count(*) FROM queue_matches").fetchone() == (0,))
            # One match of those tickets, whichever servers looked at them.
            for who in (ann, ben):
                mine = sb.games.ListGames(pb.ListGamesRequest(mine=True), metadata=seat(who.credential)).games
                assert [g.game_id for g in mine] == [game_id]
            # The players' tickets now name it (a server holding their stream tells them), each
            # with its seat; unless dropped meanwhile (their server stopped renewing them).
            now = asyncio.run(told(fresh_database_url, tickets))
            assert all(g == game_id for g, _ in now) and sorted(s for _, s in now) == list(range(len(now)))
        finally:
            sb.channel.close()
