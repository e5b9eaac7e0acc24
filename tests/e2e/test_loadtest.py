"""`tablier loadtest` against a real `tablier serve` on loopback: each scenario writes a valid
JSON report and PNG; an open loop far above what the server can answer reports the queueing
(latencies from the intended send times) and says the target rate was not held; `compare`
reads two reports."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .conftest import GAME_TYPES, OPERATOR_TOKEN, start_server, tablier_cmd
from .test_sdk import self_signed

RUN_TIMEOUT = 120
PNG = b"\x89PNG\r\n\x1a\n"


def loadtest(server, tmp_path, name: str, *args: str, token: bool = True, tls: tuple[str, ...] = ("--no-tls",)) -> dict:
    report, png = tmp_path / f"{name}.json", tmp_path / f"{name}.png"
    done = subprocess.run(
        tablier_cmd("loadtest", *args, "--server", server.address, *tls, "--quiet",
                    "--json", str(report), "--plot", str(png), *(("--token", OPERATOR_TOKEN) if token else ())),
        capture_output=True, text=True, timeout=RUN_TIMEOUT, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert png.read_bytes().startswith(PNG) and png.stat().st_size > 10_000
    out = json.loads(report.read_text())
    assert out["format"] == "tablier-loadtest/1"
    for rpc in out["rpcs"].values():
        lat = rpc["latency_ms"]
        assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99.9"] <= lat["max"]
        assert rpc["statuses"].get("OK") == rpc["ok"] > 0
    out["stdout"] = done.stdout
    return out


@pytest.fixture(scope="module")
def closed(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lt")
    out = loadtest(server, tmp, "closed", "evaluate", "--concurrency", "4", "--duration", "2",
                   "--save-positions", str(tmp / "positions.json"))
    out["positions_file"] = str(tmp / "positions.json")
    return out


def test_evaluate_closed_loop_on_generated_positions(closed):
    assert closed["positions"]["count"] > 0 and closed["positions"]["source"].startswith("generated from seeded")
    # Every game with an evaluator, each position a seat's real one (GetView with_position):
    # a hand the seat holds and the table, none refused by the evaluator.
    assert set(closed["positions"]["per_game"]) == {t.id for t in GAME_TYPES if t.position_type}
    assert closed["positions"]["refused_by_server"] == {}
    saved = json.loads(Path(closed["positions_file"]).read_text())
    assert len(saved) == closed["positions"]["count"]
    qwirkle = [p["position"] for p in saved if p["game_type"] == "qwirkle"]
    assert len(qwirkle) > 10
    assert all(1 <= len(p.get("handTypes", [])) <= 6 for p in qwirkle), qwirkle
    assert sum(len(p.get("board", [])) > 0 for p in qwirkle) > len(qwirkle) // 2
    assert len({json.dumps(p, sort_keys=True) for p in qwirkle}) > len(qwirkle) // 2
    ev = closed["rpcs"]["EvaluatePosition"]
    assert ev["errors"] == 0 and ev["ok"] == closed["units"]["completed"]
    # The duration alone ended the run (no request cap).
    assert 1.9 < closed["seconds"] < 10 and closed["shape"]["units"] is None
    assert "p99" in closed["stdout"] and "EvaluatePosition" in closed["stdout"]


def test_play_reports_play_move_apart_with_client_chosen_moves(server, tmp_path):
    out = loadtest(server, tmp_path, "play", "play", "--game", "qwirkle", "--moves", "client",
                   "--stages", "1:1,1:1-3")
    assert {"CreateGame", "ListLegalMoves", "PlayMove"} <= set(out["rpcs"])
    assert out["rpcs"]["PlayMove"]["errors"] == 0
    assert out["shape"]["stages"] == [{"seconds": 1, "concurrency": 1}, {"seconds": 1, "concurrency": 1, "to": 3}]
    assert 1.9 < out["seconds"] < 10


def test_watch_measures_delivery_to_spectators(server, tmp_path):
    out = loadtest(server, tmp_path, "watch", "watch", "--game", "qwirkle", "--spectators", "3",
                   "--concurrency", "2", "--duration", "2")
    plays, watched = out["rpcs"]["PlayMove"]["ok"], out["rpcs"]["WatchGame"]["ok"]
    # Every spectator sees (nearly) every move; a few may be in flight at the end.
    assert watched > plays


def test_mix_and_compare(server, tmp_path, closed):
    out = loadtest(server, tmp_path, "mix", "mix", "--game", "qwirkle", "--mix", "evaluate=3,play=1",
                   "--concurrency", "3", "--requests", "60", "--duration", "1")
    assert out["units"]["completed"] == 60  # a count, when given, ends the run
    assert {"EvaluatePosition", "SuggestMove", "PlayMove"} <= set(out["rpcs"])
    (tmp_path / "closed.json").write_text(json.dumps(closed))
    done = subprocess.run(tablier_cmd("loadtest", "compare", str(tmp_path / "closed.json"), str(tmp_path / "mix.json")),
                          capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert "EvaluatePosition" in done.stdout and "p99.9 ms" in done.stdout and "B/A" in done.stdout


def test_open_loop_above_capacity_reports_the_queueing(server, tmp_path, closed):
    service_ms = closed["rpcs"]["EvaluatePosition"]["latency_ms"]["p50"]
    capacity = closed["rpcs"]["EvaluatePosition"]["ok_per_second"]
    target = max(20 * capacity, 2000)
    out = loadtest(server, tmp_path, "open", "evaluate", "--rate", str(target), "--concurrency", "4",
                   "--duration", "2", "--positions", closed["positions_file"])
    assert out["positions"]["count"] == closed["positions"]["count"]
    assert out["shape"]["mode"] == "open" and out["target_rate"] == pytest.approx(target)
    assert out["achieved_rate"] < 0.5 * target and out["held_target_rate"] is False
    assert out["units"]["unsent"] > 0
    # Measured from the intended send time: late units waited far longer than one call takes.
    assert out["rpcs"]["EvaluatePosition"]["latency_ms"]["p99"] > 10 * service_ms
    assert any("did not hold the target rate" in n for n in out["notes"])


def test_tls_with_the_servers_certificate(e2e_database_url, tmp_path):
    cert, key, _ = self_signed(tmp_path)
    server = start_server(e2e_database_url, tmp_path, "lt-tls", "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        out = loadtest(server, tmp_path, "tls", "play", "--game", "carre", "--concurrency", "2", "--requests", "20",
                       tls=("--tls", "--ca", str(cert)))
        assert out["units"]["completed"] == 20 and out["rpcs"]["PlayMove"]["ok"] == 20
        assert out["seeded"] is True  # the operator token made the matches reproducible
    finally:
        assert server.stop() == 0
