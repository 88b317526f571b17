"""sweep_results moved from the store's schema (migration 0006) to the simulation's registered
views (migration 0008): the same text, so the same rows; an old database gets the registered
view from its next simulation writer, and a downgrade brings 0006's back, with nothing left
recorded that would keep a writer from creating it again."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
from alembic import command
from drasnap.snapshot.simulation.sweep.views import SUMMARY_KEY, SUMMARY_KIND, SWEEP_RESULTS
from drasnap.store import Store
from drasnap.store.sql import view_registry as registry
from drasnap.store.sql.engines import alembic_config
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from tests.conftest import Database

SUMMARY = {
    "sweep": "gpu-shapes",
    "index": 3,
    "variants": {"expander": "most-pods"},
    "settings": {"expander": "most-pods"},
    "nodes_added": 2,
    "added": {"gpu": 2},
    "pods_pending": 1,
    "main_reason": "Insufficient example.com/gpu",
    "nodes_removed": 0,
    "device_utilization": 0.75,
    "cost_per_hour": 12.5,
}


@pytest.fixture
def unregistered() -> Iterator[None]:
    """As a process that never imported the simulation: sweep_results not registered."""
    before = dict(registry._REGISTERED)
    registry._REGISTERED.pop(SWEEP_RESULTS.name)
    yield
    registry._REGISTERED.clear()
    registry._REGISTERED.update(before)


def migrate(database: Database, how: str, revision: str) -> None:
    engine = create_engine(database.url, poolclass=NullPool)
    with engine.begin() as conn:
        getattr(command, how)(alembic_config(conn), revision)
    engine.dispose()


def rows(database: Database) -> list[tuple[Any, ...]]:
    return database.sql("SELECT * FROM sweep_results ORDER BY name")


def has_view(database: Database) -> bool:
    if database.kind == "sqlite":
        query = "SELECT name FROM sqlite_master WHERE type = 'view' AND name = 'sweep_results'"
    else:
        query = "SELECT viewname FROM pg_views WHERE viewname = 'sweep_results' "
        query += "AND schemaname = current_schema()"
    return bool(database.sql(query))


def recorded(database: Database) -> bool:
    return bool(database.sql("SELECT name FROM registered_views WHERE name = 'sweep_results'"))


def write_points(database: Database) -> None:
    for name, summary in (("gpu-shapes-3", SUMMARY), ("gpu-shapes-4", {**SUMMARY, "index": 4})):
        with Store.open(database.target, name=name) as store:
            store.put(SUMMARY_KIND, SUMMARY_KEY, summary)


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_the_registered_view_is_migration_0006s(dialect: str) -> None:
    migration = importlib.import_module("drasnap.migrations.versions.0006_sweep_results")
    assert SWEEP_RESULTS.select(dialect) == migration.sweep_results(dialect)


def test_the_view_leaves_the_schema_and_comes_back_registered(
    database: Database, unregistered: None
) -> None:
    """A database of schema 0007 (sweep_results from migration 0006): a writer that does not
    run simulations drops it with the upgrade; the next simulation writer creates it, with the
    same rows."""
    write_points(database)  # (without sweep_results registered: at 0008 there is none)
    assert not has_view(database)
    migrate(database, "downgrade", "0007")
    assert has_view(database) and not recorded(database)
    old = rows(database)
    assert [(r[0], r[1], r[2]) for r in old] == [
        ("gpu-shapes", 3, "gpu-shapes-3"),
        ("gpu-shapes", 4, "gpu-shapes-4"),
    ]
    Store.open(database.target).close()  # upgrades, registering nothing
    assert not has_view(database)
    registry.register_view(SWEEP_RESULTS)
    Store.open(database.target).close()
    assert has_view(database) and recorded(database)
    assert rows(database) == old


def test_a_downgrade_replaces_the_registered_copy_and_forgets_it(
    database: Database,
) -> None:
    """Downgrading by a process that registered sweep_results, then upgrading by one that did
    not: the view is gone and so is its record, so the next simulation writer creates it."""
    write_points(database)  # (sweep_results registered: this process imported the simulation)
    assert has_view(database) and recorded(database)
    expected = rows(database)
    migrate(database, "downgrade", "0007")  # (and the registered views are created again)
    assert rows(database) == expected and recorded(database)
    registry._REGISTERED.pop(SWEEP_RESULTS.name)
    try:
        Store.open(database.target).close()  # upgrades to 0008, registering nothing
        assert not has_view(database) and not recorded(database)
    finally:
        registry.register_view(SWEEP_RESULTS)
    Store.open(database.target).close()
    assert rows(database) == expected
