"""The write-behind process: it writes a store's checkpoints while the store's own process goes on
(``store.behind.writer_process`` run as ``__main__`` with ``PARENT_PID URL NAME SYNC [FAULTS]``,
started by :class:`store.behind.writer.Writer`; it reads its messages on stdin and answers on
stdout). ``FAULTS``, for tests only, is a fault plan (:func:`parse_faults`), which the tests hand to
``Store.open`` as ``_writer_faults``: a production store never passes one.

Why a process: the writes of a flush are one ``executemany`` per table, and both the ``sqlite3``
module and the PostgreSQL driver give the GIL back and take it again around every row, so a
writer *thread* waits for the simulation's thread once per row (one was measured and gained
nothing: BENCHMARKS.md, "a writer thread"). A process has a GIL of its own and the machine's
second core.

What it does:

- It opens the store's database on a connection of its own and loads the store's last
  checkpoint as a *mirror*: the same :class:`store.cache.FullCache` the store uses, holding each
  value as its stored JSON text instead of the decoded value.
- The store sends it its journal buffer in batches as it grows (:class:`Rows`: each row
  a :class:`store.rows.Entry`). The mirror applies each as the store applied the operation
  (:meth:`store.cache.LayerStack.apply`: put, delete, fork, revert, commit), and the rows are
  inserted into the ``journal`` table at once, in a transaction left open until the next
  checkpoint. So the rows reach SQL while the simulation runs, and a checkpoint only has the
  entry rows, the checkpoint row and the commit left to do.
- :class:`WriteCheckpoint`: plans the entry rows and the state digest from the mirror
  (:meth:`store.cache.LayerStack.pending_entries`, :func:`store.codec.digest_after`: the
  store's own code), hashes the journal chain over the rows of the transaction
  (:class:`store.chain.ChainHasher`), writes them (:func:`store.sql.persist.write`) and commits;
  answers :class:`store.rows.Flushed` (as a flush on the store's connection does),
  :class:`CheckpointFailed`, or on a disk fault (full, read-only, I/O) :class:`DiskFault`
  (:func:`store.sql.disk_faults.describe`: the path, the cause, what the database keeps; for a
  full disk the free space and the bytes it has to write), on which the store stops at once;
  the same message, unasked, when a batch of rows meets a disk fault. (The messages are those
  of :mod:`store.behind.framing`.)
- :class:`TellDigest`: the state digest now (:class:`StateDigest`); :class:`Close`: commit
  nothing more (an open transaction is rolled back), answer :class:`Closed` and exit.

Crashes: nothing is committed but at a checkpoint, and a checkpoint is only written once all of
its rows have arrived, so the database only ever moves from one whole checkpoint to the next.
The store's process holds the writer lock; its lock file is passed down to this process, so the
lock is held until both have ended. On Linux this process asks to be killed with its parent
(``PR_SET_PDEATHSIG``); elsewhere it sees its input end and exits, rolling back.

Failures: a failed write rolls back and is answered :class:`CheckpointFailed`; the mirror keeps
everything since the last commit (its rows and its unflushed layers), so the next checkpoint writes
it all again, and the database still only holds whole checkpoints. A disk fault is not retried:
no later write can succeed on a full or read-only file system, and a run that went on would
compute what it cannot keep; the store stops, and the database keeps its last checkpoint.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sqlite3
import sys
from typing import Any

import orjson
from drasnap.store.behind.framing import (
    CheckpointFailed,
    Close,
    Closed,
    DiskFault,
    Fatal,
    Rows,
    StateDigest,
    TellDigest,
    WriteCheckpoint,
    receive,
    send,
)
from drasnap.store.cache import FullCache
from drasnap.store.chain import ChainHasher
from drasnap.store.codec import digest_after, format_digest, parse_digest
from drasnap.store.errors import one_line
from drasnap.store.pending import encoded_changes, plan
from drasnap.store.rows import (
    Entry,
    EntryRow,
    EntryTuple,
    Flushed,
    JournalRow,
    journal_row,
    with_chain,
)
from drasnap.store.sql import disk_faults, engines, persist
from sqlalchemy import Connection, RootTransaction

_PR_SET_PDEATHSIG = 1
# A fault plan (tests only): (event, nth) -> the driver's message, or "" for a transient failure.
Faults = dict[tuple[str, int], str]
TIDY_WAL_BYTES = 64 << 20


def _as_stored(text: Any) -> str:
    """The mirror's values are their stored JSON texts already."""
    return str(text)


def _mirror_holds_every_value(keys: list[Any]) -> dict[Any, str | None]:
    raise AssertionError(f"the mirror holds every value, yet {keys[:3]} are unknown")


class InjectedFault(Exception):
    """A failure asked for by a fault plan (tests only: see :func:`parse_faults`)."""


