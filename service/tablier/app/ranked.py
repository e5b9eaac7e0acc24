"""Ranked play: ratings as a projection of a log (docs/design/players-ratings-forks-shards.md,
"Ranked play").

When a ranked match ends, the rater (`Ranked`, which hears every state the repository saves or
resumes) appends one `tablier.v1.RatingEvent` to its game type's rating stream: the placements,
each subject's rating before and after, the model (openskill's Plackett-Luce), its version and
parameters. The event and the projection rows it changes are written together
(`store.ratings.PgRatings.append`); the stream's `game_id` is unique, so a match is rated once
whichever servers try, and a server that stopped between the match's end and its rating event
rates it when it starts (`resume`).

`rate_event` is the one computation: the rater runs it on the live projection, and
`rebuild` runs it again over the whole stream (with each event's own parameters) and compares
every byte, the chain and the projection's rows.

What is rated: a match created ranked (its options the game's defaults, checked at creation),
every seat a signed-in player or a server bot, ended by the rules (an outcome not `aborted`).
Placements come from the outcome: winners first, then by score (lower first when the game
counts penalty points); equal scores share a placement; a seat that timed out or resigned (a
`seat_timed_out` or `seat_resigned` event: a forfeit) is placed last.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version as dist_version
from typing import Any

from openskill.models import PlackettLuce

from tablier._core import Match
from tablier.integrity import chain_hash, rating_genesis
from tablier.store.base import GameRecord
from tablier.store.ratings import PgRatings, RatingRow, StoredRating
from tablier.v1.common_pb2 import Outcome, SeatResigned, SeatTimedOut
from tablier.v1.ranked_pb2 import RatingChange, RatingEvent

from .catalogue import Catalogue
from .errors import AppError, BadRequest, Unavailable
from .repository import Repository

log = logging.getLogger(__name__)

MODEL = "openskill.PlackettLuce"
MODEL_VERSION = dist_version("openskill")
# The parameters a rating event records, each as Python's repr of its value (floats read back
# exactly), and the model's gamma as its formula (GAMMAS).
PARAMETERS = ("mu", "sigma", "beta", "kappa", "tau", "limit_sigma", "balance", "margin", "weight_bounds")


def sigma_over_c(
    c: float, k: int, mu: float, sigma_squared: float, team: Sequence[Any], rank: int, weights: Any = None
) -> float:
    """Plackett-Luce's gamma as openskill defines it by default: sqrt(sigma²) / c."""
    return math.sqrt(sigma_squared) / c


# The gamma functions a rating event may name (its parameter `gamma`, the formula in the words
# of openskill's signature), so an event states its whole model and is read back exactly. An
# event recorded without one used openskill's default, this same formula.
GAMMA = "sqrt(sigma_squared) / c"
GAMMAS: dict[str, Callable[..., float]] = {GAMMA: sigma_over_c}
EVENT_KIND = "rating"


def shown(mu: float, sigma: float) -> int:
    """The rating shown: 1500 + 40 × (mu − 3 sigma), rounded (1500 for a new subject)."""
    return round(1500 + 40 * (mu - 3 * sigma))


def model_parameters(model: PlackettLuce | None = None) -> dict[str, str]:
    """The parameters of the model a server rates with (openskill's defaults, GAMMA its gamma)."""
    model = model or PlackettLuce(gamma=sigma_over_c)
    return {name: repr(getattr(model, name)) for name in PARAMETERS} | {"gamma": GAMMA}


def make_model(parameters: dict[str, str]) -> PlackettLuce:
    """The model with exactly these recorded parameters (gamma: GAMMA when not recorded)."""
    values: dict[str, Any] = {name: ast.literal_eval(parameters[name]) for name in PARAMETERS}
    formula = parameters.get("gamma", GAMMA)
    if formula not in GAMMAS:
        raise ValueError(f"a rating event names a gamma this server does not know: {formula!r}")
    return PlackettLuce(**values, gamma=GAMMAS[formula])


