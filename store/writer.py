"""Write-behind: a checkpoint's rows written on a background thread while the caller goes on.

With ``write_behind=True`` (:class:`store.options.StoreOptions`) a checkpoint the policy takes
(automatic, or ``maybe_checkpoint()``) is planned on the caller's thread, as always — the rows,
counters and digest become a plain :class:`store.rows.Pending` and the memory side moves on as
if they were written — and :func:`store.persist.flush` writes them on a thread of its own.
SQLite and the PostgreSQL driver release the GIL while they work, so the simulation runs on
while its rows go to disk.

What stays true:

- one flush at a time, in order: the next checkpoint (and ``close()``) first waits for the
  one in flight, so the database only ever moves from one whole checkpoint to the next;
- ``checkpoint()`` and ``close()`` return only when everything is durable, as without
  write-behind;
- a crash (SIGKILL) kills the thread with the process: its transaction never commits and the
  database stays at the previous checkpoint, as it would had the crash come a moment earlier;
- a failed background flush is reported by the next checkpoint (or ``close()``), and its rows
  are kept and written first by the one after, so nothing is lost from memory.

Only with every value in memory (the default cache): a bounded cache reads SQL on a miss, which
must not see the database between two checkpoints.

Measured (BENCHMARKS.md, issue 15): no gain yet, so it is off by default and ``drasnap
simulate`` does not use it. The flush writes a row per ``executemany`` step, and the sqlite3
module (like psycopg) gives the GIL back and takes it again around every row: the writer then
waits on the simulation's thread, which holds the GIL for its Python work, once per row. Handing
SQLite a table's rows as one JSON statement did not help either (slower to parse); a writer
without the GIL is a process, which the writer lock would have to cover.
"""

from __future__ import annotations

import threading

from sqlalchemy import Connection

from store import persist
from store.rows import Flushed, Pending

__all__ = ["Writer"]


class Writer:
    """At most one flush in flight on a background thread, and the rows of one that failed."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._owed: Pending | None = None
        self._done: Flushed | None = None
        self._error: BaseException | None = None
        self.retry: Pending | None = None  # a failed flush's rows, to write before anything else

    @property
    def busy(self) -> bool:
        return self._thread is not None

    def start(self, conn: Connection, owed: Pending) -> None:
        """Write ``owed`` on a new thread (the previous flush must have been waited for)."""
        assert self._thread is None and self.retry is None
        self._owed, self._done, self._error = owed, None, None
        thread = threading.Thread(
            target=self._run, args=(conn, owed), name="drasnap-writer", daemon=True
        )
        self._thread = thread
        thread.start()

    def _run(self, conn: Connection, owed: Pending) -> None:
        try:
            self._done = persist.flush(conn, owed)
        except BaseException as exc:  # handed to the caller's thread by wait()
            self._error = exc

    def wait(self) -> Flushed | None:
        """Wait for the flush in flight; what it wrote (None: there was none).

        Raises:
            Exception: the flush's own error; its rows are then kept in ``retry``.
        """
        thread = self._thread
        if thread is None:
            return None
        thread.join()
        self._thread = None
        owed, self._owed = self._owed, None
        error, self._error = self._error, None
        if error is not None:
            self.retry = owed
            raise error
        return self._done
