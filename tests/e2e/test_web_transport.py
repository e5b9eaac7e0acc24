"""GameService over the browser transport (Connect and gRPC-Web on `--web-listen`) end to end:
a real `tablier serve` with its browser address on loopback, called with connectrpc's client.
Its answers must be the gRPC API's: same messages, same errors (code, ErrorInfo reason,
message), same redaction."""

from __future__ import annotations

import threading
import urllib.request
import uuid
from collections.abc import Iterator

import grpc
import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.protocol import ProtocolType
from google.protobuf import any_pb2, message_factory
from google.rpc import error_details_pb2

from tablier.v1 import service_pb2 as pb

from .conftest import GAME_IDS, GAME_TYPES, Server, start_server
from .helpers import INFO, OPERATOR, create, expect_error, last_seq, raw_events, replay_locally, seat

WAIT = 20.0
WATCH_LIMIT = 300.0
ORIGIN = "http://localhost:5173"
SERVICE = pb.DESCRIPTOR.services_by_name["GameService"]


@pytest.fixture(scope="session")
def web_server(e2e_database_url: str, tmp_path_factory) -> Iterator[Server]:
    site = tmp_path_factory.mktemp("site")
    (site / "index.html").write_text("<!doctype html><title>tablier test page</title>")
    srv = start_server(e2e_database_url, tmp_path_factory.mktemp("servers"), "web",
                       "--web-listen", "127.0.0.1:0", "--web-dir", str(site), "--cors-origin", ORIGIN)
    try:
        yield srv
    finally:
        code = srv.stop()
        assert code == 0, srv.log.read_text()


class ConnectStub:
    """GameService methods by name, over connectrpc's client (any of its protocols)."""

    def __init__(self, url: str, protocol: ProtocolType = ProtocolType.CONNECT) -> None:
        self.client = ConnectClientSync(url, codec=google_protobuf_binary_codec(), protocol=protocol,
                                        timeout_ms=int(WAIT * 1000))
        self.methods = {
            m.name: (m.server_streaming, MethodInfo(
                name=m.name, service_name=SERVICE.full_name,
                input=message_factory.GetMessageClass(m.input_type),
                output=message_factory.GetMessageClass(m.output_type),
                idempotency_level=IdempotencyLevel.UNKNOWN,
                stream_type=StreamType.SERVER_STREAM if m.server_streaming else StreamType.UNARY))
            for m in SERVICE.methods
        }

    def call(self, name: str, request, metadata=()):
        streaming, info = self.methods[name]
        headers = dict(metadata)
        if streaming:  # a watch lasts as long as its match: a test ends it by its own deadline
            return self.client.execute_server_stream(request=request, method=info, headers=headers,
                                                     timeout_ms=int(WATCH_LIMIT * 1000))
        return self.client.execute_unary(request=request, method=info, headers=headers)

    def __getattr__(self, name: str):
        return lambda request, metadata=(): self.call(name, request, metadata)


@pytest.fixture(scope="session")
def web(web_server: Server) -> Iterator[ConnectStub]:
    """The Connect protocol (what the web app speaks)."""
    stub = ConnectStub(web_server.web_url)
    yield stub
    stub.client.close()


@pytest.fixture(scope="session")
def grpc_web(web_server: Server) -> Iterator[ConnectStub]:
    stub = ConnectStub(web_server.web_url, ProtocolType.GRPC_WEB)
    yield stub
    stub.client.close()


@pytest.fixture(params=["web", "grpc_web"], ids=["connect", "grpc-web"])
def either(request) -> ConnectStub:
    """Each browser protocol in turn."""
    return request.getfixturevalue(request.param)


def connect_error_of(exc: ConnectError) -> tuple[str, str, str]:
    """(code name, ErrorInfo.reason, message), asserting the rich detail is there."""
    infos = []
    for detail in exc.details:
        if detail.type_name == "google.rpc.ErrorInfo":
            infos.append(error_details_pb2.ErrorInfo.FromString(detail.message_bytes))
    assert len(infos) == 1 and infos[0].domain == "tablier.v1", exc.details
    assert exc.message
    return exc.code.name, infos[0].reason, exc.message


def web_error(call, *args, **kwargs) -> tuple[str, str, str]:
    try:
        result = call(*args, **kwargs)
        if not hasattr(result, "SerializeToString"):
            list(result)  # a stream fails while it is read
    except ConnectError as exc:
        return connect_error_of(exc)
    raise AssertionError("the call succeeded")


def grpc_error(call, *args, **kwargs) -> tuple[str, str, str]:
    code, reason, message = expect_error(lambda *a, **k: _drained(call(*a, **k)), *args, **kwargs)
    return code.name, reason, message


def _drained(result):
    if not hasattr(result, "SerializeToString"):
        list(result)  # a stream fails while it is read
    return result


def test_list_game_types_is_the_grpc_answer(either, stub):
    got = either.ListGameTypes(pb.ListGameTypesRequest()).game_types
    assert [t.SerializeToString() for t in got] == [t.SerializeToString() for t in GAME_TYPES]
    assert got == stub.ListGameTypes(pb.ListGameTypesRequest()).game_types


