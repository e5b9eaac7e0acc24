"""The terminal player (textual): a lobby, a match screen (the table drawn from the view the
server sent, the seat's legal moves from ListLegalMoves, refusals in words, the events as they
happen) and a replay stepper. Everything goes through the SDK; no rule is decided here."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from google.protobuf import text_format
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Footer, Input, Label, OptionList, RichLog, Select, Static
from textual.widgets.option_list import Option

from .. import errors
from ..sdk import Client, Event, Match, State, bot_seat, connect, creator_seat
from ..v1 import common_pb2, ranked_pb2
from . import games as drawings
from .mine import describe
from .seating import create_match, join_match

# Refusal reasons of the service itself, in words (a game's own reasons come with the
# core's message, which is shown as it is).
REASONS = {
    "NOT_YOUR_TURN": "it is not your turn",
    "SEQ_CONFLICT": "the match moved on before the move arrived",
    "SEQ_MISMATCH": "the match moved on before the move arrived",
    "WRONG_PAYLOAD_TYPE": "that is not a move of this game",
    "MALFORMED": "the move could not be read",
    "GAME_OVER": "the match is over",
    "SEAT_TAKEN": "someone took that seat first",
    "SEAT_NOT_OPEN": "that seat is not open",
    "NO_OPEN_SEAT": "no seat is open",
    "BAD_INVITE_CODE": "that invite code is not valid (or was used)",
    "UNKNOWN_MATCH": "there is no such match",
    "MATCH_NOT_OVER": "the match is not over yet",
}

HEADS: dict[type[errors.TablierError], str] = {
    errors.Refused: "Refused",
    errors.InvalidArgument: "Not understood",
    errors.Conflict: "Too late",
    errors.NotFound: "Not found",
    errors.PermissionDenied: "Not allowed",
    errors.Unauthenticated: "Not signed in",
    errors.OutOfRange: "Out of range",
    errors.Unavailable: "Server unreachable",
    errors.AlreadyExists: "Already done",
}


def explain(exc: errors.TablierError) -> Text:
    """A refusal in words: what kind of no, the server's message, and the machine reason."""
    head = HEADS.get(type(exc), "Error")
    words = REASONS.get(exc.reason)
    out = Text(f"{head}: ", style="bold red")
    out.append(exc.message or words or exc.code.name)
    if words and exc.message and words not in exc.message.lower():
        out.append(f" — {words}")
    if exc.reason:
        out.append(f"  [{exc.reason}]", style="grey50")
    return out


def outcome_text(state: State[Any], me: int | None) -> Text:
    o = state.outcome
    if o is None:
        return Text("Match over.", style="bold")

    def name(seat: int) -> str:
        return drawings.common.seat_name(seat, me)

    scores = ", ".join(f"{name(s)} {v}" for s, v in enumerate(o.scores))
    who = ", ".join(name(w) for w in o.winners) or "nobody"
    better = " (lower is better)" if o.lower_is_better else ""
    verdict = "stopped by an administrative cap" if o.aborted else f"won by {who}"
    return Text(
        f"Match over, {verdict}. Scores{better}: {scores}."
        # How it ended, in the game's words (Outcome.description; a server without it: none).
        + (f" {o.description}" if o.description else ""),
        style="bold",
    )


def rating_words(change: ranked_pb2.RatingChange, rank: int = 0) -> str:
    """A rated match's change for its player: "Rating +23 → 1,540 (rank 4)"."""
    delta = change.rating_after - change.rating_before
    return f"Rating {delta:+d} → {change.rating_after:,}" + (f" (rank {rank})" if rank else "")


# --------------------------------------------------------------------------- match screen


def players(t: common_pb2.GameType) -> str:
    """ "2 players", "2 to 4 players"."""
    if t.min_players == t.max_players:
        return f"{t.min_players} players"
    return f"{t.min_players} to {t.max_players} players"


