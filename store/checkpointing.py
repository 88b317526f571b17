"""The durable store's way to SQL: the checkpoint, its policy and the write-behind hand-over.

:class:`Checkpointing` is a mixin of :class:`store.durable.Store`, which holds every attribute it
reads (declared below for the type checker, set by ``Store.__init__`` and ``Store.open``): it is the
store's "-- durability --" section, moved here to keep ``store/durable.py`` about the layers, reads
and writes (the module docstring there says what a checkpoint promises). A checkpoint either plans
and flushes the rows on the store's connection (:func:`store.pending.plan`,
:func:`store.sql.persist.flush`) or hands the journal to the write-behind process
(:mod:`store.behind.writer`), which :func:`start_writer` starts when the store is opened. It never
imports ``store.durable``: the store imports it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from drasnap.store import pending
from drasnap.store.behind.writer import Writer
from drasnap.store.cache import LayerStack
from drasnap.store.codec import parse_digest
from drasnap.store.errors import InvalidValueError
from drasnap.store.options import StoreOptions
from drasnap.store.rows import EntryTuple, Flushed
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
    """The write-behind process of a store being opened (see :mod:`store.behind.writer`); None when
    ``write_behind="auto"`` finds it cannot be used there. ``faults``: tests only (the
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


class Checkpointing:
    """The checkpoint methods and the policy of :class:`store.durable.Store` (see the module
    docstring)."""

    # The store's state these methods read and write (Store.__init__ sets each).
    _name: str
    _closed: bool
    _readonly: bool
    _cache: LayerStack
    _journal: list[EntryTuple] | None
    _seq: int
    _next_layer: int
    _checkpoint_seq: int | None
    _chain: str | None
    _digest: int
    _store_id: int
    _ops_left: int
    _last_checkpoint: float
    _conn: Connection | None
    _target: engines.Target | None
    _writer: Writer | None
    _shipped: int
    _auto: bool
    _interval: float | None
    _max_pending: int

    if TYPE_CHECKING:  # the store's guards

        def _readable(self) -> None: ...

        def _writable(self, action: str) -> None: ...

    def _has_unflushed(self) -> bool:
        return bool(self._journal) or self._cache.has_unflushed()

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
        """A checkpoint; with write-behind and ``wait=False`` not waited for."""
        if self._closed:
            self._readable()
        if self._readonly:
            return
        conn = self._conn
        assert conn is not None
        sid = self._store_id
        if self._writer is not None:
            self._hand_over(wait=wait)
            return
        with engines.translate(self._require_target(), f"checkpointing store {self._name!r}"):
            owed = pending.plan(
                self._cache,
                self._journal,
                store_id=sid,
                next_seq=self._seq,
                next_layer=self._next_layer,
                digest=self._digest,
                checkpoint_seq=self._checkpoint_seq,
                chain=self._chain,
                resolve=lambda keys: persist.resolved_encoded(conn, sid, keys),
            )
        with engines.translate(
            self._require_target(), f"checkpointing store {self._name!r}", owed.encoded_size
        ):
            self._flushed(persist.flush(conn, owed))
        # Written: the memory side may now forget what it kept for SQL.
        self._cache.flushed()
        if self._journal is not None:
            self._journal.clear()
        self._last_checkpoint = _monotonic()
        self._ops_left = CHECK_EVERY

    def _ship(self) -> None:
        """Hand the journal entries not yet handed over to the writer process."""
        journal = self._journal
        assert self._writer is not None and journal is not None
        if len(journal) > self._shipped:
            self._writer.ship(journal[self._shipped :])
        self._shipped = len(journal)

    def _hand_over(self, *, wait: bool) -> None:
        """A checkpoint written by the writer process: everything since the last one is in the
        rows it was sent, so the memory side forgets what it kept for SQL at once."""
        writer = self._writer
        assert writer is not None and self._journal is not None
        self._ship()
        writer.checkpoint(at=_now(), next_layer=self._next_layer)
        self._cache.flushed()
        self._journal.clear()
        self._shipped = 0
        self._last_checkpoint = _monotonic()
        self._ops_left = CHECK_EVERY
        if wait:
            writer.wait()
        else:
            writer.poll()
        if writer.last is not None:
            self._seq, self._checkpoint_seq, digest, self._chain = writer.last
            self._digest = parse_digest(digest)

    def _flushed(self, flushed: Flushed) -> None:
        self._seq = flushed.next_seq
        self._checkpoint_seq = flushed.checkpoint_seq
        self._chain = flushed.chain
        self._digest = parse_digest(flushed.state_digest)

    def maybe_checkpoint(self) -> bool:
        """Checkpoint if the policy says it is due (interval elapsed or too much pending).

        For callers that turn ``auto_checkpoint`` off and checkpoint at their own safe points.
        Returns whether it checkpointed.
        """
        self._writable("checkpoint")
        if self._due():
            self._checkpoint(wait=False)
            return True
        return False

    def _due(self) -> bool:
        if self._journal is not None and len(self._journal) >= self._max_pending:
            return True
        if len(self._cache.base_pending) >= self._max_pending:
            return True
        interval = self._interval
        return interval is not None and _monotonic() - self._last_checkpoint >= interval

    def _tick(self) -> None:
        self._ops_left = CHECK_EVERY
        if self._auto and self._due():
            self._checkpoint(wait=False)
        elif self._writer is not None and len(self._journal or ()) - self._shipped >= _SHIP_EVERY:
            self._ship()

    def _require_target(self) -> engines.Target:
        assert self._target is not None
        return self._target
