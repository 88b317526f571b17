"""Write-behind (``write_behind=True``): a store's journal and checkpoints are written by a process
of its own (:mod:`store.behind.writer_process`) while the store's process goes on.

The store hands its journal buffer over in batches as it grows (:meth:`Writer.ship`); the
writer process mirrors the store from those rows and inserts them at once, in a transaction
left open until the checkpoint. A checkpoint is a message (:meth:`Writer.checkpoint`) the
store does not wait for, except ``checkpoint()`` and ``close()``, which return only once it is
durable (:meth:`Writer.wait`). So the rows reach SQL on the machine's other core, and the
simulation's thread only encodes them (pickle) and queues them for a thread that writes them to
the pipe; past 64 MB queued (a writer that cannot keep up) the store waits for it.

Why a process and not a thread: the drivers give the GIL back and take it again around every
row of an ``executemany``, so a writer thread waits for the simulation's thread once per row
(one was measured and gained nothing: BENCHMARKS.md, "a writer thread").

What stays true: the database only ever moves from one whole checkpoint to the next (the writer
commits only at a checkpoint whose rows have all arrived); ``checkpoint()`` returns once its
state is durable; a crash leaves the database at a checkpoint (the writer process dies with the
store's, or sees its input end, and rolls back; it holds the store's lock file too, so nobody
else writes until it is gone); a failed write is kept: the writer keeps everything since
its last commit and the next checkpoint writes it all again, and ``checkpoint()`` (or
``close()``) raises if the last checkpoint it waits for failed; a disk fault (full, read-only,
I/O: ``store.sql.disk_faults``) is raised at the store's next call into the writer, since no
retry can succeed. A writer process that dies is a
``DatabaseError`` at the next checkpoint, every time: the store must then be closed
(``checkpoint=False``) and opened again.

Why the process keeps a mirror of the state: without one, the store would ship at each
checkpoint the ``store.rows.Pending`` it plans itself and the process would only execute it,
which puts ``store.pending.plan`` (the entry rows and the state digest's hashes) back on the
simulation's thread. Measured, that design leaves the small workloads within the spread
between runs but makes scale-up, the workload with large checkpoints, clearly slower
(BENCHMARKS.md, design notes): the mirror stays, and with it the copy of the state in the
process. Its reading of the journal is :meth:`store.cache.LayerStack.apply` over
:class:`store.rows.Entry`, the store's own layer code.

The cost: SQLite has one writer per database file, and the writer holds the write lock from its
first rows until the checkpoint: another process writing the same file (another store in it)
waits for it, up to its busy timeout (10 s). Only for SQLite files with the journal on and every
value in memory (a bounded cache reads SQL on a miss, which must not run ahead of the writer).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import select
import signal
import subprocess
import sys
import threading

from drasnap.store.behind.framing import (
    Answer,
    CheckpointFailed,
    Close,
    Closed,
    DiskFault,
    Fatal,
    Request,
    Rows,
    StateDigest,
    TellDigest,
    WriteCheckpoint,
    frame,
    receive,
    write_all,
)
from drasnap.store.errors import DatabaseError
from drasnap.store.rows import EntryTuple, Flushed

__all__ = ["Writer"]

_F_SETPIPE_SZ = 1031
_PIPE_SIZE = 1 << 20
_QUEUED_BYTES = 64 << 20  # at most this much waits for the pipe: then the store waits
_CLOSE_WAIT = 60.0  # seconds for the process to end after "close" before it is killed
# The process ignores SIGINT and SIGTERM from its first instruction: a signal sent to every
# process of the run (a service manager stopping it) must leave it to write the checkpoint the
# store takes on that signal; it ends when the store closes it or dies.
_IGNORED = {signal.SIGINT, signal.SIGTERM}
_BOOT = (
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM}); "
    "import runpy; runpy.run_module('drasnap.store.behind.writer_process', run_name='__main__')"
)


class Writer:
    """The store's side of the write-behind process.

    The process is a new interpreter running :mod:`store.behind.writer_process`, not a fork of the
    store's: a fork would share the store's heap copy-on-write, and the store's process would
    then copy every page it touches (its garbage collector touches them all). Starting costs the
    import of SQLAlchemy, while the store goes on: it only waits for a checkpoint it asks to
    wait for. The lock file is passed down, so the writer lock is held until both processes
    have ended.
    """

    def __init__(
        self, url: str, name: str, *, sync: str, keep_fds: tuple[int, ...], _faults: str = ""
    ) -> None:
        """Start the process for store ``name`` at ``url``. ``_faults`` is for tests only: a
        fault plan for the process (:func:`store.behind.writer_process.parse_faults`)."""
        self._name = name
        faults = [_faults] if _faults else []
        # Started with the two signals blocked (a blocked signal stays blocked across exec),
        # so that one sent before its first instruction waits, then is ignored there.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _IGNORED)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(os.getpid()), url, name, sync, *faults],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                pass_fds=keep_fds,
                start_new_session=True,  # a Ctrl-C in the terminal is the store's to handle
            )
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in = self._proc.stdin.fileno()
        self._out = self._proc.stdout.fileno()
        with contextlib.suppress(OSError):  # a bigger pipe: fewer wake-ups (Linux only)
            fcntl.fcntl(self._in, _F_SETPIPE_SZ, _PIPE_SIZE)
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._send_error: OSError | None = None
        self._queued = 0  # bytes handed to the sender thread, not yet written
        self._room = threading.Condition()
        self._sender = threading.Thread(target=self._send_loop, name="drasnap-writer", daemon=True)
        self._sender.start()
        self._outstanding = 0  # checkpoints sent, not yet answered
        self._failure: str | None = None
        self._dead: str | None = None
        self.last: Flushed | None = None  # the newest checkpoint's answer

    @property
    def pid(self) -> int:
        """The process id of the writer process (for a signal, e.g. in a test)."""
        return self._proc.pid

    @property
    def running(self) -> bool:
        """Whether the writer process has not ended (it is reaped if it has)."""
        return self._proc.poll() is None

    # -- sending -----------------------------------------------------------------------------

    def _post(self, message: Request) -> None:
        if self._dead is not None:
            raise DatabaseError(self._dead)
        data = frame(message)
        with self._room:
            while self._queued > _QUEUED_BYTES and self._send_error is None:
                self._room.wait()  # the process is behind: the store waits for it here
            self._queued += len(data)
        self._queue.put(data)

    def _send_loop(self) -> None:
        while True:
            data = self._queue.get()
            if data is None:
                assert self._proc.stdin is not None
                with contextlib.suppress(OSError):
                    self._proc.stdin.close()
                return
            if self._send_error is None:
                try:
                    write_all(self._in, data)
                except OSError as exc:  # the process is gone: the reader side says why
                    self._send_error = exc
            with self._room:
                self._queued -= len(data)
                self._room.notify_all()

    def ship(self, rows: list[EntryTuple]) -> None:
        """Hand over journal entries (:class:`store.rows.Entry`, as plain tuples);
        raise if the process has said the disk is full."""
        if rows:
            self._post(Rows(rows))
            self.poll()

    def checkpoint(self, *, at: float, next_layer: int) -> None:
        """Ask for a checkpoint of everything shipped (answered later: :meth:`poll`,
        :meth:`wait`)."""
        self._post(WriteCheckpoint(at, next_layer))
        self._outstanding += 1

    # -- answers -----------------------------------------------------------------------------

    def _exit_code(self, timeout: float | None = None) -> int | None:
        """Reap the process (waiting up to ``timeout`` seconds; None: as long as it takes)."""
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def _died(self) -> DatabaseError:
        code = self._exit_code()
        self._dead = (
            f"the write-behind process of store {self._name!r} ended (exit code {code}) "
            "before its checkpoints were written: this store can no longer write; close it "
            "(checkpoint=False) and open it again to continue from its last checkpoint"
        )
        return DatabaseError(self._dead)

    def _handle(self, answer: Answer | None) -> Answer:
        match answer:
            case None:
                raise self._died()
            case Flushed():
                self._outstanding -= 1
                self.last = answer
                self._failure = None  # it wrote again whatever a failed one had left
            case CheckpointFailed(reason):
                self._outstanding -= 1
                self._failure = reason
            case DiskFault(message, answers_checkpoint):
                # A full, read-only or failing disk (store.sql.disk_faults): no later checkpoint
                # can do better until someone repairs it: stop now, not at the next wait (a run
                # would go on computing what it cannot write).
                if answers_checkpoint:
                    self._outstanding -= 1
                self._failure = None
                raise DatabaseError(f"{message} (while checkpointing store {self._name!r})")
            case Fatal(reason):
                self._exit_code()
                self._dead = f"the write-behind process of store {self._name!r} failed: {reason}"
                raise DatabaseError(self._dead)
        return answer

    def _raise_failure(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None:
            raise DatabaseError(
                f"writing a checkpoint of store {self._name!r} failed: {failure} (the store "
                "still holds what it did not write: a later checkpoint writes it again; until "
                "then the database keeps its last checkpoint)"
            )

    def poll(self) -> None:
        """Take the answers already there, without waiting (a failed checkpoint is reported by
        :meth:`wait`, unless a later one writes it all first; a full disk at once). Besides
        the answers to checkpoints, the process may say at any time that the disk is full."""
        if self._dead is not None:
            raise DatabaseError(self._dead)
        while select.select([self._out], [], [], 0)[0]:
            self._handle(receive(self._out))

    def wait(self) -> None:
        """Wait until every checkpoint asked for is answered; raise if the last one failed."""
        if self._dead is not None:
            raise DatabaseError(self._dead)
        while self._outstanding:
            self._handle(receive(self._out))
        self._raise_failure()

    def digest(self) -> str:
        """The state digest of everything shipped (waits for the checkpoints before it)."""
        self._post(TellDigest())
        while True:
            answer = self._handle(receive(self._out))
            if isinstance(answer, StateDigest):
                return answer.digest

    def close(self) -> None:
        """End the process (an open transaction is rolled back) and wait for it."""
        try:
            if self._dead is None:
                self._post(Close())
        finally:
            self._queue.put(None)
            with contextlib.suppress(Exception):
                while self._dead is None:
                    answer = receive(self._out)
                    if answer is None or isinstance(answer, Closed):
                        break
                    self._handle(answer)
            if self._exit_code(_CLOSE_WAIT) is None:
                self._proc.kill()
                self._proc.wait()
            self._sender.join()
            assert self._proc.stdout is not None
            self._proc.stdout.close()
