"""Helpers shared by the per-game drawings: seat names, the set field of a message's oneof,
highlight styles."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message
from rich.text import Text

# The style of the cells a highlighted move would touch.
PREVIEW = "reverse bold"
DIM = "grey50"


def seat_name(seat: int, me: int | None) -> str:
    return "you" if me is not None and seat == me else f"seat {seat}"


def possessive(seat: int, me: int | None) -> str:
    return "your" if me is not None and seat == me else f"seat {seat}'s"


def Seat_name(seat: int, me: int | None) -> str:  # noqa: N802  (capitalised at a sentence start)
    name = seat_name(seat, me)
    return name[0].upper() + name[1:]


def which(message: Message) -> tuple[str, Any]:
    """The set field of a message's `kind` oneof and its value (a message of the game's
    proto: its fields are read by name, hence `Any`)."""
    name = message.WhichOneof("kind") if message.DESCRIPTOR.oneofs_by_name.get("kind") else None
    return (name, getattr(message, name)) if name else ("", None)


def title_line(*parts: str | Text) -> Text:
    out = Text()
    for i, part in enumerate(parts):
        if i:
            out.append("   ")
        out.append(part if isinstance(part, Text) else Text(part))
    return out