def player_subject(player_id: str) -> str:
    return f"player:{player_id}"


def bot_subject(bot: str) -> str:
    return f"bot:{bot}"


def subjects_of(game: GameRecord) -> list[str] | None:
    """Per seat, its subject; None when a seat is neither a signed-in player nor a bot. A seat
    whose player resigned and handed it to the server's bot stays its player's: the player is
    rated (last), not the bot that finished the match."""
    out = []
    for seat in range(game.seats):
        if game.player(seat):
            out.append(player_subject(str(game.player(seat))))
        elif game.bot(seat):
            out.append(bot_subject(game.bot(seat)))
        else:
            return None
    return out


def placements(outcome: Outcome, seats: int, timed_out: set[int]) -> list[int]:
    """Per seat, its placement from 1 (competition ranking: equals share, the next skips)."""
    sign = 1 if outcome.lower_is_better else -1
    scores = list(outcome.scores) + [0] * (seats - len(outcome.scores))
    winners = set(outcome.winners)

    def key(s: int) -> tuple[int, int, int]:
        return (1 if s in timed_out else 0, 0 if s in winners else 1, sign * scores[s])

    keys = [key(s) for s in range(seats)]
    return [1 + sum(1 for other in keys if other < keys[s]) for s in range(seats)]


@dataclass(frozen=True)
class Rated:
    """What a rating event is made of, besides the ratings before (the stream's)."""

    game_id: str
    match_chain_head: bytes
    match_seq: int
    subjects: list[str]
    placements: list[int]
    parameters: dict[str, str]
    ended_at: datetime | None = None
    model_version: str = MODEL_VERSION
    model: str = MODEL


def rate_event(
    rated: Rated, seq: int, prev: bytes, before: dict[str, RatingRow]
) -> tuple[bytes, bytes, list[RatingRow]]:
    """The rating event at `seq` (after the chain hash `prev`, the genesis for the first) from
    the subjects' rows `before`: its payload, its chain hash and the rows after it. A subject in
    several seats of one match (two bots of one kind) keeps its rating: each seat plays with it,
    and it is not changed."""
    model = make_model(rated.parameters)
    defaults = model.rating()
    teams = []
    for subject in rated.subjects:
        row = before.get(subject)
        teams.append(
            [model.rating(mu=row.mu, sigma=row.sigma) if row else model.rating(mu=defaults.mu, sigma=defaults.sigma)]
        )
    after = model.rate(teams, ranks=[float(p) for p in rated.placements])
    counts = {s: rated.subjects.count(s) for s in rated.subjects}
    event = RatingEvent(
        game_id=rated.game_id,
        match_chain_head=rated.match_chain_head,
        match_seq=rated.match_seq,
        model=rated.model,
        model_version=rated.model_version,
        parameters=rated.parameters,
    )
    if rated.ended_at is not None:
        event.ended_at.FromDatetime(rated.ended_at)
    rows: dict[str, RatingRow] = {}
    for seat, subject in enumerate(rated.subjects):
        b = teams[seat][0]
        a = after[seat][0] if counts[subject] == 1 else b
        if not (math.isfinite(a.mu) and math.isfinite(a.sigma)):
            a = b
        event.changes.append(
            RatingChange(
                subject=subject,
                seat=seat,
                placement=rated.placements[seat],
                mu_before=b.mu,
                sigma_before=b.sigma,
                mu_after=a.mu,
                sigma_after=a.sigma,
                rating_before=shown(b.mu, b.sigma),
                rating_after=shown(a.mu, a.sigma),
            )
        )
        old = before.get(subject)
        rows[subject] = RatingRow(subject, a.mu, a.sigma, shown(a.mu, a.sigma), (old.matches if old else 0) + 1, seq)
    payload = event.SerializeToString(deterministic=True)
    after_rows = sorted(rows.values(), key=lambda r: r.subject)
    chain = chain_hash(
        prev,
        seq,
        _Fields(EVENT_KIND, payload, None, f"{rated.model} {rated.model_version}", rows_digest(after_rows)),
        rated.game_id,
    )
    return payload, chain, after_rows


