"""The registered game types, as the core describes them (`tablier.v1.GameType`)."""

from __future__ import annotations

from tablier import _core
from tablier.v1.common_pb2 import GameType

from .errors import BadRequest, NotImplementedForGame


class Catalogue:
    def __init__(self) -> None:
        parsed = [GameType.FromString(b) for b in _core.game_types()]
        self._types: dict[str, GameType] = {t.id: t for t in parsed}

    def all(self) -> list[GameType]:
        return list(self._types.values())

    def get(self, game_type: str) -> GameType:
        try:
            return self._types[game_type]
        except KeyError:
            known = ", ".join(sorted(self._types))
            raise BadRequest(f"unknown game type {game_type!r} (known: {known})", "UNKNOWN_GAME") from None

    def position_type(self, game_type: str) -> str:
        info = self.get(game_type)
        if not info.position_type:
            raise NotImplementedForGame(f"{info.name} has no position evaluator")
        return info.position_type
