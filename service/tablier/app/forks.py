"""Forks (ForkGame): a new match that starts from another match's state at one of its seqs, to
play on from there. The core decides the fork's opening (`Match.fork`: one generic `forked`
event, the same in every game) from what this module reads of the parent's log, checked:

* from a seat: that seat's Position at the seq (what it knew), every card or tile it could not
  see dealt afresh from the fork's own seed, so the parent's hidden cards never reach the fork;
* from the auditor: the parent's events up to the seq, replayed: its full state.

The fork's record carries its lineage (parent, seq, the parent's chain head there, whose
knowledge), which its genesis hash covers (`integrity.fork_genesis`). A fork is never rated.

Seats: the caller holds them (or `assignments` say who does), as CreateGame gives them; a
signed-in player is bound to the first seat it holds in the fork, as CreateGame binds its creator.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass

from tablier._core import Match
from tablier.store.base import HASH_SCHEME, GameRecord
from tablier.v1.common_pb2 import Forked, ForkedEvent, Viewer

from .access import Access
from .auth import Credential, seat_of
from .clocks import awaits_server
from .commands import Commands
from .errors import BadRequest, NotAllowedNow, OutOfRange, PermissionDenied
from .model import Created, parse_game_id
from .repository import Repository
from .seats import SeatAssignment, SeatPlan, bound_players, plan_seats

# The options a fork may set: its clock's. Every other option is the parent's table.
CLOCK_PREFIX = "clock_"
AUDITOR_FORK = "auditor"


@dataclass(frozen=True)
class ForkedAs:
    """Whose knowledge a fork starts from: a seat's, or the auditor's (seat None)."""

    seat: int | None

    def __str__(self) -> str:
        return AUDITOR_FORK if self.seat is None else f"seat:{self.seat}"

    @staticmethod
    def parse(text: str) -> ForkedAs:
        """`seat:<n>` or `auditor` (the games row's `fork_as`)."""
        if text == AUDITOR_FORK:
            return ForkedAs(None)
        kind, _, n = text.partition(":")
        if kind != "seat" or not n.isdigit():
            raise ValueError(f"not a fork's knowledge: {text!r}")
        return ForkedAs(int(n))


class Forks:
    def __init__(self, repository: Repository, access: Access, commands: Commands) -> None:
        self.repo = repository
        self.access = access
        self.commands = commands

    async def fork_game(
        self,
        parent_game_id: str,
        at_seq: int,
        forked_as: ForkedAs | None,
        cred: Credential,
        assignments: list[SeatAssignment] | None = None,
        options: dict[str, str] | None = None,
        peer: str | None = None,
    ) -> Created:
        """A fork of `parent_game_id` from its state at `at_seq`, as `forked_as` knew it."""
        parent_id = parse_game_id(parent_game_id)
        if forked_as is None:
            raise BadRequest("forked_as is required: a seat, or the auditor", "BAD_FORK_AS")
        options = dict(options or {})
        other = sorted(k for k in options if not k.startswith(CLOCK_PREFIX))
        if other:
            raise BadRequest(
                f"a fork keeps its parent's table: only clock options may be given, not {', '.join(other)}",
                "FORK_OPTION",
            )
        self.commands.limiter.check_options(options)
        parent = await self.repo.game(parent_id)
        if forked_as.seat is not None and not 0 <= forked_as.seat < parent.seats:
            raise BadRequest(
                f"the match has seats 0 to {parent.seats - 1}: there is no seat {forked_as.seat} to fork from",
                "BAD_FORK_AS",
            )
        last, latest = await self.repo.get(parent)
        self._check_may_fork(parent, forked_as, cred, over=latest.is_over())
        if not 1 <= at_seq <= last:
            raise OutOfRange(f"a fork starts from a seq of the match, 1 to {last}, not {at_seq}", "BAD_AT_SEQ")
        self.commands._admit_creator(cred, peer)

        # The parent's log up to the seq (and the event after it), checked as a cold load
        # checks it: the fork is built from nothing the chain does not cover.
        upto, after = await self.repo.prefix(parent, at_seq)
        if after is not None and (after.command_id is None or after.command_id == upto[-1].command_id):
            raise NotAllowedNow(
                f"seq {at_seq} falls inside the events of one step of the match: fork at a seq where a move is awaited",
                "NOT_A_DECISION",
            )
        state, head = await self.repo.replay_prefix(parent, upto)
        request = Forked(parent_game_id=parent.game_id, parent_seq=at_seq, parent_head=head)
        if forked_as.seat is None:
            request.forked_as.auditor.SetInParent()
            request.parent_events.extend(ForkedEvent(kind=ev.kind, payload=ev.payload) for ev in upto)
        else:
            request.forked_as.seat = forked_as.seat
            request.position = state.position(forked_as.seat, auditor=True)

        table = {k: v for k, v in parent.options.items() if not k.startswith(CLOCK_PREFIX)} | options
        match = Match(parent.game_type, parent.seats, table)
        game_id = str(uuid.uuid4())
        seed = secrets.token_bytes(32)
        plan = self._seat_plan(game_id, parent, assignments or [], cred)
        record = GameRecord(
            game_id=game_id,
            game_type=parent.game_type,
            seats=parent.seats,
            options=table,
            seed=seed,
            token_hashes=plan.token_hashes,
            invite_hashes=plan.invite_hashes,
            bots=plan.bots,
            hash_scheme=HASH_SCHEME,
            clocked=awaits_server(self.commands.catalogue.get(parent.game_type), match, plan.bots),
            parent_game_id=parent.game_id,
            parent_seq=at_seq,
            parent_head=head,
            fork_as=str(forked_as),
            seat_players=bound_players(plan, cred.player_id),
        )
        opening = match.fork(request.SerializeToString(), seed, 1)
        return await self.commands.open_match(record, match, opening, plan)

    def _check_may_fork(self, parent: GameRecord, forked_as: ForkedAs, cred: Credential, *, over: bool) -> None:
        """Who may fork: once the parent is over, anyone, from any seat or the auditor's state;
        while it runs, from a seat that seat's token or the player bound to it (what it knew, it
        knows) or the auditor,
        from the auditor's state (every hidden card) the host of a match that is not ranked, or
        the auditor."""
        if over or self.access.is_auditor(cred):
            return
        if forked_as.seat is None:
            if self.access.is_host(cred) and not parent.ranked:
                return
            raise PermissionDenied(
                "a fork from the auditor's state shows every hidden card: only once the match is over, "
                "or by the host of a running match that is not ranked",
                "FORK_NOT_VISIBLE",
            )
        held = seat_of(cred.token, parent.token_hashes) if cred.token else None
        if held is None and cred.player_id is not None:
            held = next((s for s in parent.seats_of(cred.player_id) if not parent.bot(s)), None)
        if held != forked_as.seat:
            raise PermissionDenied(
                f"a fork from seat {forked_as.seat} holds what that seat knew: while the match runs, "
                "only that seat's token or player may ask for it",
                "FORK_NOT_VISIBLE",
            )

    def _seat_plan(
        self, game_id: str, parent: GameRecord, assignments: list[SeatAssignment], cred: Credential
    ) -> SeatPlan:
        """Who fills each seat of the fork: the caller every seat, or as `assignments` say (a
        signed-in caller is then bound to the first seat it holds, `bound_players`)."""
        if assignments and len(assignments) != parent.seats:
            raise BadRequest(
                f"a fork has its parent's {parent.seats} seats: give one seat assignment each, not {len(assignments)}",
                "BAD_SEAT_ASSIGNMENTS",
            )
        bots = list(self.commands.catalogue.get(parent.game_type).bots)
        plan = plan_seats(game_id, parent.seats, assignments, bots)
        if all(plan.bots) and len(plan.bots) == parent.seats and not self.access.is_host(cred):
            raise PermissionDenied("a match of bots only needs the host token", "BOTS_ONLY_NEEDS_HOST")
        return plan


def viewer_of(forked_as: ForkedAs) -> Viewer:
    """The `tablier.v1.Viewer` a fork's knowledge is sent as (ForkInfo.forked_as)."""
    if forked_as.seat is None:
        return Viewer(auditor=Viewer.Auditor())
    return Viewer(seat=forked_as.seat)
