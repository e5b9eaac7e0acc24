"""The shared watch feed and the per-peer limits, without gRPC (in-memory store)."""

from __future__ import annotations

import asyncio

import pytest

from tablier.app import Credential, GameApp
from tablier.app.errors import ResourceExhausted
from tablier.app.limits import Limiter, Limits, PeerBuckets
from tablier.store.memory import MemoryStore

SEED = bytes(range(32))
OP = "watch-operator"


async def _next(it, timeout: float = 10.0):
    return await asyncio.wait_for(anext(it), timeout)


async def _play(app: GameApp, gid: str, tokens, moves: int, prefix: str = "c"):
    """`moves` moves of the server's suggestion for the seat awaited; the last one played."""
    for n in range(moves):
        state = await app.get_view(gid, Credential())
        token = tokens[state.to_act[0]]
        action, seq = await app.suggest(gid, Credential(token))
        played = await app.play(gid, Credential(token), f"{prefix}{n}", action, expected_seq=seq)
    return played


async def test_watchers_of_one_viewer_share_each_item():
    app = GameApp(MemoryStore(), OP)
    created = await app.create_game("grid_knock", 2, {}, SEED, Credential(OP))
    gid, tokens = created.game_id, created.seat_tokens
    opened = created.state.seq
    spectators = [app.watch(gid, Credential(), after_seq=opened) for _ in range(3)]
    seat0 = app.watch(gid, Credential(tokens[0]), after_seq=opened)
    firsts = [asyncio.ensure_future(_next(w)) for w in [*spectators, seat0]]
    await asyncio.sleep(0)  # every watcher subscribes before the move
    while app.feeds.watchers < 4:
        await asyncio.sleep(0.01)
    state = await app.get_view(gid, Credential())
    token = tokens[state.to_act[0]]
    action, seq = await app.suggest(gid, Credential(token))
    played = await app.play(gid, Credential(token), "c1", action, expected_seq=seq)
    items = [await f for f in firsts]
    assert {item.seq for item in items} == {played.events[0].seq}
    # One redaction and one state per viewer: every spectator got the very same object.
    assert items[0] is items[1] is items[2]
    assert items[3] is not items[0] and items[3][1].principal.seat == 0
    assert app.feeds.count == 1
    for w in [*spectators, seat0]:
        await w.aclose()
    assert app.feeds.watchers == 0 and app.feeds.count == 0
    assert app.limiter.open_watches == 0


async def test_per_match_watch_limit_and_release():
    app = GameApp(MemoryStore(), OP, limits=Limits(watch_per_match=2, watch_per_peer=10))
    created = await app.create_game("grid_knock", 2, {}, SEED, Credential(OP))
    gid = created.game_id
    a, b = app.watch(gid, Credential(), peer="p"), app.watch(gid, Credential(), peer="p")
    await _next(a)
    await _next(b)
    c = app.watch(gid, Credential(), peer="q")
    with pytest.raises(ResourceExhausted) as refused:
        await _next(c)
    assert refused.value.reason == "TOO_MANY_WATCHES_ON_MATCH"
    await a.aclose()
    d = app.watch(gid, Credential(), peer="q")
    assert (await _next(d)).seq == 1
    await b.aclose()
    await d.aclose()


async def test_unbatched_streams_have_their_own_limit_on_a_match():
    app = GameApp(MemoryStore(), OP, limits=Limits(watch_unbatched_per_match=1, watch_per_peer=10))
    created = await app.create_game("grid_knock", 2, {}, SEED, Credential(OP))
    gid = created.game_id
    single = app.watch_batches(gid, Credential(), peer="p", batched=False)
    await anext(single)
    with pytest.raises(ResourceExhausted) as refused:
        await anext(app.watch_batches(gid, Credential(), peer="q", batched=False))
    assert refused.value.reason == "WATCH_BATCHES_REQUIRED"
    batched = app.watch_batches(gid, Credential(), peer="q")
    await anext(batched)  # batched streams are not counted against it
    other = await app.create_game("grid_knock", 2, {}, SEED, Credential(OP))
    elsewhere = app.watch_batches(other.game_id, Credential(), peer="q", batched=False)
    await anext(elsewhere)  # nor are other matches'
    await single.aclose()
    again = app.watch_batches(gid, Credential(), peer="q", batched=False)
    await anext(again)
    for w in (batched, elsewhere, again):
        await w.aclose()
    assert app.limiter.open_watches == 0


def test_peer_buckets_refill_at_their_rate():
    now = [0.0]
    buckets = PeerBuckets(rate=2.0, burst=3, clock=lambda: now[0])
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(0.5)
    assert buckets.take("b") == 0.0  # another peer has its own bucket
    now[0] += 0.5
    assert buckets.take("a") == 0.0
    assert buckets.wait("a") == pytest.approx(0.5)


