"""The `backend` fixture: each store contract test runs once per store implementation.

`backend.open()` is an async context manager giving a store handle. For PostgreSQL every call
opens a new `PostgresStore` (its own pool and LISTEN connection) on the test's fresh database,
as a second service process would; for "sharded" a new `ShardedStore` over two fresh databases
(the first the directory); for memory every call gives the same `MemoryStore`, the only way two
handles can share a memory log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from tablier.store.base import EventStore
from tablier.store.memory import MemoryStore
from tablier.store import open_store


class Backend:
    def __init__(self, kind: str, dsn: str | None) -> None:
        self.kind = kind
        self.dsn = dsn
        self._memory: MemoryStore | None = None

    @asynccontextmanager
    async def open(self) -> AsyncIterator[EventStore]:
        if self.dsn is None:
            if self._memory is None:
                self._memory = MemoryStore()
            yield self._memory
            return
        store = await open_store(self.dsn)
        try:
            yield store
        finally:
            await store.close()


@pytest.fixture(params=["memory", "postgres", "sharded"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "memory":
        return Backend("memory", None)
    if request.param == "sharded":
        urls = request.getfixturevalue("fresh_database_url"), request.getfixturevalue("second_database_url")
        return Backend("sharded", "\n".join(urls))
    return Backend("postgres", request.getfixturevalue("fresh_database_url"))
