"""The witness of match heads, in each of its stores (a file, a table in another PostgreSQL
database reached with an insert-only role, an S3 bucket served by moto's S3 server on loopback):
two servers on one database append one chain of signed checkpoints; a log cut afterwards
together with its commands rows (consistent in itself) is refused by the server holding the
match (warm) and, through the witness, by a server starting cold (DATA_LOSS naming the seq), and
is reported by `tablier verify --witness` and `--receipts`. A third party checks a match's head
in the last checkpoint, and the whole chain, with `cryptography` and hashlib alone; a changed or
removed checkpoint is reported, not trusted."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator

import grpc
import psycopg
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from google.protobuf import json_format
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import OPERATOR_TOKEN, start_server, tablier_cmd
from .helpers import error_of, seat

WAIT = 30.0
KEY = "11" * 32


def tablier(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        tablier_cmd(*args), capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "300", **env}
    )


# --------------------------------------------------------------------------- a third party's check
# docs/verifying.md, "Witness of match heads", with hashlib and `cryptography` alone.


def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def p(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def tp_leaf(game_id: str, seq: int, chain_head: bytes) -> bytes:
    return sha(b"\x00" + p(game_id.encode()) + struct.pack(">Q", seq) + p(chain_head))


def tp_split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def tp_tree(leaves: list[bytes]) -> bytes:
    """RFC 6962 section 2.1, as written there (recursive)."""
    if not leaves:
        return sha(b"")
    if len(leaves) == 1:
        return leaves[0]
    k = tp_split(len(leaves))
    return sha(b"\x01" + tp_tree(leaves[:k]) + tp_tree(leaves[k:]))


def tp_root_from_path(index: int, size: int, leaf: bytes, path: list[bytes]) -> bytes:
    """The root an audit path (RFC 6962 section 2.1.1, the sibling nearest the leaf first) gives."""
    if size == 1:
        assert not path, "a path longer than the tree is deep"
        return leaf
    assert path, "a path shorter than the tree is deep"
    k = tp_split(size)
    if index < k:
        return sha(b"\x01" + tp_root_from_path(index, k, leaf, path[:-1]) + path[-1])
    return sha(b"\x01" + path[-1] + tp_root_from_path(index - k, size - k, leaf, path[:-1]))


def tp_message(index: int, at_ms: int, size: int, root: bytes, prev: bytes, changes_root: bytes) -> bytes:
    return b"tablier/checkpoint\0" + struct.pack(">QqQ", index, at_ms, size) + root + prev + changes_root


def tp_check_signature(cp: dict, changes_root: bytes, public: bytes) -> bytes:
    """Raises InvalidSignature; returns the checkpoint's message."""
    assert cp["key_id"] == hashlib.sha256(b"tablier/signing-key\0" + public).hexdigest()[:16]
    message = tp_message(
        cp["index"], cp["at_ms"], cp["size"], bytes.fromhex(cp["root"]), bytes.fromhex(cp["prev"]), changes_root
    )
    Ed25519PublicKey.from_public_bytes(public).verify(bytes.fromhex(cp["signature"]), message)
    return message


def tp_check_proof(proof: dict, public: bytes, seq: int, chain_head: bytes) -> None:
    """One match's head, as its client received it, in a signed checkpoint's tree."""
    cp = proof["checkpoint"]
    tp_check_signature(cp, bytes.fromhex(cp["changes_root"]), public)
    assert (proof["seq"], bytes.fromhex(proof["chain_head"])) == (seq, chain_head)
    leaf = tp_leaf(proof["game_id"], seq, chain_head)
    path = [bytes.fromhex(h) for h in proof["path"]]
    assert tp_root_from_path(proof["leaf_index"], cp["size"], leaf, path) == bytes.fromhex(cp["root"])


