"""A sealed seed that no longer opens, met by any read: DATA_LOSS with its reason, never INTERNAL.

Three ways a seed stops opening (a bit of the sealed seed flipped, another match's sealed seed
copied in, a key id this server does not have), each read RPC that names a match and a move
(decided with the seed), on a server
that holds the match verified in its cache (warm) and on a freshly started one (cold). A warm
server may still answer a read from the state it verified before the change (it does not read
the seed again for it); a read that does read the seed (the auditor's listing reads the commands,
hence the record) is DATA_LOSS, and the match is refused from then on, whichever read found it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import grpc
import psycopg
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import start_server
from .helpers import OPERATOR, error_of, seat

GAME = "carre"

# kind -> the reason the refusal carries
TAMPERS = {"flipped": "SEED_TAMPERED", "foreign": "SEED_TAMPERED", "unknown_key": "SEED_KEY_UNKNOWN"}

Read = Callable[[rpc.GameServiceStub, str, list[str]], object]


def _watch_first(stub: rpc.GameServiceStub, gid: str, tokens: list[str]) -> object:
    stream = stub.WatchGame(pb.WatchGameRequest(game_id=gid))
    try:
        return next(stream)
    finally:
        stream.cancel()


def _play(stub: rpc.GameServiceStub, gid: str, tokens: list[str]) -> object:
    """A move, which the seed decides (SuggestMove's, by the seat to act)."""
    md = seat(tokens[0])
    s = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md)
    return stub.PlayMove(
        pb.PlayMoveRequest(game_id=gid, command_id=str(uuid.uuid4()), action=s.action, expected_seq=s.seq), metadata=md
    )


READS: dict[str, Read] = {
    "GetView": lambda stub, gid, t: stub.GetView(pb.GetViewRequest(game_id=gid)),
    "GetView as a seat": lambda stub, gid, t: stub.GetView(pb.GetViewRequest(game_id=gid), metadata=seat(t[0])),
    "GetView at a past seq": lambda stub, gid, t: stub.GetView(pb.GetViewRequest(game_id=gid, at_seq=1)),
    "GetView as auditor": lambda stub, gid, t: stub.GetView(pb.GetViewRequest(game_id=gid), metadata=OPERATOR),
    "ListLegalMoves": lambda stub, gid, t: stub.ListLegalMoves(
        pb.ListLegalMovesRequest(game_id=gid), metadata=seat(t[0])
    ),
    "ListEvents": lambda stub, gid, t: stub.ListEvents(pb.ListEventsRequest(game_id=gid)),
    "ListEvents as auditor": lambda stub, gid, t: stub.ListEvents(pb.ListEventsRequest(game_id=gid), metadata=OPERATOR),
    "SuggestMove": lambda stub, gid, t: stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=seat(t[0])),
    "WatchGame": _watch_first,
    "PlayMove": _play,
}
# The reads that read the match record (its seed) even when the state is cached.
READS_THE_SEED_WARM = {"ListEvents as auditor"}


def new_match(stub: rpc.GameServiceStub, moves: int = 2) -> tuple[str, list[str]]:
    """A match after `moves` moves: its id and seat tokens, the token of the seat to act first."""
    created = stub.CreateGame(pb.CreateGameRequest(game_type=GAME, seats=2))
    gid, tokens = created.game_id, list(created.seat_tokens)
    state = created.state
    for _ in range(moves):
        md = seat(tokens[state.to_act[0]])
        suggestion = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md)
        state = stub.PlayMove(
            pb.PlayMoveRequest(
                game_id=gid, command_id=str(uuid.uuid4()), action=suggestion.action, expected_seq=suggestion.seq
            ),
            metadata=md,
        ).state
    # The seat to act first (SuggestMove asks for it).
    now = state.to_act[0]
    return gid, tokens[now:] + tokens[:now]


def tamper(url: str, gid: str, kind: str, other: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        if kind == "flipped":
            sealed = bytes(conn.execute("SELECT sealed_seed FROM games WHERE game_id = %s", (gid,)).fetchone()[0])
            changed = sealed[:-1] + bytes([sealed[-1] ^ 0x01])
            conn.execute("UPDATE games SET sealed_seed = %s WHERE game_id = %s", (changed, gid))
        elif kind == "foreign":
            conn.execute(
                """UPDATE games SET sealed_seed = o.sealed_seed, seed_key_id = o.seed_key_id
                   FROM games o WHERE games.game_id = %s AND o.game_id = %s""",
                (gid, other),
            )
        elif kind == "unknown_key":
            conn.execute("UPDATE games SET seed_key_id = %s WHERE game_id = %s", ("0" * 16, gid))
        else:
            raise AssertionError(kind)


def refusal(read: str, stub: rpc.GameServiceStub, gid: str, tokens: list[str]) -> tuple[str, int] | None:
    """None when the read answers; (reason, seq) when it is DATA_LOSS; anything else fails."""
    try:
        READS[read](stub, gid, tokens)
    except grpc.RpcError as exc:
        code, reason, message = error_of(exc)
        assert code == grpc.StatusCode.DATA_LOSS, (code, reason, message)
        info = error_details_pb2.ErrorInfo()
        assert rpc_status.from_call(exc).details[0].Unpack(info)
        return reason, int(info.metadata["seq"])
    return None


@pytest.fixture
def servers(fresh_database_url, tmp_path):
    started = []

    def start(name: str):
        srv = start_server(fresh_database_url, tmp_path, name)
        started.append(srv)
        return srv

    try:
        yield fresh_database_url, start
    finally:
        for srv in started:
            code = srv.stop()
            text = srv.log.read_text()
            assert code == 0, text
            assert "Traceback" not in text and "INTERNAL" not in text, text


def test_an_unreadable_seed_is_data_loss_on_every_read_warm_and_cold(servers):
    url, start = servers
    warm = start("warm")
    with grpc.insecure_channel(warm.address) as ch:
        stub = rpc.GameServiceStub(ch)
        other, _ = new_match(stub, 0)
        matches = {(kind, name): new_match(stub) for kind in TAMPERS for name in READS}
        for (kind, _), (gid, _) in matches.items():
            tamper(url, gid, kind, other)

        for (kind, name), (gid, tokens) in matches.items():
            wanted = (TAMPERS[kind], 0)
            first = refusal(name, stub, gid, tokens)
            if name in READS_THE_SEED_WARM:
                assert first == wanted, (kind, name, first)
            else:
                # Answered from the state verified before the change, or refused: never else.
                assert first in (None, wanted), (kind, name, first)
            # The auditor's listing reads the seed: refused, and so is every later read.
            assert refusal("ListEvents as auditor", stub, gid, tokens) == wanted, (kind, name)
            for later in READS:
                assert refusal(later, stub, gid, tokens) == wanted, (kind, name, later)
        assert refusal("ListEvents as auditor", stub, other, []) is None

    cold = start("cold")
    with grpc.insecure_channel(cold.address) as ch:
        stub = rpc.GameServiceStub(ch)
        for (kind, name), (gid, tokens) in matches.items():
            # Each match met first by its own read.
            assert refusal(name, stub, gid, tokens) == (TAMPERS[kind], 0), (kind, name)
        assert refusal("GetView", stub, other, []) is None
