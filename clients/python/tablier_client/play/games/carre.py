"""Carré drawn: both 3x3 squares (the top card of each cell's pile, face-down cards as backs,
empty cells showing the rank that belongs there), line points, hands, stock and discard."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ...v1 import carre_pb2 as pb
from .common import DIM, PREVIEW, Seat_name, seat_name, title_line, which

RANKS = {1: "A", 10: "10", 11: "J", 12: "Q", 13: "K"}
SUITS = {
    pb.SUIT_SPADES: ("♠", "bold"),
    pb.SUIT_HEARTS: ("♥", "bold red"),
    pb.SUIT_DIAMONDS: ("♦", "bold red"),
    pb.SUIT_CLUBS: ("♣", "bold"),
}


def card(c: pb.Card) -> Text:
    if not c.rank:
        return Text("▒▒", style="blue")
    glyph, style = SUITS.get(c.suit, ("?", ""))
    return Text(RANKS.get(c.rank, str(c.rank)) + glyph, style=style)


def _square_of(seat_of_square: int, me: int | None) -> str:
    return "your square" if me is not None and seat_of_square == me else f"{seat_name(seat_of_square, me)}'s square"


def _marked(view: pb.View, me: int | None, preview: pb.Action | None) -> tuple[int, int] | None:
    if preview is None or me is None or which(preview)[0] != "place":
        return None
    a = preview.place
    owner = me if a.square == pb.TARGET_SQUARE_OWN else 1 - me
    return owner, a.cell


def _square(view: pb.View, square: pb.Square, me: int | None, marked: tuple[int, int] | None) -> Table:
    rank_at = {cell: rank for rank, cell in enumerate(view.cell_of_rank, start=1)}
    grid = Table.grid(padding=(0, 1))
    for _ in range(3):
        grid.add_column(justify="center", width=5)
    cells = list(square.cells)
    for r in range(3):
        row = []
        for c in range(3):
            number = r * 3 + c + 1
            cell = cells[number - 1] if number - 1 < len(cells) else None
            if cell is None or not cell.pile:
                face = Text(f"({RANKS.get(rank_at.get(number, 0), str(rank_at.get(number, '·')))})", style=DIM)
            else:
                top = cell.pile[-1]
                face = card(top.card)
                if top.face_down and top.card.rank:  # face down, known to this viewer
                    face.stylize("dim italic")
                if len(cell.pile) > 1:
                    face.append(f"×{len(cell.pile)}", style=DIM)
            if marked == (square.owner, number):
                face.stylize(PREVIEW)
            row.append(face)
        grid.add_row(*row)
    return grid


def draw(view: pb.View, me: int | None, preview: pb.Action | None = None) -> RenderableType:
    lines: list[RenderableType] = [
        title_line(
            f"Carré — round {view.round} of {view.rounds_per_match}",
            f"{Seat_name(view.current, me)} to play" if view.to_act else "",
            f"stock {view.stock_size}",
        )
    ]
    marked = _marked(view, me, preview)
    squares = Table.grid(padding=(0, 4))
    heads, bodies = [], []
    for sq in view.squares:
        player = next((p for p in view.players if p.seat == sq.owner), None)
        heads.append(
            Text(
                f"{'▶' if sq.owner in view.to_act else ' '}{_square_of(sq.owner, me)}"
                f"  (total {player.total if player else 0})",
                style="bold" if sq.owner == me else "",
            )
        )
        bodies.append(_square(view, sq, me, marked))
        squares.add_column()
    squares.add_row(*heads)
    squares.add_row(*bodies)
    squares.add_row(
        *[
            Text(
                f"lines {' '.join(str(p) for p in sq.line_points)}\nraw {sq.raw_points} → scores {sq.base_score}",
                style=DIM,
            )
            for sq in view.squares
        ]
    )
    lines += [squares, Text("")]
    piles = Text("Discard: ").append_text(card(view.discard[-1]) if view.discard else Text("(empty)"))
    piles.append(f"   stock {view.stock_size}   ")
    piles.append("   ".join(f"{seat_name(p.seat, me)}: {p.hand_count} in hand" for p in view.players))
    lines.append(piles)
    for p in view.players:
        if p.hand:
            chosen = (
                preview.place.card
                if preview is not None and which(preview)[0] == "place"
                else (preview.discard.card if preview is not None and which(preview)[0] == "discard" else None)
            )
            hand = Text(f"{'Your' if p.seat == me else Seat_name(p.seat, me) + chr(39) + 's'} hand: ")
            for c in p.hand:
                face = card(c)
                if chosen is not None and c == chosen:
                    face.stylize(PREVIEW)
                hand.append_text(face).append(" ")
            lines.append(hand)
    for r in view.rounds:
        lines.append(
            Text(
                f"Round {r.round}: " + ", ".join(f"{seat_name(s.seat, me)} {s.round_score}" for s in r.scores),
                style=DIM,
            )
        )
    if view.phase == pb.PHASE_OVER:
        res = view.result
        lines.append(Text("Winner: " + (", ".join(seat_name(w, me) for w in res.winners) or "none"), style="bold"))
    return Group(*lines)
