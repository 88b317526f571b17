"""What the file system under an SQLite database says, for the two failures SQLite words for
itself and a user cannot act on: a full disk (``database or disk is full``) and a database it
may not write (``unable to open database file``, ``attempt to write a readonly database``).

:func:`full_message` names the database's path, its file system's free space and what the next
checkpoint writes; :func:`unwritable_message` the file or folder this user may not write, and why.
``store.sql.engines.translate`` uses both, the first through ``store.sql.disk_faults`` (which
tells a full disk from a read-only or failing one), as the write-behind process does.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["KEPT", "full_message", "is_full", "is_unwritable", "size_text", "unwritable_message"]

_FULL = "database or disk is full"
#: What a store that meets a disk fault keeps, said in every such message: nothing is committed
#: but at a checkpoint, so what was done since the last one is not in the database.
KEPT = "the database keeps the store as of its last checkpoint; what was done since is lost"
_UNWRITABLE = ("unable to open database file", "attempt to write a readonly database")


def is_full(message: str) -> bool:
    """Whether a driver's message says the disk (or the database's size limit) is full."""
    return _FULL in message


def is_unwritable(message: str) -> bool:
    return any(text in message for text in _UNWRITABLE)


def size_text(n: int) -> str:
    """``n`` bytes for a person: ``512 bytes``, ``3.2 MB``, ``1.5 GB``."""
    if n < 1000:
        return f"{n} bytes"
    value = float(n)
    for unit in ("kB", "MB", "GB"):
        value /= 1000
        if value < 1000:
            return f"{value:.1f} {unit}"
    return f"{value / 1000:.1f} TB"


def _free(folder: Path) -> str:
    try:
        return f"{size_text(shutil.disk_usage(folder).free)} free"
    except OSError as exc:
        return f"free space unknown: {exc.strerror or exc}"


def full_message(display: str, path: Path | None, needed: int | None) -> str:
    """The message of a full disk under ``path`` (shown as ``display``); ``needed``: the bytes of
    the rows the next checkpoint writes, when known."""
    if path is None:  # an in-memory database: the machine's memory, not a file system
        return f"{display}: database or disk is full"
    folder = path.parent
    need = ""
    if needed is not None:
        need = (
            f"; the next checkpoint writes {size_text(needed)} of rows, and SQLite needs room "
            "for several times that in its write-ahead log"
        )
    return (
        f"the file system of {path} is full ({_free(folder)} in {folder}){need}: free some "
        f"space there, or give DB a path on another file system; {KEPT}"
    )


def unwritable_message(display: str, path: Path, message: str) -> str:
    """Why this user cannot write the database ``path``: the file, its folder (SQLite writes
    ``DB-wal`` and ``DB-shm`` beside it), or a read-only file system; else the driver's words."""
    folder = path.parent
    try:
        readonly_fs = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        readonly_fs = False
    if path.exists() and not os.access(path, os.R_OK):
        return f"cannot open {display}: this user may not read the file"
    if readonly_fs:
        why = f"the file system holding {folder} is mounted read-only"
    elif path.exists() and not os.access(path, os.W_OK):
        why = "this user may not write the file"
    elif not os.access(folder, os.W_OK | os.X_OK):
        why = (
            f"this user may not write in its folder {folder}, where SQLite keeps the "
            f"database's write-ahead log ({path.name}-wal, {path.name}-shm)"
        )
    else:
        return f"{display}: {message}"
    hint = "; the read commands still read it" if path.exists() else ""
    return (
        f"cannot write {display}: {why} (choose a folder you can write, or give DB a path in "
        f"one{hint})"
    )