def test_limits_refuse_unusable_values():
    with pytest.raises(ValueError):
        Limits(create_policy="closed")
    with pytest.raises(ValueError):
        Limits(watch_buffer=0)
    with pytest.raises(ValueError):
        Limits(create_rate=float("nan"))
    with pytest.raises(ValueError):
        Limits(watch_pace=-1)
    Limiter(Limits())  # the defaults are usable


async def test_batched_responses_are_the_messages_protobuf_would_make():
    """WatchGame sends pieces serialized once per item, concatenated: the bytes parse as the
    WatchGameResponse built field by field."""
    from tablier.api.servicer import WatchRendering, to_event, to_state
    from tablier.v1 import service_pb2 as pb

    app = GameApp(MemoryStore(), OP)
    created = await app.create_game("grid_knock", 4, {}, SEED, Credential(OP))
    gid, tokens = created.game_id, created.seat_tokens
    await _play(app, gid, tokens, 10)
    watch = app.watch_batches(gid, Credential())
    batch = await _next(watch)
    await watch.aclose()
    assert len(batch) > 1 and [item.seq for item in batch] == list(range(1, len(batch) + 1))
    rendering = WatchRendering()
    for item in batch:
        one = pb.WatchGameResponse(event=to_event(item[0]), state=to_state(item[1]))
        assert rendering.message(item) == one.SerializeToString()
        assert rendering.response(item) == one
        assert rendering.response(item) is rendering.response(item)  # made once
    many = pb.WatchGameResponse(events=[to_event(item[0]) for item in batch], state=to_state(batch[-1][1]))
    assert pb.WatchGameResponse.FromString(rendering.batch_message(batch)) == many
    assert rendering.batch_message(batch) is rendering.batch_message(batch)  # rendered once
    assert rendering.batch_response(batch) == many


async def test_watchers_that_leave_a_quiet_match_leave_nothing_behind():
    app = GameApp(MemoryStore(), OP, limits=Limits(watch_per_peer=100))
    created = await app.create_game("grid_knock", 2, {}, SEED, Credential(OP))
    gid, opened = created.game_id, created.state.seq
    stay = app.watch_batches(gid, Credential(), after_seq=opened)
    staying = asyncio.ensure_future(_next(stay))
    while app.feeds.watchers < 1:
        await asyncio.sleep(0.01)
    viewer = next(iter(app.feeds._feeds[gid].viewers.values()))
    for _ in range(50):  # each waits for the next release, then goes
        w = app.watch_batches(gid, Credential(), after_seq=opened)
        waiting = asyncio.ensure_future(_next(w))
        while len(viewer.waiting) < 2:
            await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        await w.aclose()
    assert len(viewer.waiting) == 1 and len(viewer.subs) == 1 and app.feeds.watchers == 1
    staying.cancel()
    await asyncio.gather(staying, return_exceptions=True)
    await stay.aclose()
    assert app.feeds.watchers == 0 and app.feeds.count == 0


async def test_watchers_resuming_at_the_same_place_share_the_catch_up():
    app = GameApp(MemoryStore(), OP)
    created = await app.create_game("grid_knock", 2, {}, SEED, Credential(OP))
    gid, tokens = created.game_id, created.seat_tokens
    after = (await _play(app, gid, tokens, 10)).state.seq - 2

    async def first_batch(cred: Credential, after_seq: int):
        stream = app.watch_batches(gid, cred, after_seq)
        try:
            return await _next(stream)
        finally:
            await stream.aclose()

    first = await first_batch(Credential(), after)
    again = await first_batch(Credential(), after)
    # The second spectator resuming there gets the batch built for the first, not a replay.
    assert again is first and [item.seq for item in first] == [after + 1, after + 2]
    # Another viewer, or another place, is caught up on its own.
    seat = await first_batch(Credential(tokens[0]), after)
    assert seat is not first and seat[-1].state.principal.seat == 0
    assert [item.seq for item in seat] == [after + 1, after + 2]
    earlier = await first_batch(Credential(), after - 1)
    assert earlier is not first and [item.seq for item in earlier] == [after, after + 1, after + 2]
    assert [item.state.view for item in earlier[1:]] == [item.state.view for item in first]
    # A long catch-up is not kept (bounded memory): built again for each watcher.
    assert after + 2 > 8
    whole = await first_batch(Credential(), 0)
    whole_again = await first_batch(Credential(), 0)
    assert whole_again is not whole and [i.seq for i in whole_again] == [i.seq for i in whole] == list(range(1, after + 3))
    # A move since: the catch-up to the new head is built afresh.
    played = await _play(app, gid, tokens, 1, "later")
    later = await first_batch(Credential(), after)
    assert later is not first and [item.seq for item in later] == list(range(after + 1, played.state.seq + 1))
    assert app.feeds.watchers == 0 and app.limiter.open_watches == 0
