"""`tablier play`, the terminal player, driven headless through textual's pilot (keys and
clicks) against a real `tablier serve`: the lobby, one complete match per game against the
server's bots (each move chosen from the legal moves the screen offers), a refused move
explained, spectating, and the replay stepper."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Select, Static

from tablier import _core
from tablier_client import connect, games
from tablier_client.sdk import creator_seat, invited_seat
from tablier_client.play.app import LobbyScreen, MatchScreen, PlayApp, ReplayScreen, Start
from tablier_client.v1 import qwirkle_pb2, service_pb2

from .conftest import GAME_IDS

WAIT = 20.0  # seconds: the deadline of any single wait below
MATCH_DEADLINE = 180.0  # seconds: a whole match played through the screen
SIZE = (170, 50)

# Small matches: each game's own options for a short match, declared in its folder (its test
# data's `short`).
SMALL = {g: dict(_core.short_options(g)) for g in GAME_IDS}


async def until(pilot: Pilot[Any], condition: Callable[[], object], what: str, timeout: float = WAIT) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.02)


def text(app: PlayApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def open_lobby(pilot: Pilot[Any]) -> LobbyScreen:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
    lobby = app.screen
    assert isinstance(lobby, LobbyScreen)
    return lobby


async def create_from_lobby(pilot: Pilot[Any], game: str, options: dict[str, str]) -> MatchScreen:
    """Picks `game` with the arrow keys, types its options, creates it with bots for the
    other seats (the lobby's default) and waits for the match screen."""
    lobby = await open_lobby(pilot)
    games_list = lobby.query_one("#games", OptionList)
    games_list.focus()
    for _ in range(GAME_IDS.index(game)):
        await pilot.press("down")
    await until(pilot, lambda: lobby.game_type.id == game, "the game highlighted")
    await until(pilot, lambda: all(lobby.query(f"#opt-{name}") for name in options), "its options")
    for name, value in options.items():
        field = lobby.query_one(f"#opt-{name}", Input)
        field.focus()
        await pilot.press("ctrl+a", "backspace", *value)
        assert field.value == value
    # The options (with their descriptions) may have scrolled the form: back to the button.
    lobby.query_one("#create").scroll_visible(animate=False)
    await pilot.pause()
    await pilot.click("#create")
    await until(pilot, lambda: isinstance(pilot.app.screen, MatchScreen), "the match screen")
    screen = pilot.app.screen
    assert isinstance(screen, MatchScreen)
    await until(pilot, lambda: screen.state is not None, "the first state")
    return screen


def ready(screen: MatchScreen) -> bool:
    """The match is over, or it is the seat's turn and the moves offered are this state's."""
    state = screen.state
    if state is None:
        return False
    if state.over:
        return True
    moves = screen.query_one("#moves", OptionList)
    return state.my_turn and screen.moves_seq == state.seq and moves.option_count > 0


@pytest.mark.parametrize("game", GAME_IDS)
def test_a_whole_match_against_bots_through_the_screen(server, game):
    # A whole match through the screen can outlast the suite's 60 s deadline for one async
    # test on a busy machine; it has its own.
    asyncio.run(asyncio.wait_for(whole_match(server, game), MATCH_DEADLINE))


async def whole_match(server, game):
    rng = random.Random(f"tablier-play-{game}")
    app = PlayApp(server.address, tls=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await create_from_lobby(pilot, game, SMALL[game])
        assert screen.state is not None and screen.state.seat == 0
        played = 0
        while True:
            await until(pilot, lambda: ready(screen), f"move {played + 1} or the end")
            state = screen.state
            assert state is not None
            if state.over:
                break
            moves = screen.query_one("#moves", OptionList)
            assert app.focused is moves
            # The moves are labelled in words, not dumped messages.
            labels = [str(moves.get_option_at_index(i).prompt) for i in range(moves.option_count)]
            assert all(label and "{" not in label for label in labels), labels
            for _ in range(rng.randrange(min(moves.option_count, 3))):
                await pilot.press("down")
            seq = state.seq
            chosen = screen.moves[moves.highlighted or 0]
            await pilot.press("enter")
            await until(pilot, lambda: screen.state is not None and screen.state.seq > seq
                        or screen.last_error is not None, "the move played")
            assert screen.last_error is None, screen.last_error
            assert "Played: " in text(app, "#message")
            played += 1
            assert played < 2_000, "the match did not end"
        final = screen.state
        assert final is not None and final.over and final.outcome is not None
        assert "Match over" in str(screen.query_one("#moves-label").render())
        assert screen.query_one("#moves", OptionList).option_count == 0
        game_id = final.game_id

    # What the screen showed is what the server holds: a finished match in which seat 0
    # (this player) and seat 1 (the server's bot) both moved.
    async with connect(server.address, tls=False) as client:
        audit = client.match(game_id, games.BY_ID[game], auditor=True)
        state = await audit.state()
        assert state.over and state.seq == final.seq
        acting = {e.seat for e in await audit.events() if e.seat is not None}
        assert {0, 1} <= acting
    assert played > 0 and isinstance(chosen, games.BY_ID[game].action)


async def test_lobby_lists_the_servers_games_with_their_options(server):
    app = PlayApp(server.address, tls=False)
    async with app.run_test(size=SIZE) as pilot:
        lobby = await open_lobby(pilot)
        games_list = lobby.query_one("#games", OptionList)
        assert [games_list.get_option_at_index(i).id for i in range(games_list.option_count)] == GAME_IDS
        games_list.focus()
        for game in GAME_IDS[1:]:
            await pilot.press("down")
            await until(pilot, lambda: lobby.game_type.id == game, game)
            await until(pilot, lambda: len(lobby.query(".option")) == len(lobby.game_type.options), f"{game} options")
            assert lobby.query_one("#seats", Input).value == str(lobby.game_type.min_players)
        # An option the server refuses comes back in words, and no match screen opens.
        bad = lobby.query_one(f"#opt-{lobby.game_type.options[0].name}", Input)
        bad.focus()
        await pilot.press("ctrl+a", "backspace", *"nonsense")
        await pilot.click("#create")
        await until(pilot, lambda: "Not understood" in text(app, "#message"), "the refusal")
        assert isinstance(app.screen, LobbyScreen)


async def test_a_refused_move_is_explained_and_changes_nothing(server):
    app = PlayApp(server.address, tls=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await create_from_lobby(pilot, "qwirkle", {})
        await until(pilot, lambda: ready(screen), "the first move")
        assert screen.state is not None
        seq, offered = screen.state.seq, list(screen.moves)
        await pilot.press("ctrl+t")
        typed = screen.query_one("#typed", Input)
        assert app.focused is typed
        await pilot.press(*"pass {}", "enter")
        await until(pilot, lambda: screen.last_error is not None, "the refusal")
        message = text(app, "#message")
        # What kind of no, the rule's own words, and the machine reason.
        assert message.startswith("Refused: "), message
        reason = message.rsplit("[", 1)[1].rstrip("]")
        assert reason and reason.isupper(), message
        assert len(message) > len("Refused: ") + len(reason) + 4
        assert screen.state.seq == seq and screen.moves == offered
        # A move that does not parse is caught before it is sent.
        await pilot.press("ctrl+a", "backspace", *"no such move", "enter")
        await until(pilot, lambda: "Could not read" in text(app, "#message"), "the parse error")
        # A legal move still plays: narrowed by a word of its label, then chosen.
        moves = screen.query_one("#moves", OptionList)
        moves.focus()
        word = str(moves.get_option_at_index(moves.option_count - 1).prompt).split()[-2]
        await pilot.press("slash", *word)
        await until(pilot, lambda: all(word in str(moves.get_option_at_index(i).prompt)
                                       for i in range(moves.option_count)), "the filtered moves")
        assert 0 < moves.option_count <= len(offered)
        chosen = screen.moves[int(moves.get_option_at_index(0).id or 0)]
        await pilot.press("enter", "enter")
        await until(pilot, lambda: screen.state is not None and screen.state.seq > seq, "the move")
        assert "Played: " in text(app, "#message") and screen.last_error is None
        assert chosen in offered


async def test_a_spectator_sees_the_match_move(server):
    async with connect(server.address, tls=False) as client:
        created = await client.create(games.CARRE, seats=2)
        game_id = created.game_id
        app = PlayApp(server.address, tls=False, start=Start(watch=game_id))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, MatchScreen) and app.screen.state is not None,
                        "the match")
            screen = app.screen
            assert isinstance(screen, MatchScreen)
            assert screen.state is not None and screen.state.seat is None
            assert "spectator" in text(app, "#title") and screen.moves == []
            seq = screen.state.seq
            seat = created.seats[screen.state.to_act[0]]
            suggestion = await seat.suggest()
            await seat.play(suggestion.action)
            await until(pilot, lambda: screen.state is not None and screen.state.seq > seq, "the move seen")
            log = "\n".join(str(line.text) for line in screen.query_one("#log").lines)
            assert "placed" in log or "discarded" in log or "went out" in log, log
            # A match in progress is replayed as the viewer sees it (here: the public view).
            await pilot.press("ctrl+e")
            await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown_seq,
                        "the replay")
            assert "spectator" in text(app, "#title")
        # Asked for by id, too: the auditor view is refused before the end, the public one is shown.
        app = PlayApp(server.address, tls=False, start=Start(replay=game_id))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown_seq,
                        "the replay")
            assert "spectator" in text(app, "#title")


