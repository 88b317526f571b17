"""``drasnap query`` changes nothing and reaches nothing outside the database: the checks made
before a statement is sent (``check``: statements, refused functions, found as the server's
lexer finds them) and the database's own rules (``run_read_only``), each shown alone, on
PostgreSQL and on SQLite."""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import DatabaseError, InvalidValueError, ReadOnlyError
from drasnap.store.queries import readonly as sq
from drasnap.store.queries.lexer import pg_tokens
from drasnap.store.queries.readonly import check, query, run_read_only
from drasnap.store.sql import engines
from sqlalchemy.engine import make_url

from tests.conftest import Database, PostgresSchemas
from tests.store.journal_session import record_session

# Nothing listens on port 1: a statement refused before it is sent gives its refusal, one that
# got through would give "cannot connect".
CLOSED = "postgresql+psycopg://nobody@127.0.0.1:1/nothing"

# -- where the calls are ------------------------------------------------------------------------

# Statements in which PostgreSQL calls pg_read_file (the server tests below show it does), each
# spelled to hide the call from a scanner that gets one of the lexer's rules wrong.
CALLS = {
    "plain": "SELECT pg_read_file('/etc/hostname')",
    "upper-case": "select PG_READ_FILE('/etc/hostname')",
    "quoted": "SELECT \"pg_read_file\"('/etc/hostname')",
    "schema-qualified": "SELECT pg_catalog.pg_read_file('/etc/hostname')",
    "spaced-and-commented": "SELECT \"pg_catalog\" . pg_read_file /* c */ (\n'/etc/hostname')",
    "comment-before-paren": "SELECT pg_read_file\n-- c\n('/etc/hostname')",
    "in-a-cte": "WITH f AS (SELECT pg_read_file('/etc/hostname')) SELECT * FROM f",
    "explain-analyze": "EXPLAIN ANALYZE SELECT pg_read_file('/etc/hostname')",
    "in-brackets": "SELECT ARRAY[pg_read_file('/etc/hostname')]",
    # E'' strings: \' is a quote inside, so the literal ends later than '' rules say
    "e-string": "SELECT E'\\'', pg_read_file('/etc/hostname') --'",
    # a string continued on the next line keeps the E rules
    "e-string-continued": "SELECT E'a'\n'\\'', pg_read_file('/etc/hostname') --'",
    # comments nest: the first */ does not end this one, so the ' is inside it
    "nested-comment": "SELECT /* /* */ ' */ pg_read_file('/etc/hostname') -- '",
    # a$$b is one name, not the start of a dollar quote
    "dollar-in-a-name": "SELECT a$$b, pg_read_file('/etc/hostname') FROM (SELECT 1 AS a$$b) t --$$",
    # a dollar quote ends at its own tag only
    "dollar-tags": "SELECT $x$ $y$ $x$, pg_read_file('/etc/hostname') --$y$",
    "u-string": "SELECT U&'\\0061''', pg_read_file('/etc/hostname')",
}
# Statements that name pg_read_file only inside literals, names and comments: no call.
NOT_CALLS = {
    "string": "SELECT 'pg_read_file(''/etc/hostname'')'",
    "dollar-quoted": "SELECT $$pg_read_file('/etc/hostname')$$",
    "tagged-dollar-quote": "SELECT $t$ $$ pg_read_file('/etc/hostname') $t$",
    "line-comment": "SELECT 1 -- pg_read_file('/etc/hostname')",
    "nested-comment": "SELECT 1 /* /* */ pg_read_file('/etc/hostname') */",
    "e-string": "SELECT E'\\' pg_read_file(''/etc/hostname'')'",
    "continued-string": "SELECT 'a'\n'pg_read_file(1)'",
    "quoted-alias": 'SELECT 1 AS "pg_read_file(x)"',
}


@pytest.mark.parametrize("sql", CALLS.values(), ids=CALLS.keys())
def test_a_call_is_found_however_it_is_spelled(sql: str) -> None:
    with pytest.raises(ReadOnlyError, match=r"read-only: pg_read_file is refused \(it reads"):
        check(sql, "postgresql")


