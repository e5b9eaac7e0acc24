"""Match clocks end to end: a seat that never answers does not hold a match forever, in any
game; deadlines come from the log's recorded times (a restart keeps them); several servers on
one database give each timeout once."""

from __future__ import annotations

import os
import re
import subprocess
import time
from datetime import UTC, datetime

import grpc
import psycopg
import pytest

from tablier import _core
from tablier.v1 import common_pb2, grid_knock_pb2
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import GAME_IDS, ROOT, START_TIMEOUT, start_server, tablier_cmd
from .helpers import INFO, OPERATOR, bot_move, expect_error, raw_events

# Options that keep each match short (the clocks are what is tested, not the length of a match):
# each game's own, declared in its folder (its test data's `short`).
SHORT = {g: dict(_core.short_options(g)) for g in GAME_IDS}


def _policies(info: common_pb2.GameType) -> list[str]:
    """The timeout policies a game offers, from its rules document (docs/rules/<game>.md section
    11, `bot` first), and `evaluator` last in every game with an evaluator (docs/evaluator.md)."""
    section = re.search(r"^## 11\..*?(?=^## |\Z)", (ROOT / info.rules_path).read_text(), re.S | re.M)
    assert section is not None, f"{info.rules_path} has no section 11 (timeouts)"
    return re.findall(r"^- `([a-z_]+)`", section.group(0), re.M) + (["evaluator"] if info.position_type else [])


POLICIES = {g: _policies(INFO[g]) for g in GAME_IDS}
# Events a policy other than `bot` never records for the seat: the moves it never makes.
NEVER = {
    "pass": {"exchanged"},
    "draw_and_discard": {"discard_taken", "card_replaced", "power_used", "cards_swapped", "card_peeked", "called"},
    "default_move": {"took_discard", "knock_accepted", "knocker_swapped", "triple_discarded"},
    "discard": {"card_placed", "went_out"},
}
CREATOR = pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR)
BOT = pb.SeatAssignment(kind=pb.SEAT_KIND_BOT)


def wait_for(what: str, condition, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = condition()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"{what} within {timeout} s")


def timeouts(stub, game_id: str) -> list[pb.Event]:
    return [e for e in raw_events(stub, game_id).events if e.type == "seat_timed_out"]


def timed_out(ev: pb.Event) -> common_pb2.SeatTimedOut:
    msg = common_pb2.SeatTimedOut()
    assert ev.payload.Unpack(msg), ev.payload.type_url
    return msg


def test_every_game_type_offers_the_clock_options(stub):
    for t in stub.ListGameTypes(pb.ListGameTypesRequest()).game_types:
        options = {o.name: o for o in t.options}
        for name in ("clock_move_seconds", "clock_bank_seconds", "clock_increment_seconds"):
            assert options[name].default_value == "0", (t.id, name)
        assert options["clock_timeout"].default_value == "bot"
        assert list(options["clock_timeout"].allowed_values) == POLICIES[t.id]
        for policy in POLICIES[t.id]:
            assert f"{policy}:" in options["clock_timeout"].description, (t.id, policy)
    assert {t.id for t in stub.ListGameTypes(pb.ListGameTypesRequest()).game_types} == set(POLICIES)


def test_a_policy_the_game_does_not_offer_is_refused(stub):
    code, reason, message = expect_error(stub.CreateGame, pb.CreateGameRequest(
        game_type="carre", seats=2, options={"clock_move_seconds": "5", "clock_timeout": "pass"}))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTION")
    assert "bot, discard" in message


