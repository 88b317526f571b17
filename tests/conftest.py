"""Shared fixtures: every store test runs against each backend.

``backend`` is a :class:`Backend` that opens a fresh store and can "reopen" it: for the
``sqlite-reopen`` and ``postgres-reopen`` variants that closes the store and opens it again, so
each test also checks that what it built survives a close and reopen; for the others it returns
the same object.

``database`` is a fresh, empty :class:`Database` (a SQLite file, or a PostgreSQL schema) with a
``sql()`` helper for looking inside; ``db_path`` is a SQLite path that does not exist yet.

PostgreSQL
----------
The ``postgres`` variants run against the server at ``DRASNAP_TEST_POSTGRES_URL`` (e.g.
``postgresql+psycopg://postgres@127.0.0.1:5432/test``; ``.ci/run`` sets it when a server answers
on 127.0.0.1:5432). Without it they are skipped, saying so. Every such test is marked
``postgres``.

Isolation on a shared database (other test runs, other people's tables):

- Nothing is created outside schemas of our own, named ``drasnap_t_<unix time>_<pid>_<random>``.
  A test reaches its schema with ``options=-csearch_path=<schema>`` in the URL's query, so the
  store (and Alembic's version table) live there, and ``DROP SCHEMA ... CASCADE`` at teardown
  removes everything. Schemas of this pattern older than a day (a run that was killed) are
  dropped when a session starts.
- ``backend`` and the state machine share one schema per test session, and every test opens a
  store of its own unique name in it (``t-<test>-<random>``): cheap, and it is how workers
  share a database in production. The schema is migrated once, by the first test.
- ``database`` (durability, errors, migrations: tests that use fixed store names, look at the
  journal, downgrade or break the schema) gets a fresh schema per test.
- The writer lock is a PostgreSQL advisory lock, which is per database but not per schema; its
  key includes the schema (``store.sql.engines``), so two runs using the same store name in two
  schemas never block each other.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import MemoryStore, Store
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import NullPool

POSTGRES_URL = os.environ.get("DRASNAP_TEST_POSTGRES_URL")
POSTGRES_SKIP = (
    "PostgreSQL: run with DRASNAP_TEST_POSTGRES_URL=postgresql+psycopg://USER@HOST:5432/DB "
    "and pip install -e '.[postgres]' (.ci/run does both when a server answers on 127.0.0.1:5432)"
)
_SCHEMA_PREFIX = "drasnap_t_"
_STALE_AFTER = 24 * 3600.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if POSTGRES_URL:
        return
    skip = pytest.mark.skip(reason=POSTGRES_SKIP)
    for item in items:
        if item.get_closest_marker("postgres"):
            item.add_marker(skip)


# -- PostgreSQL schemas -------------------------------------------------------------------------


def with_search_path(url: str, schema: str) -> str:
    """``url`` connecting with ``schema`` first on the search path (other options kept)."""
    parsed = make_url(url)
    options = parsed.query.get("options", "")
    if isinstance(options, tuple):
        options = " ".join(options)
    options = f"{options} -csearch_path={schema}".strip()
    return parsed.update_query_dict({"options": options}).render_as_string(hide_password=False)


class PostgresSchemas:
    """Creates and drops the schemas tests run in (see the module docstring)."""

    def __init__(self, url: str) -> None:
        base: URL = make_url(url)
        if "+" not in base.drivername:
            base = base.set(drivername="postgresql+psycopg")
        self.url = base.render_as_string(hide_password=False)
        self._engine = create_engine(base, poolclass=NullPool, isolation_level="AUTOCOMMIT")

    def create(self) -> tuple[str, str]:
        """A new empty schema: its name, and the URL that reaches it."""
        name = f"{_SCHEMA_PREFIX}{int(time.time())}_{os.getpid()}_{secrets.token_hex(3)}"
        with self._engine.connect() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')
        return name, with_search_path(self.url, name)

    def drop(self, name: str) -> None:
        with self._engine.connect() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')

    def drop_stale(self) -> None:
        pattern = re.compile(rf"{_SCHEMA_PREFIX}(\d+)_\d+_[0-9a-f]+")
        with self._engine.connect() as conn:
            names = conn.execute(
                text("SELECT nspname FROM pg_namespace WHERE nspname LIKE :p"),
                {"p": f"{_SCHEMA_PREFIX}%"},
            ).scalars()
            for name in list(names):
                m = pattern.fullmatch(name)
                if m and time.time() - int(m.group(1)) > _STALE_AFTER:
                    conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')

    def close(self) -> None:
        self._engine.dispose()


@pytest.fixture(scope="session")
def postgres_schemas() -> Iterator[PostgresSchemas]:
    if not POSTGRES_URL:
        pytest.skip(POSTGRES_SKIP)
    schemas = PostgresSchemas(POSTGRES_URL)
    schemas.drop_stale()
    yield schemas
    schemas.close()


@pytest.fixture(scope="session")
def postgres_url(postgres_schemas: PostgresSchemas) -> Iterator[str]:
    """The URL of this session's shared schema (open stores of unique names in it)."""
    name, url = postgres_schemas.create()
    yield url
    postgres_schemas.drop(name)


