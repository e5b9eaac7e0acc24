"""`GameKind`: a game's id with its Action, View and Event message classes, so that the SDK's
handles are typed per game (`games.QWIRKLE` gives `Match[qwirkle_pb2.Action, ...]`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from google.protobuf.message import Message

A = TypeVar("A", bound=Message)
V = TypeVar("V", bound=Message)
E = TypeVar("E", bound=Message)


@dataclass(frozen=True)
class GameKind(Generic[A, V, E]):
    """A game type's id and the classes of its own messages (see `tablier_client.games`)."""

    id: str
    action: type[A]
    view: type[V]
    event: type[E]
