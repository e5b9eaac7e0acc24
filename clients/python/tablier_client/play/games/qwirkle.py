"""Qwirkle drawn: the board of tiles (colour and shape), each seat's score and hand size,
the viewer's hand, the bag. A highlighted move shows its cells on the board."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from ...v1 import qwirkle_pb2 as pb
from .common import DIM, PREVIEW, seat_name, title_line, which

STYLES = ["bold red", "bold dark_orange", "bold yellow", "bold green", "bold dodger_blue1", "bold magenta"]
GLYPHS = ["●", "✚", "◆", "■", "✸", "♣"]


def tile(tile_type: int) -> Text:
    colour, shape = divmod(tile_type, 6)
    return Text(GLYPHS[shape], style=STYLES[colour])


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
