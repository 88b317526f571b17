"""The durable store's way to SQL: the checkpoint, its policy and the write-behind hand-over.

A :class:`Checkpointer` is held by :class:`store.durable.Store` (one per open store) and owns
what a checkpoint reads and moves: the journal buffer (the store appends to the same list), the
journal's counters (the next seq, the seq and chain of the last checkpoint), the state digest
at the last checkpoint, the connection it flushes on or the write-behind process it hands over
to, and the policy with the time of the last checkpoint. The store keeps its layers, its cache
and the layer counter, and hands them in; the module docstring of ``store/durable.py`` says what
a checkpoint promises.

A checkpoint either plans and flushes the rows on the store's connection
(:func:`store.pending.plan`, :func:`store.sql.persist.flush`) or hands the journal to the
write-behind process (:mod:`store.behind.writer`), which :func:`start_writer` starts when the
store is opened. It never imports ``store.durable``: the store imports it.
"""

from __future__ import annotations

import time

from drasnap.store import pending
from drasnap.store.behind.writer import Writer
from drasnap.store.cache import LayerStack
from drasnap.store.codec import parse_digest
from drasnap.store.errors import InvalidValueError
from drasnap.store.options import StoreOptions
from drasnap.store.rows import EntryTuple, Flushed, Loaded
from drasnap.store.sql import engines, persist
from drasnap.store.sql.lock import WriterLock
from sqlalchemy import Connection

_now = time.time
_monotonic = time.monotonic
CHECK_EVERY = 256  # ops between looks at the clock for the automatic checkpoint
_SHIP_EVERY = 1024  # journal entries per batch handed to the write-behind process


def start_writer(
    target: engines.Target, name: str, settings: StoreOptions, lock: WriterLock, faults: str = ""
) -> Writer | None:
    """The write-behind process of a store being opened (see :mod:`store.behind.writer`); None
    when ``write_behind="auto"`` finds it cannot be used there. ``faults``: tests only (the
    ``_writer_faults`` of ``Store.open``)."""
    sqlite_file = target.dialect == "sqlite" and target.path is not None
    if settings.write_behind == "auto" and not (
        sqlite_file and settings.journal and settings.cache_size is None
    ):
        return None
    if not sqlite_file:
        raise InvalidValueError(
            f"write_behind needs a SQLite file, not {target.display}: the writer process opens "
            "the database on its own connection"
        )
    url = target.url.render_as_string(hide_password=False)
    return Writer(url, name, sync=settings.sync, keep_fds=lock.descriptors(), _faults=faults)


