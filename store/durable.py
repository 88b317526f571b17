"""``Store``: the durable versioned store — patch layers in memory, written behind to SQL.

The store owns its state: the journal buffer, the counters, the checkpoint policy and the state
digest. Its layers and read cache are a :mod:`store.cache` strategy (every value in memory by
default; ``cache_size=N`` for a bounded cache whose misses read SQL), whose data model is
written out there; ``store.sql.tables`` has the one in SQL, and :mod:`store.sql.opening` connects,
locks and loads. A checkpoint plans a :class:`store.rows.Pending` (rows, counters, digest:
:func:`store.pending.plan`) and hands it to :func:`store.sql.persist.flush`, which writes it in one
transaction and answers what it wrote: only plain values cross to the SQL side. The checkpoint,
its policy and the write-behind hand-over belong to the store's
:class:`store.checkpointing.Checkpointer`, which owns the journal buffer, the journal's counters
and the digest at the last checkpoint (this module keeps opening, layers, reads and writes).

Durability: after ``checkpoint()`` returns, the state (open layers and labels included) survives the
process being killed; with ``sync="full"`` it also survives a power cut. Reopening after a crash
gives the state of the last checkpoint — an operation boundary — never a half-applied one. Automatic
checkpoints (the policy, set by :class:`store.options.StoreOptions`) happen after
``checkpoint_interval`` seconds of work, when more than ``max_pending`` journal entries wait, and at
a commit into the base (``checkpoint_on_base_commit``) unless the last checkpoint is more recent
than ``base_commit_gap`` seconds; ``auto_checkpoint=False`` leaves them all to ``checkpoint()`` and
``maybe_checkpoint()``.
``close()`` checkpoints. A Fork ... Revert between two checkpoints costs no SQL. With
``write_behind=True`` the journal buffer is handed in batches to a process of the store's own, which
mirrors the store and writes the rows and checkpoints (:mod:`store.behind.writer`,
:mod:`store.behind.writer_process`); ``checkpoint()`` and ``close()`` still wait until it is
durable, the policy's checkpoints and ``checkpoint(wait=False)`` do not.

Values returned by ``get``/``items`` are shared with the cache and read-only by contract: never
mutate them; ``put`` a new value instead. The store never mutates a value after ``put``.
One writer per named store (``StoreLockedError`` for the second); readers (``readonly=True``)
see the last checkpoint and never block the writer. A Store is not thread-safe.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from drasnap.store import pending
from drasnap.store.behind.writer import Writer
from drasnap.store.cache import BoundedCache, FullCache, Layer, LayerStack
from drasnap.store.checkpointing import CHECK_EVERY as _CHECK_EVERY
from drasnap.store.checkpointing import Checkpointer
from drasnap.store.checkpointing import start_writer as _start_writer
from drasnap.store.codec import (
    check_name,
    check_text,
    checked_encoding,
    digest_after,
    encode,
    entry_hash,
    format_digest,
)
from drasnap.store.errors import (
    InvalidValueError,
    ReadOnlyError,
    StoreClosedError,
)
from drasnap.store.followers import Followed
from drasnap.store.interface import ABSENT, MISS, TOMBSTONE, Closing, LayerInfo
from drasnap.store.options import StoreOptions, check_store_name
from drasnap.store.rows import EntryTuple, Loaded
from drasnap.store.sql import engines, opening, persist
from drasnap.store.sql.lock import WriterLock
from sqlalchemy import Connection

Key = tuple[str, str]
_now = time.time
_DEFAULTS = StoreOptions()


class Store(Followed, Closing):
    """A durable, versioned key-value store of JSON values, organised as patch layers.

    Open it with :meth:`Store.open`; see the module docstring for durability and concurrency,
    and :mod:`store.cache` for the data model. Every method raises :class:`StoreClosedError`
    after ``close()``, and every write raises :class:`ReadOnlyError` on a read-only store.
    """

    def __init__(self) -> None:  # use Store.open
        self._closed = True
        self._readonly = True
        self._blocked = True  # closed or read-only: one test on the write paths
        self._name = ""
        self._cache: LayerStack = FullCache()
        self._layers: list[Layer] = self._cache.layers  # the cache's, read on every write
        self._checkpointer = Checkpointer(self._cache, _DEFAULTS)
        # The checkpointer's journal buffer (the same list), appended to on every write.
        self._journal: list[EntryTuple] | None = None
        self._next_layer = 1
        self._created_at = 0.0
        self._ops_left = _CHECK_EVERY  # operations until the checkpointer's next look (tick)
        self._connected: opening.Connected | None = None
        self._conn: Connection | None = None
        self._target: engines.Target | None = None
        self._options = _DEFAULTS
        self._journal_complete = True
        self._backend = ""
        super().__init__()

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
        migrations (``alembic upgrade head``) when the database needs them. ``options`` are
        the fields of :class:`store.options.StoreOptions` (cache size, journal, checkpoint
        policy, sync), which documents each and its default.

        Raises:
            NotADatabaseError: the target is a directory or not a drasnap database.
            SchemaVersionError: the database was written by a newer drasnap.
            StoreLockedError: another process has the store open for writing.
            StoreNotFoundError: ``readonly=True`` and no store of that name exists.
            MissingDriverError: the URL needs a driver that is not installed.
            InvalidValueError: an unknown option or a bad option value.
        """
        script_location: Path | None = options.pop("_script_location", None)  # tests only
        # Tests only: a fault plan for the write-behind process (writer_process.parse_faults).
        writer_faults: str = options.pop("_writer_faults", "")
        StoreOptions.check_known(options)
        check_store_name(name)
        settings = StoreOptions(**options)
        writers: list[Writer] = []

        def start_writer(target: engines.Target, lock: WriterLock) -> None:
            writer = _start_writer(target, name, settings, lock, writer_faults)
            if writer is not None:
                writers.append(writer)

        try:
            connected, loaded = opening.connect(
                target,
                name,
                readonly=readonly,
                options=settings,
                script_location=script_location,
                after_lock=start_writer if settings.write_behind and not readonly else None,
            )
        except BaseException:
            for writer in writers:
                writer.close()
            raise
        store = cls()
        store._name = name
        store._readonly = readonly
        store._options = settings
        store._connected = connected
        store._target = connected.target
        store._conn = connected.conn
        store._backend = connected.backend
        store._journal_complete = loaded.journal_complete and settings.journal
        cache: LayerStack
        if settings.cache_size is None:
            cache = FullCache()
        else:
            assert connected.conn is not None
            base = persist.SqlBase(connected.conn, loaded.store_id, connected.target)
            cache = BoundedCache(settings.cache_size, base)
        store._install(cache, loaded)
        store._checkpointer = Checkpointer(
            cache,
            settings,
            name=name,
            loaded=loaded,
            conn=connected.conn,
            target=connected.target,
            journal=settings.journal and not readonly,
            writer=writers[0] if writers else None,
        )
        store._journal = store._checkpointer.journal
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
        check_store_name(name)
        return opening.drop(target, name)

    def _install(self, cache: LayerStack, loaded: Loaded) -> None:
        self._created_at = loaded.created_at
        self._next_layer = loaded.next_layer
        cache.install(loaded)
        self._cache = cache
        self._layers = cache.layers
        # The store's most frequent call goes straight to the cache (one dict lookup with every
        # value in memory); close() removes the shortcut, so a closed store raises.
        self.get = cache.get  # type: ignore[method-assign]

    def close(self, *, checkpoint: bool = True) -> None:
        """Checkpoint (writers) and release the database and the writer lock. Idempotent.

        ``checkpoint=False`` abandons what changed since the last checkpoint instead, as a
        crash would: for a caller whose state is midway between two safe points.
        """
        if self._closed:
            return
        checkpointer = self._checkpointer
        try:
            if checkpoint and not self._readonly and checkpointer.has_unflushed():
                self.checkpoint()
            elif checkpoint:
                checkpointer.wait_for_writer()
        finally:
            # It writes what it was handed first (checkpoint=False: as a crash would, or not).
            checkpointer.stop_writer()
            self._closed = True
            self._blocked = True
            self.__dict__.pop("get", None)
            self._cache = FullCache()
            self._layers = self._cache.layers
            if self._connected is not None:
                opening.disconnect(self._connected)
            self._conn = None

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
    def options(self) -> StoreOptions:
        """The options it was opened with."""
        return self._options

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

    # -- checkpoints (the Checkpointer writes them) -------------------------------------------

    def checkpoint(self, *, wait: bool = True) -> None:
        """Make everything so far durable, open layers and labels included, in one transaction.

        Writes what changed since the previous checkpoint, the buffered journal and a
        ``checkpoint`` journal entry carrying the state digest. A no-op on a read-only store.
        Returns once it is durable, with write-behind too. ``wait=False``, with write-behind
        only: return once the checkpoint is handed to the writer process (a caller that needs a
        restart point, not yet a durable one); a failure is then reported by a later checkpoint
        or ``close()``.

        Raises:
            DatabaseError: the write failed; nothing was lost from memory, so retrying is safe.
        """
        self._checkpoint(wait=wait)

    def _checkpoint(self, *, wait: bool) -> None:
        if self._closed:
            self._readable()
        if self._readonly:
            return
        self._checkpointer.checkpoint(self._next_layer, wait=wait)
        self._ops_left = _CHECK_EVERY

    def maybe_checkpoint(self) -> bool:
        """Checkpoint if the policy says it is due (interval elapsed or too much pending).

        For callers that turn ``auto_checkpoint`` off and checkpoint at their own safe points.
        Returns whether it checkpointed.
        """
        self._writable("checkpoint")
        if self._checkpointer.due():
            self._checkpoint(wait=False)
            return True
        return False

    def _tick(self) -> None:
        self._ops_left = _CHECK_EVERY
        self._checkpointer.tick(self._next_layer)

    # -- followers -------------------------------------------------------------------------------

    def _tell_restored(self, undo: dict[Key, Any]) -> None:
        """Tell the followers the values a revert restored, newest change first (with a
        bounded cache a value the layer did not know may be read from SQL)."""
        followed = self._followed
        get = self._cache.get
        for kind, key in reversed(undo):
            fs = followed.get(kind)
            if fs is not None:
                value = get(kind, key, ABSENT)
                for f in fs:
                    f.changed(kind, key, value)

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
        layers.append(Layer(label, instance, now))  # the cache's own list
        depth = len(layers)
        if self._journal is not None:
            self._journal.append((now, "fork", depth, instance, parent, label, None, None, None))
        # No policy tick here: every fork ends in a revert or commit, which ticks.
        return depth

    def revert(self) -> int:
        """Drop the top layer and its changes; a no-op at the base. Returns the new depth.

        O(keys changed in the layer), no SQL (with a bounded cache, reads of what it restores
        may need SQL later).
        """
        if self._blocked:
            self._writable("revert")
        top = self._cache.revert()
        if top is None:
            return 0
        depth = len(self._layers) + 1
        if self._followed and top.undo:
            self._tell_restored(top.undo)
        if self._journal is not None:
            self._journal.append(
                (_now(), "revert", depth, top.instance, None, None, None, None, None)
            )
        self._ops_left -= 1
        if self._ops_left <= 0:
            self._tick()
        return depth - 1

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
        depth = len(layers)
        instance = layers[-1].instance
        into = self._cache.commit()
        if self._journal is not None:
            self._journal.append((_now(), "commit", depth, instance, into, None, None, None, None))
        # Only a commit into the base reads the clock.
        if into == 0 and self._checkpointer.due_at_base_commit():
            self._checkpoint(wait=False)
            return 0
        self._ops_left -= 1
        if self._ops_left <= 0:
            self._tick()
        return depth - 1

    def layers(self) -> list[LayerInfo]:
        """The open layers, base first: depth, label, creation time, number of entries."""
        self._readable()
        return self._cache.layer_infos(self._created_at)

    # -- reads -----------------------------------------------------------------------------------

    def get(self, kind: str, key: str, default: Any = None) -> Any:
        """The effective value of ``kind/key``, or ``default``. O(1) from the cache."""
        self._readable()  # an open store's calls go to its cache's get (see _install)
        return self._cache.get(kind, key, default)

    def in_current_layer(self, kind: str, key: str) -> bool:
        """Was ``kind/key`` set (not deleted) in the top layer? At depth 0: does it exist?"""
        self._readable()
        return self._cache.in_current_layer(kind, key)

    def items(self, kind: str) -> dict[str, Any]:
        """A fresh dict of every live key of ``kind`` and its value."""
        self._readable()
        return self._cache.items(kind)

    def keys(self, kind: str) -> list[str]:
        """The live keys of ``kind``."""
        self._readable()
        return self._cache.keys(kind)

    def count(self, kind: str) -> int:
        """The number of live keys of ``kind``."""
        self._readable()
        return self._cache.count(kind)

    def kinds(self) -> list[str]:
        """Every kind with at least one live key, sorted."""
        self._readable()
        return self._cache.kinds()

    def state_digest(self) -> str:
        """Digest of the effective state; equal for equal states on every backend.

        O(keys changed since the last checkpoint) with an unbounded cache.
        """
        self._readable()
        checkpointer = self._checkpointer
        if checkpointer.writer is not None:  # it holds the digest of the last checkpoint it wrote
            return checkpointer.writer_digest()
        changes = list(self._cache.digest_changes())
        if any(old is MISS for _, old, _ in changes):
            return self._full_digest()
        since = pending.encoded_changes(changes, encode)
        return format_digest(digest_after(checkpointer.digest, since))

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
        text = checked_encoding(value, kind=kind, key=key)
        self._cache.write(kind, key, value, text)
        fs = self._followed.get(kind)
        if fs is not None:
            for f in fs:
                f.changed(kind, key, value)
        if self._journal is not None:
            layers = self._layers
            top = layers[-1].instance if layers else 0
            self._journal.append((_now(), "put", len(layers), top, None, None, kind, key, text))
        self._ops_left -= 1
        if self._ops_left <= 0:
            self._tick()

    def delete(self, kind: str, key: str) -> None:
        """Tombstone ``kind/key`` in the top layer (also when it does not exist).

        Raises:
            InvalidValueError: empty kind or key.
        """
        if self._blocked:
            self._writable("delete from")
        check_name(kind, key)
        self._cache.write(kind, key, TOMBSTONE, None)
        fs = self._followed.get(kind)
        if fs is not None:
            for f in fs:
                f.changed(kind, key, ABSENT)
        if self._journal is not None:
            layers = self._layers
            top = layers[-1].instance if layers else 0
            self._journal.append((_now(), "delete", len(layers), top, None, None, kind, key, None))
        self._ops_left -= 1
        if self._ops_left <= 0:
            self._tick()
