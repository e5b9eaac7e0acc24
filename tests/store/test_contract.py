"""The event store contract (base.EventStore), run against both stores."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from dataclasses import fields, replace

import pytest

from storekit import WAIT, event, game, recompute_chain
from tablier.store.base import (
    CommandInput,
    DuplicateGame,
    GameRecord,
    NewEvent,
    SeqConflict,
    UnknownGame,
    chain_hash,
    genesis_hash,
)


async def test_create_and_get_game(backend):
    record = game(3, variant="basic", bag="108")
    async with backend.open() as store:
        opening = await store.create_game(record, [event(1, None), event(2, 1)])
        assert [e.seq for e in opening] == [1, 2]
        assert [e.kind for e in opening] == ["kind_1", "kind_2"]
        assert [e.seat for e in opening] == [None, 1]
        assert all(e.command_id is None and e.game_id == record.game_id for e in opening)
        assert all(e.recorded_at is not None for e in opening)

        got = await store.get_game(record.game_id)
        assert (got.game_id, got.game_type, got.seats) == (record.game_id, "test_game", 3)
        assert got.options == {"variant": "basic", "bag": "108"}
        assert got.seed == record.seed
        assert got.token_hashes == record.token_hashes
        assert got.created_at is not None
        assert await store.last_seq(record.game_id) == 2
        assert await store.load_events(record.game_id) == opening
        assert record.game_id in await store.list_games()


async def test_game_id_is_case_insensitive_uuid(backend):
    record = game()
    async with backend.open() as store:
        await store.create_game(record, [event(1)])
        assert (await store.get_game(record.game_id.upper())).game_id == record.game_id
        assert await store.last_seq(record.game_id.upper()) == 1


async def test_create_game_without_events_then_append_from_genesis(backend):
    record = game()
    async with backend.open() as store:
        assert await store.create_game(record, []) == []
        assert await store.last_seq(record.game_id) == 0
        assert await store.load_events(record.game_id) == []
        appended = await store.append(record.game_id, 0, [event(1)], "cmd")
        assert [e.seq for e in appended] == [1]
        assert appended[0].chain_hash == recompute_chain(record, appended)[0]


async def test_list_games_oldest_first(backend):
    records = [game() for _ in range(3)]
    async with backend.open() as store:
        for r in records:
            await store.create_game(r, [event(1)])
        listed = await store.list_games()
        assert [g for g in listed if g in {r.game_id for r in records}] == [
            r.game_id for r in records
        ]


@pytest.mark.parametrize("game_id", [str(uuid.uuid4()), "not-a-uuid", ""])
async def test_unknown_game(backend, game_id):
    async with backend.open() as store:
        with pytest.raises(UnknownGame):
            await store.get_game(game_id)
        with pytest.raises(UnknownGame):
            await store.last_seq(game_id)
        with pytest.raises(UnknownGame):
            await store.load_events(game_id)
        with pytest.raises(UnknownGame):
            await store.append(game_id, 0, [event(1)], "cmd")
        with pytest.raises(UnknownGame):
            await store.append(game_id, 3, [event(1)], "cmd")
        with pytest.raises(UnknownGame):
            await store.command_events(game_id, "cmd")
        with pytest.raises(UnknownGame):
            watch = store.watch(game_id)
            await anext(watch)
        assert game_id not in await store.list_games()


async def test_create_game_needs_a_uuid(backend):
    async with backend.open() as store:
        with pytest.raises(ValueError):
            await store.create_game(GameRecord("match-1", "t", 2, {}, b"s", (b"a", b"b")), [])
        assert await store.list_games() == []


async def test_duplicate_game_changes_nothing(backend):
    record = game()
    async with backend.open() as store:
        first = await store.create_game(record, [event(1)])
        stored = await store.get_game(record.game_id)
        other = GameRecord(record.game_id, "other", 4, {"x": "y"}, b"other", (b"1",) * 4)
        with pytest.raises(DuplicateGame):
            await store.create_game(other, [event(7), event(8)])
        assert await store.get_game(record.game_id) == stored
        assert stored.game_type == "test_game"
        assert await store.load_events(record.game_id) == first


async def test_append_at_the_right_seq(backend):
    record = game()
    async with backend.open() as store:
        await store.create_game(record, [event(1)])
        appended = await store.append(record.game_id, 1, [event(2, 0), event(3, None)], "c1")
        assert [(e.seq, e.kind, e.seat, e.command_id) for e in appended] == [
            (2, "kind_2", 0, "c1"),
            (3, "kind_3", None, "c1"),
        ]
        assert appended[0].payload == event(2).payload
        assert appended[1].state_hash == event(3).state_hash
        assert all(e.core_version == "test-1" for e in appended)
        assert await store.last_seq(record.game_id) == 3
        assert (await store.load_events(record.game_id))[1:] == appended
        more = await store.append(record.game_id, 3, [event(4)], None)
        assert [(e.seq, e.command_id) for e in more] == [(4, None)]


@pytest.mark.parametrize("expected_seq", [0, 1, 2, 4, 9, -1])
async def test_append_at_a_wrong_seq_conflicts_and_writes_nothing(backend, expected_seq):
    record = game()
    async with backend.open() as store:
        await store.create_game(record, [event(1), event(2)])
        await store.append(record.game_id, 2, [event(3)], "c1")
        before = await store.load_events(record.game_id)
        with pytest.raises(SeqConflict):
            await store.append(record.game_id, expected_seq, [event(9)], "c2")
        assert await store.load_events(record.game_id) == before
        assert await store.last_seq(record.game_id) == 3
        assert await store.command_events(record.game_id, "c2") is None
        # The command id that lost is still free.
        assert [e.seq for e in await store.append(record.game_id, 3, [event(4)], "c2")] == [4]


async def test_concurrent_appends_at_one_seq_exactly_one_wins(backend):
    record = game()
    async with backend.open() as store:
        await store.create_game(record, [event(1)])
        results = await asyncio.gather(
            *(store.append(record.game_id, 1, [event(10 + i), event(20 + i)], f"c{i}")
              for i in range(8)),
            return_exceptions=True,
        )
        winners = [r for r in results if not isinstance(r, BaseException)]
        losers = [r for r in results if isinstance(r, BaseException)]
        assert len(winners) == 1
        assert all(isinstance(r, SeqConflict) for r in losers), losers
        log = await store.load_events(record.game_id)
        assert log[1:] == winners[0]
        assert [e.seq for e in log] == [1, 2, 3]


async def test_concurrent_appends_from_two_store_instances(backend):
    record = game()
    async with backend.open() as a, backend.open() as b:
        await a.create_game(record, [event(1)])
        for seq in range(1, 6):
            results = await asyncio.gather(
                a.append(record.game_id, seq, [event(100 + seq)], f"a{seq}"),
                b.append(record.game_id, seq, [event(200 + seq)], f"b{seq}"),
                return_exceptions=True,
            )
            winners = [r for r in results if not isinstance(r, BaseException)]
            assert len(winners) == 1, results
            assert sum(isinstance(r, SeqConflict) for r in results) == 1, results
        log = await b.load_events(record.game_id)
        assert [e.seq for e in log] == list(range(1, 7))
        assert [e.chain_hash for e in log] == recompute_chain(record, log)


async def test_same_command_id_twice_writes_once(backend):
    record = game()
    async with backend.open() as store:
        await store.create_game(record, [event(1)])
        assert await store.command_events(record.game_id, "move-1") is None
        first = await store.append(record.game_id, 1, [event(2), event(3)], "move-1")
        # A retry, at the old seq or at the current one, returns the first result.
        assert await store.append(record.game_id, 1, [event(2), event(3)], "move-1") == first
        assert await store.append(record.game_id, 3, [event(5)], "move-1") == first
        assert await store.append(record.game_id, 9, [event(5)], "move-1") == first
        assert await store.command_events(record.game_id, "move-1") == first
        assert await store.last_seq(record.game_id) == 3
        assert (await store.load_events(record.game_id))[1:] == first
        # Command ids are per match.
        other = game()
        await store.create_game(other, [])
        assert [e.seq for e in await store.append(other.game_id, 0, [event(1)], "move-1")] == [1]


async def test_exactly_one_append_of_a_command_id_says_it_wrote(backend):
    record = game()
    async with backend.open() as a, backend.open() as b:
        await a.create_game(record, [event(1)])
        results = await asyncio.gather(
            *((a, b)[i % 2].append(record.game_id, 1, [event(2)], "once") for i in range(20)),
            return_exceptions=True,
        )
        assert not [r for r in results if isinstance(r, BaseException)], results
        assert [r.written for r in results].count(True) == 1
        assert all(r == results[0] for r in results)
        again = await a.append(record.game_id, 2, [event(3)], "once")
        assert not again.written and again == results[0]
        assert [e.seq for e in await b.load_events(record.game_id)] == [1, 2]


async def test_commands_keep_what_they_asked(backend):
    record = game()
    move = CommandInput(seat=1, action=b"\x0a\x02\x08\x07")
    host = CommandInput(host_command="stop_after_round")
    async with backend.open() as store:
        await store.create_game(record, [event(1)])
        assert await store.commands(record.game_id) == []
        await store.append(record.game_id, 1, [event(2), event(3)], "move", move)
        await store.append(record.game_id, 3, [event(4)], "host", host)
        await store.append(record.game_id, 4, [event(5)], "bare")
        # A retry does not replace what the first attempt asked.
        await store.append(record.game_id, 1, [event(2)], "move", CommandInput(seat=0, action=b"x"))
        kept = await store.commands(record.game_id)
        assert [(c.command_id, c.first_seq, c.last_seq, c.input) for c in kept] == [
            ("move", 2, 3, move),
            ("host", 4, 4, host),
            ("bare", 5, 5, None),
        ]
        with pytest.raises(UnknownGame):
            await store.commands(str(uuid.uuid4()))


async def test_same_command_id_racing_from_two_instances(backend):
    record = game()
    async with backend.open() as a, backend.open() as b:
        await a.create_game(record, [event(1)])
        results = await asyncio.gather(
            a.append(record.game_id, 1, [event(2)], "retry-me"),
            b.append(record.game_id, 1, [event(2)], "retry-me"),
            a.append(record.game_id, 1, [event(2)], "retry-me"),
        )
        assert results[0] == results[1] == results[2]
        assert [e.seq for e in results[0]] == [2]
        assert await a.last_seq(record.game_id) == 2


async def test_command_with_no_events(backend):
    record = game()
    async with backend.open() as store:
        await store.create_game(record, [event(1)])
        assert await store.append(record.game_id, 1, [], "noop") == []
        assert await store.append(record.game_id, 0, [], "noop") == []
        assert await store.command_events(record.game_id, "noop") == []
        assert await store.append(record.game_id, 1, [], "noop") == []
        assert await store.append(record.game_id, 0, [], "noop") == []
        with pytest.raises(SeqConflict):
            await store.append(record.game_id, 0, [], "other")
        assert await store.last_seq(record.game_id) == 1


async def test_load_ranges(backend):
    record = game()
    async with backend.open() as store:
        await store.create_game(record, [event(1), event(2)])
        for seq in range(2, 6):
            await store.append(record.game_id, seq, [event(seq + 1)], f"c{seq}")
        full = await store.load_events(record.game_id)
        assert [e.seq for e in full] == [1, 2, 3, 4, 5, 6]

        async def seqs(after: int = 0, upto: int | None = None) -> list[int]:
            return [e.seq for e in await store.load_events(record.game_id, after, upto)]

        assert await seqs(after=2) == [3, 4, 5, 6]
        assert await seqs(upto=3) == [1, 2, 3]
        assert await seqs(2, 4) == [3, 4]
        assert await seqs(3, 3) == []
        assert await seqs(4, 2) == []
        assert await seqs(6) == []
        assert await seqs(50) == []
        assert await seqs(0, 50) == [1, 2, 3, 4, 5, 6]
        assert await store.load_events(record.game_id, 2, 4) == full[2:4]


async def test_chain_hashes_match_a_recomputation(backend):
    record = game(4, mode="x")
    async with backend.open() as store:
        await store.create_game(record, [event(1, None), event(2, None)])
        seq = 2
        for n in range(3, 12):
            batch = [event(n * 10 + k, n % 4 if k else None) for k in range(n % 3 + 1)]
            seq = (await store.append(record.game_id, seq, batch, f"cmd-{n}"))[-1].seq
        log = await store.load_events(record.game_id)
        assert len(log) == seq
        assert [e.chain_hash for e in log] == recompute_chain(record, log)
        # The chain commits to the match: another game's genesis gives other hashes.
        assert recompute_chain(game(4, mode="x"), log)[0] != log[0].chain_hash


async def test_watch_yields_current_seq_then_appends_from_another_instance(backend):
    record = game()
    async with backend.open() as a, backend.open() as b:
        await a.create_game(record, [event(1), event(2)])
        watch = a.watch(record.game_id)
        assert await asyncio.wait_for(anext(watch), WAIT) == 2
        await b.append(record.game_id, 2, [event(3)], "c3")
        assert await asyncio.wait_for(anext(watch), WAIT) == 3
        await b.append(record.game_id, 3, [event(4), event(5)], "c4")
        assert await asyncio.wait_for(anext(watch), WAIT) == 5
        await watch.aclose()


async def test_watch_takes_its_first_seq_from_the_caller_and_still_hears_appends(backend):
    record = game()
    async with backend.open() as a, backend.open() as b:
        await a.create_game(record, [event(1), event(2)])
        # A seq the caller holds as current is yielded as it is (the store is not read: it
        # would say 2); None reads the store.
        held = a.watch(record.game_id, known=lambda: 1)
        assert await asyncio.wait_for(anext(held), WAIT) == 1
        unknown = a.watch(record.game_id, known=lambda: None)
        assert await asyncio.wait_for(anext(unknown), WAIT) == 2
        # Asked once the watch hears every append: a later one, from another instance, arrives.
        # (The creation's own notification may still come first: seqs only go up.)
        await b.append(record.game_id, 2, [event(3)], "c3")
        seen = [1]
        while seen[-1] < 3:
            seen.append(await asyncio.wait_for(anext(held), WAIT))
        assert seen in ([1, 3], [1, 2, 3])
        assert await asyncio.wait_for(anext(unknown), WAIT) == 3
        await held.aclose()
        await unknown.aclose()


async def test_watch_coalesces_and_keeps_matches_apart(backend):
    x, y = game(), game()
    async with backend.open() as a, backend.open() as b:
        await a.create_game(x, [event(1)])
        await a.create_game(y, [event(1)])
        wx, wy = a.watch(x.game_id), a.watch(y.game_id)
        assert await asyncio.wait_for(anext(wx), WAIT) == 1
        assert await asyncio.wait_for(anext(wy), WAIT) == 1
        for seq in range(1, 4):
            await b.append(y.game_id, seq, [event(seq + 1)], f"y{seq}")
        await b.append(x.game_id, 1, [event(2)], "x1")
        # x's watcher reports x's seq, never y's; y's watcher reaches y's last seq.
        assert await asyncio.wait_for(anext(wx), WAIT) == 2
        seen = await asyncio.wait_for(anext(wy), WAIT)
        while seen < 4:
            nxt = await asyncio.wait_for(anext(wy), WAIT)
            assert nxt > seen
            seen = nxt
        assert seen == 4
        await wx.aclose()
        await wy.aclose()


async def test_watchers_see_the_same_appends(backend):
    record = game()
    async with backend.open() as a, backend.open() as b:
        await a.create_game(record, [event(1)])
        watches = [a.watch(record.game_id), a.watch(record.game_id), b.watch(record.game_id)]
        assert [await asyncio.wait_for(anext(w), WAIT) for w in watches] == [1, 1, 1]
        await a.append(record.game_id, 1, [event(2)], "c")
        assert [await asyncio.wait_for(anext(w), WAIT) for w in watches] == [2, 2, 2]
        for w in watches:
            await w.aclose()


async def test_close_ends_watches(backend):
    record = game()
    async with backend.open() as store:
        await store.create_game(record, [event(1)])
        watch = store.watch(record.game_id)
        assert await anext(watch) == 1
        pending = asyncio.ensure_future(anext(watch))
        await store.close()
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(pending, WAIT)


def _seated(seats: int = 3) -> GameRecord:
    """A match whose seat 0 is held, seat 1 is a bot's, and the others are open (seat 2 by
    invitation)."""
    record = game(seats)
    return replace(
        record,
        token_hashes=(record.token_hashes[0],) + (b"",) * (seats - 1),
        invite_hashes=(b"", b"", hashlib.sha256(b"invite").digest()) + (b"",) * (seats - 3),
        bots=("", "greedy") + ("",) * (seats - 2),
    )


async def test_seat_assignments_round_trip(backend):
    record = _seated(4)
    async with backend.open() as store:
        await store.create_game(record, [event(1)])
        got = await store.get_game(record.game_id)
        assert (got.token_hashes, got.invite_hashes, got.bots) == (
            record.token_hashes, record.invite_hashes, record.bots)
        assert [got.vacant(s) for s in range(4)] == [False, False, True, True]
        plain = game(2)
        await store.create_game(plain, [])
        got = await store.get_game(plain.game_id)
        assert (got.invite_hashes, got.bots) == ((), ())
        assert [got.vacant(s) for s in range(2)] == [False, False]


async def test_claim_seat_fills_a_vacant_seat_once(backend):
    record = _seated(4)
    mine, theirs = hashlib.sha256(b"mine").digest(), hashlib.sha256(b"theirs").digest()
    async with backend.open() as store:
        await store.create_game(record, [event(1)])
        claimed = await store.claim_seat(record.game_id, 2, mine)
        assert claimed is not None and claimed.token_hashes[2] == mine
        assert claimed.token_hashes[:2] + claimed.token_hashes[3:] == record.token_hashes[:2] + (b"",)
        # The same claim again (a retry) finds itself; another one finds the seat held.
        assert await store.claim_seat(record.game_id, 2, mine) == claimed
        assert await store.claim_seat(record.game_id, 2, theirs) is None
        # Held, a bot's, or no such seat: nothing changes.
        for seat in (0, 1, 4, 99, -1):
            assert await store.claim_seat(record.game_id, seat, theirs) is None
        got = await store.get_game(record.game_id)
        assert got.token_hashes == claimed.token_hashes
        assert (got.invite_hashes, got.bots) == (record.invite_hashes, record.bots)
        assert await store.load_events(record.game_id) != []  # the log is not touched
        with pytest.raises(UnknownGame):
            await store.claim_seat(str(uuid.uuid4()), 2, mine)


async def test_racing_claims_of_one_seat_have_one_winner(backend):
    record = _seated(3)
    hashes = [hashlib.sha256(b"racer%d" % i).digest() for i in range(8)]
    async with backend.open() as a, backend.open() as b:
        await a.create_game(record, [])
        results = await asyncio.gather(
            *((a, b)[i % 2].claim_seat(record.game_id, 2, h) for i, h in enumerate(hashes)))
        winners = [h for h, r in zip(hashes, results, strict=True) if r is not None]
        assert len(winners) == 1
        assert (await a.get_game(record.game_id)).token_hashes[2] == winners[0]
        assert (await b.get_game(record.game_id)).token_hashes[2] == winners[0]


async def test_scheme_3_chains_what_each_command_asked(backend):
    """Under integrity scheme 3 each event's chain hash covers the digest of its command's input:
    the store chains what it is given and hands each event back with the input its `commands`
    row keeps, so a reader recomputes the chain from the log alone; a scheme 2 match appended
    without it keeps the scheme 2 chain."""
    from tablier.integrity import chained_input

    for scheme in (2, 3):
        record = replace(game(2), hash_scheme=scheme)
        async with backend.open() as store:
            await store.create_game(record, [event(1, None)])
            seq = 1
            asked = {
                "move": CommandInput(seat=1, action=b"\x08\x01"),
                "host": CommandInput(host_command="pause"),
                "timeout": CommandInput(seat=0, host_command="timeout:0"),
            }
            for n, (cid, given) in enumerate(asked.items(), start=2):
                batch = [event(n * 10 + k, None) for k in range(2)]
                chained = chained_input(scheme, cid, given)
                assert bool(chained) == (scheme >= 3)
                seq = (await store.append(record.game_id, seq, batch, cid, given, chained))[-1].seq
            log = await store.load_events(record.game_id)
            assert [e.command for e in log] == [None] + [g for g in asked.values() for _ in range(2)]
            prev, chains = genesis_hash(record), []
            for e in log:
                new = NewEvent(e.kind, e.payload, e.seat, e.core_version, e.state_hash)
                prev = chain_hash(prev, e.seq, new, e.command_id, chained_input(scheme, e.command_id, e.command))
                chains.append(prev)
            assert [e.chain_hash for e in log] == chains
            if scheme == 3:
                # Another input under the same command id gives other chain hashes.
                other = chained_input(3, "move", CommandInput(seat=1, action=b"\x08\x02"))
                assert chain_hash(log[0].chain_hash, 2, log[1], "move", other) != log[1].chain_hash
            else:
                assert [e.chain_hash for e in log] == recompute_chain(record, log)


async def test_game_page_newest_first_by_type_and_position(backend):
    records = [replace(game(), game_type=f"page_test_{i % 2}") for i in range(5)]
    async with backend.open() as store:
        for r in records:
            await store.create_game(r, [event(1)])
        created = {r.game_id: (await store.get_game(r.game_id)).created_at for r in records}
        evens = [r.game_id for r in records if r.game_type == "page_test_0"]
        page = await store.game_page(10, "page_test_0")
        assert [g.game_id for g in page] == sorted(evens, key=lambda g: (created[g], g), reverse=True)
        assert all(g.seed == b"" and g.game_type == "page_test_0" for g in page)
        first = (await store.game_page(1, "page_test_0"))[0]
        rest = await store.game_page(10, "page_test_0", (first.created_at, first.game_id))
        assert [first.game_id, *(g.game_id for g in rest)] == [g.game_id for g in page]
        assert (await store.game_page(10))[0].game_id in {r.game_id for r in records}


def test_recorded_is_replace_of_the_recorded_time():
    """`recorded` copies every field but the time (a field added to StoredEvent must be added there)."""
    from datetime import UTC, datetime

    from tablier.store.base import StoredEvent, recorded

    values = {
        f.name: v
        for f, v in zip(
            fields(StoredEvent),
            ["g", 7, "kind", b"payload", 1, "cmd", "v1", b"state", b"chain", None, CommandInput(1, b"a")],
            strict=True,
        )
    }
    event = StoredEvent(**values)
    at = datetime(2026, 12, 8, tzinfo=UTC)
    got = recorded(event, at)
    want = replace(event, recorded_at=at)
    assert {f.name: getattr(got, f.name) for f in fields(StoredEvent)} == {
        f.name: getattr(want, f.name) for f in fields(StoredEvent)
    }
    assert got.recorded_at == at and event.recorded_at is None
