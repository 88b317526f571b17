"""object_versions and the as-of reads (migration 0007, ``store.sql.as_of``): every version of
every object with its lifetime, layer and fate, equal to what a replay of the journal says; the
objects as of a seq equal to what ``drasnap inspect --at`` (``open_state``) holds, on SQLite and
PostgreSQL; a database written at the previous head gets them at its next writer's open."""

from __future__ import annotations

import importlib
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from alembic import command
from click.testing import CliRunner
from drasnap.store import Journal, Store, open_state, query
from drasnap.store.sql.as_of import as_of_select
from drasnap.store.sql.engines import alembic_config
from drasnap.tools.cli import cli
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from tests.conftest import Database
from tests.migrations.sql_doc import examples
from tests.snapshot.simulation.test_scenarios import write_manifests

Objects = dict[tuple[str, str], Any]

VERSION_COLUMNS = "kind, key, value, from_seq, to_seq, layer, label, depth, fate"


def _scale_down(target: str) -> str:
    """A small scale-down (some nodes removed and committed, some reverted) into ``target``."""
    args = ["simulate", "scale-down", target, "--nodes", "12", "--gpus-per-node", "2"]
    result = CliRunner().invoke(cli, [*args, "--pods-per-node", "1", "--json"])
    assert result.exit_code == 0, result.output
    run = orjson.loads(result.stdout)
    assert run["commits"] and run["reverts"]  # both kinds of branch are in the journal
    return str(run["name"])


def _state_at(target: str, name: str, seq: int) -> Objects:
    with open_state(target, name=name, at=seq) as state:
        return {(k, key): v for k in state.kinds() for key, v in state.items(k).items()}


def _rows_to_objects(rows: list[tuple[Any, ...]]) -> Objects:
    return {(kind, key): orjson.loads(value) for kind, key, value in rows}


# The documented pattern on object_versions: the versions held at S, the last written of each.
VERSIONS_AS_OF = """
SELECT kind, key, value FROM (
  SELECT kind, key, value,
    row_number() OVER (PARTITION BY kind, key ORDER BY from_seq DESC) AS n
  FROM object_versions
  WHERE store = '{name}' AND from_seq <= {seq} AND (to_seq IS NULL OR to_seq > {seq})
) AS held
WHERE n = 1 AND value IS NOT NULL
"""


def _check_random_seqs(target: str, name: str, function: bool) -> None:
    with Journal.open(target, name=name) as journal:
        last = journal.info.last_seq
    seqs = random.Random(27).sample(range(1, last + 1), min(100, last))
    every = query(
        target,
        f"SELECT kind, key, value, from_seq, to_seq FROM object_versions WHERE store = '{name}'",
    ).rows
    for i, seq in enumerate(seqs):
        expected = _state_at(target, name, seq)
        if not function or i % 10 == 0:
            got = query(
                target,
                f"SELECT kind, key, value FROM objects_as_of WHERE store = '{name}'",
                as_of=seq,
            )
            assert _rows_to_objects(got.rows) == expected, f"query --as-of {seq}"
        held = sorted(
            (v for v in every if v[3] <= seq and (v[4] is None or v[4] > seq)), key=lambda v: v[3]
        )
        last_held = {(kind, key): value for kind, key, value, _, _ in held}
        assert _rows_to_objects([(*k, v) for k, v in last_held.items() if v is not None]) == (
            expected
        ), f"object_versions at {seq}"
        if i % 10 == 0:  # the documented pattern, in SQL
            versions = query(target, VERSIONS_AS_OF.format(name=name, seq=seq))
            assert _rows_to_objects(versions.rows) == expected, f"object_versions at {seq}"
        if function:
            rows = query(target, f"SELECT kind, key, value FROM objects_as_of('{name}', {seq})")
            assert _rows_to_objects(rows.rows) == expected, f"objects_as_of('{name}', {seq})"


@pytest.mark.slow
def test_as_of_equals_inspect_at_random_seqs_sqlite(tmp_path: Path) -> None:
    target = str(tmp_path / "sd.db")
    _check_random_seqs(target, _scale_down(target), function=False)


@pytest.mark.slow
@pytest.mark.postgres
def test_as_of_equals_inspect_at_random_seqs_postgres(fresh_postgres_url: str) -> None:
    _check_random_seqs(fresh_postgres_url, _scale_down(fresh_postgres_url), function=True)


