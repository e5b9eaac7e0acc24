"""Assembles the gRPC server: GameService behind the error-mapping interceptor, health
(grpcio-health-checking) and reflection (grpcio-reflection) always on."""

from __future__ import annotations

import importlib
import logging
import pkgutil
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

import tablier.v1
from tablier.app import GameApp
from tablier.v1 import service_pb2_grpc

from .errors import ErrorMappingInterceptor
from .servicer import GameServicer

log = logging.getLogger(__name__)

GAME_SERVICE = "tablier.v1.GameService"


def load_protos() -> list[str]:
    """Imports every generated `tablier.v1.*_pb2` module, so that reflection serves every
    game's messages; returns the full names of the services they define."""
    services = []
    for module in pkgutil.iter_modules(tablier.v1.__path__):
        if module.name.endswith("_pb2"):
            pb2 = importlib.import_module(f"tablier.v1.{module.name}")
            services += [s.full_name for s in pb2.DESCRIPTOR.services_by_name.values()]
    return sorted(services)


@dataclass(frozen=True)
class TlsFiles:
    """PEM files: the server's certificate chain and key, and optionally the CA whose
    certificates clients must present (mutual TLS)."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        ca = self.client_ca.read_bytes() if self.client_ca is not None else None
        return grpc.ssl_server_credentials(
            [(self.key.read_bytes(), self.cert.read_bytes())],
            root_certificates=ca,
            require_client_auth=ca is not None,
        )


class ListenError(Exception):
    """The server cannot listen on its address (most often: another process holds it)."""


class GameServer:
    """One grpc.aio server. `start()` binds and returns the port; `stop()` drains. With `tls`
    it serves TLS only."""

    def __init__(self, app: GameApp, listen: str, tls: TlsFiles | None = None, reuse_port: bool = False) -> None:
        """`reuse_port`: share the address with other processes that ask for it too (the workers
        of `tablier serve --workers`). Off, a port another process listens on is refused
        (gRPC's own default would share it silently, and half of the calls would go there)."""
        self.app = app
        self.listen = listen
        self.tls = tls
        self.health = health.aio.HealthServicer()
        self.server = grpc.aio.server(interceptors=[ErrorMappingInterceptor()],
                                      options=[("grpc.so_reuseport", 1 if reuse_port else 0)])
        service_pb2_grpc.add_GameServiceServicer_to_server(GameServicer(app), self.server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        names = load_protos() + [health.SERVICE_NAME, reflection.SERVICE_NAME]
        reflection.enable_server_reflection(names, self.server)
        self.port = 0

    async def start(self) -> int:
        try:
            if self.tls is not None:
                self.port = self.server.add_secure_port(self.listen, self.tls.credentials())
            else:
                self.port = self.server.add_insecure_port(self.listen)
        except RuntimeError:
            raise ListenError(f"cannot listen on {self.listen}: the address is in use by another process, "
                              "or not an address of this machine") from None
        await self.server.start()
        for name in ("", GAME_SERVICE):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        return self.port

    @property
    def address(self) -> str:
        host = self.listen.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    async def stop(self, grace: float = 10.0) -> None:
        """Health goes NOT_SERVING, new calls are refused, calls in flight get `grace`
        seconds to finish (then are cancelled)."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)

    async def wait(self) -> None:
        await self.server.wait_for_termination()