def tp_check_chain(records: list[bytes], public: bytes) -> dict[str, tuple[int, bytes]]:
    """Every checkpoint: numbered from 1, signed, chained to the one before; the heads they name
    hash to the last root. Returns the heads."""
    heads: dict[str, tuple[int, bytes]] = {}
    prev = bytes(32)
    cp: dict = {}
    for n, record in enumerate(records, start=1):
        cp = json.loads(record)
        assert cp["index"] == n and bytes.fromhex(cp["prev"]) == prev
        changes = sorted((g, s, bytes.fromhex(c)) for g, s, c in cp["changes"])
        message = tp_check_signature(cp, tp_tree([tp_leaf(*c) for c in changes]), public)
        prev = sha(message)
        heads.update({g: (s, c) for g, s, c in changes})  # a dict keeps the order first named
    leaves = [tp_leaf(g, *heads[g]) for g in heads]
    assert cp["size"] == len(leaves) and bytes.fromhex(cp["root"]) == tp_tree(leaves)
    return heads


def test_the_tree_and_its_proofs_are_rfc_6962():
    """The server's tree (kept level by level, leaves added and changed) against the RFC's
    recursive definitions above, for every size up to 33 and every leaf; RFC 9162's check of a
    path; a path for another leaf, or changed, does not verify."""
    from tablier import witness

    tree = witness.Tree()
    heads: dict[str, tuple[int, bytes]] = {}
    for size in range(0, 34):
        if size:
            gid = f"match-{size:02d}"
            heads[gid] = (size, sha(bytes([size])))
            tree.set(gid, heads[gid])
            # A change to an earlier leaf, as a later move of that match.
            earlier = f"match-{(size * 7) % size + 1:02d}"
            heads[earlier] = (heads[earlier][0] + 1, sha(b"again" + bytes([size])))
            tree.set(earlier, heads[earlier])
        leaves = [tp_leaf(g, *heads[g]) for g in heads]  # in the order first named
        root = tp_tree(leaves)
        assert tree.root() == root == witness.tree_hash(leaves), size
        for i, gid in enumerate(heads):
            index, path = tree.proof(gid)
            assert index == i
            assert tp_root_from_path(i, size, leaves[i], path) == root, (size, i)
            assert witness.verify_inclusion(i, size, leaves[i], path, root)
            if size > 1:
                assert not witness.verify_inclusion((i + 1) % size, size, leaves[i], path, root)
                changed = [path[0][:-1] + bytes([path[0][-1] ^ 1]), *path[1:]]
                assert not witness.verify_inclusion(i, size, leaves[i], changed, root)


# --------------------------------------------------------------------------- the witness's stores


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory) -> Iterator[str]:
    """moto's S3 server, a real HTTP server process on loopback."""
    pytest.importorskip("moto.server", reason="the S3 witness test needs moto[server] (the dev extra)")
    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + WAIT
    while True:
        try:
            urllib.request.urlopen(url + "/moto-api/", timeout=2).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


S3_ENV = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture(params=["file", "postgres", "s3"])
def witness_at(request, database_url, tmp_path, monkeypatch) -> Iterator[tuple[tuple[str, str], str, dict[str, str]]]:
    """(the serve option and its value, the location for verify, the environment it needs)."""
    if request.param == "file":
        where = str(tmp_path / "witness")
        yield ("--witness-dir", where), where, {}
    elif request.param == "postgres":
        yield from postgres_witness(database_url)
    else:
        import boto3

        env = {**S3_ENV, "AWS_ENDPOINT_URL": request.getfixturevalue("s3_endpoint")}
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        bucket = f"witness-{uuid.uuid4().hex[:12]}"
        boto3.client("s3").create_bucket(Bucket=bucket)
        where = f"s3://{bucket}/tablier"
        yield ("--witness-url", where), where, env


