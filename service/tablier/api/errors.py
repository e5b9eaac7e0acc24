"""The one place where errors become statuses, for both transports.

`classify` is the one table from domain errors to (status code, reason, message); the gRPC
interceptor below and the browser transport (`tablier.web.connect`) both send what
`describe` gives, so a refusal reads the same whichever way it travels. Every gRPC error
status carries a `google.rpc.Status` (trailer `grpc-status-details-bin`, via grpcio-status)
with one `google.rpc.ErrorInfo` whose `reason` is a machine code (`NOT_YOUR_TURN`,
`UNKNOWN_GAME`, ...) in domain `tablier.v1`, and a message a person understands. Unexpected errors are logged with an incident id and reported as INTERNAL
without internals.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from tablier import _core
from tablier.app import errors as app_errors

from .observe import CallObserver, peer_of

log = logging.getLogger(__name__)

DOMAIN = "tablier.v1"

_APP_CODES: list[tuple[type[app_errors.AppError], grpc.StatusCode]] = [
    (app_errors.BadRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (app_errors.OutOfRange, grpc.StatusCode.OUT_OF_RANGE),
    (app_errors.MatchNotFound, grpc.StatusCode.NOT_FOUND),
    (app_errors.Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (app_errors.PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (app_errors.NotAllowedNow, grpc.StatusCode.FAILED_PRECONDITION),
    (app_errors.Conflict, grpc.StatusCode.ABORTED),
    (app_errors.AlreadyExists, grpc.StatusCode.ALREADY_EXISTS),
    (app_errors.NotImplementedForGame, grpc.StatusCode.UNIMPLEMENTED),
    (app_errors.DataLoss, grpc.StatusCode.DATA_LOSS),
    (app_errors.ResourceExhausted, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (app_errors.Unavailable, grpc.StatusCode.UNAVAILABLE),
]


def classify(exc: BaseException) -> tuple[grpc.StatusCode, str, str]:
    """(status code, reason, message) for an error raised while handling a call."""
    for cls, code in _APP_CODES:
        if isinstance(exc, cls):
            return code, exc.reason, exc.message
    if isinstance(exc, _core.RuleViolation):
        args = exc.args
        reason, message = (args[0], args[1]) if len(args) >= 2 else ("RULE_VIOLATION", str(exc))
        return grpc.StatusCode.FAILED_PRECONDITION, str(reason), str(message)
    if isinstance(exc, _core.MalformedInput):
        return grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_INPUT", str(exc)
    if isinstance(exc, _core.InvalidOption):
        return grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTION", str(exc)
    if isinstance(exc, _core.Unsupported):
        return grpc.StatusCode.UNIMPLEMENTED, "UNSUPPORTED", str(exc)
    if isinstance(exc, _core.CorruptLog):
        # A stored event that does not apply: the log is damaged, never an internal error.
        log.error("stored event does not apply: %s", exc)
        return grpc.StatusCode.DATA_LOSS, "EVENT_LOG_DAMAGED", "a stored event does not apply: the event log is damaged"
    incident = secrets.token_hex(6)
    log.error("internal error %s", incident, exc_info=exc)
    return grpc.StatusCode.INTERNAL, "INTERNAL", f"internal error (incident {incident})"


# A message echoes what the client sent (an option value, a bot name); it travels twice in the
# trailers, so it is cut well below the clients' 8 KB metadata limit.
MAX_MESSAGE = 1000


def describe(
    exc: BaseException, classified: tuple[grpc.StatusCode, str, str] | None = None
) -> tuple[grpc.StatusCode, error_details_pb2.ErrorInfo, str]:
    """(status code, ErrorInfo, message) that any transport sends for `exc`: `classify` (or
    what it already gave), with the message cut and the error's metadata in the ErrorInfo."""
    code, reason, message = classified or classify(exc)
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE] + "…"
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=getattr(exc, "metadata", None))
    return code, info, message


def status_for(exc: BaseException, classified: tuple[grpc.StatusCode, str, str] | None = None) -> grpc.Status:
    code, info, message = describe(exc, classified)
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=getattr(code_pb2, code.name), message=message, details=[detail])
    return rpc_status.to_status(status)


