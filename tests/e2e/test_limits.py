"""What one client may ask of a server, end to end on real `tablier serve` processes with the
real (not the test suite's lifted) per-peer limits: watch streams, buffers of watchers that do
not read, creation policy and rate, wrong-credential throttling, option and request sizes, and
what is stored of a padded move."""

from __future__ import annotations

import time
import uuid

import grpc
import psycopg
import pytest
from google.protobuf import any_pb2

from tablier.v1 import service_pb2 as pb

from .helpers import OPERATOR, bot_move, create, error_of, expect_error, info_metadata, metrics_address, open_watch, scrape, seat

WAIT = 20.0


def test_watch_streams_are_limited_per_peer_and_per_match(serving):
    srv, stub = serving("--watch-per-peer", "3", "--watch-per-match", "2")
    a, b, c = (create(stub, "grid_knock") for _ in range(3))
    opened = []
    try:
        for game in (a, a):
            channel, stream = open_watch(srv.address, game.game_id)
            next(stream)  # open: it has sent the opening events
            opened.append((channel, stream))
        code, reason, _ = error_of(_refused_watch(srv.address, a.game_id))
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_WATCHES_ON_MATCH")
        channel, stream = open_watch(srv.address, b.game_id)
        next(stream)
        opened.append((channel, stream))
        code, reason, _ = error_of(_refused_watch(srv.address, c.game_id))
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_WATCHES_FROM_PEER")
        # A closed stream gives its place back.
        channel, stream = opened.pop()
        stream.cancel()
        channel.close()
        deadline = time.monotonic() + WAIT
        while True:
            try:
                channel, stream = open_watch(srv.address, c.game_id)
                next(stream)
                opened.append((channel, stream))
                break
            except grpc.RpcError as exc:
                assert error_of(exc)[1] == "TOO_MANY_WATCHES_FROM_PEER"
                assert time.monotonic() < deadline, "the closed stream's place never came back"
                time.sleep(0.05)
    finally:
        for channel, stream in opened:
            stream.cancel()
            channel.close()


def _refused_watch(address: str, game_id: str) -> grpc.RpcError:
    channel, stream = open_watch(address, game_id)
    try:
        next(stream)
    except grpc.RpcError as exc:
        return exc
    finally:
        channel.close()
    raise AssertionError("the stream opened")


def test_a_watcher_that_does_not_read_ends_with_a_resumable_status(serving):
    srv, stub = serving("--watch-buffer", "4", "--metrics-listen", "127.0.0.1:0")
    metrics = metrics_address(srv)
    created = create(stub, "grid_knock", seats=4)
    channel, stream = open_watch(srv.address, created.game_id, small_window=True)
    try:
        first = next(stream)
        state = first.state
        # The client reads nothing more while moves go on: once the transport stops taking
        # its messages, its buffer overflows and the server drops it from the match's feed.
        deadline = time.monotonic() + 60
        while scrape(metrics).get(("tablier_watchers", ()), 0) > 0:
            assert time.monotonic() < deadline, "the watcher that does not read was never dropped"
            assert not state.over, "the match ended before the watcher's buffer overflowed"
            state = bot_move(stub, created, state).state
        received = [first]
        with pytest.raises(grpc.RpcError) as ended:
            for item in stream:
                received.append(item)
        code, reason, _ = error_of(ended.value)
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "WATCH_BUFFER_FULL")
        resume = int(info_metadata(ended.value)["resume_after_seq"])
        assert resume == received[-1].event.seq
        seqs = [r.event.seq for r in received]
        assert seqs == sorted(set(seqs)), "events out of order or repeated"
    finally:
        channel.close()
    # Resuming from there gives the rest, without a gap.
    channel, stream = open_watch(srv.address, created.game_id, after_seq=resume)
    try:
        nxt = next(stream)
        assert nxt.event.seq == resume + 1
    finally:
        channel.close()


