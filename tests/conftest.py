"""Fixtures shared by every test: a real PostgreSQL, and async tests without a plugin.

- `database_url` (session): `TABLIER_TEST_DATABASE_URL` if set (the role needs CREATEDB),
  else a fresh temporary embedded server for the test run, stopped and deleted at the end.
- `fresh_database_url` (function): a new, empty database on that server for one test (not
  migrated: `open_store` migrates it), dropped afterwards. A conninfo string psycopg accepts.
- `async def test_...` functions run in a fresh event loop (`asyncio.run`) under a deadline of
  `ASYNC_TEST_TIMEOUT` seconds; their fixtures are ordinary sync fixtures.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

ASYNC_TEST_TIMEOUT = 60.0


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(asyncio.wait_for(pyfuncitem.obj(**kwargs), ASYNC_TEST_TIMEOUT))
    return True


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    url = os.environ.get("TABLIER_TEST_DATABASE_URL")
    if url:
        yield url
        return
    from tablier import embedded

    with embedded.start(None, temporary=True) as pg:
        yield pg.dsn


@pytest.fixture
def fresh_database_url(database_url: str) -> Iterator[str]:
    yield from _fresh_database(database_url)


@pytest.fixture
def second_database_url(database_url: str) -> Iterator[str]:
    """Another fresh database, for a test that needs two (shards)."""
    yield from _fresh_database(database_url)


def _fresh_database(database_url: str) -> Iterator[str]:
    name = f"tablier_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name))
        )
    try:
        yield make_conninfo(database_url, dbname=name)
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
