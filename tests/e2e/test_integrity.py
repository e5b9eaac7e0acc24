"""A live server checks what it loads: eleven kinds of tampering by someone with write access to
the database, seen by a server that has the match cached (warm) and by a freshly started one
(cold). Each is DATA_LOSS naming the first bad seq, on every call, never INTERNAL, never served;
an acknowledged command whose events are gone is never applied again."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import grpc
import psycopg
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from tablier.v1 import carre_pb2
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import start_server
from .helpers import error_of, metrics_address, scrape, seat

GAME = "carre"

KINDS = [
    "payload_bit",        # one bit of a payload flipped (still decodes)
    "payload_garbage",    # a payload that no longer decodes
    "swapped_deal",       # two dealt cards swapped between the hands
    "renumbered_seq",     # an event moved to another seq
    "state_hash",         # a stored state hash flipped
    "chain_hash",         # a stored chain hash flipped
    "changed_seed",       # the match's sealed seed changed
    "chosen_seed",        # a seed of the attacker's choosing put in its place, in clear
    "cut_tail",           # the last command's events deleted, its commands row kept
    "cut_tail_and_row",   # the last command's events and its commands row deleted
    "changed_command",    # one byte of a stored command's input (its action) flipped
]


@dataclass
class Played:
    game_id: str
    tokens: list[str]
    last_request: pb.PlayMoveRequest | None = None
    last_seat: int = 0
    # A legal move for the state after the last one (asked before any tampering).
    next_request: pb.PlayMoveRequest | None = None
    next_seat: int = 0


def new_match(stub, moves: int) -> Played:
    created = stub.CreateGame(pb.CreateGameRequest(game_type=GAME, seats=2))
    played = Played(created.game_id, list(created.seat_tokens))
    state = created.state
    for _ in range(moves):
        s = state.to_act[0]
        md = seat(played.tokens[s])
        suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=played.game_id), metadata=md)
        request = pb.PlayMoveRequest(game_id=played.game_id, command_id=str(uuid.uuid4()),
                                     action=suggestion.action, expected_seq=suggestion.seq)
        state = stub.PlayMove(request, metadata=md).state
        played.last_request, played.last_seat = request, s
    s = state.to_act[0]
    suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=played.game_id), metadata=seat(played.tokens[s]))
    played.next_request = pb.PlayMoveRequest(game_id=played.game_id, command_id=str(uuid.uuid4()),
                                             action=suggestion.action)
    played.next_seat = s
    return played


def _flip(data: bytes, at: int = 0) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


def tamper(url: str, game_id: str, kind: str, target: int) -> int:
    """Does `kind` to the match (at seq `target` where that applies); returns the first seq
    that is no longer what was written."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE events DISABLE TRIGGER events_no_update_delete")
        try:
            return _tamper(conn, game_id, kind, target)
        finally:
            conn.execute("ALTER TABLE events ENABLE TRIGGER events_no_update_delete")