@pytest.mark.parametrize("game", GAME_IDS)
def test_a_whole_match_over_the_browser_transport_with_a_watcher(web, stub, game):
    """Create, then the awaited seat plays the core's suggestion until the end, all over the
    browser transport, while a WatchGame stream (also over it) follows every event."""
    created = web.CreateGame(pb.CreateGameRequest(game_type=game, seats=INFO[game].min_players))
    gid = created.game_id
    watched: list[pb.WatchGameResponse] = []
    failures: list[BaseException] = []

    def watch() -> None:
        try:
            for item in web.WatchGame(pb.WatchGameRequest(game_id=gid, after_seq=created.state.seq)):
                watched.append(item)
                if item.state.over:
                    return
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    state = created.state
    moves = 0
    while not state.over:
        actor = state.to_act[0]
        md = seat(created.seat_tokens[actor])
        legal = web.ListLegalMoves(pb.ListLegalMovesRequest(game_id=gid), metadata=md)
        suggestion = web.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md)
        assert suggestion.action.SerializeToString() in {m.SerializeToString() for m in legal.moves}
        played = web.PlayMove(pb.PlayMoveRequest(game_id=gid, command_id=str(uuid.uuid4()),
                                                 action=suggestion.action, expected_seq=suggestion.seq), metadata=md)
        assert played.state.seat == actor and played.state.role == pb.ROLE_SEAT
        state = played.state
        moves += 1
        assert moves < 5000
    watcher.join(WAIT)
    assert not watcher.is_alive() and not failures, failures
    # The stream followed the whole match, as the spectator it is, ending at the final state.
    assert watched and watched[-1].state.over and watched[-1].state.seq == state.seq
    seqs = [w.event.seq for w in watched]
    assert seqs == sorted(set(seqs)) and seqs[0] > created.state.seq
    assert all(w.state.role == pb.ROLE_SPECTATOR for w in watched)
    # What it saw is what the core shows a spectator: the local replay's public view.
    match = replay_locally(stub, created)
    assert watched[-1].state.view.value == match.view()
    assert last_seq(stub, gid) == state.seq
    final = stub.GetView(pb.GetViewRequest(game_id=gid)).state
    assert final.outcome == state.outcome and final.over


@pytest.mark.parametrize("game", GAME_IDS)
def test_views_are_the_grpc_views_for_every_viewer(either, stub, game):
    web = either
    created = create(stub, game, seats=INFO[game].max_players)
    gid = created.game_id
    viewers = [()] + [seat(t) for t in created.seat_tokens] + [OPERATOR + (("x-tablier-role", "auditor"),)]
    for md in viewers:
        via_web = web.GetView(pb.GetViewRequest(game_id=gid), metadata=md).state
        via_grpc = stub.GetView(pb.GetViewRequest(game_id=gid), metadata=md).state
        assert via_web.SerializeToString() == via_grpc.SerializeToString()
    events = web.ListEvents(pb.ListEventsRequest(game_id=gid))
    assert events == stub.ListEvents(pb.ListEventsRequest(game_id=gid))


def test_refusals_are_the_grpc_refusals(either, stub):
    """One error table: each refusal has the same code, reason and message on both transports."""
    web = either
    game = next(g for g in GAME_IDS if len(create(stub, g).state.to_act) < INFO[g].min_players)
    created = create(stub, game)
    other = create(stub, game)
    gid = created.game_id
    state = created.state
    actor = state.to_act[0]
    idle = next(s for s in range(state.seat_count) if s not in state.to_act)
    good = stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=gid), metadata=seat(created.seat_tokens[actor])).moves[0]
    before = last_seq(stub, gid)

    def play(action=good, md=(), game_id=gid, **kw):
        return pb.PlayMoveRequest(game_id=game_id, command_id=str(uuid.uuid4()), action=action, **kw), md

    cases = {
        "unknown game type": ("CreateGame", (pb.CreateGameRequest(game_type="nope", seats=2), ())),
        "bad option": ("CreateGame", (pb.CreateGameRequest(game_type=game, seats=2, options={"x": "y"}), ())),
        "out of turn": ("PlayMove", play(md=seat(created.seat_tokens[idle]))),
        "malformed action": ("PlayMove", play(any_pb2.Any(type_url=good.type_url, value=b"\xff\xff\xff"),
                                               seat(created.seat_tokens[actor]))),
        "wrong token": ("PlayMove", play(md=seat("not-a-token"))),
        "not a bearer credential": ("PlayMove", play(md=(("authorization", "Basic abc"),))),
        "missing token": ("PlayMove", play()),
        "token of another match": ("PlayMove", play(md=seat(other.seat_tokens[0]))),
        "unknown match": ("GetView", (pb.GetViewRequest(game_id=str(uuid.uuid4())), ())),
        "bad uuid": ("ListLegalMoves", (pb.ListLegalMovesRequest(game_id="x"), seat(created.seat_tokens[actor]))),
        "stale seq": ("PlayMove", play(md=seat(created.seat_tokens[actor]), expected_seq=before - 1)),
        "bad role": ("GetView", (pb.GetViewRequest(game_id=gid), (("x-tablier-role", "king"),))),
        "past the end": ("GetView", (pb.GetViewRequest(game_id=gid, at_seq=before + 5), ())),
        "watch an unknown match": ("WatchGame", (pb.WatchGameRequest(game_id=str(uuid.uuid4())), ())),
    }
    for name, (method, (request, md)) in cases.items():
        via_web = web_error(getattr(web, method), request, metadata=md)
        via_grpc = grpc_error(getattr(stub, method), request, metadata=md)
        assert via_web[:2] == via_grpc[:2], name
        # Messages may name a fresh command or incident; the reasons and codes are the table's.
        if via_grpc[1] != "INTERNAL":
            assert via_web[2] == via_grpc[2], name
    assert web_error(web.PlayMove, *play(md=seat(created.seat_tokens[idle])))[:2] == ("FAILED_PRECONDITION", "NOT_YOUR_TURN")
    assert last_seq(stub, gid) == before


