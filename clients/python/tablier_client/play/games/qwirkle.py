"""Qwirkle drawn: the board of tiles (colour and shape), each seat's score and hand size,
the viewer's hand, the bag. A highlighted move shows its cells on the board."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ...v1 import qwirkle_pb2 as pb
from .common import DIM, PREVIEW, Seat_name, seat_name, title_line, which

COLOURS = ["red", "orange", "yellow", "green", "blue", "purple"]
STYLES = ["bold red", "bold dark_orange", "bold yellow", "bold green", "bold dodger_blue1", "bold magenta"]
SHAPES = ["circle", "criss-cross", "diamond", "square", "starburst", "clover"]
GLYPHS = ["●", "✚", "◆", "■", "✸", "♣"]


def tile(tile_type: int) -> Text:
    colour, shape = divmod(tile_type, 6)
    return Text(GLYPHS[shape], style=STYLES[colour])


def tile_name(tile_type: int) -> Text:
    colour, shape = divmod(tile_type, 6)
    return Text(f"{GLYPHS[shape]} {COLOURS[colour]} {SHAPES[shape]}", style=STYLES[colour])


def _tiles(types: Any) -> Text:
    return Text(" ").join(tile_name(t) for t in types)


def action_label(action: pb.Action, view: pb.View, me: int | None) -> Text:
    name, inner = which(action)
    if name == "opening":
        return Text("Open with ").append_text(_tiles(inner.tile_types))
    if name == "play":
        out = Text("Play ")
        for i, p in enumerate(inner.placements):
            if i:
                out.append(", ")
            out.append_text(tile_name(p.tile_type)).append(f" at ({p.x},{p.y})")
        return out
    if name == "exchange":
        return Text("Exchange ").append_text(_tiles(inner.tile_types))
    if name == "pass":
        return Text("Pass (no play, bag empty)")
    return Text(str(action))


def event_label(event: pb.Event, me: int | None) -> Text:
    name, e = which(event)
    if name == "dealt":
        return Text("Six tiles dealt to every seat")
    if name == "announced":
        sizes = ", ".join(f"{seat_name(s, me)} {g}" for s, g in enumerate(e.group_sizes))
        opener = "yours" if me is not None and e.start_seat == me else f"seat {e.start_seat}'s"
        return Text(f"Largest groups: {sizes}; the opening play is {opener}")
    if name == "placed":
        out = Text(f"{Seat_name(e.seat, me)} {'opened with' if e.opening else 'played'} ")
        out.append_text(_tiles(p.tile_type for p in e.placements)).append(f" for {e.points} points")
        return out
    if name == "drew":
        return Text(f"{Seat_name(e.seat, me)} drew {e.count}")
    if name == "exchanged":
        return Text(f"{Seat_name(e.seat, me)} exchanged {e.count} tiles")
    if name == "passed":
        return Text(f"{Seat_name(e.seat, me)} passed")
    if name == "ended":
        reason = pb.EndReason.Name(e.reason).removeprefix("END_REASON_").replace("_", " ").lower()
        bonus = f", +{e.bonus} to {seat_name(e.bonus_seat, me)}" if e.bonus else ""
        return Text(f"Game over ({reason}{bonus}): " + ", ".join(str(s) for s in e.final_scores))
    return Text(name)


def _preview_cells(preview: pb.Action | None) -> dict[tuple[int, int], int]:
    if preview is None:
        return {}
    name, inner = which(preview)
    if name == "play":
        return {(p.x, p.y): p.tile_type for p in inner.placements}
    if name == "opening":
        return {(i, 0): t for i, t in enumerate(inner.tile_types)}
    return {}


def draw(view: pb.View, me: int | None, preview: pb.Action | None = None) -> RenderableType:
    phase = {pb.PHASE_TURN: "in play"}.get(
        view.phase, pb.Phase.Name(view.phase).removeprefix("PHASE_").replace("_", " ").lower()
    )
    lines: list[RenderableType] = [title_line(f"Qwirkle — {phase}", f"turn {view.turns}", f"bag {view.bag_count}")]
    for s in view.seats:
        row = Text(
            f"{'▶' if s.seat in view.to_act else ' '} {seat_name(s.seat, me):8} "
            f"score {s.score:3}   tiles {s.hand_count}",
            style="bold" if s.seat == me else "",
        )
        if s.hand_visible and s.seat != me:
            row.append("   ").append_text(Text(" ").join(tile(t) for t in s.hand_tile_types))
        lines.append(row)
    lines.append(Text(""))
    lines.append(_board(view, preview))
    lines.append(Text(""))
    mine = next((s for s in view.seats if s.seat == me and s.hand_visible), None)
    if mine is not None:
        hand = Text("Your hand: ")
        pending = list(_preview_cells(preview).values())
        if preview is not None and which(preview)[0] == "exchange":
            pending = list(which(preview)[1].tile_types)
        for t in mine.hand_tile_types:
            glyph = tile(t)
            if t in pending:
                pending.remove(t)
                glyph.stylize(PREVIEW)
            hand.append_text(glyph).append(" ")
        lines.append(hand)
    return Group(*lines)


def _board(view: pb.View, preview: pb.Action | None) -> RenderableType:
    cells = {(t.x, t.y): t.tile_type for t in view.board}
    new = _preview_cells(preview)
    every = set(cells) | set(new)
    if not every:
        return Text("(empty table: the opening play goes on row 0 from column 0)", style=DIM)
    xs = [x for x, _ in every]
    ys = [y for _, y in every]
    x0, x1, y0, y1 = min(xs) - 1, max(xs) + 1, min(ys) - 1, max(ys) + 1
    out = Text()
    header = Text("     ")
    for x in range(x0, x1 + 1):
        header.append(f"{x:^3}", style=DIM)
    out.append_text(header).append("\n")
    for y in range(y0, y1 + 1):
        out.append(f"{y:>4} ", style=DIM)
        for x in range(x0, x1 + 1):
            if (x, y) in new:
                glyph = tile(new[(x, y)])
                glyph.stylize(PREVIEW)
                out.append(" ").append_text(glyph).append(" ")
            elif (x, y) in cells:
                out.append(" ").append_text(tile(cells[(x, y)])).append(" ")
            else:
                out.append(" · ", style=DIM)
        out.append("\n")
    out.rstrip()
    return out
