"""PostgreSQL-only behaviour: migrations, immutability of the log, the LISTEN connection."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import psycopg
import pytest

from storekit import WAIT, event, game, recompute_chain
from tablier.store.base import CommandInput
from tablier.store.feed import NoteFeed
from tablier.store.migrate import MigrationError, migrate, migrations
from tablier.store.postgres import (
    LISTENER_APPLICATION_NAME,
    POOL_APPLICATION_NAME,
    open_store,
)


async def connect(dsn: str) -> psycopg.AsyncConnection:
    return await psycopg.AsyncConnection.connect(dsn, autocommit=True)


async def applied_versions(conn: psycopg.AsyncConnection) -> list[int]:
    cur = await conn.execute("SELECT version FROM schema_migrations ORDER BY version")
    return [r[0] for r in await cur.fetchall()]


async def test_migrations_apply_once(fresh_database_url):
    every = [m.version for m in migrations()]
    assert every and every == sorted(every)
    async with await connect(fresh_database_url) as conn:
        assert await migrate(conn) == every
        assert await migrate(conn) == []
        assert await applied_versions(conn) == every
        cur = await conn.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = 'public' ORDER BY table_name"
        )
        assert [r[0] for r in await cur.fetchall()] == [
            "commands", "events", "games", "match_directory", "match_queue", "player_credentials", "players",
            "queue_matches", "ranked_ends", "rating_events", "ratings", "schema_migrations", "shard_identity",
            "shards",
        ]
    # A store opened on a migrated database migrates nothing and works.
    store = await open_store(fresh_database_url)
    await store.close()


async def test_concurrent_migrations_apply_once(fresh_database_url):
    conns = [await connect(fresh_database_url) for _ in range(4)]
    try:
        results = await asyncio.gather(*(migrate(c) for c in conns))
        every = [m.version for m in migrations()]
        assert sorted(results, key=len) == [[], [], [], every]
        assert await applied_versions(conns[0]) == every
    finally:
        for c in conns:
            await c.close()


async def test_concurrent_store_opening(fresh_database_url):
    stores = await asyncio.gather(*(open_store(fresh_database_url) for _ in range(3)))
    try:
        record = game()
        await stores[0].create_game(record, [event(1)])
        assert await stores[2].last_seq(record.game_id) == 1
    finally:
        for s in stores:
            await s.close()


async def test_servers_started_together_on_new_shards_agree_on_their_names(fresh_database_url, second_database_url):
    """Several servers opening the same two new databases as shards at once: each database
    records one name, the first server's or another's, and every server opens (none fails on
    the name another recorded a moment before)."""
    from tablier.store import open_store as open_any

    urls = f"{fresh_database_url}\n{second_database_url}"  # one a line: URLs or conninfo strings
    stores = await asyncio.gather(*(open_any(urls) for _ in range(4)))
    try:
        names = []
        for url in (fresh_database_url, second_database_url):
            async with await psycopg.AsyncConnection.connect(url) as conn:
                rows = await (await conn.execute("SELECT name, directory FROM shard_identity")).fetchall()
            names.append(rows)
        assert names == [[("shard0", True)], [("shard1", False)]]
    finally:
        for s in stores:
            await s.close()


async def test_unknown_migration_version_is_refused(fresh_database_url):
    async with await connect(fresh_database_url) as conn:
        await migrate(conn)
        await conn.execute("INSERT INTO schema_migrations (version, name) VALUES (9999, 'future')")
        with pytest.raises(MigrationError, match="9999"):
            await migrate(conn)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET payload = 'x' WHERE seq = 1",
        "UPDATE events SET seq = seq + 10",
        "DELETE FROM events WHERE seq = 2",
        "DELETE FROM events",
        "TRUNCATE events CASCADE",
    ],
)
async def test_events_are_immutable(fresh_database_url, statement):
    record = game()
    store = await open_store(fresh_database_url)
    try:
        before = await store.create_game(record, [event(1), event(2)])
        async with await connect(fresh_database_url) as conn:
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                await conn.execute(statement)
        assert await store.load_events(record.game_id) == before
    finally:
        await store.close()


async def test_watch_survives_losing_the_listen_connection(fresh_database_url):
    record = game()
    watching = await open_store(fresh_database_url)
    # Without the monitor, a store listens only once it is watched: the one listener is the
    # watching store's.
    writing = await open_store(fresh_database_url, monitor=False)
    try:
        await writing.create_game(record, [event(1)])
        watch = watching.watch(record.game_id)
        assert await asyncio.wait_for(anext(watch), WAIT) == 1
        async with await connect(fresh_database_url) as admin:
            cur = await admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = %s AND datname = current_database()",
                (LISTENER_APPLICATION_NAME,),
            )
            assert (await cur.fetchone())[0] == 1
        # Appended while the listener is (probably) down: seen after it reconnects.
        await writing.append(record.game_id, 1, [event(2)], "c2")
        assert await asyncio.wait_for(anext(watch), WAIT) == 2
        # And the new connection hears later appends.
        await writing.append(record.game_id, 2, [event(3)], "c3")
        assert await asyncio.wait_for(anext(watch), WAIT) == 3
        await watch.aclose()
    finally:
        await watching.close()
        await writing.close()


async def test_notifications_carry_game_and_last_seq(fresh_database_url):
    record = game()
    store = await open_store(fresh_database_url)
    try:
        async with await connect(fresh_database_url) as listener:
            await listener.execute("LISTEN tablier_events")
            await store.create_game(record, [event(1), event(2)])
            await store.append(record.game_id, 2, [event(3), event(4)], "c")
            notes = [n.payload async for n in listener.notifies(timeout=WAIT, stop_after=2)]
        assert notes == [f"{record.game_id}:2", f"{record.game_id}:4"]
    finally:
        await store.close()


# Appends one event at seq 1 of a match, from another process.
OTHER_PROCESS_APPEND = """
import asyncio, sys
sys.path.insert(0, sys.argv[3])
from storekit import event
from tablier.store.postgres import open_store

