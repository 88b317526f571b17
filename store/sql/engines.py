"""Engines, the schema check and upgrade, and error translation (the writer lock:
``store.sql.lock``).

This is the one module that creates engines, and both dialects get the same recipe: the
driver's own transaction handling is switched off on connect (pysqlite ``isolation_level=None``,
psycopg ``autocommit``), and ``BEGIN`` is emitted by SQLAlchemy's ``begin`` event, so DDL is
transactional and a migration that fails midway leaves the database as it was.

- SQLite: WAL, ``synchronous``, a busy timeout, ``query_only`` for readers; writes begin with
  ``BEGIN IMMEDIATE`` (``conn.info["immediate"]``).
- PostgreSQL: ``sync`` maps to ``synchronous_commit`` ("off" and "normal": ``off``, which still
  survives the client process being killed, the contract of "normal"; "full": ``on``), readers
  get ``default_transaction_read_only``. A single-statement read runs without ``BEGIN``
  (:func:`one_statement`: one round trip instead of three), a load reads one consistent
  snapshot (:func:`snapshot`, ``REPEATABLE READ``), and upgrades are serialised by a
  transaction-level advisory lock (the ``BEGIN IMMEDIATE`` of PostgreSQL). ``psycopg`` (3) is
  the driver: ``postgresql://`` means ``postgresql+psycopg://``.

Every sqlite3/psycopg/SQLAlchemy/Alembic exception is translated to a ``StoreError`` by
:func:`translate` (and :func:`connect` for failures to connect, which name the URL without its
password).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy.exc as sa_exc
from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import NullPool, StaticPool

if TYPE_CHECKING:
    from alembic.config import Config

from drasnap.store.errors import (
    DatabaseError,
    MissingDriverError,
    NotADatabaseError,
    SchemaVersionError,
    StoreError,
    one_line,
)
from drasnap.store.sql import disk, disk_faults

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
#: The newest revision of ``migrations/`` (tests/migrations checks it against Alembic's head):
#: a database already there is opened without importing Alembic, which costs more than the
#: rest of opening a store. A migration added without changing it only makes opens slower.
HEAD_REVISION = "0008"
_OUR_TABLES = {"stores", "layers", "entries", "journal"}


@dataclass(frozen=True)
class Target:
    """Where a store lives: the URL, and for SQLite files the path (for locks and messages)."""

    url: URL
    path: Path | None  # None for in-memory SQLite and for server databases
    display: str

    @property
    def dialect(self) -> str:
        return self.url.get_backend_name()


def parse_target(target: str | os.PathLike[str]) -> Target:
    """A file path or an SQLAlchemy URL, checked for the mistakes we can see before connecting.

    Raises:
        NotADatabaseError: the path is a directory, or its folder does not exist.
        MissingDriverError: the URL needs a driver that is not installed.
    """
    text_target = os.fspath(target)
    if "://" not in text_target:
        return _sqlite_file(Path(text_target))
    try:
        url = make_url(text_target)
        backend = url.get_backend_name()
    except (sa_exc.ArgumentError, ValueError) as exc:
        raise NotADatabaseError(
            f"{shown_target(text_target)!r} is neither a file path nor a database URL "
            "(expected sqlite:///PATH or postgresql+psycopg://USER@HOST[:PORT]/DATABASE)"
        ) from exc
    if backend == "sqlite":
        if url.database in (None, "", ":memory:"):
            return Target(url, None, "sqlite://(memory)")
        return _sqlite_file(Path(url.database))
    if backend in ("postgresql", "postgres"):
        shown = url.render_as_string(hide_password=True)
        if url.port is not None and not 0 < url.port < 65536:
            raise NotADatabaseError(f'{shown}: invalid port number: "{url.port}" (1 to 65535)')
        if not url.database:
            # libpq would pick a database named after the user, which nobody named here.
            raise NotADatabaseError(
                f"{shown} names no database: give one, as in "
                "postgresql+psycopg://USER@HOST[:PORT]/DATABASE"
            )
        if "+" not in url.drivername:  # SQLAlchemy's default would be psycopg2
            url = url.set(drivername="postgresql+psycopg")
        driver = url.get_driver_name()
        if driver != "psycopg":
            # (psycopg2 would not do: it cannot see the BEGIN our recipe emits, and would not
            # commit what follows.)
            raise MissingDriverError(
                f"{url.render_as_string(hide_password=True)}: drasnap talks to PostgreSQL "
                f"through psycopg 3, not {driver}: use postgresql+psycopg://... and install it "
                "with pip install 'drasnap[postgres]'"
            )
        try:
            __import__(driver)
        except ImportError as exc:
            raise MissingDriverError(
                f"{url.render_as_string(hide_password=True)} needs the {driver} driver: "
                "install it with pip install 'drasnap[postgres]'"
            ) from exc
        return Target(url, None, url.render_as_string(hide_password=True))
    raise NotADatabaseError(
        f"{url.render_as_string(hide_password=True)}: drasnap stores live in SQLite or "
        f"PostgreSQL, not in {backend}"
    )


def shown_target(target: str | os.PathLike[str]) -> str:
    """``target`` as it may be printed: a database URL without its password (``***`` in its
    place), a file path as given. The one place a database is made fit to show."""
    text_target = os.fspath(target)
    if "://" not in text_target:
        return text_target
    try:
        return make_url(text_target).render_as_string(hide_password=True)
    except (sa_exc.ArgumentError, ValueError):
        # (A malformed port or host is a ValueError from urllib; show the text without what
        # could be a password: everything between "://" and the last "@".)
        scheme, _, rest = text_target.partition("://")
        return f"{scheme}://***@{rest.rpartition('@')[2]}" if "@" in rest else text_target


def target_dialect(target: str | os.PathLike[str]) -> str:
    """``"sqlite"`` or ``"postgresql"``: where ``target`` would be opened, checked as
    :func:`parse_target` checks it (nothing is connected to or created)."""
    return parse_target(target).dialect


def _sqlite_file(path: Path) -> Target:
    path = path.expanduser()
    try:
        path.stat()
    except FileNotFoundError:
        pass
    except OSError as exc:  # e.g. a folder on the way this user may not enter
        raise NotADatabaseError(f"cannot reach {path}: {exc.strerror or exc}") from exc
    if path.is_dir():
        raise NotADatabaseError(f"{path} is a directory, not a drasnap database file")
    if path.exists() and not path.is_file():
        raise NotADatabaseError(f"{path} is not a drasnap database (not a regular file)")
    if not path.parent.is_dir():
        raise NotADatabaseError(f"cannot create {path}: the folder {path.parent} does not exist")
    if not path.exists() and not os.access(path.parent, os.W_OK | os.X_OK):
        raise NotADatabaseError(
            f"cannot create {path}: this user may not write in the folder {path.parent} "
            "(choose a folder you can write, or give DB a path in one)"
        )
    absolute = path.resolve()
    return Target(URL.create("sqlite", database=str(absolute)), absolute, str(path))


def create(target: Target, *, sync: str = "normal", readonly: bool = False) -> Engine:
    """An engine for ``target`` with one long-lived connection in mind."""
    if target.dialect == "sqlite":
        pool = StaticPool if target.path is None else NullPool
        if readonly and target.path is not None and not _writable(target.path):
            uri = _read_only_uri(target.path)
            engine = create_engine(
                "sqlite://",
                poolclass=pool,
                creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False),
            )
        else:
            engine = create_engine(target.url, poolclass=pool)
        _sqlite_recipe(engine, sync=sync, readonly=readonly)
        return engine
    connect_args = {} if "connect_timeout" in target.url.query else {"connect_timeout": 10}
    engine = create_engine(target.url, poolclass=NullPool, connect_args=connect_args)
    _postgres_recipe(engine, sync=sync, readonly=readonly)
    return engine


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _read_only_uri(path: Path) -> str:
    """A SQLite URI that opens ``path`` read-only where this process cannot write to it or
    to its folder (an archived run, another user's file).

    A reader of a WAL database needs its ``-shm`` file, and creates it when it is missing,
    which fails there ("attempt to write a readonly database"). With no ``-shm`` and no
    ``-wal`` beside it there is nothing but the file to read, and ``immutable=1`` reads it
    without the shared-memory file, as ``sqlite3 -readonly`` does. (Where the folder is
    writable, readers open the file as writers do, under ``query_only``, so that the last
    connection to close tidies the ``-wal`` and ``-shm`` files away.)
    """
    uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"
    wal, shm = (path.with_name(path.name + suffix) for suffix in ("-wal", "-shm"))
    if not shm.exists() and not wal.exists():
        uri += "&immutable=1"
    return uri


def connect(engine: Engine, target: Target) -> Connection:
    """The store's connection; a server that cannot be reached or refuses us is a clear
    ``DatabaseError`` naming the URL without its password."""
    try:
        return engine.connect()
    except sa_exc.DBAPIError as exc:
        if target.dialect == "sqlite":
            raise
        reason = one_line(exc.orig)
        raise DatabaseError(f"cannot connect to {target.display}: {reason}") from exc


WAL_WAIT = 10.0  # seconds, as the busy timeout


def use_wal(cur: Any, *, wait: float = WAL_WAIT) -> None:
    """Put the database in WAL mode, waiting up to ``wait`` seconds for other connections.

    Switching the journal mode needs the database to itself, and SQLite answers "database is
    locked" at once, without its busy timeout, when another connection that also wants the
    switch holds a lock (two writers creating one file at the same moment): retry instead.
    """
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            cur.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def _sqlite_recipe(engine: Engine, *, sync: str, readonly: bool) -> None:
    synchronous = {"off": "OFF", "normal": "NORMAL", "full": "FULL"}[sync]

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        # Switch off pysqlite's own BEGIN handling; SQLAlchemy's begin event emits it instead.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        try:
            cur.execute("PRAGMA busy_timeout = 10000")
            if not readonly:
                use_wal(cur)
            cur.execute(f"PRAGMA synchronous = {synchronous}")
            cur.execute("PRAGMA foreign_keys = ON")
            if readonly:
                cur.execute("PRAGMA query_only = ON")
        finally:
            cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # Writes take the write lock up front: a deferred BEGIN that upgrades later can fail
        # with SQLITE_BUSY at once instead of waiting for busy_timeout.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.info.get("immediate") else "BEGIN")


def _postgres_recipe(engine: Engine, *, sync: str, readonly: bool) -> None:
    synchronous_commit = "on" if sync == "full" else "off"

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        if dbapi_conn.info.transaction_status:  # not idle: SQLAlchemy's first-connect probe
            dbapi_conn.rollback()
        dbapi_conn.autocommit = True  # the begin event below emits BEGIN instead
        with dbapi_conn.cursor() as cur:
            cur.execute(
                "SELECT set_config('synchronous_commit', %s, false), "
                "set_config('default_transaction_read_only', %s, false)",
                (synchronous_commit, "on" if readonly else "off"),
            )

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        statement = conn.info.get(_PG_BEGIN, "BEGIN")
        if statement:
            conn.exec_driver_sql(statement)


_PG_BEGIN = "drasnap.pg_begin"


@contextlib.contextmanager
def _pg_begin(conn: Connection, statement: str) -> Iterator[None]:
    if conn.dialect.name != "postgresql":
        yield
        return
    previous = conn.info.get(_PG_BEGIN)
    conn.info[_PG_BEGIN] = statement
    try:
        yield
    finally:
        if previous is None:
            # (pop: a connection the server closed was invalidated, its info emptied)
            conn.info.pop(_PG_BEGIN, None)
        else:
            conn.info[_PG_BEGIN] = previous


def one_statement(conn: Connection) -> contextlib.AbstractContextManager[None]:
    """Around ``with conn.begin():`` holding one read statement: on PostgreSQL it then runs in
    autocommit (one round trip, no BEGIN/COMMIT); SQLite is left as it is."""
    return _pg_begin(conn, "")


def snapshot(conn: Connection) -> contextlib.AbstractContextManager[None]:
    """Around ``with conn.begin():`` whose reads must see one state: on PostgreSQL a
    ``REPEATABLE READ`` transaction (under the default READ COMMITTED every statement would
    see the latest commit, so a reader racing a checkpoint could mix two). A SQLite read
    transaction is one snapshot already."""
    return _pg_begin(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")


@contextlib.contextmanager
def translate(
    target: Target, doing: str, needed: Callable[[], int] | None = None
) -> Iterator[None]:
    """Translate database exceptions raised in the block into ``StoreError`` subclasses.

    A disk fault (full, read-only, I/O: ``store.sql.disk_faults``) or a database this user may
    not write (``store.sql.disk``) is said in the file system's words; ``needed``: the bytes the
    block was writing, said for a full disk.
    """
    try:
        yield
    except StoreError:
        raise
    except sa_exc.DatabaseError as exc:
        message = str(getattr(exc, "orig", exc))
        if "file is not a database" in message or "not a database" in message:
            raise NotADatabaseError(f"{target.display} is not a drasnap database") from exc
        if disk_faults.is_disk_fault(message):  # full, read-only or I/O: the run stops here
            said = disk_faults.describe(target.display, target.path, message, needed and needed())
            raise DatabaseError(f"{said} (while {doing})") from exc
        if disk.is_unwritable(message) and target.path is not None:
            why = disk.unwritable_message(target.display, target.path, message)
            raise DatabaseError(why) from exc
        if "locked" in message:
            raise DatabaseError(
                f"{target.display} is locked by another connection ({message}) while {doing}"
            ) from exc
        raise DatabaseError(f"{target.display}: {message} (while {doing})") from exc
    except sa_exc.SQLAlchemyError as exc:
        raise DatabaseError(f"{target.display}: {exc} (while {doing})") from exc
    except OSError as exc:
        raise DatabaseError(f"{target.display}: {exc} (while {doing})") from exc


def alembic_config(connection: Connection, script_location: Path | None = None) -> Config:
    # Alembic is imported when a schema is checked, not with this module: the write-behind
    # process opens an existing store and starts faster without it.
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(script_location or MIGRATIONS_DIR))
    cfg.attributes["connection"] = connection
    return cfg


def _at_head(connection: Connection) -> bool:
    """Whether the database records :data:`HEAD_REVISION` (read with plain SQL)."""
    try:
        with connection.begin():
            rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
    except sa_exc.DBAPIError:  # no such table: a new database, or not drasnap's
        return False
    return [tuple(row) for row in rows] == [(HEAD_REVISION,)]


def prepare_schema(
    connection: Connection,
    target: Target,
    *,
    readonly: bool,
    script_location: Path | None = None,
) -> None:
    """Check the database's revision and bring it to head (writers only).

    Raises:
        NotADatabaseError: the database holds tables drasnap did not create.
        SchemaVersionError: the revision is unknown (a newer drasnap wrote it), or a read-only
            open finds a schema that needs upgrading.
    """
    if script_location is None and _at_head(connection):
        return
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    cfg = alembic_config(connection, script_location)
    script = ScriptDirectory.from_config(cfg)
    head = script.get_current_head()
    with connection.begin():
        tables = set(inspect(connection).get_table_names())
        current = MigrationContext.configure(connection).get_current_revision()
    if current is None and tables and not tables <= (_OUR_TABLES | {"alembic_version"}):
        hint = ""
        if target.dialect == "postgresql":
            hint = (
                "; give drasnap a database or a schema of its own (CREATE SCHEMA drasnap, then "
                "?options=-csearch_path%3Ddrasnap in the URL)"
            )
        raise NotADatabaseError(
            f"{target.display} is not a drasnap database (it holds other tables: "
            f"{', '.join(sorted(tables)[:5])}){hint}"
        )
    if current is not None:
        try:
            known = script.get_revision(current) is not None
        except Exception:
            known = False
        if not known:
            raise SchemaVersionError(
                f"{target.display} has schema revision {current}, which this drasnap does not "
                f"know (its newest is {head}): it was written by a newer drasnap; upgrade drasnap"
            )
    if current == head:
        return
    if readonly and current is None and not tables:
        raise NotADatabaseError(f"{target.display} is not a drasnap database (it is empty)")
    if readonly:
        raise SchemaVersionError(
            f"{target.display} has schema revision {current or 'none'} and needs {head}: "
            "open it once for writing to upgrade it"
        )
    connection.info["immediate"] = True
    try:
        with connection.begin():
            if target.dialect == "postgresql":
                # Writers opening a fresh database at once: the first upgrades, the others
                # wait here, then find the schema at head (each statement sees the latest
                # commit) and do nothing.
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:k)"),
                    {"k": pg_lock_key("migrate", pg_schema(connection))},
                )
            command.upgrade(cfg, "head")
    except Exception as exc:
        raise DatabaseError(
            f"upgrading {target.display} from schema {current or 'none'} to {head} failed, "
            f"and nothing was changed: {exc}"
        ) from exc
    finally:
        connection.info["immediate"] = False


def pg_schema(connection: Connection) -> str:
    """The schema our tables live in (the first of the search path that exists)."""
    return str(connection.exec_driver_sql("SELECT current_schema()").scalar())


def pg_lock_key(*parts: str) -> int:
    """A signed 64-bit advisory lock key for ``parts`` (length-prefixed, so unambiguous)."""
    text_key = "drasnap" + "".join(f"|{len(p)}:{p}" for p in parts)
    digest = hashlib.blake2b(text_key.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") - 2**63
