"""The thin grpc.aio servicer of `tablier.v1.GameService`: requests in, `GameApp` calls,
messages out. Errors are mapped by `errors.ErrorMappingInterceptor`, not here."""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from google.protobuf import any_pb2
from google.protobuf.message import Message

from tablier.app import (
    Credential,
    EventOut,
    GameApp,
    MatchState,
    Payload,
    Played,
    Role,
    SeatAssignment,
    SeatInfo,
    SeatKind,
    SeatStatus,
)
from tablier.app.clocks import SeatClock
from tablier.app.errors import BadRequest, Unauthenticated
from tablier.app.forks import ForkedAs, viewer_of
from tablier.app.model import ForkInfo
from tablier.app.watch import WatchBatch, WatchItem
from tablier.receipts import BatchSigner, SigningKeys
from tablier.v1 import service_pb2, service_pb2_grpc

from .observe import CallContext, peer_of

if TYPE_CHECKING:
    from tablier.v1.service_pb2 import (
        CreateGameResponse,
        ForkGameResponse,
        HostCommandResponse,
        JoinGameResponse,
        LeaveGameResponse,
        PlayMoveResponse,
        ResignGameResponse,
    )

    _Signed: TypeAlias = (
        CreateGameResponse
        | ForkGameResponse
        | JoinGameResponse
        | PlayMoveResponse
        | HostCommandResponse
        | ResignGameResponse
        | LeaveGameResponse
    )
    _Played = TypeVar("_Played", PlayMoveResponse, HostCommandResponse, ResignGameResponse, LeaveGameResponse)

TYPE_URL_PREFIX = "type.googleapis.com/"
# GetView responses kept for reuse (see `GameServicer`).
_RENDERED_VIEWS = 1024
ROLE_HEADER = "x-tablier-role"

_ROLES = {
    Role.SEAT: service_pb2.ROLE_SEAT,
    Role.SPECTATOR: service_pb2.ROLE_SPECTATOR,
    Role.AUDITOR: service_pb2.ROLE_AUDITOR,
}

_SEAT_KINDS = {
    service_pb2.SEAT_KIND_CREATOR: SeatKind.CREATOR,
    service_pb2.SEAT_KIND_OPEN: SeatKind.OPEN,
    service_pb2.SEAT_KIND_INVITE: SeatKind.INVITE,
    service_pb2.SEAT_KIND_BOT: SeatKind.BOT,
}

_SEAT_STATUSES = {
    SeatStatus.TAKEN: service_pb2.SEAT_STATUS_TAKEN,
    SeatStatus.OPEN: service_pb2.SEAT_STATUS_OPEN,
    SeatStatus.INVITED: service_pb2.SEAT_STATUS_INVITED,
    SeatStatus.BOT: service_pb2.SEAT_STATUS_BOT,
}


