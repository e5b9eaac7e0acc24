"""The witness of match heads: a server appends signed checkpoints of the heads it saw to a file
outside the database; a log cut afterwards together with its commands rows (consistent in
itself) is refused by a server starting cold (DATA_LOSS naming the seq) and reported by
`tablier verify --witness`, which a tampered checkpoint does not fool."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid

import grpc
import psycopg
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import OPERATOR_TOKEN, start_server, tablier_cmd
from .helpers import error_of, seat

WAIT = 30.0


def tablier(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        tablier_cmd(*args), capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "300", **env}
    )


def witnessed(path, gid: str) -> int:
    """The highest seq the checkpoints in `path` name for `gid` (0: none yet)."""
    if not path.exists():
        return 0
    seqs = [s for line in path.read_text().splitlines() for g, s, _ in json.loads(line)["heads"] if g == gid]
    return max(seqs, default=0)


def test_a_cut_log_is_refused_cold_and_reported_against_the_witness(fresh_database_url, tmp_path):
    key = "11" * 32
    env = {"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN, "TABLIER_SIGNING_KEY": key}
    wdir = tmp_path / "witness"
    opts = ("--witness-dir", str(wdir), "--witness-every", "0.1")
    warm = start_server(fresh_database_url, tmp_path, "warm", *opts, env=env)
    try:
        with grpc.insecure_channel(warm.address) as ch:
            stub = rpc.GameServiceStub(ch)
            created = stub.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2))
            gid, state = created.game_id, created.state
            for _ in range(4):
                md = seat(created.seat_tokens[state.to_act[0]])
                s = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md)
                state = stub.PlayMove(
                    pb.PlayMoveRequest(game_id=gid, command_id=str(uuid.uuid4()), action=s.action, expected_seq=s.seq),
                    metadata=md,
                ).state
            deadline = time.monotonic() + WAIT
            while witnessed(wdir / "checkpoints.jsonl", gid) < state.seq:
                assert time.monotonic() < deadline, "no checkpoint of the head"
                time.sleep(0.05)
    finally:
        assert warm.stop() == 0, warm.log.read_text()
    url = ("--database-url", fresh_database_url)
    ok = tablier(env, "verify", gid, "--witness", str(wdir), *url)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        first, cid = conn.execute(
            "SELECT first_seq, command_id FROM commands WHERE game_id = %s ORDER BY first_seq DESC LIMIT 1", (gid,)
        ).fetchone()
        conn.execute("ALTER TABLE events DISABLE TRIGGER events_no_update_delete")
        conn.execute("DELETE FROM events WHERE game_id = %s AND seq >= %s", (gid, first))
        conn.execute("ALTER TABLE events ENABLE TRIGGER events_no_update_delete")
        conn.execute("DELETE FROM commands WHERE game_id = %s AND command_id = %s", (gid, cid))
    assert tablier(env, "verify", gid, *url).returncode == 0  # consistent in itself
    caught = tablier(env, "verify", gid, "--witness", str(wdir), *url)
    assert caught.returncode == 1 and f"seq {first}: the witness saw the log at seq {state.seq}" in caught.stdout, (
        caught.stdout
    )

    cold = start_server(fresh_database_url, tmp_path, "cold", *opts, env=env)
    try:
        with grpc.insecure_channel(cold.address) as ch:
            stub = rpc.GameServiceStub(ch)
            try:
                stub.GetView(pb.GetViewRequest(game_id=gid))
                raise AssertionError("a cut log was served")
            except grpc.RpcError as exc:
                code, reason, message = error_of(exc)
                assert code == grpc.StatusCode.DATA_LOSS and reason == "EVENT_LOG_DAMAGED", (code, reason, message)
                info = error_details_pb2.ErrorInfo()
                assert rpc_status.from_call(exc).details[0].Unpack(info)
                assert int(info.metadata["seq"]) == first and "witness" in message, message
            # Other matches are served.
            other = stub.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2))
            assert stub.GetView(pb.GetViewRequest(game_id=other.game_id)).state.seq > 0
    finally:
        assert cold.stop() == 0, cold.log.read_text()

    # A checkpoint changed by whoever holds the witness no longer verifies: reported, not trusted.
    path = wdir / "checkpoints.jsonl"
    lines = path.read_text().splitlines()
    doc = json.loads(lines[0])
    doc["heads"][0][1] += 1
    path.write_text("\n".join([json.dumps(doc), *lines[1:]]) + "\n")
    forged = tablier(env, "verify", gid, "--witness", str(wdir), *url)
    assert forged.returncode == 1 and "witness line 1: a checkpoint whose signature does not verify" in forged.stderr
