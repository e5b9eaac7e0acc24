"""Many watchers of one match, end to end on a real `tablier serve` and PostgreSQL: paced and
batched (WatchGameRequest.batches), every watcher still gets every event it may see, once and
in order; a batched watcher that stops reading still ends with a status it can resume from.
How fast is the bench's business (tests/bench/abuse_figures.py fanout), not these tests'."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import grpc
import pytest

from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .helpers import bot_move, create, error_of, info_metadata, metrics_address, open_watch, scrape, seat

WATCHERS = 200
MOVES = 120


def _events(response: pb.WatchGameResponse) -> list[pb.Event]:
    return list(response.events) if response.events else [response.event]


async def test_every_watcher_gets_every_event_in_order_when_paced(serving):
    # 200 watchers: the server sends to each at most every 200 ms, so moves pile up between
    # its sends and most responses carry several events.
    srv, sync_stub = serving("--watch-per-peer", "1000", "--watch-per-match", "1000", "--watch-unbatched-per-match", "1000")
    created = create(sync_stub, "grid_knock", seats=4)
    gid = created.game_id
    # Spectators (three in four batched, the rest one event per response) and seat 0's own
    # view (redacted differently: another viewer, another log), from the start of the match.
    kinds = [(i % 4 != 0, () if i % 10 else seat(created.seat_tokens[0])) for i in range(WATCHERS)]
    received: list[list[pb.WatchGameResponse]] = [[] for _ in kinds]
    final: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async with grpc.aio.insecure_channel(srv.address) as channel:
        stub = rpc.GameServiceStub(channel)

        calls: dict[int, grpc.aio.UnaryStreamCall] = {}

        async def watch(i: int, first: asyncio.Future[None]) -> None:
            batches, metadata = kinds[i]
            calls[i] = stub.WatchGame(pb.WatchGameRequest(game_id=gid, batches=batches), metadata=metadata)
            try:
                async for response in calls[i]:
                    received[i].append(response)
                    if not first.done():
                        first.set_result(None)
                    if final.done() and response.state.seq >= final.result():
                        calls[i].cancel()
                        return
            except asyncio.CancelledError:  # its call, cancelled below once it has everything
                if not final.done():
                    raise

        watchers = []
        for start in range(0, WATCHERS, 50):  # opened 50 at a time, each open before the next 50
            firsts = [asyncio.get_running_loop().create_future() for _ in range(start, min(start + 50, WATCHERS))]
            watchers += [asyncio.create_task(watch(start + j, f)) for j, f in enumerate(firsts)]
            await asyncio.gather(*firsts)

        state = created.state
        for _ in range(MOVES):
            s = state.to_act[0]
            md = seat(created.seat_tokens[s])
            suggestion = await stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md)
            state = (await stub.PlayMove(pb.PlayMoveRequest(
                game_id=gid, command_id=str(uuid.uuid4()), action=suggestion.action,
                expected_seq=suggestion.seq), metadata=md)).state
        final.set_result(state.seq)
        for i, call in calls.items():
            if received[i][-1].state.seq >= state.seq:
                call.cancel()
        await asyncio.gather(*watchers)

        expected = {}
        for metadata in {m for _, m in kinds}:
            listed = await stub.ListEvents(pb.ListEventsRequest(game_id=gid), metadata=metadata)
            expected[metadata] = [e.SerializeToString() for e in listed.events if e.seq <= state.seq]

    several = 0
    for (batches, metadata), responses in zip(kinds, received, strict=True):
        got = [e.SerializeToString() for r in responses for e in _events(r)]
        assert got == expected[metadata], "a watcher missed, repeated or reordered events"
        for r in responses:
            assert bool(r.events) == batches and r.HasField("event") != batches
            assert r.state.seq >= _events(r)[-1].seq  # the state after the response's last event
        assert responses[-1].state.seq == state.seq
        several += sum(len(r.events) > 1 for r in responses)
    # A move of several events is released at once, so batches of several events happen.
    assert several > 0


def test_a_batched_watcher_that_does_not_read_ends_with_a_resumable_status(serving):
    srv, stub = serving("--watch-buffer", "8", "--metrics-listen", "127.0.0.1:0")
    metrics = metrics_address(srv)
    created = create(stub, "grid_knock", seats=4)
    gid = created.game_id
    # A batched watcher that reads, beside the one that stops: it must get everything.
    reader_channel, reader = open_watch(srv.address, gid, batches=True)
    read: list[pb.WatchGameResponse] = [next(reader)]
    arrived = threading.Condition()

    def keep_reading() -> None:
        try:
            for response in reader:
                with arrived:
                    read.append(response)
                    arrived.notify_all()
        except grpc.RpcError:
            return

    channel, stream = open_watch(srv.address, gid, batches=True, small_window=True)
    thread = threading.Thread(target=keep_reading, daemon=True)
    try:
        first = next(stream)
        thread.start()
        deadline = time.monotonic() + 60
        while scrape(metrics).get(("tablier_watchers", ()), 0) > 1:
            assert time.monotonic() < deadline, "the watcher that does not read was never dropped"
            state = bot_move(stub, created).state
            assert not state.over, "the match ended before the watcher's buffer overflowed"
        # One more move, then the reader has everything up to it (it may have it already).
        last = bot_move(stub, created).state.seq
        with arrived:
            got_last = arrived.wait_for(lambda: read[-1].state.seq >= last, timeout=60)
        assert got_last, "the reading watcher did not get the last move"
        received = [first]
        with pytest.raises(grpc.RpcError) as ended:
            for response in stream:
                received.append(response)
        code, reason, _ = error_of(ended.value)
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "WATCH_BUFFER_FULL")
        resume = int(info_metadata(ended.value)["resume_after_seq"])
        seqs = [e.seq for r in received for e in r.events]
        assert resume == seqs[-1]
        assert seqs == list(range(seqs[0], seqs[-1] + 1)), "events out of order, missing or repeated"
        with arrived:
            read_seqs = [e.seq for r in read for e in r.events]
        assert read_seqs == list(range(read_seqs[0], last + 1)), "the reading watcher missed events"
    finally:
        channel.close()
        reader_channel.close()
    # Resuming from there gives the rest, without a gap.
    channel, stream = open_watch(srv.address, gid, after_seq=resume, batches=True)
    try:
        assert next(stream).events[0].seq == resume + 1
    finally:
        channel.close()
