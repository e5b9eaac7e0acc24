"""GameService end to end: a real `tablier serve` on loopback, a real PostgreSQL."""

from __future__ import annotations

import uuid

import grpc
import pytest
from google.protobuf import any_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)
from tablier_client.bots import play_match

from tablier import _core
from tablier.v1 import common_pb2, grid_knock_pb2
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import GAME_IDS, GAME_TYPES
from .helpers import (
    INFO,
    OPERATOR,
    bot_move,
    create,
    error_of,
    expect_error,
    last_seq,
    raw_events,
    replay_locally,
    seat,
)

SEED = bytes(range(32))
WAIT = 20.0  # seconds: the deadline of any single wait below


def test_list_game_types(stub):
    got = stub.ListGameTypes(pb.ListGameTypesRequest()).game_types
    assert [t.SerializeToString() for t in got] == [t.SerializeToString() for t in GAME_TYPES]
    assert GAME_IDS, "no game is registered"
    # Every option says what it takes: an integer's bounds, a choice's values, a text's length.
    for option in (o for t in got for o in t.options):
        assert option.kind != common_pb2.OPTION_KIND_UNSPECIFIED, option.name
        if option.kind == common_pb2.OPTION_KIND_INTEGER:
            assert option.min_value <= int(option.default_value) <= option.max_value, option.name
        assert bool(option.allowed_values) == (option.kind == common_pb2.OPTION_KIND_CHOICE), option.name


@pytest.mark.parametrize("game", GAME_IDS)
@pytest.mark.parametrize("size", ["min", "max"])
async def test_bot_match_plays_to_the_end(server, game, size):
    info = INFO[game]
    seats = info.min_players if size == "min" else info.max_players
    result = await play_match(server.address, game, seats)
    assert result.over, result
    assert len(result.scores) == seats
    assert set(result.winners) <= set(range(seats))
    assert result.retries == 0


@pytest.mark.parametrize("game", GAME_IDS)
def test_views_and_events_come_from_the_core_per_viewer(stub, game):
    created = create(stub, game, seats=INFO[game].max_players, seed=SEED)
    state = created.state
    for _ in range(6):
        if state.over:
            break
        state = bot_move(stub, created).state
    match = replay_locally(stub, created)
    seq = last_seq(stub, created.game_id)
    spectator = stub.GetView(pb.GetViewRequest(game_id=created.game_id)).state
    assert spectator.role == pb.ROLE_SPECTATOR and spectator.seq == seq
    assert spectator.view.value == match.view()
    assert spectator.view.type_url == f"type.googleapis.com/{INFO[game].view_type}"
    assert list(spectator.to_act) == match.to_act()
    auditor = stub.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=OPERATOR).state
    assert auditor.role == pb.ROLE_AUDITOR and auditor.view.value == match.view(auditor=True)
    raw = raw_events(stub, created.game_id).events
    assert [e.seq for e in raw] == list(range(1, seq + 1))
    for s, token in enumerate(created.seat_tokens):
        mine = stub.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(token)).state
        assert mine.role == pb.ROLE_SEAT and mine.seat == s
        assert mine.view.value == match.view(s)
        events = stub.ListEvents(pb.ListEventsRequest(game_id=created.game_id), metadata=seat(token)).events
        expected = [(e.seq, match.redact(e.payload.value, seat=s)) for e in raw]
        assert [(e.seq, e.payload.value) for e in events] == [(q, p) for q, p in expected if p is not None]
    public = stub.ListEvents(pb.ListEventsRequest(game_id=created.game_id)).events
    expected = [(e.seq, match.redact(e.payload.value)) for e in raw]
    assert [(e.seq, e.payload.value) for e in public] == [(q, p) for q, p in expected if p is not None]