async def main(dsn, game_id):
    store = await open_store(dsn)
    try:
        await store.append(game_id, 1, [event(2)], "from-another-process")
    finally:
        await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def test_watch_sees_an_append_from_another_process(fresh_database_url):
    record = game()
    store = await open_store(fresh_database_url)
    try:
        await store.create_game(record, [event(1)])
        watch = store.watch(record.game_id)
        assert await asyncio.wait_for(anext(watch), WAIT) == 1
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", OTHER_PROCESS_APPEND,
            fresh_database_url, record.game_id, str(Path(__file__).parent),
        )
        assert await asyncio.wait_for(proc.wait(), 60) == 0
        assert await asyncio.wait_for(anext(watch), WAIT) == 2
        [appended] = await store.load_events(record.game_id, after_seq=1)
        assert appended.command_id == "from-another-process"
        await watch.aclose()
    finally:
        await store.close()


async def test_operations_survive_losing_every_pooled_connection(fresh_database_url):
    record = game()
    store = await open_store(fresh_database_url, min_size=3, max_size=3)
    try:
        await store.create_game(record, [event(1)])
        # Use every pooled connection, so that all of them are open.
        await asyncio.gather(*(store.last_seq(record.game_id) for _ in range(6)))
        async with await connect(fresh_database_url) as admin:
            cur = await admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = %s AND datname = current_database()",
                (POOL_APPLICATION_NAME,),
            )
            assert (await cur.fetchone())[0] == 3
        assert await store.last_seq(record.game_id) == 1
        assert [e.seq for e in await store.append(record.game_id, 1, [event(2)], "c")] == [2]
        assert [e.seq for e in await store.load_events(record.game_id)] == [1, 2]
        other = game()
        await store.create_game(other, [])
        assert await store.list_games() == [record.game_id, other.game_id]
    finally:
        await store.close()


async def test_commands_from_before_their_inputs_were_kept_read_back_without_input(fresh_database_url):
    record = game()
    store = await open_store(fresh_database_url)
    try:
        await store.create_game(record, [event(1)])
        await store.append(record.game_id, 1, [event(2)], "new", CommandInput(seat=0, action=b"a"))
        async with await connect(fresh_database_url) as conn:
            # A row as schema version 1 wrote it: the columns of 0002 are NULL.
            await conn.execute("UPDATE commands SET seat = NULL, action = NULL WHERE command_id = 'new'")
        [kept] = await store.commands(record.game_id)
        assert (kept.command_id, kept.first_seq, kept.last_seq, kept.input) == ("new", 2, 2, None)
    finally:
        await store.close()


