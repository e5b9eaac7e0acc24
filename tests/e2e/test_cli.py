"""The `tablier` command end to end: serve, bots, replay, verify (and verify catching a
tampered event) on a throwaway database."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import grpc
import psycopg
import pytest

from .conftest import GAME_IDS, GAME_TYPES, start_server, tablier_cmd

RUN_TIMEOUT = 300


def tablier(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(tablier_cmd(*args), capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def played_database(fresh_database_url, tmp_path):
    """A throwaway database holding one finished bot match per game type, played by
    `tablier bots` against a `tablier serve` on it; yields (url, match ids)."""
    server = start_server(fresh_database_url, tmp_path, "cli")
    try:
        ids = []
        for info in GAME_TYPES:
            done = tablier("bots", "--game", info.id, "--seats", str(info.min_players), "--server", server.address)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "over" in done.stdout
            ids.append(re.search(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}", done.stdout).group())
    finally:
        code = server.stop()
    assert code == 0, server.log.read_text()
    assert "stopped" in server.log.read_text()
    yield fresh_database_url, ids


def test_verify_passes_then_catches_a_tampered_event(played_database):
    url, ids = played_database
    ok = tablier("verify", "--all", "--database-url", url)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    for gid in ids:
        assert gid in ok.stdout
    assert ok.stdout.count(" ok ") >= len(ids)

    one = tablier("verify", ids[0], "--database-url", url)
    assert one.returncode == 0, one.stdout + one.stderr

    # Tamper with one stored payload (the immutability trigger has to be switched off by a
    # superuser first: the service itself can never do this).
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE events DISABLE TRIGGER events_no_update_delete")
        changed = conn.execute(
            "UPDATE events SET payload = payload || '\\x0801'::bytea WHERE game_id = %s AND seq = 2",
            (ids[0],),
        ).rowcount
        conn.execute("ALTER TABLE events ENABLE TRIGGER events_no_update_delete")
    assert changed == 1
    bad = tablier("verify", "--all", "--database-url", url)
    assert bad.returncode != 0, bad.stdout
    assert "seq 2" in bad.stdout and "mismatch" in bad.stdout
    assert tablier("verify", ids[-1], "--database-url", url).returncode == (0 if len(ids) > 1 else 1)

    # Tamper with what a command asked: the chain covers it (integrity scheme 3), and deciding
    # it again from the seed no longer works.
    with psycopg.connect(url, autocommit=True) as conn:
        first = conn.execute(
            """UPDATE commands SET action = action || '\\x00'::bytea
               WHERE game_id = %s AND first_seq = (
                   SELECT min(first_seq) FROM commands WHERE game_id = %s AND action IS NOT NULL)
               RETURNING first_seq""",
            (ids[-1], ids[-1]),
        ).fetchall()
    assert len(first) == 1
    redone = tablier("verify", ids[-1], "--database-url", url)
    assert redone.returncode == 1 and "refused" in redone.stdout, redone.stdout
    assert f"seq {first[0][0]}: chain hash mismatch (the event, or what command" in redone.stdout, redone.stdout


def test_replay_prints_the_match(played_database):
    url, ids = played_database
    for gid, game in zip(ids, GAME_IDS, strict=True):
        full = tablier("replay", gid, "--database-url", url)
        assert full.returncode == 0, full.stderr
        assert gid in full.stdout and game in full.stdout and "over: scores" in full.stdout
        first = tablier("replay", gid, "--at", "1", "--database-url", url)
        assert first.returncode == 0, first.stderr
        assert "at seq 1" in first.stdout and "over: no" in first.stdout
    missing = tablier("replay", "00000000-0000-0000-0000-000000000000", "--database-url", url)
    assert missing.returncode != 0 and "no match" in missing.stderr


def test_serve_reports_not_serving_then_drains_on_sigterm(e2e_database_url, tmp_path):
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    server = start_server(e2e_database_url, tmp_path, "drain")
    try:
        with grpc.insecure_channel(server.address) as ch:
            updates = health_pb2_grpc.HealthStub(ch).Watch(
                health_pb2.HealthCheckRequest(service="tablier.v1.GameService"), timeout=60)
            assert next(updates).status == health_pb2.HealthCheckResponse.SERVING
            server.terminate()
            assert next(updates).status == health_pb2.HealthCheckResponse.NOT_SERVING
    finally:
        code = server.stop()
    assert code == 0
    log = server.log.read_text()
    assert "draining" in log and "stopped" in log


def test_bench_service_measures_every_call_against_the_echo(fresh_database_url, tmp_path):
    """`tablier bench-service` (the figures docs/load-testing.md reports) runs end to end: every call it
    measures succeeds and gets a ratio to the echo of its round; a run whose calls all fail
    exits non-zero instead of printing zeros. Loopback only; one short round."""
    done = tablier("bench-service", "--rounds", "1", "--seconds", "0.5", "--workers", "1", "--history", "80",
                   "--database-url", fresh_database_url, "--log-dir", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {}
    for line in done.stdout.splitlines():
        m = re.match(r"(\S.*?\[1 worker\])\s+([\d,]+) \(.*?\)\s+(\d+\.\d\d) \(", line)
        if m:
            rows[m.group(1)] = (int(m.group(2).replace(",", "")), float(m.group(3)))
    assert set(rows) == {"EvaluatePosition [1 worker]", "PlayMove [1 worker]", "GetView [1 worker]",
                         "GetView at_seq=40 [1 worker]", "WatchGame after_seq=79 [1 worker]",
                         "GetView over Connect [1 worker]", "GetView, 1 in flight [1 worker]",
                         "GetView over Connect, 1 in flight [1 worker]"}, done.stdout
    assert all(rate > 0 and ratio > 0 for rate, ratio in rows.values()), done.stdout
    # The browser transport beside gRPC: one call in flight on a kept-alive connection each, and
    # the ratio of their median latencies.
    web = re.search(r"^GetView, one call in flight on a kept-alive connection: Connect p50 (\d+\.\d+) .*"
                    r" gRPC (\d+\.\d+) .*; Connect/gRPC (\d+\.\d+) ", done.stdout, re.M)
    assert web and all(float(x) > 0 for x in web.groups()), done.stdout
    # The floor of a durable move: the echo answering after an append through the store.
    floor = re.search(r"^echo \+ durable append\s+([\d,]+) \(", done.stdout, re.M)
    assert floor and int(floor.group(1).replace(",", "")) > 0, done.stdout
    # The echo again from an `async def` handler, beside the baseline's plain function.
    on_loop = re.search(r"^echo, async def handler\s+([\d,]+) \(", done.stdout, re.M)
    assert on_loop and int(on_loop.group(1).replace(",", "")) > 0, done.stdout
    assert "error" not in done.stderr.lower(), done.stderr


def test_bench_service_bus_measures_delivery_and_the_watched_servers_costs(fresh_database_url, tmp_path):
    """`tablier bench-service --only bus` (the bus and watch figures in docs/load-testing.md and
    docs/scaling.md) runs end to end on loopback with a real nats-server: both modes deliver every
    event to every watcher, and the watched server's memory per stream and CPU per message are
    measured. One short round."""
    done = tablier("bench-service", "--only", "bus", "--rounds", "1", "--seconds", "0.5",
                   "--database-url", fresh_database_url, "--log-dir", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    for mode in ("LISTEN/NOTIFY", "bus (NATS)"):
        line = re.search(rf"^round 1 {re.escape(mode)}: delivery p50 ([\d.]+) ms p99 ([\d.]+) ms \((\d+) deliveries\);"
                         rf" ([\d,]+) moves/s, .*; watched server (-?[\d.]+) KiB a stream, (\d+) us CPU a message$",
                         done.stderr, re.M)
        assert line, done.stderr
        p50, p99, deliveries, moves, kib, us = line.groups()
        # 1,000 watchers, each receiving every event of the 30 moves played (a move is 1-3 events).
        assert int(deliveries) >= 30 * 1000, line.group(0)
        assert 0 < float(p50) <= float(p99) and int(moves.replace(",", "")) > 0, line.group(0)
        assert float(kib) > 0 and int(us) > 0, line.group(0)
    assert re.search(r"^bus / LISTEN, median of the rounds' ratios: p50 [\d.]+, .* us/message [\d.]+$", done.stdout, re.M), done.stdout
