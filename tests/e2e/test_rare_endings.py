"""Endings that random and greedy matches practically never reach, driven through the gRPC API
with scripted choices (and, where the cards must cooperate, a seed found by search, recorded
here). Each outcome is checked against the spec's text."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from google.protobuf import any_pb2

from tablier.v1 import carre_pb2, common_pb2, qwirkle_pb2
from tablier.v1 import service_pb2 as pb

from .helpers import OPERATOR, seat

Choose = Callable[[int, list[any_pb2.Any], pb.GameState], int]


def _start(stub, game: str, seats: int, options: dict[str, str], seed: bytes = b"") -> pb.CreateGameResponse:
    return stub.CreateGame(pb.CreateGameRequest(game_type=game, seats=seats, options=options, seed=seed),
                           metadata=OPERATOR if seed else ())


def _move(stub, created: pb.CreateGameResponse, choose: Choose, state: pb.GameState) -> pb.GameState:
    """The awaited seat plays the legal move picked by `choose(seat, moves, state)`."""
    s = state.to_act[0]
    md = seat(created.seat_tokens[s])
    legal = stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=created.game_id), metadata=md)
    action = legal.moves[choose(s, list(legal.moves), state)]
    return stub.PlayMove(pb.PlayMoveRequest(game_id=created.game_id, command_id=str(uuid.uuid4()),
                                            action=action, expected_seq=legal.seq), metadata=md).state


def _drive(stub, created: pb.CreateGameResponse, choose: Choose, state: pb.GameState | None = None,
           until: Callable[[pb.GameState], bool] = lambda s: False, max_moves: int = 5000) -> pb.GameState:
    """Plays moves picked by `choose` until the match is over or `until(state)`."""
    state = state or created.state
    for _ in range(max_moves):
        if state.over or until(state):
            return state
        state = _move(stub, created, choose, state)
    raise AssertionError(f"no end after {max_moves} moves")


def _outcome(state: pb.GameState) -> common_pb2.Outcome:
    assert state.over and state.HasField("outcome")
    return state.outcome


def _kinds(moves: list[any_pb2.Any], message) -> list[str]:
    out = []
    for m in moves:
        a = message()
        assert m.Unpack(a)
        out.append(a.WhichOneof("kind"))
    return out


# ---------------------------------------------------------------- Qwirkle


def test_qwirkle_idle_cap_is_an_abort_not_a_result(stub):
    """Spec 003 §10.4: an administrative cap on consecutive turns without a placement is not a
    game rule and is reported as an abort, not a result (the engine's AMB18, `max_idle_turns`)."""
    created = _start(stub, "qwirkle", 2, {"max_idle_turns": "3"})

    def opening_then_exchanges(_s, moves, _state):
        kinds = _kinds(moves, qwirkle_pb2.Action)
        for wanted in ("opening", "exchange"):
            if wanted in kinds:
                return kinds.index(wanted)
        raise AssertionError(f"neither an opening nor an exchange among {set(kinds)}")

    idle_turns = []
    state = created.state
    while not state.over:
        state = _move(stub, created, opening_then_exchanges, state)
        view = qwirkle_pb2.View()
        assert stub.GetView(pb.GetViewRequest(game_id=created.game_id)).state.view.Unpack(view)
        idle_turns.append(view.turns_without_placement)
        assert len(idle_turns) <= 4
    # The opening play, then three exchanges: the third reaches the cap and ends the match.
    assert idle_turns == [0, 1, 2, 3]
    out = _outcome(state)
    assert out.aborted and out.reason == "IDLE_CAP"
    assert list(out.winners) == [], "an abort names no winner"
    assert view.end_reason == qwirkle_pb2.END_REASON_IDLE_CAP and view.aborted


# ---------------------------------------------------------------- Carré


def _carre_discard(_s, moves, _state) -> int:
    """Always puts a card on the discard pile (legal on every turn): no square ever scores."""
    return _kinds(moves, carre_pb2.Action).index("discard")


def _carre_first(_s, moves, _state) -> int:
    """The first legal move: going out when it may, else the lowest card into the own square."""
    return 0


def _carre_view(stub, game_id: str) -> carre_pb2.View:
    view = carre_pb2.View()
    assert stub.GetView(pb.GetViewRequest(game_id=game_id)).state.view.Unpack(view)
    return view


def test_carre_equal_totals_make_a_drawn_match(stub):
    """Spec 001 §6.4 and AMB13: after the last round, equal totals are a draw (tie-break rounds
    are off by default)."""
    created = _start(stub, "carre", 2, {"rounds_per_match": "1"})
    state = _drive(stub, created, _carre_discard)
    out = _outcome(state)
    assert list(out.scores) == [0, 0]
    assert (out.reason, sorted(out.winners), out.aborted) == ("DRAW", [0, 1], False)
    view = _carre_view(stub, created.game_id)
    assert view.result.result == carre_pb2.MATCH_RESULT_DRAW and view.result.rounds_played == 1
    assert [r.end for r in view.rounds] == [carre_pb2.ROUND_END_EXHAUSTION]


def test_carre_tie_break_round_decides_the_match(stub):
    """Spec 001 §6.4 (`tiebreak_extra_rounds`): a tie after the last round adds a round; once the
    totals differ the higher one wins. Seed 0x01..0x20 makes round 2 end with different totals."""
    created = _start(stub, "carre", 2, {"rounds_per_match": "1", "tiebreak_extra_rounds": "true"},
                     seed=bytes(range(1, 33)))
    state = _drive(stub, created, _carre_discard, until=lambda s: _carre_view(stub, created.game_id).round == 2)
    assert not state.over, "a tie after the last round is not the end when tie-break rounds are on"
    view = _carre_view(stub, created.game_id)
    assert [tuple(x.total for x in r.scores) for r in view.rounds] == [(0, 0)]
    state = _drive(stub, created, _carre_first, state)
    out = _outcome(state)
    assert out.scores[0] != out.scores[1] and not out.aborted
    assert list(out.winners) == [max(range(2), key=lambda i: out.scores[i])]
    view = _carre_view(stub, created.game_id)
    assert view.result.result == carre_pb2.MATCH_RESULT_WIN and view.result.rounds_played == 2


def test_carre_tie_break_rounds_stop_at_the_cap(stub):
    """The engine's AMB25: at most 8 tie-break rounds; still tied after them, the match ends as an
    administrative abort with no winner (reason ROUND_CAP)."""
    created = _start(stub, "carre", 2, {"rounds_per_match": "1", "tiebreak_extra_rounds": "true"})
    state = _drive(stub, created, _carre_discard)
    out = _outcome(state)
    assert (out.aborted, out.reason, list(out.winners), list(out.scores)) == (True, "ROUND_CAP", [], [0, 0])
    view = _carre_view(stub, created.game_id)
    assert view.result.result == carre_pb2.MATCH_RESULT_ABORTED and view.result.rounds_played == 1 + 8
