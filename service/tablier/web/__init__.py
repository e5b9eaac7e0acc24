"""The browser transport: GameService over Connect / gRPC-Web, and the web app's files."""

from .server import WebServer, asgi_app

__all__ = ["WebServer", "asgi_app"]
