"""Prometheus metrics (prometheus-client), served on `tablier serve --metrics-listen HOST:PORT`
at `/metrics`. Each server keeps its own registry.

| metric | what |
|---|---|
| `tablier_rpc_duration_seconds{method,code}` | histogram of every call by final status; `_count` is the per-RPC count |
| `tablier_open_streams{method}` | server streams open now (WatchGame) |
| `tablier_append_duration_seconds` | histogram of event-store appends (`_count`: appends) |
| `tablier_database_errors_total{operation}` | store operations that failed for the database (unreachable, timed out) |
| `tablier_database_up` | 1 while the database answers, 0 during an outage |
| `tablier_cache_hits_total`, `tablier_cache_misses_total` | match-state cache lookups |
| `tablier_watchers`, `tablier_watch_feeds` | watchers and shared per-match feeds in this process |
| `tablier_timers` | core timers running in this process |
| `tablier_integrity_failures_total`, `tablier_damaged_matches` | matches whose stored log or seed failed its checks (DATA_LOSS), and how many this process refuses now |
| `tablier_pool_connections`, `tablier_pool_idle`, `tablier_pool_waiting`, `tablier_pool_max` | the PostgreSQL pool |
"""

from __future__ import annotations

import functools
import inspect
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from tablier.store.base import StoreUnavailable

_RPC_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_APPEND_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.rpc = Histogram("tablier_rpc_duration_seconds", "gRPC calls by method and final status",
                             ["method", "code"], buckets=_RPC_BUCKETS, registry=r)
        self.streams = Gauge("tablier_open_streams", "server streams open now", ["method"], registry=r)
        self.append = Histogram("tablier_append_duration_seconds", "event-store appends (one command's events)",
                                buckets=_APPEND_BUCKETS, registry=r)
        self.database_errors = Counter("tablier_database_errors", "store operations failed for the database",
                                       ["operation"], registry=r)
        self._server: Any = None

    def watch_app(self, app) -> None:
        """Reads the app's and its store's state at each scrape."""
        self.registry.register(_AppCollector(app))

    def serve(self, listen: str) -> str:
        """Serves /metrics on `listen` (host:port, port 0 picks one); returns host:port."""
        host, _, port = listen.rpartition(":")
        server, _thread = start_http_server(int(port), addr=host.strip("[]") or "0.0.0.0", registry=self.registry)
        self._server = server
        return f"{host}:{server.server_port}"

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class _AppCollector:
    def __init__(self, app) -> None:
        self.app = app

    def collect(self):
        app = self.app
        cache = app.cache
        yield CounterMetricFamily("tablier_cache_hits", "match-state cache lookups that found a state",
                                  value=getattr(cache, "hits", 0))
        yield CounterMetricFamily("tablier_cache_misses", "match-state cache lookups that found none",
                                  value=getattr(cache, "misses", 0))
        yield CounterMetricFamily("tablier_integrity_failures", "matches whose stored log or seed failed its checks",
                                  value=getattr(app, "integrity_failures", 0))
        yield GaugeMetricFamily("tablier_damaged_matches", "matches this process refuses (DATA_LOSS) until restart",
                                value=len(getattr(app, "damaged", ())))
        yield GaugeMetricFamily("tablier_watchers", "WatchGame watchers in this process", value=app.feeds.watchers)
        yield GaugeMetricFamily("tablier_watch_feeds", "matches watched in this process (one feed each)",
                                value=app.feeds.count)
        yield GaugeMetricFamily("tablier_timers", "core timers running in this process", value=len(app._timers))
        store = app.store
        available = getattr(store, "available", True)
        yield GaugeMetricFamily("tablier_database_up", "1 while the database answers", value=1 if available else 0)
        stats = store.pool_stats() if hasattr(store, "pool_stats") else None
        if stats:
            for name, key, doc in (
                ("tablier_pool_connections", "pool_size", "connections the pool holds (busy or idle)"),
                ("tablier_pool_idle", "pool_available", "idle connections in the pool"),
                ("tablier_pool_waiting", "requests_waiting", "calls waiting for a connection"),
                ("tablier_pool_max", "pool_max", "the pool's maximum size"),
            ):
                yield GaugeMetricFamily(name, doc, value=stats.get(key, 0))


class MeteredStore:
    """The event store with its appends timed and its database failures counted; everything
    else passes through unchanged."""

    def __init__(self, store, metrics: Metrics) -> None:
        object.__setattr__(self, "_store", store)
        object.__setattr__(self, "_metrics", metrics)

    def __setattr__(self, name: str, value) -> None:
        setattr(self._store, name, value)  # e.g. on_availability: the store's own

    def __getattr__(self, name: str):
        attr = getattr(self._store, name)
        if not inspect.iscoroutinefunction(attr):
            return attr
        errors = self._metrics.database_errors.labels(name)
        timed = self._metrics.append if name == "append" else None

        @functools.wraps(attr)
        async def call(*args, **kwargs):
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