@pytest.mark.parametrize("game", GAME_IDS)
def test_get_view_at_a_past_seq(stub, game):
    created = create(stub, game)
    first = created.state.seq
    bot_move(stub, created)
    bot_move(stub, created)
    for at in range(1, last_seq(stub, created.game_id) + 1):
        past = stub.GetView(pb.GetViewRequest(game_id=created.game_id, at_seq=at), metadata=OPERATOR).state
        assert past.seq == at
        assert past.view.value == replay_locally(stub, created, upto=at).view(auditor=True)
    spectator = stub.GetView(pb.GetViewRequest(game_id=created.game_id, at_seq=first)).state
    assert spectator.view.value == created.state.view.value
    code, reason, _ = expect_error(stub.GetView, pb.GetViewRequest(game_id=created.game_id, at_seq=2**64 - 1))
    assert (code, reason) == (grpc.StatusCode.OUT_OF_RANGE, "SEQ_OUT_OF_RANGE")


def test_list_events_pages_and_bounds(stub):
    created = create(stub, GAME_IDS[0])
    bot_move(stub, created)
    gid = created.game_id
    everything = raw_events(stub, gid)
    pages, after = [], 0
    while after < everything.last_seq:
        page = stub.ListEvents(pb.ListEventsRequest(game_id=gid, after_seq=after, limit=1), metadata=OPERATOR)
        assert len(page.events) == 1 and page.last_seq == everything.last_seq
        pages += page.events
        after = page.events[-1].seq
    assert pages == list(everything.events)
    beyond = stub.ListEvents(pb.ListEventsRequest(game_id=gid, after_seq=2**64 - 1, limit=2**32 - 1))
    assert not beyond.events and beyond.last_seq == everything.last_seq


def _not_awaited(state: pb.GameState) -> int | None:
    others = [s for s in range(state.seat_count) if s not in state.to_act]
    return others[0] if others else None


