"""Read-only SQL on a drasnap database, for people and scripts (``drasnap query``).

A query may read everything and change nothing. Two kinds of guard stand, so that neither has
to be perfect:

**Before the statement is sent** (nothing reaches the database when one of these refuses):

1. Exactly one statement, starting with ``SELECT``, ``WITH``, ``VALUES``, ``EXPLAIN`` or
   ``PRAGMA`` (plus ``TABLE`` and ``SHOW`` on PostgreSQL). ``INSERT``, ``UPDATE``, ``DELETE``,
   ``DROP``, ``ATTACH``, ``COPY``, ``SET``... are refused by name; a first word that starts no
   statement (a typo) goes to the database, which reports the syntax error.
2. On PostgreSQL, the functions that act outside the database's tables (read or write the server's
   files, signal other sessions, change settings or the server's state, connect elsewhere, write
   large objects, run SQL given as a string) are refused by name wherever they appear as code:
   ``store.queries.refused`` lists them, ``store.queries.lexer`` finds the names (and the
   statements' ends) as the server's lexer does, skipping literals and comments. So are the
   catalogs that hold secrets (``pg_authid``, ``pg_shadow``, ``pg_user_mapping(s)``,
   ``pg_subscription``), which the reader role below could read.

**The database's own rules** (they hold whatever the text checks missed):

- PostgreSQL: the connection has ``default_transaction_read_only``; the query runs in a
  ``READ ONLY`` (``REPEATABLE READ``) transaction that is always rolled back, so even what
  the read-only mode lets through (large-object writes before PostgreSQL 16) is undone; with
  ``standard_conforming_strings`` on (how the lexer above reads strings); as the predefined
  role ``pg_read_all_data`` (``SET LOCAL ROLE``) when the connecting role may take it, a
  superuser or a member: it may read every table but not the server's files, not signal other
  sessions, not reload the configuration, so the server refuses those itself (the schemas of
  the search path are fixed first, as ``"$user"`` would change with the role); sent with the
  extended protocol (a prepared statement), which runs one statement at most; with the
  session's ``statement_timeout`` and ``idle_in_transaction_session_timeout`` set, so the server
  ends it even when drasnap is killed outright (:func:`query_rows`).
- SQLite: the connection has ``PRAGMA query_only`` (SQLite refuses every write with "attempt
  to write a readonly database"); an authorizer allows only reads, functions (not
  ``load_extension``), recursive CTEs and the introspection pragmas while the statement is
  compiled, so a write hidden in a ``WITH``, an ``ATTACH`` (which could create a file, even on
  a ``mode=ro`` connection) or ``PRAGMA query_only = OFF`` is refused; ``ATTACH`` is also
  refused by the attached-databases limit set to 0; and Python's sqlite3 runs one statement at
  most. (The connection is not opened with ``mode=ro`` where the folder is writable: a
  ``mode=ro`` reader of a WAL database leaves its ``-wal`` and ``-shm`` files behind, and
  ``query_only`` refuses the same writes; see ``store.sql.engines._read_only_uri``.)

The rows are read as the database produces them (``store.queries.rows``): an endless
statement prints its first rows at once, in flat memory, and ends at its time limit or when
stopped (a signal: SQLite ``interrupt()``, PostgreSQL a cancel request).

Not covered by the text checks: functions defined in the database that call the refused ones
(the rules of the server still hold for them). Errors of the driver come back as
:class:`store.ReadOnlyError` (a write or a refused function) or :class:`store.DatabaseError`
(anything else: a syntax error, an unknown table).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import sqlite3
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

from drasnap.store.errors import (
    DatabaseError,
    InvalidValueError,
    NotADatabaseError,
    QueryStoppedError,
    QueryTimeoutError,
    ReadOnlyError,
    StoreError,
    one_line,
)
from drasnap.store.queries.lexer import Token, pg_tokens, sqlite_code
from drasnap.store.queries.refused import pg_refused, pg_secret, sqlite_refused
from drasnap.store.queries.rows import QueryRows
from drasnap.store.sql import engines
from drasnap.store.sql.as_of import with_as_of

__all__ = ["QueryResult", "QueryRows", "query", "query_rows"]

_READS = {"SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"}
_PG_READS = {"TABLE", "SHOW"}
# The statements that can change something, refused by name before they run. A first word that
# is no statement at all ("SELEC") is left to the database, whose syntax error says more.
_WRITES = {
    "INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT", "MERGE", "CREATE", "DROP", "ALTER",
    "ATTACH", "DETACH", "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT",
    "RELEASE", "REINDEX", "ANALYZE", "VACUUM", "TRUNCATE", "GRANT", "REVOKE", "REASSIGN",
    "COPY", "SET", "RESET", "LOCK", "CALL", "DO", "CLUSTER", "COMMENT", "DISCARD", "IMPORT",
    "LISTEN", "NOTIFY", "UNLISTEN", "LOAD", "PREPARE", "EXECUTE", "DEALLOCATE", "REFRESH",
    "SECURITY", "CHECKPOINT",
}  # fmt: skip
# The predefined role (PostgreSQL 14 on) a query runs as: SELECT on every table and view,
# USAGE on every schema, and nothing else (no server files, no signals, no superuser).
READER_ROLE = "pg_read_all_data"

# sqlite3 authorizer action codes -> the statement they come from, for messages.
_ACTIONS: dict[int, str] = {
    sqlite3.SQLITE_INSERT: "INSERT",
    sqlite3.SQLITE_UPDATE: "UPDATE",
    sqlite3.SQLITE_DELETE: "DELETE",
    sqlite3.SQLITE_ATTACH: "ATTACH",
    sqlite3.SQLITE_DETACH: "DETACH",
    sqlite3.SQLITE_TRANSACTION: "BEGIN/COMMIT/ROLLBACK",
    sqlite3.SQLITE_SAVEPOINT: "SAVEPOINT",
    sqlite3.SQLITE_ALTER_TABLE: "ALTER TABLE",
    sqlite3.SQLITE_REINDEX: "REINDEX",
    sqlite3.SQLITE_ANALYZE: "ANALYZE",
    sqlite3.SQLITE_CREATE_INDEX: "CREATE INDEX",
    sqlite3.SQLITE_CREATE_TABLE: "CREATE TABLE",
    sqlite3.SQLITE_CREATE_TEMP_INDEX: "CREATE INDEX",
    sqlite3.SQLITE_CREATE_TEMP_TABLE: "CREATE TABLE",
    sqlite3.SQLITE_CREATE_TEMP_TRIGGER: "CREATE TRIGGER",
    sqlite3.SQLITE_CREATE_TEMP_VIEW: "CREATE VIEW",
    sqlite3.SQLITE_CREATE_TRIGGER: "CREATE TRIGGER",
    sqlite3.SQLITE_CREATE_VIEW: "CREATE VIEW",
    sqlite3.SQLITE_CREATE_VTABLE: "CREATE VIRTUAL TABLE",
    sqlite3.SQLITE_DROP_INDEX: "DROP INDEX",
    sqlite3.SQLITE_DROP_TABLE: "DROP TABLE",
    sqlite3.SQLITE_DROP_TEMP_INDEX: "DROP INDEX",
    sqlite3.SQLITE_DROP_TEMP_TABLE: "DROP TABLE",
    sqlite3.SQLITE_DROP_TEMP_TRIGGER: "DROP TRIGGER",
    sqlite3.SQLITE_DROP_TEMP_VIEW: "DROP VIEW",
    sqlite3.SQLITE_DROP_TRIGGER: "DROP TRIGGER",
    sqlite3.SQLITE_DROP_VIEW: "DROP VIEW",
    sqlite3.SQLITE_DROP_VTABLE: "DROP VIRTUAL TABLE",
}
_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_RECURSIVE,
}
# Pragmas that only describe the schema; with an argument it is a table or index name.
_INTROSPECTION = {
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "database_list",
    "collation_list",
    "function_list",
    "pragma_list",
    "compile_options",
}
# Pragmas that read a setting when given no value.
_READABLE_SETTINGS = {
    "user_version",
    "schema_version",
    "application_id",
    "page_size",
    "page_count",
    "freelist_count",
    "journal_mode",
    "encoding",
    "foreign_keys",
    "query_only",
    "data_version",
}


@dataclass(frozen=True, slots=True)
class QueryResult:
    """The columns and rows of a query, as the driver returned them."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


