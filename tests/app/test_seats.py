"""Seats filled after creation and seats the server plays, on the in-memory store (the same
rules run on PostgreSQL in tests/e2e/test_seats.py)."""

from __future__ import annotations

import asyncio
import time

import pytest

from tablier import _core
from tablier.app import Credential, GameApp, SeatAssignment, SeatKind, SeatStatus
from tablier.app.errors import AppError, BadRequest, NotAllowedNow, PermissionDenied, Unauthenticated
from tablier.app.seats import bot_seed
from tablier.store.memory import MemoryStore
from tablier.v1.common_pb2 import GameType
from tablier.verify import verify_game

GAMES = [GameType.FromString(b) for b in _core.game_types()]
WAIT = 30.0
CREATOR, OPEN, INVITE = (SeatAssignment(k) for k in (SeatKind.CREATOR, SeatKind.OPEN, SeatKind.INVITE))


def bot(name: str = "") -> SeatAssignment:
    return SeatAssignment(SeatKind.BOT, name)


async def until(condition, what: str):
    """Polls an async condition until it holds (deadline WAIT)."""
    deadline = time.monotonic() + WAIT
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def test_plain_create_gives_the_creator_every_seat():
    app = GameApp(MemoryStore())
    created = await app.create_game("qwirkle", 3, {})
    assert all(created.seat_tokens) and len(created.seat_tokens) == 3
    assert created.invite_codes == []
    assert [i.status for i in created.state.seats] == [SeatStatus.TAKEN] * 3


async def test_assignments_are_checked():
    app = GameApp(MemoryStore())
    for assignments, reason in [
        ([CREATOR], "SEAT_ASSIGNMENTS_MISMATCH"),
        ([CREATOR, SeatAssignment(None)], "BAD_SEAT_ASSIGNMENT"),
        ([CREATOR, bot("nobody")], "UNKNOWN_BOT"),
        ([SeatAssignment(SeatKind.OPEN, "greedy"), CREATOR], "BAD_SEAT_ASSIGNMENT"),
    ]:
        with pytest.raises(BadRequest) as err:
            await app.create_game("qwirkle", 2, {}, assignments=assignments)
        assert err.value.reason == reason
    with pytest.raises(PermissionDenied) as err:
        await app.create_game("qwirkle", 2, {}, assignments=[bot(), bot()])
    assert err.value.reason == "BOTS_ONLY_NEEDS_HOST"
    assert await app.store.list_games() == []
    operated = GameApp(app.store, "op")
    created = await operated.create_game("qwirkle", 2, {}, cred=Credential("op"), assignments=[bot(), bot()])
    await until(lambda: _over(operated, created.game_id), "the bots' match to end")
    await operated.close()


async def test_join_open_and_invited_seats():
    app = GameApp(MemoryStore())
    created = await app.create_game("qwirkle", 0, {}, assignments=[CREATOR, OPEN, INVITE, bot("random")])
    gid = created.game_id
    assert created.state.seat_count == 4
    assert [bool(t) for t in created.seat_tokens] == [True, False, False, False]
    assert [bool(c) for c in created.invite_codes] == [False, False, True, False]
    assert [(i.status, i.bot) for i in created.state.seats] == [
        (SeatStatus.TAKEN, ""), (SeatStatus.OPEN, ""), (SeatStatus.INVITED, ""), (SeatStatus.BOT, "random")]

    for seat, reason in [(2, "SEAT_NOT_OPEN"), (3, "SEAT_NOT_OPEN"), (0, "SEAT_TAKEN")]:
        with pytest.raises(NotAllowedNow) as err:
            await app.join_game(gid, Credential(), seat=seat)
        assert err.value.reason == reason
    with pytest.raises(BadRequest):
        await app.join_game(gid, Credential(), seat=4)
    with pytest.raises(PermissionDenied):
        await app.join_game(gid, Credential(), invite_code=created.invite_codes[2] + "x")
    with pytest.raises(NotAllowedNow) as err:
        await app.join_game(gid, Credential(created.seat_tokens[0]))
    assert err.value.reason == "ALREADY_SEATED"

    opened = await app.join_game(gid, Credential())  # the lowest open seat
    assert opened.seat == 1 and opened.state.principal.seat == 1
    invited = await app.join_game("", Credential(), invite_code=created.invite_codes[2])  # the code names the match
    assert invited.seat == 2
    view = await app.get_view(gid, Credential(invited.seat_token))
    assert view.principal.seat == 2
    assert [i.status for i in view.seats] == [SeatStatus.TAKEN] * 3 + [SeatStatus.BOT]
    with pytest.raises(NotAllowedNow) as err:
        await app.join_game(gid, Credential(), invite_code=created.invite_codes[2])
    assert err.value.reason == "SEAT_TAKEN"
    with pytest.raises(NotAllowedNow) as err:
        await app.join_game(gid, Credential())
    assert err.value.reason == "NO_OPEN_SEAT"
    # No one else's token works for the joined seats, and theirs only for their own seat.
    assert len({created.seat_tokens[0], opened.seat_token, invited.seat_token}) == 3
    with pytest.raises(Unauthenticated):
        await app.get_view(gid, Credential(created.invite_codes[2]))
    await app.close()


async def test_two_servers_racing_for_one_seat_seat_one_player():
    store = MemoryStore()
    a, b = GameApp(store), GameApp(store)
    created = await a.create_game("qwirkle", 0, {}, assignments=[CREATOR, OPEN])
    await b.get_view(created.game_id, Credential())  # b has seen the match with the seat open
    results = await asyncio.gather(
        *((a, b)[i % 2].join_game(created.game_id, Credential(), seat=1) for i in range(6)), return_exceptions=True)
    won = [r for r in results if not isinstance(r, BaseException)]
    lost = [r for r in results if isinstance(r, BaseException)]
    assert len(won) == 1 and len(lost) == 5
    assert all(isinstance(e, NotAllowedNow) and e.reason == "SEAT_TAKEN" for e in lost)
    # Both servers now know the winner's token.
    for app in (a, b):
        assert (await app.get_view(created.game_id, Credential(won[0].seat_token))).principal.seat == 1