@pytest.mark.parametrize("game", GAME_IDS)
def test_bad_commands_are_refused_and_write_nothing(stub, game):
    info = INFO[game]
    created = create(stub, game)
    other = create(stub, game)
    gid = created.game_id
    state = created.state
    actor = state.to_act[0]
    md = seat(created.seat_tokens[actor])
    legal = stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=gid), metadata=md)
    assert legal.moves and legal.seq == state.seq
    good = legal.moves[0]
    before = last_seq(stub, gid)

    def play(action, metadata=md, game_id=gid, command_id=None, **kw):
        return stub.PlayMove(pb.PlayMoveRequest(game_id=game_id, command_id=command_id or str(uuid.uuid4()),
                                                action=action, **kw), metadata=metadata)

    cases = {
        "malformed action bytes": (
            lambda: play(any_pb2.Any(type_url=good.type_url, value=b"\xff\xff\xff")),
            grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_INPUT"),
        "wrong Any type": (
            lambda: play(any_pb2.Any(type_url=f"type.googleapis.com/{info.view_type}", value=good.value)),
            grpc.StatusCode.INVALID_ARGUMENT, "WRONG_PAYLOAD_TYPE"),
        "missing action": (
            lambda: stub.PlayMove(pb.PlayMoveRequest(game_id=gid, command_id="x"), metadata=md),
            grpc.StatusCode.INVALID_ARGUMENT, "MISSING_FIELD"),
        "missing command id": (
            lambda: stub.PlayMove(pb.PlayMoveRequest(game_id=gid, action=good), metadata=md),
            grpc.StatusCode.INVALID_ARGUMENT, "MISSING_FIELD"),
        "wrong token": (lambda: play(good, metadata=seat("not-a-token")),
                        grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN"),
        "not a bearer credential": (lambda: play(good, metadata=(("authorization", "Basic abc"),)),
                                    grpc.StatusCode.UNAUTHENTICATED, "BAD_AUTHORIZATION"),
        "missing token": (lambda: play(good, metadata=()), grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN"),
        "token of another match": (lambda: play(good, metadata=seat(other.seat_tokens[0])),
                                   grpc.StatusCode.PERMISSION_DENIED, "WRONG_MATCH"),
        "the auditor holds no seat": (lambda: play(good, metadata=OPERATOR),
                                      grpc.StatusCode.PERMISSION_DENIED, "NOT_A_SEAT"),
        "unknown match": (lambda: play(good, game_id=str(uuid.uuid4())), grpc.StatusCode.NOT_FOUND, "UNKNOWN_MATCH"),
        "bad uuid": (lambda: play(good, game_id="not-a-uuid"), grpc.StatusCode.INVALID_ARGUMENT, "BAD_GAME_ID"),
        "stale expected_seq (lost race)": (lambda: play(good, expected_seq=before - 1),
                                           grpc.StatusCode.ABORTED, "SEQ_MISMATCH"),
        "a seq from the future": (lambda: play(good, expected_seq=before + 1),
                                  grpc.StatusCode.ABORTED, "SEQ_MISMATCH"),
        "a NUL in the command id": (lambda: play(good, command_id="a\x00b"),
                                    grpc.StatusCode.INVALID_ARGUMENT, "BAD_COMMAND_ID"),
        "a server command id": (lambda: play(good, command_id="timer:close_knock_window:4294967296"),
                                grpc.StatusCode.INVALID_ARGUMENT, "BAD_COMMAND_ID"),
    }
    idle = _not_awaited(state)
    if idle is not None:
        cases["out of turn"] = (lambda: play(good, metadata=seat(created.seat_tokens[idle])),
                                grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    for name, (call, code, reason) in cases.items():
        try:
            call()
        except grpc.RpcError as exc:
            got = error_of(exc)[:2]
        else:
            raise AssertionError(f"{name}: the call succeeded")
        assert got == (code, reason), name
        assert last_seq(stub, gid) == before, f"{name} wrote an event"
    # The server keeps serving after the core raised, and the match still takes a good move.
    assert stub.ListGameTypes(pb.ListGameTypesRequest()).game_types
    assert play(good).state.seq > before


def test_undecodable_requests_are_invalid_arguments(server):
    """Bytes that are not the method's request message never reach a handler."""
    with grpc.insecure_channel(server.address) as channel:
        for method in ("GetView", "PlayMove", "CreateGame", "WatchGame"):
            for body in (b"\x0a\x02\xff\xfe", b"\xff\xff\xff\xff"):
                raw = channel.unary_stream if method == "WatchGame" else channel.unary_unary
                call = raw(f"/tablier.v1.GameService/{method}")
                try:
                    result = call(body, timeout=WAIT)
                    if method == "WatchGame":
                        list(result)
                except grpc.RpcError as exc:
                    code, reason, message = error_of(exc)
                else:
                    raise AssertionError(f"{method} took {body!r}")
                assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNDECODABLE_REQUEST"), method
                assert "class" not in message


def test_long_client_strings_are_cut_in_error_messages(stub):
    """An echoed option value or bot name cannot push the status past the metadata limit."""
    code, reason, message = expect_error(stub.CreateGame, pb.CreateGameRequest(
        game_type="qwirkle", seats=2, options={"x" * 20_000: "y" * 20_000}))
    # Refused for its length before the core reads it (test_limits.py); the message is cut.
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "OPTION_TOO_LONG")
    assert len(message) <= 1001
    code, reason, message = expect_error(stub.CreateGame, pb.CreateGameRequest(
        game_type="qwirkle", seats=2, options={"x" * 64: "y" * 64}))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTION")
    assert message.startswith("There is no option") and len(message) <= 1001


def test_host_commands_check_the_credential_before_the_match(stub):
    """Whether a match exists is not for an anonymous caller to probe."""
    for game_id in (str(uuid.uuid4()), create(stub, "grid_knock", seats=3).game_id):
        code, reason, _ = expect_error(stub.HostCommand, pb.HostCommandRequest(
            game_id=game_id, command_id="h", command="close_knock_window"))
        assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN")


def test_out_of_turn_is_refused_in_every_game_with_idle_seats(stub):
    """At least one registered game has a seat that is not awaited at the start (so the
    out-of-turn case above is exercised somewhere)."""
    idle = [g for g in GAME_IDS if _not_awaited(create(stub, g).state) is not None]
    assert idle


@pytest.mark.parametrize("game", GAME_IDS)
def test_illegal_move_is_a_failed_precondition_from_the_core(stub, game):
    """A move that was legal earlier but is not now (found by playing with bots) is refused
    with the core's reason, and nothing is written."""
    created = create(stub, game, seed=SEED)
    gid = created.game_id
    seen: dict[bytes, any_pb2.Any] = {}
    state = created.state
    tried = 0
    while not state.over and tried < 3:
        s = state.to_act[0]
        md = seat(created.seat_tokens[s])
        legal = stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=gid), metadata=md)
        now = {m.value for m in legal.moves}
        stale = [a for v, a in seen.items() if v not in now]
        for action in stale[:2]:
            before = last_seq(stub, gid)
            code, reason, message = expect_error(
                stub.PlayMove,
                pb.PlayMoveRequest(game_id=gid, command_id=str(uuid.uuid4()), action=action), metadata=md)
            assert code == grpc.StatusCode.FAILED_PRECONDITION, (code, reason, message)
            assert reason and reason.isupper() and message
            assert last_seq(stub, gid) == before
            tried += 1
        seen.update({m.value: m for m in legal.moves})
        state = bot_move(stub, created, state).state
    assert tried, f"{game}: no move that became illegal was found"


@pytest.mark.parametrize("game", GAME_IDS)
def test_create_game_refusals(stub, game):
    info = INFO[game]
    for request, code, reason in [
        (pb.CreateGameRequest(game_type="no-such-game", seats=2), grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_GAME"),
        (pb.CreateGameRequest(seats=2), grpc.StatusCode.INVALID_ARGUMENT, "MISSING_FIELD"),
        (pb.CreateGameRequest(game_type=game, seats=info.max_players + 1),
         grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTION"),
        (pb.CreateGameRequest(game_type=game, seats=info.min_players, options={"no-such-option": "1"}),
         grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTION"),
        (pb.CreateGameRequest(game_type=game, seats=info.min_players, seed=b"short"),
         grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEED"),
        # Whoever knows the seed knows every hidden card: only the operator chooses it.
        (pb.CreateGameRequest(game_type=game, seats=info.min_players, seed=SEED),
         grpc.StatusCode.PERMISSION_DENIED, "SEED_NEEDS_OPERATOR"),
    ]:
        assert expect_error(stub.CreateGame, request)[:2] == (code, reason), request


@pytest.mark.parametrize("game", GAME_IDS)
def test_same_seed_same_opening(stub, game):
    a, b = create(stub, game, seed=SEED), create(stub, game, seed=SEED)
    assert a.state.view.value == b.state.view.value
    assert [e.payload.value for e in raw_events(stub, a.game_id).events] == [
        e.payload.value for e in raw_events(stub, b.game_id).events]


@pytest.mark.parametrize("game", GAME_IDS)
def test_repeated_command_id_is_applied_once(stub, game):
    created = create(stub, game)
    gid = created.game_id
    s = created.state.to_act[0]
    md = seat(created.seat_tokens[s])
    action = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md).action
    request = pb.PlayMoveRequest(game_id=gid, command_id="cmd-1", action=action)
    first = stub.PlayMove(request, metadata=md)
    after = last_seq(stub, gid)
    again = stub.PlayMove(request, metadata=md)
    assert not first.replayed and again.replayed
    assert list(again.events) == list(first.events)
    assert again.state == first.state
    assert after == first.state.seq > created.state.seq
    assert last_seq(stub, gid) == after
    # The id names that command: another move, or another seat, under it is refused.
    others = [pb.PlayMoveRequest(game_id=gid, command_id="cmd-1",
                                 action=any_pb2.Any(type_url=action.type_url, value=action.value + b"\x00"))]
    for t, token in enumerate(created.seat_tokens):
        if t != s:
            code, reason, _ = expect_error(stub.PlayMove, request, metadata=seat(token))
            assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "COMMAND_ID_REUSED")
    for other in others:
        code, reason, _ = expect_error(stub.PlayMove, other, metadata=md)
        assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "COMMAND_ID_REUSED")
    assert last_seq(stub, gid) == after


@pytest.mark.parametrize("game", GAME_IDS)
def test_concurrent_moves_one_wins_the_other_is_aborted(second_server, stub, game):
    created = create(stub, game)
    gid = created.game_id
    with grpc.insecure_channel(second_server.address) as ch_b:
        stub_b = rpc.GameServiceStub(ch_b)
        for round_ in range(3):
            state = stub.GetView(pb.GetViewRequest(game_id=gid)).state
            if state.over:
                break
            md = seat(created.seat_tokens[state.to_act[0]])
            action = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md).action
            # Two commands at the same seq, in flight together, one through each server
            # process: the database decides which one lands.
            futures = [s.PlayMove.future(pb.PlayMoveRequest(
                game_id=gid, command_id=str(uuid.uuid4()), action=action, expected_seq=state.seq),
                metadata=md, timeout=WAIT) for s in (stub, stub_b)]
            wins, losses = [], []
            for f in futures:
                try:
                    wins.append(f.result())
                except grpc.RpcError as exc:
                    losses.append(exc)
            assert len(wins) == 1 and len(losses) == 1, (round_, wins, losses)
            assert error_of(losses[0])[:2] in {(grpc.StatusCode.ABORTED, "SEQ_CONFLICT"),
                                               (grpc.StatusCode.ABORTED, "SEQ_MISMATCH")}
            assert last_seq(stub, gid) == wins[0].state.seq


@pytest.mark.parametrize("game", GAME_IDS)
def test_same_command_racing_is_written_once(stub, game):
    created = create(stub, game)
    gid = created.game_id
    s = created.state.to_act[0]
    md = seat(created.seat_tokens[s])
    action = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md).action
    request = pb.PlayMoveRequest(game_id=gid, command_id="same", action=action)
    futures = [stub.PlayMove.future(request, metadata=md, timeout=WAIT) for _ in range(2)]
    results = [f.result() for f in futures]
    assert results[0].events == results[1].events
    assert last_seq(stub, gid) == results[0].state.seq
    assert {r.replayed for r in results} in ({True, False}, {False})


