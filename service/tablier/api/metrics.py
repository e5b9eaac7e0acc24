"""Prometheus metrics (prometheus-client), served on `tablier serve --metrics-listen HOST:PORT`
at `/metrics`. A single server keeps its own registry and reads the app's state at each
scrape. With `--workers N` the parent serves `/metrics` for all of them: each worker writes
its values into files of a directory the parent made for the run (prometheus-client's
multiprocess mode, `PROMETHEUS_MULTIPROC_DIR`), the parent adds them up at each scrape
(`MultiProcessCollector`), and the app's state is written there by each worker every
`PUBLISH_SECONDS`.

| metric | what | across workers |
|---|---|---|
| `tablier_rpc_duration_seconds{method,code}` | histogram of every call (gRPC and browser) by final status; `_count` is the per-RPC count | sum |
| `tablier_open_streams{method}` | server streams open now (WatchGame) | sum of live workers |
| `tablier_append_duration_seconds` | histogram of event-store appends (`_count`: appends) | sum |
| `tablier_database_errors_total{operation}` | store operations that failed for the database (unreachable, timed out) | sum |
| `tablier_database_up` | 1 while the database answers, 0 during an outage | lowest of live workers |
| `tablier_cache_hits_total`, `tablier_cache_misses_total` | match-state cache lookups | sum |
| `tablier_held_matches` | matches whose verified state is held in memory (at most `--held-matches`); the misses growing while it sits at its bound: raise the bound | sum of live workers |
| `tablier_reads_cached_total`, `tablier_reads_loaded_total` | reads of the present answered from the cached state without the database, and those that asked it (no feed, a later `min_seq`, a state not held) | sum |
| `tablier_held_rechecks_total` | matches answered from the held state whose last events were checked again in the database (`--recheck-every`) | sum |
| `tablier_append_feed_up` | 1 while this process hears every append (its LISTEN connection, or with `--bus` its NATS connection, and the database up, and no server of the other kind on it): reads may be answered from the cache | lowest of live workers |
| `tablier_mixed_fanout` | LISTEN connections of servers of the other kind (with `--bus` or without) on this server's database(s): above 0, neither kind hears the other's moves (a misconfiguration; reads then ask the database) | highest of live workers |
| `tablier_watchers`, `tablier_watch_feeds` | watchers and shared per-match feeds | sum of live workers |
| `tablier_timers` | core timers running | sum of live workers |
| `tablier_integrity_failures_total`, `tablier_damaged_matches` | matches whose stored log or seed failed its checks (DATA_LOSS), and how many are refused now | sum; highest of live workers |
| `tablier_pool_connections`, `tablier_pool_idle`, `tablier_pool_waiting`, `tablier_pool_max` | the PostgreSQL pool(s) | sum of live workers |
| `tablier_bus_up` | with `--bus`: 1 while connected to NATS | lowest of live workers |
| `tablier_bus_published_total`, `tablier_bus_publish_failures_total` | with `--bus`: committed appends announced, and those not (NATS away) | sum |
| `tablier_bus_received_total`, `tablier_bus_repaired_total`, `tablier_bus_subscriptions` | with `--bus`: messages heard, seqs only the safety net's read of the log found, matches subscribed | sum |
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, multiprocess, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from tablier.store.base import StoreUnavailable

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from prometheus_client.metrics_core import Metric

    from tablier.app import GameApp
    from tablier.store.base import EventStore

log = logging.getLogger(__name__)

_RPC_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_APPEND_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# How often a worker writes the app's state (watchers, timers, pool, cache counts) for the parent.
PUBLISH_SECONDS = 1.0


class Metrics:
    """`shared`: this process is one of `--workers`, writing into `$PROMETHEUS_MULTIPROC_DIR`
    for the parent to serve (it serves nothing itself)."""

    def __init__(self, shared: bool = False) -> None:
        if shared and not os.environ.get(MULTIPROC_ENV):
            raise RuntimeError(f"shared metrics need {MULTIPROC_ENV} set before prometheus-client is imported")
        self.shared = shared
        self.registry = CollectorRegistry()
        r = self.registry
        self.rpc = Histogram(
            "tablier_rpc_duration_seconds",
            "calls by method and final status",
            ["method", "code"],
            buckets=_RPC_BUCKETS,
            registry=r,
        )
        self.streams = Gauge(
            "tablier_open_streams", "server streams open now", ["method"], registry=r, multiprocess_mode="livesum"
        )
        self.append = Histogram(
            "tablier_append_duration_seconds",
            "event-store appends (one command's events)",
            buckets=_APPEND_BUCKETS,
            registry=r,
        )
        self.database_errors = Counter(
            "tablier_database_errors", "store operations failed for the database", ["operation"], registry=r
        )
        self._server: WSGIServer | None = None
        self._publisher: asyncio.Task[None] | None = None

    def watch_app(self, app: GameApp) -> None:
        """Reports the app's and its store's state: read at each scrape, or, shared, written
        every PUBLISH_SECONDS (call from the event loop)."""
        if not self.shared:
            self.registry.register(_AppCollector(app))
            return
        publisher = _AppPublisher(app, self.registry)
        publisher.publish()
        self._publisher = asyncio.get_running_loop().create_task(publisher.run())

    def serve(self, listen: str) -> str:
        """Serves /metrics on `listen` (host:port, port 0 picks one); returns host:port."""
        self._server, where = serve_registry(self.registry, listen)
        return where

    def close(self) -> None:
        if self._publisher is not None:
            self._publisher.cancel()
            self._publisher = None
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def serve_registry(registry: CollectorRegistry, listen: str) -> tuple[WSGIServer, str]:
    """An HTTP server (its own thread) of `registry` at /metrics on `listen`; (server, host:port).
    OSError when it cannot listen there."""
    host, _, port = listen.rpartition(":")
    server, _thread = start_http_server(int(port), addr=host.strip("[]") or "0.0.0.0", registry=registry)
    return server, f"{host}:{server.server_port}"


class WorkersMetrics:
    """The parent of `--workers`: serves what its workers write into `directory` (a fresh one
    per run: files of an earlier run would be added in)."""

    def __init__(self, directory: str, listen: str) -> None:
        self.directory = directory
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]  # not annotated upstream
        self._server, self.address = serve_registry(registry, listen)

    def worker_env(self) -> dict[str, str]:
        return {MULTIPROC_ENV: self.directory}

    def worker_exited(self, pid: int) -> None:
        """Its live gauges (streams, watchers, pool...) leave the sums; counters stay."""
        multiprocess.mark_process_dead(pid, self.directory)  # type: ignore[no-untyped-call]  # not annotated upstream

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


# (name, help, kind, how workers' values combine)
_APP_METRICS = {
    "tablier_cache_hits": ("match-state cache lookups that found a state", "counter", ""),
    "tablier_cache_misses": ("match-state cache lookups that found none", "counter", ""),
    "tablier_held_matches": ("matches whose verified state is held in memory", "gauge", "livesum"),
    "tablier_reads_cached": ("reads of the present answered from the cached state", "counter", ""),
    "tablier_reads_loaded": ("reads of the present that asked the database", "counter", ""),
    "tablier_held_rechecks": ("matches answered from the held state whose log was checked again", "counter", ""),
    "tablier_append_feed_up": ("1 while this process hears every append", "gauge", "livemin"),
    "tablier_mixed_fanout": ("servers of the other kind (bus or not) on this server's database", "gauge", "livemax"),
    "tablier_integrity_failures": ("matches whose stored log or seed failed its checks", "counter", ""),
    "tablier_damaged_matches": ("matches refused (DATA_LOSS) until restart", "gauge", "livemax"),
    "tablier_watchers": ("WatchGame watchers", "gauge", "livesum"),
    "tablier_watch_feeds": ("matches watched (one feed each per process)", "gauge", "livesum"),
    "tablier_timers": ("core timers running", "gauge", "livesum"),
    "tablier_database_up": ("1 while the database answers", "gauge", "livemin"),
    "tablier_shards_down": ("shards not answering (its matches UNAVAILABLE; 0 with one database)", "gauge", "livemax"),
    "tablier_pool_connections": ("connections the pool holds (busy or idle)", "gauge", "livesum"),
    "tablier_pool_idle": ("idle connections in the pool", "gauge", "livesum"),
    "tablier_pool_waiting": ("calls waiting for a connection", "gauge", "livesum"),
    "tablier_pool_max": ("the pool's maximum size", "gauge", "livesum"),
    "tablier_bus_up": ("1 while connected to the bus (NATS)", "gauge", "livemin"),
    "tablier_bus_published": ("committed appends announced on the bus", "counter", ""),
    "tablier_bus_publish_failures": ("committed appends not announced (the bus away)", "counter", ""),
    "tablier_bus_received": ("bus messages heard", "counter", ""),
    "tablier_bus_repaired": ("seqs found by re-reading the log that no bus message told", "counter", ""),
    "tablier_bus_subscriptions": ("matches subscribed on the bus", "gauge", "livesum"),
}
_POOL_KEYS = {
    "tablier_pool_connections": "pool_size",
    "tablier_pool_idle": "pool_available",
    "tablier_pool_waiting": "requests_waiting",
    "tablier_pool_max": "pool_max",
}


def _app_values(app: GameApp) -> Iterator[tuple[str, float]]:
    """The app's state as (metric name, value), names from `_APP_METRICS`."""
    cache = app.cache
    yield "tablier_cache_hits", getattr(cache, "hits", 0)
    yield "tablier_cache_misses", getattr(cache, "misses", 0)
    yield "tablier_held_matches", len(cache)
    repo = app.repository
    yield "tablier_reads_cached", repo.reads_cached
    yield "tablier_reads_loaded", repo.reads_loaded
    yield "tablier_held_rechecks", repo.rechecked
    yield "tablier_integrity_failures", getattr(app, "integrity_failures", 0)
    yield "tablier_damaged_matches", len(getattr(app, "damaged", ()))
    yield "tablier_watchers", app.feeds.watchers
    yield "tablier_watch_feeds", app.feeds.count
    yield "tablier_timers", app.scheduler.timers
    store = app.store
    yield "tablier_database_up", 1 if getattr(store, "available", True) else 0
    shards_up = getattr(store, "shards_up", None)
    yield "tablier_shards_down", 0 if shards_up is None else sum(1 for up in shards_up().values() if not up)
    feed = getattr(store, "feed", None)
    mixed = getattr(store, "mixed_fanout", 0)
    up = feed is not None and feed.up and getattr(store, "available", True) and not mixed
    yield "tablier_append_feed_up", 1 if up else 0
    yield "tablier_mixed_fanout", mixed
    stats = store.pool_stats() if hasattr(store, "pool_stats") else None
    if stats:
        for name, key in _POOL_KEYS.items():
            yield name, stats.get(key, 0)
    bus = getattr(store, "bus", None)
    if bus is not None:
        for key, value in bus.stats().items():
            yield f"tablier_bus_{key}", value


