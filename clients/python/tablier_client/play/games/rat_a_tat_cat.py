"""Rat-a-Tat Cat drawn: every seat's row of four cards (face down unless known), the draw
and discard piles, the card in the current seat's hand, the caller and the totals."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.text import Text

from ...v1 import rat_a_tat_cat_pb2 as pb
from .common import DIM, PREVIEW, Seat_name, possessive, seat_name, title_line, which

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


def action_label(action: pb.Action, view: pb.View, me: int | None) -> Text:
    name, a = which(action)
    top = card_name(view.discard_pile[-1]) if view.discard_pile else "?"
    held = card_name(view.pending)
    labels: dict[str, Callable[[], str]] = {
        "take_discard": lambda: f"Take the discard ({top}) into your slot {a.slot}",
        "draw_from_pile": lambda: "Draw from the pile",
        "replace_card": lambda: f"Put the {held} in your slot {a.slot} (the old card is discarded)",
        "discard_drawn": lambda: f"Discard the {held}",
        "use_power": lambda: f"Use the {held} power",
        "peek_card": lambda: f"Peek at your slot {a.slot}",
        "swap_cards": lambda: f"Swap your slot {a.own_slot} with {possessive(a.target_seat, me)} slot {a.target_slot}",
        "skip_swap": lambda: "Do not swap",
        "call_rat_a_tat_cat": lambda: "Call “Rat-a-tat cat!” (everyone else gets one more turn)",
        "end_turn": lambda: "End your turn",
    }
    return Text(labels[name]() if name in labels else str(action))


def event_label(event: pb.Event, me: int | None) -> Text:
    name, e = which(event)
    who = Seat_name(getattr(e, "seat", 0), me) if hasattr(e, "seat") else ""
    labels: dict[str, Callable[[], str]] = {
        "round_dealt": lambda: (
            f"Round {e.round} dealt by {seat_name(e.dealer, me)}; discard shows {card_name(e.discard_top)}"
        ),
        "initial_peek": lambda: (
            f"{who} peeked at the outer cards" + (f": {card_name(e.slot1)} and {card_name(e.slot4)}" if e.slot1 else "")
        ),
        "discard_taken": lambda: (
            f"{who} took the {card_name(e.taken)} into slot {e.slot}, discarding {card_name(e.replaced)}"
        ),
        "card_drawn": lambda: f"{who} drew {card_name(e.card)}",
        "card_replaced": lambda: f"{who} put the drawn card in slot {e.slot}, discarding {card_name(e.replaced)}",
        "drawn_discarded": lambda: f"{who} discarded {card_name(e.card)}",
        "power_used": lambda: f"{who} used {card_name(e.power)}",
        "card_peeked": lambda: f"{who} peeked at slot {e.slot}" + (f": {card_name(e.card)}" if e.card else ""),
        "cards_swapped": lambda: (
            f"{who} swapped slot {e.own_slot} with {possessive(e.target_seat, me)} slot {e.target_slot}"
        ),
        "swap_skipped": lambda: f"{who} did not swap",
        "called": lambda: f"{who} called “Rat-a-tat cat!”",
        "turn_ended": lambda: f"{who} ended the turn" + (" — the round is over" if e.round_over else ""),
        "pile_reshuffled": lambda: "The discard pile was reshuffled into a new draw pile",
        "round_revealed": lambda: "Every row is turned up",
        "reveal_draw": lambda: (
            f"The power card in {possessive(e.seat, me)} slot {e.slot} is replaced: drew {card_name(e.card)}"
        ),
        "round_scored": lambda: (
            f"Round {e.round} scored: "
            + ", ".join(f"{seat_name(s.seat, me)} {s.round_score} (total {s.total_score})" for s in e.scores)
        ),
        "match_ended": lambda: "Match over: winner " + ", ".join(seat_name(w, me) for w in e.winners),
        "stop_requested": lambda: "The host ends the match after this round",
    }
    return Text(labels[name]() if name in labels else name)


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
