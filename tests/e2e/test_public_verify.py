"""Committed seeds and checks outsiders can run: CreateGame publishes a commitment, the seed is
revealed at the end, `tablier verify-public` re-derives every chance outcome from a finished
match's public log with no database, and the transcripts clients kept catch a log cut or
rewritten later (`tablier verify --transcript`), even one a server starting cold cannot tell."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess

import grpc
import psycopg
import pytest

from tablier.public_verify import read_log, write_log
from tablier.v1 import service_pb2 as pb

from .conftest import tablier_cmd
from .helpers import bot_move, expect_error


def tablier(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(tablier_cmd(*args), capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "300"})


def export(server, gid: str, path, *extra: str) -> pb.MatchLog:
    done = tablier("export", gid, "--server", server.address, "-o", str(path), *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    return read_log(path)


@pytest.fixture(scope="module")
def finished(server, stub, tmp_path_factory):
    """A Rat-a-Tat Cat match played to its end; the transcripts a spectator and seat 0 kept
    half-way, and the public log exported after the end."""
    d = tmp_path_factory.mktemp("public")
    created = stub.CreateGame(pb.CreateGameRequest(game_type="rat_a_tat_cat", seats=2))
    gid = created.game_id
    st = created.state
    # Published at creation: a commitment and a chain head, never the seed.
    assert len(st.seed_commitment) == 32 and len(st.chain_head) == 32 and not st.seed
    assert st.integrity_scheme == 3
    state = st
    for _ in range(6):
        state = bot_move(stub, created, state).state
    spectator = export(server, gid, d / "spectator.json")
    seat0 = export(server, gid, d / "seat0.json", "--token", created.seat_tokens[0])
    assert spectator.state.seed_commitment == st.seed_commitment and not spectator.state.seed
    assert all(len(e.chain_hash) == 32 for e in spectator.events)
    # The same events, differently redacted, with the same chain hashes.
    assert [e.chain_hash for e in seat0.events] == [e.chain_hash for e in spectator.events]
    code, _, _ = expect_error(stub.ListEvents, pb.ListEventsRequest(game_id=gid),
                              metadata=(("x-tablier-role", "auditor"),))
    assert code == grpc.StatusCode.PERMISSION_DENIED  # not before the end
    while not state.over:
        state = bot_move(stub, created, state).state
    assert len(state.seed) == 32  # revealed to everyone
    assert hashlib.sha256(b"tablier/seed-commitment\0" + gid.encode() + state.seed).digest() == st.seed_commitment
    public = export(server, gid, d / "public.json", "--auditor")
    return d, gid, created, public


def verify_public(*args) -> subprocess.CompletedProcess:
    return tablier("verify-public", *map(str, args))


def test_a_finished_match_verifies_from_its_public_log_alone(finished):
    d, gid, created, public = finished
    assert public.state.over and public.state.role == pb.ROLE_AUDITOR and len(public.state.seed) == 32
    ok = verify_public(d / "public.json", "--transcript", d / "spectator.json", "--transcript", d / "seat0.json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    commands = sum(e.HasField("command") for e in public.events)
    assert commands > 6 and f"{commands} commands decided again" in ok.stdout
    seen = len(read_log(d / "spectator.json").events) + len(read_log(d / "seat0.json").events)
    assert f"{seen} viewer events checked" in ok.stdout


def test_a_wrong_seed_or_a_changed_draw_is_caught(finished):
    d, gid, created, public = finished
    wrong = verify_public(d / "public.json", "--seed", "00" * 32)
    assert wrong.returncode == 1 and "does not match" in wrong.stdout and "commitment" in wrong.stdout

    # A draw the server could have chosen by hand: a later event's payload changed, and the
    # chain recomputed would still have to come from the seed.
    changed = pb.MatchLog()
    changed.CopyFrom(public)
    target = next(e for e in changed.events if e.seq > 10 and e.type == "card_drawn")
    target.payload.value = target.payload.value[:-1] + bytes([target.payload.value[-1] ^ 1])
    write_log(d / "changed.json", changed)
    bad = verify_public(d / "changed.json")
    assert bad.returncode == 1 and f"seq {target.seq}: not what the core decides from the seed" in bad.stdout

    # A transcript holding a chain hash the log does not: the log was rewritten after it.
    forged = read_log(d / "spectator.json")
    forged.events[-1].chain_hash = bytes(32)
    write_log(d / "forged.json", forged)
    caught = verify_public(d / "public.json", "--transcript", d / "forged.json")
    assert caught.returncode == 1 and "another chain hash" in caught.stdout


def test_verify_checks_the_stored_log_against_a_transcript(server, stub, e2e_database_url, tmp_path):
    """Cut with its commands row, a log looks honest to a server starting cold; a transcript a
    client kept (and the chain hashes it received) shows the cut."""
    created = stub.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2))
    gid = created.game_id
    state = created.state
    for _ in range(5):
        state = bot_move(stub, created, state).state
    transcript = export(server, gid, tmp_path / "t.json", "--token", created.seat_tokens[0])
    assert transcript.state.chain_head == state.chain_head
    ok = tablier("verify", gid, "--transcript", str(tmp_path / "t.json"), "--database-url", e2e_database_url)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    with psycopg.connect(e2e_database_url, autocommit=True) as conn:
        first, cid = conn.execute("SELECT first_seq, command_id FROM commands WHERE game_id = %s "
                                  "ORDER BY first_seq DESC LIMIT 1", (gid,)).fetchone()
        conn.execute("ALTER TABLE events DISABLE TRIGGER events_no_update_delete")
        conn.execute("DELETE FROM events WHERE game_id = %s AND seq >= %s", (gid, first))
        conn.execute("ALTER TABLE events ENABLE TRIGGER events_no_update_delete")
        conn.execute("DELETE FROM commands WHERE game_id = %s AND command_id = %s", (gid, cid))
    # Consistent in itself (the witness the server keeps by default saw the cut: left out here).
    alone = tablier("verify", gid, "--no-witness", "--database-url", e2e_database_url)
    assert alone.returncode == 0, alone.stdout  # consistent in itself
    cut = tablier("verify", gid, "--transcript", str(tmp_path / "t.json"), "--database-url", e2e_database_url)
    assert cut.returncode == 1 and f"seq {first}" in cut.stdout and "(cut)" in cut.stdout, cut.stdout
    json.loads((tmp_path / "t.json").read_text())  # the transcript is plain protobuf JSON


def test_the_chain_recomputes_from_the_readme_formulas(finished):
    """A third party's verifier, with SHA-256 only (docs/verifying.md)."""
    import struct

    d, gid, created, public = finished
    st = public.state
    h = lambda *parts: hashlib.sha256(b"".join(parts)).digest()  # noqa: E731
    commitment = h(b"tablier/seed-commitment\0", gid.encode(), st.seed)
    assert commitment == st.seed_commitment
    assert st.integrity_scheme == 3
    head = json.dumps([gid, st.game_type, st.seat_count, sorted(st.options.items()), commitment.hex(), 3],
                      separators=(",", ":")).encode()
    chain = h(b"tablier/genesis\0", head)
    P = lambda b: struct.pack(">I", len(b)) + b  # noqa: E731
    digests = {}
    for ev in public.events:
        if ev.HasField("command"):
            c = ev.command
            digests[ev.command_id] = h(b"tablier/command\0", P(ev.command_id.encode()),
                                       struct.pack(">q", c.seat if c.HasField("seat") else -1),
                                       P(c.action.value), P(c.host_command.encode()))
    assert digests
    for ev in public.events:
        parts = [ev.type.encode(), ev.payload.value, ev.command_id.encode(), ev.core_version.encode(), ev.state_hash]
        if ev.command_id:
            parts.append(digests[ev.command_id])
        chain = h(b"tablier/event\0", chain, struct.pack(">Qq", ev.seq, ev.seat if ev.HasField("seat") else -1),
                  *(struct.pack(">I", len(p)) + p for p in parts))
        assert chain == ev.chain_hash, ev.seq
    assert chain == st.chain_head