async def test_appends_in_flight_commit_together_each_with_its_own_outcome(fresh_database_url):
    """Group commit: the appends in flight go in shared transactions, yet each is still
    conditional on its own match's seq and command id and gets its own outcome: written,
    the earlier span of a command id used before, or SeqConflict."""
    from tablier.store.base import SeqConflict

    store = await open_store(fresh_database_url)
    try:
        records = [game() for _ in range(24)]
        for r in records:
            await store.create_game(r, [event(1)])
            await store.append(r.game_id, 1, [event(2)], "first")  # the head is remembered

        async def outcome(gid: str, seq: int, cid: str | None, n: int):
            try:
                got = await store.append(gid, seq, [event(n), event(n + 1)], cid)
            except SeqConflict:
                return "conflict"
            return ("written" if got.written else "earlier", [e.seq for e in got])

        # Moves on different matches, in flight together.
        got = await asyncio.gather(*(outcome(r.game_id, 2, f"move-{i}", 3) for i, r in enumerate(records[4:])))
        assert got == [("written", [3, 4])] * 20
        stamps = [(await store.load_events(r.game_id, after_seq=2))[0].recorded_at for r in records[4:]]
        # Shared transactions: events of several matches carry one commit's timestamp.
        assert len(set(stamps)) < len(stamps), "every append committed alone"

        # Racing ones: each gets its own outcome, whichever transactions they share.
        got = await asyncio.gather(
            outcome(records[0].game_id, 2, "move-0", 3),
            outcome(records[0].game_id, 2, "rival", 30),  # same seq, another command: one loses
            outcome(records[1].game_id, 2, "move-1", 3),
            outcome(records[1].game_id, 2, "move-1", 3),  # the same command racing itself
            outcome(records[2].game_id, 1, "first", 2),  # a retry of an acknowledged command
            outcome(records[3].game_id, 1, "late", 2),  # a stale seq
        )
        assert sorted(str(g[0]) if g != "conflict" else "conflict" for g in got[:2]) == ["conflict", "written"]
        assert sorted(got[2:4]) == [("earlier", [3, 4]), ("written", [3, 4])]
        assert got[4] == ("earlier", [2])
        assert got[5] == "conflict"
        for r in records[:2] + records[4:]:
            assert [e.seq for e in await store.load_events(r.game_id)] == [1, 2, 3, 4]
    finally:
        await store.close()


async def test_groups_of_two_servers_racing_on_the_same_matches(fresh_database_url):
    """Two stores (two servers), each with a group of appends in flight across many matches,
    race for the same seqs: a statement that loses one race on a primary key is rolled back
    whole and its appends run again alone, so each match still gets exactly one winner per
    seq, every loser a SeqConflict, and nothing of a rolled-back group stays written."""
    from tablier.store.base import SeqConflict

    a = await open_store(fresh_database_url)
    b = await open_store(fresh_database_url)
    try:
        records = [game() for _ in range(12)]
        for r in records:
            await a.create_game(r, [event(1)])
            await a.append(r.game_id, 1, [event(2)], "a1")  # heads remembered by both
            await b.load_events(r.game_id)
        for seq in (2, 4, 6, 8):
            results = await asyncio.gather(
                *(s.append(r.game_id, seq, [event(10 * seq), event(10 * seq + 1)], f"{name}{seq}")
                  for r in records for s, name in ((a, "a"), (b, "b"))),
                return_exceptions=True,
            )
            for i, _record in enumerate(records):
                pair = results[2 * i : 2 * i + 2]
                assert sum(isinstance(x, SeqConflict) for x in pair) == 1, pair
                assert sum(not isinstance(x, BaseException) for x in pair) == 1, pair
            # The loser's next append starts from the winner's head: read it again.
            for r in records:
                await a.load_events(r.game_id)
                await b.load_events(r.game_id)
        for r in records:
            log = await a.load_events(r.game_id)
            assert [e.seq for e in log] == list(range(1, 11))
            assert [e.chain_hash for e in log] == recompute_chain(r, log)
            assert len(await a.commands(r.game_id)) == 5
    finally:
        await a.close()
        await b.close()


async def _until(condition, what: str) -> None:
    """Waits for `condition()` to hold (checked every 10 ms), at most WAIT seconds."""
    async with asyncio.timeout(WAIT):
        while not condition():
            await asyncio.sleep(0.01)
    assert condition(), what


