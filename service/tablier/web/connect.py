"""`tablier.v1.GameService` for browsers: the Connect protocol (and gRPC-Web, which the same
library speaks) over HTTP/1.1, as an ASGI application.

It is the gRPC servicer again, not a second one: every method calls the same
`GameServicer` method with a context that reads the call's headers as gRPC metadata
(`authorization`, `x-tablier-role`), and errors leave through the same table
(`tablier.api.errors.describe`): the same code, the same `google.rpc.ErrorInfo` reason in
domain `tablier.v1`, the same message. The methods are read from the service descriptor,
so a method added to service.proto is served here without code.

Each call is observed as over gRPC, by the same `CallObserver`: the wrong-credential throttle,
`tablier_rpc_duration_seconds{method,code}` (codes named as gRPC names them) and the access-log
line, counted from the request's start (`_Observing`, which the library runs before it reads the
body). A request larger than `--max-request-bytes` is refused as gRPC refuses it,
RESOURCE_EXHAUSTED (reason `REQUEST_TOO_LARGE`), from its Content-Length before any of it is
read, else as soon as what was read passes the limit.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any as TypingAny

import grpc
from connectrpc.code import Code
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from protobuf.wkt import Any as WireAny

from tablier.api.errors import Undecodable, decoded, describe, passes_through
from tablier.api.metrics import Metrics
from tablier.api.observe import CallObserver, peer_of
from tablier.api.players import PlayerServicer
from tablier.api.ranked import RankedServicer
from tablier.api.server import MAX_REQUEST_BYTES
from tablier.api.servicer import GameServicer
from tablier.app import GameApp
from tablier.app.errors import ResourceExhausted
from tablier.v1 import players_pb2, ranked_pb2, service_pb2

SERVICE = service_pb2.DESCRIPTOR.services_by_name["GameService"]
PLAYER_SERVICE = players_pb2.DESCRIPTOR.services_by_name["PlayerService"]
RANKED_SERVICE = ranked_pb2.DESCRIPTOR.services_by_name["RankedService"]
# gRPC-Web and Connect streams frame the message: one byte of flags and four of length.
ENVELOPE_BYTES = 5


def connect_error(exc: BaseException) -> ConnectError:
    return _connect_error(*describe(exc))


def _connect_error(code: grpc.StatusCode, info: error_details_pb2.ErrorInfo, message: str) -> ConnectError:
    detail = WireAny(type_url="type.googleapis.com/google.rpc.ErrorInfo", value=info.SerializeToString())
    return ConnectError(Code[code.name], message, [ErrorDetail(detail)])


def _too_large(limit: int, size: int | None = None) -> ResourceExhausted:
    told = f"{size} bytes, " if size is not None else ""
    return ResourceExhausted(
        f"the request is {told}more than the {limit} bytes accepted (--max-request-bytes)", "REQUEST_TOO_LARGE"
    )


class _Context:
    """What the servicer reads from a gRPC context, from a Connect request."""

    def __init__(self, ctx: RequestContext[TypingAny, TypingAny]) -> None:
        self._ctx = ctx

    def invocation_metadata(self) -> list[tuple[str, str]]:
        return [(key.lower(), value) for key, value in self._ctx.request_headers.allitems()]

    def peer(self) -> str:
        return self._ctx.client_address or ""


class _Call:
    """One call as `_Observing` and the method's wrapper see it."""

    __slots__ = ("started", "method", "peer", "streaming", "request", "code", "reason")

    def __init__(self, method: str, peer: str, streaming: bool) -> None:
        self.started = time.perf_counter()
        self.method = method
        self.peer = peer
        self.streaming = streaming
        self.request: object = None
        self.code = ""  # set by the wrapper when the servicer's error was mapped
        self.reason = ""


# The call this task serves (the library runs the interceptor and the handler in one task).
_current: ContextVar[_Call | None] = ContextVar("tablier_web_call", default=None)

# Connect's code names that are not gRPC's (the metric's `code` label and the access log use gRPC's).
_GRPC_NAMES = {Code.CANCELED: "CANCELLED"}