@dataclass(frozen=True)
class _Fields:
    kind: str
    payload: bytes
    seat: int | None
    core_version: str
    state_hash: bytes


def rows_digest(rows: Sequence[RatingRow]) -> bytes:
    """SHA-256 of the projection rows an event leaves (its chain hash's state hash): a row
    changed in the database no longer matches the chain."""
    h = hashlib.sha256(b"tablier/ratings-rows\0")
    for r in rows:
        h.update(f"{r.subject}\0{r.mu!r}\0{r.sigma!r}\0{r.rating}\0{r.matches}\0{r.last_seq}\n".encode())
    return h.digest()


def rate_in(
    game_type: str, rated: Rated, seq: int, prev: bytes | None, before: dict[str, RatingRow]
) -> tuple[bytes, bytes, list[RatingRow]]:
    """`rate_event` in a game type's stream (its genesis when `prev` is None)."""
    return rate_event(rated, seq, rating_genesis(game_type) if prev is None else prev, before)


def rated_of(event: RatingEvent) -> Rated:
    """What `rate_event` needs to recompute a recorded event."""
    changes = sorted(event.changes, key=lambda c: c.seat)
    return Rated(
        game_id=event.game_id,
        match_chain_head=event.match_chain_head,
        match_seq=event.match_seq,
        subjects=[c.subject for c in changes],
        placements=[c.placement for c in changes],
        parameters=dict(event.parameters),
        ended_at=event.ended_at.ToDatetime(tzinfo=UTC) if event.HasField("ended_at") else None,
        model_version=event.model_version,
        model=event.model,
    )


@dataclass
class Rebuilt:
    """`rebuild`'s findings: the projection recomputed from the stream, and every difference."""

    rows: list[RatingRow] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    events: int = 0


def rebuild(game_type: str, stream: Sequence[StoredRating], stored_rows: Sequence[RatingRow]) -> Rebuilt:
    """Recomputes a game type's ratings from its stream: each event again from the ratings the
    earlier ones left, with its own recorded parameters, compared byte for byte (its payload and
    chain hash), then the projection compared row by row."""
    out = Rebuilt()
    rows: dict[str, RatingRow] = {}
    prev: bytes | None = None
    for n, ev in enumerate(stream, start=1):
        out.events += 1
        if ev.seq != n:
            out.problems.append(f"{game_type} seq {ev.seq}: expected seq {n} (a gap in the stream)")
        try:
            recorded = RatingEvent.FromString(ev.payload)
        except Exception:
            out.problems.append(f"{game_type} seq {ev.seq}: the payload is not a RatingEvent")
            break
        if recorded.model != MODEL:
            out.problems.append(f"{game_type} seq {ev.seq}: unknown model {recorded.model!r}")
        elif recorded.model_version != MODEL_VERSION:
            out.problems.append(
                f"{game_type} seq {ev.seq}: rated with openskill {recorded.model_version}, "
                f"recomputed with {MODEL_VERSION} (the numbers may differ)"
            )
        rated = rated_of(recorded)
        subjects = set(rated.subjects)
        payload, chain, after = rate_in(game_type, rated, ev.seq, prev, {s: rows[s] for s in subjects if s in rows})
        if payload != ev.payload:
            out.problems.append(f"{game_type} seq {ev.seq}: the ratings recomputed differ from the event's")
        if chain != ev.chain_hash:
            out.problems.append(f"{game_type} seq {ev.seq}: the chain hash does not match")
        if ev.game_id != rated.game_id:
            out.problems.append(f"{game_type} seq {ev.seq}: the row's match id is not the event's")
        for r in after:
            rows[r.subject] = r
        prev = ev.chain_hash
    out.rows = sorted(rows.values(), key=lambda r: r.subject)
    have = {r.subject: r for r in stored_rows}
    for r in out.rows:
        if have.get(r.subject) != r:
            out.problems.append(f"{game_type} rating of {r.subject}: stored {have.get(r.subject)}, recomputed {r}")
    for s in have.keys() - {r.subject for r in out.rows}:
        out.problems.append(f"{game_type} rating of {s}: stored, but no rating event names it")
    return out


