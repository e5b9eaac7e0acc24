"""The typed async SDK: a `Client` on one channel, and `Match` handles acting with one
credential (a seat's token, none for a spectator, the auditor's token for the auditor).

    async with connect("127.0.0.1:50051") as client:
        created = await client.create(games.QWIRKLE, seats=2)
        me = created.seats[0]
        moves = await me.legal_moves()          # list[qwirkle_pb2.Action]
        played = await me.play(moves.moves[0])  # command id chosen here, retried safely
        print(played.state.view)                # a qwirkle_pb2.View

Game messages travel as `google.protobuf.Any`; the SDK packs actions and unpacks views,
events and moves itself (no type URLs to write). Unary calls that are safe to repeat are
retried when the server is unreachable; `play` keeps one command id across its retries, so a
move is applied at most once. `watch()` resumes a dropped stream after the last state it
yielded: no gap, no repeat.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import ssl
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

import grpc
from google.protobuf import any_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import Message

from . import errors, games, values
from .kinds import A, E, GameKind, V
from .v1 import common_pb2, players_pb2, players_pb2_grpc, ranked_pb2, ranked_pb2_grpc, service_pb2, service_pb2_grpc
from .values import MoveValues

TYPE_URL_PREFIX = "type.googleapis.com/"
ROLE_HEADER = "x-tablier-role"
# The match a call is about, as a header a proxy can hash without reading protobuf (docs/api.md
# "Several servers behind one address"): every call whose request names a match carries it.
GAME_HEADER = "x-tablier-game"

M = TypeVar("M", bound=Message)
R = TypeVar("R")

# Codes after which a call that is safe to repeat is repeated.
_TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
# Matches whose highest seq seen a client remembers (for `min_seq`).
_SEEN_MATCHES = 4096


# --------------------------------------------------------------------------- messages


def pack(message: Message) -> any_pb2.Any:
    """`message` as a `google.protobuf.Any` (type URL `type.googleapis.com/<full name>`)."""
    out = any_pb2.Any()
    out.Pack(message)
    return out


def message_class(full_name: str) -> type[Message]:
    """The generated class of a `tablier.v1` message by full name, e.g.
    `tablier.qwirkle.v1.View` (every game's module is loaded by the SDK)."""
    return message_factory.GetMessageClass(descriptor_pool.Default().FindMessageTypeByName(full_name))


@overload
def unpack(value: any_pb2.Any, cls: type[M]) -> M: ...
@overload
def unpack(value: any_pb2.Any, cls: None = None) -> Message: ...
def unpack(value: any_pb2.Any, cls: type[Message] | None = None) -> Message:
    """The message inside an `Any`: of class `cls` (checked against the type URL), or of
    whatever `tablier.v1` type the URL names."""
    name = value.type_url.rpartition("/")[2]
    if cls is None:
        try:
            cls = message_class(name)
        except KeyError:
            raise TypeError(f"unknown message type {value.type_url!r}") from None
    elif cls.DESCRIPTOR.full_name != name:
        raise TypeError(f"expected {cls.DESCRIPTOR.full_name}, got {value.type_url!r}")
    return cls.FromString(value.value)


@dataclass(frozen=True)
class State(Generic[V]):
    """A match at one seq, as one viewer may see it."""

    game_id: str
    game_type: str
    seq: int
    role: service_pb2.Role.ValueType
    # The viewer's seat (None unless role is ROLE_SEAT).
    seat: int | None
    # Seats whose decision the match awaits (several in simultaneous phases).
    to_act: tuple[int, ...]
    over: bool
    outcome: common_pb2.Outcome | None
    view: V
    seat_count: int
    raw: service_pb2.GameState = field(repr=False)
    # Who fills each seat, in seat order: taken, open, invited, or a server bot.
    seats: tuple[service_pb2.SeatInfo, ...] = ()
    # Where the match comes from when it is a fork (ForkGame); None otherwise. Never rated.
    fork: service_pb2.ForkInfo | None = None

    @property
    def my_turn(self) -> bool:
        """True when the viewer holds a seat the match awaits."""
        return self.seat is not None and self.seat in self.to_act


@dataclass(frozen=True)
class Event(Generic[E]):
    """One event of the log, redacted for the viewer."""

    seq: int
    type: str
    # The seat whose command caused it; None for automatic events.
    seat: int | None
    # The game's Event message (e.g. a qwirkle_pb2.Event for games.QWIRKLE), or for an event
    # every game shares (type "seat_timed_out") its own message (tablier.v1.SeatTimedOut).
    payload: E
    recorded_at: datetime | None
    # The event in one sentence for the viewer, in the game's own words (from the server).
    description: str = ""

    def __str__(self) -> str:
        return self.description or f"{self.type} (event {self.seq})"


@dataclass(frozen=True)
class Update(Generic[V, E]):
    """What `watch()` yields: one event and the viewer's state after it (when the stream
    is in batches: after the last event the server sent with it)."""

    event: Event[E]
    state: State[V]


@dataclass(frozen=True)
class Played(Generic[V, E]):
    events: list[Event[E]]
    state: State[V]
    # True when the command id had already been applied: nothing new was written.
    replayed: bool
    command_id: str


@dataclass(frozen=True)
class Moves(Generic[A]):
    """The caller's legal moves at `seq` (empty when it is not the caller's turn)."""

    seq: int
    moves: list[A]
    # labels[i] is moves[i] in words, as the seat would say it (the game's own, from the server).
    labels: list[str] = field(default_factory=list)

    def label(self, move: A) -> str:
        """The words of one of these moves."""
        for candidate, words in zip(self.moves, self.labels, strict=False):
            if candidate == move:
                return words
        return str(move)

    def __str__(self) -> str:
        return "\n".join(self.labels)


@dataclass(frozen=True)
class Suggestion(Generic[A]):
    action: A
    seq: int


@dataclass(frozen=True)
class SeatPosition(Generic[V]):
    """What `Match.position()` gives: the game's Position message (the input of
    `Client.evaluate`) that `seat` faces, and the viewer's state at the same seq."""

    seat: int
    position: Message
    state: State[V]


@dataclass
class Turn(Generic[A, V, E]):
    """One turn of a seat, as `Match.turns()` yields it: the seat's state (its own view) and
    its legal moves, both at `seq`. `play()` plays one of them there."""

    match: Match[A, V, E]
    state: State[V]
    moves: list[A]
    played: Played[V, E] | None = None

    @property
    def seq(self) -> int:
        return self.state.seq

    async def play(self, action: A) -> Played[V, E]:
        """Plays `action` at this turn's seq (`Conflict` when the match has moved on)."""
        self.played = await self.match.play(action, expected_seq=self.state.seq)
        return self.played

    async def suggest(self, bot: str = "") -> A:
        """The move one of the server's bots would play here."""
        return (await self.match.suggest(bot)).action


@dataclass(frozen=True)
class Retry:
    """How calls that are safe to repeat are repeated: up to `attempts` tries, waiting
    `first_delay` seconds, doubling up to `max_delay`."""

    attempts: int = 6
    first_delay: float = 0.05
    max_delay: float = 2.0

    def delays(self) -> Generator[float, None, None]:
        delay = self.first_delay
        for _ in range(self.attempts - 1):
            yield delay
            delay = min(delay * 2, self.max_delay)


# --------------------------------------------------------------------------- client


class Client:
    """One channel to a tablier server. Make one with `connect()`."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        token: str | None = None,
        retry: Retry = Retry(),
        timeout: float | None = 30.0,
        tls: bool = False,
    ) -> None:
        self.channel = channel
        self.stub = service_pb2_grpc.GameServiceStub(channel)
        self.player_stub = players_pb2_grpc.PlayerServiceStub(channel)
        self.ranked_stub = ranked_pb2_grpc.RankedServiceStub(channel)
        # The signed-in player (`sign_in_guest`, `sign_in_oidc`, `use_credential`) and its
        # credential: sent with CreateGame and JoinGame (the seat is bound to the player) and
        # by the handles of its matches (`my_matches`, `rejoin`).
        self.player: players_pb2.Player | None = None
        self.credential: str | None = None
        # The default credential of calls that take one without a match (CreateGame with a
        # seed, EvaluatePosition): the host's or creator's token (creation without the
        # server's rate), the auditor's (a seed), or None for none.
        self.token = token
        self.retry = retry
        self.timeout = timeout
        self.tls = tls
        self._types: dict[str, common_pb2.GameType] = {}
        # Every signed receipt a CreateGame, JoinGame, PlayMove or HostCommand answer carried,
        # in the order received: the server's word on how far each match's log reached. Keep
        # them (`save_receipts`) to prove later that a log was cut or rewritten
        # (`tablier verify --receipts`); `signing_keys` lists the keys that check them.
        self.receipts: list[service_pb2.Receipt] = []
        # The highest seq seen of each match in any answer: sent as `min_seq` with the reads
        # of the present, so a read never goes back before what this client saw, whichever
        # server (or worker process) answers it.
        self.seen: OrderedDict[str, int] = OrderedDict()

    def saw(self, game_id: str, seq: int) -> None:
        """Notes that match `game_id` reached `seq` (done for every answer `call` gets)."""
        if not game_id:
            return
        if seq > self.seen.get(game_id, 0):
            self.seen[game_id] = seq
        self.seen.move_to_end(game_id)
        while len(self.seen) > _SEEN_MATCHES:
            self.seen.popitem(last=False)

    def _note(self, request: Message, response: object) -> None:
        """The seq an answer carries (its state's, the moves' or suggestion's, ListEvents'
        last_seq), noted for its match."""
        if not isinstance(response, Message):
            return
        fields = response.DESCRIPTOR.fields_by_name
        if "state" in fields and response.HasField("state"):
            state = response.state  # type: ignore[attr-defined]
            self.saw(state.game_id, state.seq)
        elif "seq" in fields or "last_seq" in fields:
            seq = response.seq if "seq" in fields else response.last_seq  # type: ignore[attr-defined]
            self.saw(getattr(request, "game_id", ""), seq)

    async def close(self) -> None:
        await self.channel.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def call(
        self,
        method: Callable[..., Awaitable[R]],
        request: Message,
        metadata: Sequence[tuple[str, str]] = (),
        *,
        repeatable: bool = True,
    ) -> R:
        """One unary call; repeated on UNAVAILABLE/DEADLINE_EXCEEDED when `repeatable`.
        Errors come out as `tablier_client.errors` exceptions. A request with a `min_seq`
        field left unset gets the highest seq this client saw of its match (`seen`)."""
        if "min_seq" in request.DESCRIPTOR.fields_by_name and not request.HasField("min_seq"):
            seen = self.seen.get(getattr(request, "game_id", ""))
            if seen:
                request.min_seq = seen  # type: ignore[attr-defined]
        delays = self.retry.delays() if repeatable else iter(())
        metadata = with_game(metadata, getattr(request, "game_id", ""))
        while True:
            try:
                response = await method(request, metadata=metadata, timeout=self.timeout)
            except grpc.aio.AioRpcError as exc:
                delay = next(delays, None) if exc.code() in _TRANSIENT else None
                if delay is None:
                    raise errors.from_rpc_error(exc) from None
                await asyncio.sleep(delay)
                continue
            if isinstance(response, Message) and "receipt" in response.DESCRIPTOR.fields_by_name:
                if response.HasField("receipt"):
                    self.receipts.append(response.receipt)  # type: ignore[attr-defined]
            self._note(request, response)
            return response

    def save_receipts(self, path: str | os.PathLike[str]) -> None:
        """Writes the receipts received so far (a `ReceiptList`, protobuf JSON): the file
        `tablier verify --receipts` and `tablier verify-public --receipts` read."""
        kept = service_pb2.ReceiptList(receipts=self.receipts)
        Path(path).write_text(json_format.MessageToJson(kept, indent=1))

    async def signing_keys(self) -> list[service_pb2.SigningKey]:
        """The public keys that sign receipts, the current one first. Keep those you trust:
        a receipt verifies against its key even once the server stops listing it."""
        response = await self.call(self.stub.ListSigningKeys, service_pb2.ListSigningKeysRequest())
        return list(response.keys)

    # ------------------------------------------------------------------ players

    async def sign_in_guest(self, display_name: str) -> players_pb2.Player:
        """Creates a guest player named `display_name` and signs this client in as it: its
        credential (`self.credential`, shown once: keep it to sign in again with
        `use_credential`) goes with every later CreateGame and JoinGame, which bind the seat to
        the player. A bad name is `errors.BadRequest` (BAD_DISPLAY_NAME). Not retried."""
        response = await self.call(
            self.player_stub.CreateGuestPlayer,
            players_pb2.CreateGuestPlayerRequest(display_name=display_name),
            repeatable=False,
        )
        self.player, self.credential = response.player, response.credential
        return response.player

    async def sign_in_oidc(self, id_token: str, display_name: str = "") -> players_pb2.Player:
        """Signs in with an OpenID Connect ID token of the issuer the server trusts (the player
        is created at its first sign-in), as `sign_in_guest` does."""
        response = await self.call(
            self.player_stub.SignInWithOidc,
            players_pb2.SignInWithOidcRequest(id_token=id_token, display_name=display_name),
            repeatable=False,
        )
        self.player, self.credential = response.player, response.credential
        return response.player

    async def use_credential(self, credential: str) -> players_pb2.Player:
        """Signs in with a credential kept from an earlier sign-in (on any device)."""
        self.credential = credential
        self.player = await self.me()
        return self.player

    async def me(self) -> players_pb2.Player:
        """The signed-in player's profile."""
        response = await self.call(
            self.player_stub.GetPlayer, players_pb2.GetPlayerRequest(), self._metadata(self.credential)
        )
        return response.player

    async def player_profile(self, player_id: str) -> players_pb2.Player:
        """Any player's public profile."""
        response = await self.call(self.player_stub.GetPlayer, players_pb2.GetPlayerRequest(player_id=player_id))
        return response.player

    async def rename(self, display_name: str) -> players_pb2.Player:
        """Changes the signed-in player's display name, everywhere it is shown."""
        response = await self.call(
            self.player_stub.RenamePlayer,
            players_pb2.RenamePlayerRequest(display_name=display_name),
            self._metadata(self.credential),
        )
        self.player = response.player
        return response.player

    async def sign_out(self, everywhere: bool = False) -> int:
        """Revokes this client's credential (`everywhere`: every credential of the player);
        every server refuses it at once. Returns how many were revoked."""
        response = await self.call(
            self.player_stub.RevokeCredential,
            players_pb2.RevokeCredentialRequest(all_credentials=everywhere),
            self._metadata(self.credential),
        )
        self.player, self.credential = None, None
        return response.revoked

    async def my_matches(
        self, page_size: int = 0, page_token: str = "", game_type: str = ""
    ) -> tuple[list[service_pb2.GameSummary], str]:
        """A page of the signed-in player's matches, newest first: running, waiting for the
        player (a seat of `your_seats` in `to_act`) and finished (with `outcome`), and the
        token of the next page ("" on the last)."""
        response = await self.call(
            self.stub.ListGames,
            service_pb2.ListGamesRequest(mine=True, page_size=page_size, page_token=page_token, game_type=game_type),
            self._metadata(self.credential),
        )
        return list(response.games), response.next_page_token

    def rejoin(self, game_id: str, kind: GameKind[Any, Any, Any] | None = None) -> Match[Any, Any, Any]:
        """A handle on one of the signed-in player's matches, acting for the seat the player
        holds there with the player's credential (from any device: no seat token needed)."""
        return Match(self, game_id, kind, token=self.credential)

    # ------------------------------------------------------------------ ranked play

    async def leaderboard(
        self, game: str | GameKind[Any, Any, Any], page: int = 0, page_size: int = 0
    ) -> tuple[list[ranked_pb2.Rating], int]:
        """One page of a game type's leaderboard, best first (players and bots), and the number
        of rated subjects."""
        game_id = game if isinstance(game, str) else game.id
        response = await self.call(
            self.ranked_stub.GetLeaderboard,
            ranked_pb2.GetLeaderboardRequest(game_type=game_id, page=page, page_size=page_size),
        )
        return list(response.ratings), response.total

    async def rating_history(
        self, game: str | GameKind[Any, Any, Any], subject: str = "", limit: int = 0
    ) -> ranked_pb2.GetRatingHistoryResponse:
        """A subject's rating events in a game type, newest first, and its current rating;
        `subject` empty: the signed-in player's."""
        game_id = game if isinstance(game, str) else game.id
        return await self.call(
            self.ranked_stub.GetRatingHistory,
            ranked_pb2.GetRatingHistoryRequest(game_type=game_id, subject=subject, limit=limit),
            self._metadata(self.credential),
        )

    async def rating_change(self, game: str | GameKind[Any, Any, Any], game_id: str) -> ranked_pb2.RatingChange | None:
        """The signed-in player's rating change from one rated match (None: not rated yet)."""
        history = await self.rating_history(game, limit=20)
        for entry in history.entries:
            if entry.event.game_id == game_id:
                return entry.change
        return None

    async def find_match(
        self, game: str | GameKind[Any, Any, Any], seats: int
    ) -> AsyncGenerator[ranked_pb2.QueueStatus | ranked_pb2.QueueMatch, None]:
        """Queues the signed-in player for a ranked match: yields its queue status while it
        waits, then the match (a `QueueMatch`: `rejoin(match.game_id)` plays it). Leaving the
        loop early leaves the queue."""
        game_id = game if isinstance(game, str) else game.id
        call = self.ranked_stub.FindMatch(
            ranked_pb2.FindMatchRequest(game_type=game_id, seats=seats), metadata=self._metadata(self.credential)
        )
        try:
            async for msg in call:
                if msg.HasField("matched"):
                    yield msg.matched
                    return
                yield msg.waiting
        except grpc.aio.AioRpcError as exc:
            raise errors.from_rpc_error(exc) from None
        finally:
            call.cancel()

    async def cancel_find(self, ticket: str) -> bool:
        """Leaves the queue (the ticket `find_match`'s status gave)."""
        response = await self.call(
            self.ranked_stub.CancelFind, ranked_pb2.CancelFindRequest(ticket=ticket), self._metadata(self.credential)
        )
        return response.cancelled

    # ------------------------------------------------------------------ game types

    async def game_types(self) -> list[common_pb2.GameType]:
        """Every game the server plays, with its options (name, default, allowed values),
        player counts, bots and message types."""
        response = await self.call(self.stub.ListGameTypes, service_pb2.ListGameTypesRequest())
        self._types = {t.id: t for t in response.game_types}
        return list(response.game_types)

    async def game_type(self, game: str | GameKind[Any, Any, Any]) -> common_pb2.GameType:
        game_id = game if isinstance(game, str) else game.id
        if game_id not in self._types:
            await self.game_types()
        try:
            return self._types[game_id]
        except KeyError:
            raise KeyError(f"the server has no game type {game_id!r}") from None

    # ------------------------------------------------------------------ matches

    @overload
    async def create(
        self,
        game: GameKind[A, V, E],
        seats: int,
        options: dict[str, str] | None = None,
        *,
        seed: bytes = b"",
        assignments: Sequence[service_pb2.SeatAssignment] = (),
        ranked: bool = False,
    ) -> Created[A, V, E]: ...
    @overload
    async def create(
        self,
        game: str,
        seats: int,
        options: dict[str, str] | None = None,
        *,
        seed: bytes = b"",
        assignments: Sequence[service_pb2.SeatAssignment] = (),
        ranked: bool = False,
    ) -> Created[Message, Message, Message]: ...
    async def create(
        self,
        game: str | GameKind[Any, Any, Any],
        seats: int,
        options: dict[str, str] | None = None,
        *,
        seed: bytes = b"",
        assignments: Sequence[service_pb2.SeatAssignment] = (),
        ranked: bool = False,
    ) -> Created[Any, Any, Any]:
        """A new match. `seed` (32 bytes, reproducible matches) needs the auditor token as
        the client's `token`. `assignments` (one per seat; `seats` may be 0 then) make seats
        open, invited or the server's bots (`open_seat()`, `invited_seat()`, `bot_seat()`); the
        creator gets the tokens of the others. `ranked` (a signed-in player, the game's default
        options, one seat for the creator): the match is rated when it ends. Not retried: a
        repeated CreateGame would make a second match."""
        kind = _kind(game)
        request = service_pb2.CreateGameRequest(
            game_type=kind.id if kind else str(game),
            seats=seats,
            options=options or {},
            seed=seed,
            seat_assignments=assignments,
            ranked=ranked,
        )
        response = await self.call(
            self.stub.CreateGame, request, self._metadata(self.token or self.credential), repeatable=False
        )
        return self._created(response, kind)

    async def fork(
        self,
        parent_game_id: str,
        at_seq: int,
        *,
        seat: int | None = None,
        auditor: bool = False,
        assignments: Sequence[service_pb2.SeatAssignment] = (),
        options: dict[str, str] | None = None,
        token: str | None = None,
    ) -> Created[Any, Any, Any]:
        """A new match that starts from match `parent_game_id` at `at_seq`, to play on from
        there: from what `seat` knew there (every card it could not see dealt afresh: the
        parent's hidden cards never reach the fork), or with `auditor=True` from the full state.
        While the parent runs, a seat fork needs that seat's token (`token`, else the client's)
        and an auditor fork the host's; anyone may fork a finished match. The caller holds
        every seat of the fork unless `assignments` say otherwise; `options` may only set a
        clock (a fork has none unless asked). A fork is never rated: `state.fork` says where it
        comes from. Not retried (a repeated ForkGame makes a second match)."""
        if (seat is None) == (not auditor):
            raise ValueError("fork from one seat's knowledge (seat=n) or the auditor's (auditor=True)")
        request = service_pb2.ForkGameRequest(
            parent_game_id=parent_game_id,
            at_seq=at_seq,
            seat_assignments=assignments,
            options=options or {},
        )
        if auditor:
            request.forked_as.auditor.SetInParent()
        else:
            request.forked_as.seat = seat or 0
        metadata = self._metadata(token or self.token or self.credential)
        response = await self.call(self.stub.ForkGame, request, metadata, repeatable=False)
        return self._created(response, _kind(response.state.game_type))

    async def forks(self, game_id: str, page_size: int = 0) -> list[service_pb2.GameSummary]:
        """The forks of match `game_id`, newest first (every page)."""
        out: list[service_pb2.GameSummary] = []
        token = ""
        while True:
            request = service_pb2.ListGamesRequest(parent_game_id=game_id, page_size=page_size, page_token=token)
            response = await self.call(self.stub.ListGames, request, ())
            out.extend(response.games)
            token = response.next_page_token
            if not token:
                return out

    def _created(
        self,
        response: service_pb2.CreateGameResponse | service_pb2.ForkGameResponse,
        kind: GameKind[Any, Any, Any] | None,
    ) -> Created[Any, Any, Any]:
        statuses = list(response.state.seats)
        matches = [
            Match(
                self,
                response.game_id,
                kind,
                token=t or None,
                seat=None if t else (i, _seat_status(statuses[i]) if i < len(statuses) else "not held"),
            )
            for i, t in enumerate(response.seat_tokens)
        ]
        return Created(
            response.game_id,
            _state(response.state, kind),
            matches,
            list(response.seat_tokens),
            list(response.invite_codes),
        )

    @overload
    async def join(
        self,
        game_id: str = "",
        kind: None = None,
        *,
        invite_code: str = "",
        seat: int | None = None,
        join_key: str | None = None,
    ) -> Joined[Message, Message, Message]: ...
    @overload
    async def join(
        self,
        game_id: str,
        kind: GameKind[A, V, E],
        *,
        invite_code: str = "",
        seat: int | None = None,
        join_key: str | None = None,
    ) -> Joined[A, V, E]: ...
    async def join(
        self,
        game_id: str = "",
        kind: GameKind[Any, Any, Any] | None = None,
        *,
        invite_code: str = "",
        seat: int | None = None,
        join_key: str | None = None,
    ) -> Joined[Any, Any, Any]:
        """Takes a seat nobody holds: the one `invite_code` is for (the game id may be left
        out), else open seat `seat`, else the lowest open seat. The handle acts with the
        seat's token (keep `Joined.token`). One join key (given, or a new random one) is used
        for every try, so a join repeated after a lost response gets the same seat and token.
        Of racing joins one wins, the others get `errors.Refused` with reason SEAT_TAKEN."""
        request = service_pb2.JoinGameRequest(
            game_id=game_id, invite_code=invite_code, join_key=join_key or secrets.token_urlsafe(32)
        )
        if seat is not None:
            request.seat = seat
        response = await self.call(self.stub.JoinGame, request, self._metadata(self.credential))
        kind = kind or games.BY_ID.get(response.state.game_type)
        return Joined(
            response.seat,
            response.seat_token,
            Match(self, response.state.game_id, kind, token=response.seat_token),
            _state(response.state, kind),
            response.replayed,
        )

    @overload
    def match(
        self, game_id: str, kind: GameKind[A, V, E], *, token: str | None = None, auditor: bool = False
    ) -> Match[A, V, E]: ...
    @overload
    def match(
        self, game_id: str, kind: None = None, *, token: str | None = None, auditor: bool = False
    ) -> Match[Message, Message, Message]: ...
    def match(
        self,
        game_id: str,
        kind: GameKind[Any, Any, Any] | None = None,
        *,
        token: str | None = None,
        auditor: bool = False,
    ) -> Match[Any, Any, Any]:
        """A handle on a match: as the seat of `token`, as a spectator (no token), or as the
        auditor (`auditor=True`: the auditor token, or nothing once the match is over)."""
        return Match(self, game_id, kind, token=token, auditor=auditor)

    async def open(
        self, game_id: str, *, token: str | None = None, auditor: bool = False
    ) -> Match[Message, Message, Message]:
        """As `match()`, for a match whose game is not known yet: asks the server which it is."""
        handle = self.match(game_id, token=token, auditor=auditor)
        state = await handle.state()
        handle.kind = games.BY_ID.get(state.game_type)
        return handle

    async def evaluate(self, game: str | GameKind[Any, Any, Any], position: Message) -> Message:
        """The game's Evaluation of a Position message (legal moves with scores)."""
        game_id = game if isinstance(game, str) else game.id
        response = await self.call(
            self.stub.EvaluatePosition,
            service_pb2.EvaluatePositionRequest(game_type=game_id, position=pack(position)),
            self._metadata(self.token),
        )
        return unpack(response.evaluation)

    async def move_values(
        self,
        game_id: str,
        at_seq: int,
        *,
        seat: int | None = None,
        rollouts: int = 200,
        seed: int = 0,
        threads: int = 1,
        token: str | None = None,
    ) -> MoveValues:
        """In a FINISHED match's replay: every legal move of `seat` (default: the seat awaited)
        at `at_seq`, with its value at the end of the match over `rollouts` deals of what that
        seat could not see (`seed`: the same seed, the same values), and which one was played.
        Reads as the auditor (allowed once a match is over) and evaluates with
        EvaluatePosition. A match in progress is refused (`values.MatchNotOver`): no assistance
        during play; except a fork (never rated, an analysis board), whose seat may value its
        own positions while it runs, reading with that seat's `token`."""
        return await values.move_values(
            self, game_id, at_seq, seat=seat, rollouts=rollouts, seed=seed, threads=threads, token=token
        )

    @staticmethod
    def _metadata(token: str | None, auditor: bool = False) -> tuple[tuple[str, str], ...]:
        md: list[tuple[str, str]] = []
        if token:
            md.append(("authorization", f"Bearer {token}"))
        if auditor and not token:
            md.append((ROLE_HEADER, "auditor"))
        return tuple(md)


@dataclass(frozen=True)
class Created(Generic[A, V, E]):
    """What `Client.create` gives. `state` is the match as a spectator sees it (role
    ROLE_SPECTATOR, no hand, `my_turn` False even when a seat of the creator is awaited):
    the one view every creator may be shown. A seat's own view is `seat_state(i)` (its hand,
    `my_turn`), or `seats[i].turns()` for a bot's loop."""

    game_id: str
    state: State[V]
    # One handle per seat, in seat order. A seat the creator holds acts with its secret token;
    # a seat of a server bot, an open or an invited seat has no token (its handle reads as a
    # spectator, and its repr says which seat it is and why).
    seats: list[Match[A, V, E]]
    # The seats' secret tokens, in seat order ("" for a seat the creator does not hold); the
    # server keeps only their hashes: keep them to act as those seats later
    # (`client.match(game_id, kind, token=...)`).
    tokens: list[str]
    # Invite codes: [] when no seat is invited; otherwise one per seat, in seat order, "" for
    # the seats that are not invited (e.g. ["", "k3J..."] for a creator's seat and an invited one).
    invite_codes: list[str] = field(default_factory=list)

    async def seat_state(self, seat: int) -> State[V]:
        """The match now as seat `seat` sees it (a seat the creator holds)."""
        handle = self.seats[seat]
        if not handle.token:
            raise ValueError(f"the creator does not hold seat {seat} (it has no token)")
        return await handle.state()


@dataclass(frozen=True)
class Joined(Generic[A, V, E]):
    seat: int
    # The seat's secret token; the server keeps only its hash.
    token: str
    match: Match[A, V, E]
    state: State[V]
    # True when the join key had joined already (a repeat): the same seat and token.
    replayed: bool = False


def open_seat() -> service_pb2.SeatAssignment:
    """A seat anyone may take with `Client.join`."""
    return service_pb2.SeatAssignment(kind=service_pb2.SEAT_KIND_OPEN)


def invited_seat() -> service_pb2.SeatAssignment:
    """A seat for whoever holds its invite code (`Created.invite_codes`)."""
    return service_pb2.SeatAssignment(kind=service_pb2.SEAT_KIND_INVITE)


def bot_seat(bot: str = "") -> service_pb2.SeatAssignment:
    """A seat the server plays with one of `GameType.bots` ("" for the strongest)."""
    return service_pb2.SeatAssignment(kind=service_pb2.SEAT_KIND_BOT, bot=bot)


def creator_seat() -> service_pb2.SeatAssignment:
    """A seat whose token goes to the creator."""
    return service_pb2.SeatAssignment(kind=service_pb2.SEAT_KIND_CREATOR)


class Match(Generic[A, V, E]):
    """A match seen with one credential."""

    def __init__(
        self,
        client: Client,
        game_id: str,
        kind: GameKind[A, V, E] | None,
        *,
        token: str | None = None,
        auditor: bool = False,
        seat: tuple[int, str] | None = None,
    ) -> None:
        self.client = client
        self.game_id = game_id
        self.kind = kind
        self.token = token
        self.auditor = auditor
        self.metadata = client._metadata(token, auditor)
        # (seat, who fills it) for a seat of `Created.seats` the creator does not hold.
        self._unheld = seat

    def __repr__(self) -> str:
        if self.token:
            who = "seat"
        elif self.auditor:
            who = "auditor"
        elif self._unheld is not None:
            who = f"seat {self._unheld[0]} ({self._unheld[1]}): no token, reads as a spectator"
        else:
            who = "spectator"
        return f"Match({self.game_id!r}, {self.kind.id if self.kind else '?'}, {who})"

    async def state(self, at_seq: int | None = None) -> State[V]:
        """The match now, or at `at_seq`, as this credential may see it."""
        request = service_pb2.GetViewRequest(game_id=self.game_id)
        if at_seq is not None:
            request.at_seq = at_seq
        response = await self.client.call(self.client.stub.GetView, request, self.metadata)
        return _state(response.state, self.kind)

    async def fork(
        self, at_seq: int | None = None, *, seat: int | None = None, auditor: bool = False
    ) -> Created[A, V, E]:
        """`Client.fork` of this match at `at_seq` (default: now) with this credential: from
        `seat` (default: this handle's own seat), or the auditor's state."""
        if at_seq is None:
            at_seq = (await self.state()).seq
        if seat is None and not auditor:
            seat = (await self.state()).seat
            if seat is None:
                raise ValueError("this handle holds no seat: give seat=n or auditor=True")
        return await self.client.fork(self.game_id, at_seq, seat=seat, auditor=auditor, token=self.token)

    async def position(self, seat: int | None = None, at_seq: int | None = None) -> SeatPosition[V]:
        """The Position a seat faces now (or at `at_seq`), holding only what that seat may see:
        this seat's own, or with the auditor's credential any seat's (default: the seat
        awaited). For games with a position evaluator; a spectator is refused
        (PERMISSION_DENIED POSITION_NOT_VISIBLE)."""
        request = service_pb2.GetViewRequest(game_id=self.game_id, with_position=True)
        if at_seq is not None:
            request.at_seq = at_seq
        if seat is not None:
            request.position_seat = seat
        response = await self.client.call(self.client.stub.GetView, request, self.metadata)
        return SeatPosition(response.position_seat, unpack(response.position), _state(response.state, self.kind))

    async def legal_moves(self) -> Moves[A]:
        response = await self.client.call(
            self.client.stub.ListLegalMoves, service_pb2.ListLegalMovesRequest(game_id=self.game_id), self.metadata
        )
        cls = self.kind.action if self.kind else None
        return Moves(
            response.seq,
            [unpack(m, cls) for m in response.moves],  # type: ignore[misc]
            list(response.labels),
        )

    async def play(self, action: A, *, expected_seq: int | None = None, command_id: str | None = None) -> Played[V, E]:
        """Plays `action` for this seat. One command id (given, or a new UUID) is used for
        every try, so the move is applied once however often the call is repeated. Without
        `expected_seq`, a race lost to another move is retried against the new state; with
        it, `Conflict` is raised instead (the caller decided on a state that is gone)."""
        if self.kind is not None and not isinstance(action, self.kind.action):
            raise TypeError(
                f"{self.kind.id} plays {self.kind.action.DESCRIPTOR.full_name}, not {action.DESCRIPTOR.full_name}"
            )
        command_id = command_id or str(uuid.uuid4())
        request = service_pb2.PlayMoveRequest(game_id=self.game_id, command_id=command_id, action=pack(action))
        if expected_seq is not None:
            request.expected_seq = expected_seq
        delays = self.client.retry.delays()
        while True:
            try:
                response = await self.client.call(self.client.stub.PlayMove, request, self.metadata)
                break
            except errors.Conflict as exc:
                delay = next(delays, None) if expected_seq is None and exc.reason == "SEQ_CONFLICT" else None
                if delay is None:
                    raise
                await asyncio.sleep(delay)
        return Played(
            [_event(e, self.kind) for e in response.events],
            _state(response.state, self.kind),
            response.replayed,
            command_id,
        )

    async def resign(self, *, command_id: str | None = None) -> Played[V, E]:
        """This seat resigns (an event of the log). The game's rule decides what follows: a
        game that ends a match on a forfeit ends it, any other goes on with the server's bot
        playing the seat; this handle no longer acts for it. Safe to repeat (one command id)."""
        request = service_pb2.ResignGameRequest(game_id=self.game_id, command_id=command_id or str(uuid.uuid4()))
        response = await self.client.call(self.client.stub.ResignGame, request, self.metadata)
        return Played(
            [_event(e, self.kind) for e in response.events],
            _state(response.state, self.kind),
            response.replayed,
            request.command_id,
        )

    async def leave(self, *, command_id: str | None = None) -> Played[V, E]:
        """This seat leaves a match that still waits for players: the seat is open again and
        this handle no longer acts for it (`errors.Refused` MATCH_NOT_WAITING once every seat
        is filled: resign instead). Safe to repeat (one command id)."""
        request = service_pb2.LeaveGameRequest(game_id=self.game_id, command_id=command_id or str(uuid.uuid4()))
        response = await self.client.call(self.client.stub.LeaveGame, request, self.metadata)
        return Played(
            [_event(e, self.kind) for e in response.events],
            _state(response.state, self.kind),
            response.replayed,
            request.command_id,
        )

    async def suggest(self, bot: str = "") -> Suggestion[A]:
        """The move one of the game's bots (default: the strongest) would play for this seat."""
        response = await self.client.call(
            self.client.stub.SuggestMove, service_pb2.SuggestMoveRequest(game_id=self.game_id, bot=bot), self.metadata
        )
        cls = self.kind.action if self.kind else None
        return Suggestion(unpack(response.action, cls), response.seq)  # type: ignore[arg-type]

    async def events(self, after_seq: int = 0, limit: int = 0) -> list[Event[E]]:
        """Events with seq > `after_seq` (at most `limit`; 0: all), redacted for this credential."""
        response = await self.client.call(
            self.client.stub.ListEvents,
            service_pb2.ListEventsRequest(game_id=self.game_id, after_seq=after_seq, limit=limit),
            self.metadata,
        )
        return [_event(e, self.kind) for e in response.events]

    async def host_command(
        self, command: str, *, expected_seq: int | None = None, command_id: str | None = None
    ) -> Played[V, E]:
        """A command of the table's host (`GameType.host_commands`); needs the host token."""
        command_id = command_id or str(uuid.uuid4())
        request = service_pb2.HostCommandRequest(game_id=self.game_id, command_id=command_id, command=command)
        if expected_seq is not None:
            request.expected_seq = expected_seq
        response = await self.client.call(self.client.stub.HostCommand, request, self.metadata)
        return Played(
            [_event(e, self.kind) for e in response.events],
            _state(response.state, self.kind),
            response.replayed,
            command_id,
        )

    async def turns(self) -> AsyncIterator[Turn[A, V, E]]:
        """The loop of a one-seat bot: each time the match awaits this seat, a `Turn` with the
        seat's state and legal moves; play one with `turn.play(action)`. Between turns it
        waits on `watch()` (no polling); it ends when the match is over. A turn that was not
        played, or whose move was refused, is yielded again with the match as it then is.

            async for turn in seat.turns():
                await turn.play(turn.moves[0])
        """
        state = await self.state()
        if state.seat is None:
            raise ValueError(f"turns() needs a seat's token; {self!r} has none")
        while not state.over:
            if state.my_turn:
                moves = await self.legal_moves()
                if moves.seq == state.seq and moves.moves:
                    turn: Turn[A, V, E] = Turn(self, state, moves.moves)
                    yield turn
                    if turn.played is not None and turn.played.state.seq > state.seq:
                        state = turn.played.state
                        continue
                state = await self.state()
                continue
            async with contextlib.aclosing(self.watch(after_seq=state.seq, batches=True)) as updates:
                async for update in updates:
                    state = update.state
                    if state.my_turn or state.over:
                        break
            if not (state.my_turn or state.over):
                state = await self.state()

    async def watch(self, after_seq: int = 0, batches: bool | None = None) -> AsyncGenerator[Update[V, E], None]:
        """Every event after `after_seq` as it happens, with the state after it, until the
        match is over. A dropped stream (server restart, network) is resumed after the last
        state yielded, so nothing is missed or repeated; `Unavailable` only after
        `client.retry.attempts` failed tries in a row.

        `batches` True: the server sends everything pending for this watcher in one response
        (`WatchGameRequest.batches`), which a server with many watchers can afford at any
        rate of moves; every event is still yielded, in order, but each with the state after
        the last event of its response (enough to follow a match, not to replay it).
        False: one event per response, each with the state after it; a match the server
        already streams that way to many watchers refuses it (`ResourceExhausted`, reason
        WATCH_BATCHES_REQUIRED), and a stream whose events come faster than the server can
        write them one by one ends (WATCH_BUFFER_FULL). None (the default): one event per
        response, and batches from the next event on when the server refuses a stream or
        ends it for either reason."""
        seq = after_seq
        delays = self.client.retry.delays()
        fallback = batches is None
        batches = bool(batches)
        while True:
            call = self.client.stub.WatchGame(
                service_pb2.WatchGameRequest(game_id=self.game_id, after_seq=seq, batches=batches),
                metadata=with_game(self.metadata, self.game_id),
            )
            over = got = False
            try:
                async for response in call:
                    if response.state.seq <= seq:
                        continue
                    state = _state(response.state, self.kind)
                    events = response.events if batches else [response.event]
                    delays = self.client.retry.delays()
                    got = True
                    for event in events:
                        if event.seq > seq:
                            yield Update(_event(event, self.kind), state)
                    seq, over = state.seq, state.over
                    self.client.saw(self.game_id, seq)
            except grpc.aio.AioRpcError as exc:
                error = errors.from_rpc_error(exc)
                if fallback and not batches and error.reason in ("WATCH_BATCHES_REQUIRED", "WATCH_BUFFER_FULL"):
                    batches = True
                    continue
                delay = next(delays, None) if exc.code() in _TRANSIENT + (grpc.StatusCode.CANCELLED,) else None
                if delay is None:
                    raise error from None
                await asyncio.sleep(delay)
                continue
            finally:
                call.cancel()
            # The server ends the stream once the match is over (also when the last events
            # were ones this viewer may not see); a stream ended for any other reason (a
            # server shutting down) is resumed.
            if over or (not got and (await self.state()).over):
                return


def with_game(metadata: Sequence[tuple[str, str]], game_id: str) -> tuple[tuple[str, str], ...]:
    """`metadata` with `x-tablier-game: <game_id>` (when there is a game id and no such header
    yet): a proxy in front of several servers hashes it, so the calls about one match go to the
    server that holds it in memory. Any server answers correctly without it."""
    if not game_id or any(key == GAME_HEADER for key, _ in metadata):
        return tuple(metadata)
    return (*metadata, (GAME_HEADER, game_id))


def _seat_status(info: service_pb2.SeatInfo) -> str:
    name = service_pb2.SeatStatus.Name(info.status).removeprefix("SEAT_STATUS_").lower()
    return f"bot {info.bot}" if info.status == service_pb2.SEAT_STATUS_BOT and info.bot else name


def _kind(game: str | GameKind[Any, Any, Any]) -> GameKind[Any, Any, Any] | None:
    return games.BY_ID.get(game) if isinstance(game, str) else game


def _state(raw: service_pb2.GameState, kind: GameKind[Any, V, Any] | None) -> State[V]:
    return State(
        game_id=raw.game_id,
        game_type=raw.game_type,
        seq=raw.seq,
        role=raw.role,
        seat=raw.seat if raw.role == service_pb2.ROLE_SEAT else None,
        to_act=tuple(raw.to_act),
        over=raw.over,
        outcome=raw.outcome if raw.HasField("outcome") else None,
        view=unpack(raw.view, kind.view if kind else None),  # type: ignore[arg-type]
        seat_count=raw.seat_count,
        raw=raw,
        seats=tuple(raw.seats),
        fork=raw.fork if raw.HasField("fork") else None,
    )


def _event(raw: service_pb2.Event, kind: GameKind[Any, Any, E] | None) -> Event[E]:
    # Events every game shares (e.g. "seat_timed_out", a tablier.v1.SeatTimedOut) are not the
    # game's Event: they are unpacked as the type their URL names.
    own = kind is not None and raw.payload.type_url.rpartition("/")[2] == kind.event.DESCRIPTOR.full_name
    return Event(
        seq=raw.seq,
        type=raw.type,
        seat=raw.seat if raw.HasField("seat") else None,
        payload=unpack(raw.payload, kind.event if own and kind else None),  # type: ignore[arg-type]
        recorded_at=raw.recorded_at.ToDatetime() if raw.HasField("recorded_at") else None,
        description=raw.description,
    )


# --------------------------------------------------------------------------- connect


class connect:  # noqa: N801  (used like a function: `async with connect(...)` or `await connect(...)`)
    """A `Client` for `target` (`host:port`; `grpcs://` or `https://` asks for TLS,
    `grpc://` or `http://` for plaintext).

    `tls=None` (the default, for a bare `host:port`) uses TLS when the server offers it: a
    TLS handshake is tried first, verified against `root_certificates` (PEM) or the system's
    roots; a server that offers TLS with a certificate that does not verify is an error
    (`ssl.SSLCertVerificationError`), never a reason to fall back to plaintext. `tls=True`
    requires TLS, `tls=False` never tries it. A server that cannot be reached raises
    `errors.Unavailable` (after `retry`'s tries), here or at the first call. `token` is the
    default credential of calls that take one without a match: `create()` (the host's or
    creator's token skips the server's creation rate; a `seed` needs the auditor's);
    matches take their own."""

    def __init__(
        self,
        target: str,
        *,
        token: str | None = None,
        tls: bool | None = None,
        root_certificates: bytes | None = None,
        retry: Retry = Retry(),
        timeout: float | None = 30.0,
        probe_timeout: float = 5.0,
    ) -> None:
        scheme, sep, rest = target.partition("://")
        if sep:
            if scheme not in ("grpc", "http", "grpcs", "https"):
                raise ValueError(f"unknown scheme {scheme!r} in {target!r}")
            tls = scheme in ("grpcs", "https") if tls is None else tls
            target = rest.rstrip("/")
        self.target = target
        self.token = token
        self.tls = tls
        self.root_certificates = root_certificates
        self.retry = retry
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self._client: Client | None = None

    async def _open(self) -> Client:
        tls = self.tls
        if tls is None:
            tls = await self._probe()
        if tls:
            channel = grpc.aio.secure_channel(self.target, grpc.ssl_channel_credentials(self.root_certificates))
        else:
            channel = grpc.aio.insecure_channel(self.target)
        return Client(channel, token=self.token, retry=self.retry, timeout=self.timeout, tls=tls)

    async def _probe(self) -> bool:
        """Whether the server offers TLS, asked again after the retry policy's delays while
        nothing answers; then `errors.Unavailable`, like any call."""
        delays = self.retry.delays()
        while True:
            try:
                return await offers_tls(self.target, self.root_certificates, self.probe_timeout)
            except ssl.SSLCertVerificationError:
                raise
            except (OSError, TimeoutError) as exc:
                delay = next(delays, None)
                if delay is None:
                    raise errors.Unavailable(
                        grpc.StatusCode.UNAVAILABLE, f"cannot reach {self.target}: {exc or type(exc).__name__}"
                    ) from exc
                await asyncio.sleep(delay)

    def __await__(self) -> Generator[Any, None, Client]:
        return self._open().__await__()

    async def __aenter__(self) -> Client:
        self._client = await self._open()
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.close()


def split_host_port(target: str) -> tuple[str, int]:
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"expected host:port, got {target!r}")
    return host.strip("[]"), int(port)


async def offers_tls(target: str, root_certificates: bytes | None = None, timeout: float = 5.0) -> bool:
    """True when the server at `target` completes a verified TLS handshake, False when it
    does not speak TLS. Raises `ssl.SSLCertVerificationError` for TLS with an untrusted
    certificate, `OSError` (e.g. `ConnectionRefusedError`) or `TimeoutError` when nothing
    answers (`connect()` turns those into `errors.Unavailable`)."""
    host, port = split_host_port(target)
    context = ssl.create_default_context(cadata=root_certificates.decode() if root_certificates else None)
    context.set_alpn_protocols(["h2"])
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=context, server_hostname=host), timeout
        )
    except ssl.SSLCertVerificationError:
        raise
    except ConnectionRefusedError:
        raise
    except (ssl.SSLError, ConnectionError, EOFError):
        # A plaintext HTTP/2 server answers a ClientHello by closing the connection.
        return False
    writer.close()
    with contextlib.suppress(OSError, ssl.SSLError):
        await writer.wait_closed()
    return True