@pytest.mark.parametrize("sql", NOT_CALLS.values(), ids=NOT_CALLS.keys())
def test_a_name_in_a_literal_or_a_comment_is_no_call(sql: str) -> None:
    assert check(sql, "postgresql") in ("SELECT", "VALUES")


# Each function that acts outside the database's tables, as the issue and the PostgreSQL
# manual's "System Administration Functions" name them.
REFUSED = {
    "pg_read_file": "SELECT pg_read_file('/etc/hostname')",
    "pg_read_binary_file": "SELECT pg_read_binary_file('/etc/hostname')",
    "pg_ls_dir": "SELECT * FROM pg_ls_dir('.')",
    "pg_ls_waldir": "SELECT * FROM pg_ls_waldir()",
    "pg_ls_logdir": "SELECT * FROM pg_ls_logdir()",
    "pg_ls_tmpdir": "SELECT * FROM pg_ls_tmpdir()",
    "pg_stat_file": "SELECT pg_stat_file('/etc/hostname')",
    "lo_import": "SELECT lo_import('/etc/hostname')",
    "lo_export": "SELECT lo_export(1, '/tmp/x')",
    "lo_create": "SELECT lo_create(0)",
    "lo_from_bytea": "SELECT lo_from_bytea(0, 'x')",
    "lo_unlink": "SELECT lo_unlink(1)",
    "lowrite": "SELECT lowrite(0, 'x')",
    "pg_terminate_backend": "SELECT pg_terminate_backend(1)",
    "pg_cancel_backend": "SELECT pg_cancel_backend(1)",
    "dblink": "SELECT * FROM dblink('dbname=x', 'SELECT 1') AS t(x int)",
    "dblink_exec": "SELECT dblink_exec('dbname=x', 'DROP TABLE journal')",
    "dblink_connect": "SELECT dblink_connect('dbname=x')",
    "pg_reload_conf": "SELECT pg_reload_conf()",
    "pg_rotate_logfile": "SELECT pg_rotate_logfile()",
    "set_config": "SELECT set_config('default_transaction_read_only', 'off', false)",
    "pg_switch_wal": "SELECT pg_switch_wal()",
    "pg_create_restore_point": "SELECT pg_create_restore_point('x')",
    "pg_create_logical_replication_slot": "SELECT pg_create_logical_replication_slot('s', 'p')",
    "pg_drop_replication_slot": "SELECT pg_drop_replication_slot('s')",
    "pg_stat_reset": "SELECT pg_stat_reset()",
    "pg_advisory_lock": "SELECT pg_advisory_lock(1)",
    "pg_try_advisory_xact_lock": "SELECT pg_try_advisory_xact_lock(1)",
    "pg_notify": "SELECT pg_notify('c', 'x')",
    "pg_promote": "SELECT pg_promote()",
    "pg_backup_start": "SELECT pg_backup_start('x')",
    "query_to_xml": "SELECT query_to_xml('SELECT pg_read_file(''/etc/hostname'')', 1, 1, '')",
    "ts_stat": "SELECT * FROM ts_stat('SELECT to_tsvector(pg_read_file(''/x''))')",
}


@pytest.mark.parametrize(("name", "sql"), REFUSED.items(), ids=REFUSED.keys())
def test_each_function_is_refused_by_name_before_anything_connects(name: str, sql: str) -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(ReadOnlyError, match=rf"^drasnap query is read-only: {name} is refused \("):
        query(CLOSED, sql)


