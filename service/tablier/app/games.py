"""Command handling: create, load, play and watch matches against an event store.

No gRPC types here: the API layer turns requests into these calls and the results and
errors into messages and status codes. Everything a viewer receives goes through the core's
`view` / `redact` for that viewer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import NoReturn

from tablier import _core
from tablier._core import Match
from tablier.store.base import (
    HASH_SCHEME,
    ChainBroken,
    CommandInput,
    EventStore,
    GameRecord,
    NewEvent,
    SeqConflict,
    StoredCommand,
    StoredEvent,
    UnknownGame,
    genesis_hash,
    seed_commitment,
    stored_state_hash,
)
from tablier.seeds import SeedUnreadable

from .auth import (
    ANONYMOUS,
    AUDITOR,
    SPECTATOR,
    Credential,
    Principal,
    Role,
    is_operator,
    new_seat_token,
    seat_of,
    token_game_id,
    token_hash,
)
from . import integrity
from .cache import MatchCache, Snapshots
from .clocks import TIMEOUT_COMMAND_PREFIX, SeatClock, apply_stored, ms, next_timeout, seat_clocks, timeout_command
from .catalogue import Catalogue
from .errors import (
    AlreadyExists,
    AppError,
    BadRequest,
    Conflict,
    DataLoss,
    MatchNotFound,
    NotAllowedNow,
    OutOfRange,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)
from .limits import Limiter, Limits
from .seats import (
    SeatAssignment,
    SeatInfo,
    SeatStatus,
    bot_seed,
    invited_seat,
    join_token,
    plan_seats,
    seat_infos,
)
from .watch import Feeds, WatchBatch, WatchItem

log = logging.getLogger(__name__)

MAX_COMMAND_ID = 128
# Events a watcher catching up from the log is sent per batch.
CATCH_UP_BATCH = 64


@dataclass(frozen=True)
class Payload:
    """A game-specific protobuf message: its full type name and its bytes."""

    type_name: str
    data: bytes


@dataclass(frozen=True)
class MatchState:
    """A match at one seq, as one viewer may see it."""

    game_id: str
    game_type: str
    seq: int
    principal: Principal
    to_act: list[int]
    over: bool
    outcome: bytes | None  # tablier.v1.Outcome
    view: Payload
    seat_count: int
    # Integrity (README "Checking a match"): the chain hash of event `seq` (None when it is
    # not published to this viewer), the seed commitment, the seed once the match is over.
    chain_head: bytes | None = None
    seed_commitment: bytes = b""
    seed: bytes | None = None
    options: dict[str, str] = field(default_factory=dict)
    integrity_scheme: int = 1
    # Who fills each seat now, in seat order (public).
    seats: tuple[SeatInfo, ...] = ()
    # Each seat's clock, in seat order; () when the match has no clock (public).
    clocks: tuple[SeatClock, ...] = ()


@dataclass(frozen=True)
class EventOut:
    seq: int
    kind: str
    seat: int | None
    payload: Payload
    recorded_at: datetime | None
    chain_hash: bytes | None = None
    # The auditor's only: what the rest of the chain hash covers, and on a command's first
    # event what the command asked.
    command_id: str | None = None
    core_version: str | None = None
    command: CommandOut | None = None
    state_hash: bytes | None = None


@dataclass(frozen=True)
class CommandOut:
    """What a command asked: a seat's action, or a host command."""

    seat: int | None
    action: Payload | None
    host_command: str | None


@dataclass(frozen=True)
class Created:
    game_id: str
    # The creator's seat tokens in seat order ("" for seats it does not hold).
    seat_tokens: list[str]
    state: MatchState
    # Invite codes in seat order ("" for seats that are not invited; empty when none is).
    invite_codes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Joined:
    seat: int
    seat_token: str
    state: MatchState
    # True when this join_key had joined already: the same seat and token again.
    replayed: bool = False


@dataclass(frozen=True)
class Played:
    events: list[EventOut]
    state: MatchState
    replayed: bool


def parse_game_id(game_id: str) -> str:
    if not game_id:
        raise BadRequest("game_id is required", "MISSING_FIELD")
    try:
        return str(uuid.UUID(game_id))
    except ValueError:
        raise BadRequest(f"game_id {game_id[:64]!r} is not a uuid", "BAD_GAME_ID") from None


# Command ids the server gives its own commands (a core timer's host command) start with this.
SERVER_COMMAND_PREFIX = "timer:"
# ... and those of the moves it plays for bot seats (`bot:<seat>:<seq before the move>`).
BOT_COMMAND_PREFIX = "bot:"
# Seconds after which a server watching a match plays a bot seat still awaited (the server that
# appended the move before it should have, but may have stopped).
BOT_BACKSTOP_SECONDS = 5.0


def check_command_id(command_id: str) -> None:
    if not command_id:
        raise BadRequest("command_id is required (a client-chosen id, unique per command)", "MISSING_FIELD")
    if len(command_id) > MAX_COMMAND_ID:
        raise BadRequest(f"command_id is longer than {MAX_COMMAND_ID} characters", "BAD_COMMAND_ID")
    if not command_id.isprintable():
        raise BadRequest("command_id holds a control character", "BAD_COMMAND_ID")
    if command_id.startswith((SERVER_COMMAND_PREFIX, BOT_COMMAND_PREFIX, TIMEOUT_COMMAND_PREFIX)):
        raise BadRequest(f"command ids starting with {SERVER_COMMAND_PREFIX!r}, {BOT_COMMAND_PREFIX!r} or "
                         f"{TIMEOUT_COMMAND_PREFIX!r} are the server's own", "BAD_COMMAND_ID")


def check_type(payload: Payload, expected: str, what: str) -> None:
    if payload.type_name != expected:
        raise BadRequest(
            f"{what} must be a {expected}, not {payload.type_name or 'an untyped payload'}",
            "WRONG_PAYLOAD_TYPE",
        )


# Replays of more events than this run in a thread: at tens of microseconds an event (checked),
# shorter ones cost less than the thread hop.
_INLINE_REPLAY = 128


