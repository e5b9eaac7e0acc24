"""GameService over the browser transport (Connect and gRPC-Web on `--web-listen`) end to end:
a real `tablier serve` with its browser address on loopback, called with connectrpc's client.
Its answers must be the gRPC API's: same messages, same errors (code, ErrorInfo reason,
message), same redaction, the same request-size limit, and its calls counted and logged as
gRPC calls are."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator

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
from .helpers import (INFO, OPERATOR, bot_move, create, expect_error, last_seq, metrics_address, raw_events,
                      replay_locally, scrape, seat)

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


def test_calls_on_a_kept_alive_connection_answer_without_waiting_for_an_ack(web_server):
    """A response goes out as headers then body: with Nagle's algorithm on the server's socket
    the body waited for the client's delayed ACK of the headers, 40-44 ms a call on a reused
    connection (2 ms on a fresh one). Calls on one kept-alive connection answer well inside it."""
    import http.client
    import statistics
    from urllib.parse import urlsplit

    url = urlsplit(web_server.web_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=WAIT)
    try:
        times = []
        for i in range(31):
            started = time.perf_counter()
            conn.request("POST", "/tablier.v1.GameService/ListGameTypes", body=b"{}",
                         headers={"content-type": "application/json", "connect-protocol-version": "1"})
            response = conn.getresponse()
            body = response.read()
            assert response.status == 200 and all(f'"{g}"'.encode() in body for g in GAME_IDS), body[:200]
            if i == 0:
                sock = conn.sock  # the connection every later call reuses
            else:
                assert conn.sock is sock, "the connection was not kept alive"
                times.append(time.perf_counter() - started)
    finally:
        conn.close()
    assert statistics.median(times) < 0.020, sorted(times)


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


LIMIT = 65536  # --max-request-bytes by default


def _padded(request, size: int) -> bytes:
    """`request` serialized with an unknown length-delimited field (number 1000) making it
    exactly `size` bytes."""
    body = request.SerializeToString()
    tag = b"\xc2\x3e"  # field 1000, wire type 2
    for length_bytes in (1, 2, 3):
        pad = size - len(body) - len(tag) - length_bytes
        length = bytearray()
        n = pad
        while True:
            length.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                break
        if len(length) == length_bytes:
            out = body + tag + bytes(length) + b"\0" * pad
            assert len(out) == size and type(request).FromString(out).game_id == request.game_id
            return out
    raise AssertionError(size)


def _reason_of_connect_body(body: bytes) -> tuple[str, str]:
    error = json.loads(body[body.index(b"{"):body.rindex(b"}") + 1])  # whole, or one chunk
    (detail,) = error["details"]
    value = base64.b64decode(detail["value"] + "=" * (-len(detail["value"]) % 4))
    return error["code"], error_details_pb2.ErrorInfo.FromString(value).reason


def _answer_before_the_body_ends(web_url: str, head: bytes, sent: bytes, complete: Callable[[bytes], bool]) -> bytes:
    """Sends a request's head and part of its body, never the rest, and reads the answer
    until `complete` says it is whole: a server that waits for the rest times out the test."""
    host, port = web_url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=WAIT) as sock:
        sock.sendall(head + sent)
        got = b""
        while not complete(got):
            chunk = sock.recv(65536)
            assert chunk, got  # closed before a whole answer
            got += chunk
        return got


def _whole_http(got: bytes) -> bool:
    head, sep, body = got.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return body.endswith(b"0\r\n\r\n")  # chunked


def _connect_head(method: str, extra: str) -> bytes:
    return (f"POST /tablier.v1.GameService/{method} HTTP/1.1\r\nhost: localhost\r\n"
            f"content-type: application/proto\r\nconnect-protocol-version: 1\r\n{extra}\r\n").encode()


def test_a_request_over_the_limit_is_refused_without_reading_the_rest(web_server):
    """As gRPC refuses it (`--max-request-bytes`), with a reason, and without waiting for
    the body: declared too large, sent in chunks past the limit, or framed too large."""
    # Declared: answered from the headers, before any of the body.
    got = _answer_before_the_body_ends(web_server.web_url, _connect_head("PlayMove", "content-length: 10000000\r\n"),
                                       b"", _whole_http)
    assert got.startswith(b"HTTP/1.1 429"), got[:200]
    assert _reason_of_connect_body(got.partition(b"\r\n\r\n")[2]) == ("resource_exhausted", "REQUEST_TOO_LARGE")
    # Chunked, no length: refused once past the limit, the end never sent.
    chunk = b"\0" * 16384
    part = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(LIMIT // len(chunk) + 2))
    got = _answer_before_the_body_ends(web_server.web_url, _connect_head("PlayMove", "transfer-encoding: chunked\r\n"),
                                       part, _whole_http)
    assert got.startswith(b"HTTP/1.1 429"), got[:200]
    assert _reason_of_connect_body(got.partition(b"\r\n\r\n")[2]) == ("resource_exhausted", "REQUEST_TOO_LARGE")
    # gRPC-Web: a frame announcing more than the limit, then nothing.
    head = (b"POST /tablier.v1.GameService/PlayMove HTTP/1.1\r\nhost: localhost\r\n"
            b"content-type: application/grpc-web+proto\r\ntransfer-encoding: chunked\r\n\r\n")
    frame = b"\0" + (LIMIT + 1).to_bytes(4, "big")
    got = _answer_before_the_body_ends(web_server.web_url, head, b"5\r\n" + frame + b"\r\n",
                                       lambda got: b"grpc-status-details-bin" in got and got.endswith(b"\r\n\r\n"))
    assert b"grpc-status: 8" in got, got  # RESOURCE_EXHAUSTED
    details = got.split(b"grpc-status-details-bin:", 1)[1].split(b"\r\n", 1)[0].strip()
    from google.rpc import status_pb2

    status = status_pb2.Status.FromString(base64.b64decode(details + b"=" * (-len(details) % 4)))
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info) and info.reason == "REQUEST_TOO_LARGE"


def test_the_limit_is_the_grpc_limit(web_server, stub):
    """A request of exactly --max-request-bytes is read on both transports; one byte more is
    RESOURCE_EXHAUSTED on both."""
    request = pb.GetViewRequest(game_id=str(uuid.uuid4()))
    url = f"{web_server.web_url}/tablier.v1.GameService/GetView"
    headers = {"content-type": "application/proto", "connect-protocol-version": "1"}
    status, _, body = _post(url, _padded(request, LIMIT), headers)
    assert status == 404 and _reason_of_connect_body(body) == ("not_found", "UNKNOWN_MATCH")
    status, _, body = _post(url, _padded(request, LIMIT + 1), headers)
    assert status == 429 and _reason_of_connect_body(body) == ("resource_exhausted", "REQUEST_TOO_LARGE")
    call = stub.GetView
    raw = {size: pb.GetViewRequest.FromString(_padded(request, size)) for size in (LIMIT, LIMIT + 1)}
    assert [m.ByteSize() for m in raw.values()] == [LIMIT, LIMIT + 1]  # unknown fields are sent on
    with pytest.raises(grpc.RpcError) as fits:
        call(raw[LIMIT])
    assert fits.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as too_large:
        call(raw[LIMIT + 1])
    assert too_large.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_browser_calls_are_counted_and_logged_as_grpc_calls(e2e_database_url, tmp_path):
    """The same tablier_rpc_duration_seconds{method,code} and the same access-log line, one
    per call, whichever transport carried it; a refusal for size is counted and logged too."""
    srv = start_server(e2e_database_url, tmp_path, "observed", "--web-listen", "127.0.0.1:0",
                       "--metrics-listen", "127.0.0.1:0", "--access-log", "json")
    web = ConnectStub(srv.web_url)
    grpc_web = ConnectStub(srv.web_url, ProtocolType.GRPC_WEB)
    try:
        url = metrics_address(srv)
        with grpc.insecure_channel(srv.address) as channel:
            from tablier.v1 import service_pb2_grpc as rpc

            stub = rpc.GameServiceStub(channel)
            for _ in range(2):
                stub.ListGameTypes(pb.ListGameTypesRequest())
            created = create(stub, "qwirkle")
            state = created.state
            for _ in range(2):
                state = bot_move(stub, created, state).state
        for client in (web, grpc_web, web):
            client.ListGameTypes(pb.ListGameTypesRequest())
        web.GetView(pb.GetViewRequest(game_id=created.game_id), metadata=seat(created.seat_tokens[0]))
        marker = str(uuid.uuid4())
        refused = web_error(grpc_web.GetView, pb.GetViewRequest(game_id=marker))
        stream = grpc_web.WatchGame(pb.WatchGameRequest(game_id=created.game_id))
        assert next(stream).event.seq == 1
        assert scrape(url)[("tablier_open_streams", (("method", "WatchGame"),))] == 1
        stream.close()  # the browser goes away
        status, _, _ = _post(f"{srv.web_url}/tablier.v1.GameService/GetView", _padded(pb.GetViewRequest(), LIMIT + 1),
                             {"content-type": "application/proto", "connect-protocol-version": "1"})
        assert status == 429

        deadline = time.monotonic() + WAIT
        while (got := scrape(url))[("tablier_open_streams", (("method", "WatchGame"),))] != 0:
            assert time.monotonic() < deadline, got
            time.sleep(0.05)

        def count(method: str, code: str = "OK") -> float:
            return got.get(("tablier_rpc_duration_seconds_count", (("code", code), ("method", method))), 0.0)

        assert count("ListGameTypes") == 5
        assert count("GetView") == 1
        assert count("GetView", refused[0]) == 1 and refused[:2] == ("NOT_FOUND", "UNKNOWN_MATCH")
        assert count("GetView", "RESOURCE_EXHAUSTED") == 1
        assert count("WatchGame", "CANCELLED") == 1

        deadline = time.monotonic() + WAIT
        while True:
            lines = [json.loads(line) for line in srv.log.read_text().splitlines() if line.startswith("{")]
            views = [c for c in lines if c.get("method") == "GetView"]
            if len(views) >= 3:
                break
            assert time.monotonic() < deadline, srv.log.read_text()
            time.sleep(0.05)
        ok, unknown, too_large = views
        assert (ok["code"], ok["game_id"], ok["peer"]) == ("OK", created.game_id, "127.0.0.1")
        assert (unknown["code"], unknown["reason"], unknown["game_id"]) == ("NOT_FOUND", "UNKNOWN_MATCH", marker)
        assert (too_large["code"], too_large["reason"]) == ("RESOURCE_EXHAUSTED", "REQUEST_TOO_LARGE")
        assert sum(c.get("method") == "ListGameTypes" for c in lines) == 5
    finally:
        web.client.close()
        grpc_web.client.close()
        assert srv.stop() == 0, srv.log.read_text()
