"""The matchmaking queue (docs/api.md "Ranked play"): players wait for a ranked match of a game
type and seat count; any server sharing the database makes matches of them.

A ticket is a row of `match_queue` (`store.ratings`). Each server with players waiting on it
runs one loop (`Matchmaker._run`) that, every `tick` seconds, takes the waiting tickets no
other server holds (FOR UPDATE SKIP LOCKED), groups them and, in that same transaction, writes
each match it will make (a `queue_matches` row: its game id, who sits where) and marks the
tickets with its game id; then creates those matches under their game ids (ranked, the game's
default options, each seat bound to its player) and deletes each plan once its match exists;
then tells its own waiting players whose matches exist, made by any server. A server that
stopped between the two steps leaves plans behind: any server creates their matches (at its
start, `resume`, and at each step, those a few seconds old), once whichever servers try (the
game id is the match's key). So no ticket is told a match that does not exist, and no match
is made of tickets another server took.

Grouping: the oldest ticket first; its window of ratings is `window` points either side,
widened by `widen` points a second waited; the players of its window nearest its rating fill
the match. After `bot_after` seconds a server bot fills each seat still empty: the bot kind
whose rating is nearest the player's.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from tablier.store.base import DuplicateGame
from tablier.store.players import NAMES
from tablier.store.ratings import PgRatings, Plan, Ticket

from .auth import Credential
from .catalogue import Catalogue
from .commands import Commands
from .errors import AlreadyExists, BadRequest, Unauthenticated, Unavailable
from .ranked import bot_subject, player_subject

log = logging.getLogger(__name__)

# Matches created (and players told) at once by one server's step.
CREATING = 16
# Seconds after which a plan whose match does not exist yet is made by any server's step (its
# server stopped between the two steps); a starting server makes every such plan at once.
RECOVER_AFTER = 5.0


@dataclass(frozen=True)
class QueueSettings:
    # Seconds after which a server bot fills the seats still empty.
    bot_after: float = 30.0
    # Rating points either side at first, and added per second waited.
    window: int = 100
    widen: float = 10.0
    # Seconds between two looks at the queue.
    tick: float = 0.25
    # Seconds between two status messages to a waiting player.
    status_every: float = 1.0


@dataclass(frozen=True)
class Waiting:
    ticket: str
    waited: float
    rating: int
    window: int
    queued: int
    message: str


@dataclass(frozen=True)
class Matched:
    game_id: str
    seat: int
    message: str


def thousands(n: int) -> str:
    return f"{n:,}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class Matchmaker:
    def __init__(
        self,
        store: PgRatings | None,
        commands: Commands,
        catalogue: Catalogue,
        name_of: Callable[[str], Awaitable[str]],
        settings: QueueSettings | None = None,
    ) -> None:
        self.ratings = store
        self.commands = commands
        self.catalogue = catalogue
        self.name_of = name_of
        self.settings = settings or QueueSettings()
        # Tickets of the players waiting on this server: ticket -> (its record, the future of its match).
        self._local: dict[str, tuple[Ticket, asyncio.Future[Matched]]] = {}
        self._loop: asyncio.Task[None] | None = None
        self._recovering: asyncio.Task[int] | None = None
        self.matches_made = 0
        # Tickets waiting per (game type, seats), as the last step counted them (all servers').
        self._queued: dict[tuple[str, int], int] = {}

    def window(self, waited: float) -> int:
        return int(self.settings.window + self.settings.widen * waited)

    async def find(self, cred: Credential, game_type: str, seats: int) -> AsyncGenerator[Waiting | Matched, None]:
        """Queues the caller's player; yields its status while it waits, then its match. Leaving
        (closing the generator) before that removes the ticket."""
        if cred.player_id is None:
            raise Unauthenticated(
                "FindMatch needs 'authorization: Bearer <player credential>' (PlayerService.CreateGuestPlayer)",
                "PLAYER_CREDENTIAL_REQUIRED",
            )
        if self.ratings is None:
            raise Unavailable("ranked play needs PostgreSQL (this server has the memory store)", "NO_RANKED_STORE")
        info = self.catalogue.get(game_type)
        if not info.min_players <= seats <= info.max_players:
            raise BadRequest(
                f"{info.id} takes {info.min_players} to {info.max_players} seats, not {seats}", "BAD_SEATS"
            )
        rows = await self.ratings.ratings(game_type, [player_subject(cred.player_id)])
        rating = rows[0].rating if rows else 1500
        ticket = str(uuid.uuid4())
        if not await self.ratings.enqueue(ticket, cred.player_id, game_type, seats, rating):
            raise AlreadyExists("this player is in the queue already (CancelFind leaves it)", "ALREADY_QUEUED")
        record = Ticket(ticket, cred.player_id, game_type, seats, rating, datetime.now(UTC))
        future: asyncio.Future[Matched] = asyncio.get_running_loop().create_future()
        self._local[ticket] = (record, future)
        self._ensure_loop()
        started = asyncio.get_running_loop().time()
        done = False
        try:
            while True:
                waited = asyncio.get_running_loop().time() - started
                queued = max(self._queued.get((game_type, seats), 0), 1)
                yield self._status(record, waited, queued)
                await asyncio.wait([future], timeout=self.settings.status_every)
                if future.cancelled():
                    return  # CancelFind
                if future.done():
                    done = True
                    yield future.result()
                    return
        finally:
            self._local.pop(ticket, None)
            if not done:
                with contextlib.suppress(Exception):
                    await self.ratings.cancel(ticket)

    def _status(self, t: Ticket, waited: float, queued: int) -> Waiting:
        window = self.window(waited)
        others = t.seats - 1
        low, high = thousands(t.rating - window), thousands(t.rating + window)
        if waited >= self.settings.bot_after:
            message = (
                f"No player near your rating after {int(waited)} s: "
                f"a bot of near rating takes {'the empty seat' if others == 1 else 'the empty seats'}"
            )
        else:
            message = f"Looking for {plural(others, 'player')} rated {low} to {high} ({int(waited)} s)"
        return Waiting(t.ticket, waited, t.rating, window, queued, message)

    async def cancel(self, cred: Credential, ticket: str) -> bool:
        if cred.player_id is None:
            raise Unauthenticated("CancelFind needs the player credential that queued", "PLAYER_CREDENTIAL_REQUIRED")
        if self.ratings is None:
            return False
        try:
            uuid.UUID(ticket)
        except ValueError:
            raise BadRequest("a ticket is a UUID (FindMatch's QueueStatus.ticket)", "BAD_TICKET") from None
        cancelled = await self.ratings.cancel(ticket, cred.player_id)
        local = self._local.get(ticket)
        if cancelled and local is not None:
            local[1].cancel()
        return cancelled

    # ----------------------------------------------------------------- the loop

    def _ensure_loop(self) -> None:
        if self._loop is None or self._loop.done():
            self._loop = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self._local:
            try:
                await self.step()
            except Exception:
                log.exception("the matchmaking queue's step failed (tried again)")
            await asyncio.sleep(self.settings.tick)

    async def step(self) -> int:
        """One look at the queue: matches made of every waiting kind, then this server's
        players told of theirs. Returns the matches made here."""
        assert self.ratings is not None
        made = 0
        await self.ratings.renew(list(self._local))
        self._queued = await self.ratings.queued()
        for game_type, seats in list(self._queued):
            plans = await self.ratings.take(game_type, seats, functools.partial(self._group, game_type, seats))
            made += await self._make(plans)
        made += await self.recover(RECOVER_AFTER)
        self.matches_made += made
        mine = list(self._local)
        if mine:
            rows = await self.ratings.tickets(mine)
            present = {t.ticket for t in rows}
            for ticket in mine:
                local = self._local.get(ticket)
                if ticket not in present and local is not None and not local[1].done():
                    local[1].cancel()  # cancelled through another server (CancelFind)
            matched = [t for t in rows if t.game_id is not None and t.seat is not None]
            gate = asyncio.Semaphore(CREATING)
            by_game: dict[str, list[Ticket]] = {}
            for t in matched:
                by_game.setdefault(str(t.game_id), []).append(t)

            async def tell(game_id: str, tickets: list[Ticket]) -> list[str]:
                async with gate:
                    labels = await self._labels(game_id)
                out = []
                for t in tickets:
                    local = self._local.get(t.ticket)
                    if local is None or local[1].done() or t.seat is None:
                        continue
                    local[1].set_result(Matched(game_id, t.seat, self._words(labels, t.seat)))
                    out.append(t.ticket)
                return out

            told = [x for xs in await asyncio.gather(*(tell(g, ts) for g, ts in by_game.items())) for x in xs]
            if told:
                await self.ratings.forget(told)
        return made

    async def _labels(self, game_id: str) -> list[str]:
        """Per seat of a match the queue made: who sits there and its rating ("Alice (1,512)")."""
        assert self.ratings is not None
        game = await self.commands.repo.game(game_id)
        subjects = [player_subject(p) if (p := game.player(s)) else bot_subject(game.bot(s)) for s in range(game.seats)]
        rows = {r.subject: r.rating for r in await self.ratings.ratings(game.game_type, subjects)}
        labels = []
        for seat, subject in enumerate(subjects):
            player = game.player(seat)
            known = NAMES.get(player) if player else None
            name = (known[0] if known else await self.name_of(player)) if player else f"bot {game.bot(seat)}"
            labels.append(f"{name} ({thousands(rows.get(subject, 1500))})")
        return labels

    @staticmethod
    def _words(labels: list[str], seat: int) -> str:
        others = [label for s, label in enumerate(labels) if s != seat]
        return f"Matched with {' and '.join(others)}: you play seat {seat + 1}"

    async def _make(self, plans: list[Plan]) -> int:
        """Creates the planned matches under their game ids, a few at a time, and deletes each
        plan once its match exists (made here or, already, by another server). A match not
        created stays planned, made again later. Returns the matches created here."""
        ratings = self.ratings
        assert ratings is not None
        gate = asyncio.Semaphore(CREATING)

        async def make(plan: Plan) -> bool:
            async with gate:
                here = True
                try:
                    await self.commands.create_matched(
                        plan.game_type, list(plan.players), list(plan.bots), plan.game_id
                    )
                except DuplicateGame:
                    here = False  # made by another server (a plan recovered twice at once)
                except Exception:
                    log.exception("the queue could not create match %s (made again later)", plan.game_id)
                    return False
                await ratings.made(plan.game_id)
                return here

        return sum(await asyncio.gather(*(make(p) for p in plans)))

    async def recover(self, older_than: float = 0.0) -> int:
        """Makes the matches planned more than `older_than` seconds ago that do not exist yet
        (their server stopped between the two steps). Returns how many it made."""
        if self.ratings is None:
            return 0
        return await self._make(await self.ratings.planned(older_than))

    def resume(self) -> None:
        """A starting server makes every match left planned, in the background."""
        if self.ratings is not None and self._recovering is None:
            self._recovering = asyncio.get_running_loop().create_task(self._recover_logged())

    async def _recover_logged(self) -> int:
        try:
            return await self.recover()
        except Exception:
            log.exception("could not make the matches the queue left planned")
            return 0

    async def _group(self, game_type: str, seats: int, found: list[Ticket]) -> list[Plan]:
        """Plans matches of the waiting tickets `found` (their game ids chosen here): the oldest
        ticket first, with the nearest ratings in its window, bots after the bot wait."""
        now = datetime.now(UTC)
        free = sorted(found, key=lambda t: t.enqueued_at)
        bots: dict[str, int] | None = None
        taken: set[str] = set()
        plans: list[Plan] = []
        for first in free:
            if first.ticket in taken:
                continue
            waited = (now - first.enqueued_at).total_seconds()
            window = self.window(waited)
            near = sorted(
                (
                    t
                    for t in free
                    if t.ticket not in taken and t is not first and abs(t.rating - first.rating) <= window
                ),
                key=lambda t: (abs(t.rating - first.rating), t.enqueued_at),
            )[: seats - 1]
            group = [first, *near]
            fill = seats - len(group)
            if fill and waited < self.settings.bot_after:
                continue
            players: list[str | None] = [t.player_id for t in group] + [None] * fill
            names = [""] * len(group)
            if fill:
                if bots is None:
                    bots = await self._bot_ratings(game_type)
                if not bots:
                    continue
                kind = min(bots, key=lambda b: (abs(bots[b] - first.rating) if bots else 0, b))
                names += [kind] * fill
            taken.update(t.ticket for t in group)
            seated = tuple((t.ticket, seat) for seat, t in enumerate(group))
            plans.append(Plan(str(uuid.uuid4()), game_type, tuple(players), tuple(names), seated))
        return plans

    async def _bot_ratings(self, game_type: str) -> dict[str, int]:
        assert self.ratings is not None
        kinds = list(self.catalogue.get(game_type).bots)
        rows = {r.subject: r.rating for r in await self.ratings.ratings(game_type, [bot_subject(b) for b in kinds])}
        return {b: rows.get(bot_subject(b), 1500) for b in kinds}

    async def close(self) -> None:
        for _, future in self._local.values():
            future.cancel()
        tasks = [t for t in (self._loop, self._recovering) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
