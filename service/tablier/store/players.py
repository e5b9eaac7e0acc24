"""The player directory: players, their credentials (kept as SHA-256 only) and their names, in
PostgreSQL (`PgPlayers`) or in memory (`MemoryPlayers`), behind one port (`PlayerDirectory`).
Every store has one, as `store.players` (docs/design/players-ratings-forks-shards.md).

Two caches make the per-call check of a credential free of database round trips:

- live credentials (hash -> player id), trusted only while this process's LISTEN connection
  stays connected since the credential was read: revoking one notifies `tablier_players` in
  the revoking transaction, so every server drops it at its commit, and a server whose
  listener is down (or reconnected since) reads the credential again;
- names (player id -> display name and colour), read with the match records that bind seats
  (`NameBook`) and updated by every rename's notification, so a rename shows everywhere.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

import psycopg

from tablier.store.base import GameRecord, StoreError, UnknownGame

if TYPE_CHECKING:
    from tablier.store.pg_records import MatchRecords

from tablier.store.pg_database import PLAYERS_CHANNEL

COLOURS = 12
# Entries each cache holds (least recently used dropped first: a dropped entry is read again).
CACHE_SIZE = 65_536


class UnknownPlayer(StoreError):
    """No player with this id."""


@dataclass(frozen=True)
class PlayerRecord:
    player_id: str
    display_name: str
    colour: int
    created_at: datetime | None = None
    # An external identity (OpenID Connect), mapped to this one player.
    oidc_issuer: str | None = None
    oidc_subject: str | None = None


def colour_of(player_id: str) -> int:
    """The colour a player keeps for life, from its id."""
    return hashlib.sha256(b"tablier/colour\0" + player_id.encode()).digest()[0] % COLOURS


def new_player(display_name: str, issuer: str | None = None, subject: str | None = None) -> PlayerRecord:
    pid = str(uuid.uuid4())
    return PlayerRecord(pid, display_name, colour_of(pid), datetime.now(UTC), issuer, subject)


class NameBook:
    """Player id -> (display name, colour), as last read or announced. Read synchronously while
    a view is built; the stores fill it."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._names: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self._size = size
        # Grows with every name or colour that changed: views built before are stale.
        self.version = 0

    def get(self, player_id: str) -> tuple[str, int] | None:
        return self._names.get(player_id)

    def put(self, player_id: str, name: str, colour: int) -> None:
        known = self._names.get(player_id)
        if known is not None and known != (name, colour):
            self.version += 1
        self._names[player_id] = (name, colour)
        self._names.move_to_end(player_id)
        while len(self._names) > self._size:
            self._names.popitem(last=False)

    def missing(self, ids: Iterable[str | None]) -> list[str]:
        return sorted({i for i in ids if i and i not in self._names})


# The names this process knows, shared by its stores (views read it while they are built).
NAMES = NameBook()


class PlayerDirectory(Protocol):
    names: NameBook
    # Told the match whose record changed on any server (a seat left or handed to a bot).
    on_record: Callable[[str], None] | None

    async def create_player(self, player: PlayerRecord, token_hash: bytes) -> PlayerRecord:
        """Stores a new player and its first credential, in one transaction."""

    async def external_player(self, player: PlayerRecord, token_hash: bytes) -> tuple[PlayerRecord, bool]:
        """The player of `player`'s (oidc_issuer, oidc_subject), created as `player` when there
        is none (True), with a new credential `token_hash`. Two first sign-ins racing make one
        player."""

    async def add_credential(self, player_id: str, token_hash: bytes) -> None: ...

    async def credential_player(self, token_hash: bytes) -> str | None:
        """The player of a live (not revoked) credential, or None."""

    async def get_player(self, player_id: str) -> PlayerRecord:
        """Raises UnknownPlayer."""

    async def learn_names(self, ids: Iterable[str | None]) -> None:
        """Reads the names of the players in `ids` that `names` lacks."""

    async def rename(self, player_id: str, display_name: str) -> PlayerRecord:
        """Raises UnknownPlayer."""

    async def revoke(self, token_hash: bytes, every_credential: bool = False) -> int:
        """Revokes the credential (or every credential of its player), on every server at
        once; returns how many were live."""

    async def release_seat(self, game_id: str, seat: int, token_hash: bytes) -> GameRecord | None:
        """The seat's holder left: the seat held with `token_hash` (b"": whatever holds it) is
        vacant again, bound to no player. Returns the record, or None when the seat was not
        held so. Every server drops its cached record of the match."""

    async def hand_to_bot(self, game_id: str, seat: int, bot: str) -> GameRecord:
        """The seat's holder resigned: the server plays the seat with `bot` from now on (its
        token no longer acts), and the match is in the index of matches awaiting the server.
        Every server drops its cached record of the match."""