class _Observing:
    """A metadata interceptor (connectrpc runs it before reading the body): times each call,
    refuses a body declared too large, and gives the observer each call's end, whether the
    servicer or the library refused it."""

    def __init__(self, observer: CallObserver, max_request_bytes: int) -> None:
        self.observer = observer
        self.max_request_bytes = max_request_bytes

    async def on_start(self, ctx: RequestContext[TypingAny, TypingAny]) -> _Call:
        info = ctx.method
        call = _Call(info.name, peer_of(_Context(ctx)), info.stream_type == StreamType.SERVER_STREAM)
        _current.set(call)
        declared = ctx.request_headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_request_bytes + ENVELOPE_BYTES:
            # Refused here, the call never starts: no on_end follows.
            exc = _too_large(self.max_request_bytes, int(declared))
            self.observer.done(
                call.method, call.peer, None, "RESOURCE_EXHAUSTED", exc.reason, time.perf_counter() - call.started
            )
            raise connect_error(exc)
        if call.streaming:
            self.observer.stream_opened(call.method)
        return call

    async def on_end(self, call: _Call, ctx: RequestContext[TypingAny, TypingAny], error: Exception | None) -> None:
        replaced = None
        if error is None:
            code, reason = "OK", ""
        elif call.code:
            code, reason = call.code, call.reason
        elif isinstance(error, ConnectError) and error.code == Code.RESOURCE_EXHAUSTED:
            # The library's read limit (the body, a frame or a decompressed message).
            exc = _too_large(self.max_request_bytes)
            code, reason, replaced = "RESOURCE_EXHAUSTED", exc.reason, connect_error(exc)
        elif isinstance(error, ConnectError):
            code, reason = _GRPC_NAMES.get(error.code, error.code.name), ""
        else:
            code, reason = "UNKNOWN", ""
        if call.streaming:
            self.observer.stream_closed(call.method)
        self.observer.done(call.method, call.peer, call.request, code, reason, time.perf_counter() - call.started)
        if replaced is not None:
            raise replaced  # replaces the library's error, which has no reason


def _call_of(ctx: RequestContext[TypingAny, TypingAny], request: object) -> tuple[_Call, _Context]:
    """This call's record, with the request noted for the access log, and the servicer's context."""
    context = _Context(ctx)
    call = _current.get() or _Call(ctx.method.name, peer_of(context), False)
    call.request = request
    return call, context


def _refusal(call: _Call, exc: BaseException, observer: CallObserver) -> ConnectError:
    observer.failed(call.peer, exc)
    code, info, message = describe(exc)
    call.code, call.reason = code.name, info.reason
    return _connect_error(code, info, message)


_Handle = Callable[[TypingAny, RequestContext[TypingAny, TypingAny]], Awaitable[TypingAny]]
_StreamHandle = Callable[[TypingAny, RequestContext[TypingAny, TypingAny]], AsyncIterator[TypingAny]]


def _unary(method: Callable[..., Awaitable[TypingAny]], observer: CallObserver) -> _Handle:
    @functools.wraps(method)
    async def handle(request: object, ctx: RequestContext[TypingAny, TypingAny]) -> TypingAny:
        call, context = _call_of(ctx, request)
        try:
            observer.before(call.peer, context)  # the wrong-credential throttle, as over gRPC
            return await method(decoded(request), context)
        except BaseException as exc:  # the one mapping point, as in the gRPC interceptor
            if passes_through(exc):
                raise
            raise _refusal(call, exc, observer) from None

    return handle


def _stream(method: Callable[..., AsyncIterator[TypingAny]], observer: CallObserver) -> _StreamHandle:
    @functools.wraps(method)
    async def handle(request: object, ctx: RequestContext[TypingAny, TypingAny]) -> AsyncIterator[TypingAny]:
        call, context = _call_of(ctx, request)
        try:
            observer.before(call.peer, context)
            async for item in method(decoded(request), context):
                yield item
        except BaseException as exc:  # the one mapping point, as in `_unary`
            if passes_through(exc):
                raise
            raise _refusal(call, exc, observer) from None

    return handle


class _Tolerant:
    """A codec whose undecodable bodies reach the handler, which refuses them with the
    reason the gRPC transport gives (`UNDECODABLE_REQUEST`)."""

    def __init__(self, codec: Codec[Message, Message]) -> None:
        self._codec = codec

    def name(self) -> str:
        return self._codec.name()

    def encode(self, message: Message) -> bytes:
        return self._codec.encode(message)

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> Message | Undecodable:
        try:
            return self._codec.decode(data, message_class)
        except Exception as exc:  # DecodeError, ParseError and whatever else the bytes provoke
            return Undecodable(exc)