def test_the_postgresql_function_is_the_as_of_text_of_the_store() -> None:
    migration = importlib.import_module("drasnap.migrations.versions.0007_object_versions")
    for dialect in ("sqlite", "postgresql"):
        assert migration.as_of(dialect, "c", "s") == as_of_select(dialect, "c", "s")


def test_as_of_refuses_what_it_cannot_wrap(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    Store.open(db).close()
    result = CliRunner().invoke(cli, ["query", str(db), "--as-of", "3", "PRAGMA table_info(x)"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: --as-of reads objects_as_of in a SELECT or WITH statement, not in PRAGMA\n"
    )
    result = CliRunner().invoke(cli, ["query", str(db), "--as-of", "-1", "SELECT 1"])
    assert result.exit_code == 2


def test_as_of_joins_a_statement_of_its_own_with(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    with Store.open(db) as s:
        s.put("k", "a", 1)  # seq 1
        s.fork("f")
        s.put("k", "a", 2)  # seq 3
        s.revert()
    sql = "-- the value of a\nWITH a AS (SELECT value FROM objects_as_of) SELECT value FROM a"
    assert query(db, sql, as_of=3).rows == [("2",)]
    assert query(db, sql, as_of=4).rows == [("1",)]


def test_the_docs_node_at_pod_failure_example(database: Database, tmp_path: Path) -> None:
    """docs/sql.md's example on a run that leaves pending-big unplaced (tests/tools/test_explain):
    the node's allocatable as inspect --at the failure's seq shows it."""
    directory = write_manifests(tmp_path / "dump")
    run = CliRunner().invoke(
        cli, ["simulate", "scale-up", database.target, "--from", str(directory)]
    )
    assert run.exit_code == 0, run.output
    dialect = "postgresql" if database.kind == "postgres" else "sqlite"
    sql = examples(dialect)["node-at-pod-failure"].replace("group-0-00000", "gpu-a-0")
    rows = query(database.target, sql).rows
    with Journal.open(database.target, name="scale-up-1") as journal:
        failed = max(r.seq for r in journal.records() if r.kind == "PodFailure")
    node = _state_at(database.target, "scale-up-1", failed)[("Node", "gpu-a-0")]
    assert [(pod, seq, name) for pod, seq, name, *_ in rows] == [
        ("default/pending-big", failed, "gpu-a-0")
    ]
    allocatable = rows[0][-1]
    allocatable = orjson.loads(allocatable) if isinstance(allocatable, str) else allocatable
    assert allocatable == node["status"]["allocatable"]


# -- object_versions against a replay of the journal ---------------------------------------------


@dataclass
class _Version:
    kind: str
    key: str
    value: str | None
    from_seq: int
    layer: int
    label: str | None
    depth: int
    to_seq: int | None = None


@dataclass
class _Layer:
    instance: int
    label: str | None
    held: dict[tuple[str, str], _Version] = field(default_factory=dict)
    closed: str | None = None  # commit or revert
    merged_into: int | None = None


def versions_by_replay(journal: Journal) -> list[tuple[Any, ...]]:
    """Each version with its lifetime in the layer stack and its layer's fate, by replaying
    the journal: a version ends when a later write of its key reaches the layer holding it (a
    write there, or a commit from above) or when a revert drops that layer."""
    base = _Layer(0, None)
    stack, layers, versions = [base], {0: base}, []
    for rec in journal.records():
        top = stack[-1]
        if rec.op in ("put", "delete"):
            assert rec.kind is not None and rec.key is not None
            ck = (rec.kind, rec.key)
            v = _Version(*ck, rec.value_json, rec.seq, rec.layer, top.label, rec.depth)
            versions.append(v)
            if ck in top.held:
                top.held[ck].to_seq = rec.seq
            top.held[ck] = v
        elif rec.op == "fork":
            stack.append(layers.setdefault(rec.layer, _Layer(rec.layer, rec.label)))
        elif rec.op in ("commit", "revert"):
            stack.pop()
            top.closed = rec.op
            if rec.op == "revert":
                for v in top.held.values():
                    v.to_seq = rec.seq
                continue
            below = stack[-1]
            top.merged_into = below.instance
            for ck, v in top.held.items():
                if ck in below.held:
                    below.held[ck].to_seq = rec.seq
                below.held[ck] = v

    def fate(layer: _Layer) -> str:
        while layer.closed == "commit" and layer.merged_into != 0:
            assert layer.merged_into is not None
            layer = layers[layer.merged_into]
        if layer.instance == 0 or layer.closed == "commit":
            return "committed"
        return "reverted" if layer.closed == "revert" else "open"

    return sorted(
        (
            (
                v.kind,
                v.key,
                v.value,
                v.from_seq,
                v.to_seq,
                v.layer,
                v.label,
                v.depth,
                fate(layers[v.layer]),
            )
            for v in versions
        ),
        key=repr,
    )


KINDS = st.sampled_from(["a", "b"])
KEYS = st.sampled_from(["x", "y", "ns/z"])


class HistoryMachine(RuleBasedStateMachine):
    """Forks, writes, commits, reverts, checkpoints and reopens of a store, then its
    object_versions against the replay's."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.target = Path(self.tmp.name) / "h.db"
        self.store = Store.open(self.target)

    @rule(
        kind=st.sampled_from(["a", "b"]),
        key=st.sampled_from(["x", "y", "ns/z"]),
        v=st.integers(0, 3),
    )
    def put(self, kind: str, key: str, v: int) -> None:
        self.store.put(kind, key, {"v": v})

    @rule(kind=KINDS, key=KEYS)
    def delete(self, kind: str, key: str) -> None:
        self.store.delete(kind, key)

    @rule(label=st.sampled_from(["try", "estimate", None]))
    def fork(self, label: str | None) -> None:
        self.store.fork(label)

    @rule()
    def commit(self) -> None:
        self.store.commit()

    @rule()
    def revert(self) -> None:
        self.store.revert()

    @rule()
    def checkpoint(self) -> None:
        self.store.checkpoint()

    @rule()
    def reopen(self) -> None:
        self.store.close()
        self.store = Store.open(self.target)

    def teardown(self) -> None:
        self.store.close()
        try:
            with Journal.open(self.target) as journal:
                expected = versions_by_replay(journal)
            got = query(
                self.target,
                f"SELECT {VERSION_COLUMNS} FROM object_versions WHERE store = 'default'",
            )
            assert sorted(got.rows, key=repr) == sorted(expected, key=repr)
        finally:
            self.tmp.cleanup()


@pytest.mark.slow
def test_object_versions_equal_a_replay_of_random_histories() -> None:
    run_state_machine_as_test(
        HistoryMachine,
        settings=settings(
            max_examples=30,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


def test_object_versions_of_a_known_history(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with Store.open(db) as s:
        s.put("k", "a", 1)  # 1
        s.fork("kept")  # 2
        s.put("k", "a", 2)  # 3
        s.fork("dropped")  # 4
        s.delete("k", "a")  # 5
        s.revert()  # 6
        s.commit()  # 7: version 2 replaces version 1 in the base
        s.fork("open")  # 8
        s.put("k", "a", 3)  # 9
    rows = query(
        db, "SELECT value, from_seq, to_seq, label, depth, fate FROM object_versions ORDER BY 2"
    ).rows
    assert rows == [
        ("1", 1, 7, None, 0, "committed"),
        ("2", 3, None, "kept", 1, "committed"),
        (None, 5, 6, "dropped", 2, "reverted"),
        ("3", 9, None, "open", 1, "open"),
    ]


# -- the migration -------------------------------------------------------------------------------


def test_a_database_of_the_previous_head_gets_them_at_its_next_writers_open(
    database: Database,
) -> None:
    with Store.open(database.target) as s:
        s.put("k", "a", 1)
        s.fork("f")
        s.put("k", "a", 2)
    engine = create_engine(database.url, poolclass=NullPool)
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0006")
    engine.dispose()
    journal_before = database.sql("SELECT * FROM journal ORDER BY seq")
    digest_before = database.sql("SELECT state_digest FROM stores")
    with pytest.raises(Exception, match="object_versions"):
        database.sql("SELECT * FROM object_versions")
    Store.open(database.target).close()  # the next writer
    assert database.sql(
        "SELECT value, from_seq, to_seq, fate FROM object_versions ORDER BY from_seq"
    ) == [
        ("1", 1, None, "committed"),
        ("2", 3, None, "open"),
    ]
    assert database.sql("SELECT * FROM journal ORDER BY seq") == journal_before
    assert database.sql("SELECT state_digest FROM stores") == digest_before
    if database.kind == "postgres":
        assert database.sql("SELECT value FROM objects_as_of('default', 2)") == [("1",)]
