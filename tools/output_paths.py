"""Where a command writes: checked before the work starts, and a write that fails is one line.

:func:`check_output` refuses, before a benchmark runs or a run is read, an output whose folder
is missing, is not a folder, or may not be written by this user (what can be seen without
writing). What only the write can find (a full disk, ``/proc``) is said by :func:`writing`: one
``Error:`` line naming the path, and the file the command was creating removed, so that no
partial or empty file is left where the output was to be.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from drasnap.tools.errors import CommandError

__all__ = ["check_output", "writing"]

#: The files SQLite keeps beside a database while it is open.
_SQLITE_SIDECARS = ("-wal", "-shm", "-journal")


def check_output(path: str | os.PathLike[str], option: str, *, folder: bool = False) -> Path:
    """``path`` as a new output (a file, or with ``folder`` a folder), refused when it cannot be
    written: its folder missing or not a folder, this user not allowed to write there, or (a
    file) a folder in its place."""
    target = Path(path)
    parent = target.parent
    what = "folder" if folder else "file"
    if not parent.exists():
        raise CommandError(f"{option} {path}: the folder {parent} does not exist")
    if not parent.is_dir():
        raise CommandError(f"{option} {path}: {parent} is not a folder")
    if not folder and target.is_dir():
        raise CommandError(f"{option} {path}: a folder, not a {what}: give a file name")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CommandError(f"{option} {path}: this user may not write in the folder {parent}")
    return target


@contextlib.contextmanager
def writing(path: str | os.PathLike[str], *, database: bool = False) -> Iterator[None]:
    """Write ``path`` in the block: an ``OSError`` becomes one line naming it, and on any
    failure the file is removed if the block created it (with ``database``, SQLite's files
    beside it as well)."""
    target = Path(path)
    existed = target.exists()
    try:
        yield
    except BaseException as exc:
        if not existed:
            for suffix in ("", *(_SQLITE_SIDECARS if database else ())):
                with contextlib.suppress(OSError):
                    target.with_name(target.name + suffix).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
        raise