@pytest.mark.parametrize("info", GAMES, ids=lambda g: g.id)
async def test_bot_seats_play_to_the_end_and_verify(info):
    store = MemoryStore()
    app = GameApp(store)
    assignments = [CREATOR] + [bot(name) for name in list(info.bots)[: info.min_players - 1]]
    assignments += [bot()] * (info.min_players - len(assignments))
    created = await app.create_game(info.id, 0, {}, assignments=assignments)
    gid, token = created.game_id, created.seat_tokens[0]

    async def mine_or_over():
        state = await app.get_view(gid, Credential(token))
        return state.over or 0 in state.to_act

    for _ in range(2000):
        await until(mine_or_over, "seat 0's turn")
        state = await app.get_view(gid, Credential(token))
        if state.over:
            break
        action, seq = await app.suggest(gid, Credential(token), "random")
        try:
            await app.play(gid, Credential(token), f"me-{seq}", action, expected_seq=seq)
        except AppError as exc:  # a bot moved in the same simultaneous phase first
            assert exc.reason in ("SEQ_MISMATCH", "SEQ_CONFLICT"), exc
    assert state.over
    commands = await store.commands(gid)
    bots = [c for c in commands if c.command_id.startswith("bot:")]
    assert bots and all(c.input.seat != 0 for c in bots)
    # Each bot move is what the named bot decides from the seed at that seq, as the seat's own.
    game = await store.get_game(gid)
    for c in bots[:20]:
        seat, seq = (int(x) for x in c.command_id.split(":")[1:])
        assert (c.input.seat, c.first_seq) == (seat, seq + 1)
        before = _core.Match(game.game_type, game.seats, dict(game.options))
        before.apply_all([e.payload for e in await store.load_events(gid, upto_seq=seq)])
        assert c.input.action == before.bot_action(seat, game.bots[seat], bot_seed(game.seed, seat), seq + 1)
    verdict = await verify_game(store, gid)
    assert verdict.ok, verdict.problems
    assert verdict.redecided == len([c for c in commands if c.last_seq >= c.first_seq])
    await app.close()


async def test_a_server_that_stopped_before_the_bot_moved_leaves_it_to_the_next():
    store = MemoryStore()
    first = GameApp(store)
    created = await first.create_game("carre", 0, {}, assignments=[CREATOR, bot()])
    gid, token = created.game_id, created.seat_tokens[0]
    # Make it the bot's turn: the creator moves (if it is first), and the server stops at once.
    await until(lambda: _awaits(first, gid, 0), "seat 0's turn")
    action, seq = await first.suggest(gid, Credential(token))
    await first.play(gid, Credential(token), "c1", action, expected_seq=seq)
    await first.close()  # its bot player had not started yet
    assert (await store.commands(gid))[-1].command_id == "c1"
    stopped = _core.Match("carre", 2, {})
    stopped.apply_all([e.payload for e in await store.load_events(gid)])
    assert 1 in stopped.to_act(), "the bot must be awaited for this test to mean anything"
    second = GameApp(store)
    second.resume()  # as a starting server does: the match awaits its bot seat (a read would not)
    await until(lambda: _bot_moved(store, gid, 1), "the bot's move")
    await second.close()


async def _awaits(app: GameApp, gid: str, seat: int) -> bool:
    return seat in (await app.get_view(gid, Credential())).to_act


async def _bot_moved(store: MemoryStore, gid: str, seat: int) -> bool:
    return any(c.command_id.startswith(f"bot:{seat}:") for c in await store.commands(gid))


async def _over(app: GameApp, gid: str) -> bool:
    return (await app.get_view(gid, Credential())).over


async def test_a_join_with_a_join_key_is_safe_to_repeat():
    app = GameApp(MemoryStore())
    created = await app.create_game("qwirkle", 0, {}, assignments=[CREATOR, OPEN, OPEN, INVITE])
    gid, key = created.game_id, "k" * 40
    first = await app.join_game(gid, Credential(), join_key=key)
    again = await app.join_game(gid, Credential(), join_key=key)
    assert (first.seat, first.replayed) == (1, False)
    assert (again.seat, again.seat_token, again.replayed) == (1, first.seat_token, True)
    assert (await app.join_game(gid, Credential(), seat=1, join_key=key)).seat_token == first.seat_token
    assert (await app.get_view(gid, Credential(first.seat_token))).principal.seat == 1
    # The key names one seat: asking for another with it is refused and takes nothing.
    with pytest.raises(AppError) as err:
        await app.join_game(gid, Credential(), seat=2, join_key=key)
    assert err.value.reason == "JOIN_KEY_REUSED"
    with pytest.raises(AppError) as err:
        await app.join_game(gid, Credential(), invite_code=created.invite_codes[3], join_key=key)
    assert err.value.reason == "JOIN_KEY_REUSED"
    # Another key joins another seat, with another token.
    other = await app.join_game(gid, Credential(), join_key="z" * 40)
    assert other.seat == 2 and other.seat_token != first.seat_token
    for bad in ("short", "x" * 129, "é" * 40, "tab\t" * 10):
        with pytest.raises(BadRequest) as err:
            await app.join_game(gid, Credential(), invite_code=created.invite_codes[3], join_key=bad)
        assert err.value.reason == "BAD_JOIN_KEY"
    assert [i.status for i in (await app.get_view(gid, Credential())).seats][3] is SeatStatus.INVITED
