"""Signed receipts: every answer that changes a match carries the server's Ed25519 signature over
(game id, seq, chain head, time); the SDK keeps them; a third party checks them with nothing but
`cryptography` and hashlib (docs/verifying.md); `tablier verify --receipts` and `verify-public
--receipts` prove a log cut after the fact, which neither a cold server nor `verify` alone can
(the log is consistent in itself); rotated keys keep their receipts verifiable."""

from __future__ import annotations

import asyncio
import collections
import hashlib
import os
import struct
import subprocess

import psycopg
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from tablier import receipts as receipts_module
from tablier.api.servicer import GameServicer
from tablier.app.games import GameApp
from tablier.public_verify import read_log, write_log
from tablier.store.memory import MemoryStore
from tablier_client import connect
from tablier_client.v1 import service_pb2

from .conftest import OPERATOR_TOKEN, start_server, tablier_cmd
from .test_sdk import play_out

GAME = "rat_a_tat_cat"


def new_key() -> tuple[str, str]:
    """(private key hex, public key hex) of a fresh Ed25519 key."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return private.hex(), public.hex()


def tablier(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        tablier_cmd(*args), capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "300", **env}
    )


def third_party_check(receipt: service_pb2.Receipt, public: bytes) -> None:
    """docs/verifying.md, with `cryptography` and hashlib alone (raises InvalidSignature)."""
    assert receipt.key_id == hashlib.sha256(b"tablier/signing-key\0" + public).hexdigest()[:16]
    gid = receipt.game_id.encode()
    message = (
        b"tablier/receipt\0"
        + struct.pack(">I", len(gid))
        + gid
        + struct.pack(">Q", receipt.seq)
        + struct.pack(">I", len(receipt.chain_head))
        + receipt.chain_head
        + struct.pack(">q", receipt.signed_at_ms)
    )
    if receipt.batch_size:
        # Signed with its batch: the path leads from the message's leaf to the root (RFC 9162
        # section 2.1.3.2), and the signature covers the root.
        h = lambda data: hashlib.sha256(data).digest()  # noqa: E731
        fn, sn, node = receipt.batch_index, receipt.batch_size - 1, h(b"\x00" + message)
        assert fn <= sn
        for sibling in receipt.batch_path:
            assert sn > 0
            if fn & 1 or fn == sn:
                node = h(b"\x01" + sibling + node)
                while not fn & 1 and fn:
                    fn, sn = fn >> 1, sn >> 1
            else:
                node = h(b"\x01" + node + sibling)
            fn, sn = fn >> 1, sn >> 1
        assert sn == 0
        message = b"tablier/receipt-batch\0" + struct.pack(">I", receipt.batch_size) + node
    Ed25519PublicKey.from_public_bytes(public).verify(receipt.signature, message)


@pytest.fixture
def keys():
    return new_key(), new_key()


async def test_receipts_are_signed_kept_and_prove_a_cut_log(fresh_database_url, tmp_path, keys):
    (k1, pub1), (k2, _) = keys
    env1 = {"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN, "TABLIER_SIGNING_KEY": k1}
    server = start_server(fresh_database_url, tmp_path, "first", env=env1)
    try:
        async with connect(server.address) as client:
            listed = await client.signing_keys()
            assert [(k.public_key.hex(), k.current) for k in listed] == [(pub1, True)]
            created = await client.create(GAME, seats=2)
            gid = created.game_id
            await play_out(created.seats)
            final = await created.seats[0].state()
        receipts = client.receipts
    finally:
        assert server.stop() == 0, server.log.read_text()

    # One receipt per answer that changed the match (the create and every move), each over the
    # chain head the answer's state carried; the last one is the final head.
    assert len(receipts) >= 2 and all(r.game_id == gid for r in receipts)
    seqs = [r.seq for r in receipts]
    assert seqs == sorted(seqs) and seqs[-1] == final.seq
    for r in receipts:
        third_party_check(r, bytes.fromhex(pub1))
    # A receipt whose seq was changed no longer verifies.
    forged = service_pb2.Receipt()
    forged.CopyFrom(receipts[-1])
    forged.seq -= 1
    with pytest.raises(InvalidSignature):
        third_party_check(forged, bytes.fromhex(pub1))

    kept = tmp_path / "receipts.json"
    client.save_receipts(kept)
    url = ("--database-url", fresh_database_url)
    ok = tablier(env1, "verify", gid, "--receipts", str(kept), *url)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    # Rotation: a server with a new key still lists the old one's public key while asked to;
    # a receipt of a key it no longer lists verifies against the public key the client kept.
    env2 = {"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN, "TABLIER_SIGNING_KEY": k2, "TABLIER_SIGNING_OLD_KEYS": pub1}
    rotated = start_server(fresh_database_url, tmp_path, "rotated", env=env2)
    try:
        async with connect(rotated.address) as client:
            listed = await client.signing_keys()
            assert [(k.public_key.hex(), k.current) for k in listed][1:] == [(pub1, False)] and listed[0].current
            public = tmp_path / "public.json"
            done = tablier(env2, "export", gid, "--server", rotated.address, "-o", str(public), "--auditor")
            assert done.returncode == 0, done.stdout + done.stderr
    finally:
        assert rotated.stop() == 0, rotated.log.read_text()
    only_new = {"TABLIER_SIGNING_KEY": k2, "TABLIER_SIGNING_OLD_KEYS": ""}
    unknown = tablier(only_new, "verify", gid, "--receipts", str(kept), *url)
    assert unknown.returncode == 1 and "not among the trusted keys" in unknown.stdout, unknown.stdout
    assert tablier(only_new, "verify", gid, "--receipts", str(kept), "--receipt-key", pub1, *url).returncode == 0

    # The public log of the finished match against the receipts, then the same log cut.
    good = tablier({}, "verify-public", str(public), "--receipts", str(kept), "--receipt-key", pub1)
    assert good.returncode == 0, good.stdout + good.stderr
    log = read_log(public)
    cut = service_pb2.MatchLog()
    cut.CopyFrom(log)
    del cut.events[-2:]
    write_log(tmp_path / "cut.json", cut)
    short = tablier({}, "verify-public", str(tmp_path / "cut.json"), "--receipts", str(kept), "--receipt-key", pub1)
    beyond = next(s for s in seqs if s > cut.events[-1].seq)
    assert short.returncode == 1 and f"seq {beyond}: receipt" in short.stdout and "(cut)" in short.stdout, short.stdout

    # The stored log cut with its commands row: consistent in itself (verify alone, without the
    # witness, passes), the receipts show the cut.
    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        first, cid = conn.execute(
            "SELECT first_seq, command_id FROM commands WHERE game_id = %s ORDER BY first_seq DESC LIMIT 1", (gid,)
        ).fetchone()
        conn.execute("ALTER TABLE events DISABLE TRIGGER events_no_update_delete")
        conn.execute("DELETE FROM events WHERE game_id = %s AND seq >= %s", (gid, first))
        conn.execute("ALTER TABLE events ENABLE TRIGGER events_no_update_delete")
        conn.execute("DELETE FROM commands WHERE game_id = %s AND command_id = %s", (gid, cid))
    alone = tablier(env1, "verify", gid, "--no-witness", *url)
    assert alone.returncode == 0, alone.stdout
    caught = tablier(env1, "verify", gid, "--no-witness", "--receipts", str(kept), *url)
    assert caught.returncode == 1, caught.stdout
    beyond = next(s for s in seqs if s >= first)
    assert f"seq {beyond}: receipt" in caught.stdout and "(cut)" in caught.stdout, caught.stdout


async def test_answers_completed_together_share_one_signature(fresh_database_url, tmp_path, keys):
    """Moves of several matches committed together get their receipts signed together: one
    signature over the root of their tree, each receipt with its own path to it. Each still
    proves its own head alone, and nothing but its own."""
    (k1, pub1), _ = keys
    env = {"TABLIER_OPERATOR_TOKEN": OPERATOR_TOKEN, "TABLIER_SIGNING_KEY": k1}
    server = start_server(fresh_database_url, tmp_path, "batches", env=env)
    try:
        async with connect(server.address) as client:
            created = [await client.create(GAME, seats=2) for _ in range(12)]
            await asyncio.gather(*(play_out(c.seats) for c in created))
        receipts = client.receipts
    finally:
        assert server.stop() == 0, server.log.read_text()

    public = bytes.fromhex(pub1)
    batched = [r for r in receipts if r.batch_size]
    assert batched, "12 matches played at once, and no two moves were signed together"
    for r in receipts:
        third_party_check(r, public)
        assert receipts_module.check(r, {r.key_id: public}) is None
    shared = collections.Counter(r.signature for r in batched)
    assert max(shared.values()) >= 2 and all(r.batch_size >= 2 and r.batch_index < r.batch_size for r in batched)

    # Each receipt proves its own head only: another index, a changed sibling, or the head of
    # another receipt of the batch no longer leads to the signed root.
    r = batched[0]
    for change in ("index", "path", "head"):
        forged = service_pb2.Receipt()
        forged.CopyFrom(r)
        if change == "index":
            forged.batch_index = (r.batch_index + 1) % r.batch_size
        elif change == "path":
            forged.batch_path[0] = bytes(32)
        else:
            forged.chain_head = bytes(32)
        with pytest.raises((InvalidSignature, AssertionError)):
            third_party_check(forged, public)
        assert receipts_module.check(forged, {r.key_id: public}) is not None

    kept = tmp_path / "receipts.json"
    client.save_receipts(kept)
    gid = r.game_id
    ok = tablier(env, "verify", gid, "--receipts", str(kept), "--database-url", fresh_database_url)
    assert ok.returncode == 0, ok.stdout + ok.stderr


async def test_a_turn_with_more_receipts_than_a_batch_holds_is_signed_in_batches():
    """70 receipts asked for in one turn of the event loop: batches of at most 64, each receipt
    verifying alone, and a batch of one signed in the plain form."""
    key = Ed25519PrivateKey.generate()
    keys = receipts_module.SigningKeys(key)
    public = keys.public
    signer = receipts_module.BatchSigner(keys)
    outs = [service_pb2.Receipt() for _ in range(receipts_module.BATCH_MAX + 6)]
    gid = "00000000-0000-4000-8000-000000000000"
    await asyncio.gather(*(signer.sign_into(r, gid, i + 1, bytes([i]) * 32) for i, r in enumerate(outs)))
    assert [r.batch_size for r in outs] == [64] * 64 + [6] * 6
    assert [r.batch_index for r in outs] == list(range(64)) + list(range(6))
    assert len({r.signature for r in outs}) == 2
    for r in outs:
        third_party_check(r, public)
        assert receipts_module.check(r, {r.key_id: public}) is None
    alone = service_pb2.Receipt()
    await signer.sign_into(alone, gid, 99, bytes(32))
    assert alone.batch_size == 0 and not alone.batch_path
    third_party_check(alone, public)
    # A receipt claiming a batch of one, or a path longer than its batch needs, is refused.
    for size, path in ((1, []), (6, list(outs[-1].batch_path) + [bytes(32)])):
        forged = service_pb2.Receipt()
        forged.CopyFrom(outs[-1])
        forged.batch_size = size
        del forged.batch_path[:]
        forged.batch_path.extend(path)
        assert "does not fit" in (receipts_module.check(forged, {r.key_id: public}) or "")


async def test_a_chain_head_only_the_auditor_sees_is_never_a_leaf_of_a_shared_batch():
    """A scheme-1 match in play publishes its chain head to the auditor alone: its receipt is
    signed alone, so no path given to another caller carries a hash of it."""
    app = GameApp(MemoryStore())
    app.signing = receipts_module.SigningKeys(Ed25519PrivateKey.generate())
    servicer = GameServicer(app)
    answers = [service_pb2.PlayMoveResponse() for _ in range(4)]
    for i, answer in enumerate(answers):
        answer.state.game_id = f"00000000-0000-4000-8000-00000000000{i}"
        answer.state.seq = 5
        answer.state.chain_head = bytes([i + 1]) * 32
        answer.state.integrity_scheme = 1 if i == 0 else 3
    answers[3].state.integrity_scheme = 1
    answers[3].state.over = True  # over: its chain head is anyone's
    await asyncio.gather(*(servicer._sign(a) for a in answers))
    public = app.signing.public
    assert answers[0].receipt.batch_size == 0 and not answers[0].receipt.batch_path
    assert [a.receipt.batch_size for a in answers[1:]] == [3, 3, 3]
    for a in answers:
        third_party_check(a.receipt, public)