async def test_a_state_is_current_until_a_later_append_is_heard(fresh_database_url):
    record = game()
    reading = await open_store(fresh_database_url)
    # Without the monitor this store does not listen: the one listener is the reading store's.
    writing = await open_store(fresh_database_url, monitor=False)
    try:
        await writing.create_game(record, [event(1)])
        await _until(lambda: reading.feed.up, "the reading store listens")
        mark = reading.mark()
        assert mark is not None
        assert [e.seq for e in await reading.load_events(record.game_id)] == [1]
        assert reading.current(record.game_id, 1, mark)
        # Another process appends: heard at its commit, the state read is no longer the latest.
        await writing.append(record.game_id, 1, [event(2)], "c2")
        await _until(lambda: not reading.current(record.game_id, 1, mark), "the append is heard")
        assert reading.current(record.game_id, 2, mark)
        # An append that wrote nothing (its command id used) announces nothing new.
        await writing.append(record.game_id, 1, [event(2)], "c2")
        assert reading.current(record.game_id, 2, mark)
        # The listener lost: what was read before is no longer known to be current, even once
        # it is back (it may have missed appends meanwhile); what is read after, is.
        async with await connect(fresh_database_url) as admin:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s AND datname = current_database()",
                (LISTENER_APPLICATION_NAME,),
            )
        await _until(lambda: not reading.current(record.game_id, 2, mark), "the loss is seen")
        await _until(lambda: reading.feed.up, "the listener is back")
        assert not reading.current(record.game_id, 2, mark)
        again = reading.mark()
        assert again is not None and reading.current(record.game_id, 2, again)
    finally:
        await writing.close()
        await reading.close()
    # A closed store tells nothing is current.
    assert reading.mark() is None and not reading.current(record.game_id, 2, again)


def test_the_feed_forgets_the_oldest_matches_and_then_knows_nothing_of_them():
    feed = NoteFeed(capacity=2)
    assert feed.mark() is None  # not listening yet
    feed.connected()
    mark = feed.mark()
    assert feed.current("a", 5, mark)
    feed.heard("a", 6)
    feed.heard("b", 1)
    assert not feed.current("a", 5, mark) and feed.current("a", 6, mark)
    feed.heard("c", 1)  # "a" is dropped: heard after the mark, so "a" is unknown again
    assert not feed.current("a", 6, mark)
    later = feed.mark()
    assert feed.current("a", 6, later)  # nothing of "a" heard since this mark
    feed.lost()
    assert feed.mark() is None and not feed.current("b", 1, later)


async def test_a_busy_store_gathers_the_appends_that_keep_coming(fresh_database_url, monkeypatch):
    """An append that comes while a group is committed starts the next group, which waits for
    more while they keep coming (GROUP_GAP_S apart at most): two such appends share one
    transaction (`recorded_at` is its start). An append to an idle store goes at once."""
    from tablier.store import pg_append

    monkeypatch.setattr(pg_append, "GROUP_GAP_S", 0.5)
    store = await open_store(fresh_database_url)
    try:
        records = [game() for _ in range(3)]
        for r in records:
            await store.create_game(r, [event(1)])
        group = store._group

        async def turns_until(condition, what: str) -> None:
            # Checked at every turn of the event loop: a commit lasts many of them.
            try:
                async with asyncio.timeout(WAIT):
                    while not condition():
                        await asyncio.sleep(0)
            except TimeoutError:
                pytest.fail(what)

        alone = asyncio.create_task(store.append(records[0].game_id, 1, [event(2)], "a"))
        await turns_until(lambda: group._flushing == 1, "the first append is being committed")
        second = asyncio.create_task(store.append(records[1].game_id, 1, [event(2)], "b"))
        await turns_until(lambda: group._gathering is not None, "the next group gathers")
        assert not second.done()
        third = asyncio.create_task(store.append(records[2].game_id, 1, [event(2)], "c"))
        await asyncio.gather(alone, second, third)
        at = [(await store.load_events(r.game_id))[-1].recorded_at for r in records]
        assert at[1] == at[2] != at[0]
        # Idle again: a lone append is not held back by the gathering.
        assert group._gathering is None and not group._pending
        lone = asyncio.create_task(store.append(records[0].game_id, 2, [event(3)], "d"))
        await turns_until(lambda: group._flushing == 1 or lone.done(), "a lone append goes at once")
        assert group._gathering is None
        await lone
    finally:
        await store.close()
