"""What the server refused, as exceptions: the gRPC status code, the machine-readable reason
of its `google.rpc.ErrorInfo` (domain `tablier.v1`), and the human message.

    try:
        await seat.play(action)
    except Refused as e:          # FAILED_PRECONDITION: a rule said no
        print(e.reason, e.message)  # e.g. NOT_YOUR_TURN, "..."
"""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped,unused-ignore]

_STATUS_DETAILS_KEY = "grpc-status-details-bin"


class TablierError(Exception):
    """A call the server answered with an error status."""

    code: grpc.StatusCode
    reason: str
    message: str
    metadata: dict[str, str]

    def __init__(
        self, code: grpc.StatusCode, message: str, reason: str = "", metadata: dict[str, str] | None = None
    ) -> None:
        super().__init__(f"{code.name}{f' {reason}' if reason else ''}: {message}")
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})


class InvalidArgument(TablierError):
    """Malformed input: a wrong message type, a bad option, an unknown game type."""


class Refused(TablierError):
    """FAILED_PRECONDITION: the rules refuse the move now (`reason` says why, e.g. NOT_YOUR_TURN)."""


class Conflict(TablierError):
    """ABORTED: the match moved on (an `expected_seq` that is no longer current, or a lost
    race): look at the match again and decide again."""


class NotFound(TablierError):
    """No such match."""


class AlreadyExists(TablierError):
    """A command id already used for another command of the match."""


class Unauthenticated(TablierError):
    """A missing or unknown credential."""


class PermissionDenied(TablierError):
    """A credential of another match, or a role that may not do this."""


class OutOfRange(TablierError):
    """A seq past the end of the match."""


class ResourceExhausted(TablierError):
    """A limit of the server (`reason` says which, e.g. CREATE_RATE_LIMITED or
    WATCH_BATCHES_REQUIRED; `metadata` may carry `retry_after_ms` or `resume_after_seq`)."""


class Unavailable(TablierError):
    """The server could not be reached (after the SDK's retries, where a retry was safe)."""


_BY_CODE: dict[grpc.StatusCode, type[TablierError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.FAILED_PRECONDITION: Refused,
    grpc.StatusCode.ABORTED: Conflict,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExists,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.OUT_OF_RANGE: OutOfRange,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
}


def from_rpc_error(exc: grpc.aio.AioRpcError) -> TablierError:
    """The SDK's exception for a failed call, with the ErrorInfo reason when the server sent one."""
    code = exc.code()
    message = exc.details() or ""
    reason, metadata = "", {}
    for key, value in exc.trailing_metadata() or ():
        if key == _STATUS_DETAILS_KEY and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            message = status.message or message
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    reason, metadata = info.reason, dict(info.metadata)
    return _BY_CODE.get(code, TablierError)(code, message, reason, metadata)
