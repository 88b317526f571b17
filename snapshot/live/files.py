"""A capture written as a folder ``--from`` reads: one kubectl ``List`` file per kind, and the
capture manifest (``.drasnap-capture.json``, hidden so that ``--from`` skips it).

The folder is written whole or not at all: into a temporary folder beside it, renamed at the end.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Final

import orjson
from drasnap.snapshot.errors import SnapshotError
from drasnap.snapshot.live.capture import Capture

__all__ = ["MANIFEST_NAME", "NOT_ATOMIC", "manifest_of", "write_capture"]

MANIFEST_NAME: Final = ".drasnap-capture.json"
NOT_ATOMIC: Final = (
    "a capture is not one atomic snapshot: each kind was listed at its own resourceVersion"
)


def manifest_of(result: Capture, *, server: str = "", context: str = "") -> dict[str, Any]:
    """The capture manifest: each kind's version, resourceVersion and counts, what changed."""
    return {
        "apiVersion": "drasnap.io/v1",
        "kind": "CaptureManifest",
        "capturedAt": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "server": server,
        "context": context,
        "namespaces": result.namespaces or "all",
        "atomic": False,
        "note": NOT_ATOMIC,
        "kinds": {
            k.kind.kind: {"file": _file(k.kind.resource), **k.summary()} for k in result.kinds
        },
        "changedDuringCapture": result.changed,
        "notes": result.notes,
    }


def _file(resource: str) -> str:
    return f"{resource}.json"


def _dump(path: Path, document: Any) -> None:
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


def write_capture(
    result: Capture,
    directory: str | os.PathLike[str],
    *,
    manifest: dict[str, Any],
    transform: Any = None,
) -> Path:
    """Write ``result`` into ``directory`` (which must not exist, or be empty), whole or not at
    all. ``transform(kind, obj) -> obj`` (``--redact``) is applied to every object."""
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise SnapshotError(f"{target} exists and is not an empty folder: give a new one with -o")
    parent = target.resolve().parent
    if not parent.is_dir():
        raise SnapshotError(f"{parent} is not a folder: cannot write {target}")
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    umask = os.umask(0o022)
    os.umask(umask)
    try:
        staging.chmod(0o777 & ~umask)  # mkdtemp's folder is private; the capture is not
        for listed in result.kinds:
            items = listed.objects
            if transform is not None:
                items = [transform(listed.kind.kind, obj) for obj in items]
            _dump(
                staging / _file(listed.kind.resource),
                {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items},
            )
        _dump(staging / MANIFEST_NAME, manifest)
        if target.exists():
            target.rmdir()
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
