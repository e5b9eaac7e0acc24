"""Helpers shared by the per-game drawings: seat names, the set field of a message's oneof,
highlight styles."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message
from rich.text import Text

# The style of the cells a highlighted move would touch.
PREVIEW = "reverse bold"
DIM = "grey50"


# The display names of the players of the match on screen, by seat (`set_names`): a seat
# bound to a player is shown by its name, any other as "seat N", numbered from 1 for people.
_names: dict[int, str] = {}


def set_names(seats: Any) -> None:
    """Takes the names of a GameState's `seats` (SeatInfo.player.display_name, where set)."""
    _names.clear()
    for i, info in enumerate(seats):
        if info.HasField("player") and info.player.display_name:
            _names[i] = info.player.display_name


def seat_name(seat: int, me: int | None) -> str:
    if me is not None and seat == me:
        return "you"
    return _names.get(seat) or f"seat {seat + 1}"


def possessive(seat: int, me: int | None) -> str:
    if me is not None and seat == me:
        return "your"
    return f"{_names[seat]}'s" if seat in _names else f"seat {seat + 1}'s"


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
