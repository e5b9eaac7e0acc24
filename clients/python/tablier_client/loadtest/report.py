"""The report of a run: a JSON document, a PNG (latency over time; latency by percentile),
the live progress table, and the comparison of two reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.table import Table

from .drive import Run
from .stats import PERCENTILES, Recorder, summary_ms

FORMAT = "tablier-loadtest/1"


def rpc_table(rec: Recorder, elapsed: float, title: str = "") -> Table:
    table = Table(title=title or None)
    for column in ("rpc", "ok", "errors", "ok/s", *PERCENTILES, "max (ms)"):
        table.add_column(column, justify="left" if column == "rpc" else "right")
    for name, s in sorted(rec.rpcs.items()):
        ok = s.statuses.get("OK", 0)
        lat = summary_ms(s.ok)
        table.add_row(
            name,
            str(ok),
            str(sum(s.statuses.values()) - ok),
            f"{ok / max(elapsed, 1e-9):.0f}",
            *(f"{lat[p]:.2f}" for p in PERCENTILES),
            f"{lat['max']:.2f}",
        )
    return table


def build(run: Run, rec: Recorder, meta: dict[str, Any]) -> dict[str, Any]:
    seconds = run.seconds or 1e-9
    target = None
    if run.open_loop:
        total = sum(s.seconds * (s.level if s.to is None else (s.level + s.to) / 2) for s in run.stages)
        target = total / run.duration
    achieved = run.completed / seconds
    rpcs = {}
    for name, s in sorted(rec.rpcs.items()):
        ok = s.statuses.get("OK", 0)
        rpcs[name] = {
            "ok": ok,
            "errors": sum(s.statuses.values()) - ok,
            "ok_per_second": ok / seconds,
            "latency_ms": summary_ms(s.ok),
            "statuses": dict(sorted(s.statuses.items())),
            "histogram": s.ok.encode().decode(),
        }
    notes = []
    if run.open_loop:
        notes.append(
            "open loop: each latency counts from the unit's intended start on the schedule, "
            "so time queued behind a server that falls behind is included"
        )
        if target and achieved < 0.95 * target:
            notes.append(
                f"the server did not hold the target rate: {achieved:.1f} units/s achieved of "
                f"{target:.1f} targeted; {run.unsent} units were still queued at the end "
                f"(latencies include the queueing)"
            )
    else:
        notes.append("closed loop: each worker starts its next unit when the last is answered")
    if run.cancelled:
        notes.append(f"{run.cancelled} units were in flight when the run ended (not counted)")
    return {
        "format": FORMAT,
        **meta,
        "shape": {
            "mode": "open" if run.open_loop else "closed",
            "stages": [
                {
                    "seconds": s.seconds,
                    ("rate" if run.open_loop else "concurrency"): s.level,
                    **({} if s.to is None else {"to": s.to}),
                }
                for s in run.stages
            ],
            "units": run.units,
            "max_in_flight": run.max_in_flight if run.open_loop else None,
            "mix": run.mix,
        },
        "seconds": run.seconds,
        "units": {
            "intended": run.intended,
            "started": run.started,
            "completed": run.completed,
            "failed": run.failed,
            "unsent": run.unsent,
            "in_flight_at_end": run.cancelled,
        },
        "target_rate": target,
        "achieved_rate": achieved,
        "held_target_rate": None if target is None else achieved >= 0.95 * target,
        "rpcs": rpcs,
        "notes": notes,
    }


def write_json(path: Path, report: dict[str, Any]) -> None:
    path.write_text(json.dumps(report, indent=1) + "\n")


def read_json(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text())
    if report.get("format") != FORMAT:
        raise SystemExit(f"{path} is not a tablier loadtest report")
    return report


def plot(path: Path, rec: Recorder, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (over_time, dist) = plt.subplots(1, 2, figsize=(13, 5))
    for name in sorted(rec.rpcs):
        points = sorted((t, ms) for t, rpc, ms, ok in rec.samples if rpc == name and ok)
        if points:
            over_time.scatter([p[0] for p in points], [p[1] for p in points], s=3, alpha=0.5, label=name)
        h = rec.rpcs[name].ok
        if h.get_total_count():
            ps = [0.0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999]
            xs = [1 / (1 - p / 100) for p in ps]
            dist.plot(xs, [h.get_value_at_percentile(p) / 1000 for p in ps], marker=".", label=name)
    errors = sorted(t for t, _, _, ok in rec.samples if not ok)
    if errors:
        over_time.scatter(errors, [0] * len(errors), s=8, marker="x", color="red", label="errors")
    over_time.set_xlabel("seconds since start")
    over_time.set_ylabel("latency (ms)")
    over_time.set_yscale("log")
    over_time.set_title("latency over time")
    over_time.legend(loc="upper left", fontsize=8)
    dist.set_xscale("log")
    dist.set_yscale("log")
    ticks = [1, 2, 10, 100, 1000, 100000]
    dist.set_xticks(ticks, ["p0", "p50", "p90", "p99", "p99.9", "p99.999"])
    dist.set_xlabel("percentile")
    dist.set_ylabel("latency (ms)")
    dist.set_title("latency distribution (HDR histogram)")
    dist.legend(loc="upper left", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def compare(a: dict[str, Any], b: dict[str, Any], a_name: str, b_name: str) -> Table:
    table = Table(title=f"A = {a_name}, B = {b_name} (ratio B/A)")
    for column in ("rpc", "figure", "A", "B", "B/A"):
        table.add_column(column, justify="left" if column in ("rpc", "figure") else "right")

    def row(rpc: str, figure: str, x: float | None, y: float | None) -> None:
        ratio = f"{y / x:.2f}" if x and y is not None else "-"
        table.add_row(rpc, figure, "-" if x is None else f"{x:.2f}", "-" if y is None else f"{y:.2f}", ratio)

    row("(all)", "units/s", a.get("achieved_rate"), b.get("achieved_rate"))
    for rpc in sorted(set(a["rpcs"]) | set(b["rpcs"])):
        ra, rb = a["rpcs"].get(rpc), b["rpcs"].get(rpc)
        row(rpc, "ok/s", ra and ra["ok_per_second"], rb and rb["ok_per_second"])
        row(rpc, "errors", ra and ra["errors"], rb and rb["errors"])
        for p in (*PERCENTILES, "max"):
            row(rpc, f"{p} ms", ra and ra["latency_ms"][p], rb and rb["latency_ms"][p])
    return table