def _tamper(conn, game_id: str, kind: str, target: int) -> int:
    def event(seq: int):
        return conn.execute("SELECT payload, state_hash, chain_hash FROM events WHERE game_id = %s AND seq = %s",
                            (game_id, seq)).fetchone()

    def update(column: str, value: bytes, seq: int) -> None:
        n = conn.execute(f"UPDATE events SET {column} = %s WHERE game_id = %s AND seq = %s",
                         (value, game_id, seq)).rowcount
        assert n == 1

    if kind == "payload_bit":
        payload = event(target)[0]
        update("payload", _flip(payload, len(payload) - 1), target)
    elif kind == "payload_garbage":
        update("payload", event(target)[0] + b"\xff", target)
    elif kind == "swapped_deal":
        target = 2  # carre: match_started, round_dealt, then the first draw
        ev = carre_pb2.Event.FromString(event(target)[0])
        hands = ev.round_dealt.hands
        a, b = carre_pb2.Card(), carre_pb2.Card()
        a.CopyFrom(hands[0].cards[0])
        b.CopyFrom(hands[1].cards[0])
        assert a != b
        hands[0].cards[0].CopyFrom(b)
        hands[1].cards[0].CopyFrom(a)
        update("payload", ev.SerializeToString(), target)
    elif kind == "renumbered_seq":
        n = conn.execute("UPDATE events SET seq = seq + 1000 WHERE game_id = %s AND seq = %s",
                         (game_id, target)).rowcount
        assert n == 1
    elif kind == "state_hash":
        update("state_hash", _flip(event(target)[1]), target)
    elif kind == "chain_hash":
        update("chain_hash", _flip(event(target)[2]), target)
    elif kind == "changed_seed":
        # Sealed at rest: flipping a bit of the sealed seed (or putting another match's there).
        sealed = conn.execute("SELECT sealed_seed FROM games WHERE game_id = %s", (game_id,)).fetchone()[0]
        conn.execute("UPDATE games SET sealed_seed = %s WHERE game_id = %s", (_flip(sealed, len(sealed) - 1), game_id))
        target = 0
    elif kind == "chosen_seed":
        # A seed of the attacker's choosing, in clear where the sealed one was.
        conn.execute("UPDATE games SET seed = %s, sealed_seed = NULL, seed_key_id = NULL WHERE game_id = %s",
                     (bytes(32), game_id))
        target = 1  # the genesis hash binds the seed commitment
    elif kind in ("cut_tail", "cut_tail_and_row"):
        first, cid = conn.execute(
            "SELECT first_seq, command_id FROM commands WHERE game_id = %s ORDER BY first_seq DESC LIMIT 1",
            (game_id,)).fetchone()
        conn.execute("DELETE FROM events WHERE game_id = %s AND seq >= %s", (game_id, first))
        if kind == "cut_tail_and_row":
            conn.execute("DELETE FROM commands WHERE game_id = %s AND command_id = %s", (game_id, cid))
        target = first
    elif kind == "changed_command":
        # The command that wrote seq `target` (or the first one after the opening deal).
        first, cid, action = conn.execute(
            """SELECT first_seq, command_id, action FROM commands WHERE game_id = %s AND last_seq >= %s
               ORDER BY first_seq LIMIT 1""",
            (game_id, target)).fetchone()
        n = conn.execute("UPDATE commands SET action = %s WHERE game_id = %s AND command_id = %s",
                         (_flip(bytes(action), len(action) - 1), game_id, cid)).rowcount
        assert n == 1
        target = first
    else:
        raise AssertionError(kind)
    return target


def last_seq(stub, game_id: str) -> int:
    return stub.GetView(pb.GetViewRequest(game_id=game_id)).state.seq


def data_loss_seq(call) -> int:
    """The first bad seq a DATA_LOSS names (0: the match record), in its ErrorInfo and message."""
    try:
        call()
    except grpc.RpcError as exc:
        code, reason, message = error_of(exc)
        assert code == grpc.StatusCode.DATA_LOSS, (code, reason, message)
        info = error_details_pb2.ErrorInfo()
        assert rpc_status.from_call(exc).details[0].Unpack(info)
        seq = int(info.metadata["seq"])
        if seq == 0:
            assert reason == "SEED_TAMPERED", (reason, message)
        else:
            assert reason == "EVENT_LOG_DAMAGED", reason
            assert f"damaged at seq {seq}:" in message, message
        return seq
    raise AssertionError("the call succeeded on a damaged match")


def refused_everywhere(stub, m: Played) -> set[int]:
    """The seqs named by a read, a move, a retry of the last command and a listing."""
    gid = m.game_id
    # The listing first: a server holding a verified state reads older events only to send them.
    seqs = {data_loss_seq(lambda: stub.ListEvents(pb.ListEventsRequest(game_id=gid)))}
    seqs.add(data_loss_seq(lambda: stub.GetView(pb.GetViewRequest(game_id=gid))))
    seqs.add(data_loss_seq(lambda: stub.ListLegalMoves(pb.ListLegalMovesRequest(game_id=gid),
                                                       metadata=seat(m.tokens[m.last_seat]))))
    if m.last_request is not None:
        # The retry of an acknowledged command: never applied again as new.
        seqs.add(data_loss_seq(lambda: stub.PlayMove(m.last_request, metadata=seat(m.tokens[m.last_seat]))))
    return seqs