def statement_kind(sql: str, dialect: str = "sqlite") -> str:
    """The first keyword of the one statement in ``sql``, upper-cased.

    Raises:
        InvalidValueError: no statement, or more than one (or, on PostgreSQL, an unterminated
            literal or comment).
    """
    if dialect == "postgresql":
        return _pg_statement(sql)[0]
    parts = [p for p in sqlite_code(sql).split(";") if p.strip()]
    _one_statement(len(parts))
    match = re.match(r"[\s(]*([A-Za-z]+)", parts[0])
    return match.group(1).upper() if match else parts[0].split()[0]


def _one_statement(count: int) -> None:
    if not count:
        raise InvalidValueError("the query is empty: give one SQL statement")
    if count > 1:
        raise InvalidValueError(
            "drasnap query runs one statement at a time; found more than one (split at ';')"
        )


def _pg_statement(sql: str) -> tuple[str, list[Token]]:
    """The first keyword of the one statement in ``sql`` and its tokens (PostgreSQL)."""
    statements: list[list[Token]] = [[]]
    for token in pg_tokens(sql):
        if token.kind == ";":
            statements.append([])
        else:
            statements[-1].append(token)
    statements = [s for s in statements if s]
    _one_statement(len(statements))
    tokens = statements[0]
    first = next((t for t in tokens if t.text != "("), tokens[0])
    return (first.text.upper() if first.kind == "word" else first.text), tokens


