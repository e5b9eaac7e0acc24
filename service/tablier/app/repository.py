"""The repository of matches: the one door of the application to the event store, as the
eventsourcing library's `Repository` serves an `Application`. Nothing else in `app/` touches
the store.

* `get` (and `get_at`, `events`, `page`, `watch`): reads. A match record and its state, loaded
  from the log and checked (`integrity`), kept in the cache; they tell nobody and start nothing.
* `create`, `claim_seat`, `save`: commands. What the core decided, appended to the log at the
  next seq (`save`), and the new state cached.
* `resume`: a match looked at again by the server that runs its waits: at start-up (every match
  in the store's index of waits, `resume_all`), and when it takes over from a server that
  stopped (a watch feed saw a bot seat awaited, a timer's command failed).

Only `save`, `create` and `resume` tell the `on_state` listeners (the scheduler's timers, clocks
and bot seats); `on_seen` hears every state a watch feed applied from the log.

It keeps what makes loads cheap and safe: the cache of states at their last seq, the snapshots
at past seqs, the verified chain head of each cached state, the match records that no longer
change, and the matches refused for a damaged log.

Reads (`get`) take a cached state without asking the database while the store's feed of
appends says it is still the latest (`EventLog.current`: for PostgreSQL, no notification of a
later seq since the state was read or written, with the listener connected all along), and at
least the seq the client asks for (`min_seq`); otherwise, and always without a feed, they load
it as `load` does. Commands `load`: they check the log whenever they read it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NoReturn

from tablier import _core, integrity
from tablier._core import Match
from tablier.integrity import chained_input
from tablier.seeds import SeedUnreadable
from tablier.store.base import (
    Appended,
    ChainBroken,
    CommandInput,
    EventStore,
    GameRecord,
    NewEvent,
    SeqConflict,
    StoredCommand,
    StoredEvent,
    UnknownGame,
    genesis_hash,
    stored_state_hash,
)
from tablier.store.feed import Mark

from .cache import MatchCache, Snapshots
from .catalogue import Catalogue
from .clocks import apply_stored
from .errors import Conflict, DataLoss, MatchNotFound
from .model import parse_game_id

if TYPE_CHECKING:
    from tablier.witness import Witness

log = logging.getLogger(__name__)

# Replays of more events than this run in a thread: at tens of microseconds an event (checked),
# shorter ones cost less than the thread hop.
_INLINE_REPLAY = 128

# (match record, seq, the match's state there): never change the state.
StateListener = Callable[[GameRecord, int, Match], None]
# Awaited before an append whose events end the match (`Repository.before_end`).
EndingListener = Callable[[GameRecord], Awaitable[None]]


def _damaged(game: GameRecord, seq: int, why: str) -> DataLoss:
    return DataLoss(f"the event log of match {game.game_id} is damaged at seq {seq}: {why}", seq=seq)


def _replay_checked(
    game: GameRecord,
    events: list[StoredEvent],
    match: Match,
    prev_chain: bytes | None = None,
    after_seq: int = 0,
    check_opening: bool = True,
) -> bytes:
    """`integrity.replay_strict`, its first problem as DataLoss."""
    try:
        return integrity.replay_strict(game, events, match, prev_chain, after_seq, check_opening)
    except integrity.Damaged as exc:
        raise _damaged(game, exc.problem.seq, exc.problem.why) from None


class Repository:
    def __init__(self, store: EventStore, catalogue: Catalogue | None = None, cache_size: int = 1024) -> None:
        self._store = store
        self.catalogue = catalogue or Catalogue()
        self.cache = MatchCache(cache_size)
        self.snapshots = Snapshots()
        self.records: OrderedDict[str, GameRecord] = OrderedDict()
        # Chain hash of the last event of each cached state, as verified (see `load`).
        self._heads: OrderedDict[str, tuple[int, bytes]] = OrderedDict()
        # The store's mark (`EventLog.mark`) taken before each cached state was read or written.
        self._marks: dict[str, Mark | None] = {}
        # Reads answered from the cache without asking the store, and those that asked it.
        self.reads_cached = 0
        self.reads_loaded = 0
        # Matches answered from the held state since the last recheck (`recheck`), and the
        # task that rechecks them (`start_rechecks`).
        self._answered_held: set[str] = set()
        # Matches some of whose held events were answered (`get_at`) since the last recheck.
        self._events_held: set[str] = set()
        self._rechecks: asyncio.Task[None] | None = None
        self.rechecked = 0
        # Matches whose log failed its checks, refused until restart; and how many failed.
        self.damaged: dict[str, DataLoss] = {}
        # The witness of match heads outside the database (`tablier.witness.Witness`): told of
        # every verified head, asked on a cold load. None: no witness.
        self.witness: Witness | None = None
        self.integrity_failures = 0
        self._on_state: list[StateListener] = []
        self._on_seen: list[StateListener] = []
        self._before_end: list[EndingListener] = []

    def before_end(self, listener: EndingListener) -> None:
        """Awaits `listener` before each append whose events end the match (the state after
        them is over, the state before not): what it writes survives a server that stops just
        after the append. Should the append then fail, the match did not end there."""
        self._before_end.append(listener)

    def on_state(self, listener: StateListener) -> None:
        """Calls `listener` with each state saved (`save`, `create`) or resumed (`resume`);
        never with a state a read or a command's load found."""
        self._on_state.append(listener)

    def on_seen(self, listener: StateListener) -> None:
        """Calls `listener` with each state a watch feed of this process applied (`seen`)."""
        self._on_seen.append(listener)

    def seen(self, game: GameRecord, seq: int, match: Match) -> None:
        """A watch feed applied the match's new events, appended by any server, up to `seq`."""
        for listener in self._on_seen:
            listener(game, seq, match)

    # ----------------------------------------------------------------- records

    async def game(self, game_id: str) -> GameRecord:
        """The match record. A record changes only while it has vacant seats (a join fills
        one, possibly through another server): those are read afresh, the others cached."""
        # A cached record is keyed by its id's canonical form: an id found as given is canonical.
        key = game_id if game_id in self.records else parse_game_id(game_id)
        record = self.records.get(key)
        if record is not None:
            self.records.move_to_end(key)
            return record
        failure = self.damaged.get(key)
        if failure is not None:
            raise failure
        try:
            record = await self._store.get_game(key)
        except UnknownGame:
            raise MatchNotFound(f"no match {game_id}") from None
        except SeedUnreadable as exc:
            self.unreadable_seed(exc, key)
        self._keep_record(record)
        return record

    def drop_record(self, gid: str) -> None:
        """A record changed after no seat was vacant (a seat left or handed to a bot, through any
        server): it is read afresh."""
        self.records.pop(gid, None)

    async def release_seat(self, game: GameRecord, seat: int, token_hash: bytes) -> GameRecord | None:
        """`PlayerDirectory.release_seat`: the seat's holder left, the seat is vacant again."""
        released = await self._store.players.release_seat(game.game_id, seat, token_hash)
        self.drop_record(game.game_id)
        return released

    async def hand_to_bot(self, game: GameRecord, seat: int, bot: str) -> GameRecord:
        """`PlayerDirectory.hand_to_bot`, then the match resumed: the server plays the seat."""
        handed = await self._store.players.hand_to_bot(game.game_id, seat, bot)
        self.drop_record(game.game_id)
        self._keep_record(handed)
        await self.resume(handed)
        return handed

    def _keep_record(self, record: GameRecord) -> None:
        """Caches a record once no seat of it is vacant (it no longer changes)."""
        if any(record.vacant(s) for s in range(record.seats)):
            return
        self.records[record.game_id] = record
        while len(self.records) > self.cache.capacity:
            self.records.popitem(last=False)

    # ----------------------------------------------------------------- states

    def blank(self, game: GameRecord) -> Match:
        return Match(game.game_type, game.seats, dict(game.options))

    def cached(self, gid: str) -> tuple[int, Match] | None:
        """The cached state at the verified head, if there is one (read it, never change it)."""
        entry = self.cache.get(gid)
        head = self._heads.get(gid)
        return entry if entry is not None and head is not None and head[0] == entry[0] else None

    def keep_checked(self, gid: str, events: list[StoredEvent]) -> None:
        """Holds `events`, read from the log and checked by the caller (`checked_step`), as
        the match's last events when they end at its verified head (`Snapshots.keep_events`):
        a match whose held events made room for others' gets them back from a watch's catch-up."""
        head = self._heads.get(gid)
        if events and head is not None and events[-1].seq == head[0] and events[-1].chain_hash == head[1]:
            self.snapshots.keep_events(gid, events)

    def vouch_held(self, gid: str, after_seq: int, upto_seq: int) -> bool:
        """Whether the events after `after_seq` up to `upto_seq` are still held as verified
        (`keep_checked`); if so, an answer built from them stands, and the next `recheck`
        reads them again in the database as if they had been read (`get_at`)."""
        if not self.snapshots.holds(gid, after_seq, upto_seq):
            return False
        self._answered_held.add(gid)
        self._events_held.add(gid)
        return True

    def _current_seq(self, gid: str) -> int | None:
        """The seq of the verified head while the store's feed says it is still the match's
        latest (`EventLog.current`, as `get` asks it), else None: for a watch's first seq."""
        head = self._heads.get(gid)
        if head is None or gid in self.damaged or not self._store.current(gid, head[0], self._marks.get(gid)):
            return None
        return head[0]

    def _forget(self, gid: str) -> None:
        """Drops the cached state: the next `load` checks the whole log again."""
        self.cache.drop(gid)
        self._heads.pop(gid, None)
        self._marks.pop(gid, None)

    async def _replay(self, game: GameRecord, upto_seq: int | None = None) -> Match:
        """The match replayed from its first event, unchecked (for comparisons in tests and tools)."""
        match = self.blank(game)
        stored = await self._store.load_events(game.game_id, upto_seq=upto_seq)

        def replay() -> None:
            for ev in stored:
                apply_stored(match, ev)

        await asyncio.to_thread(replay)
        return match

    async def get_at(
        self, game: GameRecord, seq: int, then: int | None = None
    ) -> tuple[Match, bytes | None, list[StoredEvent]]:
        """The match at a past `seq` (at most the verified head) and the chain hash there (None
        at 0), for the caller to change as it likes; with `then`, also the stored events after
        `seq` up to `then`, read in the same query (unchecked: the caller checks them as it
        applies them). Starts from the nearest snapshot at or before `seq` (else from the first
        event) and checks every event after it, chained to the snapshot's verified chain hash
        (integrity.replay_checked), and equal to the verified head when it reaches it, leaving
        snapshots on the way; DataLoss refuses the match."""
        gid = game.game_id
        verified = self._heads.get(gid)
        snap = self.snapshots.before(gid, seq)
        if snap is None:
            at, match, chain = 0, self.blank(game), None
        else:
            at, base, chain = snap
            match = base.copy()
        upto = seq if then is None else max(then, seq)
        if at == upto:
            self._check_head(game, verified, seq, chain)
            return match, chain, []
        events = self.snapshots.events(gid, at, upto)
        if events is not None:
            # Verified when held: the recheck reads them again in the database within its
            # bound and compares them, as it checks a state answered from the cache (`get`).
            self._answered_held.add(gid)
            self._events_held.add(gid)
        else:
            events = await self._store.load_events(gid, after_seq=at, upto_seq=upto)
        cut = next((i for i, ev in enumerate(events) if ev.seq > seq), len(events))
        events, later = events[:cut], events[cut:]
        if at == seq:
            self._check_head(game, verified, seq, chain)
            return match, chain, later
        step = self.snapshots.every

        def replay() -> list[tuple[int, Match, bytes]]:
            nonlocal at, chain
            kept = []
            for i in range(0, len(events), step):
                chunk = events[i : i + step]
                chain = _replay_checked(game, chunk, match, chain, at, False)
                at = chunk[-1].seq
                if at < seq:
                    kept.append((at, match.copy(), chain))
            if at != seq:
                raise _damaged(game, at + 1, f"the log ends at seq {at}, before seq {seq}")
            return kept

        try:
            # Tens of microseconds an event: a long replay runs in a thread.
            kept = replay() if len(events) <= _INLINE_REPLAY else await asyncio.to_thread(replay)
        except DataLoss as exc:
            self._refuse(gid, exc)
        self._check_head(game, verified, seq, chain)
        for snap in kept:
            self.snapshots.offer(gid, *snap)
        if chain is not None:
            # The next read at this seq (a replay viewer, a past GetView) starts here.
            self.snapshots.keep_read(gid, seq, match.copy(), chain)
        return match, chain, later

    def _check_head(self, game: GameRecord, verified: tuple[int, bytes] | None, seq: int, chain: bytes | None) -> None:
        """DataLoss (the match refused) when a state replayed to `seq` does not end at the chain
        hash `verified` there (the head as it was before the replay)."""
        if verified is not None and verified[0] == seq and chain != verified[1]:
            self._refuse(game.game_id, _damaged(game, seq, "the log was rewritten after it was verified"))

    async def get(self, game: GameRecord, min_seq: int | None = None) -> tuple[int, Match]:
        """The match at its last seq, for a read: the cached state when the store's feed says
        it is still the latest (`EventLog.current`) and it is at least at `min_seq` (a seq the
        client saw, e.g. from a write through another server), without a database round trip;
        else `load` (which brings it forward, or finds it damaged). A state below `min_seq`
        is never answered from the cache: the database is asked (it has that seq once any
        server acknowledged it); should it not have it either, the state returned is still
        below `min_seq` and the caller says so."""
        gid = game.game_id
        entry = self.cache.peek(gid)
        head = self._heads.get(gid)
        if (
            entry is not None
            and head is not None
            and head[0] == entry[0]
            and (min_seq is None or entry[0] >= min_seq)
            and gid not in self.damaged
            and self._store.current(gid, entry[0], self._marks.get(gid))
        ):
            self.cache.get(gid)  # counted as a hit, kept as recently used
            self.reads_cached += 1
            self._answered_held.add(gid)
            return entry
        self.reads_loaded += 1
        return await self.load(game)

    async def recheck(self) -> int:
        """Checks again, in the database, the last events of every match answered from the held
        state since the last call (`get` trusts the feed of appends, which says nothing of a
        row changed in place): `load` reads the anchor and what follows it, as any read did
        before the feed, and the held events a watch's catch-up was answered from are read
        again and compared with what this server verified. A changed row is DataLoss, the match
        refused from then on. Returns how many matches were found damaged; a match whose check
        could not run (the database down) is checked again next time."""
        pending, self._answered_held = self._answered_held, set()
        events_held, self._events_held = self._events_held, set()
        damaged = 0
        for gid in pending:
            cached = self.cache.peek(gid) is not None
            if gid in self.damaged or not (cached or gid in events_held):
                continue
            try:
                game = await self.game(gid)
                if cached:
                    await self.load(game)
                if gid in events_held:
                    await self._recheck_events(game)
                self.rechecked += 1
            except DataLoss:
                damaged += 1
            except Exception as exc:  # a store error: not this match's fault, tried again
                log.warning("could not recheck match %s: %s", gid, exc)
                self._answered_held.add(gid)
                if gid in events_held:
                    self._events_held.add(gid)
        return damaged

    async def _recheck_events(self, game: GameRecord) -> None:
        """The match's held events (`Snapshots.events`) against the log's rows at their seqs:
        DataLoss at the first that differs or is gone."""
        gid = game.game_id
        held = self.snapshots.held_events(gid)
        if not held:
            return
        stored = await self._store.load_events(gid, after_seq=held[0].seq - 1, upto_seq=held[-1].seq)
        for i, ev in enumerate(held):
            if i >= len(stored) or stored[i] != ev:
                self._refuse(gid, _damaged(game, ev.seq, "the log changed under the events this server verified"))

    def start_rechecks(self, every: float) -> None:
        """Runs `recheck` every `every` seconds until `close`: a row changed under a held state
        is refused at most about `every` seconds (plus one check) after it changed."""

        async def run() -> None:
            while True:
                await asyncio.sleep(every)
                await self.recheck()

        self._rechecks = asyncio.get_running_loop().create_task(run(), name="recheck-held-states")

    async def close(self) -> None:
        if self._rechecks is not None:
            self._rechecks.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._rechecks
            self._rechecks = None

    async def load(self, game: GameRecord) -> tuple[int, Match]:
        """The match at its last seq. A match loaded cold is replayed with every event checked
        (integrity.replay_checked, check_commands). A cached state is trusted only while the log
        still holds the event it was verified at, with the state hash and chain hash seen then;
        newer events are checked from that chain head. Anything else is DataLoss: logged,
        counted, and the match refused by this process from then on. Tells nobody: a command
        decides on the state and `save`s what it decided; a read only reads."""
        gid = game.game_id
        failure = self.damaged.get(gid)
        if failure is not None:
            raise failure
        try:
            return await self._load_checked(game)
        except DataLoss as exc:
            self._refuse(gid, exc)

    def unreadable_seed(self, exc: SeedUnreadable, gid: str = "") -> NoReturn:
        """A sealed seed that no longer opens (changed, another match's, a key this server lacks),
        found by any read of the match record, warm or cold: DataLoss at seq 0 with its reason
        (SEED_TAMPERED, SEED_KEY_UNKNOWN), and the match refused from then on."""
        gid = gid or exc.game_id
        failure = DataLoss(str(exc), exc.reason, seq=0)
        if not gid:
            raise failure from None
        self._refuse(gid, failure)

    def _refuse(self, gid: str, exc: DataLoss) -> NoReturn:
        """Refuses the match from now on (until this process restarts), logs and counts it once
        (a recheck and a read may find the same damage together)."""
        first = gid not in self.damaged
        self.damaged.setdefault(gid, exc)
        if first:
            self.integrity_failures += 1
        self.cache.drop(gid)
        self.snapshots.drop(gid)
        self._heads.pop(gid, None)
        self._marks.pop(gid, None)
        self.records.pop(gid, None)
        if first:
            log.error("refusing match %s: %s", gid, exc.message)
        raise exc

    async def _load_checked(self, game: GameRecord) -> tuple[int, Match]:
        gid = game.game_id
        # Taken before the store is read: a later append is either in what is read or heard of.
        mark = self._store.mark()
        entry = self.cache.get(gid)
        head = self._heads.get(gid)
        rewritten = None
        if entry is not None and head is not None and head[0] == entry[0]:
            cached_seq, cached = entry
            # The event before the cached seq too: its chain hash and the anchor's content must
            # give the verified head again, so a change to the anchor is seen.
            stored = await self._store.load_events(gid, after_seq=max(cached_seq - 2, 0))
            if cached_seq >= 2 and stored and stored[0].seq == cached_seq - 1:
                prev_chain, stored = stored[0].chain_hash, stored[1:]
            else:
                prev_chain = genesis_hash(game)
            anchor, newer = (stored[0], stored[1:]) if cached_seq > 0 and stored else (None, stored)
            trusted = cached_seq == 0 or (
                anchor is not None
                and anchor.seq == cached_seq
                and anchor.chain_hash == head[1]
                and integrity.event_chain(game, prev_chain, anchor) == head[1]
                and (
                    anchor.core_version != _core.CORE_VERSION
                    or anchor.state_hash == stored_state_hash(game, cached.state_hash())
                )
            )
            if trusted:
                if not newer:
                    self._marks[gid] = mark
                    return cached_seq, cached
                forward = cached.copy()
                last_chain = await asyncio.to_thread(_replay_checked, game, newer, forward, head[1], cached_seq)
                self._remember(game, newer[-1].seq, forward, last_chain, mark, newer)
                return newer[-1].seq, forward
            log.error("the log of %s changed under the state verified at seq %d: checking it whole", gid, cached_seq)
            rewritten = head
            self.cache.drop(gid)
            self._heads.pop(gid, None)
            self._marks.pop(gid, None)
        # Commands before and after the events (see integrity.check_commands): other servers
        # may append meanwhile.
        commands = await self._store.commands(gid)
        stored = await self._store.load_events(gid)
        match = self.blank(game)
        last_chain = await asyncio.to_thread(_replay_checked, game, stored, match)
        known = {c.command_id for c in commands}
        later = (
            await self._store.commands(gid)
            if any(e.command_id is not None and e.command_id not in known for e in stored)
            else commands
        )
        mismatch = integrity.check_commands(stored, commands, later)
        if mismatch is not None:
            raise _damaged(game, mismatch.seq, mismatch.why)
        seq = stored[-1].seq if stored else 0
        witnessed = await self.witness.head(gid) if self.witness is not None else None
        if witnessed is not None:
            if seq < witnessed[0]:
                raise _damaged(
                    game, seq + 1, f"the witness saw the log at seq {witnessed[0]}; it now ends at seq {seq}"
                )
            if witnessed[0] > 0 and stored[witnessed[0] - 1].chain_hash != witnessed[1]:
                raise _damaged(game, witnessed[0], "the log differs from the head the witness saw there")
        if rewritten is not None:
            if seq < rewritten[0]:
                raise _damaged(game, seq + 1, f"this server served seq {rewritten[0]}; the log now ends at seq {seq}")
            if stored[rewritten[0] - 1].chain_hash != rewritten[1]:
                # Consistent in itself, but not the log this server verified: rewritten whole.
                raise _damaged(game, rewritten[0], "the log was rewritten after this server verified it")
            # Else the log is the one verified and the cached state was wrong: the log wins.
        self._remember(game, seq, match, last_chain, mark, stored[-self.snapshots.tail :])
        return seq, match

    # ----------------------------------------------------------------- commands

    async def create(self, record: GameRecord, events: list[NewEvent], match: Match) -> tuple[list[StoredEvent], Match]:
        """Stores a new match and its opening events (decided on `match`), caches the state
        after them and tells the `on_state` listeners. Returns the stored events and that state."""
        mark = self._store.mark()
        stored = await self._store.create_game(record, events)
        self._keep_record(record)  # its first move need not read it back
        if match.clock() is not None:
            # The clock starts at the recorded time of the opening events.
            match = self.blank(record)
            for ev in stored:
                apply_stored(match, ev)
        seq = stored[-1].seq if stored else 0
        chain = stored[-1].chain_hash if stored else genesis_hash(record)
        self._remember(record, seq, match, chain, mark, stored, tell=True)
        return stored, match

    async def claim_seat(
        self, game: GameRecord, seat: int, token_hash: bytes, player_id: str | None = None
    ) -> GameRecord | None:
        """`EventStore.claim_seat`: the record with `seat` held (bound to `player_id` when
        given), or None when it was not vacant."""
        claimed = await self._store.claim_seat(game.game_id, seat, token_hash, player_id)
        if claimed is not None:
            self._keep_record(claimed)
        return claimed

    async def save(
        self,
        game: GameRecord,
        seq: int,
        before: Match,
        after: Match,
        events: list[NewEvent],
        command_id: str,
        given: CommandInput,
    ) -> tuple[Appended, Match]:
        """Appends `events` (decided on `before`, the state at `seq`, and applied to `after`)
        at seq+1, and once the append committed caches the new state and tells the `on_state`
        listeners. Returns what the store gave (`written` False: the command id was used before,
        these are its first events, nothing was cached) and the state after them (the clock
        stepped with the recorded times). SeqConflict when the match is no longer at seq."""
        if self._before_end and after.is_over() and not before.is_over():
            for ending in self._before_end:
                await ending(game)
        mark = self._store.mark()  # before the append: a later one is either seen or heard of
        try:
            stored = await self._store.append(
                game.game_id, seq, events, command_id, given, chained_input(game.hash_scheme, command_id, given)
            )
        except ChainBroken:
            # The log lost or changed the event this state was verified at: `load` names the
            # damage (DataLoss); if it finds none, the log simply moved on.
            await self.load(game)
            raise SeqConflict(f"{game.game_id} is no longer at seq {seq}") from None
        if not stored.written:
            return stored, after
        if after.clock() is not None:
            # The clock steps with the recorded times, known only now.
            after = before.copy()
            for ev in stored:
                apply_stored(after, ev)
        self._remember(game, stored[-1].seq, after, stored[-1].chain_hash, mark, stored, tell=True)
        return stored, after

    async def command_events(self, gid: str, command_id: str) -> list[StoredEvent] | None:
        """The events a command id wrote in the match, or None if it is new there."""
        return await self._store.command_events(gid, command_id)

    async def command(self, gid: str, command_id: str) -> StoredCommand | None:
        """The `commands` row of a command id in the match (what it asked), or None."""
        return next((c for c in await self._store.commands(gid) if c.command_id == command_id), None)

    async def state_after(self, game: GameRecord, prior: list[StoredEvent]) -> Match:
        """The state after a command's first events (`command_events`), for answering its
        retry: the cached one when it is still there, else replayed. An acknowledged command
        whose events are gone is DataLoss: it is never applied again as new."""
        if not prior:
            seq = await self._store.last_seq(game.game_id) + 1
            raise _damaged(game, seq, "the events of an acknowledged command are missing")
        last = prior[-1].seq
        entry = self.cache.get(game.game_id)
        return entry[1] if entry is not None and entry[0] == last else await self._replay(game, upto_seq=last)

    # ----------------------------------------------------------------- resume

    async def resume(self, game: GameRecord) -> tuple[int, Match]:
        """Loads the match (`load`) and tells the `on_state` listeners of its state, new or not:
        the server takes up its waits (a starting server, or one taking over from another)."""
        seq, match = await self.load(game)
        for listener in self._on_state:
            listener(game, seq, match)
        return seq, match

    async def resume_all(self) -> None:
        """Resumes every match in the store's index of matches awaiting the server (a clock, a
        core timer or a bot seat: `GameRecord.clocked`), as a starting server does. A match
        that fails is logged and left to its next command."""
        if hasattr(self._store, "on_resume"):
            # A shard opened later (down when the server started): its waits too (`sharded`).
            self._store.on_resume = self.resume_ids
        try:
            waiting = await self._store.running_clocks()
        except Exception:
            log.exception("could not list the matches awaiting the server")
            return
        await self.resume_ids(waiting)

    async def resume_ids(self, waiting: list[str]) -> None:
        """`resume_all` for these matches (a shard opened after the server started, its
        `running_clocks`: `store.sharded`)."""
        for gid in waiting:
            try:
                await self.resume(await self.game(gid))
            except DataLoss:
                # A damaged log is refused, and said so once (`_refuse`), not a server fault.
                continue
            except Exception:
                log.exception("could not resume match %s", gid)

    async def settled(self, gid: str) -> None:
        """The match is over: the index of matches awaiting the server drops it."""
        await self._store.clock_stopped(gid)

    # ----------------------------------------------------------------- reads

    async def page(
        self,
        limit: int,
        game_type: str | None,
        before: tuple[datetime, str] | None,
        player_id: str | None = None,
        parent: str | None = None,
    ) -> list[GameRecord]:
        """A lobby's page of match records (`MatchDirectory.game_page`: no seeds), of one
        player's matches when `player_id` is given, that match's forks only with `parent`."""
        return await self._store.game_page(limit, game_type, before, player_id, parent)

    async def prefix(self, game: GameRecord, seq: int) -> tuple[list[StoredEvent], StoredEvent | None]:
        """The match's stored events 1..`seq` and the one after it (None at the end), read and
        not yet checked: what a fork starts from (`replay_prefix` checks them)."""
        stored = await self._store.load_events(game.game_id, upto_seq=seq + 1)
        return [ev for ev in stored if ev.seq <= seq], next((ev for ev in stored if ev.seq == seq + 1), None)

    async def replay_prefix(self, game: GameRecord, events: list[StoredEvent]) -> tuple[Match, bytes]:
        """`events`, the match's from seq 1 (`prefix`), replayed with every check a cold load
        makes (`integrity.replay_strict`): the state after them and its chain hash. DataLoss
        refuses the match."""
        match = self.blank(game)
        try:
            chain = await asyncio.to_thread(_replay_checked, game, events, match)
        except DataLoss as exc:
            self._refuse(game.game_id, exc)
        return match, chain

    async def commands(self, gid: str) -> list[StoredCommand]:
        """Every command of the match, with what it asked."""
        return await self._store.commands(gid)

    async def events(self, game: GameRecord, after_seq: int, upto: int, seq: int) -> list[StoredEvent]:
        """The stored events after `after_seq` up to `upto` (at most `seq`, the state the
        caller just read). When they end at the verified head, they must chain to it, each
        stored chain hash too (a read answered from the held state does not read the log, so
        this is where a changed column of it shows first): else the match is loaded again
        (DataLoss if the log is damaged) and the read gets Conflict (SEQ_CONFLICT), to retry."""
        gid = game.game_id
        stored = await self._store.load_events(gid, after_seq=max(after_seq - 1, 0), upto_seq=upto)
        if after_seq > 0 and stored and stored[0].seq == after_seq:
            prev, stored = stored[0].chain_hash, stored[1:]
        else:
            prev = genesis_hash(game)
        head = self._heads.get(gid)
        if upto == seq and head is not None and head[0] == seq:
            chain_ok = True
            for ev in stored:
                prev = integrity.event_chain(game, prev, ev)
                chain_ok = chain_ok and ev.chain_hash == prev
            if prev != head[1] or not chain_ok or [e.seq for e in stored] != list(range(after_seq + 1, upto + 1)):
                log.error("events of %s served from the log no longer chain to the verified head", gid)
                self._forget(gid)
                await self.load(game)
                raise Conflict("the match's log changed while it was read: retry", "SEQ_CONFLICT")
        return stored

    def watch(self, gid: str) -> AsyncGenerator[int, None]:
        """The match's latest seq whenever events are appended to it, by any server
        (`EventLog.watch`), the first from the verified head when the feed says it is current."""
        return self._store.watch(gid, known=lambda: self._current_seq(gid))

    async def new_events(self, gid: str, after_seq: int, upto_seq: int) -> list[StoredEvent]:
        """The stored events after `after_seq` up to `upto_seq`, unchecked: the caller applies
        each with `checked_step`."""
        return await self._store.load_events(gid, after_seq=after_seq, upto_seq=upto_seq)

    # ----------------------------------------------------------------- the cache

    def _remember(
        self,
        game: GameRecord,
        seq: int,
        match: Match,
        chain: bytes,
        mark: Mark | None = None,
        events: Sequence[StoredEvent] = (),
        tell: bool = False,
    ) -> None:
        """Caches a verified state with the chain hash of its last event (states only move
        forward); `tell`: and tells the `on_state` listeners (a state saved). `mark`: taken
        before the state was read from the store or appended (then `get` may answer it without
        asking the store); None: the next read asks the store. `events`: the verified (or just
        written) events that led to it, kept as the match's tail (`Snapshots.keep_events`)."""
        gid = game.game_id
        current = self._heads.get(gid)
        if current is not None and current[0] > seq:
            return
        if current is not None and current[0] < seq:
            replaced = self.cache.peek(gid)
            if replaced is not None and replaced[0] == current[0]:
                self.snapshots.keep_recent(gid, current[0], replaced[1], current[1])
        self.cache.put(gid, seq, match)
        self.snapshots.offer(gid, seq, match, chain)
        if events and events[-1].seq == seq:
            self.snapshots.keep_events(gid, events)
        self._heads[gid] = (seq, chain)
        self._heads.move_to_end(gid)
        self._marks[gid] = mark
        if self.witness is not None:
            self.witness.saw(gid, seq, chain)
        while len(self._heads) > max(self.cache.capacity, 0):
            dropped, _ = self._heads.popitem(last=False)
            self._marks.pop(dropped, None)
        if tell:
            for listener in self._on_state:
                listener(game, seq, match)

    # ----------------------------------------------------------------- checks

    def checked_step(self, game: GameRecord, ev: StoredEvent, match: Match, chain: bytes | None, seq: int) -> bytes:
        """Applies one streamed event (the one after `seq`, chained from `chain`) to `match`,
        checked; and equal to the verified head when it is at its seq. Returns its chain hash."""
        try:
            chain = _replay_checked(game, [ev], match, chain, seq, False)
            verified = self._heads.get(game.game_id)
            if verified is not None and ev.seq == verified[0] and chain != verified[1]:
                raise _damaged(game, ev.seq, "the log was rewritten after it was verified")
        except DataLoss as exc:
            self._refuse(game.game_id, exc)
        return chain

    async def chain_at_verified(self, game: GameRecord, seq: int) -> bytes:
        """The chain hash at `seq` as `load` verified it (read from the log if it moved on)."""
        verified = self._heads.get(game.game_id)
        if verified is not None and verified[0] == seq:
            return verified[1]
        if seq == 0:
            return genesis_hash(game)
        found = await self._store.load_events(game.game_id, after_seq=seq - 1, upto_seq=seq)
        return found[0].chain_hash

    async def chain_at(self, game: GameRecord, seq: int) -> bytes | None:
        head = self._heads.get(game.game_id)
        if head is not None and head[0] == seq:
            return head[1]
        if seq == 0:
            return None
        found = await self._store.load_events(game.game_id, after_seq=seq - 1, upto_seq=seq)
        return found[0].chain_hash if found else None
