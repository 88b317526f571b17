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

>>> from store import View, register_view
>>> ACTIVE = View(
...     "active_stores",
...     sqlite="SELECT name FROM stores WHERE holder_pid IS NOT NULL",
...     postgresql="SELECT name FROM stores WHERE holder_pid IS NOT NULL",
... )
>>> register_view(ACTIVE)  # doctest: +SKIP
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from hashlib import blake2b

from sqlalchemy import Connection, bindparam, delete, insert, inspect, select

from store.errors import InvalidValueError
from store.tables import metadata, registered_views

__all__ = ["View", "install_views", "iso_utc_sql", "register_view", "registered"]

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
#: Views the migrations own: a registered view cannot take their names.
STORE_VIEWS = frozenset({"current_objects", "layer_history"})


@dataclass(frozen=True, slots=True)
class View:
    """A view: its name and its ``SELECT`` in each dialect (the texts must agree).

    Raises:
        InvalidValueError: a name that is not a lowercase SQL identifier, or that a table or
            a view of the store already has.
    """

    name: str
    sqlite: str
    postgresql: str

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise InvalidValueError(
                f"a view name is a lowercase SQL identifier (letters, digits, _), got {self.name!r}"
            )
        if self.name in STORE_VIEWS or self.name in metadata.tables:
            raise InvalidValueError(f"{self.name!r} is a table or view of the store itself")

    def select(self, dialect: str) -> str:
        """The ``SELECT`` for ``dialect`` (``sqlite`` or ``postgresql``)."""
        return self.postgresql if dialect == "postgresql" else self.sqlite

    def digest(self, dialect: str) -> str:
        return blake2b(self.select(dialect).encode(), digest_size=16).hexdigest()


_REGISTERED: dict[str, View] = {}


def register_view(view: View) -> None:
    """Have every store opened for writing from now on (in this process) create ``view``, or
    replace it when its text changed. Registering a view of the same name again replaces the
    earlier definition."""
    _REGISTERED.pop(view.name, None)
    _REGISTERED[view.name] = view


def registered() -> list[View]:
    """The registered views, in registration order."""
    return list(_REGISTERED.values())


def iso_utc_sql(expression: str, dialect: str) -> str:
    """SQL turning ``expression`` (seconds since the epoch) into ISO-8601 UTC text with
    milliseconds, ``2026-12-02T09:30:00.123+00:00``: exactly what
    ``datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")`` gives, as
    ``drasnap history`` prints times. NULL stays NULL.

    Like Python, the fraction is rounded to microseconds, then cut to milliseconds.
    """
    e = f"({expression})"
    if dialect == "postgresql":
        micros = f"round(({e} - floor({e})) * 1000000)"
        seconds = f"(floor({e}) + floor({micros} / 1000000))"
        millis = f"(mod(({micros})::bigint, 1000000) / 1000)"
        day_time = (
            f"to_char(to_timestamp({seconds}) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS')"
        )
        return f"{day_time} || '.' || lpad(({millis})::text, 3, '0') || '+00:00'"
    micros = f"CAST(round(({e} - CAST({e} AS INTEGER)) * 1000000) AS INTEGER)"
    seconds = f"(CAST({e} AS INTEGER) + {micros} / 1000000)"
    millis = f"({micros} % 1000000 / 1000)"
    day_time = f"strftime('%Y-%m-%dT%H:%M:%S', {seconds}, 'unixepoch')"
    return f"{day_time} || '.' || substr('00' || {millis}, -3, 3) || '+00:00'"


_RECORDED = select(registered_views.c.name, registered_views.c.digest)
_FORGET = delete(registered_views).where(registered_views.c.name == bindparam("n"))
_RECORD = insert(registered_views).values(
    name=bindparam("n"), digest=bindparam("g"), installed_at=bindparam("t")
)


def _outdated(conn: Connection, dialect: str) -> bool:
    recorded = {name: digest for name, digest in conn.execute(_RECORDED)}
    return any(recorded.get(v.name) != v.digest(dialect) for v in _REGISTERED.values())


def install_views(conn: Connection, *, force: bool = False) -> bool:
    """Create (or replace) the registered views, inside the caller's transaction, when one is
    missing or changed (always with ``force``: a migration may have dropped them). Returns
    whether it changed anything. A database without the ``registered_views`` table (a schema
    older than it) is left alone."""
    if not _REGISTERED:
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
    views = list(_REGISTERED.values())
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
    if not _REGISTERED:
        return True
    return not _outdated(conn, conn.dialect.name)
