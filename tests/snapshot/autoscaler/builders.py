"""Object builders for the autoscaler tests, after upstream's ``cluster-autoscaler/utils/test``
(``BuildTestPod``, ``BuildTestNode``, ``GenerateOwnerReferences``) at kubernetes/autoscaler
a16f0ae8, so that upstream's test tables read across one for one.

Quantities are written as upstream builds them: cpu in millicores (``"100m"``), memory in bytes
(``"200000"``); a negative amount leaves the request (or the node's resource) out, as upstream's
``-1``. Every builder returns new dicts.
"""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.autoscaler.expanders import Option
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.store import MemoryStore

Obj = dict[str, Any]

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def owner(name: str, kind: str, api_version: str = "apps/v1") -> list[Obj]:
    """``GenerateOwnerReferences``: one controller reference (its uid is the name here, as the
    estimator's equivalence groups key on the controller's uid)."""
    return [
        {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "uid": f"uid-{kind}-{name}",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def requests(cpu_m: int, mem: int) -> Obj:
    out: Obj = {}
    if cpu_m >= 0:
        out["cpu"] = f"{cpu_m}m"
    if mem >= 0:
        out["memory"] = str(mem)
    return out


def build_pod(
    name: str,
    cpu_m: int = -1,
    mem: int = -1,
    *,
    namespace: str = "default",
    owners: list[Obj] | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    metadata: Obj | None = None,
    status: Obj | None = None,
    **spec: Any,
) -> Obj:
    """``BuildTestPod(name, cpu, mem)``: one container asking for ``cpu_m`` millicores and
    ``mem`` bytes; ``spec`` entries are merged into the spec, ``metadata`` into the metadata."""
    meta: Obj = {"name": name, "namespace": namespace, "uid": name}
    if owners is not None:
        meta["ownerReferences"] = owners
    if annotations is not None:
        meta["annotations"] = annotations
    if labels is not None:
        meta["labels"] = labels
    meta.update(metadata or {})
    body: Obj = {
        "containers": [
            {"name": "c", "image": "pause", "resources": {"requests": requests(cpu_m, mem)}}
        ],
        **spec,
    }
    pod: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}
    if status is not None:
        pod["status"] = status
    return pod


def build_node(
    name: str, cpu_m: int, mem: int, *, pods: int = 100, labels: dict[str, str] | None = None
) -> Obj:
    """``BuildTestNode(name, millicpu, mem)``: allocatable equal to capacity, 100 pods unless
    ``pods`` says otherwise (upstream's estimator test builds its nodes with 10)."""
    resources = {"pods": str(pods), **requests(cpu_m, mem)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name, **(labels or {})}},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def option(
    group: str, node_count: int = 1, pods: int | list[Obj] = 0, template: Obj | None = None
) -> Option:
    """An expansion option; ``pods`` a count gives that many empty pods (upstream's tests use
    ``[]*apiv1.Pod{nil}``: only the count matters to most-pods)."""
    placed = [build_pod(f"{group}-p{i}") for i in range(pods)] if isinstance(pods, int) else pods
    return Option(
        group, node_count, placed, template or build_node(f"{group}-template", 1000, 1000)
    )


def snapshot(*nodes: Obj, **options: Any) -> ClusterSnapshot:
    """A ClusterSnapshot in memory holding ``nodes`` (no pods); ``options`` go to
    ``add_node`` of the last node (``slices``, ``pods``, ``claims``)."""
    cs = ClusterSnapshot(MemoryStore())
    for i, node in enumerate(nodes):
        cs.add_node(node, **(options if i == len(nodes) - 1 else {}))
    return cs