# -- in memory ---------------------------------------------------------------------------------


class MemoryPlayers:
    """The directory in this process's memory (tests, `memory:` stores); `games` are the
    store's match records, whose seats it releases or hands to a bot."""

    def __init__(self, games: dict[str, GameRecord] | None = None) -> None:
        self._games = games if games is not None else {}
        # Told the match whose record changed (`Repository.drop_record`).
        self.on_record: Callable[[str], None] | None = None
        self.names = NAMES
        self._players: dict[str, PlayerRecord] = {}
        self._external: dict[tuple[str, str], str] = {}
        # hash -> (player id, revoked)
        self._credentials: dict[bytes, tuple[str, bool]] = {}
        self._lock = asyncio.Lock()

    def _keep(self, player: PlayerRecord) -> None:
        self._players[player.player_id] = player
        self.names.put(player.player_id, player.display_name, player.colour)

    async def create_player(self, player: PlayerRecord, token_hash: bytes) -> PlayerRecord:
        async with self._lock:
            self._keep(player)
            self._credentials[token_hash] = (player.player_id, False)
        return player

    async def external_player(self, player: PlayerRecord, token_hash: bytes) -> tuple[PlayerRecord, bool]:
        assert player.oidc_issuer is not None and player.oidc_subject is not None
        async with self._lock:
            known = self._external.get((player.oidc_issuer, player.oidc_subject))
            created = known is None
            if known is None:
                self._keep(player)
                self._external[player.oidc_issuer, player.oidc_subject] = player.player_id
                known = player.player_id
            self._credentials[token_hash] = (known, False)
            return self._players[known], created

    async def add_credential(self, player_id: str, token_hash: bytes) -> None:
        self._credentials[token_hash] = (player_id, False)

    async def credential_player(self, token_hash: bytes) -> str | None:
        found = self._credentials.get(token_hash)
        return found[0] if found is not None and not found[1] else None

    async def get_player(self, player_id: str) -> PlayerRecord:
        try:
            return self._players[player_id]
        except KeyError:
            raise UnknownPlayer(player_id) from None

    async def learn_names(self, ids: Iterable[str | None]) -> None:
        for pid in self.names.missing(ids):
            if pid in self._players:
                self._keep(self._players[pid])

    async def rename(self, player_id: str, display_name: str) -> PlayerRecord:
        player = replace(await self.get_player(player_id), display_name=display_name)
        self._keep(player)
        return player

    async def revoke(self, token_hash: bytes, every_credential: bool = False) -> int:
        found = self._credentials.get(token_hash)
        if found is None:
            return 0
        pid = found[0]
        hashes = [h for h, (p, _) in self._credentials.items() if p == pid] if every_credential else [token_hash]
        revoked = 0
        for h in hashes:
            if not self._credentials[h][1]:
                revoked += 1
                self._credentials[h] = (pid, True)
        return revoked

    async def release_seat(self, game_id: str, seat: int, token_hash: bytes) -> GameRecord | None:
        game = self._games.get(game_id)
        if game is None:
            raise UnknownGame(game_id)
        held = game.token_hashes[seat] if 0 <= seat < game.seats else b""
        if not held or (token_hash and held != token_hash):
            return None
        hashes = list(game.token_hashes)
        hashes[seat] = b""
        bound = list(game.seat_players)
        if bound:
            bound[seat] = None
        released = replace(game, token_hashes=tuple(hashes), seat_players=tuple(bound) if any(bound) else ())
        self._games[game_id] = released
        if self.on_record is not None:
            self.on_record(game_id)
        return released

    async def hand_to_bot(self, game_id: str, seat: int, bot: str) -> GameRecord:
        game = self._games.get(game_id)
        if game is None:
            raise UnknownGame(game_id)
        hashes = list(game.token_hashes)
        hashes[seat] = b""
        bots = list(game.bots or ("",) * game.seats)
        bots[seat] = bot
        handed = replace(game, token_hashes=tuple(hashes), bots=tuple(bots))
        self._games[game_id] = handed
        if self.on_record is not None:
            self.on_record(game_id)
        return handed


