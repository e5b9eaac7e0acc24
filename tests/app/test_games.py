"""Command handling without gRPC, on the in-memory store: the cache is an accelerator that
is checked against the log, and errors map to statuses in one place."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from tablier import _core
from tablier.api.errors import classify
from tablier.app import Credential, GameApp, Payload
from tablier.app.errors import Conflict
from tablier.store.base import CommandInput
from tablier.store.memory import MemoryStore
from tablier.v1.common_pb2 import GameType
from tablier.v1.grid_knock_pb2 import Phase as GridKnockPhase
from tablier.v1.grid_knock_pb2 import View as GridKnockView

GAMES = [GameType.FromString(b) for b in _core.game_types()]
SEED = bytes(range(32))
OP = "app-operator"
OPERATOR = Credential(OP)  # chooses seeds


async def _bot_move(app: GameApp, game_id: str, tokens: list[str], command_id: str):
    state = await app.get_view(game_id, Credential())
    token = tokens[state.to_act[0]]
    action, seq = await app.suggest(game_id, Credential(token))
    return await app.play(game_id, Credential(token), command_id, action, expected_seq=seq)


@pytest.mark.parametrize("info", GAMES, ids=lambda g: g.id)
async def test_two_instances_on_one_store_stay_consistent(info):
    store = MemoryStore()
    a, b = GameApp(store, OP), GameApp(store, OP)
    created = await a.create_game(info.id, info.min_players, {}, SEED, OPERATOR)
    gid, tokens = created.game_id, created.seat_tokens
    await b.get_view(gid, Credential())  # b caches the opening state
    for i in range(4):
        app = (a, b)[i % 2]  # each instance's cache falls behind the other's appends
        played = await _bot_move(app, gid, tokens, f"c{i}")
        if played.state.over:
            break
    va = await a.get_view(gid, Credential(), None)
    vb = await b.get_view(gid, Credential(), None)
    assert (va.seq, va.view) == (vb.seq, vb.view)
    fresh = await GameApp(store).get_view(gid, Credential())
    assert (fresh.seq, fresh.view) == (va.seq, va.view)


@pytest.mark.parametrize("info", GAMES, ids=lambda g: g.id)
async def test_a_cached_state_that_disagrees_with_the_log_is_dropped(info):
    store = MemoryStore()
    app = GameApp(store, OP)
    created = await app.create_game(info.id, info.min_players, {}, SEED, OPERATOR)
    gid = created.game_id
    seq, good = app.cache.get(gid)
    wrong = _core.Match(info.id, info.min_players, {})  # the state before the opening events
    assert wrong.state_hash() != good.state_hash()
    app.cache.put(gid, seq, wrong)
    view = await app.get_view(gid, Credential(), None)
    assert view.view.data == good.view()
    assert app.cache.get(gid)[1].state_hash() == good.state_hash()


async def test_stale_expected_seq_is_a_conflict():
    info = GAMES[0]
    app = GameApp(MemoryStore(), OP)
    created = await app.create_game(info.id, info.min_players, {}, SEED, OPERATOR)
    token = created.seat_tokens[created.state.to_act[0]]
    action, seq = await app.suggest(created.game_id, Credential(token))
    with pytest.raises(Conflict):
        await app.play(created.game_id, Credential(token), "c", Payload(action.type_name, action.data), seq - 1)


class _Panic(BaseException):
    """Stands in for pyo3's PanicException, which derives from BaseException."""


@pytest.mark.parametrize("exc", [_Panic("secret internals"), RuntimeError("secret internals")])
def test_unexpected_errors_are_internal_without_internals(exc):
    code, reason, message = classify(exc)
    assert (code, reason) == (grpc.StatusCode.INTERNAL, "INTERNAL")
    assert "secret" not in message and "incident" in message


def test_a_stored_event_that_does_not_apply_is_data_loss_without_internals():
    code, reason, message = classify(_core.CorruptLog("secret internals"))
    assert (code, reason) == (grpc.StatusCode.DATA_LOSS, "EVENT_LOG_DAMAGED")
    assert "secret" not in message


def test_rule_violations_keep_the_core_reason():
    code, reason, message = classify(_core.RuleViolation("NOT_YOUR_TURN", "it is not your turn"))
    assert (code, reason, message) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN", "it is not your turn")


async def _until_knock_window(app: GameApp, created) -> int:
    """Bot moves until a knock window is open; returns its seq."""
    gid, tokens = created.game_id, created.seat_tokens
    for i in range(500):
        state = await app.get_view(gid, Credential())
        if GridKnockView.FromString(state.view.data).phase == GridKnockPhase.PHASE_KNOCK_WINDOW:
            return state.seq
        await _bot_move(app, gid, tokens, f"c{i}")
    pytest.fail("no knock window opened in 500 moves")