@pytest.fixture
def two_servers(fresh_database_url, tmp_path):
    """(url, warm server, start a cold one); every server must stop cleanly."""
    started = []

    def start(name: str):
        srv = start_server(fresh_database_url, tmp_path, name, "--metrics-listen", "127.0.0.1:0")
        started.append(srv)
        return srv

    warm = start("warm")
    try:
        yield fresh_database_url, warm, start
    finally:
        for srv in started:
            code = srv.stop()
            assert code == 0, srv.log.read_text()
            assert "Traceback" not in srv.log.read_text(), srv.log.read_text()


def test_tampered_logs_are_refused_warm_and_cold(two_servers):
    url, warm, start = two_servers
    with grpc.insecure_channel(warm.address) as ch:
        stub = rpc.GameServiceStub(ch)
        matches = {}
        for phase in ("warm", "cold"):
            for kind in KINDS:
                matches[phase, kind] = new_match(stub, 0 if kind == "swapped_deal" else 4)
        # The untouched log of a match is served (a control: the checks accept honest logs).
        control = new_match(stub, 4)
        expected = {}
        for (phase, kind), m in matches.items():
            head = last_seq(stub, m.game_id)
            # Warm: the newest event (what a server holding the match reads); cold: one inside.
            expected[phase, kind] = tamper(url, m.game_id, kind, head if phase == "warm" else 3)

        for kind in KINDS:
            m = matches["warm", kind]
            if kind in ("changed_seed", "chosen_seed"):
                # A server holding the match keeps the seed it read when the match was verified.
                assert last_seq(stub, m.game_id) > 0
                continue
            if kind.startswith("cut_tail"):
                # A move first, legal on the state the server holds: it must not be appended
                # after the hole; then the retry: never applied again.
                nxt = seat(m.tokens[m.next_seat])
                assert data_loss_seq(lambda: stub.PlayMove(m.next_request, metadata=nxt)) == expected["warm", kind]
                md = seat(m.tokens[m.last_seat])
                assert data_loss_seq(lambda: stub.PlayMove(m.last_request, metadata=md)) == expected["warm", kind]
            assert refused_everywhere(stub, m) == {expected["warm", kind]}, kind
            # Every later call too, the same way.
            assert refused_everywhere(stub, m) == {expected["warm", kind]}, kind
        assert last_seq(stub, control.game_id) > 0
        # Counted once per match, however often it was asked for since.
        got = scrape(metrics_address(warm))
        refused = len(KINDS) - 2  # the seed kinds do not touch what a warm server holds
        assert got[("tablier_integrity_failures_total", ())] == refused
        assert got[("tablier_damaged_matches", ())] == refused

    cold = start("cold")
    with grpc.insecure_channel(cold.address) as ch:
        stub = rpc.GameServiceStub(ch)
        for (phase, kind), m in matches.items():
            if kind == "cut_tail_and_row":
                # Cut with its commands row, a log is a shorter honest-looking log: a server
                # starting cold cannot tell (a client's pinned chain hash can, see
                # test_transcript), the warm server above did.
                continue
            named = refused_everywhere(stub, m)
            assert named == {expected[phase, kind]}, (phase, kind, named)
        assert last_seq(stub, control.game_id) > 0
        new_match(stub, 2)  # the server goes on serving other matches

    text = warm.log.read_text() + cold.log.read_text()
    assert "refusing match" in text and "INTERNAL" not in text


