"""Move values by rollouts over gRPC, for every game whose evaluator has them (the games that
offer the `evaluator` bot): EvaluatePosition with RolloutSettings on a seat's real position
gives every legal move once with its value, the same seed the same bytes, settings out of range
INVALID_ARGUMENT; the `evaluator` bot suggests a legal move and plays a bot seat."""

from __future__ import annotations

import hashlib

import grpc
import pytest
from google.protobuf import any_pb2

from tablier import _core
from tablier.v1 import common_pb2
from tablier.v1 import service_pb2 as pb

from .helpers import INFO, create, expect_error, seat

ROLLOUT_GAMES = [g for g, t in INFO.items() if "evaluator" in t.bots]


def evaluation_class(name: str):
    package, _, message = name.rpartition(".")
    module = __import__(f"tablier.v1.{package.split('.')[1]}_pb2", fromlist=[message])
    return getattr(module, message)


def valued(evaluation) -> list:
    """The evaluation's valued moves: `moves` in the card games, `actions` in Qwirkle (whose
    `plays` are its board plays with their scores, as before rollouts)."""
    fields = evaluation.DESCRIPTOR.fields_by_name
    return list(evaluation.moves if "moves" in fields else evaluation.actions)


def mid_game(stub, game: str, moves: int = 8) -> tuple[pb.CreateGameResponse, pb.GetViewResponse]:
    """A seeded two-seat match after a few bot moves, and the position of the seat awaited."""
    created = create(stub, game, 2, seed=hashlib.sha256(f"evaluator-{game}".encode()).digest())
    state = created.state
    for i in range(moves):
        token = seat(created.seat_tokens[state.to_act[0]])
        if len(stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=created.game_id), metadata=token).moves) >= 2 \
                and i >= moves // 2:
            break
        suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=created.game_id), metadata=token)
        state = stub.PlayMove(pb.PlayMoveRequest(game_id=created.game_id, command_id=f"m{i}", action=suggestion.action,
                                                 expected_seq=suggestion.seq), metadata=token).state
    token = seat(created.seat_tokens[state.to_act[0]])
    return created, stub.GetView(pb.GetViewRequest(game_id=created.game_id, with_position=True), metadata=token)


def test_rollouts_are_offered_by_every_card_game():
    assert {"rat_a_tat_cat", "democratie", "grid_knock", "carre"} <= set(ROLLOUT_GAMES)


@pytest.mark.parametrize("game", ROLLOUT_GAMES)
def test_every_legal_move_gets_a_value_and_the_same_seed_the_same_answer(stub, game):
    info = INFO[game]
    created, got = mid_game(stub, game)
    token = seat(created.seat_tokens[got.position_seat])
    legal = stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=created.game_id), metadata=token).moves
    settings = common_pb2.RolloutSettings(rollouts=12, seed=5, threads=2)
    request = pb.EvaluatePositionRequest(game_type=game, position=got.position, rollouts=settings)
    first = stub.EvaluatePosition(request).evaluation
    assert first.value == stub.EvaluatePosition(request).evaluation.value
    assert first.value == _core.evaluate(game, got.position.value, settings.SerializeToString())
    evaluation = evaluation_class(info.evaluation_type)()
    assert first.Unpack(evaluation)
    listed = sorted(m.action.SerializeToString() for m in valued(evaluation))
    assert listed == sorted(a.value for a in legal)
    for m in valued(evaluation):
        assert m.value.samples == 12 and 0 <= m.value.win_probability <= 1
        assert m.value.margin_stderr >= 0 and m.value.win_stderr >= 0
    assert evaluation.HasField("best" if "best" in evaluation.DESCRIPTOR.fields_by_name else "best_action")
    # Without settings: the immediate effects only, no value.
    plain = evaluation_class(info.evaluation_type)()
    assert stub.EvaluatePosition(pb.EvaluatePositionRequest(game_type=game, position=got.position)).evaluation \
        .Unpack(plain)
    assert not any(m.HasField("value") for m in valued(plain))


@pytest.mark.parametrize("game", ROLLOUT_GAMES)
def test_settings_out_of_range_and_bad_positions_are_refused(stub, game):
    _, got = mid_game(stub, game, 2)
    for settings in (common_pb2.RolloutSettings(rollouts=100_001), common_pb2.RolloutSettings(time_budget_ms=60_001)):
        code, reason, message = expect_error(stub.EvaluatePosition, pb.EvaluatePositionRequest(
            game_type=game, position=got.position, rollouts=settings))
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_INPUT") and "above" in message
    empty = any_pb2.Any(type_url=got.position.type_url, value=b"")
    code, reason, message = expect_error(stub.EvaluatePosition, pb.EvaluatePositionRequest(
        game_type=game, position=empty, rollouts=common_pb2.RolloutSettings(rollouts=1)))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_INPUT") and "view" in message


@pytest.mark.parametrize("game", ROLLOUT_GAMES)
def test_the_evaluator_bot_suggests_a_legal_move(stub, game):
    created, got = mid_game(stub, game)
    token = seat(created.seat_tokens[got.position_seat])
    legal = {a.value for a in stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=created.game_id),
                                                   metadata=token).moves}
    suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=created.game_id, bot="evaluator"), metadata=token)
    assert suggestion.action.value in legal
