"""Ranked play end to end (docs/api.md "Ranked play"): a ranked match rated when it ends, the
rating a projection of a chained stream that `tablier ratings rebuild` recomputes to the same
numbers and `tablier ratings verify` finds tampered; leaderboards and histories; what is never
rated; a match rated by a server that starts after the one that saw it end stopped; and the
matchmaking queue across two servers, with a bot filling a seat after the wait."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator

import grpc
import psycopg
import pytest
from tablier.v1 import players_pb2 as ppb
from tablier.v1 import players_pb2_grpc as prpc
from tablier.v1 import ranked_pb2 as rk
from tablier.v1 import ranked_pb2_grpc as rrpc
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from tablier.store import open_store

from .conftest import START_TIMEOUT, Server, tablier_cmd
from .helpers import error_of, expect_error, seat

GAME = "carre"
WAIT = 30.0


class Stubs:
    def __init__(self, srv: Server) -> None:
        self.channel = grpc.insecure_channel(srv.address)
        grpc.channel_ready_future(self.channel).result(timeout=START_TIMEOUT)
        self.players = prpc.PlayerServiceStub(self.channel)
        self.games = rpc.GameServiceStub(self.channel)
        self.ranked = rrpc.RankedServiceStub(self.channel)

    def guest(self, name: str) -> ppb.CreateGuestPlayerResponse:
        return self.players.CreateGuestPlayer(ppb.CreateGuestPlayerRequest(display_name=name))


@pytest.fixture(scope="module")
def stubs(server: Server) -> Iterator[Stubs]:
    s = Stubs(server)
    yield s
    s.channel.close()


def creator_and(*others: pb.SeatKind.ValueType, bot: str = "") -> list[pb.SeatAssignment]:
    return [pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR)] + [pb.SeatAssignment(kind=k, bot=bot) for k in others]


def play_out(games: rpc.GameServiceStub, game_id: str, creds: dict[int, str]) -> pb.GameState:
    """Plays the seats `creds` holds (seat -> player credential) with their first legal move
    until the match is over; the server plays its bot seats."""
    deadline = time.monotonic() + 120
    state = games.GetView(pb.GetViewRequest(game_id=game_id)).state
    while not state.over:
        assert time.monotonic() < deadline, "the match did not end"
        movers = [s for s in state.to_act if s in creds]
        if not movers:  # the server's bot is to move: until it has
            time.sleep(0.02)
            state = games.GetView(pb.GetViewRequest(game_id=game_id)).state
            continue
        md = seat(creds[movers[0]])
        moves = games.ListLegalMoves(pb.ListLegalMovesRequest(game_id=game_id, min_seq=state.seq), metadata=md)
        try:
            state = games.PlayMove(
                pb.PlayMoveRequest(
                    game_id=game_id, command_id=str(uuid.uuid4()), action=moves.moves[0], expected_seq=moves.seq
                ),
                metadata=md,
            ).state
        except grpc.RpcError as exc:
            if exc.code() is not grpc.StatusCode.ABORTED:  # a bot moved meanwhile
                raise
            state = games.GetView(pb.GetViewRequest(game_id=game_id)).state
    return state


def rated(ranked: rrpc.RankedServiceStub, subject: str, game_id: str) -> rk.GetRatingHistoryResponse:
    """The subject's history once it holds the match's rating event."""
    deadline = time.monotonic() + WAIT
    while True:
        history = ranked.GetRatingHistory(rk.GetRatingHistoryRequest(game_type=GAME, subject=subject))
        if any(e.event.game_id == game_id for e in history.entries):
            return history
        assert time.monotonic() < deadline, f"match {game_id} was not rated"
        time.sleep(0.05)


def ratings_cli(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        tablier_cmd("ratings", *args, "--database-url", database_url),
        capture_output=True,
        text=True,
        timeout=120,
    )


def ranked_match_with_bot(s: Stubs, name: str) -> tuple[ppb.CreateGuestPlayerResponse, str]:
    who = s.guest(name)
    made = s.games.CreateGame(
        pb.CreateGameRequest(game_type=GAME, seats=2, ranked=True, seat_assignments=creator_and(pb.SEAT_KIND_BOT)),
        metadata=seat(who.credential),
    )
    assert made.state.ranked
    play_out(s.games, made.game_id, {0: who.credential})
    return who, made.game_id


def test_a_ranked_match_is_rated_when_it_ends_and_the_ratings_rebuild_to_the_same_numbers(
    stubs: Stubs, e2e_database_url: str
) -> None:
    alice, bob = stubs.guest("Alice"), stubs.guest("Bob")
    made = stubs.games.CreateGame(
        pb.CreateGameRequest(game_type=GAME, seats=2, ranked=True, seat_assignments=creator_and(pb.SEAT_KIND_OPEN)),
        metadata=seat(alice.credential),
    )
    joined = stubs.games.JoinGame(pb.JoinGameRequest(game_id=made.game_id), metadata=seat(bob.credential))
    listed = stubs.games.ListGames(pb.ListGamesRequest(mine=True), metadata=seat(alice.credential)).games
    assert listed[0].game_id == made.game_id and listed[0].ranked
    end = play_out(stubs.games, made.game_id, {0: alice.credential, joined.seat: bob.credential})

    a = f"player:{alice.player.player_id}"
    history = rated(stubs.ranked, a, made.game_id)
    event = history.entries[0].event
    assert event.model == "openskill.PlackettLuce" and event.model_version == "6.2.0"
    assert set(event.parameters) == {
        "mu",
        "sigma",
        "beta",
        "kappa",
        "tau",
        "limit_sigma",
        "balance",
        "margin",
        "weight_bounds",
        "gamma",
    }
    assert event.parameters["gamma"] == "sqrt(sigma_squared) / c"
    assert event.match_seq == end.seq and event.match_chain_head == end.chain_head
    changes = {c.subject: c for c in event.changes}
    b = f"player:{bob.player.player_id}"
    assert set(changes) == {a, b}
    # Placements from the outcome: the winners first; a tie shares the placement.
    winners = set(end.outcome.winners)
    for c in event.changes:
        assert c.placement == (1 if c.seat in winners else 2)
        assert (c.mu_before, c.rating_before) == (25.0, 1500)  # new players
    if len(winners) == 1:
        w = next(c for c in event.changes if c.seat in winners)
        l_ = next(c for c in event.changes if c.seat not in winners)
        assert w.mu_after > w.mu_before and l_.mu_after < l_.mu_before
    assert history.current.rating == changes[a].rating_after and history.current.matches == 1

    board = stubs.ranked.GetLeaderboard(rk.GetLeaderboardRequest(game_type=GAME, page_size=100))
    mine = {r.subject: r for r in board.ratings}
    assert mine[a].display_name == "Alice" and mine[a].rating == changes[a].rating_after
    assert [r.rank for r in board.ratings] == list(range(1, len(board.ratings) + 1))
    assert [r.rating for r in board.ratings] == sorted((r.rating for r in board.ratings), reverse=True)

    # Recomputed from the stream alone: the same bytes, the same rows.
    done = ratings_cli(e2e_database_url, "rebuild", "--game-type", GAME)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "identical" in done.stdout

    # A rating changed in the database is found, and rebuilt from the stream.
    with psycopg.connect(e2e_database_url, autocommit=True) as conn:
        conn.execute("UPDATE ratings SET mu = mu + 1 WHERE game_type = %s AND subject = %s", (GAME, a))
    found = ratings_cli(e2e_database_url, "verify", "--game-type", GAME)
    assert found.returncode == 1 and a in found.stderr, found.stderr
    fixed = ratings_cli(e2e_database_url, "rebuild", "--game-type", GAME, "--write")
    assert fixed.returncode == 1 and "rewritten" in fixed.stdout  # it reports what it found, then fixes it
    again = ratings_cli(e2e_database_url, "verify", "--game-type", GAME)
    assert again.returncode == 0, again.stderr


def test_a_changed_rating_event_breaks_the_stream(stubs: Stubs, e2e_database_url: str) -> None:
    who, game_id = ranked_match_with_bot(stubs, "Dora")
    rated(stubs.ranked, f"player:{who.player.player_id}", game_id)
    with psycopg.connect(e2e_database_url, autocommit=True) as conn:
        row = conn.execute("SELECT seq, payload FROM rating_events WHERE game_id = %s", (game_id,)).fetchone()
        assert row is not None
        seq, payload = row
        event = rk.RatingEvent.FromString(payload)
        event.changes[0].placement = 2 if event.changes[0].placement == 1 else 1
        conn.execute(
            "UPDATE rating_events SET payload = %s WHERE game_type = %s AND seq = %s",
            (event.SerializeToString(deterministic=True), GAME, seq),
        )
        try:
            found = ratings_cli(e2e_database_url, "verify", "--game-type", GAME)
            assert found.returncode == 1 and f"seq {seq}:" in found.stderr, found.stderr
        finally:
            conn.execute(
                "UPDATE rating_events SET payload = %s WHERE game_type = %s AND seq = %s", (payload, GAME, seq)
            )
    assert ratings_cli(e2e_database_url, "verify", "--game-type", GAME).returncode == 0


def test_bots_have_ratings_too(stubs: Stubs) -> None:
    who, game_id = ranked_match_with_bot(stubs, "Eve")
    history = rated(stubs.ranked, f"player:{who.player.player_id}", game_id)
    bots = [c for c in history.entries[0].event.changes if c.subject.startswith("bot:")]
    assert len(bots) == 1
    board = stubs.ranked.GetLeaderboard(rk.GetLeaderboardRequest(game_type=GAME, page_size=100)).ratings
    listed = next(r for r in board if r.subject == bots[0].subject)
    assert listed.display_name == f"bot {bots[0].subject.removeprefix('bot:')}" and listed.matches >= 1


def test_what_is_never_ranked(stubs: Stubs) -> None:
    carol = stubs.guest("Carol")
    md = seat(carol.credential)
    code, reason, _ = expect_error(
        stubs.games.CreateGame,
        pb.CreateGameRequest(game_type=GAME, seats=2, ranked=True, seat_assignments=creator_and(pb.SEAT_KIND_OPEN)),
    )
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "PLAYER_CREDENTIAL_REQUIRED")
    code, reason, _ = expect_error(
        stubs.games.CreateGame,
        pb.CreateGameRequest(
            game_type=GAME,
            seats=2,
            ranked=True,
            options={"rounds_per_match": "1"},
            seat_assignments=creator_and(pb.SEAT_KIND_OPEN),
        ),
        metadata=md,
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "RANKED_OPTIONS")
    code, reason, _ = expect_error(
        stubs.games.CreateGame, pb.CreateGameRequest(game_type=GAME, seats=2, ranked=True), metadata=md
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "RANKED_SEATS")  # hot seat: one person, two seats
    made = stubs.games.CreateGame(
        pb.CreateGameRequest(game_type=GAME, seats=2, ranked=True, seat_assignments=creator_and(pb.SEAT_KIND_OPEN)),
        metadata=md,
    )
    code, reason, _ = expect_error(stubs.games.JoinGame, pb.JoinGameRequest(game_id=made.game_id))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "PLAYER_CREDENTIAL_REQUIRED")
    # A match not created ranked is not rated.
    plain = stubs.games.CreateGame(
        pb.CreateGameRequest(game_type=GAME, seats=2, seat_assignments=creator_and(pb.SEAT_KIND_BOT)), metadata=md
    )
    assert not plain.state.ranked
    play_out(stubs.games, plain.game_id, {0: carol.credential})
    history = stubs.ranked.GetRatingHistory(rk.GetRatingHistoryRequest(game_type=GAME), metadata=md)
    assert not history.entries and not history.HasField("current")
    code, reason, _ = expect_error(
        stubs.ranked.GetRatingHistory, rk.GetRatingHistoryRequest(game_type=GAME, subject="someone")
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SUBJECT")


def test_a_match_that_ended_unrated_is_rated_by_a_server_that_starts(
    stubs: Stubs, serving, e2e_database_url: str
) -> None:
    """The server that saw the match end stopped before its rating event: its event is taken
    away (the last of the stream) and the projection rebuilt without it; a server that starts
    rates the match again, to the same bytes."""
    who, game_id = ranked_match_with_bot(stubs, "Fay")
    subject = f"player:{who.player.player_id}"
    rated(stubs.ranked, subject, game_id)
    with psycopg.connect(e2e_database_url, autocommit=True) as conn:
        # Nothing else rates carre meanwhile in this module's tests.
        last = conn.execute(
            "SELECT seq, payload, chain_hash FROM rating_events WHERE game_type = %s ORDER BY seq DESC LIMIT 1",
            (GAME,),
        ).fetchone()
        mine = conn.execute("SELECT seq FROM rating_events WHERE game_id = %s", (game_id,)).fetchone()
        assert last is not None and mine is not None and last[0] == mine[0]
        conn.execute("DELETE FROM rating_events WHERE game_type = %s AND seq = %s", (GAME, last[0]))
        # What that server left: the match listed to rate, written before its final append.
        conn.execute("INSERT INTO ranked_ends (game_id, game_type) VALUES (%s, %s)", (game_id, GAME))
    # A ranked match in play is not among those a starting server loads to rate.
    running = stubs.games.CreateGame(
        pb.CreateGameRequest(game_type=GAME, seats=2, ranked=True, seat_assignments=creator_and(pb.SEAT_KIND_BOT)),
        metadata=seat(stubs.guest("Gil").credential),
    )
    listed = asyncio.run(to_rate(e2e_database_url))
    assert game_id in listed and running.game_id not in listed
    assert ratings_cli(e2e_database_url, "rebuild", "--game-type", GAME, "--write").returncode == 1
    assert ratings_cli(e2e_database_url, "verify", "--game-type", GAME).returncode == 0
    srv, _ = serving()
    again = Stubs(srv)
    try:
        rated(again.ranked, subject, game_id)
    finally:
        again.channel.close()
    with psycopg.connect(e2e_database_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT seq, payload, chain_hash FROM rating_events WHERE game_id = %s", (game_id,)
        ).fetchone()
    assert row is not None and (row[0], bytes(row[1]), bytes(row[2])) == (last[0], bytes(last[1]), bytes(last[2]))
    assert ratings_cli(e2e_database_url, "verify", "--game-type", GAME).returncode == 0
    assert game_id not in asyncio.run(to_rate(e2e_database_url))  # rated: off the list


async def to_rate(database_url: str) -> list[str]:
    """The ranked matches a starting server loads to rate (`Ranked.resume`)."""
    store = await open_store(database_url)
    try:
        assert store.ratings is not None
        return await store.ratings.unrated()
    finally:
        await store.close()


def find(s: Stubs, cred: str, seats: int = 2) -> tuple[list[rk.QueueStatus], rk.QueueMatch | None]:
    statuses: list[rk.QueueStatus] = []
    for msg in s.ranked.FindMatch(rk.FindMatchRequest(game_type=GAME, seats=seats), metadata=seat(cred), timeout=60):
        if msg.HasField("matched"):
            return statuses, msg.matched
        statuses.append(msg.waiting)
    return statuses, None


def test_the_queue_matches_players_waiting_on_two_servers_and_a_search_can_be_cancelled(serving) -> None:
    a, _ = serving("--queue-bot-after", "120")
    b, _ = serving("--queue-bot-after", "120")
    sa, sb = Stubs(a), Stubs(b)
    try:
        gus, hal = sa.guest("Gus"), sb.guest("Hal")
        results: dict[str, tuple[list[rk.QueueStatus], rk.QueueMatch | None]] = {}
        threads = [
            threading.Thread(target=lambda: results.__setitem__("gus", find(sa, gus.credential))),
            threading.Thread(target=lambda: results.__setitem__("hal", find(sb, hal.credential))),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(90)
        g, h = results["gus"][1], results["hal"][1]
        assert g is not None and h is not None
        assert g.game_id == h.game_id and {g.seat, h.seat} == {0, 1}
        assert "Hal" in g.message and "Gus" in h.message
        assert results["gus"][0][0].message.startswith("Looking for 1 player rated")
        state = sa.games.GetView(pb.GetViewRequest(game_id=g.game_id), metadata=seat(gus.credential)).state
        assert state.ranked and state.seat == g.seat
        assert {i.player.display_name for i in state.seats} == {"Gus", "Hal"}

        # A search ends when its player cancels it (from any server).
        jay = sb.guest("Jay")
        stream = sb.ranked.FindMatch(
            rk.FindMatchRequest(game_type="qwirkle", seats=4), metadata=seat(jay.credential), timeout=60
        )
        first = next(stream)
        assert first.waiting.ticket and first.waiting.queued >= 1
        code, reason, _ = expect_error(
            sb.ranked.FindMatch(
                rk.FindMatchRequest(game_type="qwirkle", seats=4), metadata=seat(jay.credential)
            ).__next__
        )
        assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "ALREADY_QUEUED")
        left = sa.ranked.CancelFind(rk.CancelFindRequest(ticket=first.waiting.ticket), metadata=seat(jay.credential))
        assert left.cancelled
        rest = list(stream)  # the stream ends
        assert not any(m.HasField("matched") for m in rest)

        # Closing the stream leaves the queue too: the player may queue again at once after.
        again = sb.ranked.FindMatch(
            rk.FindMatchRequest(game_type="qwirkle", seats=4), metadata=seat(jay.credential), timeout=60
        )
        assert next(again).waiting.ticket
        again.cancel()
        deadline = time.monotonic() + WAIT
        while True:
            third = sb.ranked.FindMatch(
                rk.FindMatchRequest(game_type="qwirkle", seats=4), metadata=seat(jay.credential), timeout=60
            )
            try:
                assert next(third).waiting.ticket
                third.cancel()
                break
            except grpc.RpcError as exc:
                assert error_of(exc)[1] == "ALREADY_QUEUED" and time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        sa.channel.close()
        sb.channel.close()


def test_a_bot_of_near_rating_fills_the_seat_after_the_wait_not_a_player_whose_server_stopped(
    serving, e2e_database_url: str
) -> None:
    srv, _ = serving("--queue-bot-after", "1")
    s = Stubs(srv)
    try:
        # A ticket whose server stopped renewing it a minute ago: its player is gone.
        ghost = s.guest("Ghost")
        with psycopg.connect(e2e_database_url, autocommit=True) as conn:
            conn.execute(
                """INSERT INTO match_queue (ticket, player_id, game_type, seats, rating, enqueued_at, seen_at)
                   VALUES (%s, %s, %s, 2, 1500, now() - interval '1 minute', now() - interval '1 minute')""",
                (str(uuid.uuid4()), ghost.player.player_id, GAME),
            )
        ivy = s.guest("Ivy")
        statuses, matched = find(s, ivy.credential)
        assert matched is not None and "bot " in matched.message, matched
        state = s.games.GetView(pb.GetViewRequest(game_id=matched.game_id), metadata=seat(ivy.credential)).state
        assert state.ranked and any(i.bot for i in state.seats)
        assert statuses and statuses[0].rating == 1500
        assert "Ghost" not in matched.message
        with psycopg.connect(e2e_database_url, autocommit=True) as conn:
            left = conn.execute("SELECT count(*) FROM match_queue WHERE player_id = %s", (ghost.player.player_id,))
            assert left.fetchone() == (0,)  # dropped

    finally:
        s.channel.close()


def test_the_queue_load_test_matches_and_plays_every_player(server: Server, tmp_path) -> None:
    out = tmp_path / "queue.json"
    done = subprocess.run(
        tablier_cmd(
            "loadtest",
            "queue",
            "--server",
            server.address,
            "--players",
            "4",
            "--game",
            GAME,
            "--seats",
            "2",
            "--json",
            str(out),
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    report = json.loads(out.read_text())
    assert (report["matched"], report["matches"]) == (4, 2) and report["moves"] > 0
    assert 0 < report["time_to_match_s"]["p50"] <= report["time_to_match_s"]["p99"]
    assert "time to match: p50" in done.stdout


def test_the_leaderboard_reaches_browsers_over_connect(serving) -> None:
    srv, _ = serving("--web-listen", "127.0.0.1:0")
    request = urllib.request.Request(
        f"{srv.web_url}/tablier.v1.RankedService/GetLeaderboard",
        data=json.dumps({"gameType": GAME, "pageSize": 5}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        board = json.loads(answer.read())
    assert board["ratings"] and board["ratings"][0]["rank"] == 1 and board["total"] >= len(board["ratings"])


def test_a_player_who_resigns_is_placed_last(stubs: Stubs) -> None:
    kim, lee = stubs.guest("Kim"), stubs.guest("Lee")
    made = stubs.games.CreateGame(
        pb.CreateGameRequest(game_type=GAME, seats=2, ranked=True, seat_assignments=creator_and(pb.SEAT_KIND_OPEN)),
        metadata=seat(kim.credential),
    )
    joined = stubs.games.JoinGame(pb.JoinGameRequest(game_id=made.game_id), metadata=seat(lee.credential))
    creds = {0: kim.credential, joined.seat: lee.credential}
    state = stubs.games.GetView(pb.GetViewRequest(game_id=made.game_id)).state
    mover = state.to_act[0]
    resigned = stubs.games.ResignGame(
        pb.ResignGameRequest(game_id=made.game_id, command_id="resign"), metadata=seat(creds[mover])
    )
    assert resigned.state.over
    loser = f"player:{(kim if mover == 0 else lee).player.player_id}"
    history = rated(stubs.ranked, loser, made.game_id)
    places = {c.seat: c.placement for c in history.entries[0].event.changes}
    assert places[mover] == 2 and places[1 - mover] == 1
    assert history.entries[0].change.rating_after < history.entries[0].change.rating_before


async def test_the_terminal_players_end_screen_shows_the_rating_change_and_rank(server: Server) -> None:
    from tablier_client.play.app import MatchScreen, PlayApp, Start

    s = Stubs(server)
    try:
        who, game_id = await asyncio.to_thread(ranked_match_with_bot, s, "Mia")
    finally:
        s.channel.close()
    app = PlayApp(server.address, tls=False, start=Start(game_id=game_id, credential=who.credential))
    async with app.run_test(size=(170, 50)) as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT

        def said() -> str:
            screen = app.screen
            return str(screen.query_one("#moves-label").render()) if isinstance(screen, MatchScreen) else ""

        while "Rating " not in said():
            assert loop.time() < deadline, f"no rating change on the end screen: {said()!r}"
            await pilot.pause(0.05)
        assert "Match over" in said() and " → " in said() and "(rank " in said()


def test_the_terminal_player_prints_a_leaderboard(stubs: Stubs, server: Server) -> None:
    ranked_match_with_bot(stubs, "Ned")
    deadline = time.monotonic() + WAIT
    while not stubs.ranked.GetLeaderboard(rk.GetLeaderboardRequest(game_type=GAME)).ratings:
        assert time.monotonic() < deadline, "nobody rated"
        time.sleep(0.05)
    done = subprocess.run(
        tablier_cmd("play", "--server", server.address, "--no-tls", "--leaderboard", GAME),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"Leaderboard of {GAME} (") and lines[2].split()[0] == "1"
