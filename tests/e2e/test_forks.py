"""ForkGame end to end, against a real server and PostgreSQL: in every game, forks at several
seqs of a finished match, from a seat and from the auditor, each played to its end; a fork of
a fork; a match lists its forks; who may fork, and every refusal in words; `tablier verify`
checks a fork's lineage against its parent's log, and catches the parent's head changed."""

from __future__ import annotations

import os
import subprocess
import uuid

import grpc
import psycopg
import pytest

from tablier.v1 import common_pb2
from tablier.v1 import players_pb2 as ppb
from tablier.v1 import players_pb2_grpc as prpc
from tablier.v1 import service_pb2 as pb

from .conftest import GAME_IDS, tablier_cmd
from .helpers import INFO, OPERATOR, bot_move, expect_error, seat

# Options that keep a match short (the games' own `short` test options).
SHORT = {
    "rat_a_tat_cat": {"match_mode": "fixed_rounds", "rounds": "1"},
    "democratie": {"target": "1"},
    "grid_knock": {"target_score": "1"},
    "carre": {"rounds_per_match": "1"},
    "qwirkle": {},
}


def as_seat(n: int) -> common_pb2.Viewer:
    return common_pb2.Viewer(seat=n)


AUDITOR = common_pb2.Viewer(auditor=common_pb2.Viewer.Auditor())


def play_to_end(stub, created, limit: int = 2000) -> tuple[pb.GameState, list[int]]:
    """Plays the bots' moves until the match is over; the final state and the seq of every
    decision (the opening's last seq and after each move)."""
    state = created.state
    decisions = [state.seq]
    for _ in range(limit):
        if state.over:
            return state, decisions
        state = bot_move(stub, created, state).state
        decisions.append(state.seq)
    raise AssertionError(f"no end after {limit} moves")


def fork(stub, parent: str, at: int, forked_as: common_pb2.Viewer, metadata=(), **kw) -> pb.ForkGameResponse:
    return stub.ForkGame(
        pb.ForkGameRequest(parent_game_id=parent, at_seq=at, forked_as=forked_as, **kw), metadata=metadata
    )


@pytest.fixture(scope="module")
def finished(stub):
    """One finished match per game, with the seqs of its decisions."""
    out = {}
    for game in GAME_IDS:
        created = stub.CreateGame(
            pb.CreateGameRequest(game_type=game, seats=INFO[game].min_players, options=SHORT.get(game, {}))
        )
        state, decisions = play_to_end(stub, created)
        out[game] = (created, state, decisions)
    return out


def tablier(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        tablier_cmd(*args), capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "300"}
    )


