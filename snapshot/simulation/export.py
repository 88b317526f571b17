"""A run's Kubernetes objects at a point of its journal, as the folder ``--from`` reads
(``drasnap export``; ``simulate --from-db`` reads a recording through it).

Everything ``--from`` reads is written: the stored objects of every captured kind, and the
pods a simulation holds as pending (``PendingPod``, :mod:`snapshot.simulation.scale_up`) as the
unbound Pods they are. Their template-generated claims are stored claims already (the pods'
``status.resourceClaimStatuses`` name them), so a run from the export starts from the cluster
the run held at that point, and decides what it decided (``tests/tools/test_export.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drasnap.snapshot import CAPTURED_KINDS, write_lists
from drasnap.snapshot.k8s.kinds import POD_KIND
from drasnap.snapshot.simulation.plan import PLAN_KEY, SIM_KIND
from drasnap.snapshot.simulation.scale_up import PENDING_KIND
from drasnap.store import open_state

__all__ = ["write_state"]


def write_state(
    db: str, name: str, at: int | None, target: Path, transform: Any = None
) -> tuple[int, dict[str, list[dict[str, Any]]]]:
    """Write the Kubernetes objects of store ``name`` in ``db`` (as stored, or as of seq
    ``at``) into ``target`` as kubectl List files; returns (the seq written, {kind: objects}).

    ``transform(kind, obj)``, when given, rewrites each object as it is written (redaction).
    """
    lists: dict[str, list[dict[str, Any]]] = {}
    with open_state(db, name=name, at=at) as state:
        seq = state.seq
        stored = set(state.kinds())
        for kind in (k.kind for k in CAPTURED_KINDS if k.kind in stored):
            objects = [
                obj
                for _, v in sorted(state.items(kind).items())
                for obj in (v if isinstance(v, list) else [v])  # slices: a list per node
                if _is_object(obj, kind)
            ]
            if objects:
                lists[kind] = objects
        if PENDING_KIND in stored:
            # In the plan's order, the order the run took them in (autoscale's sort by
            # priority is stable: a run from the export breaks its ties the same way).
            held = state.items(PENDING_KIND)
            plan = state.get(SIM_KIND, PLAN_KEY) or {}
            order = [k for k in plan.get("pending") or () if k in held]
            order += sorted(set(held) - set(order))
            pending = [held[k] for k in order if _is_object(held[k], POD_KIND)]
            lists[POD_KIND] = [*lists.get(POD_KIND, ()), *pending]
    write_lists(lists, target, transform=transform)
    return seq, lists


def _is_object(obj: Any, kind: str) -> bool:
    return isinstance(obj, dict) and obj.get("kind") == kind and "metadata" in obj
