"""Loading a named store from SQL, and flushing its unflushed state in one transaction.

The durable :class:`store.Store` keeps every layer above the base in memory and writes behind:
nothing reaches SQL until a flush (a checkpoint). A flush writes, in one transaction, the rows
that changed since the previous one — the base keys committed or written since, the dirty keys
of layers that were already in SQL, every row of layers created since — deletes the rows of
layers that were popped, appends the buffered journal, and updates the ``stores`` row with the
new depth, sequence counters and state digest. So a Fork ... Revert that never reaches a
checkpoint costs no SQL at all, and a crash leaves the database exactly at the previous
checkpoint.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, and_, bindparam, delete, func, insert, select, update
from sqlalchemy.dialects import postgresql

from store._sql import one_statement
from store.codec import EMPTY_DIGEST, decode, encode, entry_hash, format_digest, parse_digest
from store.interface import ABSENT, MISS, TOMBSTONE
from store.tables import entries, journal, layers, stores

if TYPE_CHECKING:
    from store.durable import Store, _Layer

Key = tuple[str, str]
_CHUNK = 400  # keys per IN (...) list: well below SQLite's 999/32766 parameter limits

# Row-at-a-time writes at a flush go straight to the driver with executemany and positional
# rows: SQLAlchemy's per-row parameter processing cost ~7 µs a row, more than SQLite itself, and
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
    "kind, key, value, digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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


@dataclass
class Loaded:
    """What a store looks like in SQL at its last checkpoint."""

    store_id: int
    created_at: float
    next_seq: int
    next_layer: int
    digest: int
    journal_complete: bool
    base: dict[str, dict[str, Any]] = field(default_factory=dict)  # empty when the cache is bounded
    layers: list[tuple[int, str | None, float, dict[Key, Any]]] = field(default_factory=list)


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


def load(conn: Connection, row: Any, *, with_base: bool) -> Loaded:
    """Read a store's layers (and its base, unless the cache is bounded)."""
    loaded = Loaded(
        store_id=row.id,
        created_at=row.created_at,
        next_seq=row.next_seq,
        next_layer=row.next_layer,
        digest=parse_digest(row.state_digest),
        journal_complete=bool(row.journal),
    )
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
    for kind, key, depth, tomb, value in conn.execute(query):
        if depth == 0:
            loaded.base.setdefault(kind, {})[key] = decode(value)
        else:
            changes[depth - 1][(kind, key)] = TOMBSTONE if tomb else decode(value)
    return loaded


def read_base_value(conn: Connection, store_id: int, kind: str, key: str) -> Any:
    """The base-layer value of one key in SQL, or ABSENT."""
    with one_statement(conn), conn.begin():
        text = conn.execute(_BASE_VALUE, {"s": store_id, "k": kind, "y": key}).scalar()
    return ABSENT if text is None else decode(text)


def read_base_items(conn: Connection, store_id: int, kind: str) -> dict[str, Any]:
    with one_statement(conn), conn.begin():
        rows = conn.execute(_BASE_ITEMS, {"s": store_id, "k": kind}).all()
    return {key: decode(value) for key, value in rows}


def read_base_kinds(conn: Connection, store_id: int) -> set[str]:
    with one_statement(conn), conn.begin():
        return set(conn.execute(_BASE_KINDS, {"s": store_id}).scalars())


def read_base_count(conn: Connection, store_id: int) -> int:
    with one_statement(conn), conn.begin():
        return int(conn.execute(_BASE_COUNT, {"s": store_id}).scalar_one())


def read_base_present(conn: Connection, store_id: int, keys: Sequence[Key]) -> set[Key]:
    """Which of ``keys`` have a row in the base layer in SQL (batched: one query per chunk)."""
    by_kind: dict[str, list[str]] = {}
    for kind, key in keys:
        by_kind.setdefault(kind, []).append(key)
    found: set[Key] = set()
    with conn.begin():
        for kind, names in by_kind.items():
            for start in range(0, len(names), _CHUNK):
                rows = conn.execute(
                    _BASE_PRESENT, {"s": store_id, "k": kind, "ys": names[start : start + _CHUNK]}
                )
                found.update((kind, key) for (key,) in rows)
    return found