class MatchScreen(Screen[None]):
    """One match, seen by one credential: a seat (moves offered), or a spectator."""

    BINDINGS = [
        Binding("escape", "leave", "Lobby"),
        Binding("ctrl+r", "refresh", "Refresh"),
        Binding("slash", "filter", "Filter moves"),
        Binding("ctrl+t", "type_move", "Type a move"),
        Binding("ctrl+e", "replay", "Replay"),
    ]

    def __init__(self, client: Client, handle: Match[Any, Any, Any], *, note: str | Text = "") -> None:
        super().__init__()
        self.client = client
        self.handle = handle
        self.game = handle.kind.id if handle.kind else ""
        self.note = note
        self.state: State[Any] | None = None
        self.moves: list[Any] = []
        self.labels: list[Text] = []
        self.moves_seq = -1
        self.preview: Any = None
        self.last_error: Text | None = None
        # One ListLegalMoves at a time, each for the state current when it starts.
        self._moves_lock = asyncio.Lock()
        self._redraw_due = False
        self._table_shape: tuple[int, int] | None = None
        # A ranked match's rating change for the signed-in player, once rated.
        self.rating_note = ""
        self._rating_task: asyncio.Task[None] | None = None

    @property
    def me(self) -> int | None:
        return self.state.seat if self.state is not None else None

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Horizontal():
            with VerticalScroll(id="table-box"):
                yield Static(id="table")
            with Vertical(id="side"):
                yield Label("Your moves", id="moves-label")
                yield Input(placeholder="/ filter the moves: words of their labels", id="filter")
                yield OptionList(id="moves")
                yield Input(placeholder="type a move (protobuf text), Enter to play", id="typed")
                yield Static(id="message")
                yield RichLog(id="log", wrap=True, markup=False, max_lines=500)
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one("#typed", Input).display = False
        try:
            self.state = await self.handle.state()
        except errors.TablierError as exc:
            self.show_error(exc)
            return
        self.query_one("#filter", Input).display = self.state.seat is not None
        log = self.query_one("#log", RichLog)
        with contextlib.suppress(errors.TablierError):
            for event in (await self.handle.events())[-30:]:
                log.write(self._event_text(event))
        if self.note:
            self.show_info(self.note)
        self.redraw()
        await self.refresh_moves()
        self.watch_match()

    # ------------------------------------------------------------------ drawing

    def _event_text(self, event: Event[Any]) -> Text:
        """An event in the game's own words, as the server sent them for this viewer."""
        return Text(f"{event.seq:>4} ", style="grey50").append(str(event))

    def redraw_soon(self) -> None:
        """One redraw for a burst of events (a bot's move is several), not one per event."""
        if not self._redraw_due:
            self._redraw_due = True
            self.set_timer(0.05, self.redraw)

    def redraw(self) -> None:
        self._redraw_due = False
        state = self.state
        if state is None:
            return
        drawings.common.set_names(state.seats)
        who = (
            f"seat {state.seat + 1}"
            + (f" ({drawings.common._names[state.seat]})" if state.seat in drawings.common._names else "")
            if state.seat is not None
            else "auditor"
            if state.role == 3
            else "spectator"
        )
        to_act = ", ".join(drawings.common.seat_name(s, state.seat) for s in state.to_act) or "—"
        title = Text(f" {self.game}  ", style="bold").append(
            f"match {state.game_id}   you are {who}   event {state.seq}   to act: {to_act}"
        )
        self.query_one("#title", Static).update(title, layout=False)
        drawing = drawings.draw(self.game, state.view, state.seat, self.preview)
        shape = drawings.shape(drawing)
        self.query_one("#table", Static).update(drawing, layout=shape is None or shape != self._table_shape)
        self._table_shape = shape
        label = self.query_one("#moves-label", Label)
        if state.over:
            if state.raw.ranked and self.client.credential and self._rating_task is None:
                self._rating_task = asyncio.get_running_loop().create_task(self._fetch_rating(state.game_id))
            text = outcome_text(state, state.seat)
            if self.rating_note:
                text.append(f"  {self.rating_note}", style="bold cyan")
            label.update(text, layout=False)
        elif state.seat is None:
            label.update("Spectating (no seat)", layout=False)
        elif state.my_turn:
            label.update(
                Text(f"Your move: {len(self.moves)} legal — Enter plays the highlighted one", style="bold green"),
                layout=False,
            )
        else:
            label.update(f"Waiting for {to_act}", layout=False)

    async def _fetch_rating(self, game_id: str) -> None:
        """The player's rating change from this ranked match, shown on the end screen once the
        server rated it (a moment after the last move)."""
        for _ in range(50):
            try:
                history = await self.client.rating_history(self.game, limit=20)
            except errors.TablierError:
                return
            for entry in history.entries:
                if entry.event.game_id == game_id:
                    self.rating_note = rating_words(entry.change, history.current.rank)
                    self.redraw()
                    return
            await asyncio.sleep(0.2)

    async def refresh_moves(self) -> None:
        async with self._moves_lock:
            # A screen closed while its moves were asked for has no list left to fill.
            with contextlib.suppress(NoMatches):
                await self._refresh_moves()

    async def _refresh_moves(self) -> None:
        state = self.state
        moves_list = self.query_one("#moves", OptionList)
        if state is None or state.seat is None or state.over or not state.my_turn:
            self.moves, self.moves_seq, self.labels = [], state.seq if state else -1, []
            moves_list.clear_options()
            self.preview = None
            self.redraw_soon()
            return
        if self.moves_seq == state.seq:
            return
        try:
            listed = await self.handle.legal_moves()
        except errors.TablierError as exc:
            self.show_error(exc)
            return
        self.moves, self.moves_seq = listed.moves, listed.seq
        self.labels = [Text(label) for label in listed.labels]
        self.query_one("#filter", Input).value = ""
        self.list_moves()
        if self.moves and not isinstance(self.focused, Input):
            moves_list.focus()
        self.redraw_soon()

    def list_moves(self) -> None:
        """The legal moves whose label holds every word of the filter (e.g. `blue (2,-1)`)."""
        words = self.query_one("#filter", Input).value.lower().split()
        moves_list = self.query_one("#moves", OptionList)
        moves_list.clear_options()
        moves_list.add_options(
            Option(label, id=str(i))
            for i, label in enumerate(self.labels)
            if all(w in label.plain.lower() for w in words)
        )
        if moves_list.option_count:
            moves_list.highlighted = 0
            self.preview = self.moves[int(moves_list.get_option_at_index(0).id or 0)]
        else:
            self.preview = None

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        self.list_moves()
        self.redraw()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one("#moves", OptionList).focus()

    def show_error(self, exc: errors.TablierError) -> None:
        self.last_error = explain(exc)
        self.query_one("#message", Static).update(self.last_error, layout=False)

    def show_info(self, text: str | Text) -> None:
        self.last_error = None
        self.query_one("#message", Static).update(text, layout=False)

    # ------------------------------------------------------------------ following the match

    @work(group="watch")
    async def watch_match(self) -> None:
        assert self.state is not None
        log = self.query_one("#log", RichLog)
        try:
            async for update in self.handle.watch(after_seq=self.state.seq, batches=True):
                if self.state is None or update.state.seq > self.state.seq:  # not one our move returned
                    self.state = update.state
                log.write(self._event_text(update.event))
                self.redraw_soon()
                await self.refresh_moves()
        except errors.TablierError as exc:
            self.show_error(exc)
        # The stream ends with the match: show the final state as the viewer sees it (unless
        # the screen was closed meanwhile: nothing left to draw on).
        with contextlib.suppress(errors.TablierError):
            self.state = await self.handle.state()
        await self.refresh_moves()
        with contextlib.suppress(NoMatches):
            self.redraw()

    # ------------------------------------------------------------------ playing

    @on(OptionList.OptionHighlighted, "#moves")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        index = int(event.option.id or 0)
        if index < len(self.moves):
            self.preview = self.moves[index]
            self.redraw()

    @on(OptionList.OptionSelected, "#moves")
    async def _selected(self, event: OptionList.OptionSelected) -> None:
        index = int(event.option.id or 0)
        if index < len(self.moves):
            await self.play(self.moves[index])

    @on(Input.Submitted, "#typed")
    async def _typed(self, event: Input.Submitted) -> None:
        if self.handle.kind is None:
            return
        action = self.handle.kind.action()
        try:
            text_format.Parse(event.value, action)
        except text_format.ParseError as exc:
            self.show_info(Text(f"Could not read that move: {exc}", style="bold red"))
            return
        await self.play(action)

    async def play(self, action: Any) -> None:
        try:
            played = await self.handle.play(action)
        except errors.TablierError as exc:
            self.show_error(exc)
            return
        said = next(
            (label for move, label in zip(self.moves, self.labels, strict=False) if move == action), Text("your move")
        )
        self.show_info(Text("Played: ").append_text(said))
        if self.state is None or played.state.seq > self.state.seq:
            self.state = played.state
        self.preview = None
        self.redraw()
        await self.refresh_moves()

    # ------------------------------------------------------------------ keys

    def action_leave(self) -> None:
        self.app.pop_screen()

    async def action_refresh(self) -> None:
        self.state = await self.handle.state()
        self.moves_seq = -1
        await self.refresh_moves()
        self.redraw()

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_type_move(self) -> None:
        typed = self.query_one("#typed", Input)
        typed.display = not typed.display
        if typed.display:
            typed.focus()

    async def action_replay(self) -> None:
        state = self.state
        if state is None:
            return
        # Once the match is over anyone may replay it as the auditor (every hand shown);
        # before, the replay shows what this viewer may see.
        handle = self.client.match(state.game_id, self.handle.kind, auditor=True) if state.over else self.handle
        await self.app.push_screen(ReplayScreen(handle, me=state.seat))


