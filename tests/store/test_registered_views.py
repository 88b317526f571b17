"""Views registered by the layers above the store: created by every writer, in the database
itself (plain sqlite3 sees them), replaced when their text changes, never by readers, and
brought back after migrations."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from drasnap.store import InvalidValueError, Store, View, register_view
from drasnap.store.sql import view_registry as registry
from drasnap.store.sql.engines import alembic_config
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from tests.conftest import Database

ROOT = Path(__file__).resolve().parents[2]


def counting(name: str, kind: str) -> View:
    sql = f"SELECT count(*) AS n FROM journal WHERE kind = '{kind}'"
    return View(name, sqlite=sql, postgresql=sql)


@pytest.fixture
def registered() -> Iterator[list[View]]:
    """Register test views for one test, then restore the registry as it was."""
    before = dict(registry._REGISTERED)
    added: list[View] = []
    yield added
    registry._REGISTERED.clear()
    registry._REGISTERED.update(before)


def view_names(database: Database) -> set[str]:
    if database.kind == "sqlite":
        with sqlite3.connect(database.target) as conn:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'").fetchall()
    else:
        rows = database.sql("SELECT viewname FROM pg_views WHERE schemaname = current_schema()")
    return {r[0] for r in rows}


def count(database: Database, view: str) -> int:
    return int(database.sql(f"SELECT n FROM {view}")[0][0])


def test_a_writer_creates_a_registered_view(database: Database, registered: list[View]) -> None:
    register_view(counting("pod_writes", "Pod"))
    with Store.open(database.target) as store:
        store.put("Pod", "a", 1)
    assert "pod_writes" in view_names(database)
    assert count(database, "pod_writes") == 1
    recorded = database.sql("SELECT name FROM registered_views ORDER BY name")
    assert ("pod_writes",) in recorded


def test_plain_sqlite3_reads_it(db_path: Path, registered: list[View]) -> None:
    register_view(counting("claim_writes", "ResourceClaim"))
    with Store.open(db_path) as store:
        store.put("ResourceClaim", "ns/a", {})
        store.put("ResourceClaim", "ns/a", {"x": 1})
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT n FROM claim_writes").fetchone() == (2,)


def test_a_changed_definition_replaces_the_view(database: Database, registered: list[View]) -> None:
    register_view(counting("writes_of", "Pod"))
    with Store.open(database.target) as store:
        store.put("Pod", "a", 1)
        store.put("Node", "n", 1)
    assert count(database, "writes_of") == 1
    register_view(counting("writes_of", "Node"))  # the layer above changed its mind
    Store.open(database.target).close()
    assert database.sql("SELECT count(*) FROM registered_views WHERE name = 'writes_of'")[0][0] == 1
    database.sql("INSERT INTO journal (store_id, seq, ts, op, depth, layer, kind) "
                 "VALUES (1, 100, 0, 'put', 0, 0, 'Node')")  # fmt: skip
    assert count(database, "writes_of") == 2


def test_readers_create_nothing(database: Database, registered: list[View]) -> None:
    Store.open(database.target).close()
    register_view(counting("late_view", "Pod"))
    with Store.open(database.target, readonly=True):
        pass
    assert "late_view" not in view_names(database)
    Store.open(database.target).close()
    assert "late_view" in view_names(database)


def test_a_view_nobody_registers_is_left_alone(db_path: Path, registered: list[View]) -> None:
    register_view(counting("kept_view", "Pod"))
    Store.open(db_path).close()
    registry._REGISTERED.pop("kept_view")  # another process: it never registered the view
    Store.open(db_path).close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT n FROM kept_view").fetchone() == (0,)


def test_a_process_without_the_snapshot_has_no_allocation_events(tmp_path: Path) -> None:
    """allocation_events is the snapshot's: the store's schema alone does not define it."""
    path = tmp_path / "plain.db"
    code = f"from drasnap.store import Store; Store.open({str(path)!r}).close()"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='view'")}
    assert names == registry.STORE_VIEWS

    from drasnap import snapshot  # registers allocation_events

    assert snapshot.ALLOCATION_EVENTS.name == "allocation_events"
    Store.open(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM allocation_events").fetchone() == (0,)


def test_migrations_bring_registered_views_back(database: Database, registered: list[View]) -> None:
    register_view(counting("survivor", "Pod"))
    with Store.open(database.target) as store:
        store.put("Pod", "a", 1)
    engine = create_engine(database.url, poolclass=NullPool)
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0003")
    assert "survivor" not in view_names(database)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    engine.dispose()
    assert count(database, "survivor") == 1


@pytest.mark.parametrize(
    "name",
    ["Bad-Name", "1view", "journal", "layer_history", "current_objects", "registered_views"],
)
def test_names_a_view_cannot_have(name: str) -> None:
    with pytest.raises(InvalidValueError):
        View(name, sqlite="SELECT 1", postgresql="SELECT 1")


def test_the_names_a_view_cannot_take_are_the_stores_tables() -> None:
    from drasnap.store.sql.tables import metadata

    assert set(metadata.tables) == registry.STORE_TABLES


def test_the_store_views_and_functions_are_what_the_migrations_leave(database: Database) -> None:
    """The names a registered view cannot take are exactly the views (and, on PostgreSQL, the
    functions) of a database that a process registering no view brought to head."""
    code = f"from drasnap.store import Store; Store.open({database.target!r}).close()"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    assert view_names(database) == registry.STORE_VIEWS
    if database.kind == "postgres":
        functions = database.sql(
            "SELECT p.proname FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace "
            "WHERE n.nspname = current_schema()"
        )
        assert {name for (name,) in functions} == registry.STORE_FUNCTIONS
    for name in registry.STORE_NAMES:
        with pytest.raises(InvalidValueError):
            View(name, sqlite="SELECT 1", postgresql="SELECT 1")


def test_a_process_running_simulations_holds_sweep_results(tmp_path: Path) -> None:
    """sweep_results is the simulation's: registered when it is imported (migration 0008 took
    it out of the store's schema)."""
    path = tmp_path / "sim.db"
    code = (
        "import drasnap.snapshot.simulation; from drasnap.store import Store; "
        f"Store.open({str(path)!r}).close()"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='view'")}
        recorded = {r[0] for r in conn.execute("SELECT name FROM registered_views")}
    assert "sweep_results" in names - registry.STORE_VIEWS
    assert "sweep_results" in recorded
