"""The SQL views (the store's from migrations 0002 and 0004, and the snapshot's registered
allocation_events) answer docs/sql.md's examples, agree with the Python journal and allocation
history, print times as drasnap history does, and come and go with upgrade and downgrade; the
layer index is what the queries use."""

from __future__ import annotations

import importlib
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from alembic import command
from click.testing import CliRunner
from drasnap.snapshot.history.allocations import allocation_history
from drasnap.store import Store, iso_utc_sql
from drasnap.store.journal.reader import _ALL_STRUCTURE, _CLOSE_ROWS, _LAYER_ROWS, Journal
from drasnap.store.queries.readonly import query
from drasnap.store.sql.engines import alembic_config
from drasnap.tools.cli import cli
from drasnap.tools.output import iso
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, text
from sqlalchemy.dialects import sqlite

from tests.conftest import Database
from tests.migrations.sql_doc import documented_results, examples, result_of
from tests.store.journal_session import Session, claim, record_session

VIEWS = {"current_objects", "layer_history", "allocation_events"}


# Queries of the kinds docs/sql.md shows, with their exact answers on the small session of
# tests/store/journal_session.py (whose every layer fate and allocation is known by hand).
SESSION_QUERIES: dict[str, str] = {
    "reverted-allocations": """
        SELECT seq, label, driver || '/' || pool || '/' || device AS device, node
        FROM allocation_events
        WHERE store = 'default' AND claim = 'ml/train-0' AND event = 'allocate'
          AND fate = 'reverted'
        ORDER BY seq""",
    "device-holders": """
        SELECT seq, event, claim, label, fate FROM allocation_events
        WHERE store = 'default'
          AND driver = 'gpu.example.com' AND pool = 'node-a' AND device = 'gpu-0'
        ORDER BY seq, event DESC""",
    "fates-by-label": """
        SELECT label, fate, count(*) AS layers FROM layer_history
        WHERE store = 'default' AND layer <> 0 GROUP BY label, fate ORDER BY label, fate""",
    "committed-devices-per-node": """
        SELECT node, count(*) AS devices FROM allocation_events
        WHERE store = 'default' AND event = 'allocate' AND fate = 'committed'
        GROUP BY node ORDER BY node""",
    "reverted-layers": """
        SELECT layer, label, depth, opened_seq, closed_seq, closed_seq - opened_seq AS records
        FROM layer_history WHERE store = 'default' AND fate = 'reverted' ORDER BY opened_seq""",
    "current-claims": """
        SELECT key AS claim, json_extract(value,
          '$.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]')
        FROM current_objects WHERE store = 'default' AND kind = 'ResourceClaim' ORDER BY key""",
    "writes-between": """
        SELECT kind, key, count(*) AS writes FROM journal
        WHERE store_id = (SELECT id FROM stores WHERE name = 'default')
          AND seq BETWEEN 7 AND 15 AND op IN ('put', 'delete')
        GROUP BY kind, key ORDER BY kind, key""",
}
PG_SESSION_QUERIES = {
    "current-claims": """
        SELECT key AS claim, value::jsonb #>>
          '{status,allocation,nodeSelector,nodeSelectorTerms,0,matchFields,0,values,0}'
        FROM current_objects WHERE store = 'default' AND kind = 'ResourceClaim' ORDER BY key""",
}


# The answers on tests/store/journal_session.py's session.
ANSWERS: dict[str, list[tuple[Any, ...]]] = {
    "reverted-allocations": [(18, "inner", "gpu.example.com/node-b/gpu-0", "node-b")],
    "device-holders": [
        (8, "allocate", "ml/train-0", "scale-up ng-a", "committed"),
        (18, "deallocate", "ml/train-0", "inner", "reverted"),
        (22, "deallocate", "ml/train-0", "scale-down", "committed"),
    ],
    "fates-by-label": [
        ("inner", "reverted", 1),
        ("outer", "reverted", 1),
        ("pending", "open", 1),
        ("scale-down", "committed", 1),
        ("scale-up ng-a", "committed", 1),
        ("try node-b", "reverted", 1),
    ],
    "committed-devices-per-node": [("node-a", 3)],
    "reverted-layers": [
        (2, "try node-b", 2, 10, 12, 2),
        (3, "outer", 1, 16, 20, 4),
        (4, "inner", 2, 17, 19, 2),
    ],
    "current-claims": [
        ("ml/done-0", "node-a"),
        ("ml/train-0", None),
        ("ml/train-1", "node-a"),
        ("ml/train-2", "node-b"),
    ],
    "writes-between": [
        ("Pod", "ml/train-0", 1),
        ("ResourceClaim", "ml/train-0", 1),
        ("ResourceClaim", "ml/train-1", 2),
    ],
}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return record_session(tmp_path_factory.mktemp("views") / "session.db")


