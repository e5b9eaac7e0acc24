"""The event store: the port (`base.EventStore`: the event log, the match directory and seat
claims, the clock index) and the stores behind it, opened by URL (`open_store`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tablier.seeds import SeedKeys

    from .base import EventStore

# The URL of a store kept in this process's memory (nothing survives it: tests and trials).
MEMORY_URL = "memory:"


async def open_store(
    url: str,
    *,
    seed_keys: SeedKeys | None = None,
    timeout: float | None = None,
    monitor: bool = True,
    bus: str | None = None,
) -> EventStore:
    """The event store at `url`, ready (migrations applied): `memory:` one in this process's
    memory; anything else a PostgreSQL URL or key=value conninfo (`postgres.open_store`: seeds
    sealed with `seed_keys`, every operation bounded by `timeout` seconds, the availability
    monitor started when `monitor`, appends announced over the NATS server `bus`), or several
    (one a line, or comma-separated URLs), the first the directory (`shard_open`, `sharded`,
    `shard_map`). Close it with `await store.close()`."""
    if url == MEMORY_URL:
        from .memory import MemoryStore

        return MemoryStore()
    from . import postgres, shard_map, shard_open

    return await shard_open.open_sharded(
        shard_map.parse_urls(url),
        seed_keys=seed_keys,
        timeout=postgres.OPERATION_TIMEOUT if timeout is None else timeout,
        monitor=monitor,
        bus=bus,
    )
