"""Grid Knock drawn: the ring of 3x4 blocks (each seat's block; a seat's domain is its left
neighbour's column 4 and its own columns 1-4), the piles, the card in play, knocks and totals."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from ...v1 import grid_knock_pb2 as pb
from .common import DIM, PREVIEW, Seat_name, possessive, seat_name, title_line, which

BLOCKS_PER_LINE = 4


def value_style(v: int) -> str:
    if v < 0:
        return "bold dodger_blue1"
    if v == 0:
        return "bold cyan"
    if v <= 4:
        return "bold green"
    if v <= 8:
        return "bold yellow"
    return "bold red"


def value(v: int) -> Text:
    return Text(f"{v:+d}" if v < 0 else str(v), style=value_style(v))


def slot_name(slot: pb.Slot, me: int | None) -> str:
    return f"{possessive(slot.owner, me)} row {slot.row} col {slot.col}"


def action_label(action: pb.Action, view: pb.View, me: int | None) -> Text:
    name, a = which(action)
    drawn = value(view.drawn_card) if view.HasField("drawn_card") else Text("the card")
    if name == "reveal_initial":
        return Text(f"Turn up {slot_name(a.slot, me)} (initial reveal)")
    if name == "draw_from_pile":
        return Text(f"Draw from the pile ({view.draw_pile_size} left)")
    if name == "take_from_discard":
        top = value(view.discard_pile[-1]) if view.discard_pile else Text("?")
        return Text("Take the discard ").append_text(top)
    if name == "knock":
        return Text("Knock: ask for the drawn card ").append_text(drawn)
    if name == "pass_knock":
        return Text("Do not knock")
    if name == "accept_knock":
        return Text(f"Give the drawn card to {seat_name(a.knocker, me)} (who knocked)")
    if name == "refuse_knocks":
        return Text("Keep the drawn card (refuse the knocks)")
    if name == "keep_swap":
        held = value(view.taken_card) if view.HasField("taken_card") else drawn
        return Text("Swap ").append_text(held).append(f" into {slot_name(a.slot, me)}")
    if name == "discard_and_reveal":
        return Text("Discard ").append_text(drawn).append(f" and turn up {slot_name(a.slot, me)}")
    if name == "knocker_swap":
        return Text("Swap the received card ").append_text(drawn).append(f" into {slot_name(a.slot, me)}")
    if name == "discard_triple":
        return Text("Discard the triple at " + ", ".join(slot_name(c, me) for c in a.cells))
    if name == "end_triples":
        return Text("Stop discarding triples")
    if name == "take_from_knocker":
        return Text(f"Take the card at {slot_name(a.slot, me)} from the knocker")
    if name == "return_swap":
        return Text(f"Swap the taken card into {slot_name(a.slot, me)}")
    return Text(str(action))


def event_label(event: pb.Event, me: int | None) -> Text:
    name, e = which(event)
    who = Seat_name(e.seat, me) if e is not None and hasattr(e, "seat") else ""
    if name == "dealt":
        return Text(f"Round {e.round} dealt by {seat_name(e.dealer, me)}; the discard starts with ").append_text(
            value(e.discard_start)
        )
    if name == "initial_chosen":
        return Text(f"{who} chose a card to turn up")
    if name == "initial_revealed":
        return Text("Initial cards turned up: ").append_text(Text(", ").join(value(c.value) for c in e.cards))
    if name == "reshuffled":
        return Text("The discards were reshuffled into a new draw pile")
    if name == "drawn":
        out = Text(f"{who} drew ").append_text(value(e.value))
        return out.append(" — knock window open" if e.knock_eligible else "")
    if name == "took_discard":
        return Text(f"{who} took the discard ").append_text(value(e.value))
    if name == "knock_answered":
        ans = {pb.KNOCK_ANSWER_KNOCK: "knocked", pb.KNOCK_ANSWER_PASS: "passed"}.get(e.answer, "answered")
        return Text(f"{who} {ans}")
    if name == "knock_window_closed":
        return Text("Knockers: " + (", ".join(seat_name(k, me) for k in e.knockers) or "none"))
    if name == "knock_accepted":
        return Text(f"{who} gave the card to {seat_name(e.knocker, me)}")
    if name == "knocks_refused":
        return Text(f"{who} kept the card")
    if name == "kept":
        return (
            Text(f"{who} swapped ")
            .append_text(value(e.placed))
            .append(f" into {slot_name(e.slot, me)}, out comes ")
            .append_text(value(e.removed))
        )
    if name == "discarded_and_revealed":
        return (
            Text(f"{who} discarded ")
            .append_text(value(e.discarded))
            .append(f" and turned up {slot_name(e.slot, me)}: ")
            .append_text(value(e.revealed))
        )
    if name == "knocker_swapped":
        return (
            Text(f"{Seat_name(e.knocker, me)} swapped ")
            .append_text(value(e.placed))
            .append(f" into {slot_name(e.slot, me)}")
        )
    if name == "triple_discarded":
        return Text(f"{who} discarded a triple of ").append_text(value(e.value))
    if name == "triples_ended":
        return Text(f"{who}: no triple to discard" if e.automatic else f"{who} stopped discarding triples")
    if name == "took_from_knocker":
        return Text(f"{who} took ").append_text(value(e.value)).append(f" from {slot_name(e.slot, me)}")
    if name == "return_swapped":
        return Text(f"{who} swapped ").append_text(value(e.placed)).append(f" into {slot_name(e.slot, me)}")
    if name == "exchanged_card_discarded":
        return Text(f"{who} discarded ").append_text(value(e.value))
    if name == "held_card_placed":
        return Text("The knocker's held card ").append_text(value(e.value)).append(f" goes to {slot_name(e.slot, me)}")
    if name == "held_card_discarded":
        return Text("The knocker's held card ").append_text(value(e.value)).append(" is discarded")
    if name == "empty_passed":
        return Text(f"{Seat_name(e.seat, me)}: no card left, the turn passes")
    if name == "turn_ended":
        ended = f"{who} ended the turn" + (" and closed (all cards up)" if e.closed else "")
        return Text(ended + (" — the round is over" if e.round_over else ""))
    if name == "round_scored":
        return Text(
            f"Round {e.round} scored: "
            + ", ".join(
                f"{seat_name(s, me)} {r} (total {t})"
                for s, (r, t) in enumerate(zip(e.round_scores, e.totals, strict=False))
            )
        )
    if name == "match_aborted":
        return Text(f"Match stopped by the turn cap after {e.turns} turns")
    if name == "forfeited":
        return Text(f"{Seat_name(e.seat, me)} forfeited: time was up")
    return Text(name)


def _marked(preview: pb.Action | None) -> set[tuple[int, int, int]]:
    if preview is None:
        return set()
    _, a = which(preview)
    if a is None:
        return set()
    cells = list(a.cells) if hasattr(a, "cells") else [a.slot] if hasattr(a, "slot") else []
    return {(c.owner, c.row, c.col) for c in cells}


def _cell(view: pb.View, owner: int, row: int, col: int) -> Text:
    s = view.slots[owner * 12 + (row - 1) * 4 + (col - 1)]
    if s.state == pb.SLOT_STATE_EMPTY:
        return Text("  · ", style=DIM)
    if s.state == pb.SLOT_STATE_RESERVED:
        return Text(" [ ]", style="yellow")
    if s.state == pb.SLOT_STATE_FACE_DOWN and not s.HasField("value"):
        return Text(" ░░░", style="blue")
    v = value(s.value)
    if s.state == pb.SLOT_STATE_FACE_DOWN:
        v.stylize("dim italic")
    return Text(" ").append_text(Text(f"{v.plain:>3}", style=v.style))


def draw(view: pb.View, me: int | None, preview: pb.Action | None = None) -> RenderableType:
    phase = pb.Phase.Name(view.phase).removeprefix("PHASE_").replace("_", " ").lower()
    lines: list[RenderableType] = [
        title_line(
            f"Grid Knock — round {view.round}",
            phase,
            f"{Seat_name(view.active, me)} to play",
            f"match ends at {view.target_score}",
        )
    ]
    marked = _marked(preview)
    # Seat i's block sits right of seat i+1's (whose column 4 begins i's domain): the ring runs
    # from the highest seat on the left down to seat 0, whose column 4 wraps round to the start.
    order = list(range(view.seats - 1, -1, -1))
    for start in range(0, len(order), BLOCKS_PER_LINE):
        chunk = order[start : start + BLOCKS_PER_LINE]
        head = Text()
        for owner in chunk:
            mark = "▶" if owner in view.to_act else " "
            label = f"{mark}{seat_name(owner, me)}"
            total = view.totals[owner] if owner < len(view.totals) else 0
            head.append(f"{label} ({total})"[:16].ljust(16) + "  ", style="bold" if owner == me else "")
        lines.append(head)
        lines.append(Text("".join("".join(f"  c{c}" for c in range(1, 5)) + "  " for _ in chunk), style=DIM))
        for row in range(1, 4):
            line = Text()
            for owner in chunk:
                for col in range(1, 5):
                    cell = _cell(view, owner, row, col)
                    if (owner, row, col) in marked:
                        cell.stylize(PREVIEW)
                    line.append_text(cell)
                line.append("  ")
            lines.append(line)
        lines.append(Text(""))
    if view.seats > 1:
        lines.append(
            Text(
                f"(the ring wraps: {possessive(0, me)} column 4 is the first column of "
                f"{seat_name(view.seats - 1, me)}'s domain)",
                style=DIM,
            )
        )
    piles = Text(f"Draw pile {view.draw_pile_size}   Discard ")
    piles.append_text(value(view.discard_pile[-1]) if view.discard_pile else Text("(empty)"))
    for label, field in (
        ("drawn", "drawn_card"),
        ("taken", "taken_card"),
        ("held by the knocker", "held_card"),
        ("to discard", "exchanged_card"),
    ):
        if view.HasField(field):  # type: ignore[arg-type]
            piles.append(f"   {label}: ").append_text(value(getattr(view, field)))
    lines.append(piles)
    notes = []
    if view.knock_eligible:
        notes.append(
            "knock window: "
            + ", ".join(seat_name(s, me) for s in view.knock_eligible)
            + f" may knock ({len(view.knock_answered)} answered)"
        )
    if view.knockers:
        notes.append("knockers: " + ", ".join(seat_name(s, me) for s in view.knockers))
    if view.HasField("knocker"):
        notes.append(f"accepted knocker: {seat_name(view.knocker, me)}")
    if view.HasField("closer"):
        notes.append(f"{seat_name(view.closer, me)} closed: last turns")
    if view.last_round_scores and view.round > 1:
        notes.append(
            "last round: " + ", ".join(f"{seat_name(s, me)} {v}" for s, v in enumerate(view.last_round_scores))
        )
    if view.winners:
        notes.append("winner: " + ", ".join(seat_name(w, me) for w in view.winners))
    lines += [Text(n) for n in notes]
    return Group(*lines)
