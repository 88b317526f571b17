"""Opening a named store in a database, and letting it go: the durable store's connection side.

:func:`connect` does, for :meth:`store.Store.open`, everything before the store has its state:
it creates the engine and the connection, checks and upgrades the schema, creates the views the
layers above registered (writers), finds or creates the store's row, takes the writer lock and
records the holder, and loads the state of the last checkpoint. The result is a
:class:`Connected`, which :func:`disconnect` releases (lock, holder record, connection,
engine). :func:`drop` deletes a store.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from drasnap.store.errors import NotADatabaseError, StoreNotFoundError
from drasnap.store.options import StoreOptions
from drasnap.store.rows import Loaded
from drasnap.store.sql import disk_faults, engines, persist, views
from drasnap.store.sql.lock import (
    STALE_LOCK_WAIT,
    TRANSITION_WAIT,
    WriterLock,
    holder_is_gone,
    locked_error,
)
from sqlalchemy import Connection, Engine

__all__ = ["Connected", "connect", "disconnect", "drop"]


@dataclass
class Connected:
    """A store's database side, open: what :func:`disconnect` releases."""

    target: engines.Target
    engine: Engine
    conn: Connection | None = None
    lock: WriterLock | None = None
    store_id: int = 0
    readonly: bool = True
    backend: str = ""  # the database and its version, e.g. "sqlite 3.40.1"


def connect(
    target: str | os.PathLike[str],
    name: str,
    *,
    readonly: bool,
    options: StoreOptions,
    script_location: Path | None = None,
    after_lock: Callable[[engines.Target, WriterLock], None] | None = None,
) -> tuple[Connected, Loaded]:
    """Open store ``name`` in ``target`` (creating it for a writer) and load its last checkpoint.

    ``after_lock`` is called once a writer holds the lock, before the state is loaded.

    Raises: as :meth:`store.Store.open`. Nothing stays open when it raises.
    """
    where = engines.parse_target(target)
    if readonly and where.path is not None and not where.path.exists():
        raise NotADatabaseError(f"{where.display} does not exist")
    if not readonly and where.path is not None:
        disk_faults.check_room(where.path)  # a still-full disk fails here, not after a run
    engine = engines.create(where, sync=options.sync, readonly=readonly)
    opened = Connected(where, engine, readonly=readonly)
    try:
        with engines.translate(where, f"opening store {name!r}"):
            opened.conn = conn = engines.connect(engine, where)
            version = conn.dialect.server_version_info or ()
            opened.backend = f"{conn.dialect.name} {'.'.join(map(str, version))}".strip()
            loaded = _attach(opened, conn, name, options, script_location, after_lock)
    except BaseException:
        disconnect(opened)
        raise
    return opened, loaded


def _attach(
    opened: Connected,
    conn: Connection,
    name: str,
    options: StoreOptions,
    script_location: Path | None,
    after_lock: Callable[[engines.Target, WriterLock], None] | None,
) -> Loaded:
    where = opened.target
    readonly = opened.readonly
    engines.prepare_schema(conn, where, readonly=readonly, script_location=script_location)
    if not readonly:
        _ensure_views(conn)
    with conn.begin():
        row = persist.find_store(conn, name)
    if row is None:
        if readonly:
            raise StoreNotFoundError(f"no store named {name!r} in {where.display}")
        with _immediate(conn), conn.begin():
            if persist.find_store(conn, name) is None:
                persist.create_store(conn, name, journal_on=options.journal)
    if not readonly:
        opened.lock = take_lock(conn, where, name)
        if after_lock is not None:
            after_lock(where, opened.lock)
    with engines.snapshot(conn), conn.begin():
        row = persist.find_store(conn, name)
        loaded = persist.load(conn, row, with_base=options.cache_size is None)
    opened.store_id = loaded.store_id
    if not readonly:
        with _immediate(conn), conn.begin():
            persist.claim_store(
                conn,
                loaded.store_id,
                pid=os.getpid(),
                host=socket.gethostname(),
                journal_on=options.journal,
            )
    return loaded


def disconnect(opened: Connected) -> None:
    """Release the writer lock (and the holder record), the connection and the engine."""
    conn = opened.conn
    if opened.lock is not None:
        if conn is not None and not opened.readonly:
            # Best effort: the holder pid is only advice; the lock itself is what counts.
            with contextlib.suppress(Exception), conn.begin():
                persist.release_store(conn, opened.store_id)
        opened.lock.release(conn)
        opened.lock = None
    if conn is not None:
        # Closing a broken connection must not mask the error that broke it.
        with contextlib.suppress(Exception):
            conn.close()
        opened.conn = None
    opened.engine.dispose()


def drop(target: str | os.PathLike[str], name: str) -> bool:
    """Delete store ``name`` and everything it holds, in one transaction (see
    :meth:`store.Store.drop`)."""
    where = engines.parse_target(target)
    if where.path is not None and not where.path.exists():
        return False
    engine = engines.create(where)
    conn: Connection | None = None
    lock: WriterLock | None = None
    try:
        with engines.translate(where, f"dropping store {name!r}"):
            conn = engines.connect(engine, where)
            engines.prepare_schema(conn, where, readonly=True)
            with conn.begin():
                row = persist.find_store(conn, name)
            if row is None:
                return False
            lock = take_lock(conn, where, name)
            with _immediate(conn), conn.begin():
                persist.drop_store(conn, row.id)
            return True
    finally:
        if lock is not None:
            lock.release(conn)
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
        engine.dispose()


@contextlib.contextmanager
def _immediate(conn: Connection) -> Iterator[None]:
    """The next transaction writes (SQLite: ``BEGIN IMMEDIATE``)."""
    conn.info["immediate"] = True
    try:
        yield
    finally:
        conn.info["immediate"] = False


def _ensure_views(conn: Connection) -> None:
    """Create the views registered by the layers above (``store.sql.views``) if one is missing or
    changed: a read when they are current."""
    with conn.begin():
        current = views.views_current(conn)
    if not current:
        with _immediate(conn), conn.begin():
            views.install_views(conn)


def take_lock(conn: Connection, target: engines.Target, name: str) -> WriterLock:
    """The writer lock of store ``name``, or ``StoreLockedError`` naming its holder."""
    lock = WriterLock(target, name)
    deadline = time.monotonic() + STALE_LOCK_WAIT
    while not lock.acquire(conn):
        with conn.begin():
            holder = persist.find_store(conn, name)
        pid, host = (holder.holder_pid, holder.holder_host) if holder else (None, None)
        # A holder killed a moment ago may still hold it on PostgreSQL, until the server
        # notices the dropped connection: wait for that, not for a live holder. No holder
        # recorded is a moment between two states (a writer that has taken the lock and not
        # yet written its row, or one closing, which clears its row before freeing the lock):
        # wait for it too, briefly.
        if pid is None:
            deadline = min(deadline, time.monotonic() + TRANSITION_WAIT)
            gone = True
        else:
            gone = holder_is_gone(pid, host)
        if not gone or time.monotonic() > deadline:
            raise locked_error(name, target.display, pid, host)
        time.sleep(0.02)
    return lock
