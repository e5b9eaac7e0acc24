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


def _bench_scale(tmp_path: Path, out: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """One short round of `tablier bench-scale` (4 moves in flight for 0.5 s) with `options`."""
    return subprocess.run(
        tablier_cmd(
            "bench-scale",
            "--rounds",
            "1",
            "--seconds",
            "0.5",
            "--concurrency",
            "4",
            "--expect",
            "300",
            "--log-dir",
            str(tmp_path),
            "--json",
            str(out),
            *options,
        ),
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_bench_scale_measures_each_server_count_against_one(fresh_database_url, tmp_path):
    if not (shutil.which("haproxy") or Path("/usr/sbin/haproxy").exists()):
        if os.environ.get("CI"):
            pytest.fail("no haproxy (.ci/run installs Debian's)")
        pytest.skip("no haproxy (apt-get install haproxy; .ci/run installs it)")
    out = tmp_path / "scale.json"
    done = _bench_scale(tmp_path, out, "--servers", "1,2", "--via", "haproxy", "--database-url", fresh_database_url)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    assert report["via"] == "haproxy"
    one, two = report["results"]
    assert (one["shards"], one["servers"], two["shards"], two["servers"]) == (1, 1, 1, 2)
    for figures in (one, two):
        assert figures["errors"] == [0] and figures["dry"] == [0], figures
        assert figures["rates"][0] > 0 and figures["server_cpu"][0] > 0 and figures["proxy_cpu"][0] > 0
        assert figures["db_cpu"][0] > 0  # the database runs on this machine
    assert one["ratios"] == [1.0] and two["ratios"][0] == pytest.approx(two["rates"][0] / one["rates"][0])
    assert "durable moves/s" in done.stdout and "x 1/1" in done.stdout


def test_bench_scale_measures_two_shards_against_one(tmp_path):
    """`--shards 1,2`: temporary embedded databases for each count, two servers on each; the
    two-shard servers append to both databases, every move succeeds."""
    out = tmp_path / "shards.json"
    done = _bench_scale(tmp_path, out, "--servers", "2", "--shards", "1,2")
    assert done.returncode == 0, done.stdout + done.stderr
    one, two = json.loads(out.read_text())["results"]
    assert (one["shards"], one["servers"], two["shards"], two["servers"]) == (1, 2, 2, 2)
    for figures in (one, two):
        assert figures["errors"] == [0] and figures["dry"] == [0], figures
        assert figures["rates"][0] > 0 and figures["db_cpu"][0] > 0 and figures["grouped"][0] >= 1
    assert two["ratios"][0] == pytest.approx(two["rates"][0] / one["rates"][0])
    # The two-shard servers placed matches on both databases, and every move was appended.
    assert len(one["appends"][0]) == 1 and len(two["appends"][0]) == 2
    assert all(n > 0 for n in two["appends"][0]), two["appends"]