@pytest.mark.parametrize("options, why", [
    ({"clock_bank_seconds": "soon"}, "Time bank in seconds must be a whole number"),
    ({"clock_move_seconds": "-3"}, "Seconds per move must be a whole number"),
    ({"clock_increment_seconds": "5"}, "Seconds added after each move need a time bank"),
    ({"clock_move_seconds": "5", "clock_timeout": "resign"}, "What happens when time runs out must be one of"),
    ({"clock_timeout": "bot"}, "needs a clock"),
    ({"clock_bank": "5"}, 'There is no clock option "clock_bank"'),
])
def test_bad_clock_options_are_refused_with_a_reason(stub, options, why):
    """Refused in the game's words: an option is named by its label (GameOption.label), never
    by its key, unless the key is one nobody knows."""
    code, reason, message = expect_error(stub.CreateGame, pb.CreateGameRequest(
        game_type="qwirkle", seats=2, options=options))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTION")
    assert why in message
    if "clock_bank" not in options:
        assert "clock_" not in message, message


def test_timeouts_are_the_servers_own(stub):
    created = stub.CreateGame(pb.CreateGameRequest(game_type="qwirkle", seats=2,
                                                   options={"clock_move_seconds": "600"}))
    code, reason, _ = expect_error(stub.HostCommand, pb.HostCommandRequest(
        game_id=created.game_id, command_id="x", command="timeout:0"), metadata=OPERATOR)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "NOT_A_HOST_COMMAND")
    token = (("authorization", f"Bearer {created.seat_tokens[0]}"),)
    code, reason, _ = expect_error(stub.PlayMove, pb.PlayMoveRequest(
        game_id=created.game_id, command_id="timeout:0:1", action=None), metadata=token)
    assert code == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("game, policy", [(g, p) for g in GAME_IDS for p in POLICIES[g]])
