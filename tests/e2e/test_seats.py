"""Seats you join and seats the server plays, end to end: real `tablier serve` processes on
loopback, a real PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
import time
import uuid

import grpc
import psycopg
import pytest

from tablier import _core
from tablier.app import Credential, GameApp
from tablier.cli import DEFAULT_DATA_DIR
from tablier.seeds import SeedKeys
from tablier.store.postgres import open_store
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import START_TIMEOUT, start_server, tablier_cmd
from .helpers import INFO, error_of, expect_error, seat

WAIT = 60.0  # seconds: the deadline of any single wait below
CREATOR = pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR)
OPEN = pb.SeatAssignment(kind=pb.SEAT_KIND_OPEN)
INVITE = pb.SeatAssignment(kind=pb.SEAT_KIND_INVITE)


def bot(name: str = "") -> pb.SeatAssignment:
    return pb.SeatAssignment(kind=pb.SEAT_KIND_BOT, bot=name)


def create(stub, game: str, *assignments: pb.SeatAssignment) -> pb.CreateGameResponse:
    return stub.CreateGame(pb.CreateGameRequest(game_type=game, seat_assignments=assignments))


def view(stub, game_id: str, token: str | None = None) -> pb.GameState:
    return stub.GetView(pb.GetViewRequest(game_id=game_id), metadata=seat(token) if token else ()).state


def wait_for(stub, game_id: str, condition, what: str) -> pb.GameState:
    """Polls the public view until `condition(state)` holds."""
    deadline = time.monotonic() + WAIT
    while True:
        state = view(stub, game_id)
        if condition(state):
            return state
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; at seq {state.seq}, awaiting {list(state.to_act)}")
        time.sleep(0.02)


def play_suggested(stub, game_id: str, token: str) -> pb.PlayMoveResponse | None:
    """The seat of `token` plays the core's suggestion; None when a bot moved first (the
    suggestion was for an older seq)."""
    md = seat(token)
    suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=game_id), metadata=md)
    try:
        return stub.PlayMove(pb.PlayMoveRequest(game_id=game_id, command_id=str(uuid.uuid4()),
                                                action=suggestion.action, expected_seq=suggestion.seq), metadata=md)
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.ABORTED, exc
        return None


def bot_commands(database_url: str, game_id: str) -> list[tuple[str, int]]:
    """(command id, seat) of each move the server played for a bot seat, in seq order."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT command_id, seat FROM commands WHERE game_id = %s AND command_id LIKE 'bot:%%'"
                            " ORDER BY first_seq", (game_id,)).fetchall()
    return [(cid, s) for cid, s in rows]


def play_human_to_the_end(stub, game_id: str, token: str, human: int, max_moves: int = 3000) -> pb.GameState:
    """Seat `human` plays whenever it is awaited; everyone else is the server's bots."""
    for _ in range(max_moves):
        state = wait_for(stub, game_id, lambda s: s.over or human in s.to_act, f"seat {human}'s turn")
        if state.over:
            return state
        play_suggested(stub, game_id, token)
    raise AssertionError(f"not over after {max_moves} moves")