@pytest.mark.parametrize("game", GAME_IDS)
def test_replayed_is_false_only_for_the_answer_that_wrote(second_server, stub, game):
    """100 calls with one command id, in flight together through two server processes: one
    set of events is written, and exactly one answer says it was not a replay."""
    created = create(stub, game)
    gid = created.game_id
    s = created.state.to_act[0]
    md = seat(created.seat_tokens[s])
    action = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md).action
    request = pb.PlayMoveRequest(game_id=gid, command_id="once", action=action)
    with grpc.insecure_channel(second_server.address) as ch_b:
        stubs = [stub, rpc.GameServiceStub(ch_b)]
        futures = [stubs[i % 2].PlayMove.future(request, metadata=md, timeout=WAIT) for i in range(100)]
        results = [f.result() for f in futures]
    assert [r.replayed for r in results].count(False) == 1
    assert all(r.events == results[0].events and r.state == results[0].state for r in results)
    assert last_seq(stub, gid) == results[0].state.seq == created.state.seq + len(
        [e for e in raw_events(stub, gid).events if e.seq > created.state.seq])


def _watch(address: str, game_id: str, after_seq: int, metadata=()):
    """A WatchGame stream on its own channel, with a deadline."""
    channel = grpc.insecure_channel(address)
    stream = rpc.GameServiceStub(channel).WatchGame(
        pb.WatchGameRequest(game_id=game_id, after_seq=after_seq), metadata=metadata, timeout=WAIT)
    return channel, stream