def check(sql: str, dialect: str) -> str:
    """Refuse ``sql`` unless it is one read statement that calls no refused function; its
    first keyword.

    Raises:
        ReadOnlyError: a statement that writes, a refused function or (PostgreSQL) a catalog
            of secrets (by name).
        InvalidValueError: no statement, or more than one.
    """
    if dialect != "postgresql":
        kind = statement_kind(sql)
        if kind not in _READS and kind in _WRITES | _PG_READS:
            raise _refusal(kind, dialect)
        return kind
    kind, tokens = _pg_statement(sql)
    if kind == "COPY":
        what, why = _copy_form(tokens)
        raise _refusal(what, dialect, why)
    if kind not in _READS | _PG_READS and kind in _WRITES:
        raise _refusal(kind, dialect)
    refused = pg_refused(tokens)
    if refused is not None:
        name, why = refused
        raise ReadOnlyError(f"drasnap query is read-only: {name} is refused ({why})")
    secret = pg_secret(tokens)
    if secret is not None:
        name, why = secret
        raise ReadOnlyError(f"drasnap query does not read {name}: {why}")
    inner = _inner_write(tokens)
    if inner is not None:
        raise _refusal(inner, dialect)
    return kind


def _inner_write(tokens: list[Token]) -> str | None:
    """A write inside a read statement (PostgreSQL): a data-modifying ``WITH`` part, or a
    ``SELECT ... FOR UPDATE/SHARE`` that locks rows. The read-only transaction refuses them
    too, but with "cannot execute SELECT in a read-only transaction", which names the wrong
    statement."""
    words = [t.text if t.kind == "word" else "" for t in tokens]
    for i, (a, b) in enumerate(itertools.pairwise(words)):
        if (a, b) in (("delete", "from"), ("insert", "into"), ("merge", "into")):
            return a.upper()
        if a == "update" and "set" in words[i + 2 : i + 4]:
            return "UPDATE"
        if a == "for" and b in ("update", "share", "no", "key"):
            return "SELECT ... FOR UPDATE/SHARE (row locks)"
    return None