async def test_open_and_invited_seats_are_joined_from_the_lobby(server):
    app = PlayApp(server.address, tls=False)
    async with app.run_test(size=SIZE) as pilot:
        lobby = await open_lobby(pilot)
        games_list = lobby.query_one("#games", OptionList)
        games_list.focus()
        for _ in range(GAME_IDS.index("carre")):
            await pilot.press("down")
        await until(pilot, lambda: lobby.game_type.id == "carre", "Carré highlighted")
        # The second choice of "the other seats": open.
        others = lobby.query_one("#others", Select)
        others.focus()
        await pilot.press("enter", "down", "enter")
        await until(pilot, lambda: others.value == "open", "open seats chosen")
        await pilot.click("#create")
        await until(pilot, lambda: isinstance(app.screen, MatchScreen) and app.screen.state is not None, "the match")
        host = app.screen
        assert isinstance(host, MatchScreen) and host.state is not None
        game_id = host.state.game_id
        assert f"--join {game_id}" in text(app, "#message")
        assert [s.status for s in host.state.seats] == [service_pb2.SEAT_STATUS_TAKEN, service_pb2.SEAT_STATUS_OPEN]

    async with connect(server.address, tls=False) as client:
        invited = await client.create(games.CARRE, 2, assignments=[invited_seat(), creator_seat()])
        code = invited.invite_codes[0]
    for seat, key in ((1, game_id), (0, code)):
        app = PlayApp(server.address, tls=False)
        async with app.run_test(size=SIZE) as pilot:
            lobby = await open_lobby(pilot)
            lobby.query_one("#game-id", Input).focus()
            await pilot.press(*key)
            await pilot.click("#join")
            await until(pilot, lambda: isinstance(app.screen, MatchScreen) and app.screen.state is not None,
                        "the joined match")
            # 0-based on the wire, 1-based for people.
            assert app.screen.state.seat == seat and f"seat {seat + 1}" in text(app, "#title")
            # The code was good once: joining with it again is refused, in words.
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby again")
            await pilot.click("#join")
            await until(pilot, lambda: text(app, "#message").strip() != "", "the second join's answer")
            assert "[" in text(app, "#message"), text(app, "#message")


