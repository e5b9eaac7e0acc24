"""The application: one object the transports call, made of four parts a reader can take one
at a time (the eventsourcing library's `Application` beside its `Repository`):

* `repository.Repository`: the one door to the event store: `get` loads a match record and its
  state, checks the log (`integrity`) and caches them (reads); `save` appends what a command
  decided (commands); `resume` takes up a match's waits (start-up, failover);
* `commands.Commands`: create, join, a seat's move, a host command: decided by the core on the
  repository's state and saved;
* `reads.Reads`: views, events, positions, advice and the watch streams (`watch.Feeds`, which
  read new events through the repository);
* `scheduler.Scheduler`: core timers, match clocks and bot seats, armed by the states the
  repository saves or resumes, never by a read.

Its calls are plain methods, each handing over to one part, so a reader (or an editor's "go to
definition") follows a call from the transport to the store.

No gRPC types here: the API layer turns requests into these calls and the results and errors
into messages and status codes. Everything a viewer receives goes through the core's `view` /
`redact` for that viewer (`views`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from types import TracebackType
from typing import TYPE_CHECKING

from tablier.seeds import SeedUnreadable
from tablier.store.base import EventStore, StoreError
from tablier.v1.common_pb2 import GameType

from .access import Access
from .auth import ANONYMOUS, Credential
from .cache import MatchCache
from .catalogue import Catalogue
from .commands import Commands
from .errors import DataLoss, from_store
from .forks import ForkedAs, Forks
from .limits import Limiter, Limits
from .model import Created, EventOut, GameSummary, Joined, MatchState, Payload, Played
from .players import Players
from .queue import Matchmaker
from .ranked import Leaderboards, Ranked
from .reads import Reads
from .repository import Repository
from .scheduler import Scheduler
from .seats import SeatAssignment
from .watch import Feeds, WatchBatch, WatchItem

if TYPE_CHECKING:
    from tablier.receipts import SigningKeys


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
        self._store = store
        # The keys that sign the receipts of the answers that change a match
        # (`tablier.receipts.SigningKeys`, set by `tablier serve`); None: no receipts.
        self.signing: SigningKeys | None = None
        self.access = Access(operator_token, host_token, auditor_token, creator_token)
        self.limiter = Limiter(limits)
        self.catalogue = Catalogue()
        # Player accounts (`players.Players`): the store's directory; `tablier serve` sets its
        # OpenID Connect issuer.
        directory = getattr(store, "players", None)
        if directory is None:
            from tablier.store.players import MemoryPlayers

            directory = MemoryPlayers()
        self.players = Players(directory, self.limiter.limits)
        self.repository = Repository(store, self.catalogue, cache_size)
        directory.on_record = self.repository.drop_record
        self.feeds = Feeds(self.repository, pace=self.limiter.limits.watch_pace / 1000)
        self.commands = Commands(self.repository, self.access, self.limiter)
        self.reads = Reads(self.repository, self.access, self.limiter, self.feeds)
        self.scheduler = Scheduler(self.repository, self.commands)
        # Ranked play: rates each ranked match that ends (`ranked.Ranked`), and the queue.
        ratings = getattr(store, "ratings", None)
        self.ranked = Ranked(self.repository, ratings)
        self.leaderboards = Leaderboards(ratings, self.catalogue, self._player_name)
        self.queue = Matchmaker(ratings, self.commands, self.catalogue, self._player_name)
        self.forks = Forks(self.repository, self.access, self.commands)
        self._translating = _Translating(self.repository)

    async def _player_name(self, player_id: str) -> str:
        return (await self.players.get(player_id)).display_name

    @property
    def store(self) -> EventStore:
        """The event store, for the transports' health and metrics (the app reaches it only
        through the repository)."""
        return self._store

    # ----------------------------------------------------------------- commands
    # Each call: a store error leaves it as the application's (`errors.from_store`), a sealed
    # seed that does not open as DataLoss refusing the match (`_Translating`).

    async def create_game(
        self,
        game_type: str,
        seats: int,
        options: dict[str, str],
        seed: bytes = b"",
        cred: Credential = ANONYMOUS,
        assignments: list[SeatAssignment] | None = None,
        peer: str | None = None,
        ranked: bool = False,
    ) -> Created:
        with self._translating:
            return await self.commands.create_game(game_type, seats, options, seed, cred, assignments, peer, ranked)

    async def join_game(
        self, game_id: str, cred: Credential, invite_code: str = "", seat: int | None = None, join_key: str = ""
    ) -> Joined:
        with self._translating:
            return await self.commands.join_game(game_id, cred, invite_code, seat, join_key)

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
        with self._translating:
            return await self.forks.fork_game(parent_game_id, at_seq, forked_as, cred, assignments, options, peer)

    async def play(
        self, game_id: str, cred: Credential, command_id: str, action: Payload | None, expected_seq: int | None = None
    ) -> Played:
        with self._translating:
            return await self.commands.play(game_id, cred, command_id, action, expected_seq)

    async def host_command(
        self, game_id: str, cred: Credential, command_id: str, command: str, expected_seq: int | None = None
    ) -> Played:
        with self._translating:
            return await self.commands.host_command(game_id, cred, command_id, command, expected_seq)

    async def resign(self, game_id: str, cred: Credential, command_id: str) -> Played:
        with self._translating:
            return await self.commands.seat_command(game_id, cred, command_id, "resign")

    async def leave(self, game_id: str, cred: Credential, command_id: str) -> Played:
        with self._translating:
            return await self.commands.seat_command(game_id, cred, command_id, "leave")

    # ----------------------------------------------------------------- reads

    async def get_view(
        self, game_id: str, cred: Credential, at_seq: int | None = None, min_seq: int | None = None
    ) -> MatchState:
        with self._translating:
            return await self.reads.get_view(game_id, cred, at_seq, min_seq)

    async def get_position(
        self,
        game_id: str,
        cred: Credential,
        at_seq: int | None = None,
        seat: int | None = None,
        min_seq: int | None = None,
    ) -> tuple[MatchState, Payload, int, list[tuple[Payload, str]]]:
        with self._translating:
            return await self.reads.get_position(game_id, cred, at_seq, seat, min_seq)

    async def legal_moves(
        self, game_id: str, cred: Credential, min_seq: int | None = None
    ) -> tuple[int, list[tuple[Payload, str]]]:
        with self._translating:
            return await self.reads.legal_moves(game_id, cred, min_seq)

    async def list_events(
        self, game_id: str, cred: Credential, after_seq: int = 0, limit: int = 0, min_seq: int | None = None
    ) -> tuple[list[EventOut], int]:
        with self._translating:
            return await self.reads.list_events(game_id, cred, after_seq, limit, min_seq)

    async def list_games(
        self,
        game_type: str = "",
        page_size: int = 0,
        page_token: str = "",
        player_id: str | None = None,
        parent_game_id: str = "",
    ) -> tuple[list[GameSummary], str]:
        with self._translating:
            return await self.reads.list_games(game_type, page_size, page_token, player_id, parent_game_id)

    async def suggest(
        self, game_id: str, cred: Credential, bot: str = "", min_seq: int | None = None
    ) -> tuple[Payload, int]:
        with self._translating:
            return await self.reads.suggest(game_id, cred, bot, min_seq)

    async def evaluate(self, game_type: str, position: Payload | None, rollouts: bytes | None = None) -> Payload:
        with self._translating:
            return await self.reads.evaluate(game_type, position, rollouts)

    async def watch_batches(
        self, game_id: str, cred: Credential, after_seq: int = 0, peer: str | None = None, batched: bool = True
    ) -> AsyncGenerator[WatchBatch, None]:
        with self._translating:
            async with contextlib.aclosing(
                self.reads.watch_batches(game_id, cred, after_seq, peer, batched)
            ) as batches:
                async for batch in batches:
                    yield batch

    async def watch(
        self, game_id: str, cred: Credential, after_seq: int = 0, peer: str | None = None
    ) -> AsyncGenerator[WatchItem, None]:
        with self._translating:
            async with contextlib.aclosing(self.reads.watch(game_id, cred, after_seq, peer)) as items:
                async for item in items:
                    yield item

    # ----------------------------------------------------------------- the server

    def resume(self) -> None:
        """A starting server resumes every match that may await it (clocks, core timers, bot
        seats: `Repository.resume_all`), in the background."""
        self.scheduler.resume()
        self.ranked.resume()
        self.queue.resume()

    def start_clocks(self) -> None:
        """`resume` (the name the transports' server calls)."""
        self.resume()

    @property
    def cache(self) -> MatchCache:
        return self.repository.cache

    @property
    def damaged(self) -> dict[str, DataLoss]:
        """Matches refused (DATA_LOSS) until restart."""
        return self.repository.damaged

    @property
    def integrity_failures(self) -> int:
        return self.repository.integrity_failures

    async def close(self) -> None:
        """Stops the running timers and bot seats (their waits resume when a server loads the
        match again) and ends the watch feeds."""
        await self.feeds.close()
        await self.scheduler.close()
        await self.ranked.close()
        await self.queue.close()
        await self.repository.close()

    def end_watches(self) -> None:
        """Ends every watch stream with UNAVAILABLE (SHUTTING_DOWN): the server is stopping."""
        self.feeds.end_all()

    def game_types(self) -> list[GameType]:
        return self.catalogue.all()


class _Translating:
    """Around each call of `GameApp`: a store error leaves it as the application's
    (`errors.from_store`), and a sealed seed that does not open, whichever read met it, as
    DataLoss refusing the match (`Repository.unreadable_seed`). A plain context manager: one
    per app, nothing allocated per call."""

    __slots__ = ("_repo",)

    def __init__(self, repo: Repository) -> None:
        self._repo = repo

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if isinstance(exc, StoreError):
            raise from_store(exc) from exc
        if isinstance(exc, SeedUnreadable):
            self._repo.unreadable_seed(exc)