def _copy_form(tokens: list[Token]) -> tuple[str, str]:
    """The form of a COPY statement, and what it would do, for its refusal."""
    words = [t.text for t in tokens if t.kind == "word"]
    direction = "FROM" if "from" in words else "TO"
    if "program" in words:
        return f"COPY ... {direction} PROGRAM", "they run a program on the database server"
    after = [b for a, b in itertools.pairwise(tokens) if a.text in ("from", "to")]
    if any(t.kind == "string" for t in after):
        verb = "read" if direction == "FROM" else "write"
        return f"COPY ... {direction} a file", f"they {verb} a file of the database server"
    return f"COPY ... {direction}", ""


def _refusal(what: str, dialect: str = "sqlite", why: str = "") -> ReadOnlyError:
    reads = "SELECT, WITH, VALUES, EXPLAIN, " + (
        "TABLE or SHOW" if dialect == "postgresql" else "or an introspection PRAGMA"
    )
    because = f"{why}; " if why else ""
    return ReadOnlyError(
        f"drasnap query is read-only: {what} statements are refused ({because}use {reads})"
    )


def _authorizer(denied: list[str]) -> Callable[..., int]:
    """A SQLite authorizer: what it denies is appended to ``denied`` (for the message)."""

    def authorize(action: int, arg1: str | None, arg2: str | None, *_: Any) -> int:
        if action == sqlite3.SQLITE_FUNCTION:  # (arg2 is the function's name)
            why = sqlite_refused(arg2 or "")
            if why is None:
                return sqlite3.SQLITE_OK
            denied.append(f"{(arg2 or '').lower()} is refused ({why})")
            return sqlite3.SQLITE_DENY
        if action in _ALLOWED:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master":
            # SQLite asks this while preparing a table-valued pragma (pragma_table_info(...)),
            # and a real write to it would need PRAGMA writable_schema, which is refused.
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA:
            name = (arg1 or "").lower()
            if name in _INTROSPECTION or (name in _READABLE_SETTINGS and arg2 is None):
                return sqlite3.SQLITE_OK
            what = f"PRAGMA {name}" + (f" = {arg2}" if arg2 is not None else "")
            denied.append(str(_refusal(what)).removeprefix(_PREFIX))
            return sqlite3.SQLITE_DENY
        what = _ACTIONS.get(action, f"this kind of (code {action})")
        denied.append(str(_refusal(what)).removeprefix(_PREFIX))
        return sqlite3.SQLITE_DENY

    return authorize


_PREFIX = "drasnap query is read-only: "


def query(
    target: str | os.PathLike[str],
    sql: str,
    *,
    max_rows: int | None = None,
    as_of: int | None = None,
    timeout: float | None = None,
) -> QueryResult:
    """Run one read-only statement on the database ``target`` (a path or a URL); all its rows.

    ``max_rows`` limits the rows fetched (None: all of them). The statement is checked
    (:func:`check`) before anything connects to the database. With ``as_of``, the statement
    (a ``SELECT`` or ``WITH``) may read ``objects_as_of``: every store's live objects as of
    that journal seq (``store.sql.as_of``). ``timeout``: at most so many seconds (None: no
    limit). :func:`query_rows` reads the rows as they come instead.

    Raises:
        ReadOnlyError: the statement would write (INSERT, UPDATE, DELETE, DROP, ATTACH, ...),
            calls a refused function (pg_read_file, lo_import, set_config, ...) or names a
            catalog of secrets (pg_authid, ...).
        InvalidValueError: no statement, or more than one.
        NotADatabaseError: the file does not exist or is not a database.
        QueryTimeoutError: the statement ran longer than ``timeout``.
        DatabaseError: the database refused the statement (syntax error, unknown table, ...).
    """
    with query_rows(target, sql, max_rows=max_rows, as_of=as_of, timeout=timeout) as rows:
        data = list(rows)
        return QueryResult(rows.columns or (), data)