# --------------------------------------------------------------------------- replay


class ReplayScreen(Screen[None]):
    """A match event by event: the list of events on the right, the table after the
    highlighted event on the left (GetView at that seq)."""

    BINDINGS = [
        Binding("escape", "leave", "Back"),
        Binding("right,n", "step(1)", "Next", priority=True),
        Binding("left,p", "step(-1)", "Previous", priority=True),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("f", "fork", "Play on from here"),
    ]

    def __init__(self, handle: Match[Any, Any, Any], *, me: int | None = None) -> None:
        super().__init__()
        self.handle = handle
        self.game = handle.kind.id if handle.kind else ""
        self.me = me
        self.events: list[Any] = []
        self.index = 0
        self.states: dict[int, State[Any]] = {}
        self.shown_seq = 0

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Horizontal():
            with VerticalScroll(id="table-box"):
                yield Static(id="table")
            with Vertical(id="side"):
                yield Label("Events (←/→ step, Home/End)", id="moves-label")
                yield OptionList(id="events")
                yield Static(id="message")
        yield Footer()

    async def on_mount(self) -> None:
        try:
            self.events = await self.handle.events()
        except errors.TablierError as exc:
            self.query_one("#message", Static).update(explain(exc))
            return
        listing = self.query_one("#events", OptionList)
        listing.add_options(
            Option(Text(f"{e.seq:>4} ", style="grey50").append(str(e)), id=str(i)) for i, e in enumerate(self.events)
        )
        listing.focus()
        if self.events:
            listing.highlighted = 0
            await self.show(0)

    async def show(self, index: int) -> None:
        if not self.events:
            return
        self.index = max(0, min(index, len(self.events) - 1))
        seq = self.events[self.index].seq
        if seq not in self.states:
            try:
                self.states[seq] = await self.handle.state(at_seq=seq)
            except errors.TablierError as exc:
                self.query_one("#message", Static).update(explain(exc))
                return
        state = self.states[seq]
        self.shown_seq = seq
        drawings.common.set_names(state.seats)
        who = (
            "auditor: every card shown"
            if self.handle.auditor
            else (f"seat {state.seat + 1}" if state.seat is not None else "spectator")
        )
        self.query_one("#title", Static).update(
            Text(f" {self.game}  ", style="bold").append(
                f"replay of {state.game_id} ({who})   event {seq} of {self.events[-1].seq}"
            )
        )
        self.query_one("#table", Static).update(drawings.draw(self.game, state.view, state.seat))
        self.query_one("#message", Static).update(outcome_text(state, state.seat) if state.over else Text(""))

    @on(OptionList.OptionHighlighted, "#events")
    async def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        await self.show(int(event.option.id or 0))

    def action_step(self, delta: int) -> None:
        listing = self.query_one("#events", OptionList)
        # From the highlighted event, not the one shown: keys pressed quickly all count.
        listing.highlighted = max(0, min((listing.highlighted or 0) + delta, len(self.events) - 1))

    def action_jump(self, where: int) -> None:
        listing = self.query_one("#events", OptionList)
        listing.highlighted = where if where >= 0 else len(self.events) - 1

    def action_leave(self) -> None:
        self.app.pop_screen()

    async def action_fork(self) -> None:
        """Play on from the step shown: a fork of the match there (never rated), the seat to
        act there yours (or your own seat), the server's bots at the others."""
        state = self.states.get(self.shown_seq)
        if state is None:
            return
        try:
            handle, note = await play_on(self.handle, state, self.me)
        except errors.TablierError as exc:
            self.query_one("#message", Static).update(explain(exc))
            return
        await self.app.push_screen(MatchScreen(handle.client, handle, note=note))