@pytest.mark.parametrize(
    ("sql", "form"),
    [
        ("COPY (SELECT 1) TO PROGRAM 'id'", r"COPY \.\.\. TO PROGRAM statements .* run a program"),
        ("copy journal from program 'id'", r"COPY \.\.\. FROM PROGRAM statements"),
        ("COPY journal TO '/tmp/x'", r"COPY \.\.\. TO a file statements .* write a file"),
        ("COPY journal FROM '/etc/hostname'", r"COPY \.\.\. FROM a file statements .* read a"),
        ("COPY journal FROM STDIN", r"COPY \.\.\. FROM statements are refused \(use SELECT"),
    ],
    ids=["to-program", "from-program", "to-file", "from-file", "from-stdin"],
)
def test_copy_is_refused_naming_its_form(sql: str, form: str) -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(ReadOnlyError, match=f"read-only: {form}"):
        query(CLOSED, sql)


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        ("WITH d AS (DELETE FROM stores RETURNING id) SELECT * FROM d", "DELETE statements"),
        (
            "WITH i AS (INSERT INTO stores (name) VALUES ('x') RETURNING id) SELECT 1",
            "INSERT statements",
        ),
        ("WITH u AS (UPDATE stores SET name = 'x' RETURNING id) SELECT 1", "UPDATE statements"),
        ("SELECT * FROM stores FOR UPDATE", r"SELECT \.\.\. FOR UPDATE/SHARE"),
        ("SELECT * FROM stores FOR NO KEY UPDATE", r"SELECT \.\.\. FOR UPDATE/SHARE"),
    ],
    ids=["with-delete", "with-insert", "with-update", "for-update", "for-no-key-update"],
)
def test_a_write_inside_a_read_statement_is_refused_by_name(sql: str, what: str) -> None:
    # (issue 39 item 8: the server's own refusal names SELECT, not the write)
    pytest.importorskip("psycopg")
    with pytest.raises(ReadOnlyError, match=f"read-only: {what}"):
        query(CLOSED, sql)


def test_words_that_only_look_like_writes_pass_the_check() -> None:
    # A column or a string that says delete, insert or update is no write.
    check(
        "SELECT 'delete from x' AS note, kind AS \"update\" FROM journal WHERE op = 'delete'",
        "postgresql",
    )


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT 'x", "unterminated string literal"),
        ("SELECT 1 /* /* */", "unterminated comment"),
        ('SELECT "x', "unterminated quoted name"),
        ("SELECT $a$ x $b$", r"unterminated dollar-quoted string \$a\$"),
        ("SELECT U&\"pg\\005fread\\005ffile\"('/etc/hostname')", r"Unicode-escaped names"),
        ("SELECT 1; SELECT $$;$$", "one statement at a time"),
        (";", "the query is empty"),
    ],
    ids=["string", "comment", "name", "dollar", "unicode-name", "two", "only-a-semicolon"],
)
def test_what_the_lexer_cannot_take(sql: str, message: str) -> None:
    with pytest.raises(InvalidValueError, match=message):
        check(sql, "postgresql")


def test_semicolons_inside_postgresql_literals_do_not_count() -> None:
    assert check("SELECT $$;$$, $q$;$q$, E'\\';', ';' -- ;\n;", "postgresql") == "SELECT"
    # B'' and X'' strings hold no quote: B'1' ends at the second quote
    assert [t.kind for t in pg_tokens("SELECT B'1''x'")] == ["word", "string", "string"]


# -- PostgreSQL: the server's own rules ---------------------------------------------------------


@pytest.fixture(scope="module")
def pg(postgres_schemas: PostgresSchemas) -> Iterator[Database]:
    """A schema of its own holding the recorded session and a sequence ``s``."""
    name, url = postgres_schemas.create()
    record_session(url)
    database = Database("postgres", url, url)
    database.sql("CREATE SEQUENCE s")
    database.sql("SELECT nextval('s')")
    (reader,) = database.sql(
        "SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pg_read_all_data' "
        "AND pg_has_role(oid, 'MEMBER'))"
    )
    if not reader[0]:
        postgres_schemas.drop(name)
        pytest.skip("the test role may not take pg_read_all_data (PostgreSQL 14 on, superuser)")
    yield database
    postgres_schemas.drop(name)