@contextlib.contextmanager
def query_rows(
    target: str | os.PathLike[str],
    sql: str,
    *,
    max_rows: int | None = None,
    as_of: int | None = None,
    timeout: float | None = None,
) -> Iterator[QueryRows]:
    """As :func:`query`, but the rows are read as the database produces them: the block gets a
    :class:`QueryRows` to iterate once (memory stays flat on an endless statement), whose
    ``stop()`` a signal handler may call (SQLite ``interrupt()``, PostgreSQL a cancel request).
    The statement ends, and its transaction is rolled back, when the block ends.

    On PostgreSQL the session's ``statement_timeout`` is ``timeout`` and its
    ``idle_in_transaction_session_timeout`` :data:`PG_IDLE_TIMEOUT` (with
    ``client_connection_check_interval`` at :data:`PG_CHECK_CLIENT` where the server has it),
    so a client killed outright (SIGKILL) leaves no backend running past them.

    Raises:
        the errors of :func:`query`, and :class:`QueryStoppedError` (from the iteration) after
        ``stop()``.
    """
    info = engines.parse_target(target)
    kind = check(sql, info.dialect)
    if as_of is not None:
        sql = with_as_of(sql, as_of, info.dialect, kind)
    if info.path is not None and not info.path.exists():
        raise NotADatabaseError(f"{info.display} does not exist: give a drasnap database")
    with _read_only_rows(info, sql, max_rows, timeout) as rows:
        yield rows


def run_read_only(info: engines.Target, sql: str, max_rows: int | None = None) -> QueryResult:
    """Run ``sql`` under the database's own read-only rules alone (no :func:`check`: the tests
    call this to show those rules hold by themselves), and roll back."""
    with _read_only_rows(info, sql, max_rows, None) as rows:
        data = list(rows)
        return QueryResult(rows.columns or (), data)


@contextlib.contextmanager
def _read_only_rows(
    info: engines.Target, sql: str, max_rows: int | None, timeout: float | None
) -> Iterator[QueryRows]:
    """The rows of ``sql`` in a read-only transaction that is rolled back when the block ends.

    The block itself runs outside ``engines.translate``: what the reader raises (a broken
    pipe, an exit) is not the database's error. The rows translate their driver's errors.
    """
    engine = engines.create(info, readonly=True)
    try:
        with engines.translate(info, "opening the database"):
            conn = engine.connect()
        with conn, engines.snapshot(conn):  # PostgreSQL: BEGIN ... READ ONLY
            with engines.translate(info, "starting the query"):
                transaction = conn.begin()
            dbapi = conn.connection.dbapi_connection
            assert dbapi is not None
            if info.dialect == "sqlite":
                rows = QueryRows(
                    info.display,
                    lambda r: _sqlite_rows(dbapi, info, sql, r),
                    dbapi.interrupt,
                    max_rows=max_rows,
                    timeout=timeout,
                )
            else:
                rows = QueryRows(
                    info.display,
                    lambda r: _postgres_rows(dbapi, info, sql, r),
                    lambda: _pg_cancel(dbapi),
                    max_rows=max_rows,
                    timeout=timeout,
                )
            try:
                yield rows
            except BaseException:
                # (what ended the block is the news: a connection the stop or the server's
                # timeout broke must not hide it behind its own error)
                with contextlib.suppress(Exception):
                    rows.close()
                    transaction.rollback()
                raise
            rows.close()
            try:
                # (a read has nothing to commit; undo what slipped by)
                with engines.translate(info, "ending the query"):
                    transaction.rollback()
            except DatabaseError:
                if not getattr(dbapi, "closed", False):
                    raise
                # (PostgreSQL ended the session after the last row was read, at its
                # idle_in_transaction_session_timeout: the answer is whole, nothing to undo)
    finally:
        engine.dispose()


#: SQLite calls the progress handler every so many virtual-machine instructions (a few
#: thousand times a second on a busy statement): it ends a stopped or timed-out statement
#: within that, and lets a signal's Python handler run while SQLite computes a row.
SQLITE_PROGRESS_STEPS = 10_000
#: Rows fetched from the driver at a time (SQLite).
FETCH_BATCH = 256