def sqlite_objects(path: Path, kind: str) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = ?", (kind,)).fetchall()
    return {r[0] for r in rows}


def test_every_session_query_has_its_answer() -> None:
    assert set(SESSION_QUERIES) == set(ANSWERS)


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_the_views_answer_exactly_on_a_known_session(session: Session, name: str) -> None:
    result = query(session.path, SESSION_QUERIES[name])
    assert result.rows == ANSWERS[name]


@pytest.fixture(scope="module")
def quick_start_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's quick start (run ``scale-up-1``) without timed checkpoints: each one is a
    journal entry, so how many fall in the run (and so the seqs after them) depends on the
    machine's speed; the doc says so."""
    db = tmp_path_factory.mktemp("quick") / "drasnap-sim.db"
    result = CliRunner().invoke(
        cli, ["simulate", "scale-up", str(db), "--checkpoint-every", "86400"]
    )
    assert result.exit_code == 0, result.output
    return db


def test_docs_sql_md_has_examples_each_with_its_result() -> None:
    assert len(examples()) >= 8
    assert set(documented_results()) == set(examples())


@pytest.mark.parametrize("name", sorted(examples()))
def test_docs_examples_return_what_the_doc_shows_on_the_quick_start_run(
    quick_start_run: Path, name: str
) -> None:
    shown = documented_results()[name]
    assert result_of(quick_start_run, examples()[name]) == shown, (
        f"docs/sql.md example {name}: rewrite with python -m tests.migrations.sql_doc DB"
    )


def test_the_views_work_in_the_sqlite3_module_alone(session: Session) -> None:
    # What the sqlite3 shell and Datasette do: plain SQLite, no function of ours registered.
    with sqlite3.connect(f"file:{session.path}?mode=ro", uri=True) as conn:
        for view in VIEWS:
            assert conn.execute(f"SELECT count(*) FROM {view}").fetchone()[0] > 0


def test_allocation_events_agree_with_history(session: Session) -> None:
    for name in ("default", "other"):
        assert view_events(session.path, name) == python_events(session.path, name)


def test_layer_history_agrees_with_the_journal(session: Session) -> None:
    rows = query(
        session.path,
        "SELECT layer, label, depth, parent, opened_seq, closed_seq, closed_by, fate, "
        "dropped_seq FROM layer_history WHERE store = 'default' AND layer <> 0 ORDER BY layer",
    ).rows
    with Journal.open(session.path) as journal:
        layers = journal.layers()
    assert rows == [
        (
            ly.layer,
            ly.label,
            ly.depth,
            ly.parent,
            ly.opened_seq,
            ly.closed_seq,
            ly.closed_by,
            ly.fate,
            ly.dropped_seq,
        )
        for ly in sorted(layers.values(), key=lambda ly: ly.layer)
    ]
    base = query(session.path, "SELECT fate FROM layer_history WHERE layer = 0").rows
    assert base == [("committed",), ("committed",)]  # one per store


def test_current_objects_is_the_stored_state(session: Session) -> None:
    rows = query(
        session.path,
        "SELECT kind, key, value FROM current_objects WHERE store = 'default'",
    ).rows
    with Store.open(session.path, readonly=True) as store:
        expected = {(k, y): v for k in store.kinds() for y, v in store.items(k).items()}
    assert {(k, y): orjson.loads(v) for k, y, v in rows} == expected


