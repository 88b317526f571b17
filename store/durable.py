"""``Store``: the durable versioned store — patch layers in memory, written behind to SQL.

Data model in memory (see ``store.tables`` for the one in SQL):

- ``_values``: per kind, key -> effective value. With an unbounded cache (the default) it holds
  every live key, so ``get`` is one dict lookup at any depth and ``items`` one dict copy. With
  ``cache_size=N`` it is a cache of at most N keys per kind (with negative entries), and misses
  resolve through the layers, the unflushed base writes, then the base rows in SQL.
- ``_layers``: the open layers above the base. Each holds its ``changes`` ((kind, key) -> value or
  TOMBSTONE) and an ``undo`` log ((kind, key) -> the effective value before the layer first
  touched it). Fork pushes one (O(1)); Revert pops it and restores its undo log (O(changes));
  Commit merges changes and undo into the layer below (O(changes)); into the base, the changes
  join the unflushed base writes and tombstones are dropped (the base holds no tombstones).
- Write-behind: ``persist.flush`` writes at each checkpoint only what changed since the previous
  one, in one transaction with the buffered journal. A Fork ... Revert between two checkpoints
  costs no SQL.

Durability: after ``checkpoint()`` returns, the state (open layers and labels included) survives
the process being killed; with ``sync="full"`` it also survives a power cut. Reopening after a
crash gives the state of the last checkpoint — an operation boundary — never a half-applied one.
Automatic checkpoints (the policy) happen every ``checkpoint_interval`` seconds of work (30),
when more than ``max_pending`` journal entries wait (200,000), and at a commit into the base
unless the last checkpoint is less than ``checkpoint_on_base_commit`` seconds old (1.0: a loop
that commits into the base all the time pays for at most one checkpoint a second; 0: at every
such commit; None: never); ``auto_checkpoint=False`` leaves them all to ``checkpoint()`` and
``maybe_checkpoint()``. ``close()`` checkpoints.

Values returned by ``get``/``items`` are shared with the cache and read-only by contract: never
mutate them; ``put`` a new value instead. The store never mutates a value after ``put``.
One writer per named store (``StoreLockedError`` for the second); readers (``readonly=True``)
see the last checkpoint and never block the writer. A Store is not thread-safe.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

from sqlalchemy import Connection, Engine

from store import _sql, persist
from store.codec import (
    check_name,
    check_text,
    checked_encoding,
    encode,
    entry_hash,
    format_digest,
)
from store.errors import (
    InvalidValueError,
    NotADatabaseError,
    ReadOnlyError,
    StoreClosedError,
    StoreNotFoundError,
)
from store.interface import ABSENT, MISS, TOMBSTONE, LayerInfo

Key = tuple[str, str]
_now = time.time
_monotonic = time.monotonic
_CHECK_EVERY = 256  # ops between looks at the clock for the automatic checkpoint

_OPTIONS: dict[str, Any] = {
    "cache_size": None,
    "journal": True,
    "auto_checkpoint": True,
    "checkpoint_interval": 30.0,
    "checkpoint_on_base_commit": 1.0,
    "max_pending": 200_000,
    "sync": "normal",
}


class _Layer:
    __slots__ = ("changes", "created_at", "dirty", "fresh", "instance", "label", "undo")

    def __init__(
        self, label: str | None, instance: int, created_at: float, fresh: bool = True
    ) -> None:
        self.label = label
        self.instance = instance
        self.created_at = created_at
        self.changes: dict[Key, Any] = {}
        self.undo: dict[Key, Any] = {}
        # fresh: not in SQL yet, written whole at the next flush; else dirty holds what changed.
        self.fresh = fresh
        self.dirty: set[Key] | None = None


class Store:
    """A durable, versioned key-value store of JSON values, organised as patch layers.

    Open it with :meth:`Store.open`; see the module docstring for the data model, durability
    and concurrency. Every method raises :class:`StoreClosedError` after ``close()``, and
    every write raises :class:`ReadOnlyError` on a read-only store.
    """

    _INFINITY: ClassVar[int] = 1 << 62

    def __init__(self) -> None:  # use Store.open
        self._closed = True
        self._readonly = True
        self._blocked = True  # closed or read-only: one test on the write paths
        self._name = ""
        self._values: dict[str, dict[str, Any]] = {}
        self._layers: list[_Layer] = []
        self._base_pending: dict[Key, Any] = {}
        self._touched: dict[Key, Any] = {}
        # (ts, op, depth, layer, parent, label, kind, key, encoded value) per operation since
        # the last flush; the flush turns each into a journal row.
        self._journal: list[tuple[Any, ...]] | None = None
        # The latest value put to each key since the last flush, with the encoding its check
        # produced: the flush's entry rows reuse it instead of encoding again.
        self._encoded: dict[Key, tuple[Any, str]] = {}
        self._bounded: int | None = None
        self._seq = 1
        self._next_layer = 1
        self._checkpoint_seq: int | None = None
        self._digest = 0
        self._truncate = self._INFINITY
        self._sql_depth = 0
        self._store_id = 0
        self._created_at = 0.0
        self._ops_left = _CHECK_EVERY
        self._last_checkpoint = _monotonic()
        self._engine: Engine | None = None
        self._conn: Connection | None = None
        self._lock: _sql.WriterLock | None = None
        self._target: _sql.Target | None = None
        self._auto = True
        self._interval: float | None = 30.0
        self._on_base_commit: float | None = 1.0
        self._max_pending = 200_000
        self._journal_complete = True
        self._backend = ""

    # -- opening and closing ---------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        target: str | os.PathLike[str] = "drasnap.db",
        *,
        name: str = "default",
        readonly: bool = False,
        **options: Any,
    ) -> Store:
        """Open (creating if needed) the store ``name`` in ``target``.

        ``target`` is a file path or an SQLAlchemy URL (``sqlite:///path``, ``sqlite://`` for a
        throw-away in-memory database, ``postgresql+psycopg://...``). Opening runs the schema
        migrations (``alembic upgrade head``) when the database needs them.

        Options: ``cache_size`` (None = every value in memory; N = at most N cached values per
        kind, the rest read from SQL), ``journal`` (True), ``auto_checkpoint`` (True),
        ``checkpoint_interval`` (30.0 seconds of work; None = never by time),
        ``checkpoint_on_base_commit`` (1.0: a commit into the base checkpoints if the last
        checkpoint is at least this many seconds old; 0 = always; None = never),
        ``max_pending`` (200,000 journal entries),
        ``sync`` ("normal": a checkpoint survives the process being killed; "full": also a
        power cut; "off": neither, for throw-away runs; on PostgreSQL "full" is
        ``synchronous_commit=on`` and the others ``off``, which survives a killed client).

        Raises:
            NotADatabaseError: the target is a directory or not a drasnap database.
            SchemaVersionError: the database was written by a newer drasnap.
            StoreLockedError: another process has the store open for writing.
            StoreNotFoundError: ``readonly=True`` and no store of that name exists.
            MissingDriverError: the URL needs a driver that is not installed.
            InvalidValueError: an unknown option or a bad option value.
        """
        script_location: Path | None = options.pop("_script_location", None)  # tests only
        settings = dict(_OPTIONS)
        unknown = set(options) - set(settings)
        if unknown:
            raise InvalidValueError(
                f"unknown Store option(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(settings))}"
            )
        settings.update(options)
        _check_settings(settings, name)
        store = cls()
        target_info = _sql.parse_target(target)
        if readonly and target_info.path is not None and not target_info.path.exists():
            raise NotADatabaseError(f"{target_info.display} does not exist")
        store._target = target_info
        store._name = name
        store._readonly = readonly
        store._bounded = settings["cache_size"]
        store._auto = bool(settings["auto_checkpoint"])
        store._interval = settings["checkpoint_interval"]
        gap = settings["checkpoint_on_base_commit"]
        store._on_base_commit = (0.0 if gap else None) if isinstance(gap, bool) else gap
        store._max_pending = int(settings["max_pending"])
        engine = _sql.create(target_info, sync=settings["sync"], readonly=readonly)
        store._engine = engine
        try:
            with _sql.translate(target_info, f"opening store {name!r}"):
                store._conn = _sql.connect(engine, target_info)
                store._attach(script_location, journal_on=bool(settings["journal"]))
        except BaseException:
            store._teardown()
            raise
        store._closed = False
        store._blocked = readonly
        return store

    @classmethod
    def drop(cls, target: str | os.PathLike[str], *, name: str) -> bool:
        """Delete the store ``name`` from ``target`` with everything it holds (its base, layers
        and journal), in one transaction. Returns False when there was no such store.

        Raises:
            StoreLockedError: a writer has the store open.
            NotADatabaseError, SchemaVersionError, DatabaseError: as for :meth:`open`.
        """
        _check_settings(dict(_OPTIONS), name)
        target_info = _sql.parse_target(target)
        if target_info.path is not None and not target_info.path.exists():
            return False
        engine = _sql.create(target_info)
        conn: Connection | None = None
        lock: _sql.WriterLock | None = None
        try:
            with _sql.translate(target_info, f"dropping store {name!r}"):
                conn = _sql.connect(engine, target_info)
                _sql.prepare_schema(conn, target_info, readonly=True)
                with conn.begin():
                    row = persist.find_store(conn, name)
                if row is None:
                    return False
                lock = _take_lock(conn, target_info, name)
                conn.info["immediate"] = True
                try:
                    with conn.begin():
                        persist.drop_store(conn, row.id)
                finally:
                    conn.info["immediate"] = False
                return True
        finally:
            if lock is not None:
                lock.release(conn)
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
            engine.dispose()

    def _attach(self, script_location: Path | None, *, journal_on: bool) -> None:
        conn = self._conn
        target = self._target
        assert conn is not None and target is not None
        version = conn.dialect.server_version_info or ()
        self._backend = f"{conn.dialect.name} {'.'.join(map(str, version))}".strip()
        _sql.prepare_schema(conn, target, readonly=self._readonly, script_location=script_location)
        with conn.begin():
            row = persist.find_store(conn, self._name)
        if row is None:
            if self._readonly:
                raise StoreNotFoundError(f"no store named {self._name!r} in {target.display}")
            conn.info["immediate"] = True
            try:
                with conn.begin():
                    if persist.find_store(conn, self._name) is None:
                        persist.create_store(conn, self._name, journal_on=journal_on)
            finally:
                conn.info["immediate"] = False
        if not self._readonly:
            self._lock = _take_lock(conn, target, self._name)
        with _sql.snapshot(conn), conn.begin():
            row = persist.find_store(conn, self._name)
            loaded = persist.load(conn, row, with_base=self._bounded is None)
        if not self._readonly:
            conn.info["immediate"] = True
            try:
                with conn.begin():
                    persist.claim_store(
                        conn,
                        loaded.store_id,
                        pid=os.getpid(),
                        host=socket.gethostname(),
                        journal_on=journal_on,
                    )
            finally:
                conn.info["immediate"] = False
            self._journal = [] if journal_on else None
        self._journal_complete = loaded.journal_complete and journal_on
        self._install(loaded)

    def _install(self, loaded: persist.Loaded) -> None:
        self._store_id = loaded.store_id
        self._created_at = loaded.created_at
        self._seq = loaded.next_seq
        self._next_layer = loaded.next_layer
        self._digest = loaded.digest
        bounded = self._bounded is not None
        values = self._values = loaded.base
        for instance, label, created, changes in loaded.layers:
            layer = _Layer(label, instance, created, fresh=False)
            layer.changes = changes
            undo = layer.undo
            for ck, new in changes.items():
                kind, key = ck
                kc = values.get(kind)
                if kc is None:
                    kc = values[kind] = {}
                # With a bounded cache the value below is not known: Revert then evicts.
                undo[ck] = MISS if bounded else kc.get(key, ABSENT)
                if bounded or new is TOMBSTONE:
                    kc.pop(key, None)
                else:
                    kc[key] = new
            self._layers.append(layer)
        self._sql_depth = len(self._layers)
        self._last_checkpoint = _monotonic()
        if not bounded:
            self.get = self._get_unbounded  # type: ignore[method-assign]

    def close(self, *, checkpoint: bool = True) -> None:
        """Checkpoint (writers) and release the database and the writer lock. Idempotent.

        ``checkpoint=False`` abandons what changed since the last checkpoint instead, as a
        crash would: for a caller whose state is midway between two safe points.
        """
        if self._closed:
            return
        try:
            if checkpoint and not self._readonly and self._has_unflushed():
                self.checkpoint()
        finally:
            self._closed = True
            self._blocked = True
            self._values = {}
            self._layers = []
            self._teardown()

    def _teardown(self) -> None:
        conn = self._conn
        if self._lock is not None:
            if conn is not None and not self._readonly:
                # Best effort: the holder pid is only advice; the lock itself is what counts.
                with contextlib.suppress(Exception), conn.begin():
                    persist.release_store(conn, self._store_id)
            self._lock.release(conn)
            self._lock = None
        if conn is not None:
            # Closing a broken connection must not mask the error that broke it.
            with contextlib.suppress(Exception):
                conn.close()
            self._conn = None
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self._target.display if self._target else "?"
        state = "closed" if self._closed else f"depth {len(self._layers)}"
        return f"<Store {self._name!r} in {where}, {state}>"

    @property
    def name(self) -> str:
        return self._name

    @property
    def backend(self) -> str:
        """The database underneath and its version, e.g. ``sqlite 3.40.1``."""
        return self._backend

    @property
    def readonly(self) -> bool:
        return self._readonly

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def journal_complete(self) -> bool:
        """True when every operation since the store was created is in the journal."""
        return self._journal_complete

    # -- guards ----------------------------------------------------------------------------------

    def _writable(self, action: str) -> None:
        if self._closed:
            raise StoreClosedError(f"Cannot {action} a closed store ({self._name!r}).")
        if self._readonly:
            raise ReadOnlyError(
                f"Cannot {action} store {self._name!r}: it was opened with readonly=True."
            )

    def _readable(self) -> None:
        if self._closed:
            raise StoreClosedError(f"Cannot read from a closed store ({self._name!r}).")

    # -- layers ----------------------------------------------------------------------------------

    @property
    def depth(self) -> int:
        """Number of open forks (0 = only the base layer)."""
        return len(self._layers)

    def fork(self, label: str | None = None) -> int:
        """Push an empty layer labelled ``label``; returns the new depth. O(1), no SQL."""
        if self._blocked:
            self._writable("fork")
        if label is not None:
            if type(label) is not str:
                raise InvalidValueError(f"a layer label must be a string or None, got {label!r}")
            if not label.isascii() or "\0" in label:
                check_text(label, "layer label")
        layers = self._layers
        parent = layers[-1].instance if layers else 0
        instance = self._next_layer
        self._next_layer = instance + 1
        now = _now()
        layers.append(_Layer(label, instance, now))
        depth = len(layers)
        if self._journal is not None:
            self._journal.append((now, "fork", depth, instance, parent, label, None, None, None))
        # No policy tick here: every fork ends in a revert or commit, which ticks.
        return depth

    def revert(self) -> int:
        """Drop the top layer and its changes; a no-op at the base. Returns the new depth.

        O(keys changed in the layer), no SQL.
        """
        if self._blocked:
            self._writable("revert")
        layers = self._layers
        if not layers:
            return 0
        top = layers.pop()
        depth = len(layers) + 1
        if top.undo:
            self._undo(top)
        if not top.fresh and depth < self._truncate:
            self._truncate = depth
        if self._journal is not None:
            self._journal.append(
                (_now(), "revert", depth, top.instance, None, None, None, None, None)
            )
        self._ops_left -= 1
        if self._ops_left <= 0:
            self._tick()
        return depth - 1

    def _undo(self, top: _Layer) -> None:
        """Restore the values a dropped layer overwrote (its undo log)."""
        values = self._values
        if not top.fresh:
            # The layer was in SQL at the last checkpoint, so these keys may change effective
            # value now without having been written since: the digest needs their old values.
            # (A fresh layer's keys were all written after the checkpoint: already recorded.)
            touched = self._touched
            unknown = self._bounded is not None
            for kind, key in top.undo:
                if (kind, key) not in touched:
                    touched[kind, key] = MISS if unknown else values[kind].get(key, ABSENT)
        if self._bounded is None:
            last = None
            kc: dict[str, Any] = {}
            for (kind, key), prev in top.undo.items():
                if kind is not last:  # layers mostly touch one kind at a time
                    kc = values[kind]
                    last = kind
                if prev is ABSENT:
                    kc.pop(key, None)
                else:
                    kc[key] = prev
            return
        for (kind, key), prev in top.undo.items():
            kc = values[kind]
            if prev is MISS:
                kc.pop(key, None)  # unknown below: the next read resolves it
            else:
                kc[key] = prev  # ABSENT is a negative cache entry
        for kc in values.values():
            self._evict(kc)

    def commit(self) -> int:
        """Merge the top layer into the one below; a no-op at the base. Returns the new depth.

        O(keys changed in the layer), no SQL (unless it triggers the automatic checkpoint on
        a commit into the base).
        """
        if self._blocked:
            self._writable("commit")
        layers = self._layers
        if not layers:
            return 0
        top = layers.pop()
        depth = len(layers) + 1
        if not top.fresh and depth < self._truncate:
            self._truncate = depth
        if layers:
            parent = layers[-1]
            pundo = parent.undo
            for ck, prev in top.undo.items():
                if ck not in pundo:
                    pundo[ck] = prev
            parent.changes.update(top.changes)
            if not parent.fresh:
                if parent.dirty is None:
                    parent.dirty = set(top.changes)
                else:
                    parent.dirty.update(top.changes)
            into = parent.instance
        else:
            self._base_pending.update(top.changes)
            into = 0
        if self._journal is not None:
            self._journal.append(
                (_now(), "commit", depth, top.instance, into, None, None, None, None)
            )
        gap = self._on_base_commit
        if (
            not layers  # only a commit into the base reads the clock
            and self._auto
            and gap is not None
            and _monotonic() - self._last_checkpoint >= gap
        ):
            self.checkpoint()
            return 0
        self._ops_left -= 1
        if self._ops_left <= 0:
            self._tick()
        return depth - 1

    def layers(self) -> list[LayerInfo]:
        """The open layers, base first: depth, label, creation time, number of entries."""
        self._readable()
        out = [LayerInfo(0, None, self._created_at, self._base_size())]
        out.extend(
            LayerInfo(d, ly.label, ly.created_at, len(ly.changes))
            for d, ly in enumerate(self._layers, start=1)
        )
        return out

    def _base_size(self) -> int:
        """Live keys in the base layer: the effective state with every layer's undo applied."""
        below: dict[Key, Any] = {}
        for layer in self._layers:
            for ck, prev in layer.undo.items():
                below.setdefault(ck, prev)
        if self._bounded is not None:
            assert self._conn is not None
            with _sql.translate(self._require_target(), "counting the base layer"):
                count = persist.read_base_count(self._conn, self._store_id)
                pending = self._base_pending
                in_sql = (
                    persist.read_base_present(self._conn, self._store_id, list(pending))
                    if pending
                    else set()
                )
                for ck, value in pending.items():
                    count += (value is not TOMBSTONE) - (ck in in_sql)
            return count
        count = sum(len(kc) for kc in self._values.values())
        for ck, prev in below.items():
            now_live = ck[1] in self._values.get(ck[0], {})
            count += (prev is not ABSENT) - now_live
        return count

    # -- reads -----------------------------------------------------------------------------------

    def get(self, kind: str, key: str, default: Any = None) -> Any:
        """The effective value of ``kind/key``, or ``default``. O(1) from the cache."""
        kc = self._values.get(kind)
        if kc is not None:
            value = kc.get(key, MISS)
            if value is not MISS:
                return default if value is ABSENT else value
        if self._bounded is None:
            if self._closed:
                self._readable()
            return default
        value = self._resolve(kind, key)
        return default if value is ABSENT else value

    def _get_unbounded(self, kind: str, key: str, default: Any = None) -> Any:
        # With every live value in memory, a miss means absent; the store's most frequent call
        # is then one dict lookup. Closing empties ``_values``, so a closed store still raises.
        kc = self._values.get(kind)
        if kc is not None:
            return kc.get(key, default)
        if self._closed:
            self._readable()
        return default

    def _resolve(self, kind: str, key: str) -> Any:
        """Bounded cache miss: layers top-down, unflushed base writes, then SQL."""
        self._readable()
        value = self._effective((kind, key))
        kc = self._values.get(kind)
        if kc is None:
            kc = self._values[kind] = {}
        kc[key] = value
        self._evict(kc)
        return value

    def _effective(self, ck: Key) -> Any:
        """The effective value of a key (value or ABSENT), consulting SQL only when bounded."""
        if self._bounded is None:
            return self._values.get(ck[0], {}).get(ck[1], ABSENT)
        kc = self._values.get(ck[0])
        if kc is not None:
            hit = kc.get(ck[1], MISS)
            if hit is not MISS:
                return hit
        for layer in reversed(self._layers):
            value = layer.changes.get(ck, MISS)
            if value is not MISS:
                return ABSENT if value is TOMBSTONE else value
        value = self._base_pending.get(ck, MISS)
        if value is not MISS:
            return ABSENT if value is TOMBSTONE else value
        assert self._conn is not None
        with _sql.translate(self._require_target(), f"reading {ck[0]}/{ck[1]}"):
            return persist.read_base_value(self._conn, self._store_id, ck[0], ck[1])

    def _evict(self, kc: dict[str, Any]) -> None:
        limit = self._bounded
        if limit is not None:
            while len(kc) > limit:
                del kc[next(iter(kc))]

    def in_current_layer(self, kind: str, key: str) -> bool:
        """Was ``kind/key`` set (not deleted) in the top layer? At depth 0: does it exist?"""
        self._readable()
        if self._layers:
            value = self._layers[-1].changes.get((kind, key), TOMBSTONE)
            return value is not TOMBSTONE
        return self.get(kind, key, MISS) is not MISS

    def items(self, kind: str) -> dict[str, Any]:
        """A fresh dict of every live key of ``kind`` and its value."""
        self._readable()
        if self._bounded is None:
            kc = self._values.get(kind)
            return dict(kc) if kc else {}
        assert self._conn is not None
        with _sql.translate(self._require_target(), f"listing {kind}"):
            result = persist.read_base_items(self._conn, self._store_id, kind)
        overlays = [self._base_pending] + [ly.changes for ly in self._layers]
        for changes in overlays:
            for (k, key), value in changes.items():
                if k != kind:
                    continue
                if value is TOMBSTONE:
                    result.pop(key, None)
                else:
                    result[key] = value
        return result

    def keys(self, kind: str) -> list[str]:
        """The live keys of ``kind``."""
        if self._bounded is None:
            self._readable()
            return list(self._values.get(kind, ()))
        return list(self.items(kind))

    def count(self, kind: str) -> int:
        """The number of live keys of ``kind``."""
        if self._bounded is None:
            self._readable()
            return len(self._values.get(kind, ()))
        return len(self.items(kind))

    def kinds(self) -> list[str]:
        """Every kind with at least one live key, sorted."""
        self._readable()
        if self._bounded is None:
            return sorted(k for k, kc in self._values.items() if kc)
        assert self._conn is not None
        with _sql.translate(self._require_target(), "listing kinds"):
            names = persist.read_base_kinds(self._conn, self._store_id)
        names.update(ck[0] for ck in self._base_pending)
        for layer in self._layers:
            names.update(ck[0] for ck in layer.changes)
        return sorted(k for k in names if self.count(k))

    def state_digest(self) -> str:
        """Digest of the effective state; equal for equal states on every backend.

        O(keys changed since the last checkpoint) with an unbounded cache.
        """
        self._readable()
        total = self._digest
        if self._touched:
            for ck, old in self._touched.items():
                new = self._effective(ck)
                if old is MISS:
                    return self._full_digest()
                if old is new:
                    continue
                if old is not ABSENT:
                    total -= entry_hash(ck[0], ck[1], encode(old))
                if new is not ABSENT:
                    total += entry_hash(ck[0], ck[1], encode(new))
        return format_digest(total)

    def _full_digest(self) -> str:
        total = 0
        for kind in self.kinds():
            for key, value in self.items(kind).items():
                total += entry_hash(kind, key, encode(value))
        return format_digest(total)

    # -- writes ----------------------------------------------------------------------------------

    def put(self, kind: str, key: str, value: Any) -> None:
        """Set ``kind/key`` to ``value`` in the top layer. In memory; durable at the next
        checkpoint.

        Raises:
            InvalidValueError: empty kind or key, or a value that is not JSON.
        """
        if self._blocked:
            self._writable("put into")
        check_name(kind, key)
        self._write(kind, key, value, "put", checked_encoding(value, kind=kind, key=key))

    def delete(self, kind: str, key: str) -> None:
        """Tombstone ``kind/key`` in the top layer (also when it does not exist).

        Raises:
            InvalidValueError: empty kind or key.
        """
        if self._blocked:
            self._writable("delete from")
        check_name(kind, key)
        self._write(kind, key, TOMBSTONE, "delete", None)

    def _write(self, kind: str, key: str, value: Any, op: str, text: str | None) -> None:
        """Apply a checked put (``text``: the value's encoding) or, with TOMBSTONE, a delete to
        the top layer, and journal it.

        The journal buffer holds the encoding, not the value, so a value overwritten before
        the flush is freed at once (a buffer of values kept whole object trees alive, and
        Python's full GC passes grew with them); the flush reuses it for the entry rows.
        """
        ck = (kind, key)
        kc = self._values.get(kind)
        if kc is None:
            kc = self._values[kind] = {}
        bounded = self._bounded is not None
        old = kc.get(key, MISS if bounded else ABSENT)
        if ck not in self._touched:
            self._touched[ck] = old
        layers = self._layers
        if layers:
            top = layers[-1]
            if ck not in top.undo:
                top.undo[ck] = old
            top.changes[ck] = value
            if not top.fresh:
                if top.dirty is None:
                    top.dirty = {ck}
                else:
                    top.dirty.add(ck)
        else:
            self._base_pending[ck] = value
        if value is TOMBSTONE:
            if bounded:
                kc[key] = ABSENT
            else:
                kc.pop(key, None)
        else:
            kc[key] = value
            if bounded:
                self._evict(kc)
        if text is not None:
            self._encoded[ck] = (value, text)
        if self._journal is not None:
            top_instance = layers[-1].instance if layers else 0
            self._journal.append(
                (_now(), op, len(layers), top_instance, None, None, kind, key, text)
            )
        self._ops_left -= 1
        if self._ops_left <= 0:
            self._tick()

    # -- durability ------------------------------------------------------------------------------

    def _has_unflushed(self) -> bool:
        return bool(
            self._journal
            or self._base_pending
            or self._touched
            or self._truncate != self._INFINITY
            or any(ly.fresh or ly.dirty for ly in self._layers)
        )

    def checkpoint(self) -> None:
        """Make everything so far durable, open layers and labels included, in one transaction.

        Writes what changed since the previous checkpoint, the buffered journal and a
        ``checkpoint`` journal entry carrying the state digest. A no-op on a read-only store.

        Raises:
            DatabaseError: the write failed; nothing was lost from memory, so retrying is safe.
        """
        if self._closed:
            self._readable()
        if self._readonly:
            return
        assert self._conn is not None
        with _sql.translate(self._require_target(), f"checkpointing store {self._name!r}"):
            persist.flush(self, self._conn, checkpoint_row=self._journal is not None)
        self._last_checkpoint = _monotonic()
        self._ops_left = _CHECK_EVERY

    def maybe_checkpoint(self) -> bool:
        """Checkpoint if the policy says it is due (interval elapsed or too much pending).

        For callers that turn ``auto_checkpoint`` off and checkpoint at their own safe points.
        Returns whether it checkpointed.
        """
        self._writable("checkpoint")
        if self._due():
            self.checkpoint()
            return True
        return False

    def _due(self) -> bool:
        if self._journal is not None and len(self._journal) >= self._max_pending:
            return True
        if len(self._base_pending) >= self._max_pending:
            return True
        interval = self._interval
        return interval is not None and _monotonic() - self._last_checkpoint >= interval

    def _tick(self) -> None:
        self._ops_left = _CHECK_EVERY
        if self._auto and self._due():
            self.checkpoint()

    def _require_target(self) -> _sql.Target:
        assert self._target is not None
        return self._target


def _take_lock(conn: Connection, target: _sql.Target, name: str) -> _sql.WriterLock:
    """The writer lock of store ``name``, or ``StoreLockedError`` naming its holder."""
    lock = _sql.WriterLock(target, name)
    deadline = _monotonic() + _sql.STALE_LOCK_WAIT
    while not lock.acquire(conn):
        with conn.begin():
            holder = persist.find_store(conn, name)
        pid, host = (holder.holder_pid, holder.holder_host) if holder else (None, None)
        # A holder killed a moment ago may still hold it on PostgreSQL, until the server
        # notices the dropped connection: wait for that, not for a live holder.
        if not _sql.holder_is_gone(pid, host) or _monotonic() > deadline:
            raise _sql.locked_error(name, target.display, pid, host)
        time.sleep(0.02)
    return lock


def _check_settings(settings: dict[str, Any], name: str) -> None:
    if type(name) is not str or not name:
        raise InvalidValueError(f"a store name must be a non-empty string, got {name!r}")
    if len(name) > 200:
        raise InvalidValueError(f"a store name has at most 200 characters, got {len(name)}")
    size = settings["cache_size"]
    if size is not None and (type(size) is not int or size < 1):
        raise InvalidValueError(f"cache_size must be None or a positive integer, got {size!r}")
    interval = settings["checkpoint_interval"]
    if interval is not None and (not isinstance(interval, int | float) or interval < 0):
        raise InvalidValueError(
            f"checkpoint_interval must be None or seconds >= 0, got {interval!r}"
        )
    gap = settings["checkpoint_on_base_commit"]
    if (
        gap is not None
        and not isinstance(gap, bool)
        and (not isinstance(gap, int | float) or gap < 0)
    ):
        raise InvalidValueError(
            f"checkpoint_on_base_commit must be seconds >= 0, True, False or None, got {gap!r}"
        )
    if settings["sync"] not in ("off", "normal", "full"):
        raise InvalidValueError(f"sync must be 'off', 'normal' or 'full', got {settings['sync']!r}")
    pending = settings["max_pending"]
    if type(pending) is not int or pending < 1:
        raise InvalidValueError(f"max_pending must be a positive integer, got {pending!r}")