@pytest.fixture
def fresh_postgres_url(postgres_schemas: PostgresSchemas) -> Iterator[str]:
    """The URL of a new, empty schema, dropped after the test."""
    name, url = postgres_schemas.create()
    yield url
    postgres_schemas.drop(name)


def unique_store_name(request: pytest.FixtureRequest) -> str:
    """A store name no other test (or run) uses: the test's name, shortened, and a suffix."""
    test = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)[:120]
    return f"t-{test}-{secrets.token_hex(4)}"


# -- backends -----------------------------------------------------------------------------------


@dataclass
class Backend:
    name: str
    tmp: Path
    opened: list[Any]
    url: str | None = None  # PostgreSQL variants: the session's schema
    store_name: str = "default"

    @property
    def target(self) -> str | Path:
        return self.url if self.url is not None else self.tmp / "drasnap.store.db"

    def open(self, **options: Any) -> Any:
        if self.name == "memory":
            store: Any = MemoryStore()
        else:
            store = Store.open(self.target, name=self.store_name, **options)
        self.opened.append(store)
        return store

    def reopen(self, store: Any, **options: Any) -> Any:
        if not self.name.endswith("-reopen"):
            return store
        store.close()
        again = Store.open(self.target, name=self.store_name, **options)
        self.opened.append(again)
        return again


@pytest.fixture(
    params=[
        "memory",
        "sqlite",
        "sqlite-reopen",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("postgres-reopen", marks=pytest.mark.postgres),
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    b = Backend(request.param, tmp_path, [])
    if b.name.startswith("postgres"):
        b.url = request.getfixturevalue("postgres_url")
        b.store_name = unique_store_name(request)
    yield b
    for store in b.opened:
        store.close()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A path for a SQLite database file that does not exist yet."""
    return tmp_path / "drasnap.db"


@dataclass
class Database:
    """A fresh, empty database: a SQLite file, or a PostgreSQL schema of its own."""

    kind: str  # "sqlite" or "postgres"
    target: str  # for Store.open: the file path, or the URL
    url: str  # the SQLAlchemy URL

    def sql(self, query: str, **params: Any) -> list[tuple[Any, ...]]:
        """Run ``query`` (``:name`` parameters) in its own transaction; the rows, if any."""
        engine = create_engine(self.url, poolclass=NullPool)
        try:
            with engine.begin() as conn:
                result = conn.execute(text(query), params)
                return [tuple(r) for r in result] if result.returns_rows else []
        finally:
            engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Database:
    if request.param == "sqlite":
        path = tmp_path / "drasnap.db"
        return Database("sqlite", str(path), f"sqlite:///{path}")
    url = request.getfixturevalue("fresh_postgres_url")
    return Database("postgres", url, url)