def view_events(path: Path | str, store: str) -> list[tuple[Any, ...]]:
    rows = query(
        path,
        "SELECT seq, event, claim, layer, label, depth, fate, node, request, driver, pool, "
        f"device FROM allocation_events WHERE store = '{store}'",
    ).rows
    return sorted(rows)


def python_events(path: Path | str, store: str) -> list[tuple[Any, ...]]:
    with Journal.open(path, name=store) as journal:
        events = allocation_history(journal)
    return sorted(
        (
            e.seq,
            e.event,
            e.claim,
            e.layer,
            e.label,
            e.depth,
            e.fate,
            e.node,
            d.request,
            d.driver,
            d.pool,
            d.device,
        )
        for e in events
        for d in e.devices
    )


DEVICES = [("node-a", "gpu-0"), ("node-a", "gpu-1"), ("node-b", "gpu-0")]
STEP = st.one_of(
    st.tuples(st.just("allocate"), st.sampled_from("xy"), st.sampled_from(range(len(DEVICES)))),
    st.tuples(st.just("release"), st.sampled_from("xy")),
    st.tuples(st.just("delete"), st.sampled_from("xy")),
    st.tuples(st.sampled_from(["fork", "commit", "revert", "checkpoint"])),
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(STEP, max_size=25))
def test_views_and_history_agree_on_any_run(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[Any, ...]]
) -> None:
    path = tmp_path_factory.mktemp("run") / "run.db"
    with Store.open(path, auto_checkpoint=False) as store:
        for step in steps:
            if step[0] == "allocate":
                pool, device = DEVICES[step[2]]
                value = claim("ns", step[1], [(pool, device)], node=pool)
                store.put("ResourceClaim", f"ns/{step[1]}", value)
            elif step[0] == "release":
                store.put("ResourceClaim", f"ns/{step[1]}", claim("ns", step[1]))
            elif step[0] == "delete":
                store.delete("ResourceClaim", f"ns/{step[1]}")
            elif step[0] == "checkpoint":
                store.checkpoint()
            else:
                getattr(store, step[0])(*([f"L{len(steps)}"] if step[0] == "fork" else []))
    assert view_events(path, "default") == python_events(path, "default")


# -- the migration ------------------------------------------------------------------------------


def test_downgrade_drops_the_views_and_the_index_and_upgrade_brings_them_back(
    db_path: Path,
) -> None:
    Store.open(db_path).close()
    assert sqlite_objects(db_path, "view") >= VIEWS
    assert "ix_journal_store_id_layer" in sqlite_objects(db_path, "index")
    engine = create_engine(f"sqlite:///{db_path}")
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0001")
    assert not VIEWS & sqlite_objects(db_path, "view")
    assert "ix_journal_store_id_layer" not in sqlite_objects(db_path, "index")
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    engine.dispose()
    assert sqlite_objects(db_path, "view") >= VIEWS


def plan(path: Path | str, sql: str) -> str:
    with sqlite3.connect(path) as conn:
        return "\n".join(r[-1] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))


def test_layer_lookups_read_the_covering_index_alone(session: Session) -> None:
    # What makes `drasnap history --claim/--device` fast on a long journal: each step of a
    # commit chain is one index lookup.
    for statement in (_LAYER_ROWS, _CLOSE_ROWS, _ALL_STRUCTURE):
        bound = statement.params(s=1, ls=[1, 2])
        sql = str(bound.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True}))
        assert "COVERING INDEX ix_journal_store_id_layer" in plan(session.path, sql), sql
    claim_plan = plan(
        session.path, "SELECT * FROM allocation_events WHERE store = 'default' AND claim = 'x/y'"
    )
    assert "ix_journal_store_id_kind_key (store_id=? AND kind=? AND key=?)" in claim_plan


# -- PostgreSQL ---------------------------------------------------------------------------------


