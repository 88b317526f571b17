"""Disk faults told as they are: a write that meets a full disk, a file system gone read-only or
an I/O error stops the store at once, with one line naming the database's path, the cause and
what the database keeps (its last checkpoint); a store opened for writing on a disk with no room
left says so before anything runs.

Why a module of its own: SQLite words these failures loosely. Its ``disk I/O error`` is any
failed read, write or sync (``SQLITE_IOERR``), and the probe of issue 40 met it both on a full
disk and on a file system gone read-only; ``database or disk is full`` is a short write. So the
driver's words only say *that* the disk failed: :func:`cause` asks the file system *why*
(``os.statvfs``'s read-only flag, the free space), and :func:`describe` says it. Every such
fault is final for the run that meets it (retrying a write on a read-only or full file system
cannot succeed), unlike a transient failure, which the write-behind process
(``store.behind.writer_process``) writes again at the next checkpoint.

:func:`check_room` is the test-write at opening: a rerun on a still-full disk must fail before it
simulates, not at its first checkpoint after the whole run.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from pathlib import Path

from drasnap.store.errors import DatabaseError
from drasnap.store.sql import disk

__all__ = ["ROOM", "cause", "check_room", "describe", "is_disk_fault"]

# The driver's words (and the OS's, through SQLAlchemy's message) for a write the disk refused.
_FAULTS = (
    "disk I/O error",
    "database or disk is full",
    "No space left on device",
    "Read-only file system",
    "Disk quota exceeded",
)
# Free space below this, an I/O error is taken for a full disk (SQLite reports ENOSPC met while
# syncing or in its shared-memory file as an I/O error).
_NEARLY_FULL = 1 << 20
#: The bytes :func:`check_room` reserves and frees: a floor, not an estimate of a run's
#: checkpoints (small enough for a store on a 1 MB file system): a disk with less than this left
#: cannot take even a small checkpoint and its write-ahead log.
ROOM = 256 << 10


def is_disk_fault(message: str) -> bool:
    """Whether a driver's message says the disk refused a write (full, read-only, I/O)."""
    return any(text in message for text in _FAULTS)


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _free(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def cause(path: Path, message: str) -> str:
    """``"read-only"``, ``"full"`` or ``"I/O"``: why the file system under ``path`` refused a
    write the driver reported as ``message`` (the file system's word first, the driver's next)."""
    folder = path.parent
    if _read_only(folder) or "Read-only file system" in message:
        return "read-only"
    if disk.is_full(message) or "No space left" in message or "quota" in message:
        return "full"
    free = _free(folder)
    if free is not None and free < _NEARLY_FULL:
        return "full"
    return "I/O"


def describe(display: str, path: Path | None, message: str, needed: int | None = None) -> str:
    """One line for a disk fault met writing the database ``path`` (shown as ``display``):
    where, why, and what the database keeps. ``needed``: the bytes being written, when known
    (said for a full disk)."""
    if path is None:  # an in-memory database: no file system to ask
        return f"{display}: {message}"
    why = cause(path, message)
    if why == "full":
        return disk.full_message(display, path, needed)
    folder = path.parent
    if why == "read-only":
        said = f"the file system holding {folder} is read-only ({message})"
        fix = "remount it read-write, or give DB a path on another file system"
    else:
        said = f"the disk reported an I/O error ({message})"
        fix = "check the disk (dmesg) and its free space"
    return f"cannot write {path}: {said}: {fix}; {disk.KEPT}"


def check_room(path: Path, room: int = ROOM) -> None:
    """Reserve ``room`` bytes beside the database ``path``, then free them: raise
    :class:`DatabaseError` if its file system is full or read-only. Any other failure (a folder
    this user may not write, a file system without ``fallocate``) is left to SQLite's open to
    report in its own words."""
    folder = path.parent
    if not folder.is_dir():
        return
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}-room-", dir=folder)
    except OSError as exc:
        _refuse(path, exc)
        return
    try:
        os.posix_fallocate(fd, 0, room)
    except OSError as exc:
        _refuse(path, exc)
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)


def _refuse(path: Path, exc: OSError) -> None:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        free = _free(path.parent)
        left = "" if free is None else f" ({disk.size_text(free)} free in {path.parent})"
        raise DatabaseError(
            f"no room to write {path}: its file system is full{left}, with less than "
            f"{disk.size_text(ROOM)} left for a checkpoint; free some space there, or give DB "
            "a path on another file system",
        ) from exc
    if exc.errno == errno.EROFS:
        raise DatabaseError(
            f"cannot write {path}: the file system holding {path.parent} is read-only; remount "
            "it read-write, or give DB a path on another file system",
        ) from exc
