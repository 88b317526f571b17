"""The writer lock: one writer per named store, ``flock`` on a side file for SQLite, an
advisory lock on PostgreSQL; both vanish with the process, so a crash never leaves a store
locked. ``store.sql.opening`` takes it (waiting out a holder that is going or gone), and the
write-behind process inherits the SQLite lock file so the lock is held until both have ended.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import socket
from pathlib import Path
from typing import IO

import sqlalchemy.exc as sa_exc
from drasnap.store.errors import StoreLockedError
from drasnap.store.sql import engines
from sqlalchemy import Connection, text

_SAFE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class WriterLock:
    """One writer per named store: ``flock`` on a side file for SQLite, an advisory lock on
    PostgreSQL. Both vanish with the process, so a crash never leaves a store locked."""

    def __init__(self, target: engines.Target, name: str) -> None:
        self._target = target
        self._name = name
        self._file: IO[bytes] | None = None
        self._path: Path | None = None
        self._pg_key: int | None = None
        self._pg_held = False

    def acquire(self, connection: Connection) -> bool:
        """Take the lock; False if another process (or another open store) holds it."""
        if self._target.dialect == "postgresql":
            # Advisory locks are per database, but not per schema: two stores of one name in
            # two schemas of a database must not share a key, so the schema is part of it.
            key = self._pg_key
            with engines.one_statement(connection), connection.begin():
                if key is None:
                    key = engines.pg_lock_key("store", engines.pg_schema(connection), self._name)
                got = connection.execute(
                    text("SELECT pg_try_advisory_lock(:k)"), {"k": key}
                ).scalar_one()
            self._pg_key = key
            self._pg_held = bool(got)
            return bool(got)
        if self._target.path is None:
            return True  # in-memory SQLite: nobody else can see it
        safe = (
            self._name
            if _SAFE_NAME.fullmatch(self._name)
            else hashlib.sha1(self._name.encode()).hexdigest()[:16]
        )
        lock_path = self._target.path.with_name(f"{self._target.path.name}.{safe}.lock")
        while True:
            handle = open(lock_path, "ab")  # noqa: SIM115 -- held open for the store's lifetime
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                return False
            # The holder removes the file when it lets go (no empty lock file is left beside
            # the database): a lock taken on a file that was removed meanwhile guards nothing,
            # so take it again on the file that is there now.
            try:
                same = os.stat(lock_path).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            handle.close()
        self._file = handle
        self._path = lock_path
        return True

    def descriptors(self) -> tuple[int, ...]:
        """The open lock file, for a helper process that must hold the lock as long as it
        lives (the write-behind process)."""
        return () if self._file is None else (self._file.fileno(),)

    def release(self, connection: Connection | None) -> None:
        if self._file is not None:
            if self._path is not None:
                # Removed while still held: a process waiting on this file then finds it gone
                # and retries on a new one (see acquire).
                with contextlib.suppress(OSError):
                    os.unlink(self._path)
                self._path = None
            with contextlib.suppress(OSError):
                fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
            self._file.close()
            self._file = None
        if self._pg_held and connection is not None:
            # (Closing the connection releases it too: this is for tidiness.)
            with (
                contextlib.suppress(sa_exc.SQLAlchemyError),
                engines.one_statement(connection),
                connection.begin(),
            ):
                connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self._pg_key})
        self._pg_held = False


# A killed holder's PostgreSQL session ends (and frees its lock) once the server notices the
# dropped connection, usually within milliseconds; a writer reopening at once waits that long.
STALE_LOCK_WAIT = 5.0
# A writer between taking the lock and recording itself (or between clearing its record and
# freeing the lock) is seen with no holder for that long at most, even on a loaded machine.
TRANSITION_WAIT = 2.0


def holder_is_gone(pid: int | None, host: str | None) -> bool:
    """True when the recorded holder is a process on this host that no longer exists."""
    if pid is None or host != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def locked_error(name: str, display: str, pid: int | None, host: str | None) -> StoreLockedError:
    holder = f"process {pid}" if pid is not None else "another process"
    if host and host != socket.gethostname():
        holder += f" on {host}"
    return StoreLockedError(
        f"store {name!r} in {display} is open for writing by {holder}; "
        "open it with readonly=True, or wait until that process closes it",
        name=name,
        pid=pid,
        host=host,
        database=display,
    )