async def test_replay_steps_through_a_finished_match(server):
    async with connect(server.address, tls=False) as client:
        created = await client.create(games.CARRE, seats=2, options={"rounds_per_match": "1"})
        state = created.state
        while not state.over:
            seat = created.seats[state.to_act[0]]
            suggestion = await seat.suggest()
            state = (await seat.play(suggestion.action, expected_seq=suggestion.seq)).state
        events = await created.seats[0].events()

    app = PlayApp(server.address, tls=False)
    async with app.run_test(size=SIZE) as pilot:
        lobby = await open_lobby(pilot)
        lobby.query_one("#game-id", Input).focus()
        await pilot.press(*created.game_id)
        await pilot.click("#replay")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown_seq, "the replay")
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        assert [e.seq for e in replay.events] == [e.seq for e in events]
        assert replay.shown_seq == events[0].seq
        # The finished match is replayed as the auditor: both hands are on the table.
        assert "auditor" in text(app, "#title")
        for step in range(1, 4):
            await pilot.press("right")
            await until(pilot, lambda: replay.shown_seq == events[step].seq, f"step {step}")
        shown = replay.states[replay.shown_seq]
        assert shown.seq == events[3].seq and not shown.over
        assert all(len(p.hand) == p.hand_count for p in shown.view.players)
        await pilot.press("left")
        await until(pilot, lambda: replay.shown_seq == events[2].seq, "a step back")
        await pilot.press("end")
        await until(pilot, lambda: replay.shown_seq == events[-1].seq, "the last event")
        assert replay.states[replay.shown_seq].over
        assert "Match over" in text(app, "#message")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), "back in the lobby")


def test_every_drawing_is_a_games_and_a_game_without_one_is_shown_as_text():
    """A drawing is optional (docs/adding-a-game.md): each one names a registered game, and a game
    without one is shown as its view's fields."""
    from google.protobuf import text_format
    from tablier_client.play.games import DRAWINGS, draw

    assert sorted(GAME_IDS) == sorted(games.BY_ID)
    assert set(DRAWINGS) <= set(GAME_IDS)
    view = qwirkle_pb2.View(to_act=[1], current_seat=1, bag_count=42)
    shown = draw("a_game_without_a_drawing", view, 0)
    assert getattr(shown, "plain", None) == text_format.MessageToString(view) and "bag_count: 42" in shown.plain
