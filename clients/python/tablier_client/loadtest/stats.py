"""What a load test measured: one HDR histogram of latencies per RPC, counts per status and
reason, calls and errors per second of the run, and the samples the plot draws (latency over
time)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]

# Microseconds, 1 us .. 1 hour, 3 significant digits.
LOWEST, HIGHEST, DIGITS = 1, 3_600_000_000, 3
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99.9": 99.9}
MAX_SAMPLES = 100_000


def limited(status: str) -> bool:
    """A refusal for the server's creation limit: the run paces its creations by it and sends
    them again, so it is no failure of the load test (counted apart)."""
    return status.endswith(" CREATE_RATE_LIMITED")


def histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST, HIGHEST, DIGITS)


def summary_ms(h: HdrHistogram) -> dict[str, float]:
    out = {name: h.get_value_at_percentile(p) / 1000 for name, p in PERCENTILES.items()}
    out["max"] = h.get_max_value() / 1000
    out["min"] = h.get_min_value() / 1000 if h.get_total_count() else 0.0
    out["mean"] = h.get_mean_value() / 1000
    return out


@dataclass
class RpcStats:
    ok: HdrHistogram = field(default_factory=histogram)
    statuses: Counter[str] = field(default_factory=Counter)


class Recorder:
    """Latencies are recorded from when a call was meant to start (the intended send time in
    an open loop, so queueing behind a slow server is counted) to when its answer arrived."""

    def __init__(self, start: float, seed: int = 0) -> None:
        self.start = start
        self.rpcs: dict[str, RpcStats] = {}
        # (seconds since start, rpc, latency in ms, ok)
        self.samples: list[tuple[float, str, float, bool]] = []
        self._seen = 0
        self._random = random.Random(seed)
        # Per whole second since the start: answered calls per RPC, and errors per status.
        self.ok_per_second: dict[str, Counter[int]] = {}
        self.errors_per_second: dict[str, Counter[int]] = {}
        # Calls refused for the creation limit (`limited`): counted apart from the errors.
        self.limited_per_second: dict[str, Counter[int]] = {}
        # Seconds spent waiting as the server asked (RESOURCE_EXHAUSTED), per status.
        self.backoff: dict[str, float] = {}

    def record(self, rpc: str, started: float, ended: float, status: str = "OK") -> None:
        stats = self.rpcs.get(rpc)
        if stats is None:
            stats = self.rpcs[rpc] = RpcStats()
        stats.statuses[status] += 1
        seconds = max(ended - started, 0.0)
        ok = status == "OK"
        if ok:
            stats.ok.record_value(min(max(int(seconds * 1e6), LOWEST), HIGHEST))
        second = int(max(ended - self.start, 0.0))
        if ok:
            self.ok_per_second.setdefault(rpc, Counter())[second] += 1
        elif limited(status):
            self.limited_per_second.setdefault(status, Counter())[second] += 1
        else:
            self.errors_per_second.setdefault(status, Counter())[second] += 1
        sample = (ended - self.start, rpc, seconds * 1000, ok)
        # Reservoir sampling keeps the plot's cost bounded on long runs.
        self._seen += 1
        if len(self.samples) < MAX_SAMPLES:
            self.samples.append(sample)
        else:
            j = self._random.randrange(self._seen)
            if j < MAX_SAMPLES:
                self.samples[j] = sample

    def total(self, status: str | None = None) -> int:
        return sum(n for s in self.rpcs.values() for k, n in s.statuses.items() if status is None or k == status)