def test_grpc_web_streams_a_watch(grpc_web, stub):
    """gRPC-Web's server stream (trailers in the body) carries a whole finished match."""
    game = GAME_IDS[0]
    created = create(stub, game)
    state = created.state
    while not state.over:
        from .helpers import bot_move

        state = bot_move(stub, created, state).state
    items = list(grpc_web.WatchGame(pb.WatchGameRequest(game_id=created.game_id)))
    assert items and items[-1].state.over and items[-1].state.seq == state.seq
    assert [i.event.seq for i in items] == sorted({i.event.seq for i in items})


def _post(url: str, body: bytes, headers: dict[str, str], method: str = "POST") -> tuple[int, dict, bytes]:
    req = urllib.request.Request(url, data=body if method == "POST" else None, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=WAIT) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def test_undecodable_bodies_are_refused_with_the_grpc_reason(web_server):
    for method in ("GetView", "PlayMove", "CreateGame"):
        status, _, body = _post(f"{web_server.web_url}/tablier.v1.GameService/{method}", b"\xff\xff\xff\xff",
                                {"content-type": "application/proto", "connect-protocol-version": "1"})
        assert status == 400, body
        assert b'"invalid_argument"' in body and b"UNDECODABLE_REQUEST" not in body  # base64 in details
        import base64
        import json
        error = json.loads(body)
        (detail,) = error["details"]
        value = base64.b64decode(detail["value"] + "=" * (-len(detail["value"]) % 4))
        assert error_details_pb2.ErrorInfo.FromString(value).reason == "UNDECODABLE_REQUEST"


def test_json_clients_are_served(web_server):
    status, headers, body = _post(f"{web_server.web_url}/tablier.v1.GameService/ListGameTypes", b"{}",
                                  {"content-type": "application/json"})
    assert status == 200 and headers["content-type"].startswith("application/json")
    assert all(f'"{g}"'.encode() in body for g in GAME_IDS)


def test_cors_allows_the_listed_origin_only(web_server):
    url = f"{web_server.web_url}/tablier.v1.GameService/PlayMove"
    ask = {"access-control-request-method": "POST",
           "access-control-request-headers": "authorization,content-type,connect-protocol-version"}
    status, headers, _ = _post(url, b"", {"origin": ORIGIN, **ask}, method="OPTIONS")
    assert status == 200
    assert headers["access-control-allow-origin"] == ORIGIN
    assert "authorization" in headers["access-control-allow-headers"].lower()
    status, headers, _ = _post(url, b"", {"origin": "http://evil.example", **ask}, method="OPTIONS")
    assert status == 400 and "access-control-allow-origin" not in headers
    # An ordinary call from the listed origin may read the gRPC-Web status headers.
    status, headers, _ = _post(f"{web_server.web_url}/tablier.v1.GameService/ListGameTypes", b"{}",
                               {"content-type": "application/json", "origin": ORIGIN})
    assert status == 200 and headers["access-control-allow-origin"] == ORIGIN
    assert "grpc-status" in headers["access-control-expose-headers"]


def test_the_web_dir_is_served_at_the_root(web_server):
    status, headers, body = _post(f"{web_server.web_url}/", b"", {}, method="GET")
    assert status == 200 and b"tablier test page" in body
    status, _, _ = _post(f"{web_server.web_url}/no-such-file.js", b"", {}, method="GET")
    assert status == 404


def test_the_grpc_address_is_unchanged_by_the_browser_address(web_server):
    """Both addresses serve the same database: a match made on one is visible on the other."""
    with grpc.insecure_channel(web_server.address) as channel:
        from tablier.v1 import service_pb2_grpc as rpc

        grpc_stub = rpc.GameServiceStub(channel)
        created = create(grpc_stub, GAME_IDS[0])
    web = ConnectStub(web_server.web_url)
    try:
        seen = web.GetView(pb.GetViewRequest(game_id=created.game_id)).state
    finally:
        web.client.close()
    assert seen.game_id == created.game_id and seen.seq == created.state.seq
    assert raw_events
