"""`tablier.v1.GameService` for browsers: the Connect protocol (and gRPC-Web, which the same
library speaks) over HTTP/1.1, as an ASGI application.

It is the gRPC servicer again, not a second one: every method calls the same
`GameServicer` method with a context that reads the call's headers as gRPC metadata
(`authorization`, `x-tablier-role`), and errors leave through the same table
(`tablier.api.errors.describe`): the same code, the same `google.rpc.ErrorInfo` reason in
domain `tablier.v1`, the same message. The methods are read from the service descriptor,
so a method added to service.proto is served here without code.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping
from typing import Any as TypingAny

from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf import message_factory
from protobuf.wkt import Any as WireAny

from tablier.api.errors import Undecodable, decoded, describe, passes_through
from tablier.api.observe import CallObserver, peer_of
from tablier.api.servicer import GameServicer
from tablier.app import GameApp
from tablier.v1 import service_pb2

SERVICE = service_pb2.DESCRIPTOR.services_by_name["GameService"]
# The largest request body read (a PlayMove is a few hundred bytes; positions are larger).
READ_MAX_BYTES = 1 << 20


def connect_error(exc: BaseException) -> ConnectError:
    code, info, message = describe(exc)
    detail = WireAny(type_url="type.googleapis.com/google.rpc.ErrorInfo", value=info.SerializeToString())
    return ConnectError(Code[code.name], message, [ErrorDetail(detail)])


class _Context:
    """What the servicer reads from a gRPC context, from a Connect request."""

    def __init__(self, ctx) -> None:
        self._ctx = ctx

    def invocation_metadata(self) -> list[tuple[str, str]]:
        return [(key.lower(), value) for key, value in self._ctx.request_headers.allitems()]

    def peer(self) -> str:
        return self._ctx.client_address or ""


def _unary(method, observer: CallObserver):
    @functools.wraps(method)
    async def call(request, ctx):
        context = _Context(ctx)
        peer = peer_of(context)
        try:
            observer.before(peer, context)  # the wrong-credential throttle, as over gRPC
            return await method(decoded(request), context)
        except BaseException as exc:  # the one mapping point, as in the gRPC interceptor
            if passes_through(exc):
                raise
            observer.failed(peer, exc)
            raise connect_error(exc) from None

    return call


def _stream(method, observer: CallObserver):
    @functools.wraps(method)
    async def call(request, ctx) -> AsyncIterator:
        context = _Context(ctx)
        peer = peer_of(context)
        try:
            observer.before(peer, context)
            async for item in method(decoded(request), context):
                yield item
        except BaseException as exc:  # the one mapping point, as in `_unary`
            if passes_through(exc):
                raise
            observer.failed(peer, exc)
            raise connect_error(exc) from None

    return call


class _Tolerant:
    """A codec whose undecodable bodies reach the handler, which refuses them with the
    reason the gRPC transport gives (`UNDECODABLE_REQUEST`)."""

    def __init__(self, codec) -> None:
        self._codec = codec

    def name(self) -> str:
        return self._codec.name()

    def encode(self, message) -> bytes:
        return self._codec.encode(message)

    def decode(self, data, message_class):
        try:
            return self._codec.decode(data, message_class)
        except Exception as exc:  # DecodeError, ParseError and whatever else the bytes provoke
            return Undecodable(exc)


def endpoints(servicer: GameServicer) -> Mapping[str, TypingAny]:
    observer = CallObserver(servicer.app.limiter)
    out = {}
    for m in SERVICE.methods:
        info = MethodInfo(
            name=m.name,
            service_name=SERVICE.full_name,
            input=message_factory.GetMessageClass(m.input_type),
            output=message_factory.GetMessageClass(m.output_type),
            idempotency_level=IdempotencyLevel.UNKNOWN,
            stream_type=StreamType.SERVER_STREAM if m.server_streaming else StreamType.UNARY,
        )
        handler = getattr(servicer, m.name)
        if m.client_streaming:
            raise TypeError(f"{m.full_name}: client streams are not served to browsers")
        if m.server_streaming:
            out[f"/{SERVICE.full_name}/{m.name}"] = Endpoint.server_stream(info, _stream(handler, observer))
        else:
            out[f"/{SERVICE.full_name}/{m.name}"] = Endpoint.unary(info, _unary(handler, observer))
    return out


class GameServiceConnect(ConnectASGIApplication):
    """The ASGI application serving `/tablier.v1.GameService/<Method>`."""

    def __init__(self, app: GameApp) -> None:
        super().__init__(
            service=GameServicer(app),
            endpoints=endpoints,
            read_max_bytes=READ_MAX_BYTES,
            codecs=[_Tolerant(google_protobuf_binary_codec()), _Tolerant(google_protobuf_json_codec())],
        )

    @property
    def path(self) -> str:
        return f"/{SERVICE.full_name}"