def state(db: Database) -> tuple[Any, ...]:
    """What a write would change: the schema's tables, the journal, the sequence."""
    tables = db.sql(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() ORDER BY 1"
    )
    return (
        tables,
        db.sql("SELECT count(*), max(seq) FROM journal"),
        db.sql("SELECT name FROM stores ORDER BY name"),
        db.sql("SELECT last_value FROM s"),
    )


def with_options(url: str, option: str) -> str:
    parsed = make_url(url)
    options = f"{parsed.query.get('options', '')} {option}".strip()
    return parsed.update_query_dict({"options": options}).render_as_string(hide_password=False)


def unused_large_object(db: Database) -> int:
    while True:
        oid = 10_000_000 + secrets.randbelow(1_000_000_000)
        if not db.sql("SELECT FROM pg_largeobject_metadata WHERE oid = :o", o=oid):
            return oid


def large_object_exists(db: Database, oid: int) -> bool:
    return bool(db.sql("SELECT FROM pg_largeobject_metadata WHERE oid = :o", o=oid))


@pytest.mark.postgres
@pytest.mark.parametrize("sql", CALLS.values(), ids=CALLS.keys())
def test_the_server_calls_what_the_check_refuses(pg: Database, sql: str) -> None:
    # (Without the check: the call reaches the server, which refuses it to the reader role.)
    with pytest.raises(ReadOnlyError, match="permission denied for function pg_read_file"):
        run_read_only(engines.parse_target(pg.url), sql)


@pytest.mark.postgres
@pytest.mark.parametrize("sql", NOT_CALLS.values(), ids=NOT_CALLS.keys())
def test_the_server_calls_nothing_where_the_check_lets_through(pg: Database, sql: str) -> None:
    assert len(run_read_only(engines.parse_target(pg.url), sql).rows) == 1


# Writes the READ ONLY transaction refuses by itself (run without the reader role below).
READ_ONLY_REFUSES = {
    "create-table": ("CREATE TABLE t (x int)", "CREATE TABLE"),
    "create-temp": ("CREATE TEMP TABLE t (x int)", "CREATE TABLE"),
    "select-into": ("SELECT * INTO t FROM journal", "SELECT INTO"),
    # (the server names the statement a writing CTE hangs from)
    "insert-in-cte": (
        "WITH x AS (INSERT INTO stores (name) VALUES ('x') RETURNING 1) SELECT * FROM x",
        "SELECT",
    ),
    "explain-analyze-delete": ("EXPLAIN ANALYZE DELETE FROM journal", "DELETE"),
    "for-update": ("SELECT * FROM stores FOR UPDATE", "SELECT FOR UPDATE"),
    "nextval": ("SELECT nextval('s')", r"nextval\(\)"),
    "setval": ("SELECT setval('s', 100)", r"setval\(\)"),
    "copy-from-stdin": ("COPY stores FROM STDIN", "COPY FROM"),
}


@pytest.mark.postgres
@pytest.mark.parametrize(("sql", "what"), READ_ONLY_REFUSES.values(), ids=READ_ONLY_REFUSES.keys())
def test_the_read_only_transaction_refuses_each_write_by_itself(
    pg: Database, monkeypatch: pytest.MonkeyPatch, sql: str, what: str
) -> None:
    monkeypatch.setattr(sq, "_take_reader_role", lambda cursor: False)
    before = state(pg)
    with pytest.raises(
        ReadOnlyError, match=f"^drasnap query is read-only: cannot execute {what} in a read-only"
    ):
        run_read_only(engines.parse_target(pg.url), sql)
    assert state(pg) == before