def postgres_witness(database_url: str) -> Iterator[tuple[tuple[str, str], str, dict[str, str]]]:
    """Another database, its table made by its owner (docs/verifying.md), and a role that may
    only read and insert there."""
    from tablier.witness_backends import POSTGRES_SCHEMA

    name = f"witness_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name)))
    owner = make_conninfo(database_url, dbname=name)
    with psycopg.connect(owner, autocommit=True) as conn:
        conn.execute(POSTGRES_SCHEMA)
        conn.execute(sql.SQL("GRANT SELECT, INSERT ON tablier_witness TO {}").format(sql.Identifier(name)))
    info = conninfo_to_dict(database_url)
    url = f"postgresql://{name}@/{name}?host={info['host']}&port={info.get('port', 5432)}"
    try:
        yield ("--witness-url", url), url, {}
        # What the server's role cannot do, and the owner neither (the triggers).
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM tablier_witness").fetchone()[0] > 0
            for statement in ("DELETE FROM tablier_witness", "UPDATE tablier_witness SET record = ''"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(statement)
        with psycopg.connect(owner, autocommit=True) as conn:
            for statement in (
                "DELETE FROM tablier_witness WHERE position = 1",
                "UPDATE tablier_witness SET record = '' WHERE position = 1",
                "TRUNCATE tablier_witness",
            ):
                with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                    conn.execute(statement)
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


# --------------------------------------------------------------------------- the tests


def play(stub: rpc.GameServiceStub, moves: int) -> tuple[str, pb.GameState, list[pb.Receipt]]:
    created = stub.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2))
    gid, state, kept = created.game_id, created.state, [created.receipt]
    for _ in range(moves):
        md = seat(created.seat_tokens[state.to_act[0]])
        s = stub.SuggestMove(pb.SuggestMoveRequest(game_id=gid), metadata=md)
        reply = stub.PlayMove(
            pb.PlayMoveRequest(game_id=gid, command_id=str(uuid.uuid4()), action=s.action, expected_seq=s.seq),
            metadata=md,
        )
        state = reply.state
        kept.append(reply.receipt)
    return gid, state, kept


def witnessed_heads(where: str) -> dict[str, tuple[int, bytes]]:
    from tablier import witness
    from tablier.receipts import SigningKeys
    from tablier.witness_backends import open_backend

    backend = open_backend(where)
    try:
        chain = witness.read_chain(backend, SigningKeys.from_env("", {"TABLIER_SIGNING_KEY": KEY}).listed())
    finally:
        backend.close()
    assert not chain.problems, chain.problems
    return chain.tree.heads


def records(where: str) -> list[bytes]:
    from tablier.witness_backends import open_backend

    backend = open_backend(where)
    try:
        return [r for _, r in backend.read(0)]
    finally:
        backend.close()


def data_loss(call) -> tuple[int, str]:
    try:
        call()
    except grpc.RpcError as exc:
        code, reason, message = error_of(exc)
        assert code == grpc.StatusCode.DATA_LOSS and reason == "EVENT_LOG_DAMAGED", (code, reason, message)
        info = error_details_pb2.ErrorInfo()
        assert rpc_status.from_call(exc).details[0].Unpack(info)
        return int(info.metadata["seq"]), message
    raise AssertionError("a cut log was served")


def cut_last_command(url: str, gid: str) -> int:
    """The last command's events and its commands row deleted: a shorter log, consistent in itself."""
    with psycopg.connect(url, autocommit=True) as conn:
        first, cid = conn.execute(
            "SELECT first_seq, command_id FROM commands WHERE game_id = %s ORDER BY first_seq DESC LIMIT 1", (gid,)
        ).fetchone()
        conn.execute("ALTER TABLE events DISABLE TRIGGER events_no_update_delete")
        conn.execute("DELETE FROM events WHERE game_id = %s AND seq >= %s", (gid, first))
        conn.execute("ALTER TABLE events ENABLE TRIGGER events_no_update_delete")
        conn.execute("DELETE FROM commands WHERE game_id = %s AND command_id = %s", (gid, cid))
    return int(first)


