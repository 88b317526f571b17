"""``drasnap query``: read-only SQL, printed as a table, JSON or CSV; writes are refused."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from drasnap.store import DatabaseError, InvalidValueError, NotADatabaseError, ReadOnlyError
from drasnap.store.queries.readonly import query, statement_kind

from tests.conftest import Database
from tests.store.journal_session import Session, record_session
from tests.tools.journal_cli import run, run_json
from tests.tools.journal_cli import session as session  # the fixture

ROOT = Path(__file__).resolve().parents[2]


def digest(path: Path | str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_query_json(session: Session) -> None:
    rows = run_json(
        "query",
        session.path,
        "SELECT fate, count(*) AS n FROM layer_history "
        "WHERE store = 'default' GROUP BY fate ORDER BY fate",
    )
    assert rows == [
        {"fate": "committed", "n": 3},  # two layers and the base
        {"fate": "open", "n": 1},
        {"fate": "reverted", "n": 3},
    ]


def test_query_csv_and_table(session: Session) -> None:
    sql = "SELECT name, journal FROM stores ORDER BY id"
    csv = run("query", session.path, sql, "--csv")
    assert csv.exit_code == 0, csv.output
    assert csv.stdout == "name,journal\ndefault,1\nother,1\n"
    table = run("query", session.path, sql)
    assert table.stdout.splitlines() == [
        "name     journal",
        "-------  -------",
        "default  1",
        "other    1",
    ]
    assert table.stderr.strip() == "(2 rows)"
    limited = run_json("query", session.path, sql, "--limit", "1")
    assert limited == [{"name": "default", "journal": 1}]


READS = [
    "SELECT 1",
    "  -- a comment first\n  select count(*) from journal",
    "WITH x AS (SELECT seq FROM journal) SELECT max(seq) FROM x",
    "VALUES (1, 'a; b')",
    "EXPLAIN QUERY PLAN SELECT * FROM journal WHERE seq = 1",
    "PRAGMA table_info(journal)",
    "PRAGMA user_version",
    "SELECT * FROM pragma_table_info('stores')",
    "SELECT 1;",
]


@pytest.mark.parametrize("sql", READS, ids=range(len(READS)))
def test_reads_run(session: Session, sql: str) -> None:
    assert query(session.path, sql).columns


WRITES = [
    ("INSERT INTO stores (name) VALUES ('x')", "INSERT"),
    ("UPDATE journal SET op = 'x'", "UPDATE"),
    ("DELETE FROM journal", "DELETE"),
    ("DROP TABLE journal", "DROP"),
    ("DROP VIEW layer_history", "DROP"),
    ("ATTACH DATABASE '{tmp}/other.db' AS other", "ATTACH"),
    ("attach '{tmp}/other.db' as other", "ATTACH"),
    ("CREATE TABLE t (x)", "CREATE"),
    ("REPLACE INTO stores (name) VALUES ('x')", "REPLACE"),
    ("ALTER TABLE journal ADD COLUMN x", "ALTER"),
    ("VACUUM INTO '{tmp}/copy.db'", "VACUUM"),
    ("WITH x AS (SELECT 1) DELETE FROM journal", "DELETE"),
    ("WITH x AS (SELECT 1) INSERT INTO stores (name) SELECT 'x' FROM x", "INSERT"),
    ("EXPLAIN DELETE FROM journal", "DELETE"),
    ("PRAGMA query_only = OFF", "PRAGMA query_only = OFF"),
    ("PRAGMA journal_mode = DELETE", "PRAGMA journal_mode = DELETE"),
    ("BEGIN", "BEGIN"),
    ("/* hidden */ DELETE FROM journal", "DELETE"),
]


@pytest.mark.parametrize(("sql", "kind"), WRITES, ids=[w[1] + str(i) for i, w in enumerate(WRITES)])
def test_writes_are_refused_and_change_nothing(
    session: Session, tmp_path: Path, sql: str, kind: str
) -> None:
    before = digest(session.path)
    statement = sql.format(tmp=tmp_path)
    with pytest.raises(ReadOnlyError, match=f"read-only: {kind}.* statements are refused"):
        query(session.path, statement)
    assert digest(session.path) == before
    assert list(tmp_path.iterdir()) == []  # ATTACH and VACUUM INTO created no file


def test_a_refusal_through_the_cli(session: Session) -> None:
    result = run("query", session.path, "DELETE FROM journal")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("Error: drasnap query is read-only: DELETE statements")


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("SELECT 1; DROP TABLE journal", InvalidValueError, "one statement at a time"),
        ("SELECT 1; SELECT 2", InvalidValueError, "one statement at a time"),
        ("   ", InvalidValueError, "the query is empty"),
        ("SELEC 1", DatabaseError, 'near "SELEC": syntax error'),
        ("SELECT * FROM nowhere", DatabaseError, "no such table: nowhere"),
    ],
    ids=["write-after-read", "two-reads", "empty", "typo", "unknown-table"],
)
def test_bad_statements(session: Session, sql: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        query(session.path, sql)


def test_semicolons_inside_literals_and_comments_do_not_count() -> None:
    assert statement_kind("SELECT ';' AS a -- ; DROP\n") == "SELECT"
    assert statement_kind('SELECT "a;b" FROM t /* ; */') == "SELECT"
    assert statement_kind("select 'it''s; fine'") == "SELECT"


def test_query_on_a_missing_or_foreign_file(tmp_path: Path) -> None:
    with pytest.raises(NotADatabaseError, match="does not exist"):
        query(tmp_path / "missing.db", "SELECT 1")
    assert not (tmp_path / "missing.db").exists()
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(NotADatabaseError, match="is not a"):
        query(junk, "SELECT * FROM journal")


def test_query_json_output_is_valid_for_any_column_type(session: Session) -> None:
    rows = run_json("query", session.path, "SELECT x'00ff' AS b, 1.5 AS f, NULL AS n")
    assert rows == [{"b": "00ff", "f": 1.5, "n": None}]
    assert json.dumps(rows)


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("DELETE FROM journal", "DELETE statements are refused"),
        # (refused before it is sent on PostgreSQL too: a write after WITH is still a write)
        ("WITH x AS (SELECT 1) DELETE FROM journal", "DELETE statements are refused"),
        ("SET default_transaction_read_only = off", "SET statements are refused"),
    ],
    ids=["delete", "delete-in-with", "set"],
)
def test_each_backend_refuses_writes(database: Database, sql: str, kind: str) -> None:
    record_session(database.target)
    before = query(database.target, "SELECT count(*) FROM journal").rows
    with pytest.raises(ReadOnlyError, match=kind):
        query(database.target, sql)
    assert query(database.target, "SELECT count(*) FROM journal").rows == before
    assert query(database.target, "SELECT 'a%' || '%s' AS x").rows == [("a%%s",)]


# -- read-only by the database's own rules: the CLI ---------------------------------------------


def large_objects(database: Database) -> int:
    ((count,),) = database.sql("SELECT count(*) FROM pg_largeobject_metadata")
    return int(count)


@pytest.mark.postgres
def test_the_issues_lo_import_through_the_cli(fresh_postgres_url: str) -> None:
    database = Database("postgres", fresh_postgres_url, fresh_postgres_url)
    record_session(fresh_postgres_url)
    before = large_objects(database)
    for sql in (
        "SELECT lo_import('/etc/hostname')",
        "SELECT \"pg_catalog\" . LO_IMPORT /* a comment */ ('/etc/hostname')",
    ):
        result = run("query", fresh_postgres_url, sql)
        assert result.exit_code == 1, result.output
        assert result.stdout == ""
        assert result.stderr.strip() == (
            "Error: drasnap query is read-only: lo_import is refused "
            "(it reads or writes files of the database server's machine)"
        )
    assert large_objects(database) == before
    # reads still run, as the role pg_read_all_data, through the connection's search path
    assert run_json("query", fresh_postgres_url, "SELECT name FROM stores ORDER BY name") == [
        {"name": "default"},
        {"name": "other"},
    ]


@pytest.mark.postgres
def test_the_real_cli_refuses_file_functions_on_postgresql(postgres_url: str) -> None:
    # The issue's command, through the real entry point, on a database with no drasnap store.
    database = Database("postgres", postgres_url, postgres_url)
    before = large_objects(database)
    for sql, name in [
        ("SELECT lo_import('/etc/hostname')", "lo_import"),
        ("SELECT pg_read_file('/etc/hostname')", "pg_read_file"),
        ("SELECT set_config('default_transaction_read_only', 'off', false)", "set_config"),
    ]:
        result = subprocess.run(
            [sys.executable, "-m", "drasnap.tools", "query", postgres_url, sql],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert result.returncode == 1, result.stdout
        assert result.stdout == ""
        assert result.stderr.startswith(f"Error: drasnap query is read-only: {name} is refused (")
        assert len(result.stderr.splitlines()) == 1
    assert large_objects(database) == before


def test_sqlite_refuses_extension_loading_through_the_cli(session: Session, tmp_path: Path) -> None:
    before = digest(session.path)
    result = run("query", session.path, f"SELECT load_extension('{tmp_path}/x')")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: drasnap query is read-only: load_extension is refused "
        "(it loads a library into the database engine)"
    )
    assert digest(session.path) == before
