"""Ranked play in PostgreSQL (docs/design/players-ratings-forks-shards.md, "Ranked play"): the
rating streams (`rating_events`, one chain per game type), their projection (`ratings`) and
the matchmaking queue (`match_queue`), on the store's pool (`store.ratings`). The memory store
has none: ranked play needs PostgreSQL.

A rating event and the projection rows it changes are written in one transaction that holds
the game type's advisory lock, so the stream's seqs follow one another and each event's
"before" is what the stream left; `game_id` is unique in the stream, so a match is rated once
whichever servers try.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg

if TYPE_CHECKING:
    from tablier.store.pg_database import Database


@dataclass(frozen=True)
class RatingRow:
    """One subject's rating in a game type (a row of the projection)."""

    subject: str
    mu: float
    sigma: float
    rating: int
    matches: int
    last_seq: int


@dataclass(frozen=True)
class StoredRating:
    """One event of a rating stream."""

    game_type: str
    seq: int
    game_id: str
    payload: bytes
    chain_hash: bytes
    recorded_at: datetime | None = None


@dataclass(frozen=True)
class Ticket:
    ticket: str
    player_id: str
    game_type: str
    seats: int
    rating: int
    enqueued_at: datetime
    game_id: str | None = None
    seat: int | None = None


@dataclass(frozen=True)
class Plan:
    """A match the queue makes: its game id, per seat its player (None: a bot's seat) and bot
    kind ('' at a player's seat), and the tickets it takes with their seats."""

    game_id: str
    game_type: str
    players: tuple[str | None, ...]
    bots: tuple[str, ...]
    seated: tuple[tuple[str, int], ...] = ()


# What the rater computes inside the transaction: from the stream's head (seq, chain hash) and
# the subjects' rows before, the event (payload, chain hash) and the rows after. None: nothing
# to write.
Compute = Callable[[int, bytes | None, dict[str, RatingRow]], tuple[bytes, bytes, list[RatingRow]] | None]


def _lock_key(game_type: str) -> int:
    return int.from_bytes(hashlib.sha256(b"tablier/ratings\0" + game_type.encode()).digest()[:8], "big", signed=True)


def _row(r: Sequence[Any]) -> RatingRow:
    return RatingRow(str(r[0]), float(r[1]), float(r[2]), int(r[3]), int(r[4]), int(r[5]))


_ROW = "subject, mu, sigma, rating, matches, last_seq"

# A waiting ticket its server has not renewed for this many seconds is not matched (its
# server stopped: its player is gone), and is dropped after twice as long.
STALE_SECONDS = 10