async def play_on(
    parent: Match[Any, Any, Any], state: State[Any], me: int | None = None
) -> tuple[Match[Any, Any, Any], str]:
    """A fork of `parent` at `state`'s seq to play on: from the auditor's state when `parent`
    reads as the auditor (a finished match), else from seat `me`'s knowledge; `me` (default:
    the seat to act there) is the player's, the server's bots play the others. The handle of
    the player's seat and a line saying what it is."""
    mine = me if me is not None else (state.to_act[0] if state.to_act else 0)
    seats = [creator_seat() if s == mine else bot_seat() for s in range(state.seat_count)]
    created = await parent.client.fork(
        parent.game_id,
        state.seq,
        seat=None if parent.auditor else mine,
        auditor=parent.auditor,
        assignments=seats,
        token=parent.token,
    )
    whose = "every card as it lay" if parent.auditor else f"what seat {mine} knew, the rest dealt afresh"
    note = f"a fork of {parent.game_id[:8]} from event {state.seq} ({whose}): you are seat {mine}; never rated"
    return created.seats[mine], note


async def replay_handle(client: Client, game_id: str) -> Match[Any, Any, Any]:
    """A finished match is replayed as the auditor (every card shown), and so is one in
    progress with the auditor's token (the client's); otherwise as a spectator sees it."""
    try:
        return await client.open(game_id, token=client.token, auditor=True)
    except errors.PermissionDenied:
        return await client.open(game_id)


