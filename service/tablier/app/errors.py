"""Domain errors of command handling. They carry a machine-readable reason and a message a
person understands; the API layer maps each class to one gRPC status code, in one place."""

from __future__ import annotations

from tablier.store.base import SeqConflict, StoreError, StoreUnavailable, UnknownGame


class AppError(Exception):
    """Base class. ``reason`` is a stable UPPER_SNAKE code, ``message`` is for people."""

    default_reason = "ERROR"

    def __init__(self, message: str, reason: str | None = None, metadata: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or self.default_reason
        # Machine-readable details a client can act on (ErrorInfo.metadata), e.g. where to resume.
        self.metadata = metadata or {}


class BadRequest(AppError):
    """Malformed input: a missing field, a bad uuid, a payload of the wrong type."""

    default_reason = "MALFORMED"


class OutOfRange(AppError):
    """A seq past the end of the match."""

    default_reason = "SEQ_OUT_OF_RANGE"


class MatchNotFound(AppError):
    default_reason = "UNKNOWN_MATCH"


class Unauthenticated(AppError):
    """No credential where one is needed, or one that is valid for nothing."""

    default_reason = "UNAUTHENTICATED"


class PermissionDenied(AppError):
    """A valid credential that does not allow this call on this match."""

    default_reason = "PERMISSION_DENIED"


class NotAllowedNow(AppError):
    """The match's state refuses the command (e.g. a seat that is not awaited)."""

    default_reason = "FAILED_PRECONDITION"


class Conflict(AppError):
    """The match moved on (expected_seq mismatch or a lost append race): retry."""

    default_reason = "SEQ_CONFLICT"


class AlreadyExists(AppError):
    """A command id already names another command of this match."""

    default_reason = "COMMAND_ID_REUSED"


class NotImplementedForGame(AppError):
    default_reason = "UNSUPPORTED"


class DataLoss(AppError):
    """The stored log of a match fails its checks (a broken hash chain, a missing or changed
    event, an unreadable seed): the match is refused until an operator repairs it. ``seq`` is
    the first bad seq (0 when the match record itself is bad)."""

    default_reason = "EVENT_LOG_DAMAGED"

    def __init__(self, message: str, reason: str | None = None, seq: int = 0) -> None:
        super().__init__(message, reason)
        self.seq = seq
        self.metadata = {"seq": str(seq)}


class ResourceExhausted(AppError):
    """A limit of the server: too many streams, too many matches created, too many bad
    credentials from one peer, a watcher that did not keep up. Retry later (the metadata may
    say when, or where to resume)."""

    default_reason = "LIMIT_REACHED"


class Unavailable(AppError):
    """The server cannot do this now (its database is unreachable): retry, with the same
    command id for a move (its outcome may be unknown)."""

    default_reason = "UNAVAILABLE"


def from_store(exc: StoreError) -> AppError | StoreError:
    """The application's error for a store error that reached a call's boundary (the one place
    store errors are translated); one it has no word for is returned as it is."""
    if isinstance(exc, UnknownGame):
        return MatchNotFound(f"no match {exc}")
    if isinstance(exc, SeqConflict):
        return Conflict("another move was applied first: reload and retry", "SEQ_CONFLICT")
    if isinstance(exc, StoreUnavailable):
        return Unavailable(
            f"the database cannot be reached ({exc}); retry (a move with the same command id)", "DATABASE_UNAVAILABLE"
        )
    return exc