def _sqlite_rows(
    dbapi: Any, info: engines.Target, sql: str, rows: QueryRows
) -> Generator[tuple[Any, ...], None, None]:
    (tables,) = dbapi.execute("SELECT count(*) FROM sqlite_master").fetchone()
    if not tables:  # (SQLite takes an empty file for an empty database)
        raise NotADatabaseError(f"{info.display} is not a drasnap database (it is empty)")
    denied: list[str] = []
    attached = dbapi.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    dbapi.set_authorizer(_authorizer(denied))
    # A non-zero answer ends the statement with "interrupted"; the Python handler of a signal
    # runs here too (Python runs them between bytecodes, and SQLite computing a row runs none).
    dbapi.set_progress_handler(lambda: int(rows.should_end()), SQLITE_PROGRESS_STEPS)
    cursor = dbapi.cursor()
    try:
        try:
            cursor.execute(sql)
            rows.columns = tuple(d[0] for d in cursor.description or ())
            if not rows.columns:
                return
            while batch := cursor.fetchmany(FETCH_BATCH):
                for row in batch:
                    yield tuple(row)
        except sqlite3.Error as exc:
            raise _sqlite_error(exc, info, rows, denied) from exc
    finally:
        cursor.close()
        dbapi.set_progress_handler(None, 0)
        dbapi.set_authorizer(None)
        dbapi.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, attached)


def _sqlite_error(
    exc: sqlite3.Error, info: engines.Target, rows: QueryRows, denied: list[str]
) -> StoreError:
    message = one_line(exc)
    if denied:
        return ReadOnlyError(_PREFIX + denied[0])
    if message == "interrupted":
        try:
            rows.check()
        except (QueryStoppedError, QueryTimeoutError) as ended:
            return ended
    if "readonly database" in message or "too many attached databases" in message:
        return ReadOnlyError(_PREFIX + message)
    if "file is not a database" in message:
        return NotADatabaseError(f"{info.display} is not a database")
    return DatabaseError(f"{info.display}: {message} (while running the query)")


#: PostgreSQL ends a transaction left idle this long (a client stopped with SIGSTOP, or cut
#: off). drasnap's own idles only between its few statements, and after the last row while
#: the reader takes it (printing into a pipe nobody reads past this ends the session, after
#: every row was read: there is nothing left to undo then).
PG_IDLE_TIMEOUT = "60s"
#: PostgreSQL 14 on (Linux servers) checks this often, while a statement runs, whether the
#: client is still there, and ends the statement when it is not (a client killed by SIGKILL
#: while the statement computes, sending nothing, would otherwise run until statement_timeout).
PG_CHECK_CLIENT = "1s"


def _postgres_rows(
    dbapi: Any, info: engines.Target, sql: str, rows: QueryRows
) -> Generator[tuple[Any, ...], None, None]:
    cursor = dbapi.cursor()
    try:
        _pg_session(cursor, rows.timeout)
        as_reader = _take_reader_role(cursor)
        # stream(): one statement, sent with the extended protocol (under which the server runs
        # one statement at most: "cannot insert multiple commands into a prepared statement"),
        # its rows received one at a time (libpq's single-row mode).
        stream = cursor.stream(sql)
        try:
            for row in stream:
                if rows.columns is None:
                    rows.columns = tuple(d.name for d in cursor.description or ())
                yield tuple(row)
            if rows.columns is None:
                rows.columns = _pg_described(dbapi)
        except Exception as exc:  # (psycopg.Error; psycopg is imported only with the URL)
            raise _pg_error(exc, info, rows, as_reader) from exc
        finally:
            stream.close()  # (psycopg cancels a statement still running, and reads its end)
    finally:
        cursor.close()


