"""Rat-a-Tat Cat drawn: every seat's row of four cards (face down unless known), the draw
and discard piles, the card in the current seat's hand, the caller and the totals."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from ...v1 import rat_a_tat_cat_pb2 as pb
from .common import DIM, PREVIEW, possessive, seat_name, title_line, which

# The player draws what the view holds: with the memory aid on, the server lists the row
# values the seat has seen.
LOBBY_DEFAULTS = {"memory_aid": "on"}

_NAMES: dict[int, str] = {
    pb.CARD_PEEK: "Peek",
    pb.CARD_SWAP: "Swap",
    pb.CARD_DRAW_TWO: "Draw 2",
    pb.CARD_HIDDEN_NUMBER: "a number",
    pb.CARD_UNSPECIFIED: "?",
    pb.CARD_FACE_DOWN: "?",
}
# Not known to this viewer: a face-down card of a row, or nothing sent.
_UNSEEN = (pb.CARD_UNSPECIFIED, pb.CARD_FACE_DOWN)


def card_name(card: int) -> str:
    if pb.CARD_ZERO <= card <= pb.CARD_NINE:
        return str(card - pb.CARD_ZERO)
    return _NAMES.get(card, "?")


def card(card: int, known: int = pb.CARD_UNSPECIFIED) -> Text:
    """A card as a 6-wide box face: its value, a remembered value (dim), or the back."""
    if card not in _UNSEEN:
        style = "bold magenta" if card >= pb.CARD_PEEK else ("bold green" if card <= pb.CARD_THREE else "bold")
        return Text(f"[{card_name(card):^4}]", style=style)
    if known not in _UNSEEN:
        return Text(f"[({card_name(known)})]".ljust(6), style=DIM)
    return Text("[░░░░]", style="blue")


def _phase(view: pb.View) -> str:
    return pb.Phase.Name(view.phase).removeprefix("PHASE_").replace("_", " ").lower()


def _preview(preview: pb.Action | None, me: int | None) -> set[tuple[int, int]]:
    if preview is None or me is None:
        return set()
    name, a = which(preview)
    if name in ("take_discard", "replace_card", "peek_card"):
        return {(me, a.slot)}
    if name == "swap_cards":
        return {(me, a.own_slot), (a.target_seat, a.target_slot)}
    return set()


def draw(view: pb.View, me: int | None, preview: pb.Action | None = None) -> RenderableType:
    lines: list[RenderableType] = [
        title_line(f"Rat-a-Tat Cat — round {view.round}", _phase(view), f"turn {view.turns_this_round}")
    ]
    marked = _preview(preview, me)
    for p in view.players:
        row = Text(
            f"{'▶' if p.seat in view.to_act else ' '} {seat_name(p.seat, me):8} ", style="bold" if p.seat == me else ""
        )
        if not p.active:
            row.append("out", style=DIM)
        for i, c in enumerate(p.row):
            known = p.known[i] if i < len(p.known) else pb.CARD_UNSPECIFIED
            face = card(c, known)
            if (p.seat, i + 1) in marked:
                face.stylize(PREVIEW)
            row.append_text(face).append(" ")
        row.append(f"  total {p.total_score}")
        if p.last_round_score:
            row.append(f" (last round {p.last_round_score})", style=DIM)
        if view.has_caller and view.caller == p.seat:
            row.append("  called!", style="bold red")
        lines.append(row)
    lines.append(Text(" " * 11 + "slot 1 slot 2 slot 3 slot 4", style=DIM))
    lines.append(Text(""))
    piles = Text(f"Draw pile: {view.draw_pile_size} cards    Discard: ")
    piles.append_text(card(view.discard_pile[-1]) if view.discard_pile else Text("(empty)"))
    if view.pending != pb.CARD_UNSPECIFIED:
        piles.append(f"    In {possessive(view.current_seat, me)} hand: ").append_text(card(view.pending))
    lines.append(piles)
    if view.over:
        lines.append(
            Text(
                "Winner: "
                + ", ".join(seat_name(w, me) for w in view.winners)
                + f" ({view.end_reason.replace('_', ' ').lower()})",
                style="bold",
            )
        )
    if any(p.last_round_row for p in view.players) and not view.over:
        lines.append(Text("Last round's rows:", style=DIM))
        for p in view.players:
            if p.last_round_row:
                lines.append(
                    Text(f"  {seat_name(p.seat, me):8} " + " ".join(card_name(c) for c in p.last_round_row), style=DIM)
                )
    return Group(*lines)
