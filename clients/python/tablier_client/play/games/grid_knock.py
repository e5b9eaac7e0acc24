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