def test_a_match_whose_seat_never_answers_reaches_its_end(server, stub, e2e_database_url, tmp_path, game, policy):
    """Seat 0 is held by a player who never answers; the others are server bots. With a 1 s
    bank the first wait times out after 1 s, and each later one at once (the bank is spent).
    Each of the game's timeout policies decides for the seat and the match still ends."""
    seats = INFO[game].min_players
    created = stub.CreateGame(pb.CreateGameRequest(
        game_type=game, options={**SHORT[game], "clock_bank_seconds": "1", "clock_timeout": policy},
        seat_assignments=[CREATOR] + [BOT] * (seats - 1)))
    gid = created.game_id
    assert len(created.state.clocks) == seats
    assert all(c.bank.ToMilliseconds() == 1000 for c in created.state.clocks)
    assert _clock_running(e2e_database_url, gid)
    # A deadline on the stream too: a watch that never saw the end fails the test, never hangs it.
    watch = stub.WatchGame(pb.WatchGameRequest(game_id=gid), timeout=240)
    state = wait_for("the match ends", lambda: (s := stub.GetView(pb.GetViewRequest(game_id=gid)).state).over and s,
                     timeout=120)
    assert state.outcome.scores
    # Seat 0 timed out, each timeout with the policy chosen and followed by the timed-out seat's
    # move. (A bot seat times out too once its own moves have spent its 1 s bank, in a long match,
    # or at once on a machine so busy that the server's bot took a second to move.)
    events = raw_events(stub, gid).events
    tos = [e for e in events if e.type == "seat_timed_out"]
    assert tos, "seat 0 never answered, so it timed out"
    assert policy == "forfeit" or any(timed_out(e).seat == 0 for e in tos)
    for ev in tos:
        seat = timed_out(ev).seat
        assert timed_out(ev).policy == policy
        assert ev.command_id.startswith(f"timeout:{seat}:") and ev.command.host_command == f"timeout:{seat}"
        follow = [e for e in events if e.command_id == ev.command_id and e.seq > ev.seq]
        assert follow and all(e.seat == seat for e in follow), "the policy's move for the seat follows"
    # What the policy does for the seat (a bot may do anything legal).
    kinds = {e.type for t in tos for e in events if e.command_id == t.command_id and e.type != "seat_timed_out"}
    assert kinds and not kinds & NEVER.get(policy, set()), kinds
    if policy == "forfeit":  # the first timeout ends the match, the timed-out seat (seat 0) losing
        assert len(tos) == 1 and state.outcome.reason == "FORFEIT", state.outcome
        assert state.outcome.winners and timed_out(tos[0]).seat not in state.outcome.winners
    # Seat 0's waits before its first timeout spent its bank (1 s), counted from recorded times.
    opened = events[0].recorded_at.ToDatetime()
    assert (tos[0].recorded_at.ToDatetime() - opened).total_seconds() >= 1.0
    # Watchers receive the timeouts like any event.
    seen = []
    for item in watch:
        if item.event.type == "seat_timed_out":
            seen.append(item.event.seq)
            assert timed_out(item.event).policy == policy
        if item.state.over:
            break
    assert seen == [e.seq for e in tos]
    assert all(not c.HasField("deadline") for c in state.clocks), "no wait once the match is over"
    # An auditor decides every timeout again from the seed and finds the same events.
    verified = subprocess.run(tablier_cmd("verify", gid, "--database-url", e2e_database_url),
                              capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0 and " ok " in verified.stdout, verified.stdout + verified.stderr
    # So does anyone from the public log and the revealed seed, without the database.
    public = tmp_path / "public.json"
    exported = subprocess.run(tablier_cmd("export", gid, "--server", server.address, "-o", str(public), "--auditor"),
                              capture_output=True, text=True, timeout=120)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    checked = subprocess.run(tablier_cmd("verify-public", str(public)), capture_output=True, text=True, timeout=120,
                             env={**os.environ, "COLUMNS": "300"})
    assert checked.returncode == 0 and "commands decided again" in checked.stdout, checked.stdout + checked.stderr
    # The match no longer counts among the running clocks a starting server arms.
    wait_for("the clock marked stopped", lambda: not _clock_running(e2e_database_url, gid), timeout=10)


def _clock_running(database_url: str, gid: str) -> bool:
    with psycopg.connect(database_url) as conn:
        return conn.execute("SELECT clock_running FROM games WHERE game_id = %s", (gid,)).fetchone()[0]


def _awaiting_seat0(stub, options: dict[str, str]) -> tuple[pb.CreateGameResponse, pb.GameState]:
    """A Carré match whose seat 0 (a silent player) is awaited; seat 1 is a bot."""
    created = stub.CreateGame(pb.CreateGameRequest(
        game_type="carre", options={**options, "first_starter": "0"}, seat_assignments=[CREATOR, BOT]))
    state = stub.GetView(pb.GetViewRequest(game_id=created.game_id)).state
    assert list(state.to_act) == [0]
    return created, state


def _db_timeouts(database_url: str, gid: str) -> list[tuple[int, datetime]]:
    with psycopg.connect(database_url) as conn:
        return conn.execute("SELECT seq, recorded_at FROM events WHERE game_id = %s AND kind = 'seat_timed_out' "
                            "ORDER BY seq", (gid,)).fetchall()


PERIOD = 10  # seconds of the per-move limit in the restart test


def test_a_restarted_server_keeps_the_original_deadline(e2e_database_url, tmp_path):
    """Killed in the middle of a wait and started again, the server times the seat out at the
    deadline the recorded time gave, not a whole period after it started again. Nobody calls
    the restarted server: it finds the running clock itself."""
    srv = start_server(e2e_database_url, tmp_path, "before")
    try:
        with grpc.insecure_channel(srv.address) as ch:
            grpc.channel_ready_future(ch).result(timeout=START_TIMEOUT)
            created, state = _awaiting_seat0(rpc.GameServiceStub(ch), {"clock_move_seconds": str(PERIOD)})
    finally:
        srv.proc.kill()  # no clean stop: whatever it had armed is gone
        srv.proc.wait(30)
    deadline = state.clocks[0].deadline.ToDatetime(tzinfo=UTC).timestamp()
    assert deadline - time.time() > 2, "the restart happens before the deadline"
    restarted_at = time.time()
    srv = start_server(e2e_database_url, tmp_path, "after")
    ready_at = time.time()
    try:
        found = wait_for("the timeout after the restart",
                         lambda: _db_timeouts(e2e_database_url, created.game_id), timeout=30)
        at = found[0][1].timestamp()
        assert at >= deadline - 0.01, "not before the deadline"
        # A whole period counted from the restart would come at ready_at + PERIOD or later.
        assert at < restarted_at + PERIOD, (restarted_at, ready_at, deadline, at)
        # At the deadline, or as soon as the restarted server listens if it was slower to start.
        assert at - max(deadline, ready_at) < 2.0, (restarted_at, ready_at, deadline, at)
    finally:
        assert srv.stop() == 0, srv.log.read_text()


def test_two_servers_give_each_timeout_once(serving):
    """Both servers have the match loaded (so both arm its clock); each wait times out once."""
    a, stub_a = serving()
    b, stub_b = serving()
    created = stub_a.CreateGame(pb.CreateGameRequest(game_type="qwirkle", seats=2,
                                                     options={"clock_move_seconds": "1"}))
    gid = created.game_id
    assert stub_b.GetView(pb.GetViewRequest(game_id=gid)).state.clocks
    found = wait_for("three timeouts", lambda: len(t := timeouts(stub_b, gid)) >= 3 and t, timeout=30)
    # One per wait: consecutive timeouts are a whole per-move limit apart, never a double.
    at = [e.recorded_at.ToDatetime().timestamp() for e in found]
    assert all(later - earlier >= 1.0 for earlier, later in zip(at, at[1:])), at
    assert len({e.command_id for e in found}) == len(found)
    # Each wait is one seat's: the seats' waits alternate, each timed out once.
    seats = [timed_out(e).seat for e in found]
    assert all(x != y for x, y in zip(seats, seats[1:])), seats


def test_a_knock_window_keeps_its_deadline_across_a_restart(e2e_database_url, tmp_path):
    """A core timer (Grid Knock's knock window, option knock_timeout) also counts from the
    recorded time its wait started: restarted in the middle of a window, the server closes it
    at the original deadline (a starting server resumes the matches a core timer may await)."""
    srv = start_server(e2e_database_url, tmp_path, "before-knock")
    try:
        with grpc.insecure_channel(srv.address) as ch:
            grpc.channel_ready_future(ch).result(timeout=START_TIMEOUT)
            stub = rpc.GameServiceStub(ch)
            created = stub.CreateGame(pb.CreateGameRequest(
                game_type="grid_knock", seats=3, seed=bytes(range(32)), options={"knock_timeout": "8"}),
                metadata=OPERATOR)
            state = created.state
            for _ in range(500):
                if grid_knock_pb2.View.FromString(state.view.value).phase == grid_knock_pb2.PHASE_KNOCK_WINDOW:
                    break
                state = bot_move(stub, created, state).state
            else:
                pytest.fail("no knock window opened in 500 moves")
            opened = raw_events(stub, created.game_id).events[-1].recorded_at.ToDatetime(tzinfo=UTC).timestamp()
    finally:
        srv.proc.kill()
        srv.proc.wait(30)
    assert opened + 8 - time.time() > 2, "the restart happens before the deadline"
    restarted_at = time.time()
    srv = start_server(e2e_database_url, tmp_path, "after-knock")
    try:
        with grpc.insecure_channel(srv.address) as ch:
            rpc.GameServiceStub(ch).GetView(pb.GetViewRequest(game_id=created.game_id))  # starts nothing

        def closed():
            with psycopg.connect(e2e_database_url) as conn:
                return conn.execute("SELECT recorded_at FROM events WHERE game_id = %s AND kind = 'knock_window_closed'",
                                    (created.game_id,)).fetchall()

        at = wait_for("the window closed after the restart", closed, timeout=30)[0][0].timestamp()
        assert opened + 8 - 0.01 <= at < restarted_at + 8, (opened, restarted_at, at)
    finally:
        assert srv.stop() == 0, srv.log.read_text()