class Mirror:
    """The store as of the rows received, values as texts, and the open transaction."""

    def __init__(
        self,
        conn: Connection,
        name: str,
        target: engines.Target,
        faults: Faults | None = None,
    ) -> None:
        assert target.path is not None
        self.conn = conn
        self.path = target.path
        self.display = target.display
        self.wal = f"{target.path}-wal"
        with engines.snapshot(conn), conn.begin():
            row = persist.find_store(conn, name)
            loaded = persist.load(conn, row, with_base=True, decoded=False)
        self.store_id = loaded.store_id
        self.cache = FullCache()
        self.cache.install(loaded)
        self.seq = loaded.next_seq
        self.digest = loaded.digest
        self.chain = loaded.chain
        self.hasher = ChainHasher(self.chain)
        self.uncommitted: list[JournalRow] = []  # rows since the last commit, for a retry
        # (deletes, upserts) of base rows written ahead of the checkpoint, for a retry
        self.ahead: list[tuple[list[EntryRow], list[EntryRow]]] = []
        self.trans: RootTransaction | None = None
        self.replay = False  # the open transaction lost its rows: write them all again
        self.faults = faults or {}  # tests only: failures to inject (parse_faults)
        self.alarm: DiskFault | None = None  # to tell the store at once
        # The first disk fault's message: nothing more is written after it (a retry that
        # happened to succeed would leave the database ahead of what the store was told).
        self.disk_fault: str | None = None
        self.counts = {"rows": 0, "checkpoint": 0}

    def _fault(self, event: str) -> None:
        self.counts[event] += 1
        text = self.faults.get((event, self.counts[event]))
        if text:  # a disk fault, worded as SQLite words it
            raise sqlite3.OperationalError(text)
        if text is not None:
            raise InjectedFault(f"injected {event} failure")

    def apply_rows(self, entries: list[EntryTuple]) -> None:
        """Apply a batch of the store's journal buffer to the mirror and insert its rows."""
        cache = self.cache
        for entry in map(Entry._make, entries):
            cache.apply(entry)
        numbered = [journal_row(self.store_id, q, e) for q, e in enumerate(entries, self.seq)]
        self.seq += len(entries)
        self.uncommitted.extend(numbered)
        ahead = self._base_rows()
        if not cache.layers and cache.touched:
            # Nothing open can be reverted past this point: the digest moves now, not at the
            # checkpoint (a revert of an open layer would need what was touched before it).
            self.digest = self._digest_now()
            cache.touched.clear()
        if self.replay or self.disk_fault is not None:
            return  # written again, with everything since the last commit, at the checkpoint
        try:
            self._begin()
            self._fault("rows")
            persist.insert_journal(self.conn, numbered)
            self.hasher.add_many(numbered)
            if ahead is not None:
                persist.write_entries(self.conn, *ahead)
        except Exception as exc:
            self._abandon()
            reason = _reason(exc)
            if disk_faults.is_disk_fault(reason):
                needed = len(orjson.dumps([self.uncommitted, self.ahead]))
                self.disk_fault = disk_faults.describe(self.display, self.path, reason, needed)
                self.alarm = DiskFault(self.disk_fault, answers_checkpoint=False)

    def _base_rows(self) -> tuple[list[EntryRow], list[EntryRow]] | None:
        """The base rows changed since the last call, taken from what the next flush owes: a
        base row does not depend on the layers above, so it is written ahead."""
        cache = self.cache
        if not cache.base_pending:
            return None
        rows = cache.base_rows(self.store_id, _as_stored)
        cache.base_pending.clear()
        self.ahead.append(rows)
        return rows

    def _begin(self) -> None:
        if self.trans is None:
            self.conn.info["immediate"] = True
            self.trans = self.conn.begin()
            if self.replay:
                self.hasher = ChainHasher(self.chain)
                persist.insert_journal(self.conn, self.uncommitted)
                self.hasher.add_many(self.uncommitted)
                for deletes, upserts in self.ahead:
                    persist.write_entries(self.conn, deletes, upserts)
                self.replay = False

    def _abandon(self) -> None:
        trans, self.trans = self.trans, None
        if trans is not None:
            with contextlib.suppress(Exception):
                trans.rollback()
        self.conn.info["immediate"] = False
        self.replay = True

    def _digest_now(self) -> int:
        changes = self.cache.digest_changes()
        return digest_after(self.digest, encoded_changes(changes, _as_stored))

    def current_digest(self) -> str:
        return format_digest(self._digest_now())

    def checkpoint(self, ts: float, next_layer: int) -> Flushed | CheckpointFailed | DiskFault:
        if self.disk_fault is not None:
            return DiskFault(self.disk_fault, answers_checkpoint=True)
        # The journal rows are in the transaction already: the plan adds the checkpoint row.
        pending = plan(
            self.cache,
            [],
            store_id=self.store_id,
            next_seq=self.seq,
            next_layer=next_layer,
            digest=self.digest,
            checkpoint_seq=None,
            chain=self.chain,
            resolve=_mirror_holds_every_value,
            encode=_as_stored,
            now=ts,
        )
        row = pending.journal[-1]
        try:
            self._begin()
            hasher = self.hasher
            hasher.add(row)
            chain = hasher.finish()
            written = with_chain(row, chain)
            self._fault("checkpoint")
            persist.write(self.conn, pending, [written])
            assert self.trans is not None
            self.trans.commit()
        except Exception as exc:
            self._abandon()
            reason = _reason(exc)
            if disk_faults.is_disk_fault(reason):  # the store stops at once: say where and why
                needed = pending.encoded_size() + len(orjson.dumps([self.uncommitted, self.ahead]))
                self.disk_fault = disk_faults.describe(self.display, self.path, reason, needed)
                return DiskFault(self.disk_fault, answers_checkpoint=True)
            return CheckpointFailed(reason)
        flushed = Flushed(
            next_seq=pending.next_seq,
            checkpoint_seq=pending.checkpoint_seq,
            state_digest=pending.state_digest,
            chain=chain,
            # Everything this transaction wrote: the rows written ahead of it too.
            entry_rows=len(pending.deletes)
            + len(pending.upserts)
            + len(pending.inserts)
            + sum(len(deletes) + len(upserts) for deletes, upserts in self.ahead),
            journal_rows=len(self.uncommitted) + 1,
        )
        self.trans = None
        self.conn.info["immediate"] = False
        self.cache.flushed()
        self.seq = pending.next_seq
        self.digest = parse_digest(pending.state_digest)
        self.chain = chain
        self.hasher = ChainHasher(chain)
        self.uncommitted = []
        self.ahead = []
        return flushed

    def tidy(self) -> None:
        """Copy the write-ahead log into the database file once it has grown past
        ``TIDY_WAL_BYTES``, between checkpoints: SQLite would do it inside the commit (past
        1,000 pages, 4 MB), where the store waits; less often, a page written at every
        checkpoint is copied once for many."""
        if self.trans is None and _size(self.wal) >= TIDY_WAL_BYTES:
            with contextlib.suppress(Exception):
                _pragma(self.conn, "wal_checkpoint(PASSIVE)")

    def close(self) -> None:
        if self.trans is not None:
            self._abandon()


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _pragma(conn: Connection, pragma: str) -> None:
    """A PRAGMA outside SQLAlchemy's transactions (it would begin one)."""
    driver = conn.connection.driver_connection
    assert driver is not None
    driver.execute(f"PRAGMA {pragma}").fetchall()


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    text = one_line(orig if orig is not None else exc) or type(exc).__name__
    return text[:2000]