class Ranked:
    """Rates each ranked match that ends (a reaction to the repository's new states), and
    answers the leaderboards. Without a ratings store (the memory store) nothing is rated."""

    def __init__(self, repository: Repository, ratings: PgRatings | None) -> None:
        self.repo = repository
        self.ratings = ratings
        self._rating: dict[str, asyncio.Task[None]] = {}
        self._resume: asyncio.Task[None] | None = None
        self.rated = 0
        repository.on_state(self.ended)
        if ratings is not None:
            repository.before_end(self.ending)

    async def ending(self, game: GameRecord) -> None:
        """Before the append that ends a ranked match: it is to be rated, by this server once
        the append committed (`ended`), else by the next one to start (`resume`)."""
        if self.ratings is not None and game.ranked and subjects_of(game) is not None:
            await self.ratings.ending(game.game_id, game.game_type)

    def ended(self, game: GameRecord, seq: int, match: Match) -> None:
        if not game.ranked or self.ratings is None or not match.is_over() or game.game_id in self._rating:
            return
        task = asyncio.get_running_loop().create_task(self._rate_logged(game))
        self._rating[game.game_id] = task
        task.add_done_callback(lambda _: self._rating.pop(game.game_id, None))

    async def _rate_logged(self, game: GameRecord) -> None:
        try:
            await self.rate(game)
        except Exception:
            log.exception("rating match %s failed (rated when a server resumes)", game.game_id)

    async def rate(self, game: GameRecord) -> int | None:
        """Appends the match's rating event; None when it is not rated (not over, not
        eligible, or already rated). Safe to call any number of times, on any server."""
        directory = self.ratings
        if directory is None or not game.ranked:
            return None
        subjects = subjects_of(game)
        if subjects is None:
            log.info("ranked match %s is not rated: a seat is not a signed-in player", game.game_id)
            await directory.settled(game.game_id)
            return None
        if await directory.rated(game.game_id):
            await directory.settled(game.game_id)
            return None
        seq, match = await self.repo.load(game)
        raw = match.outcome()
        if not match.is_over() or raw is None:
            return None
        outcome = Outcome.FromString(raw)
        if outcome.aborted:
            log.info("ranked match %s is not rated: it was stopped, not ended by the rules", game.game_id)
            await directory.settled(game.game_id)
            return None
        events = await self.repo.events(game, 0, seq, seq)
        # Seats that lose whatever the score: timed out, or resigned (a forfeit).
        timed_out: set[int] = set()
        for ev in events:
            if ev.kind in ("seat_timed_out", "seat_resigned"):
                try:
                    lost = SeatTimedOut if ev.kind == "seat_timed_out" else SeatResigned
                    timed_out.add(lost.FromString(ev.payload).seat)
                except Exception:
                    log.warning("a %s event of %s does not decode", ev.kind, game.game_id)
        rated = Rated(
            game_id=game.game_id,
            match_chain_head=events[-1].chain_hash if events else b"",
            match_seq=seq,
            subjects=subjects,
            placements=placements(outcome, game.seats, timed_out),
            parameters=model_parameters(),
            ended_at=events[-1].recorded_at if events else None,
        )
        made = await directory.append(
            game.game_type,
            game.game_id,
            subjects,
            lambda head, prev, before: rate_in(game.game_type, rated, head + 1, prev, before),
        )
        if made is not None:
            self.rated += 1
            log.info("rated match %s: %s seq %d", game.game_id, game.game_type, made)
        return made

    def resume(self) -> None:
        """Rates the ranked matches that ended without a rating event (a server stopped in
        between), in the background: those listed to rate (`PgRatings.unrated`, written before
        each ranked match's final append), never loading a match in play."""
        if self.ratings is not None and self._resume is None:
            self._resume = asyncio.get_running_loop().create_task(self._resume_all())

    async def _resume_all(self) -> None:
        assert self.ratings is not None
        try:
            pending = await self.ratings.unrated()
        except Exception:
            log.exception("could not list the ranked matches not yet rated")
            return
        for gid in pending:
            try:
                await self.rate(await self.repo.game(gid))
            except Exception:
                log.exception("could not rate match %s", gid)

    async def close(self) -> None:
        tasks = list(self._rating.values()) + ([self._resume] if self._resume else [])
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@dataclass(frozen=True)
class Standing:
    """A subject's rating as the transports show it."""

    subject: str
    display_name: str
    mu: float
    sigma: float
    rating: int
    matches: int
    rank: int = 0