# --------------------------------------------------------------------------- lobby


class LobbyScreen(Screen[None]):
    """Pick a game, its options and who fills the other seats; or join, watch or replay a
    match by its id (or invite code)."""

    BINDINGS = [Binding("ctrl+q", "app.quit", "Quit")]

    def __init__(self, client: Client, types: list[common_pb2.GameType]) -> None:
        super().__init__()
        self.client = client
        self.types = types

    def compose(self) -> ComposeResult:
        me = self.client.player
        title = " tablier — lobby" + (f" — {me.display_name}" if me is not None else "")
        yield Static(Text(title, style="bold"), id="title")
        with Horizontal():
            with Vertical(id="games-box"):
                yield Label("Game")
                yield OptionList(*(Option(f"{t.name} ({players(t)})", id=t.id) for t in self.types), id="games")
                if me is not None:
                    yield Label("My matches (Enter: open)")
                    yield OptionList(id="mine")
            with VerticalScroll(id="form"):
                yield Label("Seats")
                yield Input(id="seats", type="integer")
                yield Label("The other seats")
                yield Select(
                    [
                        ("bots (the server plays them)", "bots"),
                        ("open (anyone may join)", "open"),
                        ("invited (a code for each)", "invite"),
                    ],
                    id="others",
                    allow_blank=False,
                )
                yield Label("Bot")
                yield Select([], id="bot", allow_blank=True, prompt="the strongest")
                yield Button("Create and play", id="create", variant="primary")
                yield Static(id="message")
                yield Label("Game id, or an invite code")
                yield Input(id="game-id", placeholder="game id or invite code")
                with Horizontal(id="by-id"):
                    yield Button("Join", id="join")
                    yield Button("Watch", id="watch")
                    yield Button("Replay", id="replay")
                yield Label("Options of the new match (empty: the default)")
                yield Vertical(id="options")
        yield Footer()

    async def on_mount(self) -> None:
        games_list = self.query_one("#games", OptionList)
        games_list.highlighted = 0
        games_list.focus()
        if self.client.player is not None:
            await self.list_mine()

    async def list_mine(self) -> None:
        """The signed-in player's matches, from the server (any device shows the same)."""
        try:
            page, _ = await self.client.my_matches(page_size=50)
        except errors.TablierError as exc:
            self.message(explain(exc))
            return
        mine = self.query_one("#mine", OptionList)
        mine.clear_options()
        mine.add_options([Option(describe(g), id=g.game_id) for g in page])

    @on(OptionList.OptionSelected, "#mine")
    async def open_mine(self, event: OptionList.OptionSelected) -> None:
        game_id = event.option.id or ""
        try:
            handle = await self.client.open(game_id, token=self.client.credential)
        except errors.TablierError as exc:
            self.message(explain(exc))
            return
        await self.app.push_screen(MatchScreen(self.client, handle))

    @property
    def game_type(self) -> common_pb2.GameType:
        index = self.query_one("#games", OptionList).highlighted or 0
        return self.types[index]

    @on(OptionList.OptionHighlighted, "#games")
    async def _game_changed(self) -> None:
        t = self.game_type
        self.query_one("#seats", Input).value = str(t.min_players)
        self.query_one("#bot", Select).set_options([(b, b) for b in t.bots])
        box = self.query_one("#options", Vertical)
        await box.remove_children()
        widgets: list[Widget] = []
        if t.summary:
            widgets.append(Label(Text(t.summary, style="italic")))
        for option in t.options:
            widgets.append(
                Label(
                    Text(option.label or option.name.replace("_", " "), style="bold").append(
                        f" — {option.description}", style="grey62"
                    )
                )
            )
            hint = option.default_value or "(empty)"
            if option.allowed_values:
                hint += " (one of: " + ", ".join(option.allowed_values) + ")"
            widgets.append(
                Input(
                    drawings.lobby_default(t.id, option.name),
                    placeholder=hint,
                    id=f"opt-{option.name}",
                    classes="option",
                )
            )
        await box.mount_all(widgets)

    @on(OptionList.OptionSelected, "#games")
    def _game_chosen(self) -> None:
        self.query_one("#seats", Input).focus()

    def options(self) -> dict[str, str]:
        out = {}
        for option in self.game_type.options:
            value = self.query_one(f"#opt-{option.name}", Input).value.strip()
            if value:
                out[option.name] = value
        return out

    def message(self, text: str | Text) -> None:
        self.query_one("#message", Static).update(text)

    @on(Button.Pressed, "#create")
    @on(Input.Submitted, "#seats")
    @on(Input.Submitted, ".option")
    async def create(self) -> None:
        t = self.game_type
        try:
            seats = int(self.query_one("#seats", Input).value or t.min_players)
        except ValueError:
            seats = t.min_players
        others = str(self.query_one("#others", Select).value)
        bot = self.query_one("#bot", Select).value
        try:
            seated = await create_match(
                self.client, t.id, seats, self.options(), others=others, bot="" if bot is Select.NULL else str(bot)
            )
        except errors.TablierError as exc:
            self.message(explain(exc))
            return
        note: str | Text = ""
        if others == "open":
            note = f"Open seats: others join with  tablier play --join {seated.handle.game_id}"
        elif others == "invite":
            note = "Invite codes (one per seat, each good once): " + "  ".join(
                f"seat {seat + 1}: {code}" for seat, code in enumerate(seated.invite_codes) if code
            )
        await self.app.push_screen(MatchScreen(self.client, seated.handle, note=note))

    def _game_id(self) -> str:
        return self.query_one("#game-id", Input).value.strip()

    @on(Button.Pressed, "#join")
    async def join(self) -> None:
        try:
            handle = await join_match(self.client, self._game_id())
        except errors.TablierError as exc:
            self.message(explain(exc))
            return
        await self.app.push_screen(MatchScreen(self.client, handle))

    @on(Input.Submitted, "#game-id")
    @on(Button.Pressed, "#watch")
    async def watch_game(self) -> None:
        try:
            handle = await self.client.open(self._game_id())
        except errors.TablierError as exc:
            self.message(explain(exc))
            return
        await self.app.push_screen(MatchScreen(self.client, handle))

    @on(Button.Pressed, "#replay")
    async def replay(self) -> None:
        try:
            handle = await replay_handle(self.client, self._game_id())
        except errors.TablierError as exc:
            self.message(explain(exc))
            return
        await self.app.push_screen(ReplayScreen(handle))