ROLE_NOTE = r"\(the query runs as the role pg_read_all_data\)"
# What the reader role may not do, which a READ ONLY transaction allows a superuser.
ROLE_REFUSES = {
    "copy-to-file": ("COPY stores TO '/tmp/drasnap-x'", "must be superuser .* to COPY to a file"),
    "copy-to-program": ("COPY stores TO PROGRAM 'true'", "must be superuser .* external program"),
    "copy-from-program": ("COPY stores FROM PROGRAM 'true'", "must be superuser .* program"),
    "lo_import": ("SELECT lo_import('/etc/hostname')", "permission denied for function lo_import"),
    "lo_export": ("SELECT lo_export(1, '/tmp/drasnap-x')", "permission denied for function"),
    "pg_read_file": ("SELECT pg_read_file('/etc/hostname')", "permission denied for function"),
    "pg_read_binary_file": ("SELECT pg_read_binary_file('/etc/hostname')", "permission denied"),
    "pg_ls_dir": ("SELECT pg_ls_dir('.')", "permission denied for function pg_ls_dir"),
    "pg_ls_waldir": ("SELECT * FROM pg_ls_waldir()", "permission denied for function"),
    "pg_stat_file": ("SELECT pg_stat_file('/etc/hostname')", "permission denied for function"),
    "pg_reload_conf": ("SELECT pg_reload_conf()", "permission denied for function"),
    "pg_rotate_logfile": ("SELECT pg_rotate_logfile()", "permission denied for function"),
    "pg_switch_wal": ("SELECT pg_switch_wal()", "permission denied for function"),
    "pg_stat_reset": ("SELECT pg_stat_reset()", "permission denied for function"),
    "nextval": ("SELECT nextval('s')", "permission denied for sequence s"),
}


@pytest.mark.postgres
@pytest.mark.parametrize(("sql", "message"), ROLE_REFUSES.values(), ids=ROLE_REFUSES.keys())
def test_the_reader_role_is_refused_each_by_the_server(
    pg: Database, sql: str, message: str
) -> None:
    before = state(pg)
    with pytest.raises(
        ReadOnlyError,
        match=f"^drasnap query is read-only: {message}.* {ROLE_NOTE}$",
    ):
        run_read_only(engines.parse_target(pg.url), sql)
    assert state(pg) == before


@pytest.mark.postgres
def test_two_statements_are_refused_by_the_server_too(pg: Database) -> None:
    before = state(pg)
    with pytest.raises(Exception, match="cannot insert multiple commands into a prepared"):
        run_read_only(engines.parse_target(pg.url), "SELECT 1; COMMIT; DELETE FROM journal")
    assert state(pg) == before


@pytest.mark.postgres
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT lo_import('/etc/hostname', {oid})",
        "SELECT lo_create({oid})",
        "SELECT lo_from_bytea({oid}, 'x')",
    ],
    ids=["lo_import", "lo_create", "lo_from_bytea"],
)
def test_no_large_object_is_left_behind(pg: Database, sql: str) -> None:
    oid = unused_large_object(pg)
    target = engines.parse_target(pg.url)
    # PostgreSQL before 16 creates the object in a READ ONLY transaction, and the rollback that
    # ends every query undoes it; 16 on refuses it; lo_import is refused to the reader role.
    with contextlib.suppress(ReadOnlyError):
        assert run_read_only(target, sql.format(oid=oid)).rows == [(oid,)]
    assert not large_object_exists(pg, oid)
    # and through the check, the large-object writers are refused by name
    with pytest.raises(ReadOnlyError, match=r"lo_\w+ is refused"):
        query(pg.url, sql.format(oid=oid))
    assert not large_object_exists(pg, oid)


@pytest.mark.postgres
@pytest.mark.parametrize("function", ["pg_terminate_backend", "pg_cancel_backend"])
def test_another_session_is_not_signalled(pg: Database, function: str) -> None:
    import psycopg

    other = psycopg.connect(pg.url.replace("postgresql+psycopg://", "postgresql://"))
    try:
        row = other.execute("SELECT pg_backend_pid()").fetchone()
        assert row is not None
        (pid,) = row
        with pytest.raises(ReadOnlyError, match=r"must be a superuser to (terminate|cancel)"):
            run_read_only(engines.parse_target(pg.url), f"SELECT {function}({pid})")
        with pytest.raises(ReadOnlyError, match=f"{function} is refused"):
            query(pg.url, f"SELECT {function}({pid})")
        assert other.execute("SELECT 1").fetchone() == (1,)  # still there, not cancelled
    finally:
        other.close()


