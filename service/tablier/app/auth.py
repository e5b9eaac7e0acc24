"""Who is asking. A caller presents at most a bearer token and an optional role request; the
match decides what that makes them.

Roles:

* **seat**: ``authorization: Bearer <seat token>`` of this match. Seat tokens are
  ``<game id>.<secret>``; the server keeps only SHA-256 hashes of whole tokens.
* **spectator**: no credential. Sees the public view only.
* **auditor**: ``authorization: Bearer <auditor token>`` (``TABLIER_AUDITOR_TOKEN``) on any
  match, at any time: reads everything, changes nothing (it may choose the seed of a new
  match, which it could read anyway). After a match is over anyone may also ask for the auditor role with the
  header ``x-tablier-role: auditor`` (no token needed) on the read-only calls ``GetView`` and
  ``ListEvents``: hidden information is no longer secret then, and auditing a finished match
  must not need an operator. Asked for while the match runs, without the operator token, it is
  PERMISSION_DENIED.

* **host**: ``authorization: Bearer <host token>`` (``TABLIER_HOST_TOKEN``) gives the table's host
  commands (HostCommand) and reads what a spectator reads.

``TABLIER_OPERATOR_TOKEN`` (deprecated) is one credential for both host and auditor.

A token that matches nothing is UNAUTHENTICATED; a valid seat token of a different match is
PERMISSION_DENIED.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
from dataclasses import dataclass


class Role(enum.Enum):
    SEAT = "seat"
    SPECTATOR = "spectator"
    AUDITOR = "auditor"


@dataclass(frozen=True)
class Credential:
    """What the caller presented, before it is checked against a match."""

    token: str | None = None
    wants_auditor: bool = False
    # The player a player credential names, once the transport resolved it (`players.Players.resolve`).
    player_id: str | None = None


ANONYMOUS = Credential()


@dataclass(frozen=True)
class Principal:
    """Who the caller is for one match."""

    role: Role
    seat: int | None = None

    @property
    def auditor(self) -> bool:
        return self.role is Role.AUDITOR


SPECTATOR = Principal(Role.SPECTATOR)
AUDITOR = Principal(Role.AUDITOR)


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def new_seat_token(game_id: str) -> str:
    return f"{game_id}.{secrets.token_urlsafe(32)}"


def token_game_id(token: str) -> str | None:
    """The match a seat token was issued for (its prefix), or None if it has none."""
    head, sep, _ = token.partition(".")
    return head if sep else None


def seat_of(token: str, token_hashes: tuple[bytes, ...]) -> int | None:
    """The seat whose stored hash matches the token, compared in constant time."""
    digest = token_hash(token)
    found = None
    for seat, stored in enumerate(token_hashes):
        if hmac.compare_digest(digest, stored):
            found = seat
    return found


def is_operator(token: str | None, operator_tokens: str | tuple[str, ...] | None) -> bool:
    """Whether `token` is one of the server's role tokens (compared in constant time)."""
    if isinstance(operator_tokens, str):
        operator_tokens = (operator_tokens,)
    if not token or not operator_tokens:
        return False
    found = False
    for known in operator_tokens:
        found |= hmac.compare_digest(token.encode(), known.encode())
    return found


# Shorter role tokens are refused at start: a bearer token must not be guessable.
MIN_ROLE_TOKEN = 32


def check_role_tokens(host: str | None, auditor: str | None, operator: str | None) -> list[str]:
    """Why these role tokens are unsafe (empty when they are fine)."""
    problems = []
    for name, token in (
        ("TABLIER_HOST_TOKEN", host),
        ("TABLIER_AUDITOR_TOKEN", auditor),
        ("TABLIER_OPERATOR_TOKEN", operator),
    ):
        if token is not None and len(token) < MIN_ROLE_TOKEN:
            problems.append(
                f"{name} is {len(token)} characters; at least {MIN_ROLE_TOKEN} are needed "
                "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
        if token is not None and (not token.isprintable() or token != token.strip()):
            problems.append(f"{name} holds spaces or control characters")
    if host and auditor and hmac.compare_digest(host.encode(), auditor.encode()):
        problems.append("TABLIER_HOST_TOKEN and TABLIER_AUDITOR_TOKEN must differ (two roles, two credentials)")
    return problems