def test_open_and_invited_seats_are_joined_and_played_with_their_own_tokens(stub, second_server):
    created = create(stub, "qwirkle", CREATOR, OPEN, INVITE)
    gid = created.game_id
    assert created.seat_tokens[0] and created.seat_tokens[1:] == ["", ""]
    assert list(created.invite_codes) == ["", "", created.invite_codes[2]] and created.invite_codes[2]
    public = view(stub, gid)
    assert [s.status for s in public.seats] == [pb.SEAT_STATUS_TAKEN, pb.SEAT_STATUS_OPEN, pb.SEAT_STATUS_INVITED]
    assert public.seq > 0, "the match starts at once"

    # The invited seat is joined through another server with only the code; the open seat here.
    with grpc.insecure_channel(second_server.address) as ch:
        other = rpc.GameServiceStub(ch)
        invited = other.JoinGame(pb.JoinGameRequest(invite_code=created.invite_codes[2]))
        assert invited.seat == 2 and invited.state.role == pb.ROLE_SEAT and invited.state.seat == 2
        code, reason, _ = expect_error(other.JoinGame, pb.JoinGameRequest(invite_code=created.invite_codes[2]))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_TAKEN")
    code, reason, _ = expect_error(stub.JoinGame, pb.JoinGameRequest(game_id=gid, seat=2))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_NOT_OPEN")
    code, reason, _ = expect_error(stub.JoinGame, pb.JoinGameRequest(game_id=gid, invite_code=gid + ".nope"))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "BAD_INVITE_CODE")
    joined = stub.JoinGame(pb.JoinGameRequest(game_id=gid))
    assert joined.seat == 1
    tokens = [created.seat_tokens[0], joined.seat_token, invited.seat_token]
    assert len(set(tokens)) == 3
    code, reason, _ = expect_error(stub.JoinGame, pb.JoinGameRequest(game_id=gid))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NO_OPEN_SEAT")
    assert [s.status for s in view(stub, gid).seats] == [pb.SEAT_STATUS_TAKEN] * 3
    # Each token is its own seat's, on either server; an invite code is no credential.
    for s, token in enumerate(tokens):
        assert view(stub, gid, token).seat == s
    with grpc.insecure_channel(second_server.address) as ch:
        assert rpc.GameServiceStub(ch).GetView(pb.GetViewRequest(game_id=gid), metadata=seat(joined.seat_token)).state.seat == 1
    code, _, _ = expect_error(stub.GetView, pb.GetViewRequest(game_id=gid), metadata=seat(created.invite_codes[2]))
    assert code == grpc.StatusCode.UNAUTHENTICATED

    # A few rounds: whoever is awaited plays with its own token; nobody else can play its move,
    # the creator included.
    for _ in range(6):
        state = view(stub, gid)
        awaited = state.to_act[0]
        suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=seat(tokens[awaited]))
        for s, token in enumerate(tokens):
            if s != awaited:
                code, reason, _ = expect_error(stub.PlayMove, pb.PlayMoveRequest(
                    game_id=gid, command_id=str(uuid.uuid4()), action=suggestion.action), metadata=seat(token))
                assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
        assert view(stub, gid).seq == state.seq
        played = stub.PlayMove(pb.PlayMoveRequest(game_id=gid, command_id=str(uuid.uuid4()), action=suggestion.action,
                                                  expected_seq=suggestion.seq), metadata=seat(tokens[awaited]))
        assert played.events[0].seat == awaited