def test_creation_is_rate_limited_per_peer(serving):
    _, stub = serving("--create-burst", "3", "--create-rate", "2")
    for _ in range(3):
        create(stub, "grid_knock")
    try:
        create(stub, "grid_knock")
        raise AssertionError("a fourth creation at once was allowed")
    except grpc.RpcError as exc:
        code, reason, _ = error_of(exc)
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "CREATE_RATE_LIMITED")
        assert int(info_metadata(exc)["retry_after_ms"]) > 0
    # The operator token is not rate-limited; the bucket refills.
    stub.CreateGame(pb.CreateGameRequest(game_type="grid_knock", seats=2), metadata=OPERATOR)
    deadline = time.monotonic() + WAIT
    while True:
        try:
            create(stub, "grid_knock")
            break
        except grpc.RpcError as exc:
            assert error_of(exc)[1] == "CREATE_RATE_LIMITED"
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_token_creation_policy_needs_the_creator_token(serving):
    _, stub = serving("--create-policy", "token", env={"TABLIER_CREATOR_TOKEN": "creator-secret"})
    request = pb.CreateGameRequest(game_type="grid_knock", seats=2)
    code, reason, _ = expect_error(stub.CreateGame, request)
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "CREATOR_TOKEN_REQUIRED")
    code, reason, _ = expect_error(stub.CreateGame, request, metadata=seat("not-the-creator"))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "BAD_CREATOR_TOKEN")
    assert stub.CreateGame(request, metadata=seat("creator-secret")).game_id
    assert stub.CreateGame(request, metadata=OPERATOR).game_id


def test_wrong_credentials_are_throttled_per_peer(serving):
    _, stub = serving("--bad-credential-burst", "5", "--bad-credential-rate", "0.5")
    created = create(stub, "grid_knock")
    gid = created.game_id
    request = pb.ListLegalMovesRequest(game_id=gid)
    for _ in range(5):
        code, reason, _ = expect_error(stub.ListLegalMoves, request, metadata=seat(f"{gid}.{uuid.uuid4().hex}"))
        assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN")
    # Now even the right token is refused from this peer until the bucket refills...
    code, reason, _ = expect_error(stub.ListLegalMoves, request, metadata=seat(created.seat_tokens[0]))
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_BAD_CREDENTIALS")
    # ...while calls without a credential are served.
    assert stub.GetView(pb.GetViewRequest(game_id=gid)).state.game_id == gid
    deadline = time.monotonic() + WAIT
    while True:
        try:
            stub.ListLegalMoves(request, metadata=seat(created.seat_tokens[0]))
            break
        except grpc.RpcError as exc:
            assert error_of(exc)[1] == "TOO_MANY_BAD_CREDENTIALS"
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_option_values_and_requests_are_bounded(stub):
    code, reason, _ = expect_error(stub.CreateGame, pb.CreateGameRequest(
        game_type="grid_knock", seats=2, options={"knock_timeout": "1" * 65}))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "OPTION_TOO_LONG")
    code, reason, _ = expect_error(stub.CreateGame, pb.CreateGameRequest(
        game_type="grid_knock", seats=2, options={f"o{i}": "1" for i in range(17)}))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "TOO_MANY_OPTIONS")
    with pytest.raises(grpc.RpcError) as refused:
        stub.GetView(pb.GetViewRequest(game_id="x" * 70_000))
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def _padded(action: any_pb2.Any, size: int, filler: bytes) -> any_pb2.Any:
    """The action with an unknown length-delimited field 1023 of `size` bytes appended."""
    tag, n, length = b"\xfa\x3f", size, bytearray()
    while True:
        length.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            break
    return any_pb2.Any(type_url=action.type_url, value=action.value + tag + bytes(length) + filler * size)


def test_a_padded_move_stores_what_the_rules_decoded(stub, e2e_database_url):
    created = create(stub, "grid_knock")
    gid = created.game_id
    state = created.state
    s = state.to_act[0]
    suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=seat(created.seat_tokens[s]))
    command_id = str(uuid.uuid4())
    played = stub.PlayMove(pb.PlayMoveRequest(
        game_id=gid, command_id=command_id, action=_padded(suggestion.action, 60_000, b"a")),
        metadata=seat(created.seat_tokens[s]))
    assert not played.replayed
    # The same command with other padding is the same command: a retry, not a reuse.
    again = stub.PlayMove(pb.PlayMoveRequest(
        game_id=gid, command_id=command_id, action=_padded(suggestion.action, 1_000, b"b")),
        metadata=seat(created.seat_tokens[s]))
    assert again.replayed and [e.seq for e in again.events] == [e.seq for e in played.events]
    with psycopg.connect(e2e_database_url) as conn:
        stored = conn.execute("SELECT action FROM commands WHERE game_id = %s AND command_id = %s",
                              (gid, command_id)).fetchone()[0]
        largest_event = conn.execute("SELECT max(length(payload)) FROM events WHERE game_id = %s", (gid,)).fetchone()[0]
    assert bytes(stored) == suggestion.action.value
    assert largest_event < 60_000
    # A move padded past the request limit never reaches the server's code.
    with pytest.raises(grpc.RpcError) as refused:
        stub.PlayMove(pb.PlayMoveRequest(
            game_id=gid, command_id=str(uuid.uuid4()), action=_padded(suggestion.action, 3_900_000, b"c")),
            metadata=seat(created.seat_tokens[s]))
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
