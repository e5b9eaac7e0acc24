"""A seat's Position through GetView (`with_position`) on a real server: for every game with an
evaluator it is the game's Position message, EvaluatePosition accepts it, it holds what that
seat may see and nothing more (Qwirkle: exactly the board, the own hand and whether the bag is
empty, as the seat's view shows them), and only that seat or the auditor gets it."""

from __future__ import annotations

import hashlib

import grpc
import pytest

from tablier.v1 import qwirkle_pb2
from tablier.v1 import service_pb2 as pb

from .helpers import INFO, OPERATOR, create, expect_error, seat

EVALUATOR_GAMES = [g for g, t in INFO.items() if t.position_type]
OTHER_GAMES = [g for g, t in INFO.items() if not t.position_type]


def position_request(game_id: str, at_seq: int | None = None, of: int | None = None) -> pb.GetViewRequest:
    request = pb.GetViewRequest(game_id=game_id, with_position=True)
    if at_seq is not None:
        request.at_seq = at_seq
    if of is not None:
        request.position_seat = of
    return request


def play_some(stub, created: pb.CreateGameResponse, moves: int) -> list[tuple[int, int]]:
    """Plays up to `moves` bot moves; returns (seq, seat awaited) after each one."""
    state, seen = created.state, []
    while not state.over and len(seen) < moves:
        token = seat(created.seat_tokens[state.to_act[0]])
        suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=created.game_id), metadata=token)
        state = stub.PlayMove(pb.PlayMoveRequest(game_id=created.game_id, command_id=f"m{len(seen)}",
                                                 action=suggestion.action, expected_seq=suggestion.seq),
                              metadata=token).state
        if not state.over:
            seen.append((state.seq, state.to_act[0]))
    return seen


@pytest.mark.parametrize("game", EVALUATOR_GAMES)
def test_each_seat_gets_its_position_and_the_evaluator_accepts_it(stub, game):
    info = INFO[game]
    created = create(stub, game, info.max_players, seed=hashlib.sha256(f"position-{game}".encode()).digest())
    steps = play_some(stub, created, 40)
    assert len(steps) >= 10
    evaluated = 0
    for seq, awaited in steps:
        for s in range(info.max_players):
            got = stub.GetView(position_request(created.game_id, seq), metadata=seat(created.seat_tokens[s]))
            assert got.state.seq == seq and got.state.seat == s and got.position_seat == s
            assert got.position.type_url == f"type.googleapis.com/{info.position_type}"
            # The auditor may have any seat's: the same position.
            audited = stub.GetView(position_request(created.game_id, seq, s), metadata=OPERATOR)
            assert audited.position == got.position and audited.position_seat == s
            evaluation = stub.EvaluatePosition(pb.EvaluatePositionRequest(game_type=game, position=got.position))
            assert evaluation.evaluation.type_url.endswith(info.evaluation_type)
            evaluated += 1
        # Absent position_seat, the auditor gets the seat awaited.
        assert stub.GetView(position_request(created.game_id, seq), metadata=OPERATOR).position_seat == awaited
    assert evaluated >= 10 * info.max_players
    # Without the option, no position travels.
    plain = stub.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(created.seat_tokens[0]))
    assert not plain.HasField("position")


def test_a_qwirkle_position_is_exactly_what_the_seat_sees(stub):
    created = create(stub, "qwirkle", 3, seed=hashlib.sha256(b"position-qwirkle-view").digest())
    hands = 0
    for seq, _ in play_some(stub, created, 30):
        for s in range(3):
            got = stub.GetView(position_request(created.game_id, seq), metadata=seat(created.seat_tokens[s]))
            view, position = qwirkle_pb2.View(), qwirkle_pb2.Position()
            assert got.state.view.Unpack(view) and got.position.Unpack(position)
            own = view.seats[s]
            assert own.hand_visible and list(position.hand_types) == list(own.hand_tile_types)
            assert list(position.board) == list(view.board)
            assert position.bag_empty == (view.bag_count == 0)
            hands += len(position.hand_types) == 6
            # The evaluator's plays use only tiles of that hand.
            evaluation = qwirkle_pb2.Evaluation()
            stub.EvaluatePosition(pb.EvaluatePositionRequest(game_type="qwirkle", position=got.position)
                                  ).evaluation.Unpack(evaluation)
            for play in evaluation.plays:
                assert {p.tile_type for p in play.placements} <= set(position.hand_types)
    assert hands > 30


@pytest.mark.parametrize("game", EVALUATOR_GAMES)
def test_nobody_else_gets_a_seats_position(stub, game):
    created = create(stub, game, 2)
    play_some(stub, created, 3)
    gid = created.game_id
    # A spectator gets none.
    code, reason, message = expect_error(stub.GetView, position_request(gid))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "POSITION_NOT_VISIBLE") and "spectator" in message
    code, reason, _ = expect_error(stub.GetView, position_request(gid, of=0))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "POSITION_NOT_VISIBLE")
    # A seat gets its own, not another seat's.
    code, reason, _ = expect_error(stub.GetView, position_request(gid, of=1), metadata=seat(created.seat_tokens[0]))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "POSITION_NOT_VISIBLE")
    own = stub.GetView(position_request(gid, of=0), metadata=seat(created.seat_tokens[0]))
    assert own.position_seat == 0 and own.position.value
    # A seat past the last one.
    code, reason, _ = expect_error(stub.GetView, position_request(gid, of=2), metadata=OPERATOR)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_SEAT")


def test_every_game_has_an_evaluator():
    """Every registered game builds a seat's Position and evaluates it (GameType.position_type);
    a game without one would answer GetView(with_position) UNIMPLEMENTED UNSUPPORTED."""
    assert EVALUATOR_GAMES and not OTHER_GAMES, OTHER_GAMES


@pytest.mark.parametrize("game", EVALUATOR_GAMES)
def test_a_position_names_its_seats_legal_moves_at_that_seq(stub, game):
    """With the position, that seat's legal moves and labels at the same seq: what
    ListLegalMoves said then, for the seat now and for the auditor at a past seq; and what the
    evaluator values, move for move."""
    created = create(stub, game, 2, seed=hashlib.sha256(f"position-moves-{game}".encode()).digest())
    said: dict[int, tuple[int, list[bytes], list[str]]] = {}
    state = created.state
    while not state.over and len(said) < 6:
        awaited = state.to_act[0]
        token = seat(created.seat_tokens[awaited])
        legal = stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=created.game_id), metadata=token)
        said[legal.seq] = (awaited, [m.value for m in legal.moves], list(legal.labels))
        got = stub.GetView(position_request(created.game_id), metadata=token)
        assert [m.value for m in got.position_moves] == said[legal.seq][1]
        assert list(got.position_move_labels) == list(legal.labels) and all(legal.labels)
        suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=created.game_id), metadata=token)
        state = stub.PlayMove(pb.PlayMoveRequest(game_id=created.game_id, command_id=f"m{len(said)}",
                                                 action=suggestion.action, expected_seq=suggestion.seq),
                              metadata=token).state
    assert len(said) >= 3
    for seq, (awaited, moves, labels) in said.items():
        past = stub.GetView(position_request(created.game_id, seq, awaited), metadata=OPERATOR)
        assert [m.value for m in past.position_moves] == moves and list(past.position_move_labels) == labels
        # The other seat, not awaited there (in a turn-based phase), has none.
        other = stub.GetView(position_request(created.game_id, seq, 1 - awaited), metadata=OPERATOR)
        if 1 - awaited not in other.state.to_act:
            assert not other.position_moves and not other.position_move_labels
