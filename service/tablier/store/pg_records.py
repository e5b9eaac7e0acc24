"""The match records and the clock index of the PostgreSQL store (`base.MatchDirectory`,
`base.ClockIndex`): reading a match record (its seed opened with the store's seed keys),
claiming a vacant seat, the lobby's pages, the matches whose clock runs, and resealing seeds
with a new key. `postgres.PostgresStore` adds the event log on top."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from tablier.seeds import SeedKeyError, SeedKeys, SeedUnreadable
from tablier.store._shared import game_key
from tablier.store.base import GameRecord, UnknownGame
from tablier.store.pg_database import OPERATION_TIMEOUT, Database
from tablier.store.players import PgPlayers
from tablier.store.ratings import PgRatings


class MatchRecords(Database):
    """The match directory and clock index on a pool (see the module docstring)."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        dsn: str,
        seed_keys: SeedKeys | None = None,
        make_pool: Callable[[], AsyncConnectionPool] | None = None,
        timeout: float = OPERATION_TIMEOUT,
    ) -> None:
        super().__init__(pool, dsn, make_pool, timeout)
        self.players = PgPlayers(self)
        # Ranked play: the rating streams, their projection and the matchmaking queue.
        self.ratings = PgRatings(self)
        # Seeds are sealed with these keys (tablier.seeds); without keys they are kept in
        # clear (tests of the store only: `tablier serve` always has a key).
        self._seed_keys = seed_keys

    async def claim_seat(
        self, game_id: str, seat: int, token_hash: bytes, player_id: str | None = None
    ) -> GameRecord | None:
        key = game_key(game_id)

        async def claim(conn: psycopg.AsyncConnection) -> GameRecord | None:
            # One conditional UPDATE: a second claim waits for the first's row lock, then finds
            # the entry no longer empty and updates nothing. Out-of-range seats read NULL. The
            # same hash again (a retry after a lost connection) finds its own claim.
            cur = await conn.execute(
                """UPDATE games SET token_hashes[%(i)s] = %(h)s
                       , seat_players = CASE WHEN %(p)s::uuid IS NULL THEN seat_players
                           ELSE (SELECT array_agg(CASE WHEN n = %(i)s THEN %(p)s::uuid ELSE seat_players[n] END
                                                  ORDER BY n)
                                 FROM generate_series(1, seats) AS n) END
                   WHERE game_id = %(g)s AND %(i)s BETWEEN 1 AND seats
                     AND token_hashes[%(i)s] IN (''::bytea, %(h)s) AND coalesce(bots[%(i)s], '') = ''
                   RETURNING game_id""",
                {"i": seat + 1, "h": token_hash, "g": key, "p": player_id},
            )
            claimed = await cur.fetchone() is not None
            record = await self._get_game(conn, key)  # UnknownGame when there is no match
            return record if claimed else None

        return await self._run(claim)

    async def get_game(self, game_id: str) -> GameRecord:
        key = game_key(game_id)
        return await self._run(lambda conn: self._get_game(conn, key))

    async def _get_game(self, conn: psycopg.AsyncConnection, key: str) -> GameRecord:
        cur = await conn.execute(
            """SELECT game_id, game_type, seats, options, seed, token_hashes, created_at,
                      sealed_seed, seed_key_id, hash_scheme, invite_hashes, bots, seat_players, ranked,
                      parent_game_id, parent_seq, parent_head, fork_as
               FROM games WHERE game_id = %s""",
            (key,),
        )
        row = await cur.fetchone()
        if row is None:
            raise UnknownGame(key)
        if row[12]:
            await self.players.learn_names_on(conn, (str(p) for p in row[12] if p is not None))
        return GameRecord(
            game_id=str(row[0]),
            game_type=row[1],
            seats=row[2],
            options=dict(row[3]),
            seed=self._open_seed(key, row[4], row[7], row[8]),
            token_hashes=tuple(bytes(h) for h in row[5]),
            created_at=row[6],
            hash_scheme=row[9],
            invite_hashes=tuple(bytes(h) for h in row[10]),
            bots=tuple(row[11]),
            seat_players=_seat_players(row[12]),
            ranked=row[13],
            **_lineage(row[14:18]),
        )

    def _open_seed(self, key: str, plain: bytes | None, sealed: bytes | None, kid: str | None) -> bytes:
        if sealed is None:
            return bytes(plain or b"")
        if self._seed_keys is None:
            raise SeedUnreadable(
                f"the seed of match {key} is sealed and this store has no seed key", "SEED_KEY_UNKNOWN", key
            )
        return self._seed_keys.open(key, kid or "", bytes(sealed))

    async def reseal_seeds(self) -> int:
        """Seals every seed with the current key: seeds sealed with an older key, and seeds kept
        in clear by earlier versions. Returns how many it resealed. Each row is rewritten only
        if it is still what was read (a concurrent create or reseal is left alone)."""
        keys = self._seed_keys
        if keys is None:
            raise SeedKeyError("resealing needs a seed key")

        async def reseal(conn: psycopg.AsyncConnection) -> int:
            cur = await conn.execute(
                """SELECT game_id, seed, sealed_seed, seed_key_id FROM games
                   WHERE seed_key_id IS DISTINCT FROM %s""",
                (keys.current_id,),
            )
            done = 0
            for gid, plain, sealed, kid in await cur.fetchall():
                key = str(gid)
                seed = self._open_seed(key, plain, sealed, kid)
                new_kid, new_sealed = keys.seal(key, seed)
                done += (
                    await conn.execute(
                        """UPDATE games SET seed = NULL, sealed_seed = %s, seed_key_id = %s
                       WHERE game_id = %s AND seed_key_id IS NOT DISTINCT FROM %s""",
                        (new_sealed, new_kid, key, kid),
                    )
                ).rowcount
            return done

        return await self._run(reseal)

    async def list_games(self) -> list[str]:
        async def read(conn: psycopg.AsyncConnection) -> list[str]:
            cur = await conn.execute("SELECT game_id FROM games ORDER BY created_at, game_id")
            return [str(r[0]) for r in await cur.fetchall()]

        return await self._run(read)

    async def game_page(
        self,
        limit: int,
        game_type: str | None = None,
        before: tuple[datetime, str] | None = None,
        player_id: str | None = None,
        parent: str | None = None,
    ) -> list[GameRecord]:
        async def read(conn: psycopg.AsyncConnection) -> list[GameRecord]:
            # Newest first along games_created_at_idx (created_at, game_id), read backwards.
            cur = await conn.execute(
                """SELECT game_id, game_type, seats, options, token_hashes, created_at, hash_scheme,
                          invite_hashes, bots, seat_players, ranked, parent_game_id, parent_seq, parent_head,
                          fork_as
                   FROM games
                   WHERE (%(type)s::text IS NULL OR game_type = %(type)s)
                     AND (%(player)s::uuid IS NULL OR seat_players @> ARRAY[%(player)s::uuid])
                     AND (%(parent)s::uuid IS NULL OR parent_game_id = %(parent)s::uuid)
                     AND (%(at)s::timestamptz IS NULL OR (created_at, game_id) < (%(at)s, %(id)s::uuid))
                   ORDER BY created_at DESC, game_id DESC
                   LIMIT %(n)s""",
                {
                    "type": game_type,
                    "parent": parent,
                    "at": before[0] if before else None,
                    "id": before[1] if before else None,
                    "n": limit,
                    "player": player_id,
                },
            )
            return [
                GameRecord(
                    game_id=str(r[0]),
                    game_type=r[1],
                    seats=r[2],
                    options=dict(r[3]),
                    seed=b"",
                    token_hashes=tuple(bytes(h) for h in r[4]),
                    created_at=r[5],
                    hash_scheme=r[6],
                    invite_hashes=tuple(bytes(h) for h in r[7]),
                    bots=tuple(r[8]),
                    seat_players=_seat_players(r[9]),
                    ranked=r[10],
                    **_lineage(r[11:15]),
                )
                for r in await cur.fetchall()
            ]

        page = await self._run(read)
        await self.players.learn_names(p for g in page for p in g.seat_players)
        return page

    async def running_clocks(self) -> list[str]:
        async def read(conn: psycopg.AsyncConnection) -> list[str]:
            cur = await conn.execute("SELECT game_id FROM games WHERE clock_running ORDER BY game_id")
            return [str(r[0]) for r in await cur.fetchall()]

        return await self._run(read)

    async def clock_stopped(self, game_id: str) -> None:
        key = game_key(game_id)

        async def write(conn: psycopg.AsyncConnection) -> None:
            await conn.execute("UPDATE games SET clock_running = false WHERE game_id = %s AND clock_running", (key,))

        await self._run(write)


def _seat_players(ids: list[object] | None) -> tuple[str | None, ...]:
    return tuple(None if p is None else str(p) for p in ids or ())


def _lineage(row: Sequence[Any]) -> dict[str, Any]:
    """A fork's lineage columns (parent_game_id, parent_seq, parent_head, fork_as) as
    GameRecord fields; all None for a match that is not a fork."""
    parent, seq, head, fork_as = row
    if parent is None:
        return {}
    return {"parent_game_id": str(parent), "parent_seq": seq, "parent_head": bytes(head), "fork_as": fork_as}