@pytest.mark.postgres
def test_postgres_views_answer_the_examples_and_agree_with_history(
    database: Database,
) -> None:
    if database.kind != "postgres":
        pytest.skip("the PostgreSQL variant of the views")
    record_session(database.target)
    for name, sql in (SESSION_QUERIES | PG_SESSION_QUERIES).items():
        rows = [tuple(r) for r in database.sql(sql)]
        assert rows == ANSWERS[name], name
    assert view_events(database.url, "default") == python_events(database.url, "default")
    engine = create_engine(database.url)
    with engine.begin() as conn:
        assert conn.execute(text("SELECT count(*) FROM layer_history")).scalar() == 8
    engine.dispose()
    run = CliRunner().invoke(
        cli, ["simulate", "scale-up", database.url, "--pods", "16", "--name", "scale-up-1"]
    )
    assert run.exit_code == 0, run.output
    shown = documented_results()
    for name, sql in examples("postgresql").items():
        if len(shown[name].splitlines()) <= 2:
            continue  # no row on the quick start either (a header and its rule)
        assert database.sql(sql), f"docs/sql.md example {name} returned no rows on PostgreSQL"


# -- readable times (migration 0004, and the registered allocation_events) ----------------------


def test_times_in_the_views_read_as_history_prints_them(session: Session) -> None:
    layers = query(
        session.path,
        "SELECT opened_at, opened_at_epoch, closed_at, closed_at_epoch FROM layer_history",
    ).rows
    assert len(layers) == 8
    for opened, opened_epoch, closed, closed_epoch in layers:
        assert opened == iso(opened_epoch)
        assert (closed, closed_epoch) == (None, None) or closed == iso(closed_epoch)
    events = query(session.path, "SELECT time, time_epoch FROM allocation_events").rows
    assert events and all(text == iso(epoch) for text, epoch in events)
    with Journal.open(session.path) as journal:
        first = min(journal.layers().values(), key=lambda ly: ly.layer)
    assert layers_of(session, first.layer) == (iso(first.opened_at), first.opened_at)


def layers_of(session: Session, layer: int) -> tuple[Any, ...]:
    rows = query(
        session.path,
        f"SELECT opened_at, opened_at_epoch FROM layer_history WHERE store = 'default' "
        f"AND layer = {layer}",
    ).rows
    return tuple(rows[0])


EDGES = [0.0, 1.0, 1733150000.0, 1733150000.0005, 1733150000.9999996, 1733150000.9994999,
         1733150059.9999999, 4102444799.999]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 4102444800, allow_nan=False), max_size=20))
def test_iso_time_sql_agrees_with_python_on_sqlite(times: list[float]) -> None:
    expression = iso_utc_sql("t", "sqlite")
    with sqlite3.connect(":memory:") as conn:
        for t in [*EDGES, *times]:
            (text_,) = conn.execute(f"SELECT {expression} FROM (SELECT ? AS t)", (t,)).fetchone()
            assert text_ == iso(t), t


@pytest.mark.postgres
def test_iso_time_sql_agrees_with_python_on_postgres(database: Database) -> None:
    if database.kind != "postgres":
        pytest.skip("the PostgreSQL variant")
    expression = iso_utc_sql("t", "postgresql")
    values = ", ".join(f"({t!r}::double precision)" for t in EDGES)
    rows = database.sql(f"SELECT t, {expression} FROM (VALUES {values}) AS v (t)")
    assert [(t, text_) for t, text_ in rows] == [(t, iso(t)) for t in EDGES]


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_the_migration_formats_times_as_the_registered_views_do(dialect: str) -> None:
    migration = importlib.import_module("drasnap.migrations.versions.0004_registered_views")
    assert migration.iso_utc("x.ts", dialect) == iso_utc_sql("x.ts", dialect)


def test_an_old_database_gets_the_registered_allocation_events(db_path: Path) -> None:
    """A database of schema 0003 (allocation_events from migration 0002) is upgraded: the view
    is then the snapshot's, with readable times."""
    record_session(db_path)
    engine = create_engine(f"sqlite:///{db_path}")
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0003")
    engine.dispose()
    old = sqlite_columns(db_path, "allocation_events")
    assert "time_epoch" not in old
    Store.open(db_path).close()
    assert sqlite_columns(db_path, "allocation_events")[:3] == ["seq", "time", "time_epoch"]
    assert view_events(db_path, "default") == python_events(db_path, "default")


def sqlite_columns(path: Path, view: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({view})")]
