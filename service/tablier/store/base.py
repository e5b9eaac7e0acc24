"""The event store interface, shared by the PostgreSQL store and the in-memory store.

Events are append-only. A match is a `GameRecord` plus its events at seq 1, 2, ...; its state is
whatever replaying the events gives. Each event row carries the hash of the state after it and a
hash chained to the previous event, so an auditor can check the log without trusting the server.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

# The integrity formulas (the chain, state hashes, salts, the seed commitment) are
# `tablier.integrity`'s; the stores chain what they append with them.
from tablier.integrity import HASH_SCHEME as HASH_SCHEME
from tablier.integrity import chain_hash as chain_hash
from tablier.integrity import genesis_hash as genesis_hash
from tablier.integrity import seed_commitment as seed_commitment
from tablier.integrity import state_salt as state_salt
from tablier.integrity import stored_state_hash as stored_state_hash

if TYPE_CHECKING:
    from tablier.store.players import PlayerDirectory


class StoreError(Exception):
    """Base class of store errors."""


class StoreUnavailable(StoreError):
    """The database cannot be reached now (down, restarting, no connection within the
    store's bound). Nothing is known to have been written: retry."""


class SeqConflict(StoreError):
    """Another command appended at this seq first (lost race): retry against the new state."""


class ChainBroken(StoreError):
    """The event an append continues is no longer in the log as it was (the log was cut or
    changed under the appender): nothing was written."""


class UnknownGame(StoreError):
    """No match with this id."""


class DuplicateGame(StoreError):
    """A match with this id exists already."""


@dataclass(frozen=True)
class GameRecord:
    game_id: str
    game_type: str
    seats: int
    options: dict[str, str]
    # 32-byte secret seed: every random outcome of the match derives from it and the seq.
    seed: bytes
    # SHA-256 of each seat's token, in seat order; b"" while nobody holds the seat (an open or
    # invited seat not yet joined, a bot seat).
    token_hashes: tuple[bytes, ...]
    created_at: datetime | None = None
    # 1: matches created before seed commitments (plain state hashes, genesis without the
    # commitment); 2: salted state hashes and the seed commitment in the genesis hash.
    hash_scheme: int = 1
    # Per seat, SHA-256 of its invite code (b"": not an invited seat); () when no seat is.
    invite_hashes: tuple[bytes, ...] = ()
    # Per seat, the bot the server plays it with ("": none); () when no seat is a bot's.
    bots: tuple[str, ...] = ()
    # Created with a clock (options clock_*): listed by `running_clocks` until `clock_stopped`.
    # Set at creation only; a record read back does not say.
    clocked: bool = False
    # Per seat, the id of the player bound to it (None: an anonymous or bot seat); () when no
    # seat is bound (`store.players`).
    seat_players: tuple[str | None, ...] = ()
    # Created ranked (CreateGameRequest.ranked): rated when it ends (`app.ranked`).
    ranked: bool = False
    # A fork (ForkGame): the match it was forked from, the parent's seq it starts from, the
    # parent's chain hash there (the fork's genesis covers all three) and whose knowledge it
    # starts from ("seat:<n>" or "auditor"); None for a match that is not a fork.
    parent_game_id: str | None = None
    parent_seq: int | None = None
    parent_head: bytes | None = None
    fork_as: str | None = None

    def bot(self, seat: int) -> str:
        """The bot that plays `seat`, or "" when a person does."""
        return self.bots[seat] if seat < len(self.bots) else ""

    def player(self, seat: int) -> str | None:
        """The player bound to `seat`, or None."""
        return self.seat_players[seat] if seat < len(self.seat_players) else None

    def seats_of(self, player_id: str) -> list[int]:
        """The seats bound to a player, in seat order."""
        return [s for s, p in enumerate(self.seat_players) if p == player_id]

    def vacant(self, seat: int) -> bool:
        """Nobody holds the seat yet and no bot plays it: JoinGame may fill it."""
        return not self.token_hashes[seat] and not self.bot(seat)


@dataclass(frozen=True)
class NewEvent:
    """An event to append, as decided by the core."""

    kind: str
    payload: bytes
    seat: int | None
    core_version: str
    state_hash: bytes


@dataclass(frozen=True)
class StoredEvent:
    game_id: str
    seq: int
    kind: str
    payload: bytes
    seat: int | None
    command_id: str | None
    core_version: str
    state_hash: bytes
    chain_hash: bytes
    recorded_at: datetime | None = field(default=None, compare=False)
    # What the command that wrote the event asked, as its `commands` row keeps it (None: no
    # command, or no row): under integrity scheme 3 the chain hash covers its digest.
    command: CommandInput | None = field(default=None, compare=False)


def recorded(event: StoredEvent, at: datetime | None) -> StoredEvent:
    """`event` with its recorded time: `dataclasses.replace(event, recorded_at=at)` at half
    its cost (asked for every event of every append)."""
    return StoredEvent(
        event.game_id,
        event.seq,
        event.kind,
        event.payload,
        event.seat,
        event.command_id,
        event.core_version,
        event.state_hash,
        event.chain_hash,
        at,
        event.command,
    )


class Appended(list[StoredEvent]):
    """What `append` returns: the events of the command, in seq order. `written` is True when
    this call wrote them, False when the command id was used before in the match and these
    are the events that command wrote then (a retry, or the same command racing itself)."""

    def __init__(self, events: list[StoredEvent], written: bool) -> None:
        super().__init__(events)
        self.written = written


@dataclass(frozen=True)
class CommandInput:
    """What a command asked, kept so that an auditor can decide it again from the seed: a
    seat's action (protobuf bytes), or a host command (no seat)."""

    seat: int | None = None
    action: bytes | None = None
    host_command: str | None = None


@dataclass(frozen=True)
class StoredCommand:
    command_id: str
    first_seq: int
    last_seq: int
    # None for a command stored before inputs were kept (schema version 1).
    input: CommandInput | None


class EventLog(Protocol):
    """The events of each match: appended at an expected seq, never changed."""

    async def append(
        self,
        game_id: str,
        expected_seq: int,
        events: list[NewEvent],
        command_id: str | None,
        command: CommandInput | None = None,
        chained: bytes = b"",
    ) -> Appended:
        """Appends events at expected_seq+1.. in one transaction, all carrying command_id;
        `command`, what the command asked, is kept with it. `chained`: what each event's chain
        hash covers of the command's input (`integrity.chained_input`: its digest under scheme
        3, empty before).

        Raises SeqConflict when the match is no longer at expected_seq, UnknownGame. When
        command_id was already used in this match, nothing is written and the events that
        command wrote the first time are returned instead, with `written` False. Exactly one
        of several calls with one command id (at any seqs, from any process) returns
        `written` True."""

    async def command_events(self, game_id: str, command_id: str) -> list[StoredEvent] | None:
        """The events a command wrote, or None if the command id is new for this match."""

    async def commands(self, game_id: str) -> list[StoredCommand]:
        """Every command of the match in seq order, with what it asked. Raises UnknownGame."""

    async def load_events(self, game_id: str, after_seq: int = 0, upto_seq: int | None = None) -> list[StoredEvent]:
        """Events with after_seq < seq <= upto_seq, in seq order. Raises UnknownGame."""

    async def last_seq(self, game_id: str) -> int:
        """Raises UnknownGame."""

    def watch(self, game_id: str, known: Callable[[], int | None] | None = None) -> AsyncGenerator[int, None]:
        """Yields the latest seq of the match whenever events are appended to it (by this
        process or, for PostgreSQL, by any process on the same database). Yields the current
        last seq first, so a caller cannot miss an append between reading and watching.
        `known()`, asked once the watch hears every later append, may give that first seq
        without a read of the store: a seq the caller holds and `current` still says is the
        latest (None: the store is read)."""

    def mark(self) -> tuple[int, int] | None:
        """A mark to take before reading a match (or appending to it), for `current`; None
        when this store cannot tell (no feed of appends, or it is down)."""

    def current(self, game_id: str, seq: int, mark: tuple[int, int] | None) -> bool:
        """Whether the match's state at `seq`, read (or written) after `mark` was taken, is
        still its latest as far as this store's feed of appends tells, without reading the
        log (`feed.NoteFeed`). False when it cannot tell: read the log."""


class MatchDirectory(Protocol):
    """The match records, and the seat claims that fill their vacant seats."""

    async def create_game(self, game: GameRecord, events: list[NewEvent]) -> list[StoredEvent]:
        """Stores the match and its opening events (seq 1..n) in one transaction.
        Raises DuplicateGame."""

    async def get_game(self, game_id: str) -> GameRecord:
        """Raises UnknownGame."""

    async def claim_seat(
        self, game_id: str, seat: int, token_hash: bytes, player_id: str | None = None
    ) -> GameRecord | None:
        """Gives the vacant `seat` (`GameRecord.vacant`) the holder whose token hashes to
        `token_hash` (bound to `player_id` when given), atomically: of several claims of one seat exactly one succeeds, whichever
        store instance each goes through. Returns the record with the seat held, or None when
        the seat is not vacant (held already, a bot's, or no such seat). The same claim again
        (same seat and hash) returns the record again, so a retry is safe. Raises UnknownGame."""

    async def list_games(self) -> list[str]:
        """Ids of every stored match, oldest first."""

    async def game_page(
        self,
        limit: int,
        game_type: str | None = None,
        before: tuple[datetime, str] | None = None,
        player_id: str | None = None,
        parent: str | None = None,
    ) -> list[GameRecord]:
        """Up to `limit` match records, newest first (by created_at, then game_id), of
        `game_type` when given, with a seat bound to `player_id` when given, forks of match
        `parent` only when given, strictly older than `before` (created_at, game_id) when
        given, in one query: a lobby's page. The records hold no seed (b"")."""


class ClockIndex(Protocol):
    """Which matches have a clock still running (a starting server arms them at once)."""

    async def running_clocks(self) -> list[str]:
        """Ids of the matches created with a clock (`GameRecord.clocked`) that were not said to
        be over with `clock_stopped`, in one query."""

    async def clock_stopped(self, game_id: str) -> None:
        """The match is over: `running_clocks` no longer lists it."""


class EventStore(EventLog, MatchDirectory, ClockIndex, Protocol):
    """The store a server runs on: the three ports above, over one database, and its player
    directory (`players.PlayerDirectory`)."""

    @property
    def players(self) -> PlayerDirectory: ...

    async def close(self) -> None: ...