class _AppCollector:
    """One process: the app's state read at each scrape."""

    def __init__(self, app: GameApp) -> None:
        self.app = app

    def collect(self) -> Iterator[Metric]:
        for name, value in _app_values(self.app):
            doc, kind, _ = _APP_METRICS[name]
            family = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            yield family(name, doc, value=value)


class _AppPublisher:
    """A worker: the app's state written into the shared directory (gauges set, counters
    advanced by what they grew since the last time)."""

    def __init__(self, app: GameApp, registry: CollectorRegistry) -> None:
        self.app = app
        self.registry = registry
        self._metrics: dict[str, Counter | Gauge] = {}
        self._counted: dict[str, float] = {}

    def publish(self) -> None:
        for name, value in _app_values(self.app):
            metric = self._metrics.get(name)
            doc, kind, mode = _APP_METRICS[name]
            if metric is None:
                metric = self._metrics[name] = (
                    Counter(name, doc, registry=self.registry)
                    if kind == "counter"
                    else Gauge(name, doc, registry=self.registry, multiprocess_mode=cast(Any, mode))
                )
            if kind == "counter":
                grown = value - self._counted.get(name, 0)
                if grown > 0:
                    metric.inc(grown)
                    self._counted[name] = value
            else:
                cast(Gauge, metric).set(value)

    async def run(self) -> None:
        while True:
            # A period, not a condition: the values change without telling anyone.
            await asyncio.sleep(PUBLISH_SECONDS)
            try:
                self.publish()
            except Exception:  # the state of a store or cache that is closing: try again later
                log.exception("metrics not published")


class MeteredStore:
    """The event store with its appends timed and its database failures counted; everything
    else passes through unchanged."""

    _store: EventStore
    _metrics: Metrics

    def __init__(self, store: EventStore, metrics: Metrics) -> None:
        object.__setattr__(self, "_store", store)
        object.__setattr__(self, "_metrics", metrics)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(self._store, name, value)  # e.g. on_availability: the store's own

    def __getattr__(self, name: str) -> Any:  # any of the store's attributes
        attr = getattr(self._store, name)
        if not inspect.iscoroutinefunction(attr):
            if inspect.ismethod(attr):
                object.__setattr__(self, name, attr)  # looked up once (e.g. `current`, per read)
            return attr
        errors = self._metrics.database_errors.labels(name)
        timed = self._metrics.append if name == "append" else None

        @functools.wraps(attr)
        async def call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                result = await attr(*args, **kwargs)
            except StoreUnavailable:
                errors.inc()
                raise
            if timed is not None:
                timed.observe(time.perf_counter() - started)
            return result

        object.__setattr__(self, name, call)  # wrapped once
        return call
