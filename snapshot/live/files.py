"""A capture written as a folder ``--from`` reads: one kubectl ``List`` file per kind, and the
capture manifest (``.drasnap-capture.json``, hidden so that ``--from`` skips it).

The folder is written whole or not at all: into a temporary folder beside it, renamed at the end.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import orjson
from drasnap.snapshot.errors import SnapshotError
from drasnap.snapshot.live.capture import CAPTURED_KINDS, Capture

__all__ = [
    "MANIFEST_NAME",
    "NOT_ATOMIC",
    "PRIORITY_FILE",
    "manifest_of",
    "write_capture",
    "write_lists",
]

MANIFEST_NAME: Final = ".drasnap-capture.json"
PRIORITY_FILE: Final = "priority-expander.json"
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
    all. ``transform(kind, obj) -> obj`` (``--redact``) is applied to every object. The
    priority expander's ConfigMap, when there is one (kube-system's first), is also written
    alone as :data:`PRIORITY_FILE`, the file ``--expander-priorities`` takes."""
    lists = {listed.kind.kind: listed.objects for listed in result.kinds}
    extra: dict[str, Any] = {}
    configmaps = sorted(
        lists.get("ConfigMap", ()),
        key=lambda c: ((c.get("metadata") or {}).get("namespace") != "kube-system", str(c)),
    )
    if configmaps and transform is None:
        extra[PRIORITY_FILE] = configmaps[0]
    return write_lists(lists, directory, manifest=manifest, transform=transform, extra=extra)


def write_lists(
    lists: Mapping[str, Sequence[Mapping[str, Any]]],
    directory: str | os.PathLike[str],
    *,
    manifest: dict[str, Any] | None = None,
    transform: Any = None,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """``{kind: objects}`` (kinds of :data:`CAPTURED_KINDS`) as one kubectl ``List`` file per
    kind in ``directory`` (new, or empty), whole or not at all; ``manifest`` beside them."""
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise SnapshotError(f"{target} exists and is not an empty folder: give a new one with -o")
    parent = target.resolve().parent
    if not parent.is_dir():
        raise SnapshotError(f"{parent} is not a folder: cannot write {target}")
    resources = {k.kind: k.resource for k in CAPTURED_KINDS}
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    umask = os.umask(0o022)
    os.umask(umask)
    try:
        staging.chmod(0o777 & ~umask)  # mkdtemp's folder is private; the capture is not
        for kind, objects in lists.items():
            items = [transform(kind, obj) if transform else obj for obj in objects]
            _dump(
                staging / _file(resources[kind]),
                {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items},
            )
        for file_name, document in (extra or {}).items():
            _dump(staging / file_name, document)
        if manifest is not None:
            _dump(staging / MANIFEST_NAME, manifest)
        if target.exists():
            target.rmdir()
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