def _pg_session(cursor: Any, timeout: float | None) -> None:
    """The settings of the query's transaction (``SET LOCAL``: gone at its rollback)."""
    # The lexer of store.queries.lexer reads '...' as the standard says; so must the server
    # (a URL's options or the database's defaults could have switched it off).
    cursor.execute("SET LOCAL standard_conforming_strings = on")
    milliseconds = 0 if timeout is None else max(1, round(timeout * 1000))
    cursor.execute(
        "SELECT set_config('statement_timeout', %s, true), "
        "set_config('idle_in_transaction_session_timeout', %s, true)",
        (str(milliseconds), PG_IDLE_TIMEOUT),
    )
    if cursor.connection.info.server_version >= 140000:
        # (a server that cannot watch its clients, not on Linux, refuses a non-zero value)
        cursor.execute("SAVEPOINT drasnap_check_client")
        try:
            cursor.execute(
                "SELECT set_config('client_connection_check_interval', %s, true)",
                (PG_CHECK_CLIENT,),
            )
        except Exception:  # (psycopg.Error)
            cursor.execute("ROLLBACK TO SAVEPOINT drasnap_check_client")
        cursor.execute("RELEASE SAVEPOINT drasnap_check_client")


def _pg_described(dbapi: Any) -> tuple[str, ...]:
    """The columns of the statement just streamed, when it gave no row (psycopg keeps no
    description then): the server describes the unnamed statement stream() prepared."""
    described = dbapi.pgconn.describe_prepared(b"")
    encoding = dbapi.info.encoding
    return tuple(described.fname(i).decode(encoding) for i in range(described.nfields))


def _pg_cancel(dbapi: Any) -> None:
    """Ask the server to cancel the running statement (from a signal handler: no raise)."""
    cancel = getattr(dbapi, "cancel_safe", None)  # (psycopg 3.2 on; cancel() before)
    if cancel is not None:
        cancel(timeout=5.0)
    else:
        dbapi.cancel()


def _pg_error(exc: Exception, info: engines.Target, rows: QueryRows, as_reader: bool) -> StoreError:
    message = one_line(exc)
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) or message  # (no HINT, no LINE)
    if getattr(diag, "sqlstate", None) == "57014":  # query_canceled
        if rows.stopped:
            try:
                rows.check()
            except QueryStoppedError as stopped:
                return stopped
        if "statement timeout" in primary and rows.timeout is not None:
            return rows.timeout_error()
    if "read-only transaction" in primary:
        return ReadOnlyError(_PREFIX + primary)
    if as_reader and primary.startswith(("permission denied", "must be ")):
        # ("must be superuser or have privileges of the pg_write_server_files role to
        # COPY to a file", "must be a superuser to terminate superuser process")
        return ReadOnlyError(f"{_PREFIX}{primary} (the query runs as the role {READER_ROLE})")
    return DatabaseError(f"{info.display}: {message} (while running the query)")


def _take_reader_role(cursor: Any) -> bool:
    """``SET LOCAL ROLE pg_read_all_data`` where the connecting role may; whether it did.

    The schemas of the search path are fixed first: a path of ``"$user", public`` would
    otherwise name another schema once the role changes.
    """
    cursor.execute(
        "SELECT current_schemas(false)::text[], EXISTS (SELECT FROM pg_roles "
        "WHERE rolname = %s AND pg_has_role(oid, 'MEMBER'))",
        (READER_ROLE,),
    )
    schemas, member = cursor.fetchone()
    if not member:  # (PostgreSQL before 14, or a role that is neither superuser nor member)
        return False
    path = ", ".join(_path_entry(name) for name in schemas)
    cursor.execute("SELECT set_config('search_path', %s, true)", (path,))
    cursor.execute(f"SET LOCAL ROLE {READER_ROLE}")
    return True


def _path_entry(schema: str) -> str:
    """``schema`` as written in a ``search_path`` (quoted unless it is a plain lower-case name,
    which the server's list parsing, ``SplitIdentifierString``, takes as it is)."""
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", schema):
        return schema
    return '"' + schema.replace('"', '""') + '"'