@pytest.mark.parametrize("game", GAME_IDS)
def test_forks_at_several_seqs_play_to_their_end(stub, finished, game, e2e_database_url):
    created, final, decisions = finished[game]
    parent = created.game_id
    seats = created.state.seat_count
    # Early, in the middle, and the last decision before the end.
    picks = [decisions[0], decisions[len(decisions) // 2], decisions[-2]]
    forks = []
    for i, at in enumerate(picks):
        forked_as = AUDITOR if i == 1 else as_seat(i % seats)
        forked = fork(stub, parent, at, forked_as)
        st = forked.state
        # A fork says so, and of what, in every view; it starts at seq 1 with its own seed.
        assert st.seq == 1 and st.HasField("fork") and not st.over
        assert st.fork.parent_game_id == parent and st.fork.parent_seq == at
        assert st.fork.forked_as == forked_as
        assert len(st.fork.parent_head) == 32 and st.seed_commitment != final.seed_commitment
        assert not st.clocks, "a fork has no clock unless asked"
        assert st.options == {k: v for k, v in final.options.items() if not k.startswith("clock_")}
        parent_at = stub.GetView(pb.GetViewRequest(game_id=parent, at_seq=at), metadata=OPERATOR).state
        assert st.fork.parent_head == parent_at.chain_head
        mine = stub.GetView(pb.GetViewRequest(game_id=forked.game_id), metadata=seat(forked.seat_tokens[0])).state
        assert mine.HasField("fork") and mine.to_act == parent_at.to_act
        if forked_as == AUDITOR:
            # The parent's very table, hidden cards included.
            view = stub.GetView(pb.GetViewRequest(game_id=forked.game_id), metadata=OPERATOR).state.view
            assert view.value == parent_at.view.value
        else:
            # The seat's own view is what it was in the parent.
            s = forked_as.seat
            parent_seat = stub.GetView(
                pb.GetViewRequest(game_id=parent, at_seq=at, with_position=True, position_seat=s), metadata=OPERATOR
            )
            fork_seat = stub.GetView(
                pb.GetViewRequest(game_id=forked.game_id, with_position=True, position_seat=s),
                metadata=seat(forked.seat_tokens[s]),
            )
            assert fork_seat.position.value == parent_seat.position.value
        # The opening event: the lineage to a seat, whole to the auditor.
        seen = stub.ListEvents(pb.ListEventsRequest(game_id=forked.game_id), metadata=seat(forked.seat_tokens[0]))
        opening = common_pb2.Forked.FromString(seen.events[0].payload.value)
        assert seen.events[0].type == "forked" and opening.parent_game_id == parent
        assert not opening.position and not opening.deal and not opening.parent_events
        assert "fork" in seen.events[0].description and "never rated" in seen.events[0].description
        end, _ = play_to_end(stub, forked)
        assert end.over and end.HasField("fork")
        forks.append(forked.game_id)
    # A match lists its forks, newest first.
    listed = stub.ListGames(pb.ListGamesRequest(parent_game_id=parent))
    assert [g.game_id for g in listed.games] == forks[::-1]
    assert all(g.fork.parent_game_id == parent for g in listed.games)
    # `tablier verify` checks each fork against its parent's log.
    for gid in forks:
        done = tablier("verify", gid, "--database-url", e2e_database_url)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "lineage" in done.stdout, done.stdout


def test_a_fork_of_a_fork(stub, finished):
    created, _, decisions = finished["democratie"]
    first = fork(stub, created.game_id, decisions[1], as_seat(0))
    moved = bot_move(stub, first).state
    # A running fork: its host (the operator token) may fork it from the auditor's state.
    second = fork(stub, first.game_id, moved.seq, AUDITOR, metadata=OPERATOR)
    assert second.state.fork.parent_game_id == first.game_id
    first_now = stub.GetView(pb.GetViewRequest(game_id=first.game_id), metadata=OPERATOR).state
    second_now = stub.GetView(pb.GetViewRequest(game_id=second.game_id), metadata=OPERATOR).state
    assert second_now.view.value == first_now.view.value
    third = fork(stub, second.game_id, 1, as_seat(1), metadata=OPERATOR)
    assert play_to_end(stub, third)[0].over
    assert [g.game_id for g in stub.ListGames(pb.ListGamesRequest(parent_game_id=first.game_id)).games] == [
        second.game_id
    ]


def test_who_may_fork_and_refusals_in_words(stub, finished):
    running = stub.CreateGame(pb.CreateGameRequest(game_type="rat_a_tat_cat", seats=2, options=SHORT["rat_a_tat_cat"]))
    gid = running.game_id
    at = bot_move(stub, running).state.seq
    seat0, seat1 = seat(running.seat_tokens[0]), seat(running.seat_tokens[1])

    # While it runs: a seat forks from its own knowledge only; the auditor's state is the host's.
    assert fork(stub, gid, at, as_seat(0), metadata=seat0).state.fork.forked_as.seat == 0
    code, reason, message = expect_error(fork, stub, gid, at, as_seat(1), metadata=seat0)
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "FORK_NOT_VISIBLE") and "seat 1" in message
    code, reason, message = expect_error(fork, stub, gid, at, as_seat(0))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "FORK_NOT_VISIBLE")
    code, reason, message = expect_error(fork, stub, gid, at, AUDITOR, metadata=seat1)
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "FORK_NOT_VISIBLE") and "hidden card" in message
    assert fork(stub, gid, at, AUDITOR, metadata=OPERATOR).state.fork.forked_as == AUDITOR

    # Bad requests, each with its reason and a sentence.
    spectator = common_pb2.Viewer(spectator=common_pb2.Viewer.Spectator())
    cases = [
        (dict(parent=gid, at=at, forked_as=spectator), grpc.StatusCode.INVALID_ARGUMENT, "BAD_FORK_AS"),
        (dict(parent=gid, at=at, forked_as=as_seat(5)), grpc.StatusCode.INVALID_ARGUMENT, "BAD_FORK_AS"),
        (dict(parent=gid, at=0, forked_as=as_seat(0)), grpc.StatusCode.OUT_OF_RANGE, "BAD_AT_SEQ"),
        (dict(parent=gid, at=at + 50, forked_as=as_seat(0)), grpc.StatusCode.OUT_OF_RANGE, "BAD_AT_SEQ"),
        (dict(parent=str(uuid.uuid4()), at=1, forked_as=as_seat(0)), grpc.StatusCode.NOT_FOUND, None),
    ]
    for kw, code, reason in cases:
        got = expect_error(fork, stub, kw["parent"], kw["at"], kw["forked_as"], metadata=seat0)
        assert got[0] == code and (reason is None or got[1] == reason), (kw, got)
    got = expect_error(fork, stub, gid, at, as_seat(0), metadata=seat0, options={"rounds": "3"})
    assert got[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "FORK_OPTION") and "rounds" in got[2]
    # A clock may be asked for.
    clocked = fork(stub, gid, at, as_seat(0), metadata=seat0, options={"clock_move_seconds": "60"})
    assert len(clocked.state.clocks) == 2

    # A seq inside the opening deal (several events, no decision between them).
    events = stub.ListEvents(pb.ListEventsRequest(game_id=gid), metadata=OPERATOR).events
    opening = [e.seq for e in events if not e.command_id]
    if len(opening) > 1:
        got = expect_error(fork, stub, gid, opening[0], as_seat(0), metadata=seat0)
        assert got[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_A_DECISION"), got
    # The end of a finished match: nothing to play on.
    created, final, _ = finished["carre"]
    got = expect_error(fork, stub, created.game_id, final.seq, as_seat(0))
    assert got[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "NOTHING_TO_PLAY_ON"), got


def test_verify_catches_the_parents_head_changed(stub, finished, e2e_database_url):
    created, _, decisions = finished["grid_knock"]
    forked = fork(stub, created.game_id, decisions[2], as_seat(0))
    ok = tablier("verify", forked.game_id, "--database-url", e2e_database_url)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # The fork's record claims another parent head: its genesis no longer chains, and the
    # parent's log does not hold that head at that seq.
    with psycopg.connect(e2e_database_url, autocommit=True) as conn:
        conn.execute("UPDATE games SET parent_head = %s WHERE game_id = %s", (b"\x01" * 32, forked.game_id))
    bad = tablier("verify", forked.game_id, "--database-url", e2e_database_url)
    assert bad.returncode != 0
    assert "lineage" in bad.stdout and "parent" in bad.stdout, bad.stdout


def test_the_sdk_forks_and_lists_forks(server, finished):
    import asyncio

    from tablier_client import connect

    created, _, decisions = finished["carre"]
    at = decisions[len(decisions) // 2]

    async def go() -> None:
        async with connect(server.address, tls=False) as client:
            forked = await client.fork(created.game_id, at, seat=1)
            assert forked.state.fork is not None and forked.state.fork.parent_seq == at
            mine = await forked.seat_state(1)
            assert mine.fork is not None and mine.seq == 1
            parent = client.match(created.game_id, None, auditor=True)
            again = await parent.fork(at, auditor=True)
            assert again.state.fork is not None and again.state.fork.forked_as.HasField("auditor")
            # A fork is an analysis board: its seat values its own positions while it runs.
            awaited = forked.state.to_act[0]
            valued = await client.move_values(
                forked.game_id, 1, seat=awaited, rollouts=4, token=forked.tokens[awaited]
            )
            assert valued.moves and all(m.value.samples for m in valued.moves)
            from tablier_client.values import MatchNotOver

            running = await client.create("carre", 2)
            with pytest.raises(MatchNotOver):
                await client.move_values(running.game_id, 1, seat=0, rollouts=4, token=running.tokens[0])
            listed = await client.forks(created.game_id)
            assert {g.game_id for g in listed} >= {forked.game_id, again.game_id}
            with pytest.raises(ValueError):
                await client.fork(created.game_id, at)

    asyncio.run(asyncio.wait_for(go(), 60))


def test_tablier_play_plays_on_from_a_replayed_step(server, finished):
    import asyncio

    from textual.widgets import Static

    from tablier_client.play.app import MatchScreen, PlayApp, ReplayScreen, Start

    created, _, decisions = finished["rat_a_tat_cat"]

    async def until(pilot, condition, what: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while not condition():
            assert loop.time() < deadline, f"timed out waiting for {what}"
            await pilot.pause(0.02)

    async def go() -> None:
        # `tablier play --fork GAME_ID --at SEQ`.
        app = PlayApp(server.address, tls=False, start=Start(fork=created.game_id, at=decisions[2]))
        async with app.run_test(size=(170, 50)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, MatchScreen) and app.screen.state is not None, "fork")
            screen = app.screen
            assert screen.state.fork is not None and screen.state.fork.parent_seq == decisions[2]
            assert "never rated" in str(screen.note)
        # The replay's "Play on from here" (f) on the step shown.
        app = PlayApp(server.address, tls=False, start=Start(replay=created.game_id))
        async with app.run_test(size=(170, 50)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown_seq, "the replay")
            replay = app.screen
            for _ in range(3):
                await pilot.press("right")
            await until(pilot, lambda: replay.shown_seq >= 3, "a later step")
            shown = replay.shown_seq
            await pilot.press("f")
            await until(
                pilot,
                lambda: isinstance(app.screen, MatchScreen)
                or "refused" in str(replay.query_one("#message", Static).render()).lower()
                or bool(str(replay.query_one("#message", Static).render())),
                "the fork's match screen",
            )
            if isinstance(app.screen, MatchScreen):
                await until(pilot, lambda: app.screen.state is not None, "the fork's state")
                assert app.screen.state.fork.parent_seq == shown
            else:
                # A step inside one move's events cannot be played on: said in words.
                assert "move is awaited" in str(replay.query_one("#message", Static).render())

    asyncio.run(asyncio.wait_for(go(), 90))


def test_verify_public_checks_a_fork_against_its_parents_log(server, stub, finished, tmp_path):
    from tablier.public_verify import read_log, write_log

    created, _, decisions = finished["democratie"]
    forked = fork(stub, created.game_id, decisions[len(decisions) // 2], as_seat(1))
    play_to_end(stub, forked)
    logs = {}
    for name, gid in (("parent", created.game_id), ("fork", forked.game_id)):
        logs[name] = tmp_path / f"{name}.json"
        done = tablier("export", gid, "--server", server.address, "--auditor", "-o", str(logs[name]))
        assert done.returncode == 0, done.stdout + done.stderr
    ok = tablier("verify-public", str(logs["fork"]), "--parent", str(logs["parent"]))
    assert ok.returncode == 0 and "lineage checked" in ok.stdout, ok.stdout + ok.stderr
    alone = tablier("verify-public", str(logs["fork"]))
    assert alone.returncode == 0 and "lineage not checked" in alone.stdout, alone.stdout
    # A parent log whose event at the fork's seq is another: the fork's lineage fails.
    parent = read_log(logs["parent"])
    at = forked.state.fork.parent_seq
    parent.events[at - 1].chain_hash = b"\x02" * 32
    write_log(tmp_path / "changed.json", parent)
    bad = tablier("verify-public", str(logs["fork"]), "--parent", str(tmp_path / "changed.json"))
    assert bad.returncode == 1 and "lineage" in bad.stdout, bad.stdout


def test_a_fork_with_a_bot_seat_is_played_to_its_end(stub, finished):
    import time

    created, _, decisions = finished["rat_a_tat_cat"]
    at = decisions[len(decisions) // 3]
    seats = [pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR), pb.SeatAssignment(kind=pb.SEAT_KIND_BOT)]
    forked = fork(stub, created.game_id, at, AUDITOR, seat_assignments=seats)
    assert forked.seat_tokens[1] == "" and forked.state.seats[1].status == pb.SEAT_STATUS_BOT
    mine = seat(forked.seat_tokens[0])
    deadline = time.monotonic() + 120
    state = forked.state
    while not state.over:
        assert time.monotonic() < deadline, "the fork did not end"
        if 0 in state.to_act:
            suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=forked.game_id), metadata=mine)
            state = stub.PlayMove(
                pb.PlayMoveRequest(
                    game_id=forked.game_id,
                    command_id=str(uuid.uuid4()),
                    action=suggestion.action,
                    expected_seq=suggestion.seq,
                ),
                metadata=mine,
            ).state
        else:
            # The server's bot answers: its move arrives on the match's watch.
            watch = stub.WatchGame(pb.WatchGameRequest(game_id=forked.game_id, after_seq=state.seq), timeout=30)
            state = next(iter(watch)).state
            watch.cancel()
    assert state.HasField("fork")


def test_a_signed_in_player_forks_its_seat_with_its_credential_and_holds_the_forks_seat(stub, channel):
    players = prpc.PlayerServiceStub(channel)
    alice = players.CreateGuestPlayer(ppb.CreateGuestPlayerRequest(display_name="Alice"))
    carol = players.CreateGuestPlayer(ppb.CreateGuestPlayerRequest(display_name="Carol"))
    created = stub.CreateGame(
        pb.CreateGameRequest(
            game_type="qwirkle",
            seat_assignments=[pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR), pb.SeatAssignment(kind=pb.SEAT_KIND_BOT)],
        ),
        metadata=seat(alice.credential),
    )
    at = created.state.seq
    # While the parent runs, the player bound to seat 0 forks from it with its credential alone.
    forked = fork(stub, created.game_id, at, as_seat(0), metadata=seat(alice.credential))
    assert forked.state.fork.parent_game_id == created.game_id
    bound = forked.state.seats[0].player
    assert (bound.player_id, bound.display_name) == (alice.player.player_id, "Alice")
    assert not forked.state.seats[1].HasField("player")
    mine = stub.ListGames(pb.ListGamesRequest(mine=True), metadata=seat(alice.credential)).games
    assert forked.game_id in [g.game_id for g in mine]
    view = stub.GetView(pb.GetViewRequest(game_id=forked.game_id), metadata=seat(alice.credential)).state
    assert (view.role, view.seat) == (pb.ROLE_SEAT, 0)
    # Another player holds no seat of the running parent: refused in words.
    code, reason, _ = expect_error(
        stub.ForkGame,
        pb.ForkGameRequest(parent_game_id=created.game_id, at_seq=at, forked_as=as_seat(0)),
        metadata=seat(carol.credential),
    )
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "FORK_NOT_VISIBLE")


