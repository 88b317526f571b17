"""Small builders of Nodes and Pods for the filter tests (wire-format dicts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drasnap.snapshot.scheduling import PodCycle, StaticCluster, default_plugins
from drasnap.snapshot.scheduling.fit_error import NodeResult

Obj = dict[str, Any]


def node(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    unschedulable: bool = False,
    allocatable: Mapping[str, str] | None = None,
) -> Obj:
    spec: Obj = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {"kubernetes.io/hostname": name})},
        "spec": spec,
        "status": {
            "allocatable": dict(allocatable or {"cpu": "4", "memory": "8Gi", "pods": "110"})
        },
    }


def pod(
    name: str = "p",
    *,
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    requests: Mapping[str, str] | None = None,
    node_name: str | None = None,
    **spec: Any,
) -> Obj:
    body: Obj = {"containers": [{"name": "c", "resources": {"requests": dict(requests or {})}}]}
    body.update(spec)
    if node_name:
        body["nodeName"] = node_name
    metadata: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
    if labels:
        metadata["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": body}


def filter_one(
    pending: Obj, target: Obj, placed: Sequence[Obj] = (), others: Sequence[Obj] = ()
) -> NodeResult | None:
    """The result of running the default filters for ``pending`` on node ``target``."""
    cluster = StaticCluster([target, *others], placed)
    cycle = PodCycle(default_plugins(), pending, cluster)
    return cycle.filter(target["metadata"]["name"])


def reasons(result: NodeResult | None) -> tuple[str, ...] | None:
    return None if result is None else result.reasons
