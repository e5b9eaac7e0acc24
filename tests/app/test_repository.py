"""The repository is the one door to the event log: reads `get`, commands `save`, a starting
server `resume`s. Only a save or a resume arms the scheduler: a read of any kind, on a server
that has nothing cached, starts no timer, clock or bot, and no task at all that outlives it."""

from __future__ import annotations

import asyncio
import contextlib

from tablier.app import Credential, GameApp, SeatAssignment, SeatKind
from tablier.store.memory import MemoryStore
from tablier.v1.grid_knock_pb2 import Phase as GridKnockPhase
from tablier.v1.grid_knock_pb2 import View as GridKnockView

SEED = bytes(range(32))
OP = "repository-operator"
OPERATOR = Credential(OP)
CREATOR, BOT = SeatAssignment(SeatKind.CREATOR), SeatAssignment(SeatKind.BOT)


async def _knock_window(app: GameApp) -> tuple[str, list[str]]:
    """A Grid Knock match with a knock window open for an hour (a core timer waits)."""
    created = await app.create_game("grid_knock", 3, {"knock_timeout": "3600"}, SEED, OPERATOR)
    gid, tokens = created.game_id, created.seat_tokens
    for i in range(500):
        state = await app.get_view(gid, Credential())
        if GridKnockView.FromString(state.view.data).phase == GridKnockPhase.PHASE_KNOCK_WINDOW:
            return gid, tokens
        token = tokens[state.to_act[0]]
        action, seq = await app.suggest(gid, Credential(token))
        await app.play(gid, Credential(token), f"c{i}", action, expected_seq=seq)
    raise AssertionError("no knock window opened in 500 moves")


async def _matches_awaiting_the_server(store: MemoryStore) -> dict[str, tuple[str, list[str]]]:
    """Three matches in `store`, each awaiting the server: a clock, a core timer, a bot seat.
    The server that made them stopped before any wait ran out or the bot moved."""
    first = GameApp(store, OP)
    clocked = await first.create_game("carre", 2, {"clock_move_seconds": "3600"}, SEED, OPERATOR)
    timer = await _knock_window(first)
    bot = await first.create_game("carre", 0, {"first_starter": "1"}, assignments=[CREATOR, BOT])
    assert bot.state.to_act == [1], "the bot seat must be awaited for this test to mean anything"
    assert first.scheduler.timers == 1 and first.scheduler._clocks and first.scheduler._bots
    await first.close()  # before the bot's player ran: its move is still awaited
    assert (await store.commands(bot.game_id)) == [], "nothing but the opening was written"
    return {
        "clock": (clocked.game_id, clocked.seat_tokens),
        "timer": timer,
        "bot": (bot.game_id, bot.seat_tokens),
    }


async def _read_everything(app: GameApp, gid: str, tokens: list[str]) -> None:
    """One read of every kind, as a spectator, the seat awaited and the auditor."""
    spectator = Credential()
    state = await app.get_view(gid, spectator)
    await app.get_view(gid, spectator, at_seq=1)
    seat = state.to_act[0] if state.to_act else 0
    mine = Credential(tokens[seat]) if tokens[seat] else OPERATOR
    await app.get_view(gid, mine, min_seq=state.seq)
    await app.list_events(gid, spectator)
    await app.list_events(gid, OPERATOR, after_seq=1)
    if tokens[seat]:
        _, position, _, _ = await app.get_position(gid, mine)
        await app.evaluate(state.game_type, position)
        await app.legal_moves(gid, mine)
        await app.suggest(gid, mine, "random")
    async with contextlib.aclosing(app.watch_batches(gid, spectator, after_seq=0)) as batches:
        assert (await anext(batches))[-1].seq == state.seq  # the catch-up
    await app.list_games()


async def test_reads_of_any_kind_on_a_cold_server_start_nothing():
    store = MemoryStore()
    matches = await _matches_awaiting_the_server(store)

    cold = GameApp(store, OP)
    before = asyncio.all_tasks()
    for gid, tokens in matches.values():
        await _read_everything(cold, gid, tokens)
    # A watch's feed ends with its last watcher: let the cancelled ones finish.
    feeds = [t for t in asyncio.all_tasks() - before if t.get_name().startswith("watch-feed-")]
    await asyncio.gather(*feeds, return_exceptions=True)
    started = [t for t in asyncio.all_tasks() - before if not t.done()]
    assert started == [], "a read started tasks"
    assert (cold.scheduler.timers, cold.scheduler._clocks, cold.scheduler._bots) == (0, {}, {})
    assert cold.cache.get(matches["bot"][0]) is not None, "the reads did load the matches"

    # A starting server resumes them: each wait is armed again, and the bot moves.
    cold.resume()
    bot_gid = matches["bot"][0]

    async def resumed() -> bool:
        while not (
            cold.scheduler.timers == 1
            and matches["clock"][0] in cold.scheduler._clocks
            and any(c.command_id.startswith("bot:1:") for c in await store.commands(bot_gid))
        ):
            await asyncio.sleep(0.01)
        return True

    try:
        assert await asyncio.wait_for(resumed(), timeout=20)
    finally:
        await cold.close()


async def test_a_match_that_never_awaits_the_server_is_not_indexed_and_one_over_leaves_the_index():
    store = MemoryStore()
    app = GameApp(store, OP)
    plain = await app.create_game("qwirkle", 2, {}, SEED, OPERATOR)
    bots = await app.create_game("carre", 0, {"rounds_per_match": "1"}, assignments=[BOT, BOT], cred=OPERATOR)
    try:
        assert plain.game_id not in await store.running_clocks()
        assert bots.game_id in await store.running_clocks()

        async def over() -> bool:
            while not (await app.get_view(bots.game_id, Credential())).over:
                await asyncio.sleep(0.01)
            while bots.game_id in await store.running_clocks():
                await asyncio.sleep(0.01)
            return True

        assert await asyncio.wait_for(over(), timeout=30)
    finally:
        await app.close()


def test_only_the_repository_touches_the_store():
    """The one door: no module of the application but the repository calls the event store
    (GameApp keeps it only to hand the transports for health and metrics)."""
    import ast
    from pathlib import Path

    import tablier.app

    for path in sorted(Path(tablier.app.__file__).parent.glob("*.py")):
        if path.name == "repository.py":
            continue
        calls = [
            ast.unparse(node)
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute | ast.Name)
            and ast.unparse(node.value).split(".")[-1] in ("store", "_store")
        ]
        assert calls == [], f"{path.name} calls the store: {calls}"