class GameApp:
    def __init__(
        self,
        store: EventStore,
        operator_token: str | None = None,
        cache_size: int = 1024,
        *,
        host_token: str | None = None,
        auditor_token: str | None = None,
        limits: Limits | None = None,
        creator_token: str | None = None,
    ) -> None:
        """`host_token` gives host commands and sees what a spectator sees; `auditor_token` reads
        everything and changes nothing; `operator_token` (deprecated) is both. `creator_token`
        creates matches under the `token` creation policy, as the host token does; `limits`
        are the per-peer limits (`limits.Limits`)."""
        self.store = store
        self.operator_token = operator_token or None
        self.host_tokens = tuple(t for t in (host_token, operator_token) if t)
        self.auditor_tokens = tuple(t for t in (auditor_token, operator_token) if t)
        self.creator_tokens = tuple(t for t in (creator_token, host_token, operator_token) if t)
        self.limiter = Limiter(limits)
        self.feeds = Feeds(store, self._event_out, self._state, self._checked_step, after=self._backstop_bots,
                           pace=self.limiter.limits.watch_pace / 1000)
        self.catalogue = Catalogue()
        self.cache = MatchCache(cache_size)
        self.snapshots = Snapshots()
        self.records: OrderedDict[str, GameRecord] = OrderedDict()
        # Chain hash of the last event of each cached state, as verified (see `_load`).
        self._heads: OrderedDict[str, tuple[int, bytes]] = OrderedDict()
        # Matches whose log failed its checks, refused until restart; and how many failed.
        self.damaged: dict[str, DataLoss] = {}
        self.integrity_failures = 0
        # Per match, the core timer running now and the task that gives its host command.
        self._timers: dict[str, tuple[tuple[str, int, int], asyncio.Task[None]]] = {}
        # Per match with a clock, the wait that times out first ((seq, deadline ms, seat)) and
        # the task that gives its timeout; and the task arming the running clocks at start.
        self._clocks: dict[str, tuple[tuple[int, int, int], asyncio.Task[None]]] = {}
        self._clock_scan: asyncio.Task[None] | None = None
        # Per match, the task playing its bot seats, and the matches it must look at again.
        self._bots: dict[str, asyncio.Task[None]] = {}
        self._bots_again: set[str] = set()
        # Per watched match awaiting a bot, the task that checks later that the bot moved.
        self._backstops: dict[str, asyncio.Task[None]] = {}
        self._backstops_again: set[str] = set()

    async def close(self) -> None:
        """Stops the running timers and bot seats (their waits resume when a server loads the
        match again) and ends the watch feeds."""
        await self.feeds.close()
        timers = [task for _, task in self._timers.values()] + list(self._bots.values())
        timers += self._backstops.values()
        timers += [task for _, task in self._clocks.values()]
        if self._clock_scan is not None:
            timers.append(self._clock_scan)
            self._clock_scan = None
        self._clocks.clear()
        self._timers.clear()
        self._bots.clear()
        self._backstops.clear()
        for task in timers:
            task.cancel()
        await asyncio.gather(*timers, return_exceptions=True)

    def end_watches(self) -> None:
        """Ends every watch stream with UNAVAILABLE (SHUTTING_DOWN): the server is stopping."""
        self.feeds.end_all()

    # ----------------------------------------------------------------- game types

    def game_types(self):
        return self.catalogue.all()

    # ----------------------------------------------------------------- create

    async def create_game(
        self,
        game_type: str,
        seats: int,
        options: dict[str, str],
        seed: bytes = b"",
        cred: Credential = ANONYMOUS,
        assignments: list[SeatAssignment] | None = None,
        peer: str | None = None,
    ) -> Created:
        """A new match. `assignments` says who fills each seat (`seats` may be 0 then); none:
        the creator holds every seat. A match of bots only needs the host token: the server
        would play all of it for one cheap call."""
        if not game_type:
            raise BadRequest("game_type is required", "MISSING_FIELD")
        info = self.catalogue.get(game_type)
        self.limiter.check_options(options)
        self._admit_creator(cred, peer)
        if assignments and not seats:
            seats = len(assignments)
        if not seed:
            seed = secrets.token_bytes(32)
        elif len(seed) != 32:
            raise BadRequest(f"a seed is 32 bytes, not {len(seed)}", "BAD_SEED")
        elif not is_operator(cred.token, self.auditor_tokens):
            # Whoever knows the seed can compute every hidden card of the match: only the
            # auditor, who sees every card anyway, may choose it.
            raise PermissionDenied("choosing the seed needs the auditor token: the seed decides every hidden card",
                                   "SEED_NEEDS_OPERATOR")
        match = Match(game_type, seats, dict(options))
        game_id = str(uuid.uuid4())
        plan = plan_seats(game_id, seats, assignments or [], list(info.bots))
        if all(plan.bots) and len(plan.bots) == seats and not is_operator(cred.token, self.host_tokens):
            raise PermissionDenied("a match of bots only needs the host token", "BOTS_ONLY_NEEDS_HOST")
        record = GameRecord(
            game_id=game_id,
            game_type=game_type,
            seats=seats,
            options=dict(options),
            seed=seed,
            token_hashes=plan.token_hashes,
            invite_hashes=plan.invite_hashes,
            bots=plan.bots,
            hash_scheme=HASH_SCHEME,
            clocked=match.clock() is not None,
        )
        opening = match.start(seed, 1)
        events = self._evolve(record, match, opening, seat=None)
        stored = await self.store.create_game(record, events)
        if record.clocked:
            # The clock starts at the recorded time of the opening events.
            match = self._blank(record)
            for ev in stored:
                apply_stored(match, ev)
        seq = stored[-1].seq if stored else 0
        self._remember(game_id, seq, match, stored[-1].chain_hash if stored else genesis_hash(record))
        self._arm(record, match, seq)
        return Created(game_id, plan.tokens, self._state(record, seq, match, SPECTATOR,
                                                         stored[-1].chain_hash if stored else None),
                       plan.invite_codes)

    # ----------------------------------------------------------------- join

    async def join_game(
        self, game_id: str, cred: Credential, invite_code: str = "", seat: int | None = None, join_key: str = ""
    ) -> Joined:
        """Takes a seat nobody holds: the one `invite_code` is for, else `seat` if it is open,
        else the lowest open seat. Returns the seat's new token (shown once). Of several joins
        racing for one seat, one wins; the others get SEAT_TAKEN (or, asking for any open
        seat, the next open seat). With a `join_key` the token derives from the key, so the
        same join repeated returns the same seat and token."""
        if not game_id and invite_code:
            game_id = token_game_id(invite_code) or ""
        if invite_code and seat is not None:
            raise BadRequest("give an invite code or a seat, not both: the code names its seat", "BAD_JOIN")
        game = await self._game(game_id)
        if cred.token:
            held = seat_of(cred.token, game.token_hashes)
            if held is not None:
                raise NotAllowedNow(f"this token holds seat {held} of the match already", "ALREADY_SEATED")
        invited = invited_seat(invite_code, game) if invite_code else None
        if invite_code and invited is None:
            raise PermissionDenied("the invite code is not valid for this match", "BAD_INVITE_CODE")
        token = join_token(game.game_id, join_key) if join_key else new_seat_token(game.game_id)
        held = seat_of(token, game.token_hashes) if join_key else None
        if held is not None:
            wanted = invited if invite_code else seat
            if wanted is not None and wanted != held:
                raise AlreadyExists(f"this join_key joined seat {held} of the match, not {wanted}", "JOIN_KEY_REUSED")
            seq, match = await self._load(game)
            state = self._state(game, seq, match, Principal(Role.SEAT, held), await self._chain_at(game, seq))
            return Joined(held, token, state, replayed=True)
        if invited is not None:
            candidates = [invited]
        elif seat is not None:
            if not 0 <= seat < game.seats:
                raise BadRequest(f"the match has seats 0..{game.seats - 1}, not {seat}", "BAD_SEAT")
            if seat < len(game.invite_hashes) and game.invite_hashes[seat]:
                raise NotAllowedNow(f"seat {seat} is for whoever holds its invite code", "SEAT_NOT_OPEN")
            if game.bot(seat):
                raise NotAllowedNow(f"seat {seat} is played by the server's bot", "SEAT_NOT_OPEN")
            candidates = [seat]
        else:
            candidates = [s for s, i in enumerate(seat_infos(game)) if i.status is SeatStatus.OPEN]
            if not candidates:
                raise NotAllowedNow("the match has no open seat", "NO_OPEN_SEAT")
        seq, match = await self._load(game)
        if match.is_over():
            raise NotAllowedNow("the match is over", "GAME_OVER")
        for s in candidates:
            claimed = await self.store.claim_seat(game.game_id, s, token_hash(token))
            if claimed is not None:
                self._keep_record(claimed)
                state = self._state(claimed, seq, match, Principal(Role.SEAT, s), await self._chain_at(claimed, seq))
                return Joined(s, token, state)
        if len(candidates) > 1 or not (invite_code or seat is not None):
            raise NotAllowedNow("every open seat was taken meanwhile", "NO_OPEN_SEAT")
        raise NotAllowedNow(f"seat {candidates[0]} is taken", "SEAT_TAKEN")

    def _admit_creator(self, cred: Credential, peer: str | None) -> None:
        """The creation policy: the creator, host or operator token passes; otherwise `open`
        admits anyone at the peer's creation rate and `token` no one."""
        creator = is_operator(cred.token, self.creator_tokens)
        if cred.token and not creator and self.limiter.limits.create_policy == "token":
            raise Unauthenticated("this token is not the creator token", "BAD_CREATOR_TOKEN")
        self.limiter.admit_create(peer, creator)

    # ----------------------------------------------------------------- reads

    async def get_view(self, game_id: str, cred: Credential, at_seq: int | None = None) -> MatchState:
        return (await self._view(game_id, cred, at_seq))[1]

    async def get_position(
        self, game_id: str, cred: Credential, at_seq: int | None = None, seat: int | None = None
    ) -> tuple[MatchState, Payload, int]:
        """The view as `get_view` gives it, and the Position (the input of `evaluate`) that
        `seat` faces at the same seq: a seat's own (the default), or any seat's for the auditor
        (default: the first seat awaited, else 0). The core builds it from what that seat may
        see and gives it to nobody else."""
        game, state, match = await self._view(game_id, cred, at_seq)
        position_type = self.catalogue.position_type(game.game_type)
        who = state.principal
        if who.role is Role.SPECTATOR:
            raise PermissionDenied("a position holds a seat's hidden information: a spectator gets none "
                                   "(send that seat's token)", "POSITION_NOT_VISIBLE")
        if seat is None:
            seat = who.seat if who.seat is not None else (state.to_act[0] if state.to_act else 0)
        if seat >= game.seats:
            raise BadRequest(f"seat {seat} is not in this {game.seats}-seat match", "BAD_SEAT")
        if not who.auditor and seat != who.seat:
            raise PermissionDenied(f"seat {who.seat} may not have the position of seat {seat} (its hidden "
                                   "information): only that seat or the auditor may", "POSITION_NOT_VISIBLE")
        data = match.position(seat, seat=who.seat, auditor=who.auditor)
        return state, Payload(position_type, data), seat

    async def _view(self, game_id: str, cred: Credential, at_seq: int | None) -> tuple[GameRecord, MatchState, Match]:
        """The match record, the viewer's state at `at_seq` (default: now) and the core's
        state there (the cached one: read it, never change it)."""
        game = await self._game(game_id)
        seq, match = await self._load(game)
        principal = self._principal_for(game, cred, over=match.is_over(), read_only=True)
        if at_seq and at_seq != seq:
            if at_seq > seq:
                raise OutOfRange(f"the match is at seq {seq}; there is no seq {at_seq} yet")
            match, chain, _ = await self._state_at(game, at_seq)
            return game, self._state(game, at_seq, match, principal, chain), match
        return game, self._state(game, seq, match, principal, await self._chain_at(game, seq)), match

    async def legal_moves(self, game_id: str, cred: Credential) -> tuple[int, list[Payload]]:
        game = await self._game(game_id)
        seq, match = await self._load(game)
        seat = self._seat(self._principal_for(game, cred, over=match.is_over(), read_only=False))
        moves = await asyncio.to_thread(match.legal_actions, seat)
        action_type = self.catalogue.get(game.game_type).action_type
        return seq, [Payload(action_type, m) for m in moves]

    async def list_events(
        self, game_id: str, cred: Credential, after_seq: int = 0, limit: int = 0
    ) -> tuple[list[EventOut], int]:
        game = await self._game(game_id)
        seq, match = await self._load(game)
        principal = self._principal_for(game, cred, over=match.is_over(), read_only=True)
        # Bounded by the seq just loaded: one consistent snapshot, and no client number
        # (uint64) ever reaches the database unchecked.
        upto = min(after_seq + limit, seq) if limit else seq
        if after_seq >= upto:
            return [], seq
        stored = await self.store.load_events(game.game_id, after_seq=max(after_seq - 1, 0), upto_seq=upto)
        if after_seq > 0 and stored and stored[0].seq == after_seq:
            prev, stored = stored[0].chain_hash, stored[1:]
        else:
            prev = genesis_hash(game)
        head = self._heads.get(game.game_id)
        if upto == seq and head is not None and head[0] == seq:
            # What is served must be the log that was verified: it chains to the verified head.
            for ev in stored:
                prev = integrity.event_chain(prev, ev)
            if prev != head[1] or [e.seq for e in stored] != list(range(after_seq + 1, upto + 1)):
                log.error("events of %s served from the log no longer chain to the verified head", game.game_id)
                self.cache.drop(game.game_id)
                self._heads.pop(game.game_id, None)
                await self._load(game)
                raise Conflict("the match's log changed while it was read: retry", "SEQ_CONFLICT")
        commands = ({c.first_seq: c for c in await self.store.commands(game.game_id)}
                    if principal.auditor else {})
        blank = self._blank(game)
        return [e for e in (self._event_out(game, blank, ev, principal, commands.get(ev.seq)) for ev in stored)
                if e], seq

    async def watch(
        self,
        game_id: str,
        cred: Credential,
        after_seq: int = 0,
        peer: str | None = None,
    ) -> AsyncIterator[WatchItem]:
        """`watch_batches`, one item at a time."""
        async with contextlib.aclosing(self.watch_batches(game_id, cred, after_seq, peer)) as batches:
            async for batch in batches:
                for item in batch:
                    yield item

    async def watch_batches(
        self,
        game_id: str,
        cred: Credential,
        after_seq: int = 0,
        peer: str | None = None,
        batched: bool = True,
    ) -> AsyncIterator[WatchBatch]:
        """Events after `after_seq`, then each new one as it is appended (by any server on
        the same database), each with the viewer's state after it: `WatchItem`s of
        (EventOut, MatchState), in order, in `WatchBatch`es of consecutive items (everything
        pending when the watcher is ready to send again). Ends once the match is over and
        everything was sent.

        New events come from the match's shared feed (`watch.MatchFeed`), which paces its
        releases by the number of watchers. Streams count against the peer's and the match's
        limits. A watcher that falls more than its buffer behind (its client stopped reading,
        so the transport stopped taking its batches) is dropped from the feed and ends with
        ResourceExhausted (`resume_after_seq` in its metadata) once the transport takes its
        next batch. `batched` False: the transport writes each item alone, which the
        match's limit of such streams bounds (`Limits.watch_unbatched_per_match`)."""
        game = await self._game(game_id)
        release = self.limiter.open_watch(peer, game.game_id, batched)
        try:
            last, current = await self._load(game)
            principal = self._principal_for(game, cred, over=current.is_over(), read_only=False)
            if after_seq > last:
                raise OutOfRange(f"the match is at seq {last}; cannot resume after seq {after_seq}")
            feed = self.feeds.feed(game, last, current, await self._chain_at_verified(game, last))
            start = feed.seq
            limit = self.limiter.limits.watch_buffer
            sub = feed.subscribe(principal, limit)
            try:
                sent = seq = after_seq
                if seq < start:
                    # Catching up: this watcher's own replay, up to where the feed took over,
                    # checked as it is read: chained from the genesis hash, and equal to the
                    # verified head when it reaches it (see `_load`).
                    verified = self._heads.get(game.game_id)
                    match, chain, later = await self._state_at(game, seq, then=start)
                    try:
                        if verified is not None and verified[0] == seq and chain != verified[1]:
                            raise integrity.damaged(game, seq, "the log was rewritten after it was verified")
                    except DataLoss as exc:
                        self._refuse(game.game_id, exc)
                    batch = WatchBatch()
                    for ev in later:
                        chain = self._checked_step(game, ev, match, chain, seq)
                        seq = ev.seq
                        out = self._event_out(game, match, ev, principal)
                        if out is not None:
                            batch.append(WatchItem((out, self._state(game, seq, match, principal, ev.chain_hash))))
                            if len(batch) >= CATCH_UP_BATCH:
                                sent = seq
                                yield batch
                                batch = WatchBatch()
                    if batch:
                        sent = seq
                        yield batch
                while True:
                    batch = sub.take()
                    if batch:
                        if batch[0].seq <= seq:
                            batch = WatchBatch(item for item in batch if item.seq > seq)
                        if batch:
                            seq = sent = batch[-1].seq
                            yield batch  # returns once the transport took all of it
                        sub.sent()
                        continue
                    if sub.overflowed:
                        raise ResourceExhausted(
                            f"this watcher fell more than {sub.limit} events behind; resume after seq {sent}",
                            "WATCH_BUFFER_FULL", {"resume_after_seq": str(sent)})
                    if sub.shutdown:
                        raise Unavailable(f"this server is stopping; resume after seq {sent} on another",
                                          "SHUTTING_DOWN", {"resume_after_seq": str(sent)})
                    if sub.ended:
                        if feed.error is not None:
                            raise feed.error
                        return
                    await sub.wait()
            finally:
                feed.unsubscribe(sub)
        finally:
            release()

    # ----------------------------------------------------------------- play

    async def play(
        self,
        game_id: str,
        cred: Credential,
        command_id: str,
        action: Payload | None,
        expected_seq: int | None = None,
    ) -> Played:
        check_command_id(command_id)
        if action is None:
            raise BadRequest("action is required", "MISSING_FIELD")
        game = await self._game(game_id)
        # What is decided and stored is what the rules decode of the action, never padding.
        given_action = bytes(self._canonical(game, action).data)
        action_type = self.catalogue.get(game.game_type).action_type

        def decide(match: Match, seq: int, principal: Principal) -> list[tuple[str, bytes]]:
            check_type(action, action_type, "action")
            # No turn check here: the core refuses a seat that is not awaited, with the game's
            # own reason where it has a more precise one than NOT_YOUR_TURN (e.g. ALREADY_COMMITTED).
            return match.decide(self._seat(principal), given_action, game.seed, seq + 1)

        def given(principal: Principal) -> CommandInput:
            return CommandInput(seat=self._seat(principal), action=given_action)

        return await self._command(game, cred, command_id, expected_seq, decide, given)

    async def host_command(
        self,
        game_id: str,
        cred: Credential,
        command_id: str,
        command: str,
        expected_seq: int | None = None,
    ) -> Played:
        """A command of the table's host (GameType.host_commands), given with the operator
        token; recorded like a move, with no acting seat."""
        check_command_id(command_id)
        if not command:
            raise BadRequest("command is required (one of the game type's host_commands)", "MISSING_FIELD")
        if command.startswith(_core.TIMEOUT_COMMAND):
            raise BadRequest("timeouts are the server's own command, given when a seat's clock runs out",
                             "NOT_A_HOST_COMMAND")
        # The credential first: whether a match exists is not for anyone to probe.
        if not is_operator(cred.token, self.host_tokens):
            if not cred.token:
                raise Unauthenticated("host commands need 'authorization: Bearer <host token>'", "MISSING_TOKEN")
            raise PermissionDenied("host commands need the host token", "NOT_OPERATOR")
        game = await self._game(game_id)
        # The host sees what a spectator sees (unless the same token is also the auditor's).
        viewer = AUDITOR if is_operator(cred.token, self.auditor_tokens) else SPECTATOR
        return await self._host(game, command_id, command, expected_seq, viewer)

    async def _host(
        self,
        game: GameRecord,
        command_id: str,
        command: str,
        expected_seq: int | None = None,
        viewer: Principal = AUDITOR,
    ) -> Played:
        def decide(match: Match, seq: int, principal: Principal) -> list[tuple[str, bytes]]:
            return match.host_command(command, game.seed, seq + 1)

        return await self._command(game, viewer, command_id, expected_seq, decide,
                                   lambda principal: CommandInput(host_command=command))

    async def _command(
        self,
        game: GameRecord,
        who: Credential | Principal,
        command_id: str,
        expected_seq: int | None,
        decide: Callable[[Match, int, Principal], list[tuple[str, bytes]]],
        given: Callable[[Principal], CommandInput],
    ) -> Played:
        """Decides a command on the cached (verified) state and appends what the core decided
        at the next seq, in one statement that also finds a command id used before. The log is
        read only when the cache has no state, when the state is known to be behind (the client
        expects a later seq), or when something failed: the append at a seq taken since (a move
        made through another process), or a refusal (which the current state, or an earlier use
        of the command id, may explain). A command without `expected_seq` is then decided again
        on the current state; one with `expected_seq` gets ABORTED when the match is elsewhere.

        `who` is the caller's credential, or the principal the server itself acts and answers as
        (host commands, timers); `decide(match, seq, principal)` returns the core's events and
        must not change `match`."""
        gid = game.game_id
        entry = self.cache.get(gid)
        head = self._heads.get(gid)
        fresh = (entry is None or head is None or head[0] != entry[0]
                 or (expected_seq is not None and expected_seq > entry[0]))
        seq, match = await self._load(game) if fresh else entry
        for _ in range(3):
            principal = who if isinstance(who, Principal) else self._principal_for(
                game, who, over=match.is_over(), read_only=False)
            try:
                if expected_seq is not None and expected_seq != seq:
                    raise Conflict(f"the match is at seq {seq}, not {expected_seq}", "SEQ_MISMATCH")
                decided = decide(match, seq, principal)
            except (AppError, _core.CoreError):
                # A refusal: a retry of a command that was applied, or a state behind the log?
                prior = await self.store.command_events(gid, command_id)
                if prior is not None:
                    return await self._repeated(game, command_id, given(principal), prior, principal)
                if fresh:
                    raise
                seq, match = await self._load(game)
                fresh = True
                continue
            try:
                return await self._commit(game, match, seq, decided, principal, command_id, given(principal))
            except SeqConflict:
                if expected_seq is not None:
                    raise Conflict("another move was applied first: reload the match and retry",
                                   "SEQ_CONFLICT") from None
                seq, match = await self._load(game)
                fresh = True
        raise Conflict("other moves kept being applied first: reload the match and retry", "SEQ_CONFLICT")

    async def _commit(
        self,
        game: GameRecord,
        match: Match,
        seq: int,
        decided: list[tuple[str, bytes]],
        principal: Principal,
        command_id: str,
        given: CommandInput,
    ) -> Played:
        """Appends what the core decided at seq+1.. and swaps the evolved state into the cache
        only once the append committed. SeqConflict when the match is no longer at seq."""
        if not decided:
            raise RuntimeError(f"the core decided no events for a command in {game.game_id}")
        after = match.copy()
        events = self._evolve(game, after, decided, seat=given.seat)
        try:
            stored = await self.store.append(game.game_id, seq, events, command_id, given)
        except ChainBroken:
            # The log lost or changed the event this state was verified at: `_load` names the
            # damage (DataLoss); if it finds none, the log simply moved on.
            await self._load(game)
            raise SeqConflict(f"{game.game_id} is no longer at seq {seq}") from None
        if not stored.written:
            return await self._repeated(game, command_id, given, stored, principal)
        last = stored[-1].seq
        if after.clock() is not None:
            # The clock steps with the recorded times, known only now.
            after = match.copy()
            for ev in stored:
                apply_stored(after, ev)
        self._remember(game.game_id, last, after, stored[-1].chain_hash)
        self._arm(game, after, last)
        return Played(
            events=[e for e in (self._event_out(game, after, ev, principal) for ev in stored) if e],
            state=self._state(game, last, after, principal, stored[-1].chain_hash),
            replayed=False,
        )

    async def suggest(self, game_id: str, cred: Credential, bot: str = "") -> tuple[Payload, int]:
        game = await self._game(game_id)
        seq, match = await self._load(game)
        seat = self._seat(self._principal_for(game, cred, over=match.is_over(), read_only=False))
        info = self.catalogue.get(game.game_type)
        bot = bot or info.bots[-1]
        # No turn check here: the core refuses a seat that is not awaited (NOT_YOUR_TURN).
        action = await asyncio.to_thread(match.bot_action, seat, bot, secrets.token_bytes(32), seq + 1)
        return Payload(info.action_type, action), seq

    async def evaluate(self, game_type: str, position: Payload | None, rollouts: bytes | None = None) -> Payload:
        if not game_type:
            raise BadRequest("game_type is required", "MISSING_FIELD")
        if position is None:
            raise BadRequest("position is required", "MISSING_FIELD")
        check_type(position, self.catalogue.position_type(game_type), "position")
        # Microseconds for a typical position (0.55 ms for the worst Qwirkle board known): a
        # thread hop would cost more than it saves.
        if rollouts is None:
            out = _core.evaluate(game_type, position.data)
        else:
            # Rollouts (RolloutSettings): milliseconds to seconds of CPU, off the event loop.
            out = await asyncio.to_thread(_core.evaluate, game_type, position.data, rollouts)
        return Payload(self.catalogue.get(game_type).evaluation_type, out)

    # ----------------------------------------------------------------- internals

    async def _game(self, game_id: str) -> GameRecord:
        """The match record. A record changes only while it has vacant seats (a join fills
        one, possibly through another server): those are read afresh, the others cached."""
        key = parse_game_id(game_id)
        record = self.records.get(key)
        if record is not None:
            self.records.move_to_end(key)
            return record
        failure = self.damaged.get(key)
        if failure is not None:
            raise failure
        try:
            record = await self.store.get_game(key)
        except UnknownGame:
            raise MatchNotFound(f"no match {game_id}") from None
        except SeedUnreadable as exc:
            self._refuse(key, DataLoss(str(exc), exc.reason, seq=0))
        self._keep_record(record)
        return record

    def _keep_record(self, record: GameRecord) -> None:
        if any(record.vacant(s) for s in range(record.seats)):
            return
        self.records[record.game_id] = record
        while len(self.records) > self.cache.capacity:
            self.records.popitem(last=False)

    def _canonical(self, game: GameRecord, action: Payload) -> Payload:
        """The action as the rules decode it, re-encoded by the core: what is decided and
        stored is what the rules read, never padding a client added (unknown fields)."""
        action_type = self.catalogue.get(game.game_type).action_type
        if action.type_name != action_type:
            return action  # refused below as WRONG_PAYLOAD_TYPE
        try:
            return Payload(action_type, _core.canonical_action(game.game_type, bytes(action.data)))
        except _core.MalformedInput:
            return action  # refused by the core's decide (or as another command under a used id)

    def _blank(self, game: GameRecord) -> Match:
        return Match(game.game_type, game.seats, dict(game.options))

    async def _replay(self, game: GameRecord, upto_seq: int | None = None) -> Match:
        match = self._blank(game)
        stored = await self.store.load_events(game.game_id, upto_seq=upto_seq)

        def replay() -> None:
            for ev in stored:
                apply_stored(match, ev)

        await asyncio.to_thread(replay)
        return match

    async def _state_at(
        self, game: GameRecord, seq: int, then: int | None = None
    ) -> tuple[Match, bytes | None, list[StoredEvent]]:
        """The match at a past `seq` (at most the verified head) and the chain hash there (None
        at 0), for the caller to change as it likes; with `then`, also the stored events after
        `seq` up to `then`, read in the same query (unchecked: the caller checks them as it
        applies them). Starts from the nearest snapshot at or before `seq` (else from the first
        event) and checks every event after it, chained to the snapshot's verified chain hash
        (integrity.replay_checked), leaving snapshots on the way; DataLoss refuses the match."""
        gid = game.game_id
        snap = self.snapshots.before(gid, seq)
        if snap is None:
            at, match, chain = 0, self._blank(game), None
        else:
            at, base, chain = snap
            match = base.copy()
        upto = seq if then is None else max(then, seq)
        if at == upto:
            return match, chain, []
        events = await self.store.load_events(gid, after_seq=at, upto_seq=upto)
        cut = next((i for i, ev in enumerate(events) if ev.seq > seq), len(events))
        events, later = events[:cut], events[cut:]
        if at == seq:
            return match, chain, later
        step = self.snapshots.every

        def replay() -> list[tuple[int, Match, bytes]]:
            nonlocal at, chain
            kept = []
            for i in range(0, len(events), step):
                chunk = events[i:i + step]
                chain = integrity.replay_checked(game, chunk, match, chain, at, False)
                at = chunk[-1].seq
                if at < seq:
                    kept.append((at, match.copy(), chain))
            if at != seq:
                raise integrity.damaged(game, at + 1, f"the log ends at seq {at}, before seq {seq}")
            return kept

        try:
            # Tens of microseconds an event: a long replay runs in a thread.
            kept = replay() if len(events) <= _INLINE_REPLAY else await asyncio.to_thread(replay)
        except DataLoss as exc:
            self._refuse(gid, exc)
        for snap in kept:
            self.snapshots.offer(gid, *snap)
        return match, chain, later

    async def _load(self, game: GameRecord) -> tuple[int, Match]:
        """The match at its last seq. A match loaded cold is replayed with every event checked
        (integrity.replay_checked, check_commands). A cached state is trusted only while the log
        still holds the event it was verified at, with the state hash and chain hash seen then;
        newer events are checked from that chain head. Anything else is DataLoss: logged,
        counted, and the match refused by this process from then on."""
        gid = game.game_id
        failure = self.damaged.get(gid)
        if failure is not None:
            raise failure
        try:
            return await self._load_checked(game)
        except DataLoss as exc:
            self._refuse(gid, exc)

    def _refuse(self, gid: str, exc: DataLoss) -> NoReturn:
        """Refuses the match from now on (until this process restarts), logs and counts it."""
        self.damaged[gid] = exc
        self.integrity_failures += 1
        self.cache.drop(gid)
        self.snapshots.drop(gid)
        self._heads.pop(gid, None)
        self.records.pop(gid, None)
        log.error("refusing match %s: %s", gid, exc.message)
        raise exc

    async def _load_checked(self, game: GameRecord) -> tuple[int, Match]:
        gid = game.game_id
        entry = self.cache.get(gid)
        head = self._heads.get(gid)
        rewritten = None
        if entry is not None and head is not None and head[0] == entry[0]:
            cached_seq, cached = entry
            # The event before the cached seq too: its chain hash and the anchor's content must
            # give the verified head again, so a change to the anchor is seen.
            stored = await self.store.load_events(gid, after_seq=max(cached_seq - 2, 0))
            if cached_seq >= 2 and stored and stored[0].seq == cached_seq - 1:
                prev_chain, stored = stored[0].chain_hash, stored[1:]
            else:
                prev_chain = genesis_hash(game)
            anchor, newer = (stored[0], stored[1:]) if cached_seq > 0 and stored else (None, stored)
            trusted = cached_seq == 0 or (
                anchor is not None
                and anchor.seq == cached_seq
                and anchor.chain_hash == head[1]
                and integrity.event_chain(prev_chain, anchor) == head[1]
                and (anchor.core_version != _core.CORE_VERSION
                     or anchor.state_hash == stored_state_hash(game, cached.state_hash()))
            )
            if trusted:
                if not newer:
                    self._arm(game, cached, cached_seq)
                    return cached_seq, cached
                forward = cached.copy()
                last_chain = await asyncio.to_thread(
                    integrity.replay_checked, game, newer, forward, head[1], cached_seq)
                self._remember(gid, newer[-1].seq, forward, last_chain)
                self._arm(game, forward, newer[-1].seq)
                return newer[-1].seq, forward
            log.error("the log of %s changed under the state verified at seq %d: checking it whole", gid, cached_seq)
            rewritten = head
            self.cache.drop(gid)
            self._heads.pop(gid, None)
        # Commands before and after the events (see integrity.check_commands): other servers
        # may append meanwhile.
        commands = await self.store.commands(gid)
        stored = await self.store.load_events(gid)
        match = self._blank(game)
        last_chain = await asyncio.to_thread(integrity.replay_checked, game, stored, match)
        known = {c.command_id for c in commands}
        later = (await self.store.commands(gid)
                 if any(e.command_id is not None and e.command_id not in known for e in stored) else commands)
        integrity.check_commands(game, stored, commands, later)
        seq = stored[-1].seq if stored else 0
        if rewritten is not None:
            if seq < rewritten[0]:
                raise integrity.damaged(game, seq + 1, f"this server served seq {rewritten[0]}; "
                                        f"the log now ends at seq {seq}")
            if stored[rewritten[0] - 1].chain_hash != rewritten[1]:
                # Consistent in itself, but not the log this server verified: rewritten whole.
                raise integrity.damaged(game, rewritten[0], "the log was rewritten after this server verified it")
            # Else the log is the one verified and the cached state was wrong: the log wins.
        self._remember(gid, seq, match, last_chain)
        self._arm(game, match, seq)
        return seq, match

    def _remember(self, gid: str, seq: int, match: Match, chain: bytes) -> None:
        """Caches a verified state with the chain hash of its last event (states only move forward)."""
        current = self._heads.get(gid)
        if current is not None and current[0] > seq:
            return
        if current is not None and current[0] < seq:
            replaced = self.cache.peek(gid)
            if replaced is not None and replaced[0] == current[0]:
                self.snapshots.keep_recent(gid, current[0], replaced[1], current[1])
        self.cache.put(gid, seq, match)
        self.snapshots.offer(gid, seq, match, chain)
        self._heads[gid] = (seq, chain)
        self._heads.move_to_end(gid)
        while len(self._heads) > max(self.cache.capacity, 0):
            self._heads.popitem(last=False)

    # ----------------------------------------------------------------- timers

    def _arm(self, game: GameRecord, match: Match, seq: int) -> None:
        """Keeps the match's timer in step with its latest state: a new wait (a new key) starts
        the clock, a wait that ended stops it. The clock lives in this process: a server that
        starts finds a wait still open when it next loads the match, and gives its command at the
        deadline counted from the recorded time the wait started. Several servers may run the
        same timer; its command id makes it happen once.
        Match clocks (`_arm_clock`) are armed here too."""
        self._arm_clock(game, match, seq)
        timer = match.timer()
        armed = self._timers.get(game.game_id)
        if armed is not None:
            if armed[0] == timer:
                return
            armed[1].cancel()
            del self._timers[game.game_id]
        if timer is not None:
            task = asyncio.get_running_loop().create_task(self._expire(game, timer, match.timer_started_ms()))
            self._timers[game.game_id] = (timer, task)
        self._wake_bots(game, match)

    async def _expire(self, game: GameRecord, timer: tuple[str, int, int], started_ms: int | None) -> None:
        """Gives the timer's command `seconds` after the recorded time its wait started (after
        a restart too), or, when that time is not known (a state this server just decided),
        `seconds` from now."""
        command, seconds, key = timer
        left = seconds if started_ms is None else (started_ms + seconds * 1000 - ms(datetime.now(UTC))) / 1000
        await asyncio.sleep(max(left, 0))
        if self._timers.get(game.game_id, (None,))[0] == timer:
            del self._timers[game.game_id]
        try:
            await self._host(game, f"{SERVER_COMMAND_PREFIX}{command}:{key}", command)
        except (AppError, _core.RuleViolation) as exc:
            # The wait ended another way meanwhile (a last answer, the host, another server).
            log.info("timer %s of %s not given: %s", command, game.game_id, exc)
        except Exception:
            log.exception("timer %s of %s failed", command, game.game_id)

    # ----------------------------------------------------------------- match clocks

    def start_clocks(self) -> None:
        """Arms the clock of every running match that has one (a starting server): their
        deadlines derive from the recorded times, so a wait open across a restart keeps its
        original deadline."""
        if self._clock_scan is None:
            self._clock_scan = asyncio.get_running_loop().create_task(self._scan_clocks())

    async def _scan_clocks(self) -> None:
        try:
            running = await self.store.running_clocks()
        except Exception:
            log.exception("could not list the matches with a running clock")
            return
        for gid in running:
            try:
                await self._load(await self._game(gid))  # arms it, or says the clock stopped
            except Exception:
                log.exception("could not arm the clock of match %s", gid)

    def _arm_clock(self, game: GameRecord, match: Match, seq: int) -> None:
        """Gives the timeout of the wait that ends first, at its deadline (from the recorded
        times, not from now). A newer state re-arms it; several servers may give the same
        timeout: its command id (`timeout:<seat>:<seq>`) and expected seq make it happen once."""
        gid = game.game_id
        if match.clock() is None:
            return
        due = next_timeout(match)
        armed = self._clocks.get(gid)
        key = None if due is None else (seq, *due)
        if armed is not None:
            if armed[0] == key or armed[0][0] > seq:
                return
            if armed[1] is not asyncio.current_task():
                armed[1].cancel()
            del self._clocks[gid]
        if due is None:
            if match.is_over():
                task = asyncio.get_running_loop().create_task(self._clock_stopped(gid))
                self._clocks[gid] = ((seq, 0, -1), task)
            return
        self._clocks[gid] = (key, asyncio.get_running_loop().create_task(self._timeout(game, *key)))

    async def _clock_stopped(self, gid: str) -> None:
        try:
            await self.store.clock_stopped(gid)
        except Exception:
            log.exception("could not mark the clock of %s stopped (the next scan does)", gid)

    async def _timeout(self, game: GameRecord, seq: int, deadline: int, seat: int) -> None:
        gid = game.game_id
        me = asyncio.current_task()
        try:
            while (left := deadline - ms(datetime.now(UTC))) > 0:
                await asyncio.sleep(left / 1000)  # until the recorded deadline, not a guess

            def decide(match: Match, at: int, principal: Principal) -> list[tuple[str, bytes]]:
                due = next_timeout(match)
                if at != seq or due is None or due[1] != seat or due[0] > ms(datetime.now(UTC)):
                    raise NotAllowedNow(f"seat {seat} has time left at seq {at}", "TIMEOUT_NOT_DUE")
                return match.host_command(timeout_command(seat), game.seed, at + 1)

            command = timeout_command(seat)
            await self._command(game, AUDITOR, f"{TIMEOUT_COMMAND_PREFIX}{seat}:{seq}", seq, decide,
                                lambda principal: CommandInput(seat=seat, host_command=command))
        except Conflict as exc:
            # The wait ended another way meanwhile (the seat moved, another server timed it out).
            log.info("timeout of seat %d in %s at seq %d not given: %s", seat, gid, seq, exc)
            if self._clocks.get(gid, (None, None))[1] is me:
                del self._clocks[gid]
            with contextlib.suppress(AppError):
                await self._load(game)  # arms the next wait
            return
        except (AppError, _core.CoreError) as exc:
            log.warning("timeout of seat %d in %s at seq %d refused: %s", seat, gid, seq, exc)
        except Exception:
            log.exception("timeout of seat %d in %s failed", seat, gid)
        if self._clocks.get(gid, (None, None))[1] is me:
            del self._clocks[gid]

    # ----------------------------------------------------------------- bot seats

    def _wake_bots(self, game: GameRecord, match: Match) -> None:
        """Starts this process's player of the match's bot seats when the match awaits one.
        Like a timer, it lives in the process: after a restart, the next load of the match
        starts it again. Several servers may play the same bot move; its command id
        (`bot:<seat>:<seq>`) makes it happen once."""
        if not game.bots or match.is_over() or not any(game.bot(s) for s in match.to_act()):
            return
        if game.game_id in self._bots:
            self._bots_again.add(game.game_id)  # the running player looks again before it stops
            return
        self._bots[game.game_id] = asyncio.get_running_loop().create_task(self._play_bots(game))

    async def _play_bots(self, game: GameRecord) -> None:
        gid = game.game_id
        me = asyncio.current_task()
        try:
            while True:
                self._bots_again.discard(gid)
                seq, match = await self._load(game)
                awaited = [] if match.is_over() else [s for s in match.to_act() if game.bot(s)]
                if not awaited:
                    if gid in self._bots_again:
                        continue
                    return
                try:
                    await self._bot_move(game, seq, match, awaited[0])
                except (Conflict, AlreadyExists) as exc:
                    # Another server or a seat moved first: look at the match again.
                    log.info("bot move in %s at seq %d not given: %s", gid, seq, exc)
        except Exception:
            # A core refusal or a store failure: the next load of the match tries again.
            log.exception("bot seats of %s stopped", gid)
        finally:
            if self._bots.get(gid) is me:
                del self._bots[gid]
            self._bots_again.discard(gid)

    def _backstop_bots(self, game: GameRecord, match: Match) -> None:
        """A watcher here saw the match come to await a bot seat. The server that appended the
        last move plays the bot at once; in case it stopped before, this server looks at the
        match again after BOT_BACKSTOP_SECONDS, which plays the bot if it is still awaited."""
        if not game.bots or match.is_over() or not any(game.bot(s) for s in match.to_act()):
            return
        if game.game_id in self._backstops:
            self._backstops_again.add(game.game_id)
            return
        self._backstops[game.game_id] = asyncio.get_running_loop().create_task(self._backstop(game))

    def _checked_step(self, game: GameRecord, ev: StoredEvent, match: Match, chain: bytes, seq: int) -> bytes:
        """Applies one streamed event (the one after `seq`, chained from `chain`) to `match`,
        checked; and equal to the verified head when it is at its seq. Returns its chain hash."""
        try:
            chain = integrity.replay_checked(game, [ev], match, chain, seq, False)
            verified = self._heads.get(game.game_id)
            if verified is not None and ev.seq == verified[0] and chain != verified[1]:
                raise integrity.damaged(game, ev.seq, "the log was rewritten after it was verified")
        except DataLoss as exc:
            self._refuse(game.game_id, exc)
        return chain

    async def _chain_at_verified(self, game: GameRecord, seq: int) -> bytes:
        """The chain hash at `seq` as `_load` verified it (read from the log if it moved on)."""
        verified = self._heads.get(game.game_id)
        if verified is not None and verified[0] == seq:
            return verified[1]
        if seq == 0:
            return genesis_hash(game)
        found = await self.store.load_events(game.game_id, after_seq=seq - 1, upto_seq=seq)
        return found[0].chain_hash

    async def _backstop(self, game: GameRecord) -> None:
        gid = game.game_id
        me = asyncio.current_task()
        try:
            while True:
                self._backstops_again.discard(gid)
                await asyncio.sleep(BOT_BACKSTOP_SECONDS)  # a grace period, not a wait for a condition
                await self._load(game)  # starts this server's bot player if a bot seat is awaited
                if gid not in self._backstops_again:
                    return
        except Exception:
            log.exception("bot backstop of %s failed", gid)
        finally:
            if self._backstops.get(gid) is me:
                del self._backstops[gid]

    async def _bot_move(self, game: GameRecord, seq: int, match: Match, seat: int) -> None:
        """The bot's move for `seat` at `seq`, recorded as that seat's command."""
        command_id = f"{BOT_COMMAND_PREFIX}{seat}:{seq}"
        if await self.store.command_events(game.game_id, command_id) is not None:
            return  # another server played it
        action = await asyncio.to_thread(match.bot_action, seat, game.bot(seat), bot_seed(game.seed, seat), seq + 1)
        decided = match.decide(seat, action, game.seed, seq + 1)
        given = CommandInput(seat=seat, action=bytes(action))
        try:
            await self._commit(game, match, seq, decided, Principal(Role.SEAT, seat), command_id, given)
        except SeqConflict:
            raise Conflict("another move was applied first", "SEQ_CONFLICT") from None

    def _principal_for(self, game: GameRecord, cred: Credential, *, over: bool, read_only: bool) -> Principal:
        if is_operator(cred.token, self.auditor_tokens):
            return AUDITOR
        principal = SPECTATOR
        if cred.token and is_operator(cred.token, self.host_tokens):
            pass  # the host reads what a spectator reads, and holds no seat
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
                raise PermissionDenied("the auditor role without the auditor token only reads (GetView, ListEvents)",
                                       "AUDITOR_READ_ONLY")
            if not over:
                raise PermissionDenied("the auditor view of a match in progress needs the auditor token",
                                       "MATCH_NOT_OVER")
            return AUDITOR
        return principal

    @staticmethod
    def _seat(principal: Principal) -> int:
        if principal.role is Role.SPECTATOR:
            raise Unauthenticated("this call acts as a seat: send 'authorization: Bearer <seat token>'",
                                  "MISSING_TOKEN")
        if principal.seat is None:
            raise PermissionDenied("the auditor does not hold a seat in the match", "NOT_A_SEAT")
        return principal.seat

    @staticmethod
    def _evolve(game: GameRecord, match: Match, decided: list[tuple[str, bytes]], seat: int | None) -> list[NewEvent]:
        events = []
        for kind, payload in decided:
            match.apply(payload, kind)
            events.append(NewEvent(kind, payload, seat, _core.CORE_VERSION,
                                   stored_state_hash(game, match.state_hash())))
        return events

    async def _repeated(
        self, game: GameRecord, command_id: str, given: CommandInput, prior: list[StoredEvent], principal: Principal
    ) -> Played:
        """A command id used before in this match: a retry of the same command gets the first
        result; another command under that id is refused (an id names one command)."""
        first = next((c for c in await self.store.commands(game.game_id) if c.command_id == command_id), None)
        if first is not None and first.input is not None and first.input != given:
            raise AlreadyExists(f"command_id {command_id[:64]!r} was used for another command of this match")
        return await self._replayed(game, prior, principal)

    async def _replayed(self, game: GameRecord, prior: list[StoredEvent], principal: Principal) -> Played:
        if not prior:
            # Acknowledged once, its events are gone: never apply it again as new.
            seq = await self.store.last_seq(game.game_id) + 1
            raise integrity.damaged(game, seq, "the events of an acknowledged command are missing")
        last = prior[-1].seq
        entry = self.cache.get(game.game_id)
        match = entry[1] if entry is not None and entry[0] == last else await self._replay(game, upto_seq=last)
        return Played(
            events=[e for e in (self._event_out(game, match, ev, principal) for ev in prior) if e],
            state=self._state(game, last, match, principal, prior[-1].chain_hash),
            replayed=True,
        )

    def _event_out(
        self, game: GameRecord, match: Match, ev: StoredEvent, who: Principal, command: StoredCommand | None = None
    ) -> EventOut | None:
        redacted = match.redact(ev.payload, seat=who.seat, auditor=who.auditor, kind=ev.kind)
        if redacted is None:
            return None
        event_type = _core.GENERIC_EVENTS.get(ev.kind) or self.catalogue.get(game.game_type).event_type
        if not who.auditor:
            return EventOut(ev.seq, ev.kind, ev.seat, Payload(event_type, redacted), ev.recorded_at,
                            ev.chain_hash if game.hash_scheme >= 2 else None)
        given = command.input if command is not None else None
        asked = None if given is None else CommandOut(
            given.seat,
            None if given.action is None else Payload(self.catalogue.get(game.game_type).action_type, given.action),
            given.host_command)
        return EventOut(ev.seq, ev.kind, ev.seat, Payload(event_type, redacted), ev.recorded_at, ev.chain_hash,
                        ev.command_id, ev.core_version, asked, ev.state_hash)

    async def _chain_at(self, game: GameRecord, seq: int) -> bytes | None:
        head = self._heads.get(game.game_id)
        if head is not None and head[0] == seq:
            return head[1]
        if seq == 0:
            return None
        found = await self.store.load_events(game.game_id, after_seq=seq - 1, upto_seq=seq)
        return found[0].chain_hash if found else None

    def _state(
        self, game: GameRecord, seq: int, match: Match, who: Principal, chain: bytes | None = None
    ) -> MatchState:
        info = self.catalogue.get(game.game_type)
        over = match.is_over()
        # Chain hashes of matches stored before state hashes were salted could be checked
        # against guessed hidden cards: those go to the auditor, or to anyone once it is over.
        published = game.hash_scheme >= 2 or who.auditor or over
        return MatchState(
            chain_head=chain if published else None,
            seed_commitment=seed_commitment(game.game_id, game.seed),
            seed=game.seed if over or who.auditor else None,
            options=dict(game.options),
            integrity_scheme=game.hash_scheme,
            game_id=game.game_id,
            game_type=game.game_type,
            seq=seq,
            principal=who,
            to_act=match.to_act(),
            over=over,
            outcome=match.outcome(),
            view=Payload(info.view_type, match.view(seat=who.seat, auditor=who.auditor)),
            seat_count=game.seats,
            seats=seat_infos(game),
            clocks=seat_clocks(match),
        )