@pytest.mark.postgres
def test_the_reader_role_reads_what_the_connection_reads(pg: Database) -> None:
    result = query(pg.url, "SELECT current_user, current_schemas(false)")
    assert result.rows == [("pg_read_all_data", pg.sql("SELECT current_schemas(false)")[0][0])]
    # the views and tables of the schema, through the path as it was
    assert query(pg.url, "SELECT count(*) FROM layer_history").rows == pg.sql(
        "SELECT count(*) FROM layer_history"
    )
    # standard_conforming_strings is on for the query whatever the connection said
    off = with_options(pg.url, "-cstandard_conforming_strings=off")
    assert query(off, "SELECT '\\' AS s, current_setting('standard_conforming_strings')").rows == [
        ("\\", "on")
    ]


# -- SQLite: its own rules ----------------------------------------------------------------------


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ro") / "session.db"
    record_session(path)
    return path


SQLITE_REFUSES = {
    "insert": ("INSERT INTO stores (name) VALUES ('x')", "INSERT statements are refused"),
    "delete-in-cte": ("WITH x AS (SELECT 1) DELETE FROM journal", "DELETE statements"),
    "create": ("CREATE TABLE t (x)", "statements are refused"),
    "drop": ("DROP VIEW layer_history", "statements are refused"),
    "attach": ("ATTACH '{tmp}/other.db' AS o", "ATTACH statements are refused"),
    "vacuum-into": ("VACUUM INTO '{tmp}/copy.db'", "cannot VACUUM from within a transaction"),
    "writable_schema": ("PRAGMA writable_schema = 1", "PRAGMA writable_schema = 1 statements"),
    "query_only-off": ("PRAGMA query_only = 0", "PRAGMA query_only = 0 statements"),
    "journal_mode": ("PRAGMA journal_mode = DELETE", "PRAGMA journal_mode = DELETE statements"),
    "load_extension": ("SELECT load_extension('{tmp}/x.so')", r"load_extension is refused \(it"),
    "fts3_tokenizer": ("SELECT fts3_tokenizer('simple')", r"fts3_tokenizer is refused \(it"),
    "two-statements": ("SELECT 1; DELETE FROM journal", "one statement at a time"),
}


@pytest.mark.parametrize(("sql", "message"), SQLITE_REFUSES.values(), ids=SQLITE_REFUSES.keys())
def test_sqlite_refuses_each_write_by_itself(
    sqlite_db: Path, tmp_path: Path, sql: str, message: str
) -> None:
    before = digest(sqlite_db)
    with pytest.raises((ReadOnlyError, DatabaseError), match=message):
        run_read_only(engines.parse_target(sqlite_db), sql.format(tmp=tmp_path))
    assert digest(sqlite_db) == before
    assert list(tmp_path.iterdir()) == []  # no file attached, copied or loaded


def test_sqlite_refuses_writes_without_the_authorizer(
    sqlite_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # query_only and the attached-databases limit of 0 stand by themselves
    monkeypatch.setattr(sq, "_authorizer", lambda denied: lambda *args: 0)
    target = engines.parse_target(sqlite_db)
    before = digest(sqlite_db)
    with pytest.raises(ReadOnlyError, match="attempt to write a readonly database"):
        run_read_only(target, "INSERT INTO stores (name) VALUES ('x')")
    with pytest.raises(ReadOnlyError, match="too many attached databases - max 0"):
        run_read_only(target, f"ATTACH '{tmp_path}/other.db' AS o")
    assert digest(sqlite_db) == before
    assert list(tmp_path.iterdir()) == []


def test_sqlite_reads_still_run(sqlite_db: Path) -> None:
    assert query(sqlite_db, "SELECT count(*) > 0 FROM journal").rows == [(1,)]
    assert query(sqlite_db, "SELECT abs(-2), json_extract('{\"a\": 1}', '$.a')").rows == [(2, 1)]