def endpoints(
    servicer: TypingAny, observer: CallObserver, service: ServiceDescriptor = SERVICE
) -> Mapping[str, TypingAny]:
    out: dict[str, TypingAny] = {}
    for m in service.methods:
        info = MethodInfo(
            name=m.name,
            service_name=service.full_name,
            input=message_factory.GetMessageClass(m.input_type),
            output=message_factory.GetMessageClass(m.output_type),
            idempotency_level=IdempotencyLevel.UNKNOWN,
            stream_type=StreamType.SERVER_STREAM if m.server_streaming else StreamType.UNARY,
        )
        # Server streams as messages (the codecs here encode them), never as gRPC's bytes.
        if m.client_streaming:
            raise TypeError(f"{m.full_name}: client streams are not served to browsers")
        if m.server_streaming:
            stream = servicer.streams_of_messages().get(m.name) or getattr(servicer, m.name)
            out[f"/{service.full_name}/{m.name}"] = Endpoint.server_stream(info, _stream(stream, observer))
        else:
            out[f"/{service.full_name}/{m.name}"] = Endpoint.unary(info, _unary(getattr(servicer, m.name), observer))
    return out


class GameServiceConnect(ConnectASGIApplication[GameServicer]):
    """The ASGI application serving `/tablier.v1.GameService/<Method>`: requests of at most
    `max_request_bytes`, each call observed with `metrics` (if any) and the access log."""

    def __init__(
        self, app: GameApp, max_request_bytes: int = MAX_REQUEST_BYTES, metrics: Metrics | None = None
    ) -> None:
        observer = CallObserver(app.limiter, metrics)
        super().__init__(
            service=GameServicer(app),
            endpoints=functools.partial(endpoints, observer=observer),
            interceptors=[_Observing(observer, max_request_bytes)],
            read_max_bytes=max_request_bytes,
            codecs=[_Tolerant(google_protobuf_binary_codec()), _Tolerant(google_protobuf_json_codec())],
        )

    @property
    def path(self) -> str:
        return f"/{SERVICE.full_name}"


class PlayerServiceConnect(ConnectASGIApplication[PlayerServicer]):
    """`/tablier.v1.PlayerService/<Method>` (player accounts), as `GameServiceConnect` serves
    GameService: the same servicer as gRPC's, the same errors, limits and observation."""

    def __init__(
        self, app: GameApp, max_request_bytes: int = MAX_REQUEST_BYTES, metrics: Metrics | None = None
    ) -> None:
        observer = CallObserver(app.limiter, metrics)
        super().__init__(
            service=PlayerServicer(app),
            endpoints=functools.partial(endpoints, observer=observer, service=PLAYER_SERVICE),
            interceptors=[_Observing(observer, max_request_bytes)],
            read_max_bytes=max_request_bytes,
            codecs=[_Tolerant(google_protobuf_binary_codec()), _Tolerant(google_protobuf_json_codec())],
        )

    @property
    def path(self) -> str:
        return f"/{PLAYER_SERVICE.full_name}"


class RankedServiceConnect(ConnectASGIApplication[RankedServicer]):
    """`/tablier.v1.RankedService/<Method>` (ratings, leaderboards, the queue), as
    `GameServiceConnect` serves GameService: FindMatch streams to browsers too."""

    def __init__(
        self, app: GameApp, max_request_bytes: int = MAX_REQUEST_BYTES, metrics: Metrics | None = None
    ) -> None:
        observer = CallObserver(app.limiter, metrics)
        super().__init__(
            service=RankedServicer(app),
            endpoints=functools.partial(endpoints, observer=observer, service=RANKED_SERVICE),
            interceptors=[_Observing(observer, max_request_bytes)],
            read_max_bytes=max_request_bytes,
            codecs=[_Tolerant(google_protobuf_binary_codec()), _Tolerant(google_protobuf_json_codec())],
        )

    @property
    def path(self) -> str:
        return f"/{RANKED_SERVICE.full_name}"
