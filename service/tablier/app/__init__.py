"""The application layer (no gRPC types): see `games.GameApp`."""

from .auth import Credential, Principal, Role
from .errors import AppError
from .games import GameApp
from .model import Created, EventOut, Joined, MatchState, Payload, Played
from .seats import SeatAssignment, SeatInfo, SeatKind, SeatStatus

__all__ = [
    "AppError",
    "Created",
    "Credential",
    "EventOut",
    "GameApp",
    "Joined",
    "MatchState",
    "Payload",
    "Played",
    "Principal",
    "Role",
    "SeatAssignment",
    "SeatInfo",
    "SeatKind",
    "SeatStatus",
]