def test_a_cut_log_is_caught_warm_cold_and_offline_with_each_witness(witness_at, fresh_database_url, tmp_path):
    option, where, extra = witness_at
    env = {"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN, "TABLIER_SIGNING_KEY": KEY, **extra}
    # Reads answered from the held state are checked in the database again within
    # --recheck-every seconds: the warm server's refusal below comes within that bound.
    opts = (*option, "--witness-every", "0.1", "--recheck-every", "0.2")
    servers = [start_server(fresh_database_url, tmp_path, "warm", *opts, env=env)]
    try:
        servers.append(start_server(fresh_database_url, tmp_path, "other", *opts, env=env))
        with grpc.insecure_channel(servers[0].address) as ch, grpc.insecure_channel(servers[1].address) as ch2:
            stub = rpc.GameServiceStub(ch)
            # Both servers append to the one chain: one match on each, moves interleaved.
            gid, state, kept = play(stub, 4)
            other, other_state, _ = play(rpc.GameServiceStub(ch2), 4)
            deadline = time.monotonic() + WAIT
            while (heads := witnessed_heads(where)).get(gid, (0,))[0] < state.seq or heads.get(other, (0,))[
                0
            ] < other_state.seq:
                assert time.monotonic() < deadline, f"no checkpoint of the heads: {heads}"
                time.sleep(0.05)
            assert heads[gid] == (state.seq, state.chain_head)

            # A third party: the chain whole, then one match's head by its inclusion proof.
            listed = stub.ListSigningKeys(pb.ListSigningKeysRequest()).keys
            key = bytes(next(k.public_key for k in listed if k.current))
            assert tp_check_chain(records(where), key)[gid] == (state.seq, state.chain_head)
            proof_file = tmp_path / "proof.json"
            made = tablier(env, "witness-proof", gid, "--witness", where, "-o", str(proof_file))
            assert made.returncode == 0, made.stdout + made.stderr
            tp_check_proof(json.loads(proof_file.read_text()), key, state.seq, state.chain_head)

            url = ("--database-url", fresh_database_url)
            ok = tablier(env, "verify", "--all", "--witness", where, *url)
            assert ok.returncode == 0, ok.stdout + ok.stderr

            first = cut_last_command(fresh_database_url, gid)
            # Warm: the server holding the match verified its head, whatever the witness says; a
            # read from its held state is checked again within the recheck bound.
            deadline = time.monotonic() + WAIT
            while True:
                try:
                    stub.GetView(pb.GetViewRequest(game_id=gid))
                except grpc.RpcError:
                    break
                assert time.monotonic() < deadline, "a cut log was served past the recheck bound"
                time.sleep(0.05)
            seq, _ = data_loss(lambda: stub.GetView(pb.GetViewRequest(game_id=gid)))
            assert seq == first

        # Offline: consistent in itself, the witness and the receipts show the cut.
        assert tablier(env, "verify", gid, "--no-witness", *url).returncode == 0
        caught = tablier(env, "verify", gid, "--witness", where, *url)
        assert caught.returncode == 1, caught.stdout + caught.stderr
        assert f"seq {first}: the witness saw the log at seq {state.seq}" in caught.stdout, caught.stdout
        receipts = tmp_path / "receipts.json"
        receipts.write_text(json_format.MessageToJson(pb.ReceiptList(receipts=kept)))
        by_receipt = tablier(env, "verify", gid, "--receipts", str(receipts), *url)
        assert by_receipt.returncode == 1 and "(cut)" in by_receipt.stdout, by_receipt.stdout

        # Cold: a server that never held the match refuses it through the witness alone.
        servers.append(start_server(fresh_database_url, tmp_path, "cold", *opts, env=env))
        with grpc.insecure_channel(servers[-1].address) as ch:
            cold = rpc.GameServiceStub(ch)
            seq, message = data_loss(lambda: cold.GetView(pb.GetViewRequest(game_id=gid)))
            assert seq == first and f"the witness saw the log at seq {state.seq}" in message, message
            assert cold.GetView(pb.GetViewRequest(game_id=other)).state.seq == other_state.seq
            assert cold.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2)).state.seq > 0
    finally:
        for srv in servers:
            assert srv.stop() == 0, srv.log.read_text()
            text = srv.log.read_text()
            assert "Traceback" not in text and "cannot be" not in text, text
    # Nothing the servers wrote broke the chain (two writers, no fork).
    assert witnessed_heads(where)[gid] == (state.seq, state.chain_head)