def test_the_host_forks_a_running_match_from_the_auditors_state_only_when_it_is_not_ranked(serving):
    """The host token alone (not the auditor's, not the operator's, which is both): a running
    ranked match refuses it the auditor's fork, in words; a running unranked one grants it."""
    host = "e2e-host-" + uuid.uuid4().hex
    srv, stub = serving(env={"TABLIER_HOST_TOKEN": host})
    with grpc.insecure_channel(srv.address) as ch:
        players = prpc.PlayerServiceStub(ch)
        made = {}
        for ranked in (True, False):
            who = players.CreateGuestPlayer(ppb.CreateGuestPlayerRequest(display_name=f"Host test {ranked}"))
            made[ranked] = stub.CreateGame(
                pb.CreateGameRequest(
                    game_type="carre",
                    seats=2,
                    ranked=ranked,
                    seat_assignments=[
                        pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR),
                        pb.SeatAssignment(kind=pb.SEAT_KIND_BOT),
                    ],
                ),
                metadata=seat(who.credential),
            )
            assert made[ranked].state.ranked is ranked and not made[ranked].state.over
    as_host = seat(host)
    ranked = made[True]
    code, reason, message = expect_error(fork, stub, ranked.game_id, ranked.state.seq, AUDITOR, metadata=as_host)
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "FORK_NOT_VISIBLE")
    assert "not ranked" in message and "hidden card" in message
    assert not stub.ListGames(pb.ListGamesRequest(parent_game_id=ranked.game_id)).games  # nothing made
    # Still running (the refusal is not because it ended), and the host is no seat of it.
    assert not stub.GetView(pb.GetViewRequest(game_id=ranked.game_id), metadata=as_host).state.over
    unranked = made[False]
    forked = fork(stub, unranked.game_id, unranked.state.seq, AUDITOR, metadata=as_host)
    assert forked.state.fork.parent_game_id == unranked.game_id and forked.state.fork.forked_as == AUDITOR
    assert not forked.state.ranked