def _watched_events(stub, game_id: str, head: int) -> list[bytes]:
    """The events a spectator's watch from the start streams, up to seq `head`."""
    watch = stub.WatchGame(pb.WatchGameRequest(game_id=game_id), timeout=30)
    events = []
    try:
        for update in watch:
            if update.HasField("event"):
                events.append(update.event.SerializeToString())
            if update.state.seq >= head:
                return events
    finally:
        watch.cancel()
    raise AssertionError(f"the watch ended before seq {head}")


def test_a_watch_streams_only_the_log_its_server_verified(fresh_database_url, tmp_path):
    """A watch catches up from the events its server verified or wrote (the last ones of each
    match it holds, without reading them again): a row changed in place under them is never
    streamed, and the recheck refuses the match within its bound, as it does for a held read."""
    srv = start_server(fresh_database_url, tmp_path, "watched", "--recheck-every", "0.3")
    try:
        with grpc.insecure_channel(srv.address) as ch:
            stub = rpc.GameServiceStub(ch)
            m = new_match(stub, 4)
            head = last_seq(stub, m.game_id)
            before = _watched_events(stub, m.game_id, head)
            assert len(before) == head
            bad = tamper(fresh_database_url, m.game_id, "payload_bit", 3)
            try:
                assert _watched_events(stub, m.game_id, head) == before  # not the changed row
            except grpc.RpcError:
                assert data_loss_seq(lambda: _watched_events(stub, m.game_id, head)) == bad
            deadline = time.monotonic() + 20
            while True:
                try:
                    last_seq(stub, m.game_id)
                except grpc.RpcError:
                    break
                assert time.monotonic() < deadline, "the changed row was never refused"
                time.sleep(0.05)
            assert data_loss_seq(lambda: _watched_events(stub, m.game_id, head)) == bad
            assert data_loss_seq(lambda: stub.GetView(pb.GetViewRequest(game_id=m.game_id))) == bad
    finally:
        assert srv.stop() == 0, srv.log.read_text()
    assert "refusing match" in srv.log.read_text()


def test_a_row_changed_under_a_held_state_is_refused_by_the_recheck(fresh_database_url, tmp_path):
    """Reads of the present answer the state a server holds while its feed of appends hears
    nothing newer; the feed says nothing of a row changed in place. The recheck (every
    `--recheck-every` seconds) reads the last events of each match answered that way again: the
    change is refused by the next read after it, with no other call looking at the log."""
    srv = start_server(fresh_database_url, tmp_path, "held", "--metrics-listen", "127.0.0.1:0",
                       "--recheck-every", "0.3")
    try:
        with grpc.insecure_channel(srv.address) as ch:
            stub = rpc.GameServiceStub(ch)
            m = new_match(stub, 4)
            control = new_match(stub, 4)
            head = last_seq(stub, m.game_id)
            # Held reads: answered without the database once the feed is up.
            deadline = time.monotonic() + 20
            while scrape(metrics_address(srv)).get(("tablier_reads_cached_total", ()), 0) < 3:
                assert time.monotonic() < deadline, "reads never answered from the held state"
                assert last_seq(stub, m.game_id) == head
                assert last_seq(stub, control.game_id) > 0
            expected = tamper(fresh_database_url, m.game_id, "state_hash", head)
            deadline = time.monotonic() + 20
            while True:
                try:
                    assert last_seq(stub, m.game_id) == head
                except grpc.RpcError:
                    break
                assert time.monotonic() < deadline, "the changed row was never refused"
                time.sleep(0.05)
            assert data_loss_seq(lambda: stub.GetView(pb.GetViewRequest(game_id=m.game_id))) == expected
            assert last_seq(stub, control.game_id) > 0
            got = scrape(metrics_address(srv))
            assert got[("tablier_integrity_failures_total", ())] == 1
            assert got[("tablier_held_rechecks_total", ())] >= 1
    finally:
        assert srv.stop() == 0, srv.log.read_text()
    assert "refusing match" in srv.log.read_text()