def test_two_joins_of_one_seat_at_once_give_one_winner(stub, second_server):
    created = create(stub, "grid_knock", CREATOR, OPEN, OPEN)
    gid = created.game_id
    with grpc.insecure_channel(second_server.address) as ch:
        stubs = [stub, rpc.GameServiceStub(ch)]
        view(stubs[1], gid)  # the second server has seen the seats open
        racers = 8
        start = threading.Barrier(racers)
        results: list[object] = [None] * racers

        def join(i: int) -> None:
            start.wait(WAIT)
            try:
                results[i] = stubs[i % 2].JoinGame(pb.JoinGameRequest(game_id=gid, seat=2))
            except grpc.RpcError as exc:
                results[i] = error_of(exc)

        threads = [threading.Thread(target=join, args=(i,)) for i in range(racers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
    won = [r for r in results if isinstance(r, pb.JoinGameResponse)]
    lost = [r for r in results if isinstance(r, tuple)]
    assert len(won) == 1 and len(lost) == racers - 1, results
    assert all(code == grpc.StatusCode.FAILED_PRECONDITION and reason == "SEAT_TAKEN" for code, reason, _ in lost)
    assert won[0].seat == 2 and view(stub, gid, won[0].seat_token).seat == 2
    assert [s.status for s in view(stub, gid).seats] == [pb.SEAT_STATUS_TAKEN, pb.SEAT_STATUS_OPEN, pb.SEAT_STATUS_TAKEN]


@pytest.mark.parametrize("game", ["democratie", "grid_knock"])
def test_a_match_with_bot_seats_plays_to_the_end(stub, e2e_database_url, game):
    info = INFO[game]
    # The bots sit first: the server moves before the creator ever does.
    created = create(stub, game, bot(info.bots[0]), bot(), CREATOR)
    gid, token = created.game_id, created.seat_tokens[2]
    assert created.seat_tokens[:2] == ["", ""]
    assert [(s.status, s.bot) for s in created.state.seats] == [
        (pb.SEAT_STATUS_BOT, info.bots[0]), (pb.SEAT_STATUS_BOT, info.bots[-1]), (pb.SEAT_STATUS_TAKEN, "")]
    final = play_human_to_the_end(stub, gid, token, human=2)
    assert final.over and len(final.outcome.scores) == 3
    moved = bot_commands(e2e_database_url, gid)
    assert {s for _, s in moved} == {0, 1}
    assert all(cid.startswith(f"bot:{s}:") for cid, s in moved)
    # Nobody holds a bot seat's token: a client cannot take one or act for it.
    code, reason, _ = expect_error(stub.JoinGame, pb.JoinGameRequest(game_id=gid, seat=0))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_NOT_OPEN")


def test_bot_moves_are_the_servers_own_command_ids(stub):
    created = create(stub, "carre", CREATOR, bot())
    code, reason, _ = expect_error(stub.PlayMove, pb.PlayMoveRequest(
        game_id=created.game_id, command_id="bot:1:1", action=view(stub, created.game_id).view),
        metadata=seat(created.seat_tokens[0]))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_COMMAND_ID")


async def move_and_stop(database_url: str, game_id: str, token: str) -> list[int]:
    """Plays the seat of `token` as a server would that stops right after the append, before
    its bot player starts (the shutdown cancels it); returns the seats awaited then."""
    # The servers' seed key: they run here with the default data dir.
    keys = SeedKeys.from_env(os.environ.get("TABLIER_DATA_DIR", DEFAULT_DATA_DIR))
    store = await open_store(database_url, seed_keys=keys)
    app = GameApp(store)
    try:
        action, seq = await app.suggest(game_id, Credential(token))
        await app.play(game_id, Credential(token), f"stopping-{seq}", action, expected_seq=seq)
    finally:
        await app.close()
        events = await store.load_events(game_id)
        game = await store.get_game(game_id)
        await store.close()
    match = _core.Match(game.game_type, game.seats, dict(game.options))
    match.apply_all([e.payload for e in events])
    return match.to_act()


def test_a_server_restart_in_the_middle_still_moves_the_bot(e2e_database_url, tmp_path):
    first = start_server(e2e_database_url, tmp_path, "seats-1")
    try:
        with grpc.insecure_channel(first.address) as ch:
            grpc.channel_ready_future(ch).result(timeout=START_TIMEOUT)
            stub = rpc.GameServiceStub(ch)
            created = create(stub, "carre", CREATOR, bot("random"))
            gid, token = created.game_id, created.seat_tokens[0]
            for _ in range(3):  # a few moves each, the bot's by this server
                wait_for(stub, gid, lambda s: 0 in s.to_act, "seat 0's turn")
                play_suggested(stub, gid, token)
            wait_for(stub, gid, lambda s: 0 in s.to_act, "seat 0's turn")
            before = len(bot_commands(e2e_database_url, gid))
            assert before >= 2
    finally:
        assert first.stop() == 0, first.log.read_text()

    # A server that appends seat 0's move and stops before it moves the bot.
    assert 1 in asyncio.run(move_and_stop(e2e_database_url, gid, token)), \
        "the bot must be awaited for this test to mean anything"

    second = start_server(e2e_database_url, tmp_path, "seats-2")
    try:
        with grpc.insecure_channel(second.address) as ch:
            grpc.channel_ready_future(ch).result(timeout=START_TIMEOUT)
            stub = rpc.GameServiceStub(ch)
            # Anyone looking at the match (here a spectator) lets the new server find the bot awaited.
            wait_for(stub, gid, lambda s: 1 not in s.to_act or s.over, "the bot's move after the restart")
            assert len(bot_commands(e2e_database_url, gid)) == before + 1
            final = play_human_to_the_end(stub, gid, token, human=0)
            assert final.over
    finally:
        assert second.stop() == 0, second.log.read_text()
    done = subprocess.run(tablier_cmd("verify", gid, "--database-url", e2e_database_url), capture_output=True,
                          text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr


async def test_the_sdk_creates_joins_and_plays_against_a_server_bot(server):
    from tablier_client import Refused, bot_seat, connect, creator_seat, games, invited_seat, open_seat

    async with connect(server.address) as client:
        created = await client.create(games.QWIRKLE, 0,
                                      assignments=[creator_seat(), invited_seat(), bot_seat(), open_seat()])
        assert [bool(t) for t in created.tokens] == [True, False, False, False]
        assert [bool(c) for c in created.invite_codes] == [False, True, False, False]
        assert [s.status for s in created.state.seats] == [
            pb.SEAT_STATUS_TAKEN, pb.SEAT_STATUS_INVITED, pb.SEAT_STATUS_BOT, pb.SEAT_STATUS_OPEN]
        joined = await client.join(invite_code=created.invite_codes[1])
        assert joined.seat == 1 and joined.match.kind is games.QWIRKLE and joined.state.seat == 1
        with pytest.raises(Refused) as err:
            await client.join(invite_code=created.invite_codes[1])
        assert err.value.reason == "SEAT_TAKEN"
        # A join repeated with its key (as after a lost response) gets the same seat and token.
        key = "e2e-join-key-" + uuid.uuid4().hex
        repeated = [await client.join(created.game_id, games.QWIRKLE, join_key=key) for _ in range(2)]
        assert repeated[0].seat == repeated[1].seat == 3 and repeated[0].token == repeated[1].token
        assert (repeated[0].replayed, repeated[1].replayed) == (False, True)
        seats = {0: created.seats[0], 1: joined.match, 3: repeated[0].match}
        for _ in range(12):  # both people move in turn; the server moves seat 2 between
            state = await created.seats[0].state()
            deadline = time.monotonic() + WAIT
            while not (state.over or set(state.to_act) & {0, 1, 3}):
                assert time.monotonic() < deadline, "the server's bot did not move"
                await asyncio.sleep(0.02)
                state = await created.seats[0].state()
            if state.over:
                break
            me = seats[state.to_act[0]]
            suggestion = await me.suggest()
            played = await me.play(suggestion.action, expected_seq=suggestion.seq)
            assert played.events[0].seat == state.to_act[0]
        assert any(e.seat == 2 for e in await created.seats[0].events())


def test_a_server_watching_the_match_moves_the_bot_if_the_appending_server_stopped(e2e_database_url, second_server):
    with grpc.insecure_channel(second_server.address) as ch:
        stub = rpc.GameServiceStub(ch)
        created = create(stub, "carre", CREATOR, bot("random"))
        gid, token = created.game_id, created.seat_tokens[0]
        start = wait_for(stub, gid, lambda s: 0 in s.to_act, "seat 0's turn")
        seen: list[pb.WatchGameResponse] = []
        watch = stub.WatchGame(pb.WatchGameRequest(game_id=gid, after_seq=start.seq), timeout=WAIT)

        def read() -> None:
            with contextlib.suppress(grpc.RpcError):  # cancelled at the end
                for response in watch:
                    seen.append(response)

        reader = threading.Thread(target=read)
        reader.start()
        try:
            # Another server appends seat 0's move and stops before its bot player runs. From
            # here on nothing asks this server about the match: only its watcher sees it.
            assert 1 in asyncio.run(move_and_stop(e2e_database_url, gid, token)), "the bot must be awaited"
            deadline = time.monotonic() + WAIT
            while not any(r.event.seat == 1 for r in seen):
                assert time.monotonic() < deadline, f"the bot did not move; the watcher saw {len(seen)} events"
                time.sleep(0.05)
        finally:
            watch.cancel()
            reader.join(WAIT)
    assert [s for _, s in bot_commands(e2e_database_url, gid)][-1] == 1


def test_a_watch_opened_before_the_joins_sends_the_seats_as_they_are_now(stub, second_server):
    created = create(stub, "qwirkle", CREATOR, OPEN, INVITE)
    gid = created.game_id
    start = view(stub, gid)
    assert [s.status for s in start.seats] == [pb.SEAT_STATUS_TAKEN, pb.SEAT_STATUS_OPEN, pb.SEAT_STATUS_INVITED]
    seen: list[pb.WatchGameResponse] = []
    arrived = threading.Condition()
    # From one event back: the first response (that event) shows the watch is open, its feed
    # following the match, before anyone joins.
    watch = stub.WatchGame(pb.WatchGameRequest(game_id=gid, after_seq=start.seq - 1), timeout=WAIT)

    def read() -> None:
        with contextlib.suppress(grpc.RpcError):  # cancelled at the end
            for response in watch:
                with arrived:
                    seen.append(response)
                    arrived.notify_all()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        with arrived:
            assert arrived.wait_for(lambda: seen, WAIT), "the watch sent nothing"
            assert [s.status for s in seen[0].state.seats] == [s.status for s in start.seats]
        # One seat joined through another server, the other through this one; then a move.
        tokens = [created.seat_tokens[0], "", ""]
        with grpc.insecure_channel(second_server.address) as ch:
            other = rpc.GameServiceStub(ch)
            tokens[2] = other.JoinGame(pb.JoinGameRequest(invite_code=created.invite_codes[2])).seat_token
        tokens[1] = stub.JoinGame(pb.JoinGameRequest(game_id=gid)).seat_token
        now = view(stub, gid)
        assert [s.status for s in now.seats] == [pb.SEAT_STATUS_TAKEN] * 3
        assert play_suggested(stub, gid, tokens[now.to_act[0]]) is not None
        with arrived:
            assert arrived.wait_for(lambda: len(seen) > 1, WAIT), "the watcher saw no move after the joins"
            update = seen[1].state
        assert update.seq == now.seq + 1
        assert [s.status for s in update.seats] == [pb.SEAT_STATUS_TAKEN] * 3, "the watch sent stale seats"
    finally:
        watch.cancel()
        reader.join(WAIT)