def test_a_changed_or_removed_checkpoint_is_reported(fresh_database_url, tmp_path):
    env = {"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN, "TABLIER_SIGNING_KEY": KEY}
    wdir = tmp_path / "witness"
    server = start_server(fresh_database_url, tmp_path, "server", "--witness-dir", str(wdir), "--witness-every", "0.05",
                          env=env)
    try:
        with grpc.insecure_channel(server.address) as ch:
            for _ in range(2):  # two matches, one after the other's checkpoint: two checkpoints at least
                gid, state, _ = play(rpc.GameServiceStub(ch), 4)
                deadline = time.monotonic() + WAIT
                while witnessed_heads(str(wdir)).get(gid, (0,))[0] < state.seq:
                    assert time.monotonic() < deadline, "no checkpoint of the head"
                    time.sleep(0.05)
    finally:
        assert server.stop() == 0, server.log.read_text()
    path = wdir / "checkpoints.jsonl"
    lines = path.read_text().splitlines()
    assert len(lines) >= 2, lines
    url = ("--database-url", fresh_database_url)

    doc = json.loads(lines[0])
    doc["changes"][0][1] += 1
    path.write_text("\n".join([json.dumps(doc), *lines[1:]]) + "\n")
    forged = tablier(env, "verify", gid, "--witness", str(wdir), *url)
    assert forged.returncode == 1, forged.stdout + forged.stderr
    assert "checkpoint 1: a checkpoint whose signature does not verify" in forged.stderr, forged.stderr

    path.write_text("\n".join(lines[1:]) + "\n")
    removed = tablier(env, "verify", gid, "--witness", str(wdir), *url)
    assert removed.returncode == 1, removed.stdout + removed.stderr
    assert "checkpoint 1: a checkpoint numbered 2 (moved, or one before it removed)" in removed.stderr, removed.stderr

    path.write_text("\n".join(lines) + "\n")
    assert tablier(env, "verify", gid, "--witness", str(wdir), *url).returncode == 0


def test_a_position_is_taken_once_in_each_store(witness_at):
    """The compare-and-set the chain rests on: of two writers at one position, one wins, and
    the other learns it (then reads and tries the next)."""
    from tablier.witness_backends import open_backend

    _, where, _ = witness_at
    a, b = open_backend(where), open_backend(where)
    try:
        assert a.append(1, b'{"first":1}')
        assert not b.append(1, b'{"second":1}')
        assert b.read(0)[:1] == [(1, b'{"first":1}')]
        assert b.append(2, b'{"second":2}')
        assert [p for p, _ in a.read(0)] == [1, 2] and a.read(1) == [(2, b'{"second":2}')]
    finally:
        a.close()
        b.close()


def test_verify_consults_the_witness_where_the_server_keeps_it_by_default(fresh_database_url, tmp_path):
    """A server given no witness option keeps its witness in <data dir>/witness; `tablier verify`
    with the same data dir reads it there, so a log cut together with its command rows (consistent
    in itself) is reported without any flag. `--no-witness` leaves it out."""
    env = {"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN, "TABLIER_SIGNING_KEY": KEY}
    data_dir = tmp_path / "data"
    server = start_server(fresh_database_url, tmp_path, "server", "--data-dir", str(data_dir), "--witness-every",
                          "0.05", env=env)
    try:
        with grpc.insecure_channel(server.address) as ch:
            gid, state, _ = play(rpc.GameServiceStub(ch), 4)
            deadline = time.monotonic() + WAIT
            while witnessed_heads(str(data_dir / "witness")).get(gid, (0,))[0] < state.seq:
                assert time.monotonic() < deadline, "no checkpoint of the head in <data dir>/witness"
                time.sleep(0.05)
    finally:
        assert server.stop() == 0, server.log.read_text()
    where = ("--database-url", fresh_database_url, "--data-dir", str(data_dir))
    intact = tablier(env, "verify", gid, *where)
    assert intact.returncode == 0 and f"against the witness {data_dir / 'witness'}" in intact.stdout, intact.stdout

    first = cut_last_command(fresh_database_url, gid)
    caught = tablier(env, "verify", gid, *where)
    assert caught.returncode == 1, caught.stdout + caught.stderr
    assert f"seq {first}: the witness saw the log at seq {state.seq}" in caught.stdout, caught.stdout
    skipped = tablier(env, "verify", gid, "--no-witness", *where)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    # No witness, as for the server (TABLIER_WITNESS_DIR=''): nothing to consult.
    unset = tablier({**env, "TABLIER_WITNESS_DIR": ""}, "verify", gid, *where)
    assert unset.returncode == 0 and "against the witness" not in unset.stdout, unset.stdout
    both = tablier(env, "verify", gid, "--no-witness", "--witness", str(data_dir / "witness"), *where)
    assert both.returncode == 2, both.stdout + both.stderr
