"""gRPC API: the GameService servicer, the error mapping, and the server assembly."""

from .server import GameServer, load_protos

__all__ = ["GameServer", "load_protos"]