@pytest.mark.parametrize("game", GAME_IDS)
def test_watch_sees_a_move_made_through_another_server(server, second_server, game):
    with grpc.insecure_channel(second_server.address) as ch_b:
        stub_b = rpc.GameServiceStub(ch_b)
        created = create(stub_b, game)
        gid = created.game_id
        start = created.state.seq
        s = created.state.to_act[0]
        channel, stream = _watch(server.address, gid, start, seat(created.seat_tokens[s]))
        with channel:
            played = bot_move(stub_b, created)  # through server B; the watcher is on A
            got = []
            expected = [e.seq for e in played.events]
            for item in stream:
                got.append(item)
                if item.event.seq >= played.state.seq:
                    break
            stream.cancel()
        assert [g.event.seq for g in got] == expected
        assert got[-1].state.view == played.state.view and got[-1].state.seq == played.state.seq
        assert [g.event for g in got] == list(played.events)


@pytest.mark.parametrize("game", GAME_IDS)
def test_watch_resumes_after_a_seq(server, stub, game):
    created = create(stub, game)
    gid = created.game_id
    for _ in range(2):
        bot_move(stub, created)
    end = last_seq(stub, gid)
    match = replay_locally(stub, created)
    channel, stream = _watch(server.address, gid, 1)
    with channel:
        got = []
        for item in stream:
            got.append(item)
            if item.event.seq >= end:
                break
        stream.cancel()
    raw = {e.seq: e.payload.value for e in raw_events(stub, gid).events}
    visible = [q for q in range(2, end + 1) if match.redact(raw[q]) is not None]
    assert [g.event.seq for g in got] == visible
    assert got[-1].state.view.value == match.view()
    assert all(g.state.role == pb.ROLE_SPECTATOR for g in got)


