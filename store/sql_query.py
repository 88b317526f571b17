"""Read-only SQL on a drasnap database, for people and scripts (``drasnap query``).

Three guards, so a query can read everything and change nothing:

1. The statement is checked before it runs: exactly one statement, starting with ``SELECT``,
   ``WITH``, ``VALUES``, ``EXPLAIN`` or ``PRAGMA`` (plus ``TABLE`` and ``SHOW`` on
   PostgreSQL). ``INSERT``, ``UPDATE``, ``DELETE``, ``DROP``, ``ATTACH``... are refused by name;
   a first word that starts no statement (a typo) goes to the database, which reports the
   syntax error, and guards 2 and 3 still stand.
2. The connection is read-only: SQLite ``PRAGMA query_only = ON``, PostgreSQL
   ``default_transaction_read_only`` (every transaction is ``READ ONLY``).
3. On SQLite an authorizer allows only reads, functions, recursive CTEs and the introspection
   pragmas while the statement is compiled: a write hidden in a ``WITH``, an ``ATTACH`` (which
   could create a file) or ``PRAGMA query_only = OFF`` is refused even though it passed (1).

Errors of the driver come back as :class:`store.ReadOnlyError` (a write, refused) or
:class:`store.DatabaseError` (anything else: a syntax error, an unknown table).
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from drasnap.store import _sql
from drasnap.store.errors import DatabaseError, InvalidValueError, NotADatabaseError, ReadOnlyError

__all__ = ["QueryResult", "query"]

_READS = {"SELECT", "WITH", "VALUES", "EXPLAIN", "PRAGMA"}
_PG_READS = {"TABLE", "SHOW"}
# The statements that can change something, refused by name before they run. A first word that
# is no statement at all ("SELEC") is left to the database, whose syntax error says more.
_WRITES = {
    "INSERT", "UPDATE", "DELETE", "REPLACE", "UPSERT", "MERGE", "CREATE", "DROP", "ALTER",
    "ATTACH", "DETACH", "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE",
    "REINDEX", "ANALYZE", "VACUUM", "TRUNCATE", "GRANT", "REVOKE", "COPY", "SET", "RESET",
    "LOCK", "CALL", "DO", "CLUSTER", "COMMENT", "DISCARD", "IMPORT", "LISTEN", "NOTIFY",
    "UNLISTEN", "LOAD", "PREPARE", "EXECUTE", "DEALLOCATE", "REFRESH", "SECURITY", "CHECKPOINT",
}  # fmt: skip

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
    sqlite3.SQLITE_FUNCTION,
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


def statement_kind(sql: str) -> str:
    """The first keyword of the one statement in ``sql``, upper-cased.

    Raises:
        InvalidValueError: no statement, or more than one.
    """
    body = _strip(sql)
    if not body.strip():
        raise InvalidValueError("the query is empty: give one SQL statement")
    parts = [p for p in body.split(";") if p.strip()]
    if len(parts) > 1:
        raise InvalidValueError(
            "drasnap query runs one statement at a time; found more than one (split at ';')"
        )
    match = re.match(r"[\s(]*([A-Za-z]+)", parts[0])
    return match.group(1).upper() if match else parts[0].split()[0]


def _strip(sql: str) -> str:
    """``sql`` with comments removed and string literals and quoted names blanked (so their
    semicolons and keywords do not count)."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "/" and sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
            continue
        if c in "'\"`[":
            close = "]" if c == "[" else c
            j = i + 1
            while j < n:
                if sql[j] == close:
                    if close != "]" and j + 1 < n and sql[j + 1] == close:
                        j += 2  # a doubled quote inside the literal
                        continue
                    break
                j += 1
            out.append(" x ")
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _refusal(what: str, dialect: str = "sqlite") -> ReadOnlyError:
    reads = "SELECT, WITH, VALUES, EXPLAIN, " + (
        "TABLE or SHOW" if dialect == "postgresql" else "or an introspection PRAGMA"
    )
    return ReadOnlyError(f"drasnap query is read-only: {what} statements are refused (use {reads})")


def _authorizer(denied: list[str]) -> Callable[..., int]:
    def authorize(action: int, arg1: str | None, arg2: str | None, *_: Any) -> int:
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
            denied.append(f"PRAGMA {name}" + (f" = {arg2}" if arg2 is not None else ""))
            return sqlite3.SQLITE_DENY
        denied.append(_ACTIONS.get(action, f"this kind of (code {action})"))
        return sqlite3.SQLITE_DENY

    return authorize


def query(target: str | os.PathLike[str], sql: str, *, max_rows: int | None = None) -> QueryResult:
    """Run one read-only statement on the database ``target`` (a path or a URL).

    ``max_rows`` limits the rows fetched (None: all of them).

    Raises:
        ReadOnlyError: the statement would write (INSERT, UPDATE, DELETE, DROP, ATTACH, ...).
        InvalidValueError: no statement, or more than one.
        NotADatabaseError: the file does not exist or is not a database.
        DatabaseError: the database refused the statement (syntax error, unknown table, ...).
    """
    kind = statement_kind(sql)
    info = _sql.parse_target(target)
    allowed = _READS | (_PG_READS if info.dialect == "postgresql" else set())
    if kind not in allowed and (kind in _WRITES or kind in _READS | _PG_READS):
        raise _refusal(kind, info.dialect)
    if info.path is not None and not info.path.exists():
        raise NotADatabaseError(f"{info.display} does not exist: give a drasnap database")
    engine = _sql.create(info, readonly=True)
    try:
        with _sql.translate(info, "running the query"), engine.connect() as conn, conn.begin():
            dbapi = conn.connection.dbapi_connection
            assert dbapi is not None
            return _run(dbapi, info, sql, max_rows)
    finally:
        engine.dispose()


def _run(dbapi: Any, info: _sql.Target, sql: str, max_rows: int | None) -> QueryResult:
    denied: list[str] = []
    sqlite = info.dialect == "sqlite"
    if sqlite:
        (tables,) = dbapi.execute("SELECT count(*) FROM sqlite_master").fetchone()
        if not tables:  # (SQLite takes an empty file for an empty database)
            raise NotADatabaseError(f"{info.display} is not a drasnap database (it is empty)")
        dbapi.set_authorizer(_authorizer(denied))
    cursor = dbapi.cursor()
    try:
        cursor.execute(sql)
        columns = tuple(d[0] for d in cursor.description or ())
        if not columns:
            rows: list[tuple[Any, ...]] = []
        elif max_rows is None:
            rows = [tuple(r) for r in cursor.fetchall()]
        else:
            rows = [tuple(r) for r in cursor.fetchmany(max_rows)]
        return QueryResult(columns, rows)
    except Exception as exc:
        if denied:
            raise _refusal(denied[0]) from exc
        message = " ".join(str(exc).split())
        if not sqlite and "read-only transaction" in message:
            raise ReadOnlyError(f"drasnap query is read-only: {message}") from exc
        if sqlite and "readonly database" in message:
            raise ReadOnlyError(f"drasnap query is read-only: {message}") from exc
        if sqlite and "file is not a database" in message:
            raise NotADatabaseError(f"{info.display} is not a database") from exc
        raise DatabaseError(f"{info.display}: {message} (while running the query)") from exc
    finally:
        cursor.close()
        if sqlite:
            dbapi.set_authorizer(None)
