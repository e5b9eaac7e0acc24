"""The browser address of `tablier serve`: one HTTP/1.1 server (uvicorn) that offers
`tablier.v1.GameService` over Connect and gRPC-Web (`connect.GameServiceConnect`) and, when a
directory of built web-app files is given, serves them at `/`. CORS allows the listed
origins only (none by default: the web app served here is same-origin)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from tablier.api import load_protos
from tablier.api.metrics import Metrics
from tablier.api.server import MAX_REQUEST_BYTES, TlsFiles
from tablier.app import GameApp

from .connect import GameServiceConnect, PlayerServiceConnect, RankedServiceConnect

log = logging.getLogger(__name__)

# What a browser client sends (Connect and gRPC-Web) and may read back.
CORS_REQUEST_HEADERS = [
    "authorization",
    "content-type",
    "x-tablier-role",
    "x-tablier-game",
    "connect-protocol-version",
    "connect-timeout-ms",
    "connect-content-encoding",
    "connect-accept-encoding",
    "grpc-timeout",
    "x-grpc-web",
    "x-user-agent",
]
CORS_RESPONSE_HEADERS = ["grpc-status", "grpc-message", "grpc-status-details-bin", "content-encoding"]


def asgi_app(
    app: GameApp,
    web_dir: Path | None = None,
    cors_origins: list[str] | None = None,
    *,
    max_request_bytes: int = MAX_REQUEST_BYTES,
    metrics: Metrics | None = None,
) -> Starlette:
    load_protos()  # JSON clients: every game's messages must be known to the Any codec
    connect = GameServiceConnect(app, max_request_bytes, metrics)
    players = PlayerServiceConnect(app, max_request_bytes, metrics)
    ranked = RankedServiceConnect(app, max_request_bytes, metrics)
    routes = [Mount(connect.path, app=connect), Mount(players.path, app=players), Mount(ranked.path, app=ranked)]
    if web_dir is not None:
        routes.append(Mount("/", app=StaticFiles(directory=web_dir, html=True)))
    middleware = []
    if cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=cors_origins,
                allow_methods=["GET", "POST"],
                allow_headers=CORS_REQUEST_HEADERS,
                expose_headers=CORS_RESPONSE_HEADERS,
                max_age=3600,
            )
        )
    return Starlette(routes=routes, middleware=middleware)


def _bind(listen: str, reuse_port: bool = False) -> socket.socket:
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio turns Nagle off (TCP_NODELAY) only on the connections of a
    # socket whose proto says TCP. With Nagle on, a response written as headers then body waited
    # for the client's delayed ACK of the headers: 40-44 ms a call on a kept-alive connection.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by accepted sockets (Linux)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:  # the workers of `tablier serve --workers`, as on the gRPC address
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, int(port)))
    sock.listen(128)
    sock.setblocking(False)
    return sock


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:  # `tablier serve` handles the signals and stops both servers
        yield


class WebServer:
    """`start()` binds and returns the port; `stop(grace)` closes the socket, lets calls in
    flight (watch streams included) finish for `grace` seconds, then cancels them."""

    def __init__(
        self,
        app: GameApp,
        listen: str,
        web_dir: Path | None = None,
        cors_origins: list[str] | None = None,
        tls: TlsFiles | None = None,
        *,
        reuse_port: bool = False,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        metrics: Metrics | None = None,
    ) -> None:
        """With `tls` (the gRPC address's files) it serves HTTPS only, and requires client
        certificates when `tls.client_ca` is set. `reuse_port`, `max_request_bytes` and
        `metrics` as for the gRPC server (`tablier.api.GameServer`)."""
        self.listen = listen
        self.reuse_port = reuse_port
        self.web_dir = web_dir
        self.tls = tls
        secure: dict[str, Any] = {}
        if tls is not None:
            secure = {"ssl_certfile": str(tls.cert), "ssl_keyfile": str(tls.key)}
            if tls.client_ca is not None:
                secure.update(ssl_ca_certs=str(tls.client_ca), ssl_cert_reqs=ssl.CERT_REQUIRED)
        self.config = uvicorn.Config(
            asgi_app(app, web_dir, cors_origins, max_request_bytes=max_request_bytes, metrics=metrics),
            lifespan="off",
            log_level="warning",
            access_log=False,
            **secure,
        )
        self.server = _Server(self.config)
        self.port = 0
        self._sock: socket.socket | None = None
        self._loop: asyncio.Task[None] | None = None

    async def start(self) -> int:
        self._sock = _bind(self.listen, self.reuse_port)
        self.port = self._sock.getsockname()[1]
        self.config.load()
        self.server.lifespan = self.config.lifespan_class(self.config)
        await self.server.startup(sockets=[self._sock])
        self._loop = asyncio.create_task(self.server.main_loop())
        return self.port

    @property
    def address(self) -> str:
        host = self.listen.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    async def stop(self, grace: float = 10.0) -> None:
        self.config.timeout_graceful_shutdown = grace  # type: ignore[assignment]  # seconds, any number
        self.server.should_exit = True
        if self._loop is not None:
            await self._loop
        await self.server.shutdown(sockets=[self._sock] if self._sock else None)
