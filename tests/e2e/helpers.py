"""Small helpers for the end-to-end tests (sync gRPC stubs)."""

from __future__ import annotations

import time
import urllib.request
import uuid

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from prometheus_client.parser import text_string_to_metric_families

from tablier import _core
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import GAME_TYPES, OPERATOR_TOKEN, Server

OPERATOR = (("authorization", f"Bearer {OPERATOR_TOKEN}"),)
INFO = {t.id: t for t in GAME_TYPES}


def seat(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def error_of(exc: grpc.RpcError) -> tuple[grpc.StatusCode, str, str]:
    """(code, ErrorInfo.reason, message) of a failed call; asserts the rich status is there."""
    status = rpc_status.from_call(exc)
    assert status is not None, f"no google.rpc.Status on {exc.code()}: {exc.details()}"
    infos = []
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            infos.append(info)
    assert len(infos) == 1 and infos[0].domain == "tablier.v1", status
    assert status.message, "an error needs a message a person understands"
    return exc.code(), infos[0].reason, status.message


def expect_error(call, *args, **kwargs) -> tuple[grpc.StatusCode, str, str]:
    try:
        call(*args, **kwargs)
    except grpc.RpcError as exc:
        return error_of(exc)
    raise AssertionError("the call succeeded")


def create(stub, game: str, seats: int | None = None, seed: bytes = b"") -> pb.CreateGameResponse:
    return stub.CreateGame(pb.CreateGameRequest(
        game_type=game, seats=seats or INFO[game].min_players, seed=seed), metadata=OPERATOR if seed else ())


def raw_events(stub, game_id: str, min_seq: int | None = None) -> pb.ListEventsResponse:
    """Every event unredacted (operator = auditor); with `min_seq`, up to that seq at least
    (a seq written through another connection or server)."""
    return stub.ListEvents(pb.ListEventsRequest(game_id=game_id, min_seq=min_seq), metadata=OPERATOR)


def last_seq(stub, game_id: str, min_seq: int | None = None) -> int:
    return raw_events(stub, game_id, min_seq).last_seq


def replay_locally(stub, created: pb.CreateGameResponse, upto: int | None = None,
                   options: dict[str, str] | None = None) -> _core.Match:
    st = created.state
    match = _core.Match(st.game_type, st.seat_count, options or {})
    events = [e for e in raw_events(stub, created.game_id).events if upto is None or e.seq <= upto]
    match.apply_all([e.payload.value for e in events], [e.type for e in events])
    return match


def bot_move(stub, created: pb.CreateGameResponse, state: pb.GameState | None = None) -> pb.PlayMoveResponse:
    """The awaited seat plays the core's suggestion (decided at `state`'s seq or later: the
    state may come from another connection or server)."""
    state = state or stub.GetView(pb.GetViewRequest(game_id=created.game_id, min_seq=created.state.seq)).state
    s = state.to_act[0]
    md = seat(created.seat_tokens[s])
    suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=created.game_id, min_seq=state.seq), metadata=md)
    return stub.PlayMove(pb.PlayMoveRequest(
        game_id=created.game_id, command_id=str(uuid.uuid4()), action=suggestion.action,
        expected_seq=suggestion.seq), metadata=md)


def info_metadata(exc: grpc.RpcError) -> dict[str, str]:
    for detail in rpc_status.from_call(exc).details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return dict(info.metadata)
    return {}


def metrics_address(srv: Server) -> str:
    """The URL of the server's /metrics, from its log."""
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline:
        for line in srv.log.read_text().splitlines():
            if "tablier metrics on " in line:
                return line.split("tablier metrics on ", 1)[1].strip()
        time.sleep(0.05)
    raise AssertionError(f"no metrics address in the log: {srv.log.read_text()}")


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = urllib.request.urlopen(url, timeout=20.0).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def open_watch(address: str, game_id: str, after_seq: int = 0, batches: bool = False, small_window: bool = False):
    """A WatchGame stream on its own channel. `small_window`: the channel keeps HTTP/2's
    initial 64 KiB receive window (no BDP probing, which would grow it to megabytes), so a
    client that stops reading stalls the server's writes soon."""
    channel = grpc.insecure_channel(address, options=[("grpc.http2.bdp_probe", 0)] if small_window else [])
    stream = rpc.GameServiceStub(channel).WatchGame(
        pb.WatchGameRequest(game_id=game_id, after_seq=after_seq, batches=batches))
    return channel, stream
