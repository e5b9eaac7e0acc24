"""Reads: a viewer's state of a match (now or at a past seq), its events, a seat's position and
legal moves, a suggested move, an evaluation, and the stream of a watched match. Reads change
no match: they load states from the repository and never start a timer or a bot.

A read of the present takes the repository's state (`get`): the cached one, without a
database round trip, while the store's feed of appends says nothing newer was committed, and
at least at the `min_seq` the client names (a seq it saw, e.g. its own write through another
server); a match that has no such seq even in the database is OUT_OF_RANGE."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import secrets
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator
from datetime import datetime

from tablier import _core
from tablier._core import Match
from tablier.store.base import GameRecord, StoredCommand, StoredEvent
from tablier.store.players import NAMES

from .access import Access, acting_seat
from .auth import Credential, Principal, Role
from .errors import (
    AppError,
    BadRequest,
    OutOfRange,
    PermissionDenied,
    ResourceExhausted,
    Unavailable,
)
from .limits import Limiter
from .model import EventOut, ForkInfo, GameSummary, MatchState, Payload, check_type, parse_game_id
from .repository import Repository
from .seats import seat_infos, seat_names
from .views import event_out, match_state
from .watch import Feeds, WatchBatch, WatchItem

log = logging.getLogger(__name__)

# Events a watcher catching up from the log is sent per batch.
CATCH_UP_BATCH = 64
# Short catch-ups (at most 8 events) kept, the 256 most recent, for the watchers that resume
# at the same place: those of a server that stops all resume after the same seq elsewhere,
# a few events behind at most (bounded memory: 2,048 items however the resumes come).
CATCH_UPS_KEPT, CATCH_UP_KEPT_EVENTS = 256, 8
# ListGames: matches per page by default, and at most.
GAMES_PAGE, MAX_GAMES_PAGE = 20, 100


class Reads:
    def __init__(self, repository: Repository, access: Access, limiter: Limiter, feeds: Feeds) -> None:
        self.repo = repository
        self.access = access
        self.limiter = limiter
        self.feeds = feeds
        self.catalogue = repository.catalogue
        # Per match, the viewers' states at its latest state read (seq, the state object, the
        # record, the chain head, the names' version: any change makes a new entry, so a
        # rename shows at once): each built once, shared.
        self._views: OrderedDict[str, tuple[int, Match, GameRecord, bytes | None, int, dict[Principal, MatchState]]] = (
            OrderedDict()
        )
        # (match, viewer, after seq) -> (the record, the seq caught up to, its batch or None):
        # a watcher resuming where another did is sent the same batch, built and rendered once.
        self._catch_ups: OrderedDict[tuple[str, Principal, int], tuple[GameRecord, int, WatchBatch | None]] = (
            OrderedDict()
        )

    def _latest_state(
        self, game: GameRecord, seq: int, match: Match, who: Principal, chain: bytes | None
    ) -> MatchState:
        """`_state` of the match's latest state, built once per viewer and state (the cached
        state object is never changed: a new state is a new object)."""
        gid = game.game_id
        entry = self._views.get(gid)
        names = NAMES.version
        if (
            entry is None
            or entry[0] != seq
            or entry[1] is not match
            or entry[2] is not game
            or entry[3] != chain
            or entry[4] != names
        ):
            entry = (seq, match, game, chain, names, {})
            self._views[gid] = entry
            while len(self._views) > max(self.repo.cache.capacity, 1):
                self._views.popitem(last=False)
        self._views.move_to_end(gid)
        state = entry[5].get(who)
        if state is None:
            state = entry[5][who] = self._state(game, seq, match, who, chain)
        return state

    def _state(self, game: GameRecord, seq: int, match: Match, who: Principal, chain: bytes | None) -> MatchState:
        return match_state(self.catalogue, game, seq, match, who, chain)

    def _event_out(
        self, game: GameRecord, match: Match, ev: StoredEvent, who: Principal, command: StoredCommand | None = None
    ) -> EventOut | None:
        return event_out(self.catalogue, game, match, ev, who, command)

    async def _latest(self, game: GameRecord, min_seq: int | None) -> tuple[int, Match]:
        """The match now (`Repository.get`), at least at `min_seq`."""
        seq, match = await self.repo.get(game, min_seq or None)
        _reached(seq, min_seq)
        return seq, match

    async def get_view(
        self, game_id: str, cred: Credential, at_seq: int | None = None, min_seq: int | None = None
    ) -> MatchState:
        return (await self._view(game_id, cred, at_seq, min_seq))[1]

    async def get_position(
        self,
        game_id: str,
        cred: Credential,
        at_seq: int | None = None,
        seat: int | None = None,
        min_seq: int | None = None,
    ) -> tuple[MatchState, Payload, int, list[tuple[Payload, str]]]:
        """The view as `get_view` gives it, and the Position (the input of `evaluate`) that
        `seat` faces at the same seq: a seat's own (the default), or any seat's for the auditor
        (default: the first seat awaited, else 0). The core builds it from what that seat may
        see and gives it to nobody else. With it, that seat's legal moves there and their
        labels (what `evaluate` values, named for people, at a past seq too)."""
        game, state, match = await self._view(game_id, cred, at_seq, min_seq)
        position_type = self.catalogue.position_type(game.game_type)
        who = state.principal
        if who.role is Role.SPECTATOR:
            raise PermissionDenied(
                "a position holds a seat's hidden information: a spectator gets none (send that seat's token)",
                "POSITION_NOT_VISIBLE",
            )
        if seat is None:
            seat = who.seat if who.seat is not None else (state.to_act[0] if state.to_act else 0)
        if seat >= game.seats:
            raise BadRequest(f"seat {seat} is not in this {game.seats}-seat match", "BAD_SEAT")
        if not who.auditor and seat != who.seat:
            raise PermissionDenied(
                f"seat {who.seat} may not have the position of seat {seat} (its hidden "
                "information): only that seat or the auditor may",
                "POSITION_NOT_VISIBLE",
            )
        data = match.position(seat, seat=who.seat, auditor=who.auditor)
        action_type = self.catalogue.get(game.game_type).action_type
        moves = [
            (Payload(action_type, m), label)
            for m, label in await asyncio.to_thread(match.legal_moves, seat, seat_names(game))
        ]
        return state, Payload(position_type, data), seat, moves

    async def _view(
        self, game_id: str, cred: Credential, at_seq: int | None, min_seq: int | None = None
    ) -> tuple[GameRecord, MatchState, Match]:
        """The match record, the viewer's state at `at_seq` (default: now, at least at
        `min_seq`) and the core's state there (the cached one: read it, never change it)."""
        game = await self.repo.game(game_id)
        # A past seq this server's state has not reached yet may still be in the log; with
        # at_seq, min_seq is moot (the answer is at at_seq).
        seq, match = await self.repo.get(game, (at_seq or min_seq) or None)
        if not at_seq:
            _reached(seq, min_seq)
        principal = self.access.principal(game, cred, over=match.is_over(), read_only=True)
        if at_seq and at_seq != seq:
            if at_seq > seq:
                raise OutOfRange(f"the match is at seq {seq}; there is no seq {at_seq} yet")
            match, chain, _ = await self.repo.get_at(game, at_seq)
            return game, self._state(game, at_seq, match, principal, chain), match
        return game, self._latest_state(game, seq, match, principal, await self.repo.chain_at(game, seq)), match

    async def list_games(
        self,
        game_type: str = "",
        page_size: int = 0,
        page_token: str = "",
        player_id: str | None = None,
        parent_game_id: str = "",
    ) -> tuple[list[GameSummary], str]:
        """A page of the server's matches, newest first, with public information only (seats,
        who is awaited, the outcome once over), and the token of the next page ("" on the
        last); with `player_id`, only the matches where that player holds a seat. One query for
        the page; each match's state comes from the repository (cached once loaded). A match
        this process refuses (damaged) is left out."""
        if page_size > MAX_GAMES_PAGE:
            raise BadRequest(f"page_size is at most {MAX_GAMES_PAGE}, not {page_size}", "BAD_PAGE_SIZE")
        if game_type:
            self.catalogue.get(game_type)  # refuses an unknown game type, in words
        limit = page_size or GAMES_PAGE
        before = _page_position(page_token) if page_token else None
        parent = parse_game_id(parent_game_id) if parent_game_id else None
        records = await self.repo.page(limit + 1, game_type or None, before, player_id, parent)
        more = len(records) > limit
        out = []
        for page_record in records[:limit]:
            try:
                seq, match = await self.repo.get(await self.repo.game(page_record.game_id))
            except AppError:
                continue
            out.append(
                GameSummary(
                    game_id=page_record.game_id,
                    game_type=page_record.game_type,
                    seats=seat_infos(page_record),
                    over=match.is_over(),
                    seq=seq,
                    created_at=page_record.created_at,
                    to_act=tuple(match.to_act()),
                    outcome=match.outcome() if match.is_over() else None,
                    your_seats=tuple(page_record.seats_of(player_id)) if player_id else (),
                    ranked=page_record.ranked,
                    fork=ForkInfo.of(page_record),
                )
            )
        last = records[limit - 1] if more else None
        token = _page_token(last.created_at, last.game_id) if last is not None and last.created_at else ""
        return out, token

    async def legal_moves(
        self, game_id: str, cred: Credential, min_seq: int | None = None
    ) -> tuple[int, list[tuple[Payload, str]]]:
        """The seat's legal moves at `seq`, each with its label in the game's words."""
        game = await self.repo.game(game_id)
        seq, match = await self._latest(game, min_seq)
        seat = acting_seat(self.access.principal(game, cred, over=match.is_over(), read_only=False))
        moves = await asyncio.to_thread(match.legal_moves, seat, seat_names(game))
        action_type = self.catalogue.get(game.game_type).action_type
        return seq, [(Payload(action_type, m), label) for m, label in moves]

    async def list_events(
        self, game_id: str, cred: Credential, after_seq: int = 0, limit: int = 0, min_seq: int | None = None
    ) -> tuple[list[EventOut], int]:
        game = await self.repo.game(game_id)
        # A later after_seq than this server's state may still be in the log: asked there.
        seq, match = await self.repo.get(game, max(min_seq or 0, after_seq) or None)
        _reached(seq, min_seq)
        principal = self.access.principal(game, cred, over=match.is_over(), read_only=True)
        # Bounded by the seq just loaded: one consistent snapshot, and no client number
        # (uint64) ever reaches the database unchecked.
        upto = min(after_seq + limit, seq) if limit else seq
        if after_seq >= upto:
            return [], seq
        # What is served must be the log that was verified: it chains to the verified head.
        stored = await self.repo.events(game, after_seq, upto, seq)
        commands = {c.first_seq: c for c in await self.repo.commands(game.game_id)} if principal.auditor else {}
        blank = self.repo.blank(game)
        return [
            e for e in (self._event_out(game, blank, ev, principal, commands.get(ev.seq)) for ev in stored) if e
        ], seq

    async def watch(
        self,
        game_id: str,
        cred: Credential,
        after_seq: int = 0,
        peer: str | None = None,
    ) -> AsyncGenerator[WatchItem, None]:
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
    ) -> AsyncGenerator[WatchBatch, None]:
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
        game = await self.repo.game(game_id)
        release = self.limiter.open_watch(peer, game.game_id, batched)
        try:
            last, current = await self.repo.get(game, after_seq or None)
            principal = self.access.principal(game, cred, over=current.is_over(), read_only=False)
            if after_seq > last:
                raise OutOfRange(f"the match is at seq {last}; cannot resume after seq {after_seq}")
            feed = self.feeds.feed(game, last, current, await self.repo.chain_at_verified(game, last))
            start = feed.seq
            limit = self.limiter.limits.watch_buffer
            sub = feed.subscribe(principal, limit)
            try:
                sent = seq = after_seq
                kept = self._catch_ups.get((game.game_id, principal, seq)) if seq < start else None
                if (
                    kept is not None
                    and kept[0] is game
                    and kept[1] == start
                    and self.repo.vouch_held(game.game_id, seq, start)
                ):
                    # Caught up to the same seq by another watcher of this viewer, from events
                    # still held as verified (and read again by the next recheck).
                    self._catch_ups.move_to_end((game.game_id, principal, seq))
                    seq = start
                    if kept[2] is not None:
                        sent = seq
                        yield kept[2]
                elif seq < start:
                    # Catching up: this watcher's own replay, up to where the feed took over,
                    # checked as it is read: chained from the genesis hash, and equal to the
                    # verified head when it reaches it (see `_load`).
                    match, chain, later = await self.repo.get_at(game, seq, then=start)
                    batch = WatchBatch()
                    for ev in later:
                        chain = self.repo.checked_step(game, ev, match, chain, seq)
                        seq = ev.seq
                        out = self._event_out(game, match, ev, principal)
                        if out is not None:
                            batch.append(WatchItem((out, self._state(game, seq, match, principal, ev.chain_hash))))
                            if len(batch) >= CATCH_UP_BATCH:
                                sent = seq
                                yield batch
                                batch = WatchBatch()
                    # Every one checked: held for the next watcher's catch-up.
                    self.repo.keep_checked(game.game_id, later)
                    if start - after_seq <= CATCH_UP_KEPT_EVENTS:  # one batch, sent below
                        self._catch_ups[(game.game_id, principal, after_seq)] = (game, start, batch or None)
                        if len(self._catch_ups) > CATCH_UPS_KEPT:
                            self._catch_ups.popitem(last=False)
                    if batch:
                        sent = seq
                        yield batch
                while True:
                    taken = sub.take()
                    if taken:
                        if taken[0].seq <= seq:
                            taken = WatchBatch(item for item in taken if item.seq > seq)
                        if taken:
                            seq = sent = taken[-1].seq
                            yield taken  # returns once the transport took all of it
                        sub.sent()
                        continue
                    if sub.overflowed:
                        raise ResourceExhausted(
                            f"this watcher fell more than {sub.limit} events behind; resume after seq {sent}",
                            "WATCH_BUFFER_FULL",
                            {"resume_after_seq": str(sent)},
                        )
                    if sub.shutdown:
                        raise Unavailable(
                            f"this server is stopping; resume after seq {sent} on another",
                            "SHUTTING_DOWN",
                            {"resume_after_seq": str(sent)},
                        )
                    if sub.ended:
                        if feed.error is not None:
                            raise feed.error
                        return
                    await sub.wait()
            finally:
                feed.unsubscribe(sub)
        finally:
            release()

    # ----------------------------------------------------------------- advice

    async def suggest(
        self, game_id: str, cred: Credential, bot: str = "", min_seq: int | None = None
    ) -> tuple[Payload, int]:
        game = await self.repo.game(game_id)
        seq, match = await self._latest(game, min_seq)
        seat = acting_seat(self.access.principal(game, cred, over=match.is_over(), read_only=False))
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
        if rollouts is None:
            # Microseconds for a typical position (0.55 ms for the worst Qwirkle board known): a
            # thread hop would cost more than it saves.
            out = _core.evaluate(game_type, position.data)
        else:
            # Rollouts (RolloutSettings): milliseconds to seconds of CPU, off the event loop.
            out = await asyncio.to_thread(_core.evaluate, game_type, position.data, rollouts)
        return Payload(self.catalogue.get(game_type).evaluation_type, out)


def _reached(seq: int, min_seq: int | None) -> None:
    """OUT_OF_RANGE when the match (read from the database, `Repository.get`) is below the
    seq the client asked for at least."""
    if min_seq and seq < min_seq:
        raise OutOfRange(f"the match is at seq {seq}; it has no seq {min_seq}", "MIN_SEQ_NOT_REACHED")


def _page_token(created_at: datetime, game_id: str) -> str:
    return base64.urlsafe_b64encode(f"{created_at.isoformat()}|{game_id}".encode()).decode()


def _page_position(token: str) -> tuple[datetime, str]:
    try:
        at, game_id = base64.urlsafe_b64decode(token.encode()).decode().split("|")
        return datetime.fromisoformat(at), str(uuid.UUID(game_id))
    except (ValueError, UnicodeError):
        raise BadRequest("page_token is not one ListGames gave", "BAD_PAGE_TOKEN") from None