def test_watch_of_a_finished_match_ends(server, stub):
    game = GAME_IDS[0]
    created = create(stub, game)
    state = created.state
    while not state.over:
        state = bot_move(stub, created, state).state
    channel, stream = _watch(server.address, created.game_id, 0)
    with channel:
        items = list(stream)  # ends by itself once everything was sent
    assert items and items[-1].state.over and items[-1].state.seq == state.seq


def test_auditor_role(stub):
    game = GAME_IDS[0]
    created = create(stub, game)
    gid = created.game_id
    ask = (("x-tablier-role", "auditor"),)
    code, reason, _ = expect_error(stub.GetView, pb.GetViewRequest(game_id=gid), metadata=ask)
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "MATCH_NOT_OVER")
    state = created.state
    while not state.over:
        state = bot_move(stub, created, state).state
    # After the match anyone may read it as the auditor, without the operator token.
    view = stub.GetView(pb.GetViewRequest(game_id=gid), metadata=ask).state
    assert view.role == pb.ROLE_AUDITOR
    assert view.view.value == replay_locally(stub, created).view(auditor=True)
    assert stub.ListEvents(pb.ListEventsRequest(game_id=gid), metadata=ask).events == raw_events(stub, gid).events
    code, reason, _ = expect_error(stub.PlayMove, pb.PlayMoveRequest(game_id=gid, command_id="z",
                                                                     action=any_pb2.Any()), metadata=ask)
    assert code == grpc.StatusCode.PERMISSION_DENIED


def test_suggest_and_legal_moves_need_a_seat(stub):
    game = GAME_IDS[0]
    created = create(stub, game)
    gid = created.game_id
    for call, request in [(stub.SuggestMove, pb.SuggestMoveRequest(game_id=gid)),
                          (stub.ListLegalMoves, pb.ListLegalMovesRequest(game_id=gid))]:
        assert expect_error(call, request)[:2] == (grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN")
    md = seat(created.seat_tokens[created.state.to_act[0]])
    suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md)
    assert suggestion.action.type_url == f"type.googleapis.com/{INFO[game].action_type}"
    legal = stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=gid), metadata=md)
    assert suggestion.action.value in {m.value for m in legal.moves}
    code, reason, _ = expect_error(stub.SuggestMove, pb.SuggestMoveRequest(game_id=gid, bot="no-such-bot"),
                                   metadata=md)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTION")