# --------------------------------------------------------------------------- app


@dataclass
class Start:
    """What the player opens on: the lobby, or straight into a match."""

    watch: str = ""
    join: str = ""
    replay: str = ""
    game_id: str = ""
    token: str = ""
    # Sign in: a new guest player of this name, or the player of a kept credential.
    name: str = ""
    credential: str = ""
    # Play on from event `at` of match `fork` (a fork of it, never rated).
    fork: str = ""
    at: int = 0


class PlayApp(App[None]):
    TITLE = "tablier play"
    CSS = """
    #title { height: 1; background: $primary-background; }
    #table-box { width: 1fr; padding: 0 1; }
    #side { width: 42%; min-width: 40; max-width: 72; border-left: solid $primary; }
    #moves { height: 2fr; min-height: 6; }
    #events { height: 1fr; min-height: 6; }
    #filter { border: none; height: 1; padding: 0 1; }
    #moves-label { padding: 0 1; height: 2; width: 100%; }
    #message { height: 4; padding: 0 1; }
    #log { height: 1fr; min-height: 5; border-top: solid $primary; }
    #games-box { width: 36; }
    #games { height: 1fr; }
    #mine { height: 1fr; }
    #form { width: 1fr; padding: 0 1; }
    #form Input { width: 40; }
    #form Select { width: 48; }
    #by-id { height: 3; }
    #options { height: auto; }
    #options Label { width: 1fr; }
    #by-id Button { margin-right: 1; }
    """

    def __init__(
        self,
        target: str,
        *,
        tls: bool | None = None,
        root_certificates: bytes | None = None,
        auditor_token: str | None = None,
        start: Start | None = None,
    ) -> None:
        super().__init__()
        self.target = target
        self.tls = tls
        self.root_certificates = root_certificates
        self.auditor_token = auditor_token
        self.start = start or Start()
        self.client: Client | None = None

    async def on_mount(self) -> None:
        try:
            self.client = await connect(
                self.target, tls=self.tls, root_certificates=self.root_certificates, token=self.auditor_token
            )
            types = await self.client.game_types()
        except (errors.TablierError, OSError) as exc:
            self.exit(return_code=1, message=f"cannot reach {self.target}: {exc}")
            return
        s = self.start
        try:
            if s.name:
                await self.client.sign_in_guest(s.name)
                self.notify(
                    f"Signed in as {s.name}. Keep your credential to come back from any device:"
                    f"  tablier play --credential {self.client.credential}",
                    timeout=30,
                )
            elif s.credential:
                await self.client.use_credential(s.credential)
        except errors.TablierError as exc:
            self.exit(return_code=1, message=f"cannot sign in: {explain(exc).plain}")
            return
        await self.push_screen(LobbyScreen(self.client, types))
        try:
            if s.watch:
                await self.push_screen(MatchScreen(self.client, await self.client.open(s.watch)))
            elif s.join:
                await self.push_screen(MatchScreen(self.client, await join_match(self.client, s.join)))
            elif s.replay:
                await self.push_screen(ReplayScreen(await replay_handle(self.client, s.replay)))
            elif s.fork:
                parent = await replay_handle(self.client, s.fork)
                handle, note = await play_on(parent, await parent.state(at_seq=s.at or None))
                await self.push_screen(MatchScreen(self.client, handle, note=note))
            elif s.game_id and (s.token or self.client.credential):
                token = s.token or self.client.credential
                await self.push_screen(MatchScreen(self.client, await self.client.open(s.game_id, token=token)))
        except errors.TablierError as exc:
            self.notify(explain(exc).plain, severity="error", timeout=10)

    async def on_unmount(self) -> None:
        if self.client is not None:
            await self.client.close()
