"""The parts of `sharded.ShardedStore` that span shards: the freshness feed fed by every
shard's LISTEN connection, the player directory (the directory database's, with the seat
changes written where the match lives) and the ratings (the directory's, with the unrated
ranked matches looked up on every shard)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from tablier.store.base import GameRecord
from tablier.store.feed import Mark, NoteFeed
from tablier.store.players import NameBook, PgPlayers, PlayerRecord

if TYPE_CHECKING:
    from tablier.store.postgres import PostgresStore
    from tablier.store.sharded import ShardedStore

log = logging.getLogger(__name__)


class SharedFeed(NoteFeed):
    """One feed heard from several LISTEN connections, one per shard (`FeedSource`).

    Nothing is current while any source is down: a mark is None then, and a source lost or
    reconnected voids every mark taken before (a new epoch). Tracking freshness per shard would
    keep the other shards' cached states current through one shard's outage, but it needs a
    mark per shard, which `EventLog.mark()` (taken before the match is known) cannot carry;
    the cost of this choice is bounded: while a shard is down, reads of the other shards' matches
    check the database (as a server without a feed always does), and are still served. Game ids
    are unique across shards, so one table of what was heard serves them all."""

    def __init__(self) -> None:
        super().__init__()
        self._sources: list[FeedSource] = []

    def source(self) -> FeedSource:
        """A new source, down until its LISTEN connection is up (so nothing is current until
        the new shard is heard)."""
        src = FeedSource(self)
        self._sources.append(src)
        self.changed()
        return src

    def changed(self) -> None:
        self.epoch += 1
        self.up = all(s.up for s in self._sources)

    def connected(self) -> None:  # the sources' business
        raise NotImplementedError

    def lost(self) -> None:
        """Closing: nothing is current any more."""
        self.epoch += 1
        self.up = False


class FeedSource(NoteFeed):
    """One shard's LISTEN connection, as its `Database.feed`: what it hears goes to the shared
    feed; `epoch` and `up` are its own (a shard's cached credentials follow its connection)."""

    def __init__(self, shared: SharedFeed) -> None:
        super().__init__(capacity=0)
        self._shared = shared

    def mark(self) -> Mark | None:
        return self._shared.mark()

    def current(self, game_id: str, seq: int, mark: Mark | None) -> bool:
        return self._shared.current(game_id, seq, mark)

    def heard(self, game_id: str, seq: int) -> None:
        self._shared.heard(game_id, seq)

    def connected(self) -> None:
        super().connected()
        self._shared.changed()

    def void(self) -> None:
        super().void()
        self._shared.changed()

    def lost(self) -> None:
        was = self.up
        super().lost()
        if was:
            self._shared.changed()


class ShardedPlayers:
    """The directory database's players (`PgPlayers`); a seat left or handed to a bot is
    written on the match's shard, whose notification tells every server (`on_record`)."""

    def __init__(self, store: ShardedStore, directory: PgPlayers) -> None:
        self._store = store
        self._directory = directory
        self.names: NameBook = directory.names
        self._on_record: Callable[[str], None] | None = None

    @property
    def on_record(self) -> Callable[[str], None] | None:
        return self._on_record

    @on_record.setter
    def on_record(self, value: Callable[[str], None] | None) -> None:
        self._on_record = value
        for shard in self._store.shards.values():
            shard.players.on_record = value

    def joined(self, shard: PostgresStore) -> None:
        """A shard opened after `on_record` was set."""
        shard.players.on_record = self._on_record

    async def create_player(self, player: PlayerRecord, token_hash: bytes) -> PlayerRecord:
        return await self._directory.create_player(player, token_hash)

    async def external_player(self, player: PlayerRecord, token_hash: bytes) -> tuple[PlayerRecord, bool]:
        return await self._directory.external_player(player, token_hash)

    async def add_credential(self, player_id: str, token_hash: bytes) -> None:
        await self._directory.add_credential(player_id, token_hash)

    async def credential_player(self, token_hash: bytes) -> str | None:
        return await self._directory.credential_player(token_hash)

    async def get_player(self, player_id: str) -> PlayerRecord:
        return await self._directory.get_player(player_id)

    async def learn_names(self, ids: Iterable[str | None]) -> None:
        await self._directory.learn_names(ids)

    async def rename(self, player_id: str, display_name: str) -> PlayerRecord:
        return await self._directory.rename(player_id, display_name)

    async def revoke(self, token_hash: bytes, every_credential: bool = False) -> int:
        return await self._directory.revoke(token_hash, every_credential)

    async def release_seat(self, game_id: str, seat: int, token_hash: bytes) -> GameRecord | None:
        name, shard = await self._store.locate(game_id)
        with self._store.naming(name):
            record = await shard.players.release_seat(game_id, seat, token_hash)
        if record is not None:
            await self._directory.learn_names(record.seat_players)
        return record

    async def hand_to_bot(self, game_id: str, seat: int, bot: str) -> GameRecord:
        name, shard = await self._store.locate(game_id)
        with self._store.naming(name):
            record = await shard.players.hand_to_bot(game_id, seat, bot)
        await self._directory.learn_names(record.seat_players)
        return record