@pytest.mark.parametrize("game", GAME_IDS)
def test_evaluate_position_refusals(stub, game):
    info = INFO[game]
    wrong = any_pb2.Any(type_url=f"type.googleapis.com/{info.action_type}", value=b"")
    code, reason, _ = expect_error(stub.EvaluatePosition, pb.EvaluatePositionRequest(game_type=game, position=wrong))
    if info.position_type:
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "WRONG_PAYLOAD_TYPE")
        bad = any_pb2.Any(type_url=f"type.googleapis.com/{info.position_type}", value=b"\xff\xff\xff")
        code, reason, _ = expect_error(stub.EvaluatePosition, pb.EvaluatePositionRequest(game_type=game, position=bad))
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_INPUT")
    else:
        assert (code, reason) == (grpc.StatusCode.UNIMPLEMENTED, "UNSUPPORTED")
    code, reason, _ = expect_error(stub.EvaluatePosition, pb.EvaluatePositionRequest(game_type="nope", position=wrong))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_GAME")


def test_health_and_reflection(channel):
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "tablier.v1.GameService"):
        assert health.Check(health_pb2.HealthCheckRequest(service=service)).status == \
            health_pb2.HealthCheckResponse.SERVING
    db = ProtoReflectionDescriptorDatabase(channel)
    services = set(db.get_services())
    assert {"tablier.v1.GameService", "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection"} <= services
    for info in GAME_TYPES:
        for name in (info.action_type, info.event_type, info.view_type, info.position_type, info.evaluation_type):
            if name:
                assert db.FindFileContainingSymbol(name).name == f"tablier/{info.id}/v1/{info.id}.proto", name


@pytest.mark.parametrize("game", [t.id for t in GAME_TYPES if t.position_type])
def test_evaluate_position_returns_what_the_core_computes(stub, game):
    """The service passes positions through untouched: for the default (empty) Position it
    answers exactly as the core does locally, a result or INVALID_ARGUMENT."""
    info = INFO[game]
    position = any_pb2.Any(type_url=f"type.googleapis.com/{info.position_type}", value=b"")
    request = pb.EvaluatePositionRequest(game_type=game, position=position)
    try:
        expected = _core.evaluate(game, b"")
    except _core.MalformedInput:
        assert expect_error(stub.EvaluatePosition, request)[:2] == (grpc.StatusCode.INVALID_ARGUMENT,
                                                                    "MALFORMED_INPUT")
        return
    got = stub.EvaluatePosition(request).evaluation
    assert got.type_url == f"type.googleapis.com/{info.evaluation_type}"
    assert got.value == expected


def test_host_command_ends_a_timed_match_after_the_round_in_progress(stub):
    created = stub.CreateGame(pb.CreateGameRequest(
        game_type="rat_a_tat_cat", seats=2, options={"match_mode": "timed"}))
    gid = created.game_id
    state = created.state
    for _ in range(3):
        state = bot_move(stub, created, state).state
    request = pb.HostCommandRequest(game_id=gid, command_id="stop-1", command="stop_after_round")
    before = last_seq(stub, gid)

    code, reason, _ = expect_error(stub.HostCommand, request)
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN")
    code, reason, _ = expect_error(stub.HostCommand, request, metadata=seat(created.seat_tokens[0]))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_OPERATOR")
    unknown = pb.HostCommandRequest(game_id=gid, command_id="stop-0", command="end_now")
    code, _, message = expect_error(stub.HostCommand, unknown, metadata=OPERATOR)
    assert code == grpc.StatusCode.UNIMPLEMENTED and "stop_after_round" in message
    assert last_seq(stub, gid) == before

    done = stub.HostCommand(request, metadata=OPERATOR)
    assert [e.type for e in done.events] == ["stop_requested"]
    assert done.events[0].seq == before + 1 and not done.events[0].HasField("seat")
    again = stub.HostCommand(request, metadata=OPERATOR)
    assert again.replayed and [e.seq for e in again.events] == [before + 1]
    code, reason, _ = expect_error(stub.HostCommand, pb.HostCommandRequest(
        game_id=gid, command_id="stop-2", command="stop_after_round"), metadata=OPERATOR)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_REQUESTED")
    assert last_seq(stub, gid) == before + 1

    state = done.state
    while not state.over:
        state = bot_move(stub, created, state).state
    outcome = state.outcome
    assert outcome.reason == "TIME_CALLED" and not outcome.aborted
    assert list(outcome.winners) == [s for s, v in enumerate(outcome.scores) if v == min(outcome.scores)]
    kinds = [e.type for e in raw_events(stub, gid).events if e.seq > before]
    assert kinds.count("round_scored") == 1 and kinds[-1] == "match_ended"
    audited = stub.GetView(pb.GetViewRequest(game_id=gid), metadata=OPERATOR).state
    assert audited.view.value == replay_locally(stub, created, options={"match_mode": "timed"}).view(auditor=True)


