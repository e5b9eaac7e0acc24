"""Command handling (no gRPC types): see `games.GameApp`."""

from .auth import Credential, Principal, Role
from .errors import AppError
from .games import Created, EventOut, GameApp, MatchState, Payload, Played

__all__ = [
    "AppError",
    "Created",
    "Credential",
    "EventOut",
    "GameApp",
    "MatchState",
    "Payload",
    "Played",
    "Principal",
    "Role",
]
