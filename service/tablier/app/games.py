"""The application: one object the transports call, made of four parts a reader can take one
at a time (the eventsourcing library's `Application` beside its `Repository`):

* `repository.Repository`: loads a match record and its state from the event store, checks the
  log (`integrity`), and keeps the cache, the snapshots and the verified chain heads;
* `commands.Commands`: create, join, a seat's move, a host command: decided by the core on the
  repository's state and appended to the log;
* `reads.Reads`: views, events, positions, advice and the watch streams (`watch.Feeds`, which
  read new events through the repository);
* `scheduler.Scheduler`: core timers, match clocks and bot seats, armed by the states the
  repository loads or commits, never by a read.

No gRPC types here: the API layer turns requests into these calls and the results and errors
into messages and status codes. Everything a viewer receives goes through the core's `view` /
`redact` for that viewer (`views`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from tablier.seeds import SeedUnreadable
from tablier.store.base import EventStore, StoreError
from tablier.v1.common_pb2 import GameType

from .access import Access
from .cache import MatchCache
from .catalogue import Catalogue
from .commands import Commands
from .errors import DataLoss, from_store
from .limits import Limiter, Limits
from .reads import Reads
from .repository import Repository
from .scheduler import Scheduler
from .watch import Feeds

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
        self.store = store
        # The keys that sign the receipts of the answers that change a match
        # (`tablier.receipts.SigningKeys`, set by `tablier serve`); None: no receipts.
        self.signing: SigningKeys | None = None
        self.access = Access(operator_token, host_token, auditor_token, creator_token)
        self.limiter = Limiter(limits)
        self.catalogue = Catalogue()
        self.repository = Repository(store, self.catalogue, cache_size)
        self.feeds = Feeds(self.repository, pace=self.limiter.limits.watch_pace / 1000)
        self.commands = Commands(self.repository, self.access, self.limiter)
        self.reads = Reads(self.repository, self.access, self.limiter, self.feeds)
        self.scheduler = Scheduler(self.repository, self.commands)
        # The calls, as the transports make them; a store error leaves them as an AppError.
        self.create_game = _translated(self.commands.create_game, self.repository)
        self.join_game = _translated(self.commands.join_game, self.repository)
        self.play = _translated(self.commands.play, self.repository)
        self.host_command = _translated(self.commands.host_command, self.repository)
        self.get_view = _translated(self.reads.get_view, self.repository)
        self.get_position = _translated(self.reads.get_position, self.repository)
        self.legal_moves = _translated(self.reads.legal_moves, self.repository)
        self.list_events = _translated(self.reads.list_events, self.repository)
        self.list_games = _translated(self.reads.list_games, self.repository)
        self.watch_batches = _translated_stream(self.reads.watch_batches, self.repository)
        self.watch = _translated_stream(self.reads.watch, self.repository)
        self.suggest = _translated(self.reads.suggest, self.repository)
        self.evaluate = _translated(self.reads.evaluate, self.repository)
        self.start_clocks = self.scheduler.start_clocks

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
        await self.repository.close()

    def end_watches(self) -> None:
        """Ends every watch stream with UNAVAILABLE (SHUTTING_DOWN): the server is stopping."""
        self.feeds.end_all()

    def game_types(self) -> list[GameType]:
        return self.catalogue.all()


P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def _translated(call: Callable[P, Awaitable[R]], repo: Repository) -> Callable[P, Awaitable[R]]:
    """`call`, whose store errors are raised as the application's (`errors.from_store`), and a
    sealed seed that does not open, whichever read met it, as DataLoss refusing the match
    (`Repository.unreadable_seed`)."""

    @functools.wraps(call)
    async def translating(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await call(*args, **kwargs)
        except StoreError as exc:
            raise from_store(exc) from exc
        except SeedUnreadable as exc:
            repo.unreadable_seed(exc)

    return translating


def _translated_stream(
    call: Callable[P, AsyncGenerator[T, None]], repo: Repository
) -> Callable[P, AsyncGenerator[T, None]]:
    """`_translated` for a stream (closed with its consumer's `aclose`)."""

    @functools.wraps(call)
    async def translating(*args: P.args, **kwargs: P.kwargs) -> AsyncGenerator[T, None]:
        try:
            async with contextlib.aclosing(call(*args, **kwargs)) as items:
                async for item in items:
                    yield item
        except StoreError as exc:
            raise from_store(exc) from exc
        except SeedUnreadable as exc:
            repo.unreadable_seed(exc)

    return translating