def _resolved_encoded(
    conn: Connection, store_id: int, keys: Sequence[Key]
) -> dict[Key, str | None]:
    """The effective encoded value in SQL (newest depth wins) of each key; None when absent."""
    by_kind: dict[str, list[str]] = {}
    for kind, key in keys:
        by_kind.setdefault(kind, []).append(key)
    best: dict[Key, tuple[int, str | None]] = {}
    for kind, names in by_kind.items():
        for start in range(0, len(names), _CHUNK):
            chunk = names[start : start + _CHUNK]
            rows = conn.execute(
                select(entries.c.key, entries.c.depth, entries.c.tombstone, entries.c.value).where(
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


class _Encoder:
    """Encodes each value object once per flush (values are immutable by contract)."""

    def __init__(self, known: Iterable[tuple[Any, str]] = ()) -> None:
        self._memo: dict[int, tuple[Any, str]] = {id(value): (value, text) for value, text in known}

    def __call__(self, value: Any) -> str:
        hit = self._memo.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        text = encode(value)
        self._memo[id(value)] = (value, text)
        return text


def _row(store_id: int, ck: Key, depth: int, value: Any, enc: _Encoder) -> tuple[Any, ...]:
    if value is TOMBSTONE:
        return (store_id, ck[0], ck[1], depth, True, None)
    return (store_id, ck[0], ck[1], depth, False, enc(value))


def flush(st: Store, conn: Connection, *, checkpoint_row: bool) -> None:
    """Write everything not yet in SQL, in one transaction; then mark it flushed in memory.

    On failure nothing in memory changes, and the database is as it was (the transaction is
    rolled back), so the call can be retried.
    """
    enc = _Encoder(st._encoded.values())
    sid = st._store_id
    layers_mem: list[_Layer] = st._layers

    # The digest moves by the entries whose effective value changed since the last flush.
    unknown = [ck for ck, old in st._touched.items() if old is MISS]
    old_sql: dict[Key, str | None] = {}
    if unknown:  # (an empty transaction would still cost two round trips on PostgreSQL)
        with conn.begin():
            old_sql = _resolved_encoded(conn, sid, unknown)
    total = st._digest
    for ck, old in st._touched.items():
        new = st._effective(ck)
        if old is new:
            continue
        old_enc = old_sql[ck] if old is MISS else (None if old is ABSENT else enc(old))
        new_enc = None if new is ABSENT else enc(new)
        if old_enc == new_enc:
            continue
        if old_enc is not None:
            total -= entry_hash(ck[0], ck[1], old_enc)
        if new_enc is not None:
            total += entry_hash(ck[0], ck[1], new_enc)
    digest = format_digest(total)

    first_fresh = next((i + 1 for i, ly in enumerate(layers_mem) if ly.fresh), len(layers_mem) + 1)
    cut = min(st._truncate, first_fresh)

    deletes: list[tuple[Any, ...]] = []
    upserts: list[tuple[Any, ...]] = []
    inserts: list[tuple[Any, ...]] = []
    for ck, value in st._base_pending.items():
        if value is TOMBSTONE:  # the base holds no tombstones: the row just goes
            deletes.append((sid, ck[0], ck[1], 0))
        else:
            upserts.append(_row(sid, ck, 0, value, enc))
    for depth, layer in enumerate(layers_mem[: cut - 1], start=1):
        if layer.dirty:
            for ck in layer.dirty:
                value = layer.changes.get(ck, MISS)
                if value is MISS:
                    deletes.append((sid, ck[0], ck[1], depth))
                else:
                    upserts.append(_row(sid, ck, depth, value, enc))
    new_layers: list[dict[str, Any]] = []
    for depth, layer in enumerate(layers_mem[cut - 1 :], start=cut):
        new_layers.append(
            {"s": sid, "d": depth, "i": layer.instance, "l": layer.label, "c": layer.created_at}
        )
        inserts.extend(_row(sid, ck, depth, v, enc) for ck, v in layer.changes.items())

    seq = st._seq
    now = time.time()
    # Buffered entries are (ts, op, depth, layer, parent, label, kind, key, encoded value);
    # their sequence number is the store's next one plus their place in the buffer.
    jrows: list[tuple[Any, ...]] = [
        (sid, q, *r, None) for q, r in enumerate(st._journal or (), seq)
    ]
    seq += len(jrows)
    if checkpoint_row:
        top = layers_mem[-1].instance if layers_mem else 0
        jrows.append(
            (
                sid,
                seq,
                now,
                "checkpoint",
                len(layers_mem),
                top,
                None,
                None,
                None,
                None,
                None,
                digest,
            )
        )
        seq += 1

    conn.info["immediate"] = True
    try:
        with conn.begin():
            if cut <= st._sql_depth:
                conn.execute(_DELETE_ENTRIES_FROM, {"s": sid, "d": cut})
                conn.execute(_DELETE_LAYERS_FROM, {"s": sid, "d": cut})
            _executemany(conn, "delete_entry", deletes)
            _executemany(conn, "upsert_entry", upserts)
            if new_layers:
                conn.execute(_INSERT_LAYER, new_layers)
            _executemany(conn, "insert_entry", inserts)
            _executemany(conn, "insert_journal", jrows)
            conn.execute(
                _UPDATE_STORE,
                {
                    "s": sid,
                    "d": len(layers_mem),
                    "q": seq,
                    "nl": st._next_layer,
                    "g": digest,
                    "cq": seq - 1 if checkpoint_row else st._checkpoint_seq,
                    "ca": now,
                },
            )
    finally:
        conn.info["immediate"] = False

    # Committed: now (and only now) the memory side may forget what it was keeping for SQL.
    st._digest = total
    st._seq = seq
    if checkpoint_row:
        st._checkpoint_seq = seq - 1
    st._touched.clear()
    st._base_pending.clear()
    if st._journal is not None:
        st._journal.clear()
    st._encoded.clear()
    for layer in layers_mem:
        layer.fresh = False
        layer.dirty = None
    st._truncate = st._INFINITY
    st._sql_depth = len(layers_mem)
