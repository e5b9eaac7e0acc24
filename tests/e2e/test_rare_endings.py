"""Endings that random and greedy matches practically never reach, driven through the gRPC API
with scripted choices (and, where the cards must cooperate, a seed found by search, recorded
here). Each outcome is checked against the spec's text."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from google.protobuf import any_pb2

from tablier.v1 import carre_pb2, common_pb2, grid_knock_pb2, qwirkle_pb2
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
    """docs/rules/qwirkle.md §10.4: an administrative cap on consecutive turns without a placement is not a
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


def _qwirkle_view(stub, game_id: str, metadata=()) -> qwirkle_pb2.View:
    view = qwirkle_pb2.View()
    assert stub.GetView(pb.GetViewRequest(game_id=game_id), metadata=metadata).state.view.Unpack(view)
    return view


def test_qwirkle_blocked_game_ends_without_bonus(stub):
    """docs/rules/qwirkle.md R15, AMB9 and TV29: once no tile type still in the bag or a hand fits anywhere,
    the game ends at the start of the next turn, BLOCKED, with no bonus, even with tiles left in
    the bag. Both seats build TV29's 6 x 6 block (every row a colour line of 6, every column a
    shape line of 6) on the opening line, exchanging whole hands while nothing fits it."""
    created = _start(stub, "qwirkle", 2, {}, seed=bytes(range(100, 132)))
    state = _move(stub, created, lambda _s, _m, _st: 0, created.state)  # the opening play
    opening = sorted((t.x, t.tile_type) for t in _qwirkle_view(stub, created.game_id).board)
    assert [x for x, _ in opening] == list(range(len(opening)))
    colours, shapes = {t // 6 for _, t in opening}, {t % 6 for _, t in opening}
    # Row y = 0 is the opening line, extended to x = 0..5; the block fills y = 0..5.
    if len(colours) == 1:  # a colour line: rows are colours, columns shapes
        cols = [t % 6 for _, t in opening] + sorted(set(range(6)) - shapes)
        rows = [next(iter(colours))] + sorted(set(range(6)) - colours)

        def target(x: int, y: int) -> int:
            return rows[y] * 6 + cols[x]
    else:  # a shape line: rows are shapes, columns colours
        cols = [t // 6 for _, t in opening] + sorted(set(range(6)) - colours)
        rows = [next(iter(shapes))] + sorted(set(range(6)) - shapes)

        def target(x: int, y: int) -> int:
            return cols[x] * 6 + rows[y]

    def build_the_block(_s, moves, _state):
        actions = []
        for m in moves:
            a = qwirkle_pb2.Action()
            assert m.Unpack(a)
            actions.append(a)
        fitting = [i for i, a in enumerate(actions) if a.WhichOneof("kind") == "play" and all(
            0 <= p.x < 6 and 0 <= p.y < 6 and p.tile_type == target(p.x, p.y) for p in a.play.placements)]
        if fitting:
            return max(fitting, key=lambda i: len(actions[i].play.placements))
        exchanges = [i for i, a in enumerate(actions) if a.WhichOneof("kind") == "exchange"]
        return max(exchanges, key=lambda i: len(actions[i].exchange.tile_types))

    while not state.over:
        state = _move(stub, created, build_the_block, state)
    view = _qwirkle_view(stub, created.game_id, OPERATOR)
    assert sorted((t.x, t.y, t.tile_type) for t in view.board) == sorted(
        (x, y, target(x, y)) for x in range(6) for y in range(6))
    assert view.bag_count > 0, "TV29: tiles are still in the bag"
    events = []
    for e in stub.ListEvents(pb.ListEventsRequest(game_id=created.game_id), metadata=OPERATOR).events:
        ev = qwirkle_pb2.Event()
        assert e.payload.Unpack(ev)
        events.append(ev)
    scores = [0, 0]
    for ev in events:
        if ev.WhichOneof("kind") == "placed":
            scores[ev.placed.seat] += ev.placed.points
    # The last play completed the block; the game ended at the start of the next turn.
    assert [ev.WhichOneof("kind") for ev in events[-3:]] == ["placed", "drew", "ended"]
    ended = events[-1].ended
    assert (ended.reason, ended.bonus, ended.aborted) == (qwirkle_pb2.END_REASON_BLOCKED, 0, False)
    out = _outcome(state)
    assert (out.reason, out.aborted) == ("BLOCKED", False)
    assert list(out.scores) == list(ended.final_scores) == scores, "no end bonus"
    assert list(out.winners) == [i for i, v in enumerate(scores) if v == max(scores)]
    assert view.end_reason == qwirkle_pb2.END_REASON_BLOCKED


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
    """docs/rules/carre.md §6.4 and AMB13: after the last round, equal totals are a draw (tie-break rounds
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
    """docs/rules/carre.md §6.4 (`tiebreak_extra_rounds`): a tie after the last round adds a round; once the
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


# ---------------------------------------------------------------- Grid Knock
#
# The two scripts below were found by a search over seeds in the Rust core (a one-turn lookahead
# that empties domains, seeing every card): each is the match seed and, move by move, the index
# of the chosen move in ListLegalMoves of the lowest awaited seat. The core's RNG for a command
# depends only on the seed and the seq, so the same moves give the same match through the API.
# If a rules change alters the listing or a deal, the script ends elsewhere and the test fails:
# search again.

GK_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _gk_seed(n: int) -> bytes:
    return n.to_bytes(8, "little") + b"\x6b" + bytes(23)


def _play_script(stub, created: pb.CreateGameResponse, script: str) -> pb.GameState:
    state = created.state
    for i, ch in enumerate(script):
        assert not state.over, f"the match ended after {i} of {len(script)} scripted moves"
        state = _move(stub, created, lambda _s, _m, _st, k=GK_ALPHABET.index(ch): k, state)
    return state


def _gk_events(stub, game_id: str) -> list[tuple[int, grid_knock_pb2.Event]]:
    out = []
    for e in stub.ListEvents(pb.ListEventsRequest(game_id=game_id), metadata=OPERATOR).events:
        ev = grid_knock_pb2.Event()
        assert e.payload.Unpack(ev)
        out.append((e.seq, ev))
    return out


def _gk_view_at(stub, game_id: str, seq: int) -> grid_knock_pb2.View:
    view = grid_knock_pb2.View()
    state = stub.GetView(pb.GetViewRequest(game_id=game_id, at_seq=seq), metadata=OPERATOR).state
    assert state.view.Unpack(view) and view.viewer.HasField("auditor")
    return view


def _gk_domain(i: int, n: int) -> set[int]:
    """Slot indexes (owner * 12 + (row - 1) * 4 + col - 1) of D[i]: its own block and column 4
    of the block of seat i + 1 (docs/rules/grid_knock.md §2: every column 4 belongs to two domains)."""
    right = (i + 1) % n
    return {i * 12 + r * 4 + c for r in range(3) for c in range(4)} | {right * 12 + r * 4 + 3 for r in range(3)}


def _slot(s: grid_knock_pb2.Slot) -> int:
    return s.owner * 12 + (s.row - 1) * 4 + s.col - 1


GK_AMB14_SCRIPT = (
    "0000000000120000000915000036e000002210000263000020420000123000100200002c0010024011000022500002020000"
    "5210000226000022415000020200000050000720000022300002250000774000002240160000442000022400002241200000"
    "04000201500002200005020000009900000ba00000801500000540000001000002071400000610002b000002800000000400"
    "0022100002200000225000022500002200000372000004240000220131500000440000022400004420000440000022400004"
    "4200004460000022400004420000440000025400004020000000000000010000020200000179000027600000090141b01600"
    "0030140010003000004100005370140000322000033000002230000322000033100008021000002300000020000450000030"
    "4000030020000000000232000302000000000022000000200000000002200000020000020000400000200000000012000000"
    "0000000000000001000000000000010000000111000002200002200200022000022002000220000220020002200002210200"
    "022000020"
)


def _knock_turn_with_y_discarded(stub, created: pb.CreateGameResponse, n: int):
    """The turn in which the knocker's held card Y was discarded: checks what R12, AMB14 and
    AMB24 share (A takes nothing, its turn ends, its own cards are untouched, the discard pile
    ends `..., triples of K, Y`, R6) and returns (A, K, view before the turn, view after)."""
    events = _gk_events(stub, created.game_id)
    kinds = [ev.WhichOneof("kind") for _, ev in events]
    at = max(i for i, kind in enumerate(kinds) if kind == "held_card_discarded")  # the script's last move
    start = max(i for i in range(at) if kinds[i] == "turn_ended")
    turn = events[start + 1:at + 2]
    turn_kinds = [ev.WhichOneof("kind") for _, ev in turn]
    accepted = next(ev.knock_accepted for _, ev in turn if ev.WhichOneof("kind") == "knock_accepted")
    a, k = accepted.seat, accepted.knocker
    y = events[at][1].held_card_discarded
    assert y.knocker == k
    # The active seat takes nothing and swaps nothing back; its turn ends right away.
    assert not {"took_from_knocker", "return_swapped", "exchanged_card_discarded"} & set(turn_kinds)
    assert kinds[at + 1] == "turn_ended" and events[at + 1][1].turn_ended.seat == a
    before = _gk_view_at(stub, created.game_id, events[start][0])
    after = _gk_view_at(stub, created.game_id, events[at][0])
    assert before.active == a and before.phase == grid_knock_pb2.PHASE_CHOOSE_SOURCE
    # A's own cards (outside the knocker's domain) are untouched.
    for s in _gk_domain(a, n) - _gk_domain(k, n):
        assert after.slots[s] == before.slots[s], s
    # Discard pile: ..., the knocker's triples of this turn (line order), then Y on top.
    triples = [ev.triple_discarded for _, ev in turn if ev.WhichOneof("kind") == "triple_discarded"]
    assert triples and all(t.seat == k for t in triples)
    tail = [t.value for t in triples for _ in range(3)] + [y.value]
    assert list(after.discard_pile[-len(tail):]) == tail
    return a, k, before, after


def test_grid_knock_knockers_card_is_discarded_when_nothing_can_be_taken(stub):
    """docs/rules/grid_knock.md R12 and AMB14: when no slot of the knocker's domain outside the active seat's
    domain holds a card after the knocker's triples, Y is discarded face up and A's turn ends."""
    created = _start(stub, "grid_knock", 3, {"knock_timeout": "0"}, seed=_gk_seed(0))
    _play_script(stub, created, GK_AMB14_SCRIPT)
    a, k, _before, after = _knock_turn_with_y_discarded(stub, created, 3)
    # Nothing qualified: every slot of D[K] outside D[A] is empty.
    empty = grid_knock_pb2.SLOT_STATE_EMPTY
    assert all(after.slots[s].state == empty for s in _gk_domain(k, 3) - _gk_domain(a, 3))
    assert any(after.slots[s].state != grid_knock_pb2.SLOT_STATE_EMPTY for s in _gk_domain(a, 3)), \
        "AMB14, not AMB24: A still has cards"


GK_AMB24_SCRIPT = (
    "0000000000021000048200000094000010600001100000842000010100000110000011100001720000560000081a000068a1"
    "b000000070000a04000007021000025500106650000632000055300003150000100000055000000051416000000150000003"
    "0000550010033500000030000550000000500000031100003350000113000005520000105000000300005500000035000030"
    "40000552000245000000aa000005c011000005900002201b0000016100002551900000100000045900000078000005000008"
    "5000000011000000000000011000021000056011000332000003011000032000003011000046000007011000068011160007"
    "0000000001101000000001100000000020110000700000000111100007000800001000000001100040000000011000000000"
    "0001400000000003000000440000400100004400004001000044000040010000440000400010000000000001120000000003"
    "0"
)


def test_grid_knock_knockers_card_is_discarded_when_a_has_no_card_left(stub):
    """docs/rules/grid_knock.md R12 and AMB24: the knocker's triples removed the active seat's last cards (all
    in the column their domains share), so A has nothing to swap back: Y is discarded and A's
    turn ends."""
    created = _start(stub, "grid_knock", 3, {"knock_timeout": "0"}, seed=_gk_seed(5))
    _play_script(stub, created, GK_AMB24_SCRIPT)
    a, k, before, after = _knock_turn_with_y_discarded(stub, created, 3)
    empty = grid_knock_pb2.SLOT_STATE_EMPTY
    assert all(before.slots[s].state == empty for s in _gk_domain(a, 3) - _gk_domain(k, 3)), \
        "all of A's cards were in the shared column"
    assert any(before.slots[s].state != empty for s in _gk_domain(a, 3))
    assert all(after.slots[s].state == empty for s in _gk_domain(a, 3)), "cnt(D[A]) = 0"
    # The knocker still had cards A could have taken: only A's empty domain ended the turn.
    assert any(after.slots[s].state != empty for s in _gk_domain(k, 3) - _gk_domain(a, 3))


GK_R16_SCRIPT = (
    "0055000i0000000004020h030004090040004001400040c01012001020202030203030304002000000000000000060004000"
    "30003100302030203020312003000300020000000040200020000000001316050005000200e0001121900b00140100007060"
    "000000000070800020000103110001000200011601160116011601040000014000j00001c0000005000i0i1a001190010015"
    "000a000100020013017050900110500002000400020002060201000402040204020402040204021402040204020402040204"
    "00040204020402040204020300004700000205020i02010900090502010201020102010201021203010h010e1c0050800200"
    "0000000001400080000000011000301040004000400040004000400040004000001000030000000311000013000200002500"
    "0g00000001000000d0061703010c010f0d070020307003010301031010500102010201120102010301040603150050"
)


def test_grid_knock_empty_domain_passes_closes_and_scores_zero(stub):
    """docs/rules/grid_knock.md R16 and AMB21: a seat whose domain is empty at TURN_START does nothing
    (pass_empty), its turn ends, it becomes the closer if nobody is yet, and its round score is 0."""
    created = _start(stub, "grid_knock", 2, {"knock_timeout": "0"}, seed=_gk_seed(8))
    _play_script(stub, created, GK_R16_SCRIPT)
    events = _gk_events(stub, created.game_id)
    kinds = [ev.WhichOneof("kind") for _, ev in events]
    at = kinds.index("empty_passed")
    a = events[at][1].empty_passed.seat
    before = _gk_view_at(stub, created.game_id, events[at - 1][0])
    assert all(before.slots[s].state == grid_knock_pb2.SLOT_STATE_EMPTY for s in _gk_domain(a, 2))
    # The seat's domain was emptied by the other seat (its own turn would have closed the round).
    prev_turn = max(i for i in range(at) if kinds[i] == "turn_ended")
    assert events[prev_turn][1].turn_ended.seat != a
    closer_before = before.closer if before.HasField("closer") else None
    ended = events[at + 1][1]
    assert ended.WhichOneof("kind") == "turn_ended" and ended.turn_ended.seat == a
    assert ended.turn_ended.closed == (closer_before is None)
    scored = next(ev.round_scored for _, ev in events[at:] if ev.WhichOneof("kind") == "round_scored")
    assert scored.raw_scores[a] == 0 and scored.round_scores[a] == 0
    if closer_before is None:
        assert scored.closer == a
