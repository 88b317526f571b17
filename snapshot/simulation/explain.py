"""Below the scheduler's ``cannot allocate all claims``: a run's pod explained device by device
on one node, or on a new node of one of its node groups (``drasnap explain --node/--group``).

The run's state (as stored, or as of a seq) is copied into memory and read through a
`snapshot.cluster.ClusterSnapshot` with the run's feature gates, so the explanation is given
on the inputs the run's scheduler had (`ClusterSnapshot.explain_devices`); for a group, its
template node is added there (never written to the run's store).
"""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.allocation.explain import AllocationExplanation
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import NotFoundError
from drasnap.snapshot.k8s.kinds import POD_KIND
from drasnap.snapshot.simulation.inputs import NodeGroup, instantiate
from drasnap.snapshot.simulation.plan import PLAN_KEY, SIM_KIND
from drasnap.snapshot.simulation.scale_up import GROUP_KIND, PENDING_KIND
from drasnap.store import MemoryStore, ReadOnlyState

__all__ = ["explain_pod_devices"]


def explain_pod_devices(
    state: ReadOnlyState, kinds: list[str], pod_key: str, *, node: str | None, group: str | None
) -> AllocationExplanation | None:
    """The pod ``pod_key`` (pending, or in the cluster) on ``node`` or a new node of ``group``;
    None when it has no claim left to allocate.

    Raises:
        NotFoundError: no such pod, node or node group in the run.
        AllocationError: the allocator refuses the pod's claims outright.
    """
    pod = state.get(PENDING_KIND, pod_key) or state.get(POD_KIND, pod_key)
    if pod is None:
        raise NotFoundError(f"the run holds no pod {pod_key}")
    plan = state.get(SIM_KIND, PLAN_KEY) or {}
    gates = (plan.get("settings") or {}).get("feature_gates") or None
    memory = MemoryStore()
    for kind in kinds:
        for key, value in state.items(kind).items():
            memory.put(kind, key, value)
    cluster = ClusterSnapshot(memory, features=gates)
    if group is not None:
        record: Any = state.get(GROUP_KIND, group)
        if record is None:
            raise NotFoundError(f"the run has no node group {group!r}")
        name = f"{group}-template"
        while cluster.node(name) is not None:
            name += "-x"
        new, slices = instantiate(NodeGroup(group, record["node"], record["slices"]), name)
        cluster.add_node(new, slices=slices)
        node = name
    assert node is not None
    if cluster.node(node) is None:
        raise NotFoundError(
            f"the run has no node {node!r} (see its node names with drasnap inspect --kind Node)"
        )
    unbound = {**pod, "spec": {k: v for k, v in (pod.get("spec") or {}).items() if k != "nodeName"}}
    found = cluster.explain_devices(unbound, node)
    if found is not None and group is not None:
        found.node = f"{node} (a new node of node group {group})"
    return found