class Checkpointer:
    """The checkpoints of one open store: what they write, when they are due, and where the
    journal goes (see the module docstring). A store that was never opened holds one with
    nothing to write (``loaded`` None)."""

    def __init__(
        self,
        cache: LayerStack,
        options: StoreOptions,
        *,
        name: str = "",
        loaded: Loaded | None = None,
        conn: Connection | None = None,
        target: engines.Target | None = None,
        journal: bool = False,
        writer: Writer | None = None,
    ) -> None:
        self._cache = cache  # the store's layers: what a checkpoint writes and forgets
        self._name = name
        self._conn = conn
        self._target = target
        # A store.rows.Entry (as a plain tuple) per operation since the last flush; the flush
        # turns each into a journal row. The buffer holds encodings, not values, so a value
        # overwritten before the flush is freed at once (a buffer of values kept whole object
        # trees alive, and Python's full GC passes grew with them). The store appends to it.
        self.journal: list[EntryTuple] | None = [] if journal else None
        self.writer = writer  # write-behind (store.behind.writer), when asked for
        self._shipped = 0  # journal entries already handed to the writer
        self._store_id = loaded.store_id if loaded else 0
        self.seq = loaded.next_seq if loaded else 1
        self.checkpoint_seq = loaded.checkpoint_seq if loaded else None
        self._chain = loaded.chain if loaded else None  # the journal chain at the last checkpoint
        self.digest = loaded.digest if loaded else 0  # the state's at the last checkpoint
        # The policy (store.options.StoreOptions documents each).
        self.auto = options.auto_checkpoint
        self._interval = options.checkpoint_interval
        self._on_base_commit = options.checkpoint_on_base_commit
        self._base_commit_gap = options.base_commit_gap
        self._max_pending = options.max_pending
        self._last_checkpoint = _monotonic()

    def has_unflushed(self) -> bool:
        return bool(self.journal) or self._cache.has_unflushed()

    def checkpoint(self, next_layer: int, *, wait: bool) -> None:
        """Write everything since the last checkpoint (``Store.checkpoint`` says what that
        promises); with write-behind and ``wait=False`` not waited for."""
        if self.writer is not None:
            self._hand_over(next_layer, wait=wait)
            return
        conn = self._conn
        assert conn is not None
        sid = self._store_id
        with engines.translate(self.target(), f"checkpointing store {self._name!r}"):
            owed = pending.plan(
                self._cache,
                self.journal,
                store_id=sid,
                next_seq=self.seq,
                next_layer=next_layer,
                digest=self.digest,
                checkpoint_seq=self.checkpoint_seq,
                chain=self._chain,
                resolve=lambda keys: persist.resolved_encoded(conn, sid, keys),
            )
        with engines.translate(
            self.target(), f"checkpointing store {self._name!r}", owed.encoded_size
        ):
            self._flushed(persist.flush(conn, owed))
        # Written: the memory side may now forget what it kept for SQL.
        self._cache.flushed()
        if self.journal is not None:
            self.journal.clear()
        self._last_checkpoint = _monotonic()

    def ship(self) -> None:
        """Hand the journal entries not yet handed over to the writer process."""
        journal = self.journal
        assert self.writer is not None and journal is not None
        if len(journal) > self._shipped:
            self.writer.ship(journal[self._shipped :])
        self._shipped = len(journal)

    def _hand_over(self, next_layer: int, *, wait: bool) -> None:
        """A checkpoint written by the writer process: everything since the last one is in the
        rows it was sent, so the memory side forgets what it kept for SQL at once."""
        writer = self.writer
        assert writer is not None and self.journal is not None
        self.ship()
        writer.checkpoint(at=_now(), next_layer=next_layer)
        self._cache.flushed()
        self.journal.clear()
        self._shipped = 0
        self._last_checkpoint = _monotonic()
        if wait:
            writer.wait()
        else:
            writer.poll()
        if writer.last is not None:
            self._flushed(writer.last)

    def _flushed(self, flushed: Flushed) -> None:
        self.seq = flushed.next_seq
        self.checkpoint_seq = flushed.checkpoint_seq
        self._chain = flushed.chain
        self.digest = parse_digest(flushed.state_digest)

    def due(self) -> bool:
        """Does the policy want a checkpoint now (too much pending, or the interval elapsed)?"""
        if self.journal is not None and len(self.journal) >= self._max_pending:
            return True
        if len(self._cache.base_pending) >= self._max_pending:
            return True
        interval = self._interval
        return interval is not None and _monotonic() - self._last_checkpoint >= interval

    def due_at_base_commit(self) -> bool:
        """After a commit into the base: is the last checkpoint older than the policy's gap?"""
        return (
            self.auto
            and self._on_base_commit
            and _monotonic() - self._last_checkpoint >= self._base_commit_gap
        )

    def tick(self, next_layer: int) -> None:
        """The store's look every ``CHECK_EVERY`` operations: checkpoint when due, else hand
        the writer process a full batch of the journal."""
        if self.auto and self.due():
            self.checkpoint(next_layer, wait=False)
        elif self.writer is not None and len(self.journal or ()) - self._shipped >= _SHIP_EVERY:
            self.ship()

    def writer_digest(self) -> str:
        """The state digest, from the writer process (it mirrors the store)."""
        assert self.writer is not None
        with engines.translate(self.target(), f"digesting store {self._name!r}"):
            self.ship()
            return self.writer.digest()

    def wait_for_writer(self) -> None:
        """What the policy handed over is durable, or said to fail (no writer: nothing)."""
        if self.writer is not None:
            self.writer.wait()

    def stop_writer(self) -> None:
        """End the writer process: it writes what it was handed first, and ends before the
        store's lock goes (it holds the lock file too)."""
        if self.writer is not None:
            writer, self.writer = self.writer, None
            writer.close()

    def target(self) -> engines.Target:
        assert self._target is not None
        return self._target
