"""The report of a run: a JSON document, a PNG (latency over time with the errors; latency
by percentile; answered calls and errors per second), the progress table, and the
comparison of two reports."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from rich.table import Table

from .drive import Run
from .stats import PERCENTILES, Recorder, limited, summary_ms

FORMAT = "tablier-loadtest/1"


def rpc_table(rec: Recorder, elapsed: float, title: str = "") -> Table:
    table = Table(title=title or None)
    # The RPC's name whole, whatever the width (a narrow terminal or a pipe's 80 columns).
    table.add_column("rpc", no_wrap=True, min_width=max((len(n) for n in rec.rpcs), default=3))
    paced = any(limited(k) for s in rec.rpcs.values() for k in s.statuses)
    for column in ("ok", "errors", *(("rate-limited",) if paced else ()), "ok/s", *PERCENTILES, "max (ms)"):
        table.add_column(column, justify="right")
    for name, s in sorted(rec.rpcs.items()):
        ok = s.statuses.get("OK", 0)
        held_back = sum(n for k, n in s.statuses.items() if limited(k))
        lat = summary_ms(s.ok)
        table.add_row(
            name,
            str(ok),
            str(sum(s.statuses.values()) - ok - held_back),
            *((str(held_back),) if paced else ()),
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
        held_back = sum(n for k, n in s.statuses.items() if limited(k))
        rpcs[name] = {
            "ok": ok,
            # Refusals for the creation limit are not errors: the run paces creation by it.
            "errors": sum(s.statuses.values()) - ok - held_back,
            "rate_limited": held_back,
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
    for status, seconds in sorted(rec.backoff.items()):
        notes.append(f"{status}: waited {seconds:.1f} s in all before repeating, as the server asked")
    if run.stopped:
        notes.append(run.stopped)
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
        # finished = completed + failed: the units that ended during the run.
        "units": {
            "intended": run.intended,
            "started": run.started,
            "finished": run.finished,
            "completed": run.completed,
            "failed": run.failed,
            "unsent": run.unsent,
            "in_flight_at_end": run.cancelled,
        },
        "stopped": run.stopped or None,
        "per_second": {
            "ok": {rpc: _series(c) for rpc, c in sorted(rec.ok_per_second.items())},
            "errors": {st: _series(c) for st, c in sorted(rec.errors_per_second.items())},
            "rate_limited": {st: _series(c) for st, c in sorted(rec.limited_per_second.items())},
        },
        "target_rate": target,
        "achieved_rate": achieved,
        "held_target_rate": None if target is None else achieved >= 0.95 * target,
        "rpcs": rpcs,
        "notes": notes,
    }


def _series(counts: Counter[int]) -> list[int]:
    """Counts per second, from second 0 to the last one counted."""
    return [counts.get(i, 0) for i in range(max(counts, default=-1) + 1)]


def write_json(path: Path, report: dict[str, Any]) -> None:
    path.write_text(json.dumps(report, indent=1) + "\n")


def read_json(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text())
    if report.get("format") != FORMAT:
        raise SystemExit(f"{path} is not a tablier loadtest report")
    return report


def plot(path: Path, rec: Recorder, title: str, seconds: float) -> None:
    """Four panels: each answered call's latency over time with the errors (red crosses, at
    the latency of the refusal); latency by percentile (HDR histogram); answered calls per
    second per RPC; errors per second per status, with the share of calls that failed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(14, 9))
    (over_time, dist), (throughput, error_rate) = axes
    for name in sorted(rec.rpcs):
        points = [(t, ms) for t, rpc, ms, ok in rec.samples if rpc == name and ok]
        if points:
            over_time.scatter([p[0] for p in points], [max(p[1], 1e-3) for p in points], s=3, alpha=0.5, label=name)
        h = rec.rpcs[name].ok
        if h.get_total_count():
            ps = [0.0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999]
            xs = [1 / (1 - p / 100) for p in ps]
            dist.plot(xs, [max(h.get_value_at_percentile(p) / 1000, 1e-3) for p in ps], marker=".", label=name)
    failed = [(t, ms) for t, _, ms, ok in rec.samples if not ok]
    if failed:
        over_time.scatter(
            [p[0] for p in failed], [max(p[1], 1e-3) for p in failed], s=14, marker="x", color="red", label="errors"
        )
    over_time.set_xlabel("seconds since start")
    over_time.set_ylabel("latency (ms)")
    over_time.set_title("latency over time (errors: red crosses)")
    dist.set_xlabel("percentile")
    dist.set_ylabel("latency (ms)")
    dist.set_title("latency distribution (HDR histogram, answered calls)")
    if rec.samples:
        over_time.set_yscale("log")
    if any(s.ok.get_total_count() for s in rec.rpcs.values()):
        dist.set_xscale("log")
        dist.set_yscale("log")
        ticks = [1, 2, 10, 100, 1000, 100000]
        dist.set_xticks(ticks, ["p0", "p50", "p90", "p99", "p99.9", "p99.999"])
    else:
        dist.text(0.5, 0.5, "no call was answered", ha="center", va="center", transform=dist.transAxes)

    span = max(int(seconds) + 1, 1)
    secs = list(range(span))
    # Each second's calls as a rate, the last (partial) second's over its own length (folded
    # into the one before when it is too short to say much); a step line closed at the run's
    # end, so a run shorter than a second still draws one.
    bins = [[i] for i in secs]
    if span > 1 and seconds - secs[-1] < 0.2:
        bins[-2:] = [bins[-2] + bins[-1]]
    starts = [b[0] for b in bins]
    widths = [max(min(float(len(b)), seconds - b[0]), 1e-3) for b in bins]
    xs = [*starts, max(seconds, starts[-1] + widths[-1])]

    def rates(counts: dict[int, int]) -> list[float]:
        ys = [sum(counts.get(i, 0) for i in b) / w for b, w in zip(bins, widths, strict=True)]
        return [*ys, ys[-1]]

    # Calls made one for one (ListLegalMoves and PlayMove) draw the same line: each its own
    # dashes and width, so one drawn over another still shows.
    def styled(n: int) -> dict[str, Any]:
        return {
            "drawstyle": "steps-post",
            "linestyle": ("-", "--", "-.", ":")[n % 4],
            "linewidth": 2.5 - 0.35 * (n % 4),
        }

    for n, (name, counts) in enumerate(sorted(rec.ok_per_second.items())):
        throughput.plot(xs, rates(counts), label=name, **styled(n))
    throughput.set_xlabel("seconds since start")
    throughput.set_ylabel("answered calls per second")
    throughput.set_title("throughput")
    totals = [
        sum(c.get(i, 0) for c in rec.ok_per_second.values() for i in b)
        + sum(c.get(i, 0) for c in rec.errors_per_second.values() for i in b)
        for b in bins
    ]
    for n, (status, counts) in enumerate(sorted(rec.errors_per_second.items())):
        error_rate.plot(xs, rates(counts), label=status, **styled(n))
    error_rate.set_xlabel("seconds since start")
    error_rate.set_ylabel("errors per second")
    if rec.errors_per_second:
        share = error_rate.twinx()
        errs = [sum(c.get(i, 0) for c in rec.errors_per_second.values() for i in b) for b in bins]
        failed_share = [100 * e / t if t else 0.0 for e, t in zip(errs, totals, strict=True)]
        share.plot(
            xs,
            [*failed_share, failed_share[-1]],
            color="black",
            linestyle=":",
            drawstyle="steps-post",
            label="% of calls",
        )
        share.set_ylabel("% of calls that failed (dotted)")
        share.set_ylim(0, 105)
        error_rate.set_title("errors per second, by status")
    else:
        error_rate.set_title("errors per second: none")
    for ax in (over_time, dist, throughput, error_rate):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper left", fontsize=8)
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
