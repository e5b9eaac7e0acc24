"""`tablier bench-scale` end to end, one short round: one and two real servers on one database
behind real HAProxy (`--via haproxy`), each count measured alone; every move succeeds, each count
reports durable moves/s, its ratio to one server of the same round, server CPU per move summed
over its servers, the database's and the proxy's CPU per move. Loopback only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import tablier_cmd


def test_bench_scale_measures_each_server_count_against_one(fresh_database_url, tmp_path):
    if not (shutil.which("haproxy") or Path("/usr/sbin/haproxy").exists()):
        if os.environ.get("CI"):
            pytest.fail("no haproxy (.ci/run installs Debian's)")
        pytest.skip("no haproxy (apt-get install haproxy; .ci/run installs it)")
    out = tmp_path / "scale.json"
    done = subprocess.run(
        tablier_cmd(
            "bench-scale",
            "--servers",
            "1,2",
            "--rounds",
            "1",
            "--seconds",
            "0.5",
            "--concurrency",
            "4",
            "--expect",
            "300",
            "--via",
            "haproxy",
            "--database-url",
            fresh_database_url,
            "--log-dir",
            str(tmp_path),
            "--json",
            str(out),
        ),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    assert report["via"] == "haproxy" and report["databases"] == 1
    one, two = report["results"]["1"], report["results"]["2"]
    for figures in (one, two):
        assert figures["errors"] == [0] and figures["dry"] == [0], figures
        assert figures["rates"][0] > 0 and figures["server_cpu"][0] > 0 and figures["proxy_cpu"][0] > 0
        assert figures["db_cpu"][0] > 0  # the database runs on this machine
    assert one["ratios"] == [1.0] and two["ratios"][0] == pytest.approx(two["rates"][0] / one["rates"][0])
    assert "durable moves/s" in done.stdout and "x 1 server(s)" in done.stdout