def parse_faults(spec: str) -> Faults:
    """A fault plan, for tests only: ``"checkpoint:N"`` makes the Nth checkpoint this process
    writes fail (a transient failure, written again at the next checkpoint), ``"rows:N"`` the
    Nth batch of rows; ``"checkpoint:N:MESSAGE"`` fails it with SQLite's ``MESSAGE`` (``disk
    I/O error``, ``database or disk is full``: a disk fault); comma-separated."""
    out: Faults = {}
    for part in filter(None, spec.split(",")):
        event, n, text = [*part.split(":", 2), ""][:3]
        out[(event, int(n))] = text
    return out


def _die_with(parent: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def serve(
    inp: int,
    out: int,
    parent: int,
    url: str,
    name: str,
    sync: str,
    faults: Faults | None = None,
) -> int:
    """The process's work, from its input ``inp`` to its output ``out``; its exit code.
    ``faults``: tests only (:func:`parse_faults`)."""
    _die_with(parent)
    try:
        target = engines.parse_target(url)
        engine = engines.create(target, sync=sync)
        conn = engines.connect(engine, target)
        _pragma(conn, "wal_autocheckpoint = 0")  # see Mirror.tidy
        mirror = Mirror(conn, name, target, faults)
    except Exception as exc:
        send(out, Fatal(f"cannot open the store: {_reason(exc)}"))
        return 1
    try:
        untidy = False
        while True:
            if untidy and not select.select([inp], [], [], 0)[0]:
                mirror.tidy()  # only while there is nothing else to do
                untidy = False
            message = receive(inp)
            if message is None:  # the store's process is gone: commit nothing
                return 0
            match message:
                case Rows(rows):
                    mirror.apply_rows(rows)
                    if mirror.alarm is not None:
                        send(out, mirror.alarm)
                        mirror.alarm = None
                case WriteCheckpoint(at, next_layer):
                    send(out, mirror.checkpoint(at, next_layer))
                    untidy = True
                case TellDigest():
                    send(out, StateDigest(mirror.current_digest()))
                case Close():
                    mirror.close()
                    send(out, Closed())
                    return 0
    except Exception as exc:  # a bug here must reach the store as an error, not hang it
        with contextlib.suppress(Exception):
            send(out, Fatal(_reason(exc)))
        return 1
    finally:
        with contextlib.suppress(Exception):
            conn.close()
        engine.dispose()


def main() -> int:
    parent, url, name, sync = sys.argv[1:5]
    faults = parse_faults(sys.argv[5]) if len(sys.argv) > 5 else {}
    return serve(
        sys.stdin.buffer.fileno(), sys.stdout.buffer.fileno(), int(parent), url, name, sync, faults
    )


if __name__ == "__main__":
    # Once serve() returns, its database work is over (committed or rolled back, the connection
    # closed): the process ends without tearing down its mirror of the state, which the store
    # waits for on closing (the lock is held until both processes are gone) and which took a
    # third of a second after a 4,000-pod scale-up.
    code = main()
    sys.stderr.flush()
    os._exit(code)
