"""Assembles the gRPC server: GameService behind the error-mapping interceptor, health
(grpcio-health-checking) and reflection (grpcio-reflection) always on.

Health is SERVING only while the database answers (the store's monitor says when it stops
and starts again). Shutdown: NOT_SERVING for a drain period while calls are still served (so
load balancers take the server out first), then the watch streams end with UNAVAILABLE
(`SHUTTING_DOWN`, resume elsewhere), new calls are refused, and calls in flight get the grace
period.

Requests are at most `max_request_bytes` (default 64 KiB: a move, a position or a creation
is far smaller); a larger one is refused by gRPC with RESOURCE_EXHAUSTED before it is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import pkgutil
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.protobuf import message_factory
from google.protobuf.message import Message
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

import tablier.v1
from tablier.app import GameApp
from tablier.v1 import players_pb2_grpc, ranked_pb2_grpc, service_pb2

from .errors import ErrorMappingInterceptor
from .metrics import Metrics
from .observe import CallObserver
from .players import PlayerServicer
from .ranked import RankedServicer
from .servicer import GameServicer

log = logging.getLogger(__name__)

GAME_SERVICE = "tablier.v1.GameService"
MAX_REQUEST_BYTES = 64 * 1024


def load_protos() -> list[str]:
    """Imports every generated `tablier.v1.*_pb2` module (the shared `tablier.v1` files and
    each game's `tablier.<game>.v1`), so that reflection serves every game's messages; returns the full names of the services they define."""
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

    def __init__(
        self,
        app: GameApp,
        listen: str,
        tls: TlsFiles | None = None,
        reuse_port: bool = False,
        *,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        metrics: Metrics | None = None,
    ) -> None:
        """`reuse_port`: share the address with other processes that ask for it too (the workers
        of `tablier serve --workers`). Off, a port another process listens on is refused
        (gRPC's own default would share it silently, and half of the calls would go there)."""
        self.app = app
        self.listen = listen
        self.tls = tls
        self.metrics = metrics
        self.health = health.aio.HealthServicer()
        observer = CallObserver(app.limiter, metrics)
        self.server = grpc.aio.server(
            interceptors=[ErrorMappingInterceptor(observer)],
            options=[
                ("grpc.so_reuseport", 1 if reuse_port else 0),
                ("grpc.max_receive_message_length", max_request_bytes),
            ],
        )
        add_game_service(GameServicer(app), self.server)
        players_pb2_grpc.add_PlayerServiceServicer_to_server(PlayerServicer(app), self.server)  # type: ignore[no-untyped-call]
        ranked_pb2_grpc.add_RankedServiceServicer_to_server(RankedServicer(app), self.server)  # type: ignore[no-untyped-call]
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        names = load_protos() + [health.SERVICE_NAME, reflection.SERVICE_NAME]
        reflection.enable_server_reflection(names, self.server)
        self.port = 0
        self._health_update: asyncio.Task[None] | None = None

    async def start(self) -> int:
        try:
            if self.tls is not None:
                self.port = self.server.add_secure_port(self.listen, self.tls.credentials())
            else:
                self.port = self.server.add_insecure_port(self.listen)
        except RuntimeError:
            raise ListenError(
                f"cannot listen on {self.listen}: the address is in use by another process, "
                "or not an address of this machine"
            ) from None
        await self.server.start()
        self.app.start_clocks()
        store = self.app.store
        if hasattr(store, "on_availability"):
            store.on_availability = self._availability_changed
        await self._set_health(getattr(store, "available", True))
        return self.port

    def _availability_changed(self, up: bool) -> None:
        self._health_update = asyncio.get_running_loop().create_task(self._set_health(up))

    async def _set_health(self, up: bool) -> None:
        status = health_pb2.HealthCheckResponse.SERVING if up else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in ("", GAME_SERVICE):
            await self.health.set(name, status)

    @property
    def address(self) -> str:
        host = self.listen.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    async def drain(self, seconds: float, cut_short: asyncio.Event | None = None) -> None:
        """Health goes NOT_SERVING; calls are still served for `seconds` (less if `cut_short`
        is set meanwhile), so load balancers take this server out before it refuses calls."""
        await self.health.enter_graceful_shutdown()
        if seconds > 0:
            cut_short = cut_short or asyncio.Event()
            with contextlib.suppress(TimeoutError):
                # The drain period is a duration the operator chose, not a condition to poll.
                async with asyncio.timeout(seconds):
                    await cut_short.wait()

    async def stop(self, grace: float = 10.0, drain: float = 0.0, cut_short: asyncio.Event | None = None) -> None:
        """`drain` (if not done already), then watch streams end, new calls are refused, and
        calls in flight get `grace` seconds to finish (then are cancelled)."""
        await self.drain(drain, cut_short)
        self.app.end_watches()
        await self.server.stop(grace)

    async def wait(self) -> None:
        await self.server.wait_for_termination()


def add_game_service(servicer: GameServicer, server: grpc.aio.Server) -> None:
    """As `service_pb2_grpc.add_GameServiceServicer_to_server`, except that a method may give
    its response already serialized, as bytes (WatchGame serializes a response once for all
    the watchers it goes to)."""
    service = service_pb2.DESCRIPTOR.services_by_name["GameService"]
    handlers = {}
    for m in service.methods:
        request = message_factory.GetMessageClass(m.input_type)
        kind = grpc.unary_stream_rpc_method_handler if m.server_streaming else grpc.unary_unary_rpc_method_handler
        handlers[m.name] = kind(
            getattr(servicer, m.name), request_deserializer=request.FromString, response_serializer=_serialize
        )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
    server.add_registered_method_handlers(service.full_name, handlers)


def _serialize(response: bytes | Message) -> bytes:
    return response if isinstance(response, bytes) else response.SerializeToString()