class PgRatings:
    def __init__(self, db: Database) -> None:
        self._db = db

    # ----------------------------------------------------------------- the stream

    async def rated(self, game_id: str) -> bool:
        async def read(conn: psycopg.AsyncConnection) -> bool:
            cur = await conn.execute("SELECT 1 FROM rating_events WHERE game_id = %s", (game_id,))
            return await cur.fetchone() is not None

        return await self._db._run(read)

    async def append(self, game_type: str, game_id: str, subjects: list[str], compute: Compute) -> int | None:
        """Appends the rating event `compute` makes from the stream's head and the subjects'
        rows, and writes the rows after it, in one transaction under the game type's lock.
        Returns its seq; None when the match was already rated (here or by another server) or
        `compute` gave nothing."""

        async def write(conn: psycopg.AsyncConnection) -> int | None:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(game_type),))
                # The match leaves the list of those to rate (migration 0012) with its event.
                await conn.execute("DELETE FROM ranked_ends WHERE game_id = %s", (game_id,))
                cur = await conn.execute("SELECT 1 FROM rating_events WHERE game_id = %s", (game_id,))
                if await cur.fetchone() is not None:
                    return None
                cur = await conn.execute(
                    "SELECT seq, chain_hash FROM rating_events WHERE game_type = %s ORDER BY seq DESC LIMIT 1",
                    (game_type,),
                )
                head = await cur.fetchone()
                seq, chain = (int(head[0]), bytes(head[1])) if head else (0, None)
                cur = await conn.execute(
                    f"SELECT {_ROW} FROM ratings WHERE game_type = %s AND subject = ANY(%s)", (game_type, subjects)
                )
                before = {row.subject: row for row in map(_row, await cur.fetchall())}
                made = compute(seq, chain, before)
                if made is None:
                    return None
                payload, chain_hash, rows = made
                await conn.execute(
                    """INSERT INTO rating_events (game_type, seq, game_id, payload, chain_hash, subjects)
                       VALUES (%s, %s, %s, %s, %s, %s)""",
                    (game_type, seq + 1, game_id, payload, chain_hash, sorted(set(subjects))),
                )
                for row in rows:
                    await conn.execute(
                        """INSERT INTO ratings (game_type, subject, mu, sigma, rating, matches, last_seq)
                           VALUES (%s, %s, %s, %s, %s, %s, %s)
                           ON CONFLICT (game_type, subject) DO UPDATE SET mu = EXCLUDED.mu,
                               sigma = EXCLUDED.sigma, rating = EXCLUDED.rating,
                               matches = EXCLUDED.matches, last_seq = EXCLUDED.last_seq""",
                        (game_type, row.subject, row.mu, row.sigma, row.rating, row.matches, row.last_seq),
                    )
                return seq + 1

        return await self._db._run(write)

    async def events(self, game_type: str) -> list[StoredRating]:
        async def read(conn: psycopg.AsyncConnection) -> list[StoredRating]:
            cur = await conn.execute(
                """SELECT game_type, seq, game_id, payload, chain_hash, recorded_at FROM rating_events
                   WHERE game_type = %s ORDER BY seq""",
                (game_type,),
            )
            return [StoredRating(r[0], r[1], str(r[2]), bytes(r[3]), bytes(r[4]), r[5]) for r in await cur.fetchall()]

        return await self._db._run(read)

    async def game_types(self) -> list[str]:
        async def read(conn: psycopg.AsyncConnection) -> list[str]:
            cur = await conn.execute(
                "SELECT game_type FROM rating_events UNION SELECT game_type FROM ratings ORDER BY 1"
            )
            return [r[0] for r in await cur.fetchall()]

        return await self._db._run(read)

    async def history(self, game_type: str, subject: str, limit: int) -> list[StoredRating]:
        async def read(conn: psycopg.AsyncConnection) -> list[StoredRating]:
            cur = await conn.execute(
                """SELECT game_type, seq, game_id, payload, chain_hash, recorded_at FROM rating_events
                   WHERE game_type = %s AND subjects @> ARRAY[%s] ORDER BY seq DESC LIMIT %s""",
                (game_type, subject, limit),
            )
            return [StoredRating(r[0], r[1], str(r[2]), bytes(r[3]), bytes(r[4]), r[5]) for r in await cur.fetchall()]

        return await self._db._run(read)

    async def unrated(self) -> list[str]:
        """The ranked matches to rate: ended without a rating event (their server stopped in
        between), oldest first; never a match still in play (but one whose final append lost
        its race, `ending`)."""

        async def read(conn: psycopg.AsyncConnection) -> list[str]:
            cur = await conn.execute("SELECT game_id FROM ranked_ends ORDER BY marked_at")
            return [str(r[0]) for r in await cur.fetchall()]

        return await self._db._run(read)

    async def ending(self, game_id: str, game_type: str) -> None:
        """A ranked match is about to end (written before the append that ends it): rate it."""

        async def write(conn: psycopg.AsyncConnection) -> None:
            await conn.execute(
                "INSERT INTO ranked_ends (game_id, game_type) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (game_id, game_type),
            )

        await self._db._run(write)

    async def settled(self, game_id: str) -> None:
        """A match ended that is not rated (stopped, or a seat not a player): nothing to rate."""

        async def write(conn: psycopg.AsyncConnection) -> None:
            await conn.execute("DELETE FROM ranked_ends WHERE game_id = %s", (game_id,))

        await self._db._run(write)

    # ----------------------------------------------------------------- the projection

    async def ratings(self, game_type: str, subjects: Sequence[str] | None = None) -> list[RatingRow]:
        """The projection's rows of a game type (of `subjects` only, when given), by subject."""

        async def read(conn: psycopg.AsyncConnection) -> list[RatingRow]:
            cur = await conn.execute(
                f"""SELECT {_ROW} FROM ratings WHERE game_type = %s
                    AND (%s::text[] IS NULL OR subject = ANY(%s::text[])) ORDER BY subject""",
                (game_type, None if subjects is None else list(subjects), None if subjects is None else list(subjects)),
            )
            return [_row(r) for r in await cur.fetchall()]

        return await self._db._run(read)

    async def board(self, game_type: str, offset: int, limit: int) -> tuple[list[RatingRow], int]:
        async def read(conn: psycopg.AsyncConnection) -> tuple[list[RatingRow], int]:
            cur = await conn.execute(
                f"""SELECT {_ROW} FROM ratings WHERE game_type = %s
                    ORDER BY rating DESC, matches DESC, subject OFFSET %s LIMIT %s""",
                (game_type, offset, limit),
            )
            rows = [_row(r) for r in await cur.fetchall()]
            cur = await conn.execute("SELECT count(*) FROM ratings WHERE game_type = %s", (game_type,))
            total = await cur.fetchone()
            return rows, int(total[0]) if total else 0

        return await self._db._run(read)

    async def rank_of(self, game_type: str, rating: int) -> int:
        async def read(conn: psycopg.AsyncConnection) -> int:
            cur = await conn.execute(
                "SELECT count(*) FROM ratings WHERE game_type = %s AND rating > %s", (game_type, rating)
            )
            found = await cur.fetchone()
            return int(found[0]) + 1 if found else 1

        return await self._db._run(read)

    async def replace(self, game_type: str, rows: list[RatingRow]) -> None:
        """Writes the projection of a game type anew (`tablier ratings rebuild --write`)."""

        async def write(conn: psycopg.AsyncConnection) -> None:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(game_type),))
                await conn.execute("DELETE FROM ratings WHERE game_type = %s", (game_type,))
                for row in rows:
                    await conn.execute(
                        """INSERT INTO ratings (game_type, subject, mu, sigma, rating, matches, last_seq)
                           VALUES (%s, %s, %s, %s, %s, %s, %s)""",
                        (game_type, row.subject, row.mu, row.sigma, row.rating, row.matches, row.last_seq),
                    )

        await self._db._run(write)

    # ----------------------------------------------------------------- the queue

    async def enqueue(self, ticket: str, player_id: str, game_type: str, seats: int, rating: int) -> bool:
        """False when the player is already queued."""

        async def write(conn: psycopg.AsyncConnection) -> bool:
            # A matched ticket its player was not told of (its server stopped) does not keep
            # the player out of the queue.
            await conn.execute("DELETE FROM match_queue WHERE player_id = %s AND game_id IS NOT NULL", (player_id,))
            try:
                await conn.execute(
                    """INSERT INTO match_queue (ticket, player_id, game_type, seats, rating)
                       VALUES (%s, %s, %s, %s, %s)""",
                    (ticket, player_id, game_type, seats, rating),
                )
            except psycopg.errors.UniqueViolation:
                return False
            return True

        return await self._db._run(write)

    async def cancel(self, ticket: str, player_id: str | None = None) -> bool:
        """Removes a ticket not yet matched (of `player_id`, when given)."""

        async def write(conn: psycopg.AsyncConnection) -> bool:
            cur = await conn.execute(
                """DELETE FROM match_queue WHERE ticket = %s AND game_id IS NULL
                   AND (%s::uuid IS NULL OR player_id = %s::uuid)""",
                (ticket, player_id, player_id),
            )
            return cur.rowcount > 0

        return await self._db._run(write)

    async def tickets(self, tickets: Sequence[str]) -> list[Ticket]:
        """These tickets; a ticket's match (game id and seat) only once the match exists (its
        `queue_matches` row is gone)."""

        async def read(conn: psycopg.AsyncConnection) -> list[Ticket]:
            cur = await conn.execute(
                """SELECT q.ticket, q.player_id, q.game_type, q.seats, q.rating, q.enqueued_at,
                          CASE WHEN p.game_id IS NULL THEN q.game_id END,
                          CASE WHEN p.game_id IS NULL THEN q.seat END
                   FROM match_queue q LEFT JOIN queue_matches p ON p.game_id = q.game_id
                   WHERE q.ticket = ANY(%s::uuid[])""",
                (list(tickets),),
            )
            return [_ticket(r) for r in await cur.fetchall()]

        return await self._db._run(read)

    async def take(
        self,
        game_type: str,
        seats: int,
        group: Callable[[list[Ticket]], Awaitable[list[Plan]]],
        limit: int = 2000,
    ) -> list[Plan]:
        """Locks the waiting tickets of (game type, seats) no other server holds (FOR UPDATE SKIP
        LOCKED), oldest first; `group` plans matches of some of them, and in the same
        transaction each plan is written (`queue_matches`) and its tickets marked with its game
        id: taken for good. The caller then creates each match under its game id, and `made`
        deletes its plan (migration 0011). Returns the plans written."""

        async def write(conn: psycopg.AsyncConnection) -> list[Plan]:
            async with conn.transaction():
                cur = await conn.execute(
                    """SELECT ticket, player_id, game_type, seats, rating, enqueued_at, game_id, seat
                       FROM match_queue WHERE game_type = %s AND seats = %s AND game_id IS NULL
                         AND seen_at > now() - make_interval(secs => %s)
                       ORDER BY enqueued_at LIMIT %s FOR UPDATE SKIP LOCKED""",
                    (game_type, seats, STALE_SECONDS, limit),
                )
                found = [_ticket(r) for r in await cur.fetchall()]
                if not found:
                    return []
                plans = await group(found)
                for plan in plans:
                    await conn.execute(
                        """INSERT INTO queue_matches (game_id, game_type, players, bots)
                           VALUES (%s, %s, %s::uuid[], %s::text[])""",
                        (plan.game_id, plan.game_type, list(plan.players), list(plan.bots)),
                    )
                    for ticket, seat in plan.seated:
                        await conn.execute(
                            "UPDATE match_queue SET game_id = %s, seat = %s WHERE ticket = %s",
                            (plan.game_id, seat, ticket),
                        )
                return plans

        return await self._db._run(write)

    async def planned(self, older_than: float = 0.0) -> list[Plan]:
        """The plans written more than `older_than` seconds ago whose match is not known to
        exist yet (its server stopped before `made`, or is creating it now), oldest first."""

        async def read(conn: psycopg.AsyncConnection) -> list[Plan]:
            cur = await conn.execute(
                """SELECT game_id, game_type, players, bots FROM queue_matches
                   WHERE taken_at <= now() - make_interval(secs => %s) ORDER BY taken_at LIMIT 100""",
                (older_than,),
            )
            return [
                Plan(str(r[0]), str(r[1]), tuple(None if p is None else str(p) for p in r[2]), tuple(r[3]))
                for r in await cur.fetchall()
            ]

        return await self._db._run(read)

    async def made(self, game_id: str) -> None:
        """The plan's match exists: its tickets may be told."""

        async def write(conn: psycopg.AsyncConnection) -> None:
            await conn.execute("DELETE FROM queue_matches WHERE game_id = %s", (game_id,))

        await self._db._run(write)

    async def renew(self, tickets: Sequence[str]) -> None:
        """The player's server still holds these tickets' streams; and the tickets whose server
        stopped renewing them (not renewed for twice STALE_SECONDS) are dropped."""

        async def write(conn: psycopg.AsyncConnection) -> None:
            if tickets:
                await conn.execute(
                    "UPDATE match_queue SET seen_at = now() WHERE ticket = ANY(%s::uuid[])", (list(tickets),)
                )
            await conn.execute(
                "DELETE FROM match_queue WHERE seen_at < now() - make_interval(secs => %s)",
                (STALE_SECONDS * 2,),
            )

        await self._db._run(write)

    async def forget(self, tickets: Sequence[str]) -> None:
        """Drops matched tickets once their players were told."""

        async def write(conn: psycopg.AsyncConnection) -> None:
            await conn.execute("DELETE FROM match_queue WHERE ticket = ANY(%s::uuid[])", (list(tickets),))

        await self._db._run(write)

    async def queued(self) -> dict[tuple[str, int], int]:
        """The tickets waiting, per (game type, seats)."""

        async def read(conn: psycopg.AsyncConnection) -> dict[tuple[str, int], int]:
            cur = await conn.execute(
                """SELECT game_type, seats, count(*) FROM match_queue
                   WHERE game_id IS NULL AND seen_at > now() - make_interval(secs => %s) GROUP BY 1, 2""",
                (STALE_SECONDS,),
            )
            return {(r[0], int(r[1])): int(r[2]) for r in await cur.fetchall()}

        return await self._db._run(read)


def _ticket(r: Sequence[Any]) -> Ticket:
    return Ticket(
        str(r[0]),
        str(r[1]),
        str(r[2]),
        int(r[3]),
        int(r[4]),
        r[5],
        None if r[6] is None else str(r[6]),
        None if r[7] is None else int(r[7]),
    )