def passes_through(exc: BaseException) -> bool:
    """Errors that are not the handler's: an abort already under way, a cancelled call, or
    the process being asked to stop."""
    return isinstance(
        exc, grpc.aio.AbortError | asyncio.CancelledError | GeneratorExit | KeyboardInterrupt | SystemExit
    )


class Undecodable:
    """A request body that is not the method's message (the deserializer cannot refuse a call)."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _tolerant(deserialize: Callable[[bytes], object] | None) -> Callable[[bytes], object] | None:
    if deserialize is None:
        return None

    def read(data: bytes) -> object:
        try:
            return deserialize(data)
        except Exception as exc:  # DecodeError and whatever else the bytes provoke
            return Undecodable(exc)

    return read


def decoded(request: object) -> object:
    if isinstance(request, Undecodable):
        raise app_errors.BadRequest(f"the request is not a valid message: {request.error}", "UNDECODABLE_REQUEST")
    return request


def _ended(exc: BaseException) -> str:
    """The status name of a call that ended by an error that passes through."""
    if isinstance(exc, grpc.aio.AbortError):
        return "ABORTED_BY_HANDLER"
    return "CANCELLED"


def unary(
    fn: Callable[..., Awaitable[Any]], method: str = "", observer: CallObserver | None = None
) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(fn)
    async def call(request: object, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        started = time.perf_counter()
        peer = peer_of(context)
        code, reason = "OK", ""
        try:
            request = decoded(request)
            if observer is not None:
                observer.before(peer, context)
            return await fn(request, context)
        except BaseException as exc:  # the one mapping point; a Rust panic is a BaseException
            if passes_through(exc):
                code = _ended(exc)
                raise
            classified = classify(exc)
            code, reason = classified[0].name, classified[1]
            if observer is not None:
                observer.failed(peer, exc)
            await context.abort_with_status(status_for(exc, classified))
        finally:
            if observer is not None:
                observer.done(method, peer, request, code, reason, time.perf_counter() - started)

    return call


def stream(
    fn: Callable[..., AsyncIterator[Any]], method: str = "", observer: CallObserver | None = None
) -> Callable[..., AsyncIterator[Any]]:
    @functools.wraps(fn)
    async def call(request: object, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        started = time.perf_counter()
        peer = peer_of(context)
        code, reason = "OK", ""
        if observer is not None:
            observer.stream_opened(method)
        try:
            request = decoded(request)
            if observer is not None:
                observer.before(peer, context)
            async for item in fn(request, context):
                yield item
        except BaseException as exc:  # the one mapping point, as in `unary`
            if passes_through(exc):
                code = _ended(exc)
                raise
            classified = classify(exc)
            code, reason = classified[0].name, classified[1]
            if observer is not None:
                observer.failed(peer, exc)
            await context.abort_with_status(status_for(exc, classified))
        finally:
            if observer is not None:
                observer.stream_closed(method)
                observer.done(method, peer, request, code, reason, time.perf_counter() - started)

    return call


class ErrorMappingInterceptor(grpc.aio.ServerInterceptor):
    """Wraps every tablier.v1 method so that any error it raises leaves as a mapped status;
    an `observer` (api.observe) throttles, counts and logs each call. Each method's wrapped
    handler is made once, on its first call, not on every call."""

    def __init__(self, observer: CallObserver | None = None) -> None:
        self.observer = observer
        # method -> (its handler, the wrapped handler)
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler[Any, Any], grpc.RpcMethodHandler[Any, Any]]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or not method.startswith(f"/{DOMAIN}."):
            return handler
        known = self._wrapped.get(method)
        if known is None or known[0] is not handler:
            known = self._wrapped[method] = (handler, self._wrap(handler, method.rsplit("/", 1)[-1]))
        return known[1]

    def _wrap(self, handler: grpc.RpcMethodHandler[Any, Any], name: str) -> grpc.RpcMethodHandler[Any, Any]:
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                unary(handler.unary_unary, name, self.observer),
                request_deserializer=_tolerant(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                # grpc.aio's stream handlers are async generators (the stubs type them as sync).
                stream(cast(Callable[..., AsyncIterator[Any]], handler.unary_stream), name, self.observer),
                request_deserializer=_tolerant(handler.request_deserializer),
                response_serializer=handler.response_serializer,
            )
        return handler
