"""The named stores a database holds: one row each, read without opening any of them.

A database (a SQLite file or a PostgreSQL schema) holds many named stores; this lists them with
what the ``stores`` table says of each (when it was created and last checkpointed, its depth and
digest at that checkpoint, the writer holding it), for commands that choose or list stores.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from drasnap.store.errors import NotADatabaseError
from drasnap.store.sql import engines
from drasnap.store.sql.tables import stores
from sqlalchemy import inspect, select

__all__ = ["StoreInfo", "list_stores"]


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """One named store as of its last checkpoint."""

    name: str
    created_at: float  # seconds since the epoch
    checkpointed_at: float | None  # None: never checkpointed (nothing of it is durable)
    depth: int
    state_digest: str
    last_seq: int  # 0 when its journal is empty
    journal_complete: bool
    holder_pid: int | None  # the writer holding it, as it recorded itself (advice only)
    holder_host: str | None


_STORES = select(
    stores.c.name,
    stores.c.created_at,
    stores.c.checkpointed_at,
    stores.c.depth,
    stores.c.state_digest,
    stores.c.next_seq,
    stores.c.journal,
    stores.c.holder_pid,
    stores.c.holder_host,
).order_by(stores.c.created_at, stores.c.id)


def list_stores(target: str | os.PathLike[str], *, missing_ok: bool = False) -> list[StoreInfo]:
    """The stores of ``target`` (a path or URL), oldest first. Opens the database read-only.

    ``missing_ok=True`` is for a writer about to open a store there: a database that does not
    exist yet, or is empty, holds no stores, and one written by an older drasnap is listed
    as it is (the writer's open upgrades it).

    Raises:
        NotADatabaseError: the file does not exist, or is not a drasnap database.
        SchemaVersionError: the schema is newer than this drasnap, or needs upgrading.
        DatabaseError: the database could not be read.
    """
    info = engines.parse_target(target)
    if info.path is not None and not info.path.exists():
        if missing_ok:
            return []
        raise NotADatabaseError(f"{info.display} does not exist: give a drasnap database")
    engine = engines.create(info, readonly=True)
    try:
        with engines.translate(info, "listing its stores"):
            conn = engines.connect(engine, info)
            try:
                with conn.begin():
                    tables = set(inspect(conn).get_table_names())
                if missing_ok and not tables:
                    return []
                if not (missing_ok and "stores" in tables):
                    engines.prepare_schema(conn, info, readonly=True)
                with conn.begin():
                    rows = conn.execute(_STORES).all()
            finally:
                conn.close()
    finally:
        engine.dispose()
    return [
        StoreInfo(
            name=row.name,
            created_at=row.created_at,
            checkpointed_at=row.checkpointed_at,
            depth=row.depth,
            state_digest=row.state_digest,
            last_seq=row.next_seq - 1,
            journal_complete=bool(row.journal),
            holder_pid=row.holder_pid,
            holder_host=row.holder_host,
        )
        for row in rows
    ]
