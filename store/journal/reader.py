"""The journal: a store's operations in order, what they mean for each layer, and reading them.

The journal (see ``store.sql.tables``) holds one row per operation. This module reads it without
taking the store's writer lock, through a read-only connection: :class:`Journal` streams records
by sequence number, fetches the writes of given keys through the ``(store_id, kind, key)``
index, and resolves layer instances to a :class:`LayerHistory` — label, depth, when it was
opened and closed, and its :class:`Fate`:

- ``reverted``: a revert dropped it, or it was committed into a layer whose fate is reverted;
- ``committed``: merged into the base (``parent`` 0), or into a layer whose fate is committed;
- ``open``: still open, or committed into a layer whose fate is open.

A layer's ``dropped_seq`` is the sequence number of the revert that discarded its changes (its
own, or that of the layer it ended up merged into); a write is visible to every operation after
it and before that. The base layer (instance 0) is never dropped: its fate is ``committed``.
Fates are resolved by one walk (:class:`store.journal.records.FateWalk`) down each commit
chain, read through the ``(store_id, layer)`` index, so the cost is per layer asked about, not
per journal. The SQL view ``layer_history`` (migrations) says the same in SQL; a test holds the
two together. The record types and that walk live in :mod:`store.journal.records` (plain values,
no SQL); this module re-exports them and holds the reader and its statements.

Like the rest of ``store/`` it knows nothing of Kubernetes: kinds and keys are strings.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import Any

from drasnap.store.codec import encode
from drasnap.store.errors import (
    InvalidValueError,
    JournalError,
    NotADatabaseError,
    StoreNotFoundError,
)
from drasnap.store.interface import Closing, Fate
from drasnap.store.journal.records import (
    FateWalk,
    JournalInfo,
    JournalRecord,
    LayerHistory,
    OpenLayer,
    resolve_layers,
)
from drasnap.store.sql import engines
from drasnap.store.sql.tables import IN_LIST_CHUNK, entries, journal, layers, stores
from sqlalchemy import (
    Connection,
    Engine,
    Select,
    and_,
    bindparam,
    func,
    literal_column,
    select,
    text,
)

__all__ = [
    "Fate",
    "Journal",
    "JournalError",
    "JournalInfo",
    "JournalRecord",
    "LayerHistory",
    "OpenLayer",
]


_WRITES = ("put", "delete")
# Written out exactly as the WHERE of the partial index ix_journal_store_id_layer (migration
# 0002), so SQLite sees that the index covers these queries: a bound ``IN (?, ?, ?)`` would not
# prove it.
_LAYER_OPS = text("journal.op IN ('fork', 'commit', 'revert')")


# -- statements, built once -------------------------------------------------------------------

_COLUMNS = (
    journal.c.seq,
    journal.c.ts,
    journal.c.op,
    journal.c.depth,
    journal.c.layer,
    journal.c.parent,
    journal.c.label,
    journal.c.kind,
    journal.c.key,
    journal.c.value,
    journal.c.digest,
    journal.c.chain,
)
_SID = journal.c.store_id == bindparam("s")
_RANGE = (
    select(*_COLUMNS)
    .where(_SID, journal.c.seq >= bindparam("lo"), journal.c.seq <= bindparam("hi"))
    .order_by(journal.c.seq)
)
# No ORDER BY on the index lookups below: without statistics SQLite would rather walk the
# primary key in seq order than use the selective index. Callers sort the (few) rows.
_KEY_WRITES = select(*_COLUMNS).where(
    _SID,
    journal.c.kind == bindparam("k"),
    journal.c.key.in_(bindparam("keys", expanding=True)),
    journal.c.op.in_(_WRITES),
)
_KIND_WRITES = select(*_COLUMNS).where(
    _SID, journal.c.kind == bindparam("k"), journal.c.op.in_(_WRITES)
)
# Layer operations carry no kind, key, value or digest: reading only the other columns lets
# the covering index answer alone.
_LAYER_COLUMNS = (
    journal.c.seq,
    journal.c.ts,
    journal.c.op,
    journal.c.depth,
    journal.c.layer,
    journal.c.parent,
    journal.c.label,
)
_LAYER_ROWS = select(*_LAYER_COLUMNS).where(
    _SID, journal.c.layer.in_(bindparam("ls", expanding=True)), _LAYER_OPS
)
_ALL_STRUCTURE = select(*_LAYER_COLUMNS).where(_SID, _LAYER_OPS)
_CLOSE_ROWS = select(journal.c.seq, journal.c.op, journal.c.layer, journal.c.parent).where(
    _SID,
    journal.c.layer.in_(bindparam("ls", expanding=True)),
    _LAYER_OPS,
    journal.c.op != "fork",
)
_LABEL_FORKS = select(*_COLUMNS).where(
    _SID, journal.c.op == "fork", journal.c.label == bindparam("l")
)
_OPEN_LAYERS = (
    select(layers.c.depth, layers.c.instance)
    .where(layers.c.store_id == bindparam("s"))
    .order_by(layers.c.depth)
)
_STORE = select(stores).where(stores.c.name == bindparam("n"))
_STORE_NAMES = select(stores.c.name).order_by(stores.c.name)
_ENTRY_VALUES = select(entries.c.kind, entries.c.key, entries.c.value).where(
    entries.c.store_id == bindparam("s"),
    entries.c.kind == bindparam("k"),
    entries.c.key == bindparam("y"),
    entries.c.value.is_not(None),
)
_CONTAINING: dict[tuple[str, int], Select[Any]] = {}


def _containing(dialect: str, fragments: int) -> Select[Any]:
    """Keys of a kind whose put values contain every fragment (a substring prefilter)."""
    cached = _CONTAINING.get((dialect, fragments))
    if cached is not None:
        return cached
    postgres = dialect == "postgresql"
    find = func.strpos if postgres else func.instr
    conditions = [
        find(journal.c.value, bindparam(f"f{i}", type_=journal.c.value.type)) > 0
        for i in range(fragments)
    ]
    # SQLite's unary `+` keeps it off the (kind, key) index: one sequential pass beats a
    # random lookup per row of the kind when most rows are of that kind (claims).
    # PostgreSQL plans from statistics (and has no `+` for text).
    kind = journal.c.kind if postgres else literal_column("+journal.kind", journal.c.kind.type)
    statement = (
        select(journal.c.key)
        .where(_SID, kind == bindparam("k"), journal.c.op == "put", and_(*conditions))
        .distinct()
    )
    _CONTAINING[(dialect, fragments)] = statement
    return statement


def _record(row: Sequence[Any]) -> JournalRecord:
    if len(row) == 7:  # a layer operation, from _LAYER_COLUMNS
        seq, ts, op, depth, layer, parent, label = row
        return JournalRecord(seq, ts, op, depth, layer, parent, label, None, None, None, None)
    return JournalRecord(*row)


# -- the reader -------------------------------------------------------------------------------


class Journal(Closing):
    """Read-only access to one store's journal (and, for its callers, its SQL state).

    Open it with :meth:`Journal.open`; it holds one read-only connection and no lock, so it
    can read while a writer has the store open (it then sees the writer's last checkpoint).

    >>> from drasnap.store import Store
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "j.db")
    >>> with Store.open(path) as s:
    ...     s.put("k", "a", 1)
    >>> with Journal.open(path) as j:
    ...     [r.op for r in j.records()]
    ['put', 'checkpoint']
    """

    def __init__(self, engine: Engine, conn: Connection, target: engines.Target, info: JournalInfo):
        self._engine = engine
        self._conn = conn
        self._target = target
        self._info = info
        self._closed = False

    @classmethod
    def open(cls, target: str | os.PathLike[str], *, name: str = "default") -> Journal:
        """Open the journal of store ``name`` in ``target`` (a path or URL) for reading.

        Raises:
            NotADatabaseError: the file does not exist, or is not a drasnap database.
            SchemaVersionError: the schema is newer than this drasnap, or needs upgrading
                (open the store once for writing).
            StoreNotFoundError: there is no store of that name.
        """
        info_target = engines.parse_target(target)
        _require_existing(info_target)
        engine = engines.create(info_target, readonly=True)
        conn: Connection | None = None
        try:
            with engines.translate(info_target, f"opening the journal of store {name!r}"):
                conn = engine.connect()
                engines.prepare_schema(conn, info_target, readonly=True)
                with conn.begin():
                    row = conn.execute(_STORE, {"n": name}).one_or_none()
                    names = [] if row is not None else list(conn.execute(_STORE_NAMES).scalars())
            if row is None:
                held = f" (it holds {', '.join(map(repr, names))})" if names else " (it is empty)"
                raise StoreNotFoundError(f"no store named {name!r} in {info_target.display}{held}")
            info = JournalInfo(
                store=name,
                store_id=row.id,
                complete=bool(row.journal),
                last_seq=row.next_seq - 1,
                checkpoint_seq=row.checkpoint_seq,
                state_digest=row.state_digest,
                depth=row.depth,
                created_at=row.created_at,
            )
        except BaseException:
            if conn is not None:
                conn.close()
            engine.dispose()
            raise
        return cls(engine, conn, info_target, info)

    def close(self) -> None:
        """Release the connection. Idempotent."""
        if not self._closed:
            self._closed = True
            self._conn.close()
            self._engine.dispose()

    def __repr__(self) -> str:
        return f"<Journal of store {self._info.store!r} in {self._target.display}>"

    @property
    def info(self) -> JournalInfo:
        return self._info

    @property
    def display(self) -> str:
        """The database, for messages (a URL without its password)."""
        return self._target.display

    def require_complete(self, doing: str) -> None:
        """Raise :class:`JournalError` if a writer ran without a journal."""
        if not self._info.complete:
            raise JournalError(
                f"cannot {doing}: the journal of store {self._info.store!r} in {self.display} "
                "is incomplete (a writer opened it with journal=False)"
            )

    def check_seq(self, seq: int, what: str = "seq") -> int:
        """``seq`` if it is a sequence number of this journal, else :class:`InvalidValueError`."""
        last = self._info.last_seq
        if type(seq) is not int or not 1 <= seq <= last:
            raise InvalidValueError(
                f"{what} {seq} is not in the journal of store {self._info.store!r} "
                + (f"(it runs from 1 to {last})" if last else "(it is empty)")
            )
        return seq

    def _tx(self) -> contextlib.AbstractContextManager[Any]:
        """A read transaction, or none if one is open already (a :meth:`records` iterator
        being consumed while other reads run)."""
        return contextlib.nullcontext() if self._conn.in_transaction() else self._conn.begin()

    def _run(self, statement: Any, params: dict[str, Any], doing: str) -> list[JournalRecord]:
        with engines.translate(self._target, doing), self._tx():
            return [_record(r) for r in self._conn.execute(statement, params)]

    # -- records -----------------------------------------------------------------------------

    def records(
        self, *, start: int = 1, stop: int | None = None
    ) -> Generator[JournalRecord, None, None]:
        """Every record with ``start <= seq <= stop`` (default: to the end), in order.

        Streams (one read transaction while the iterator is consumed; close the iterator, or
        consume it, to end it).
        """
        hi = self._info.last_seq if stop is None else stop
        params = {"s": self._info.store_id, "lo": start, "hi": hi}
        doing = f"reading the journal of store {self._info.store!r}"
        conn = self._conn
        with engines.translate(self._target, doing), self._tx():
            result = conn.execution_options(stream_results=True, yield_per=2000).execute(
                _RANGE, params
            )
            try:
                for row in result:
                    yield _record(row)
            finally:
                result.close()  # a reader that stops early leaves no server cursor open

    def key_writes(self, kind: str, keys: Iterable[str]) -> list[JournalRecord]:
        """The put and delete records of ``kind`` for ``keys``, in seq order (by index)."""
        wanted = sorted(set(keys))
        out: list[JournalRecord] = []
        for i in range(0, len(wanted), IN_LIST_CHUNK):
            out += self._run(
                _KEY_WRITES,
                {"s": self._info.store_id, "k": kind, "keys": wanted[i : i + IN_LIST_CHUNK]},
                f"reading the journal of {kind} keys",
            )
        out.sort(key=lambda r: r.seq)
        return out

    def kind_writes(self, kind: str) -> list[JournalRecord]:
        """Every put and delete record of ``kind``, in seq order."""
        out = self._run(
            _KIND_WRITES, {"s": self._info.store_id, "k": kind}, f"reading the journal of {kind}"
        )
        out.sort(key=lambda r: r.seq)
        return out

    def keys_containing(self, kind: str, members: Mapping[str, Any]) -> set[str]:
        """Keys of ``kind`` with a put whose value holds, somewhere, every member of ``members``
        (an object member ``"name": value``, compared as canonical JSON text).

        A prefilter (a substring search, which may also match inside strings): callers check
        the values they read next. One pass over the journal.
        """
        fragments = [f"{encode(name)}:{encode(value)}" for name, value in members.items()]
        if not fragments:
            raise InvalidValueError("keys_containing needs at least one member to look for")
        statement = _containing(self._target.dialect, len(fragments))
        params: dict[str, Any] = {"s": self._info.store_id, "k": kind}
        params.update({f"f{i}": f for i, f in enumerate(fragments)})
        with engines.translate(self._target, f"searching the journal of {kind}"), self._tx():
            return set(self._conn.execute(statement, params).scalars())

    def stored_values(self, kind: str, key: str) -> list[Any]:
        """The values of ``kind/key`` in SQL now, at every depth (for divergence reports)."""
        with engines.translate(self._target, f"reading {kind}/{key}"), self._tx():
            rows = self._conn.execute(
                _ENTRY_VALUES, {"s": self._info.store_id, "k": kind, "y": key}
            ).all()
        return [r.value for r in rows]

    def open_layer_instances(self) -> list[int]:
        """The instance of each open layer at the last checkpoint, depth 1 first."""
        with engines.translate(self._target, "reading the open layers"), self._tx():
            rows = self._conn.execute(_OPEN_LAYERS, {"s": self._info.store_id}).all()
        return [r.instance for r in rows]

    # -- layers ------------------------------------------------------------------------------

    def layers(self, instances: Iterable[int] | None = None) -> dict[int, LayerHistory]:
        """The history of each layer instance asked for (default: every one), by instance.

        Instances the journal has no fork for (incomplete journals) are left out; 0 (the base)
        is never included. Each commit chain is followed, so the answer also holds the layers
        the asked-for ones were merged into.
        """
        if instances is None:
            rows = self._run(_ALL_STRUCTURE, {"s": self._info.store_id}, "reading the layers")
        else:
            rows = [_record(r) for r in self._chains(instances, _LAYER_ROWS)]
        return resolve_layers(rows)

    def dropped_at(self, instances: Iterable[int]) -> dict[int, int | None]:
        """For each instance, the seq of the revert that discarded its changes — its own, or
        that of the layer its commit chain ended in — or None if nothing dropped them
        (committed, still open, or not in the journal). Reads commits and reverts only: the
        cheap way to tell which writes were visible when (see the module docstring).
        """
        wanted = list(instances)
        walk = FateWalk(self._chains(wanted, _CLOSE_ROWS))
        return {start: walk.end(start)[1] for start in wanted}

    def _chains(self, instances: Iterable[int], statement: Any) -> list[Any]:
        """The rows of ``statement`` for ``instances`` and every layer their commits merged
        into, following the chains one step per query (through ix_journal_store_id_layer)."""
        sid = self._info.store_id
        rows: list[Any] = []
        seen: set[int] = set()
        frontier = {i for i in instances if i}
        doing = "reading the layers"
        while frontier:
            batch = sorted(frontier - seen)
            seen.update(batch)
            found: list[Any] = []
            with engines.translate(self._target, doing), self._tx():
                for i in range(0, len(batch), IN_LIST_CHUNK):
                    params = {"s": sid, "ls": batch[i : i + IN_LIST_CHUNK]}
                    found += self._conn.execute(statement, params).all()
            rows += found
            frontier = {r.parent for r in found if r.op == "commit" and r.parent} - seen
        return rows

    def find_layer(self, ref: int | str) -> LayerHistory:
        """The layer with instance ``ref`` (an int, or a string of digits), or the one layer
        labelled ``ref``.

        Raises:
            InvalidValueError: no such layer, or several layers have that label.
        """
        store = self._info.store
        if isinstance(ref, int) or ref.isdigit():
            instance = int(ref)
            found = self.layers([instance]).get(instance)
            if found is None:
                raise InvalidValueError(
                    f"layer instance {instance} is not in the journal of store {store!r}"
                )
            return found
        forks = self._run(_LABEL_FORKS, {"s": self._info.store_id, "l": ref}, "finding a layer")
        if not forks:
            raise InvalidValueError(f"no layer labelled {ref!r} in the journal of store {store!r}")
        if len(forks) > 1:
            ids = ", ".join(str(r.layer) for r in sorted(forks, key=lambda r: r.seq)[:10])
            more = ", ..." if len(forks) > 10 else ""
            raise InvalidValueError(
                f"{len(forks)} layers are labelled {ref!r} in store {store!r} (instances {ids}"
                f"{more}); give the instance number instead"
            )
        return self.layers([forks[0].layer])[forks[0].layer]

    def layer_span(self, ref: int | str) -> tuple[int, int]:
        """``(first, last)``: the seq of the layer's fork, and of its last operation before it
        was closed (the journal's last seq while it is open) — the states at its start and end.

        Raises:
            InvalidValueError: as :meth:`find_layer`.
        """
        layer = self.find_layer(ref)
        end = self._info.last_seq if layer.closed_seq is None else layer.closed_seq - 1
        return layer.opened_seq, end


def _require_existing(target: engines.Target) -> None:
    """Readers must not create a file by opening it."""
    if target.path is not None and not target.path.exists():
        raise NotADatabaseError(f"{target.display} does not exist: give a drasnap database")
