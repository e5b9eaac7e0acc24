"""The server's role tokens, and who a credential makes its caller in one match (`auth`)."""

from __future__ import annotations

from tablier.store.base import GameRecord

from .auth import AUDITOR, SPECTATOR, Credential, Principal, Role, is_operator, seat_of, token_game_id
from .errors import PermissionDenied, Unauthenticated


class Access:
    def __init__(
        self,
        operator_token: str | None = None,
        host_token: str | None = None,
        auditor_token: str | None = None,
        creator_token: str | None = None,
    ) -> None:
        """`host_token` gives host commands and sees what a spectator sees; `auditor_token` reads
        everything and changes nothing; `operator_token` (deprecated) is both. `creator_token`
        creates matches under the `token` creation policy, as the host token does."""
        self.operator_token = operator_token or None
        self.host_tokens = tuple(t for t in (host_token, operator_token) if t)
        self.auditor_tokens = tuple(t for t in (auditor_token, operator_token) if t)
        self.creator_tokens = tuple(t for t in (creator_token, host_token, operator_token) if t)

    def is_host(self, cred: Credential) -> bool:
        return is_operator(cred.token, self.host_tokens)

    def is_auditor(self, cred: Credential) -> bool:
        return is_operator(cred.token, self.auditor_tokens)

    def is_creator(self, cred: Credential) -> bool:
        return is_operator(cred.token, self.creator_tokens)

    def principal(self, game: GameRecord, cred: Credential, *, over: bool, read_only: bool) -> Principal:
        """Who `cred` is in `game`: the auditor, a seat, or a spectator (the host, or nobody)."""
        if self.is_auditor(cred):
            return AUDITOR
        principal = SPECTATOR
        if cred.token and self.is_host(cred):
            pass  # the host reads what a spectator reads, and holds no seat
        elif cred.player_id is not None:
            # A player acts for the seat it holds here (its first), else reads as a spectator.
            held = [s for s in game.seats_of(cred.player_id) if not game.bot(s) and game.token_hashes[s]]
            if held:
                principal = Principal(Role.SEAT, held[0])
        elif cred.token:
            seat = seat_of(cred.token, game.token_hashes)
            if seat is None:
                owner = token_game_id(cred.token)
                if owner and owner != game.game_id:
                    raise PermissionDenied("this seat token belongs to another match", "WRONG_MATCH")
                raise Unauthenticated("the token is not valid for this match", "BAD_TOKEN")
            principal = Principal(Role.SEAT, seat)
        if cred.wants_auditor:
            if not read_only:
                raise PermissionDenied(
                    "the auditor role without the auditor token only reads (GetView, ListEvents)", "AUDITOR_READ_ONLY"
                )
            if not over:
                raise PermissionDenied(
                    "the auditor view of a match in progress needs the auditor token", "MATCH_NOT_OVER"
                )
            return AUDITOR
        return principal


def acting_seat(principal: Principal) -> int:
    """The seat a call that acts as a seat acts for."""
    if principal.role is Role.SPECTATOR:
        raise Unauthenticated("this call acts as a seat: send 'authorization: Bearer <seat token>'", "MISSING_TOKEN")
    if principal.seat is None:
        raise PermissionDenied("the auditor does not hold a seat in the match", "NOT_A_SEAT")
    return principal.seat
