"""The durable store's SQL side: loading a named store, reading its base rows, and writing a
flush.

The durable :class:`store.Store` keeps every layer above the base in memory and writes behind:
nothing reaches SQL until a flush (a checkpoint). :func:`flush` takes a
:class:`store.rows.Pending` — the rows that changed since the previous flush: the base keys
committed or written since, the dirty keys of layers that were already in SQL, every row of
layers created since, the depth from which popped layers go, the buffered journal and the new
counters and state digest — and writes it in one transaction, with the journal chain
(``store.chain``) of the rows in its checkpoint row. So a Fork ... Revert that never
reaches a checkpoint costs no SQL at all, and a crash leaves the database exactly at the
previous checkpoint. Only plain values cross: this module never sees the store's objects.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from drasnap.store.chain import chain_of
from drasnap.store.codec import EMPTY_DIGEST, decode, parse_digest
from drasnap.store.interface import ABSENT, TOMBSTONE
from drasnap.store.rows import EntryRow, Flushed, Loaded, Pending, is_checkpoint, with_chain
from drasnap.store.sql import engines
from drasnap.store.sql.tables import IN_LIST_CHUNK, entries, journal, layers, stores
from sqlalchemy import Connection, and_, bindparam, delete, func, insert, select, update

Key = tuple[str, str]

# Row-at-a-time writes at a flush go straight to the driver with executemany and positional
# rows: SQLAlchemy's per-row parameter processing costs more than SQLite's own work, and
# tuples bind faster than dicts. The text is portable (ON CONFLICT ... DO UPDATE is the same on
# SQLite >= 3.24 and PostgreSQL); only the placeholder differs: ``?`` (qmark) or ``%s``.
_RAW = {
    "delete_entry": "DELETE FROM entries WHERE store_id = ? AND kind = ? AND key = ? AND depth = ?",
    "insert_entry": "INSERT INTO entries (store_id, kind, key, depth, tombstone, value) "
    "VALUES (?, ?, ?, ?, ?, ?)",
    "upsert_entry": "INSERT INTO entries (store_id, kind, key, depth, tombstone, value) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (store_id, kind, key, depth) "
    "DO UPDATE SET tombstone = excluded.tombstone, value = excluded.value",
    "insert_journal": "INSERT INTO journal (store_id, seq, ts, op, depth, layer, parent, label, "
    "kind, key, value, digest, chain) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
}
_PLACEHOLDER = {"qmark": "?", "format": "%s", "pyformat": "%s"}
_RENDERED: dict[str, dict[str, str]] = {}


def _raw(conn: Connection, name: str) -> str:
    style = conn.dialect.paramstyle
    rendered = _RENDERED.get(style)
    if rendered is None:
        if style not in _PLACEHOLDER:
            raise NotImplementedError(f"unsupported DB-API paramstyle {style}")
        rendered = {key: sql.replace("?", _PLACEHOLDER[style]) for key, sql in _RAW.items()}
        _RENDERED[style] = rendered
    return rendered[name]


def _executemany(conn: Connection, name: str, rows: list[tuple[Any, ...]]) -> None:
    if rows:
        conn.exec_driver_sql(_raw(conn, name), rows)


_DELETE_ENTRIES_FROM = delete(entries).where(
    entries.c.store_id == bindparam("s"), entries.c.depth >= bindparam("d")
)
_DELETE_LAYERS_FROM = delete(layers).where(
    layers.c.store_id == bindparam("s"), layers.c.depth >= bindparam("d")
)
_INSERT_LAYER = insert(layers).values(
    store_id=bindparam("s"),
    depth=bindparam("d"),
    instance=bindparam("i"),
    label=bindparam("l"),
    created_at=bindparam("c"),
)
_UPDATE_STORE = (
    update(stores)
    .where(stores.c.id == bindparam("s"))
    .values(
        depth=bindparam("d"),
        next_seq=bindparam("q"),
        next_layer=bindparam("nl"),
        state_digest=bindparam("g"),
        checkpoint_seq=bindparam("cq"),
        checkpointed_at=bindparam("ca"),
    )
)
_CHAIN_AT = select(journal.c.chain).where(
    journal.c.store_id == bindparam("s"), journal.c.seq == bindparam("q")
)
_BASE_VALUE = select(entries.c.value).where(
    entries.c.store_id == bindparam("s"),
    entries.c.kind == bindparam("k"),
    entries.c.key == bindparam("y"),
    entries.c.depth == 0,
)
_BASE_ITEMS = select(entries.c.key, entries.c.value).where(
    entries.c.store_id == bindparam("s"), entries.c.kind == bindparam("k"), entries.c.depth == 0
)
_BASE_KINDS = (
    select(entries.c.kind)
    .where(entries.c.store_id == bindparam("s"), entries.c.depth == 0)
    .distinct()
)
_BASE_PRESENT = select(entries.c.key).where(
    entries.c.store_id == bindparam("s"),
    entries.c.kind == bindparam("k"),
    entries.c.key.in_(bindparam("ys", expanding=True)),
    entries.c.depth == 0,
)
_BASE_COUNT = select(func.count()).where(entries.c.store_id == bindparam("s"), entries.c.depth == 0)


def find_store(conn: Connection, name: str) -> Any:
    return conn.execute(select(stores).where(stores.c.name == name)).one_or_none()


def create_store(conn: Connection, name: str, *, journal_on: bool) -> None:
    values = {
        "name": name,
        "created_at": time.time(),
        "depth": 0,
        "next_seq": 1,
        "next_layer": 1,
        "state_digest": EMPTY_DIGEST,
        "journal": journal_on,
    }
    if conn.dialect.name == "postgresql":
        # Two writers creating one name at once: the second's insert waits for the first and
        # then does nothing (it goes on to find the store locked), where a plain INSERT would
        # fail on the unique name. SQLite serialises the two with BEGIN IMMEDIATE instead.
        # (Imported here: the PostgreSQL dialect's import is a tenth of a second on SQLite.)
        from sqlalchemy.dialects import postgresql

        conn.execute(
            postgresql.insert(stores)
            .values(**values)
            .on_conflict_do_nothing(index_elements=["name"])
        )
        return
    conn.execute(insert(stores).values(**values))


def claim_store(conn: Connection, store_id: int, *, pid: int, host: str, journal_on: bool) -> None:
    """Record the writer, and mark the journal incomplete for good if this writer keeps none."""
    values: dict[str, Any] = {"holder_pid": pid, "holder_host": host}
    if not journal_on:
        values["journal"] = False
    conn.execute(update(stores).where(stores.c.id == store_id).values(**values))


def release_store(conn: Connection, store_id: int) -> None:
    conn.execute(
        update(stores).where(stores.c.id == store_id).values(holder_pid=None, holder_host=None)
    )


def drop_store(conn: Connection, store_id: int) -> None:
    """Delete a store and everything it holds (inside the caller's transaction)."""
    for table in (journal, entries, layers):
        conn.execute(delete(table).where(table.c.store_id == store_id))
    conn.execute(delete(stores).where(stores.c.id == store_id))


def load(conn: Connection, row: Any, *, with_base: bool, decoded: bool = True) -> Loaded:
    """Read a store's layers (and its base, unless the cache is bounded); ``decoded=False``
    keeps each value as its stored JSON text (the write-behind process mirrors texts)."""
    loaded = Loaded(
        store_id=row.id,
        created_at=row.created_at,
        next_seq=row.next_seq,
        next_layer=row.next_layer,
        digest=parse_digest(row.state_digest),
        journal_complete=bool(row.journal),
        checkpoint_seq=row.checkpoint_seq,
    )
    if row.checkpoint_seq is not None:
        loaded.chain = conn.execute(_CHAIN_AT, {"s": row.id, "q": row.checkpoint_seq}).scalar()
    layer_rows = conn.execute(
        select(layers.c.depth, layers.c.instance, layers.c.label, layers.c.created_at)
        .where(layers.c.store_id == row.id)
        .order_by(layers.c.depth)
    ).all()
    changes: list[dict[Key, Any]] = [{} for _ in layer_rows]
    for depth, instance, label, created in layer_rows:
        loaded.layers.append((instance, label, created, changes[depth - 1]))
    query = select(
        entries.c.kind, entries.c.key, entries.c.depth, entries.c.tombstone, entries.c.value
    ).where(entries.c.store_id == row.id)
    if not with_base:
        query = query.where(entries.c.depth > 0)
    value_of = decode if decoded else str
    for kind, key, depth, tomb, value in conn.execute(query):
        if depth == 0:
            loaded.base.setdefault(kind, {})[key] = value_of(value)
        else:
            changes[depth - 1][(kind, key)] = TOMBSTONE if tomb else value_of(value)
    return loaded


def read_base_value(conn: Connection, store_id: int, kind: str, key: str) -> Any:
    """The base-layer value of one key in SQL, or ABSENT."""
    with engines.one_statement(conn), conn.begin():
        text = conn.execute(_BASE_VALUE, {"s": store_id, "k": kind, "y": key}).scalar()
    return ABSENT if text is None else decode(text)


def read_base_items(conn: Connection, store_id: int, kind: str) -> dict[str, Any]:
    with engines.one_statement(conn), conn.begin():
        rows = conn.execute(_BASE_ITEMS, {"s": store_id, "k": kind}).all()
    return {key: decode(value) for key, value in rows}


def read_base_kinds(conn: Connection, store_id: int) -> set[str]:
    with engines.one_statement(conn), conn.begin():
        return set(conn.execute(_BASE_KINDS, {"s": store_id}).scalars())


def read_base_count(conn: Connection, store_id: int) -> int:
    with engines.one_statement(conn), conn.begin():
        return int(conn.execute(_BASE_COUNT, {"s": store_id}).scalar_one())


def read_base_present(conn: Connection, store_id: int, keys: Sequence[Key]) -> set[Key]:
    """Which of ``keys`` have a row in the base layer in SQL (batched: one query per chunk)."""
    by_kind: dict[str, list[str]] = {}
    for kind, key in keys:
        by_kind.setdefault(kind, []).append(key)
    found: set[Key] = set()
    with conn.begin():
        for kind, names in by_kind.items():
            for start in range(0, len(names), IN_LIST_CHUNK):
                chunk = names[start : start + IN_LIST_CHUNK]
                rows = conn.execute(_BASE_PRESENT, {"s": store_id, "k": kind, "ys": chunk})
                found.update((kind, key) for (key,) in rows)
    return found


def resolved_encoded(conn: Connection, store_id: int, keys: Sequence[Key]) -> dict[Key, str | None]:
    """The effective encoded value in SQL (newest depth wins) of each key; None when absent.

    In its own read transaction (an empty one would still cost two round trips on PostgreSQL,
    so callers skip the call when they have no keys).
    """
    by_kind: dict[str, list[str]] = {}
    for kind, key in keys:
        by_kind.setdefault(kind, []).append(key)
    best: dict[Key, tuple[int, str | None]] = {}
    with conn.begin():
        for kind, names in by_kind.items():
            for start in range(0, len(names), IN_LIST_CHUNK):
                chunk = names[start : start + IN_LIST_CHUNK]
                rows = conn.execute(
                    select(
                        entries.c.key, entries.c.depth, entries.c.tombstone, entries.c.value
                    ).where(
                        and_(
                            entries.c.store_id == store_id,
                            entries.c.kind == kind,
                            entries.c.key.in_(chunk),
                        )
                    )
                )
                for key, depth, tomb, value in rows:
                    k = (kind, key)
                    if k not in best or best[k][0] < depth:
                        best[k] = (depth, None if tomb else value)
    return {k: (best[k][1] if k in best else None) for k in keys}


class SqlBase:
    """The base layer's rows of one store, read on demand (a bounded cache's misses): the
    :class:`store.cache.BaseRows` of the durable store. Errors come out as ours."""

    __slots__ = ("_conn", "_store_id", "_target")

    def __init__(self, conn: Connection, store_id: int, target: engines.Target) -> None:
        self._conn = conn
        self._store_id = store_id
        self._target = target

    def value(self, kind: str, key: str) -> Any:
        with engines.translate(self._target, f"reading {kind}/{key}"):
            return read_base_value(self._conn, self._store_id, kind, key)

    def items(self, kind: str) -> dict[str, Any]:
        with engines.translate(self._target, f"listing {kind}"):
            return read_base_items(self._conn, self._store_id, kind)

    def kinds(self) -> set[str]:
        with engines.translate(self._target, "listing kinds"):
            return read_base_kinds(self._conn, self._store_id)

    def count(self) -> int:
        with engines.translate(self._target, "counting the base layer"):
            return read_base_count(self._conn, self._store_id)

    def present(self, keys: Sequence[Key]) -> set[Key]:
        with engines.translate(self._target, "counting the base layer"):
            return read_base_present(self._conn, self._store_id, keys)


def flush(conn: Connection, pending: Pending) -> Flushed:
    """Write ``pending`` in one transaction; returns what was written.

    On failure the database is as it was (the transaction is rolled back) and the caller still
    holds ``pending``, so the call can be retried.
    """
    rows = pending.journal
    chain = pending.chain_previous
    if rows and is_checkpoint(rows[-1]):
        chain = chain_of(chain, rows)
        rows = [*rows[:-1], with_chain(rows[-1], chain)]
    conn.info["immediate"] = True
    try:
        with conn.begin():
            write(conn, pending, rows)
    finally:
        conn.info["immediate"] = False
    return Flushed(
        next_seq=pending.next_seq,
        checkpoint_seq=pending.checkpoint_seq,
        state_digest=pending.state_digest,
        chain=chain,
        entry_rows=len(pending.deletes) + len(pending.upserts) + len(pending.inserts),
        journal_rows=len(rows),
    )


def insert_journal(conn: Connection, rows: list[tuple[Any, ...]]) -> None:
    """Insert journal rows (in the caller's transaction)."""
    _executemany(conn, "insert_journal", rows)


def write_entries(conn: Connection, deletes: list[EntryRow], upserts: list[EntryRow]) -> None:
    """Delete and write entry rows (in the caller's transaction): the base rows written ahead
    by the write-behind process, and a flush's."""
    _executemany(conn, "delete_entry", deletes)
    _executemany(conn, "upsert_entry", upserts)


def write(conn: Connection, pending: Pending, rows: list[tuple[Any, ...]]) -> None:
    """The statements of a flush, in the caller's transaction: ``pending``'s entry and layer
    rows, the journal ``rows`` (``pending.journal`` with the chain filled in), the counters."""
    sid = pending.store_id
    cut = pending.truncate_from
    if cut is not None:
        conn.execute(_DELETE_ENTRIES_FROM, {"s": sid, "d": cut})
        conn.execute(_DELETE_LAYERS_FROM, {"s": sid, "d": cut})
    write_entries(conn, pending.deletes, pending.upserts)
    if pending.new_layers:
        conn.execute(
            _INSERT_LAYER,
            [
                {"s": sid, "d": d, "i": i, "l": label, "c": c}
                for d, i, label, c in pending.new_layers
            ],
        )
    _executemany(conn, "insert_entry", pending.inserts)
    insert_journal(conn, rows)
    conn.execute(
        _UPDATE_STORE,
        {
            "s": sid,
            "d": pending.depth,
            "q": pending.next_seq,
            "nl": pending.next_layer,
            "g": pending.state_digest,
            "cq": pending.checkpoint_seq,
            "ca": pending.written_at,
        },
    )