@dataclass(frozen=True)
class HistoryEntry:
    seq: int
    event: RatingEvent
    change: RatingChange


class Leaderboards:
    """The reads of the projection: a game type's leaderboard, a subject's history."""

    def __init__(self, store: PgRatings | None, catalogue: Catalogue, name_of: Callable[[str], Awaitable[str]]) -> None:
        self.ratings = store
        self.catalogue = catalogue
        self.name_of = name_of

    def _ratings(self) -> PgRatings:
        if self.ratings is None:
            raise Unavailable("ranked play needs PostgreSQL (this server has the memory store)", "NO_RANKED_STORE")
        return self.ratings

    async def name(self, subject: str) -> str:
        kind, _, rest = subject.partition(":")
        if kind == "bot":
            return f"bot {rest}"
        try:
            return await self.name_of(rest)
        except AppError:
            return "(unknown player)"

    async def standing(self, row: RatingRow, rank: int = 0) -> Standing:
        return Standing(row.subject, await self.name(row.subject), row.mu, row.sigma, row.rating, row.matches, rank)

    async def leaderboard(self, game_type: str, page: int, page_size: int) -> tuple[list[Standing], int]:
        self.catalogue.get(game_type)
        size = page_size or 20
        if not 1 <= size <= 100:
            raise BadRequest(f"page_size is 1 to 100, not {page_size}", "BAD_PAGE_SIZE")
        if page > 100_000:
            raise BadRequest("page is too large", "BAD_PAGE")
        rows, total = await self._ratings().board(game_type, page * size, size)
        return [await self.standing(r, page * size + n + 1) for n, r in enumerate(rows)], total

    async def history(self, game_type: str, subject: str, limit: int) -> tuple[Standing | None, list[HistoryEntry]]:
        self.catalogue.get(game_type)
        size = limit or 20
        if not 1 <= size <= 100:
            raise BadRequest(f"limit is 1 to 100, not {limit}", "BAD_LIMIT")
        kind, _, rest = subject.partition(":")
        if kind not in ("player", "bot") or not rest or len(subject) > 200:
            raise BadRequest("a subject is 'player:<uuid>' or 'bot:<name>'", "BAD_SUBJECT")
        if kind == "player":
            try:
                uuid.UUID(rest)
            except ValueError:
                raise BadRequest("a subject is 'player:<uuid>' or 'bot:<name>'", "BAD_SUBJECT") from None
        directory = self._ratings()
        # The history first: an event and the rows after it commit together, so the current
        # rating read next is never older than the last event listed (read the other way round,
        # a match rated between the two reads came with no current rating, and no rank).
        out = []
        for ev in await directory.history(game_type, subject, size):
            event = RatingEvent.FromString(ev.payload)
            change = next(c for c in event.changes if c.subject == subject)
            out.append(HistoryEntry(ev.seq, event, change))
        rows = await directory.ratings(game_type, [subject])
        current = None
        if rows:
            current = await self.standing(rows[0], await directory.rank_of(game_type, rows[0].rating))
        return current, out
