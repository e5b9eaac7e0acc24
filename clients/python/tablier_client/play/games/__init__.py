"""One drawing per game (presentation only: every rule stays in the server's core).

Each module gives `draw(view, me, preview)` (a Rich renderable of the view the server sent,
`preview` being a highlighted legal move to show on the table). Moves and events are worded
by the server (each game's own words); a game without a drawing here is shown generically,
from its messages' fields."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.text import Text

from . import carre, democratie, grid_knock, qwirkle, rat_a_tat_cat

DRAWINGS: dict[str, ModuleType] = {
    "qwirkle": qwirkle,
    "rat_a_tat_cat": rat_a_tat_cat,
    "democratie": democratie,
    "grid_knock": grid_knock,
    "carre": carre,
}


def lobby_default(game: str, option: str) -> str:
    """The value the lobby suggests for an option (empty: the server's default)."""
    module = DRAWINGS.get(game)
    return str(getattr(module, "LOBBY_DEFAULTS", {}).get(option, ""))


def shape(renderable: RenderableType) -> tuple[int, int] | None:
    """(lines, widest line) of a drawing made of Text only; None when it holds anything else.
    A redraw of the same shape needs no new layout of the screen (much cheaper)."""
    parts = renderable.renderables if isinstance(renderable, Group) else [renderable]
    lines = width = 0
    for part in parts:
        if not isinstance(part, Text):
            return None
        rows = part.plain.split("\n")
        lines += len(rows)
        width = max(width, *(cell_len(r) for r in rows))
    return lines, width


def draw(game: str, view: Any, me: int | None, preview: Any = None) -> RenderableType:
    module = DRAWINGS.get(game)
    if module is None:
        from google.protobuf import text_format

        return Text(text_format.MessageToString(view))
    return module.draw(view, me, preview)  # type: ignore[no-any-return]