async def test_a_knock_window_closes_when_its_time_is_up():
    store = MemoryStore()
    app = GameApp(store, OP)
    created = await app.create_game("grid_knock", 3, {"knock_timeout": "1"}, SEED, OPERATOR)
    gid = created.game_id
    try:
        opened = await _until_knock_window(app, created)
        waiting = (await app.get_view(gid, Credential())).to_act
        assert waiting, "seats of E are awaited"

        async def closed() -> list[str]:
            kinds = []
            async for out, _ in app.watch(gid, Credential(), after_seq=opened):
                kinds.append(out.kind)
                if out.kind == "knock_window_closed":
                    return kinds
            return kinds

        kinds = await asyncio.wait_for(closed(), timeout=30)
        assert kinds == ["knock_answered"] * len(waiting) + ["knock_window_closed"]
        command = (await store.commands(gid))[-1]
        assert command.input == CommandInput(host_command="close_knock_window")
        assert command.command_id.startswith("timer:close_knock_window:")
        after = await app.get_view(gid, Credential())
        assert after.seq == command.last_seq and set(after.to_act).isdisjoint(waiting)
        assert gid not in app.scheduler._timers, "the wait is over"
    finally:
        await app.close()


async def test_a_knock_window_answered_in_time_stops_its_timer():
    app = GameApp(MemoryStore(), OP)
    created = await app.create_game("grid_knock", 3, {"knock_timeout": "3600"}, SEED, OPERATOR)
    gid = created.game_id
    try:
        await _until_knock_window(app, created)
        timer, task = app.scheduler._timers[gid]
        assert timer[:2] == ("close_knock_window", 3600)
        for i in range(8):  # every seat of E answers, one by one
            state = await app.get_view(gid, Credential())
            if GridKnockView.FromString(state.view.data).phase != GridKnockPhase.PHASE_KNOCK_WINDOW:
                break
            token = created.seat_tokens[state.to_act[0]]
            action, seq = await app.suggest(gid, Credential(token))
            await app.play(gid, Credential(token), f"answer-{i}", action, expected_seq=seq)
            if i == 0:
                assert app.scheduler._timers.get(gid) in (None, (timer, task)), "an answer does not restart the clock"
        assert gid not in app.scheduler._timers
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        await app.close()


@pytest.mark.parametrize("scheme", [2, 3])
async def test_a_log_keeps_verifying_under_the_scheme_it_was_written_with(scheme, monkeypatch):
    """Matches written before integrity scheme 3 (their chain hashes without the commands'
    digests) load cold and verify as they are; under scheme 3 a changed command input does
    not, while under scheme 2 only deciding the command again can tell."""
    import dataclasses

    from tablier.app import commands
    from tablier.app.errors import DataLoss
    from tablier.verify import verify_game

    monkeypatch.setattr(commands, "HASH_SCHEME", scheme)
    store = MemoryStore()
    app = GameApp(store, OP)
    created = await app.create_game("carre", 2, {}, SEED, OPERATOR)
    gid, tokens = created.game_id, created.seat_tokens
    for i in range(4):
        await _bot_move(app, gid, tokens, f"c{i}")
    assert (await store.get_game(gid)).hash_scheme == scheme
    cold = await GameApp(store).get_view(gid, Credential())
    assert cold.seq == (await app.get_view(gid, Credential())).seq
    verdict = await verify_game(store, gid)
    assert verdict.ok and verdict.redecided == 4, verdict.problems

    # The newest command's input changed in the store (its events untouched).
    key, (first, last, given) = next(
        (k, v) for k, v in reversed(store._commands.items()) if k[0] == gid and v[2].action
    )
    changed = dataclasses.replace(given, action=given.action + b"\x00")
    store._commands[key] = (first, last, changed)
    events = store._events[gid]
    for n in range(first - 1, last):
        events[n] = dataclasses.replace(events[n], command=changed)
    problems = (await verify_game(store, gid)).problems
    chained = [p for p in problems if "chain hash mismatch" in p]
    if scheme == 3:
        assert chained and chained[0].startswith(f"seq {first}:"), problems
        with pytest.raises(DataLoss) as refused:
            await GameApp(store).get_view(gid, Credential())
        assert refused.value.seq == first
    else:
        assert not chained and problems, problems  # deciding it again fails
        assert (await GameApp(store).get_view(gid, Credential())).seq == cold.seq


async def test_a_viewers_latest_state_is_built_once_and_follows_each_move():
    store = MemoryStore()
    app = GameApp(store, OP)
    created = await app.create_game("qwirkle", 2, {}, SEED, OPERATOR)
    gid, tokens = created.game_id, created.seat_tokens
    first = await app.get_view(gid, Credential())
    assert await app.get_view(gid, Credential()) is first  # shared, not built again
    mine = await app.get_view(gid, Credential(tokens[0]))
    assert mine is not first and mine.principal.seat == 0  # one per viewer
    played = await _bot_move(app, gid, tokens, "c0")
    after = await app.get_view(gid, Credential())
    assert after is not first and after.seq == played.state.seq > first.seq
    assert (await app.get_view(gid, Credential(tokens[0]))).seq == after.seq
