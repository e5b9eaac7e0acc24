"""Démocratie drawn: the vote card and trump, every seat's hand size, sealed commit,
captured pile and tribes, the last trick, and the viewer's hand."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from ...v1 import democratie_pb2 as pb
from .common import DIM, PREVIEW, seat_name, title_line, which

SUITS = {"C": ("♣", "bold"), "D": ("♦", "bold red"), "H": ("♥", "bold red"), "S": ("♠", "bold")}
SUIT_NAMES = {
    pb.SUIT_CLUBS: "♣ clubs",
    pb.SUIT_DIAMONDS: "♦ diamonds",
    pb.SUIT_HEARTS: "♥ hearts",
    pb.SUIT_SPADES: "♠ spades",
    pb.SUIT_NONE: "none (Joker)",
    pb.SUIT_UNSPECIFIED: "—",
}


def card(c: pb.Card.ValueType) -> Text:
    if c == pb.CARD_UNSPECIFIED:
        return Text("??", style=DIM)
    name = pb.Card.Name(c).removeprefix("CARD_")
    if name.startswith("X"):
        return Text("Joker", style="bold magenta")
    rank, suit = name[0], name[1]
    glyph, style = SUITS[suit]
    return Text(("10" if rank == "T" else rank) + glyph, style=style)


def _cards(cards: object) -> Text:
    return Text(" ").join(card(c) for c in cards)  # type: ignore[attr-defined]


def draw(view: pb.View, me: int | None, preview: pb.Action | None = None) -> RenderableType:
    lines: list[RenderableType] = [
        title_line(
            f"Démocratie — deal {view.deal_no}, day {view.day}",
            f"trick {view.trick_no}/{view.tricks_in_day}",
            f"first to {view.target} tribes",
        )
    ]
    vote = Text("Vote card: ").append_text(card(view.vote_card) if view.vote_card else Text("—"))
    vote.append(
        f"   trump {SUIT_NAMES[view.trump]}   vote cards left {view.vote_pile_count}   for day 2 {view.stock_count}"
    )
    lines += [vote, Text("")]
    for s in view.seat_info:
        row = Text(
            f"{'▶' if s.awaited else ' '} {seat_name(s.seat, me):8} cards {s.hand_count:2}   "
            f"captured {s.captured_count:2}   tribes {s.tribes}   ",
            style="bold" if s.seat == me else "",
        )
        if s.committed:
            row.append("card sealed", style="green")
        elif s.awaited:
            row.append("to play", style="yellow")
        lines.append(row)
    lt = view.last_trick
    if lt.trick_no:
        lines.append(Text(""))
        out = (
            Text(f"Last trick (day {lt.day}, trick {lt.trick_no}, vote ").append_text(card(lt.vote_card)).append("): ")
        )
        out.append_text(
            Text(", ").join(Text(f"{seat_name(s, me)} ").append_text(card(c)) for s, c in enumerate(lt.played))
        )
        out.append(" — tie" if lt.tie else f" — {seat_name(lt.winner, me)} won")
        lines.append(out)
    if view.discard:
        lines.append(Text("Discarded vote cards: ").append_text(_cards(view.discard)))
    seated = view.viewer.WhichOneof("kind") == "seat"
    if seated:
        lines.append(Text(""))
        chosen = which(preview)[1].card if preview is not None and which(preview)[0] == "commit_card" else None
        hand = Text("Your hand: ")
        for c in view.hand:
            face = card(c)
            if c == chosen:
                face.stylize(PREVIEW)
            hand.append_text(face).append(" ")
        lines.append(hand)
        if view.my_commit:
            lines.append(Text("Your sealed card: ").append_text(card(view.my_commit)))
        elif view.viewer.seat in view.to_act:
            lines.append(Text("The card you play stays sealed until every seat has played.", style=DIM))
    if view.over:
        lines.append(Text("Winner: " + (", ".join(seat_name(w, me) for w in view.winners) or "none"), style="bold"))
    return Group(*lines)
