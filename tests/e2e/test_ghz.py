"""ghz, the usual gRPC load tool, against a real server with the descriptor set the package
ships (`tablier protoset`): plain calls, and a game message inside an `Any` given as JSON."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import tablier.cli
from tablier_client import pack
from tablier_client.v1 import qwirkle_pb2, service_pb2

from .conftest import ROOT

REQUESTS = 200


def ghz_binary() -> str:
    found = shutil.which("ghz") or (str(ROOT / ".tools/bin/ghz") if (ROOT / ".tools/bin/ghz").is_file() else None)
    if found:
        return found
    if shutil.which("go") is None:
        pytest.skip("ghz is not installed and there is no Go toolchain to build it (`make tools`)")
    pytest.fail("ghz is not installed: `make tools` builds it (make test does)")


def ghz(server, call: str, *args: str, requests: int = REQUESTS) -> dict:
    done = subprocess.run(
        [ghz_binary(), "--insecure", "--protoset", str(tablier.cli.PROTOSET), "--call", call, *args,
         "-n", str(requests), "-c", "8", "--timeout", "20s", "--format", "json", server.address],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_ghz_runs_with_the_shipped_protoset(server):
    report = ghz(server, "tablier.v1.GameService.ListGameTypes", "-d", "{}")
    assert report["count"] == REQUESTS
    assert report["statusCodeDistribution"] == {"OK": REQUESTS}, report.get("errorDistribution")
    assert report["rps"] > 0 and report["latencyDistribution"]


def evaluate_request(hand: list[int]) -> bytes:
    # A red circle on the board and `hand` (tile types).
    position = qwirkle_pb2.Position(board=[qwirkle_pb2.BoardTile(x=0, y=0, tile_type=0)], hand_types=hand)
    return service_pb2.EvaluatePositionRequest(game_type="qwirkle", position=pack(position)).SerializeToString()


def test_ghz_load_tests_the_evaluator_with_a_request_made_by_the_sdk(server, tmp_path):
    """ghz resolves an `Any` in JSON only among the called file's imports, which no game's
    file is: the request is given as protobuf bytes, made with the SDK."""
    good, bad = tmp_path / "good.bin", tmp_path / "bad.bin"
    good.write_bytes(evaluate_request([1, 2, 6]))  # red criss-cross, red diamond, orange circle
    bad.write_bytes(evaluate_request([99]))  # no such tile type
    report = ghz(server, "tablier.v1.GameService.EvaluatePosition", "--binary-file", str(good))
    assert report["statusCodeDistribution"] == {"OK": REQUESTS}, report.get("errorDistribution")
    refused = ghz(server, "tablier.v1.GameService.EvaluatePosition", "--binary-file", str(bad), requests=5)
    assert refused["statusCodeDistribution"] == {"InvalidArgument": 5}
