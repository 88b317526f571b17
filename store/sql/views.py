"""SQL views that the layers above the store define, created in every database a writer opens.

The store's own views (``current_objects``, ``layer_history``) belong to the migrations. A layer
above may add views over the store's tables and views that read its own values (the snapshot's
``allocation_events`` reads ResourceClaim JSON): it registers a :class:`View` once, at import,
and from then on every store opened for writing — and every migration run — creates it in the
database, so people who debug with plain ``sqlite3`` or ``psql`` see it there like any view.

Each view created is recorded in the ``registered_views`` table with a digest of its text, so a
changed definition replaces the old one at the next writer's open, and an unchanged one costs a
single read. A view nobody registers any more is left alone (a process that never imported the
layer above must not drop its views). Registered views are created in registration order, so a
view may read one registered before it; when one must be replaced, all are dropped and created
again (on PostgreSQL a view cannot be dropped under one that reads it).

>>> from drasnap.store import View, register_view
>>> ACTIVE = View(
...     "active_stores",
...     sqlite="SELECT name FROM stores WHERE holder_pid IS NOT NULL",
...     postgresql="SELECT name FROM stores WHERE holder_pid IS NOT NULL",
... )
>>> register_view(ACTIVE)  # doctest: +SKIP
"""

from __future__ import annotations

import time

from drasnap.store.sql.tables import registered_views
from drasnap.store.sql.view_registry import registered
from sqlalchemy import Connection, bindparam, delete, insert, inspect, select

__all__ = ["install_views", "views_current"]

_RECORDED = select(registered_views.c.name, registered_views.c.digest)
_FORGET = delete(registered_views).where(registered_views.c.name == bindparam("n"))
_RECORD = insert(registered_views).values(
    name=bindparam("n"), digest=bindparam("g"), installed_at=bindparam("t")
)


def _outdated(conn: Connection, dialect: str) -> bool:
    recorded = {name: digest for name, digest in conn.execute(_RECORDED)}
    return any(recorded.get(v.name) != v.digest(dialect) for v in registered())


def install_views(conn: Connection, *, force: bool = False) -> bool:
    """Create (or replace) the registered views, inside the caller's transaction, when one is
    missing or changed (always with ``force``: a migration may have dropped them). Returns
    whether it changed anything. A database without the ``registered_views`` table (a schema
    older than it) is left alone."""
    views = registered()
    if not views:
        return False
    dialect = conn.dialect.name
    if force and not inspect(conn).has_table(registered_views.name):
        return False
    if dialect == "postgresql":
        # Writers opening at once: one replaces the views, the others wait, then find them
        # current (each statement sees the latest commit).
        conn.exec_driver_sql(f"LOCK TABLE {registered_views.name} IN SHARE ROW EXCLUSIVE MODE")
    if not force and not _outdated(conn, dialect):
        return False
    cascade = " CASCADE" if dialect == "postgresql" else ""
    # Driver SQL: a view's text is not SQLAlchemy's (``:MI`` in a time format is no parameter).
    for view in reversed(views):
        conn.exec_driver_sql(f"DROP VIEW IF EXISTS {view.name}{cascade}")
    now = time.time()
    for view in views:
        conn.exec_driver_sql(f"CREATE VIEW {view.name} AS {view.select(dialect)}")
        conn.execute(_FORGET, {"n": view.name})
        conn.execute(_RECORD, {"n": view.name, "g": view.digest(dialect), "t": now})
    return True


def views_current(conn: Connection) -> bool:
    """Whether every registered view is in the database as registered (a read, no lock)."""
    if not registered():
        return True
    return not _outdated(conn, conn.dialect.name)
