"""`tablier loadtest` against a real `tablier serve` on loopback: each scenario writes a valid
JSON report and PNG; an open loop far above what the server can answer reports the queueing
(latencies from the intended send times) and says the target rate was not held; `compare`
reads two reports. With the tokens a user has (the host's, none, the auditor's) against a
server with its real limits, play makes moves and waits as the server asks; a wrong token
stops the run early with a one-line reason."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import grpc
import pytest
from tablier.v1 import service_pb2 as pb
from tablier.v1 import service_pb2_grpc as rpc

from .conftest import GAME_TYPES, OPERATOR_TOKEN, start_server, tablier_cmd
from .test_sdk import self_signed

RUN_TIMEOUT = 120
PNG = b"\x89PNG\r\n\x1a\n"


TOKENS = ("TABLIER_HOST_TOKEN", "TABLIER_AUDITOR_TOKEN", "TABLIER_OPERATOR_TOKEN", "TABLIER_CREATOR_TOKEN")


def user_env(**tokens: str) -> dict[str, str]:
    """The environment of a user holding `tokens` (e.g. TABLIER_HOST_TOKEN=...) and no other."""
    env = {k: v for k, v in os.environ.items() if k not in TOKENS and k != "COLUMNS"}
    return {**env, **tokens}


def run_loadtest(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(tablier_cmd("loadtest", *args), capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)


def loadtest(server, tmp_path, name: str, *args: str, token: bool = True, tls: tuple[str, ...] = ("--no-tls",)) -> dict:
    """A run with the (deprecated) operator token as host and auditor: seeded matches."""
    report, png = tmp_path / f"{name}.json", tmp_path / f"{name}.png"
    done = subprocess.run(
        tablier_cmd("loadtest", *args, "--server", server.address, *tls, "--quiet",
                    "--json", str(report), "--plot", str(png),
                    *(("--token", OPERATOR_TOKEN, "--auditor-token", OPERATOR_TOKEN) if token else ())),
        capture_output=True, text=True, timeout=RUN_TIMEOUT, env={**user_env(), "COLUMNS": "200"})
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
    # Each move is counted once for each of the 3 spectators that receives it; all receive every
    # move but the few still in flight when the run stops (matches that end are watched to their end).
    assert watched <= 3 * plays
    assert watched >= 0.9 * 3 * plays, (watched, plays)


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
        assert out["seeded"] is True  # the operator token (an auditor's) made the matches reproducible
    finally:
        assert server.stop() == 0


HOST_TOKEN = "e2e-host-" + uuid.uuid4().hex
AUDITOR_TOKEN = "e2e-auditor-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def limited(e2e_database_url, tmp_path_factory):
    """A server with a host and an auditor (no operator token) and a small creation rate per
    peer (2 at once, then 4 per second), so a run without a token soon meets it."""
    server = start_server(e2e_database_url, tmp_path_factory.mktemp("limited"), "limited",
                          "--create-burst", "2", "--create-rate", "4",
                          env={"TABLIER_HOST_TOKEN": HOST_TOKEN, "TABLIER_AUDITOR_TOKEN": AUDITOR_TOKEN},
                          limits=())
    yield server
    assert server.stop() == 0


def play_as_user(server, tmp_path, name: str, *extra: str,
                 **tokens: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    report, png = tmp_path / f"{name}.json", tmp_path / f"{name}.png"
    done = run_loadtest("play", "--server", server.address, "--no-tls", "--game", "grid_knock",
                        "--concurrency", "4", "--duration", "4", "--json", str(report), "--plot", str(png), *extra,
                        env=user_env(**tokens))
    out = json.loads(report.read_text()) if report.exists() else {}
    if out:
        assert png.read_bytes().startswith(PNG)
    return done, out


@pytest.mark.parametrize("tokens", [{"TABLIER_HOST_TOKEN": HOST_TOKEN}, {}, {"TABLIER_AUDITOR_TOKEN": AUDITOR_TOKEN}],
                         ids=["host-token", "no-token", "auditor-token"])
def test_play_makes_moves_with_the_tokens_a_user_has(limited, tmp_path, tokens):
    done, out = play_as_user(limited, tmp_path, "user", **tokens)
    assert done.returncode == 0, done.stdout + done.stderr
    moves = out["rpcs"]["PlayMove"]["ok"]
    assert moves > 0 and out["rpcs"]["PlayMove"]["errors"] == 0
    # Units and failures count the same thing: the units that ended, each a move.
    units = out["units"]
    assert units["finished"] == units["completed"] + units["failed"] and units["failed"] == 0
    assert units["completed"] == moves
    assert f"{units['finished']} units in" in done.stdout and f"{units['completed']} completed, 0 failed" in done.stdout
    # Seeded only with the auditor's token.
    assert out["seeded"] is ("TABLIER_AUDITOR_TOKEN" in tokens)
    create = out["rpcs"]["CreateGame"]
    limited_creates = create["statuses"].get("RESOURCE_EXHAUSTED CREATE_RATE_LIMITED", 0)
    assert create["rate_limited"] == limited_creates and create["errors"] == 0, create
    assert out["creation"]["created"] == create["ok"] and out["creation"]["rate_limited"] == limited_creates
    assert out["per_second"]["errors"] == {}  # a refused creation is no error
    if "TABLIER_HOST_TOKEN" in tokens:
        assert limited_creates == 0 and out["creation"]["limit"] is None  # the host's token is exempt
    else:
        # 4 workers, 2 matches at once: the first refusal states the limit and creation is paced
        # by it from then on (one CreateGame at a time until then), not one refusal per worker.
        assert 1 <= limited_creates <= 2, create
        assert out["creation"]["limit"] == {"burst": 2, "per_second": 4.0}
        assert sum(map(sum, out["per_second"]["rate_limited"].values())) == limited_creates
        assert f"CreateGame refused {limited_creates} times for the server's creation limit" in done.stdout
        assert "2 matches at once, then 4 per second" in done.stdout
        assert any("host token (--token" in n for n in out["notes"]), out["notes"]
    # Printed once to the pipe, RPC names whole at the default width of a pipe.
    assert done.stdout.count("PlayMove ") == 1 and "…" not in done.stdout, done.stdout
    assert sum(out["per_second"]["ok"]["PlayMove"]) == moves


def test_a_token_the_server_refuses_stops_the_run_early_with_the_reason(limited, tmp_path):
    done, out = play_as_user(limited, tmp_path, "wrong", "--duration", "60",
                             TABLIER_AUDITOR_TOKEN="not-the-auditor-" + uuid.uuid4().hex)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("tablier loadtest: stopped after 5 refused units in a row"), done.stderr
    assert "SEED_NEEDS_OPERATOR" in lines[-1] and "--auditor-token" in lines[-1]
    assert out["seconds"] < 30 and out["units"]["completed"] == 0 and out["units"]["failed"] >= 5
    assert "PlayMove" not in out["rpcs"]
    assert out["stopped"] == lines[-1].removeprefix("tablier loadtest: ")


def test_a_server_creating_only_for_tokens_says_which_before_any_move(e2e_database_url, tmp_path):
    server = start_server(e2e_database_url, tmp_path, "lt-policy", "--create-policy", "token",
                          env={"TABLIER_HOST_TOKEN": HOST_TOKEN}, limits=())
    try:
        done, out = play_as_user(server, tmp_path, "policy", "--duration", "60")
        assert done.returncode == 2, done.stdout + done.stderr
        assert "CREATOR_TOKEN_REQUIRED" in done.stderr and "--token" in done.stderr.strip().splitlines()[-1]
        assert out["units"]["completed"] == 0 and out["seconds"] < 30
        done, out = play_as_user(server, tmp_path, "policy-host", TABLIER_HOST_TOKEN=HOST_TOKEN)
        assert done.returncode == 0 and out["rpcs"]["PlayMove"]["ok"] > 0, done.stdout + done.stderr
    finally:
        assert server.stop() == 0


def test_evaluate_without_a_token_takes_positions_from_unseeded_matches(e2e_database_url, tmp_path):
    """Its set-up creates matches too: past the creation burst it waits as the server says."""
    server = start_server(e2e_database_url, tmp_path, "lt-slow", "--create-burst", "1", "--create-rate", "0.25",
                          limits=())
    try:
        with grpc.insecure_channel(server.address) as channel:  # the burst, used up
            stub = rpc.GameServiceStub(channel)
            stub.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2), timeout=30)
            with pytest.raises(grpc.RpcError) as refused:
                stub.CreateGame(pb.CreateGameRequest(game_type="carre", seats=2), timeout=30)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        report = tmp_path / "evaluate.json"
        done = run_loadtest("evaluate", "--server", server.address, "--no-tls", "--concurrency", "2",
                            "--duration", "1", "--positions-per-game", "4", "--json", str(report), env=user_env())
        assert done.returncode == 0, done.stdout + done.stderr
    finally:
        assert server.stop() == 0
    out = json.loads(report.read_text())
    assert out["seeded"] is False and out["positions"]["source"] == "generated from bot matches"
    assert set(out["positions"]["per_game"]) == {t.id for t in GAME_TYPES if t.position_type}
    assert out["rpcs"]["EvaluatePosition"]["ok"] > 0
    assert "CREATE_RATE_LIMITED" in server.log.read_text().split("ListGameTypes", 1)[1]  # it did wait