def test_host_command_closes_a_grid_knock_window(stub):
    """The knock window's timeout (docs/rules/grid_knock.md AMB32): every seat still to answer passes, and play goes on."""
    created = create(stub, "grid_knock", seats=3, seed=SEED)
    gid, state = created.game_id, created.state
    for attempt in range(500):
        before = last_seq(stub, gid)
        request = pb.HostCommandRequest(game_id=gid, command_id=f"close-{attempt}", command="close_knock_window")
        try:
            done = stub.HostCommand(request, metadata=OPERATOR)
            break
        except grpc.RpcError as exc:
            assert error_of(exc)[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "NO_KNOCK_WINDOW")
            assert last_seq(stub, gid) == before
        state = bot_move(stub, created, state).state
    else:
        pytest.fail("no knock window opened in 500 moves")
    kinds = [e.type for e in done.events]
    closed = kinds.index("knock_window_closed")
    assert closed >= 1 and kinds[:closed] == ["knock_answered"] * closed
    assert [e.seq for e in done.events] == list(range(before + 1, before + 1 + len(kinds)))
    assert not any(e.HasField("seat") for e in done.events)
    state = bot_move(stub, created, done.state).state
    audited = stub.GetView(pb.GetViewRequest(game_id=gid), metadata=OPERATOR).state
    assert audited.view.value == replay_locally(stub, created).view(auditor=True)


def test_a_grid_knock_window_closes_by_itself_when_its_time_is_up(server, stub):
    """Option knock_timeout: the server gives close_knock_window itself once the time is up."""
    created = stub.CreateGame(pb.CreateGameRequest(
        game_type="grid_knock", seats=3, seed=SEED, options={"knock_timeout": "1"}), metadata=OPERATOR)
    gid, state = created.game_id, created.state
    for _ in range(500):
        if grid_knock_pb2.View.FromString(state.view.value).phase == grid_knock_pb2.PHASE_KNOCK_WINDOW:
            break
        state = bot_move(stub, created, state).state
    else:
        pytest.fail("no knock window opened in 500 moves")
    waiting = list(state.to_act)
    channel, stream = _watch(server.address, gid, state.seq, OPERATOR)
    with channel:
        kinds = []
        for update in stream:
            kinds.append(update.event.type)
            if update.event.type == "knock_window_closed":
                break
    assert kinds == ["knock_answered"] * len(waiting) + ["knock_window_closed"]
    closing = raw_events(stub, gid).events[-len(kinds):]
    assert [e.type for e in closing] == kinds and not any(e.HasField("seat") for e in closing)
    after = stub.GetView(pb.GetViewRequest(game_id=gid), metadata=OPERATOR).state
    assert not set(after.to_act) & set(waiting)
    assert after.view.value == replay_locally(stub, created, options={"knock_timeout": "1"}).view(auditor=True)


@pytest.mark.parametrize("game", [g for g in GAME_IDS if not INFO[g].host_commands])
def test_games_without_host_commands_refuse_them(stub, game):
    created = create(stub, game)
    code, _, _ = expect_error(stub.HostCommand, pb.HostCommandRequest(
        game_id=created.game_id, command_id="h", command="stop_after_round"), metadata=OPERATOR)
    assert code == grpc.StatusCode.UNIMPLEMENTED
    assert last_seq(stub, created.game_id) == created.state.seq
