"""A game's own rejection reason reaches the client: the platform's generic NOT_YOUR_TURN /
GAME_OVER only stand in when the game has no more precise one (Démocratie, docs/rules/democratie.md AMB16,
TV19 step 2, TV20; the game's AMB18)."""

from __future__ import annotations

import uuid

import grpc

from tablier.v1 import democratie_pb2
from tablier.v1 import service_pb2 as pb

from .helpers import bot_move, expect_error, last_seq, seat


def _commit(card: int):
    action = democratie_pb2.Action(commit_card=democratie_pb2.CommitCard(card=card))
    any_action = pb.PlayMoveRequest().action
    any_action.Pack(action, type_url_prefix="type.googleapis.com")
    return any_action


def _hand(stub, game_id: str, token: str) -> list[int]:
    state = stub.GetView(pb.GetViewRequest(game_id=game_id), metadata=seat(token)).state
    view = democratie_pb2.View()
    assert state.view.Unpack(view)
    return list(view.hand)


def _play(stub, game_id: str, token: str, card: int):
    return stub.PlayMove(pb.PlayMoveRequest(game_id=game_id, command_id=str(uuid.uuid4()), action=_commit(card)),
                         metadata=seat(token))


def test_democratie_commit_reasons_come_from_the_game(stub):
    created = stub.CreateGame(pb.CreateGameRequest(game_type="democratie", seats=3, options={"target": "1"}))
    gid, tokens = created.game_id, created.seat_tokens
    first = created.state.to_act[0]
    hand = _hand(stub, gid, tokens[first])
    state = _play(stub, gid, tokens[first], hand[0]).state
    assert first not in state.to_act and state.to_act, "the others still have to commit"

    # TV19 step 2: a second commit of the seat that committed, whether of a card it holds or
    # of the one it committed, is ALREADY_COMMITTED, and nothing is written.
    before = last_seq(stub, gid)
    for card in (hand[1], hand[0]):
        code, reason, _ = expect_error(_play, stub, gid, tokens[first], card)
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_COMMITTED")
    assert last_seq(stub, gid) == before
    # A seat that has not committed yet is awaited: a card it does not hold is CARD_NOT_IN_HAND.
    other = state.to_act[0]
    code, reason, _ = expect_error(_play, stub, gid, tokens[other], hand[0])
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "CARD_NOT_IN_HAND")

    while not state.over:
        state = bot_move(stub, created, state).state
    # TV20: a commit in MATCH_END is WRONG_PHASE (not the platform's GAME_OVER), for every seat.
    before = last_seq(stub, gid)
    for token in tokens:
        code, reason, _ = expect_error(_play, stub, gid, token, hand[1])
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "WRONG_PHASE")
    assert last_seq(stub, gid) == before


def test_other_games_keep_the_generic_reasons(stub):
    """Qwirkle has no reason of its own for an idle seat or a finished match."""
    created = stub.CreateGame(pb.CreateGameRequest(game_type="qwirkle", seats=2))
    gid, state = created.game_id, created.state
    while not state.over:
        actor = state.to_act[0]
        idle = 1 - actor
        suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=seat(created.seat_tokens[actor]))
        code, reason, _ = expect_error(
            stub.PlayMove, pb.PlayMoveRequest(game_id=gid, command_id=str(uuid.uuid4()), action=suggestion.action),
            metadata=seat(created.seat_tokens[idle]))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
        state = stub.PlayMove(pb.PlayMoveRequest(game_id=gid, command_id=str(uuid.uuid4()), action=suggestion.action),
                              metadata=seat(created.seat_tokens[actor])).state
        if state.seq > 12:
            break
    while not state.over:
        state = bot_move(stub, created, state).state
    code, reason, _ = expect_error(
        stub.PlayMove, pb.PlayMoveRequest(game_id=gid, command_id=str(uuid.uuid4()), action=suggestion.action),
        metadata=seat(created.seat_tokens[0]))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER")