# -- PostgreSQL ----------------------------------------------------------------------------------

_PLAYER_COLUMNS = "player_id, display_name, colour, created_at, oidc_issuer, oidc_subject"


def _player(row: tuple[object, ...]) -> PlayerRecord:
    return PlayerRecord(str(row[0]), str(row[1]), int(row[2]), row[3], row[4], row[5])  # type: ignore[arg-type, call-overload]


class PgPlayers:
    """The directory in the store's database; its notifications arrive on the store's LISTEN
    connection (`Database.player_notes`)."""

    def __init__(self, db: MatchRecords) -> None:
        self._db = db
        # Told the match whose record changed, on any server (`Repository.drop_record`).
        self.on_record: Callable[[str], None] | None = None
        self.names = NAMES
        # hash -> (player id, the listener's epoch when it was read)
        self._live: OrderedDict[bytes, tuple[str, int]] = OrderedDict()
        db.player_notes = self.heard

    # Notifications: `revoke:<hex hash>`, `revoke-player:<id>`, `name:<id>:<colour>:<name>`.
    def heard(self, payload: str) -> None:
        kind, _, rest = payload.partition(":")
        if kind == "revoke":
            self._live.pop(bytes.fromhex(rest), None)
        elif kind == "revoke-player":
            for h in [h for h, (p, _) in self._live.items() if p == rest]:
                del self._live[h]
        elif kind == "record":
            if self.on_record is not None:
                self.on_record(rest)
        elif kind == "name":
            pid, _, tail = rest.partition(":")
            colour, _, name = tail.partition(":")
            if pid in self.names._names:
                self.names.put(pid, name, int(colour))

    def _epoch(self) -> int | None:
        """The listener's epoch while it is connected (a cached credential read in the same
        epoch is still live), else None: read the database."""
        feed = self._db.feed
        return feed.epoch if feed.up and self._db.available else None

    def _remember(self, token_hash: bytes, player_id: str, epoch: int | None) -> None:
        if epoch is None:
            return
        self._live[token_hash] = (player_id, epoch)
        self._live.move_to_end(token_hash)
        while len(self._live) > CACHE_SIZE:
            self._live.popitem(last=False)

    async def create_player(self, player: PlayerRecord, token_hash: bytes) -> PlayerRecord:
        async def write(conn: psycopg.AsyncConnection) -> PlayerRecord:
            async with conn.transaction():
                cur = await conn.execute(
                    f"""INSERT INTO players (player_id, display_name, colour, oidc_issuer, oidc_subject)
                        VALUES (%s, %s, %s, %s, %s) RETURNING {_PLAYER_COLUMNS}""",
                    (player.player_id, player.display_name, player.colour, player.oidc_issuer, player.oidc_subject),
                )
                row = await cur.fetchone()
                await conn.execute(
                    "INSERT INTO player_credentials (token_hash, player_id) VALUES (%s, %s)",
                    (token_hash, player.player_id),
                )
                assert row is not None
                return _player(row)

        stored = await self._db._run(write)
        self.names.put(stored.player_id, stored.display_name, stored.colour)
        return stored

    async def external_player(self, player: PlayerRecord, token_hash: bytes) -> tuple[PlayerRecord, bool]:
        async def write(conn: psycopg.AsyncConnection) -> tuple[PlayerRecord, bool]:
            async with conn.transaction():
                cur = await conn.execute(
                    f"""INSERT INTO players (player_id, display_name, colour, oidc_issuer, oidc_subject)
                        VALUES (%s, %s, %s, %s, %s)
                        ON CONFLICT (oidc_issuer, oidc_subject) DO NOTHING RETURNING {_PLAYER_COLUMNS}""",
                    (player.player_id, player.display_name, player.colour, player.oidc_issuer, player.oidc_subject),
                )
                row = await cur.fetchone()
                created = row is not None
                if row is None:
                    cur = await conn.execute(
                        f"SELECT {_PLAYER_COLUMNS} FROM players WHERE oidc_issuer = %s AND oidc_subject = %s",
                        (player.oidc_issuer, player.oidc_subject),
                    )
                    row = await cur.fetchone()
                assert row is not None
                await conn.execute(
                    "INSERT INTO player_credentials (token_hash, player_id) VALUES (%s, %s)", (token_hash, row[0])
                )
                return _player(row), created

        stored, created = await self._db._run(write)
        self.names.put(stored.player_id, stored.display_name, stored.colour)
        return stored, created

    async def add_credential(self, player_id: str, token_hash: bytes) -> None:
        async def write(conn: psycopg.AsyncConnection) -> None:
            await conn.execute(
                "INSERT INTO player_credentials (token_hash, player_id) VALUES (%s, %s)", (token_hash, player_id)
            )

        await self._db._run(write)

    async def credential_player(self, token_hash: bytes) -> str | None:
        epoch = self._epoch()
        cached = self._live.get(token_hash)
        if cached is not None and epoch is not None and cached[1] == epoch:
            return cached[0]

        async def read(conn: psycopg.AsyncConnection) -> str | None:
            cur = await conn.execute(
                "SELECT player_id FROM player_credentials WHERE token_hash = %s AND revoked_at IS NULL",
                (token_hash,),
            )
            row = await cur.fetchone()
            return None if row is None else str(row[0])

        # The epoch is taken before the read: a revocation heard meanwhile voids the entry.
        found = await self._db._run(read)
        if found is not None:
            self._remember(token_hash, found, epoch)
        return found

    async def get_player(self, player_id: str) -> PlayerRecord:
        async def read(conn: psycopg.AsyncConnection) -> PlayerRecord:
            cur = await conn.execute(f"SELECT {_PLAYER_COLUMNS} FROM players WHERE player_id = %s", (player_id,))
            row = await cur.fetchone()
            if row is None:
                raise UnknownPlayer(player_id)
            return _player(row)

        found = await self._db._run(read)
        self.names.put(found.player_id, found.display_name, found.colour)
        return found

    async def learn_names(self, ids: Iterable[str | None]) -> None:
        missing = self.names.missing(ids)
        if missing:
            await self._db._run(lambda conn: self.learn_names_on(conn, missing))

    async def learn_names_on(self, conn: psycopg.AsyncConnection, ids: Iterable[str | None]) -> None:
        """`learn_names` on a connection the caller holds."""
        missing = self.names.missing(ids)
        if not missing:
            return
        cur = await conn.execute(
            "SELECT player_id, display_name, colour FROM players WHERE player_id = ANY(%s::uuid[])", (missing,)
        )
        for pid, name, colour in await cur.fetchall():
            self.names.put(str(pid), str(name), int(colour))

    async def rename(self, player_id: str, display_name: str) -> PlayerRecord:
        async def write(conn: psycopg.AsyncConnection) -> PlayerRecord:
            async with conn.transaction():
                cur = await conn.execute(
                    f"UPDATE players SET display_name = %s WHERE player_id = %s RETURNING {_PLAYER_COLUMNS}",
                    (display_name, player_id),
                )
                row = await cur.fetchone()
                if row is None:
                    raise UnknownPlayer(player_id)
                found = _player(row)
                await conn.execute(
                    "SELECT pg_notify(%s, %s)",
                    (PLAYERS_CHANNEL, f"name:{found.player_id}:{found.colour}:{found.display_name}"),
                )
                return found

        found = await self._db._run(write)
        self.names.put(found.player_id, found.display_name, found.colour)
        return found

    async def revoke(self, token_hash: bytes, every_credential: bool = False) -> int:
        async def write(conn: psycopg.AsyncConnection) -> tuple[int, str]:
            async with conn.transaction():
                if every_credential:
                    cur = await conn.execute(
                        """UPDATE player_credentials SET revoked_at = now()
                           WHERE player_id = (SELECT player_id FROM player_credentials WHERE token_hash = %s)
                             AND revoked_at IS NULL
                           RETURNING player_id""",
                        (token_hash,),
                    )
                    rows = await cur.fetchall()
                    note = f"revoke-player:{rows[0][0]}" if rows else ""
                else:
                    cur = await conn.execute(
                        """UPDATE player_credentials SET revoked_at = now()
                           WHERE token_hash = %s AND revoked_at IS NULL RETURNING player_id""",
                        (token_hash,),
                    )
                    rows = await cur.fetchall()
                    note = f"revoke:{token_hash.hex()}" if rows else ""
                if note:
                    await conn.execute("SELECT pg_notify(%s, %s)", (PLAYERS_CHANNEL, note))
                return len(rows), note

        revoked, note = await self._db._run(write)
        self.heard(note or f"revoke:{token_hash.hex()}")  # this server at once, not at the echo
        return revoked

    async def release_seat(self, game_id: str, seat: int, token_hash: bytes) -> GameRecord | None:
        async def write(conn: psycopg.AsyncConnection) -> bool:
            async with conn.transaction():
                cur = await conn.execute(
                    """UPDATE games SET token_hashes[%(i)s] = ''::bytea,
                           seat_players = CASE WHEN cardinality(seat_players) = 0 THEN seat_players
                               ELSE (SELECT array_agg(CASE WHEN n = %(i)s THEN NULL ELSE seat_players[n] END
                                                      ORDER BY n)
                                     FROM generate_series(1, seats) AS n) END
                       WHERE game_id = %(g)s AND %(i)s BETWEEN 1 AND seats AND token_hashes[%(i)s] <> ''::bytea
                         AND (%(h)s = ''::bytea OR token_hashes[%(i)s] = %(h)s)
                       RETURNING game_id""",
                    {"i": seat + 1, "g": game_id, "h": token_hash},
                )
                released = await cur.fetchone() is not None
                if released:
                    await conn.execute("SELECT pg_notify(%s, %s)", (PLAYERS_CHANNEL, f"record:{game_id}"))
                return released

        released = await self._db._run(write)
        if not released:
            await self._db.get_game(game_id)  # UnknownGame when there is no match
            return None
        return await self._db.get_game(game_id)

    async def hand_to_bot(self, game_id: str, seat: int, bot: str) -> GameRecord:
        async def write(conn: psycopg.AsyncConnection) -> None:
            async with conn.transaction():
                await conn.execute(
                    """UPDATE games SET token_hashes[%(i)s] = ''::bytea, clock_running = true,
                           bots = (SELECT array_agg(CASE WHEN n = %(i)s THEN %(b)s ELSE coalesce(bots[n], '') END
                                                    ORDER BY n)
                                   FROM generate_series(1, seats) AS n)
                       WHERE game_id = %(g)s AND %(i)s BETWEEN 1 AND seats""",
                    {"i": seat + 1, "g": game_id, "b": bot},
                )
                await conn.execute("SELECT pg_notify(%s, %s)", (PLAYERS_CHANNEL, f"record:{game_id}"))

        await self._db._run(write)
        return await self._db.get_game(game_id)