def credential(context: CallContext) -> Credential:
    """The caller's bearer token and role request, from the call's metadata."""
    token = None
    wants_auditor = False
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            scheme, _, rest = str(value).strip().partition(" ")
            if scheme.lower() != "bearer" or not rest.strip():
                raise Unauthenticated("authorization must be 'Bearer <token>'", "BAD_AUTHORIZATION")
            token = rest.strip()
        elif key == ROLE_HEADER:
            if str(value).strip().lower() != "auditor":
                raise Unauthenticated(f"{ROLE_HEADER} may only be 'auditor'", "BAD_ROLE")
            wants_auditor = True
    return Credential(token=token, wants_auditor=wants_auditor)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _micros(at: datetime) -> int:
    """Microseconds since the Unix epoch (a naive time is taken as UTC, as FromDatetime does)."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (at - _EPOCH) // _MICROSECOND


def to_any(payload: Payload) -> any_pb2.Any:
    return any_pb2.Any(type_url=TYPE_URL_PREFIX + payload.type_name, value=payload.data)


def _fill_any(out: any_pb2.Any, payload: Payload) -> None:
    out.type_url = TYPE_URL_PREFIX + payload.type_name
    out.value = payload.data


def from_any(message: Message, field: str) -> Payload | None:
    """The payload of an Any field, by type name only; the service never decodes it."""
    if not message.HasField(field):
        return None
    value: any_pb2.Any = getattr(message, field)
    type_name = value.type_url.rsplit("/", 1)[1] if "/" in value.type_url else ""
    return Payload(type_name, value.value)


def to_state(state: MatchState) -> service_pb2.GameState:
    out = service_pb2.GameState()
    fill_state(out, state)
    return out


def fill_state(out: service_pb2.GameState, state: MatchState) -> None:
    """Writes `state` into `out`, a field of the response being built: each message is built
    once, in place (a message passed to a constructor is copied: about twice the time)."""
    out.game_id = state.game_id
    out.game_type = state.game_type
    out.seq = state.seq
    out.role = _ROLES[state.principal.role]
    out.seat = state.principal.seat or 0
    out.to_act.extend(state.to_act)
    out.over = state.over
    _fill_any(out.view, state.view)
    out.seat_count = state.seat_count
    if state.chain_head:
        out.chain_head = state.chain_head
    out.seed_commitment = state.seed_commitment
    if state.seed:
        out.seed = state.seed
    out.options.update(state.options)
    out.integrity_scheme = state.integrity_scheme
    for i in state.seats:
        fill_seat(out.seats.add(), i)
    for c in state.clocks:
        _fill_seat_clock(out.clocks.add(), c)
    if state.ranked:
        out.ranked = True
    if state.fork is not None:
        _fill_fork(out.fork, state.fork)
    if state.outcome is not None:
        out.outcome.ParseFromString(state.outcome)


def fill_seat(out: service_pb2.SeatInfo, seat: SeatInfo) -> None:
    out.status = _SEAT_STATUSES[seat.status]
    out.bot = seat.bot
    if seat.player_id:
        out.player.player_id = seat.player_id
        out.player.display_name = seat.name
        out.player.colour = seat.colour


def _fill_fork(out: service_pb2.ForkInfo, fork: ForkInfo) -> None:
    out.parent_game_id = fork.parent_game_id
    out.parent_seq = fork.parent_seq
    out.parent_head = fork.parent_head
    out.forked_as.CopyFrom(viewer_of(ForkedAs.parse(fork.fork_as)))


def _fill_seat_clock(out: service_pb2.SeatClock, clock: SeatClock) -> None:
    if clock.bank_ms is not None:
        out.bank.seconds = clock.bank_ms // 1000
        out.bank.nanos = clock.bank_ms % 1000 * 1_000_000
    if clock.deadline_ms is not None:
        out.deadline.FromMilliseconds(clock.deadline_ms)


def to_event(event: EventOut) -> service_pb2.Event:
    out = service_pb2.Event()
    fill_event(out, event)
    return out


def fill_event(out: service_pb2.Event, event: EventOut) -> None:
    """Writes `event` into `out` (see `fill_state`)."""
    out.seq = event.seq
    out.type = event.kind
    _fill_any(out.payload, event.payload)
    if event.chain_hash:
        out.chain_hash = event.chain_hash
    if event.command_id:
        out.command_id = event.command_id
    if event.core_version:
        out.core_version = event.core_version
    if event.state_hash:
        out.state_hash = event.state_hash
    out.description = event.description
    if event.seat is not None:
        out.seat = event.seat
    if event.command is not None:
        given = event.command
        out.command.host_command = given.host_command or ""
        if given.seat is not None:
            out.command.seat = given.seat
        if given.action is not None:
            _fill_any(out.command.action, given.action)
    if event.recorded_at is not None:
        # As FromDatetime, without its calendar arithmetic (a third of its time).
        out.recorded_at.FromMicroseconds(_micros(event.recorded_at))


class GameServicer(service_pb2_grpc.GameServiceServicer):
    def __init__(self, app: GameApp, signing: SigningKeys | None = None) -> None:
        """`signing`: the keys that sign the receipts of the answers that change a match
        (`tablier.receipts`); without them the answers carry none."""
        self.app = app
        self.signing = signing if signing is not None else app.signing
        self.signer = BatchSigner(self.signing) if self.signing is not None else None
        self.rendering = WatchRendering()
        # GetView responses by the state they render: a state shared by many reads (the
        # application builds each viewer's latest state once) is turned into protobuf once.
        self._views: OrderedDict[int, tuple[MatchState, service_pb2.GetViewResponse]] = OrderedDict()

    async def _sign(self, response: _Signed) -> None:
        """Adds the signed receipt of the response's state's seq and chain head, in place (none
        for a match whose chain head is not published: integrity scheme 1). The receipts of the
        answers completed together share one signature (`BatchSigner`) when their chain heads
        are public; the others are signed alone."""
        state = response.state
        if self.signing is None or self.signer is None or not state.chain_head:
            return
        if state.integrity_scheme >= 2 or state.over:
            await self.signer.sign_into(response.receipt, state.game_id, state.seq, state.chain_head)
        else:
            # A chain head of scheme 1 in play is the auditor's alone (it could be checked
            # against guessed hidden cards): never a leaf whose hash other callers' paths carry.
            self.signing.sign_into(response.receipt, state.game_id, state.seq, state.chain_head)

    async def _played(self, response: _Played, played: Played) -> _Played:
        """A PlayMove or HostCommand response, its messages built in place."""
        for e in played.events:
            fill_event(response.events.add(), e)
        fill_state(response.state, played.state)
        await self._sign(response)
        return response

    async def _credential(self, context: CallContext) -> Credential:
        """The call's credential, a player credential resolved to its player (UNAUTHENTICATED
        BAD_TOKEN when unknown or revoked)."""
        return await self.app.players.resolve(credential(context))

    async def ListSigningKeys(
        self, request: service_pb2.ListSigningKeysRequest, context: CallContext
    ) -> service_pb2.ListSigningKeysResponse:
        if self.signing is None:
            return service_pb2.ListSigningKeysResponse()
        current = self.signing.current_id
        return service_pb2.ListSigningKeysResponse(
            keys=[
                service_pb2.SigningKey(key_id=kid, public_key=pub, current=kid == current)
                for kid, pub in self.signing.listed().items()
            ]
        )

    def streams_of_messages(self) -> dict[str, Callable[..., AsyncIterator[object]]]:
        """The server-streaming methods as a transport that encodes messages itself calls them
        (by method name)."""
        return {"WatchGame": self.watch_game_messages}

    async def ListGameTypes(
        self, request: service_pb2.ListGameTypesRequest, context: CallContext
    ) -> service_pb2.ListGameTypesResponse:
        return service_pb2.ListGameTypesResponse(game_types=self.app.game_types())

    async def ListGames(
        self, request: service_pb2.ListGamesRequest, context: CallContext
    ) -> service_pb2.ListGamesResponse:
        player = None
        if request.mine:
            cred = await self._credential(context)
            if cred.player_id is None:
                raise Unauthenticated(
                    "ListGames(mine) needs 'authorization: Bearer <player credential>'", "PLAYER_CREDENTIAL_REQUIRED"
                )
            player = cred.player_id
        games, token = await self.app.list_games(
            request.game_type, request.page_size, request.page_token, player, request.parent_game_id
        )
        out = service_pb2.ListGamesResponse(next_page_token=token)
        for g in games:
            summary = out.games.add(
                game_id=g.game_id,
                game_type=g.game_type,
                open_seats=sum(1 for i in g.seats if i.status is SeatStatus.OPEN),
                over=g.over,
                seq=g.seq,
                to_act=g.to_act,
                your_seats=g.your_seats,
                ranked=g.ranked,
            )
            if g.outcome is not None:
                summary.outcome.ParseFromString(g.outcome)
            for i in g.seats:
                fill_seat(summary.seats.add(), i)
            if g.created_at is not None:
                summary.created_at.FromDatetime(g.created_at)
            if g.fork is not None:
                _fill_fork(summary.fork, g.fork)
        return out

    async def CreateGame(
        self, request: service_pb2.CreateGameRequest, context: CallContext
    ) -> service_pb2.CreateGameResponse:
        # Only a chosen seed (the auditor's) and a match of bots only (the host's) need a
        # well-formed credential; otherwise a malformed one counts as none (the creation policy
        # may then refuse it).
        if request.seed or request.seat_assignments:
            cred = credential(context)
        else:
            try:
                cred = credential(context)
            except Unauthenticated:
                cred = Credential()
        cred = await self.app.players.resolve(cred)
        assignments = [SeatAssignment(_SEAT_KINDS.get(a.kind), a.bot) for a in request.seat_assignments]
        created = await self.app.create_game(
            request.game_type,
            request.seats,
            dict(request.options),
            request.seed,
            cred,
            assignments,
            peer=peer_of(context),
            ranked=request.ranked,
        )
        response = service_pb2.CreateGameResponse(
            game_id=created.game_id, seat_tokens=created.seat_tokens, invite_codes=created.invite_codes
        )
        fill_state(response.state, created.state)
        await self._sign(response)
        return response

    async def ForkGame(
        self, request: service_pb2.ForkGameRequest, context: CallContext
    ) -> service_pb2.ForkGameResponse:
        kind = request.forked_as.WhichOneof("kind") if request.HasField("forked_as") else None
        if kind == "seat":
            forked_as: ForkedAs | None = ForkedAs(request.forked_as.seat)
        elif kind == "auditor":
            forked_as = ForkedAs(None)
        elif kind == "spectator":
            raise BadRequest("a fork starts from a seat's knowledge or the auditor's, not a spectator's", "BAD_FORK_AS")
        else:
            forked_as = None
        created = await self.app.fork_game(
            request.parent_game_id,
            request.at_seq,
            forked_as,
            await self._credential(context),
            [SeatAssignment(_SEAT_KINDS.get(a.kind), a.bot) for a in request.seat_assignments],
            dict(request.options),
            peer=peer_of(context),
        )
        response = service_pb2.ForkGameResponse(
            game_id=created.game_id, seat_tokens=created.seat_tokens, invite_codes=created.invite_codes
        )
        fill_state(response.state, created.state)
        await self._sign(response)
        return response

    async def JoinGame(
        self, request: service_pb2.JoinGameRequest, context: CallContext
    ) -> service_pb2.JoinGameResponse:
        joined = await self.app.join_game(
            request.game_id,
            await self._credential(context),
            request.invite_code,
            request.seat if request.HasField("seat") else None,
            request.join_key,
        )
        response = service_pb2.JoinGameResponse(
            seat=joined.seat, seat_token=joined.seat_token, replayed=joined.replayed
        )
        fill_state(response.state, joined.state)
        await self._sign(response)
        return response

    async def GetView(self, request: service_pb2.GetViewRequest, context: CallContext) -> service_pb2.GetViewResponse:
        at_seq = request.at_seq if request.HasField("at_seq") else None
        min_seq = request.min_seq if request.HasField("min_seq") else None
        if request.with_position:
            seat = request.position_seat if request.HasField("position_seat") else None
            state, position, seat, moves = await self.app.get_position(
                request.game_id, await self._credential(context), at_seq, seat, min_seq
            )
            response = service_pb2.GetViewResponse(
                position_seat=seat, position_move_labels=[label for _, label in moves]
            )
            fill_state(response.state, state)
            _fill_any(response.position, position)
            for move, _ in moves:
                _fill_any(response.position_moves.add(), move)
            return response
        state = await self.app.get_view(request.game_id, await self._credential(context), at_seq, min_seq)
        if at_seq:  # a past state, built for this call
            response = service_pb2.GetViewResponse()
            fill_state(response.state, state)
            return response
        entry = self._views.get(id(state))
        if entry is not None and entry[0] is state:
            return entry[1]
        response = service_pb2.GetViewResponse()
        fill_state(response.state, state)
        self._views[id(state)] = (state, response)
        while len(self._views) > _RENDERED_VIEWS:
            self._views.popitem(last=False)
        return response

    async def ListLegalMoves(
        self, request: service_pb2.ListLegalMovesRequest, context: CallContext
    ) -> service_pb2.ListLegalMovesResponse:
        seq, moves = await self.app.legal_moves(
            request.game_id, await self._credential(context), request.min_seq if request.HasField("min_seq") else None
        )
        response = service_pb2.ListLegalMovesResponse(seq=seq, labels=[label for _, label in moves])
        for m, _ in moves:
            _fill_any(response.moves.add(), m)
        return response

    async def PlayMove(
        self, request: service_pb2.PlayMoveRequest, context: CallContext
    ) -> service_pb2.PlayMoveResponse:
        played = await self.app.play(
            request.game_id,
            await self._credential(context),
            request.command_id,
            from_any(request, "action"),
            request.expected_seq if request.HasField("expected_seq") else None,
        )
        return await self._played(service_pb2.PlayMoveResponse(replayed=played.replayed), played)

    async def HostCommand(
        self, request: service_pb2.HostCommandRequest, context: CallContext
    ) -> service_pb2.HostCommandResponse:
        done = await self.app.host_command(
            request.game_id,
            await self._credential(context),
            request.command_id,
            request.command,
            request.expected_seq if request.HasField("expected_seq") else None,
        )
        return await self._played(service_pb2.HostCommandResponse(replayed=done.replayed), done)

    async def ResignGame(
        self, request: service_pb2.ResignGameRequest, context: CallContext
    ) -> service_pb2.ResignGameResponse:
        done = await self.app.resign(request.game_id, await self._credential(context), request.command_id)
        return await self._played(service_pb2.ResignGameResponse(replayed=done.replayed), done)

    async def LeaveGame(
        self, request: service_pb2.LeaveGameRequest, context: CallContext
    ) -> service_pb2.LeaveGameResponse:
        done = await self.app.leave(request.game_id, await self._credential(context), request.command_id)
        return await self._played(service_pb2.LeaveGameResponse(replayed=done.replayed), done)

    async def ListEvents(
        self, request: service_pb2.ListEventsRequest, context: CallContext
    ) -> service_pb2.ListEventsResponse:
        events, last_seq = await self.app.list_events(
            request.game_id,
            await self._credential(context),
            request.after_seq,
            request.limit,
            request.min_seq if request.HasField("min_seq") else None,
        )
        response = service_pb2.ListEventsResponse(last_seq=last_seq)
        for e in events:
            fill_event(response.events.add(), e)
        return response

    async def WatchGame(self, request: service_pb2.WatchGameRequest, context: CallContext) -> AsyncIterator[bytes]:
        """Yields each response already serialized (bytes): a batch or an item is shared by
        every watcher of one viewer that takes it, so it is rendered and serialized once
        (`WatchRendering`), not once per stream."""
        async for batch in self._watch(request, context):
            if request.batches:
                yield self.rendering.batch_message(batch)
            else:
                for item in batch:
                    yield self.rendering.message(item)

    async def watch_game_messages(
        self, request: service_pb2.WatchGameRequest, context: CallContext
    ) -> AsyncIterator[service_pb2.WatchGameResponse]:
        """WatchGame for transports that encode messages themselves (the browser's): the same
        stream, as WatchGameResponse messages made once per item or batch."""
        async for batch in self._watch(request, context):
            if request.batches:
                yield self.rendering.batch_response(batch)
            else:
                for item in batch:
                    yield self.rendering.response(item)

    async def _watch(self, request: service_pb2.WatchGameRequest, context: CallContext) -> AsyncIterator[WatchBatch]:
        # Closed as soon as the call ends, so the feed stops counting this client.
        watch = self.app.watch_batches(
            request.game_id,
            await self._credential(context),
            request.after_seq,
            peer=peer_of(context),
            batched=request.batches,
        )
        async with aclosing(watch) as batches:
            async for batch in batches:
                yield batch

    async def EvaluatePosition(
        self, request: service_pb2.EvaluatePositionRequest, context: CallContext
    ) -> service_pb2.EvaluatePositionResponse:
        rollouts = request.rollouts.SerializeToString() if request.HasField("rollouts") else None
        evaluation = await self.app.evaluate(request.game_type, from_any(request, "position"), rollouts)
        return service_pb2.EvaluatePositionResponse(evaluation=to_any(evaluation))

    async def SuggestMove(
        self, request: service_pb2.SuggestMoveRequest, context: CallContext
    ) -> service_pb2.SuggestMoveResponse:
        action, seq = await self.app.suggest(
            request.game_id,
            await self._credential(context),
            request.bot,
            request.min_seq if request.HasField("min_seq") else None,
        )
        return service_pb2.SuggestMoveResponse(action=to_any(action), seq=seq)


# WatchGameResponse on the wire, built from pieces serialized once per item: a message is
# the concatenation of its fields, each a tag, a length and the field's serialized message.
_EVENT, _STATE, _EVENTS = 1 << 3 | 2, 2 << 3 | 2, 3 << 3 | 2


def _field(tag: int, payload: bytes) -> bytes:
    n, head = len(payload), bytearray((tag,))
    while n > 0x7F:
        head.append(n & 0x7F | 0x80)
        n >>= 7
    head.append(n)
    return bytes(head) + payload


class WatchRendering:
    """WatchGame's responses, made once per item or batch of the watch feed however many
    streams send them (the feed hands every watcher of one viewer the same objects), and kept
    while the feed's objects live: serialized for gRPC (`message`, `batch_message`), or as
    messages for the browser transport's codecs (`response`, `batch_response`; never change
    them)."""

    def __init__(self) -> None:
        self._items: weakref.WeakKeyDictionary[WatchItem, tuple[bytes, bytes, bytes]] = weakref.WeakKeyDictionary()
        self._batches: weakref.WeakKeyDictionary[WatchBatch, bytes] = weakref.WeakKeyDictionary()
        self._events: weakref.WeakKeyDictionary[WatchItem, service_pb2.Event] = weakref.WeakKeyDictionary()
        self._responses: weakref.WeakKeyDictionary[object, service_pb2.WatchGameResponse] = weakref.WeakKeyDictionary()

    def _wire(self, item: WatchItem) -> tuple[bytes, bytes, bytes]:
        """(the item as a one-event response, its event as an element of `events`, its state
        field)."""
        wire = self._items.get(item)
        if wire is None:
            event_bytes = to_event(item.event).SerializeToString()
            state_field = _field(_STATE, to_state(item.state).SerializeToString())
            wire = self._items[item] = (
                _field(_EVENT, event_bytes) + state_field,
                _field(_EVENTS, event_bytes),
                state_field,
            )
        return wire

    def message(self, item: WatchItem) -> bytes:
        """A serialized WatchGameResponse of one event and the state after it."""
        return self._wire(item)[0]

    def batch_message(self, batch: WatchBatch) -> bytes:
        """A serialized WatchGameResponse of the batch's events and the state after the last."""
        wire = self._batches.get(batch)
        if wire is None:
            pieces = [self._wire(item) for item in batch]
            wire = self._batches[batch] = b"".join([p[1] for p in pieces] + [pieces[-1][2]])
        return wire

    def _event(self, item: WatchItem) -> service_pb2.Event:
        event = self._events.get(item)
        if event is None:
            event = self._events[item] = to_event(item.event)
        return event

    def response(self, item: WatchItem) -> service_pb2.WatchGameResponse:
        """The WatchGameResponse of one event and the state after it."""
        response = self._responses.get(item)
        if response is None:
            response = self._responses[item] = service_pb2.WatchGameResponse(
                event=self._event(item), state=to_state(item.state)
            )
        return response

    def batch_response(self, batch: WatchBatch) -> service_pb2.WatchGameResponse:
        """The WatchGameResponse of the batch's events and the state after the last."""
        response = self._responses.get(batch)
        if response is None:
            response = self._responses[batch] = service_pb2.WatchGameResponse(
                events=[self._event(item) for item in batch], state=to_state(batch[-1].state)
            )
        return response
