"""ListGames, the lobby's read, end to end: a real `tablier serve` on a real PostgreSQL.
Public information only, newest first, paged, filtered by game type."""

from __future__ import annotations

import time
import uuid

import grpc

from tablier.v1 import service_pb2 as pb

from .helpers import expect_error, seat

CREATOR = pb.SeatAssignment(kind=pb.SEAT_KIND_CREATOR)
OPEN = pb.SeatAssignment(kind=pb.SEAT_KIND_OPEN)
INVITE = pb.SeatAssignment(kind=pb.SEAT_KIND_INVITE)
BOT = pb.SeatAssignment(kind=pb.SEAT_KIND_BOT)
WAIT = 60.0


def listed(stub, **request) -> list[pb.GameSummary]:
    """Every page of ListGames, in order."""
    out: list[pb.GameSummary] = []
    token = ""
    while True:
        page = stub.ListGames(pb.ListGamesRequest(page_token=token, **request))
        out.extend(page.games)
        token = page.next_page_token
        if not token:
            return out


def play_out(stub, game_id: str, tokens: list[str]) -> None:
    """The seats of `tokens` play the core's suggestions until the match is over."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        state = stub.GetView(pb.GetViewRequest(game_id=game_id)).state
        if state.over:
            return
        for s in state.to_act:
            md = seat(tokens[s])
            hint = stub.SuggestMove(pb.SuggestMoveRequest(game_id=game_id), metadata=md)
            try:
                stub.PlayMove(pb.PlayMoveRequest(game_id=game_id, command_id=str(uuid.uuid4()), action=hint.action,
                                                 expected_seq=hint.seq), metadata=md)
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.ABORTED, exc
    raise AssertionError(f"match {game_id} did not end within {WAIT} s")


def test_lobby_lists_open_seats_running_and_finished_matches(stub):
    opened = stub.CreateGame(pb.CreateGameRequest(game_type="carre", seat_assignments=[CREATOR, OPEN]))
    invited = stub.CreateGame(pb.CreateGameRequest(game_type="qwirkle", seat_assignments=[CREATOR, INVITE, BOT]))
    done = stub.CreateGame(pb.CreateGameRequest(game_type="carre", options={"rounds_per_match": "1"},
                                                seat_assignments=[CREATOR, CREATOR]))
    play_out(stub, done.game_id, list(done.seat_tokens))

    everything = {g.game_id: g for g in listed(stub, page_size=2)}
    carre = listed(stub, game_type="carre")
    assert {opened.game_id, done.game_id} <= {g.game_id for g in carre}
    assert invited.game_id not in {g.game_id for g in carre}
    assert all(g.game_type == "carre" for g in carre)

    o = everything[opened.game_id]
    assert [s.status for s in o.seats] == [pb.SEAT_STATUS_TAKEN, pb.SEAT_STATUS_OPEN]
    assert (o.open_seats, o.over, o.game_type) == (1, False, "carre")
    assert o.seq > 0 and o.created_at.seconds > 0
    i = everything[invited.game_id]
    assert [s.status for s in i.seats] == [pb.SEAT_STATUS_TAKEN, pb.SEAT_STATUS_INVITED, pb.SEAT_STATUS_BOT]
    assert i.seats[2].bot and i.open_seats == 0
    d = everything[done.game_id]
    assert d.over and d.open_seats == 0
    assert d.seq == stub.GetView(pb.GetViewRequest(game_id=done.game_id)).state.seq

    # Public information only: a summary holds nothing secret (no token, code or seed).
    wire = o.SerializeToString() + i.SerializeToString()
    for secret in [*opened.seat_tokens, *invited.seat_tokens, *invited.invite_codes]:
        if secret:
            assert secret.encode() not in wire

    # Taking the open seat fills it in the lobby.
    stub.JoinGame(pb.JoinGameRequest(game_id=opened.game_id, join_key="k" * 43))
    again = {g.game_id: g for g in listed(stub, game_type="carre")}[opened.game_id]
    assert again.open_seats == 0 and again.seats[1].status == pb.SEAT_STATUS_TAKEN


def test_pages_are_newest_first_without_gaps_or_repeats(stub):
    ids = [stub.CreateGame(pb.CreateGameRequest(game_type="grid_knock", seat_assignments=[CREATOR, BOT])).game_id
           for _ in range(5)]
    pages = []
    token = ""
    while True:
        page = stub.ListGames(pb.ListGamesRequest(game_type="grid_knock", page_size=2, page_token=token))
        assert len(page.games) <= 2
        pages.append([g.game_id for g in page.games])
        token = page.next_page_token
        if not token:
            break
    flat = [g for p in pages for g in p]
    assert len(flat) == len(set(flat))
    mine = [g for g in flat if g in ids]
    assert mine == list(reversed(ids))  # newest first
    times = [(g.created_at.ToDatetime(), g.game_id) for g in listed(stub, game_type="grid_knock")]
    assert times == sorted(times, reverse=True)


def test_bad_requests_are_refused_in_words(stub):
    code, reason, _ = expect_error(stub.ListGames, pb.ListGamesRequest(page_size=1000))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_SIZE")
    code, reason, _ = expect_error(stub.ListGames, pb.ListGamesRequest(page_token="not a token"))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_PAGE_TOKEN")
    code, reason, message = expect_error(stub.ListGames, pb.ListGamesRequest(game_type="chess"))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_GAME") and "chess" in message
