"""A node's utilization as the cluster-autoscaler computes it for scale-down.

Upstream: ``cluster-autoscaler/simulator/utilization/info.go`` (``Calculate``) and
``simulator/dynamicresources/utils/utilization.go``. A node with local ResourceSlices is
measured by its DRA devices only: per (driver, pool) of its slices, the share of devices held
by the claims of the pods on it, and the highest pool wins. In a pool, atomic devices (no
``consumesCounters``) count allocated/total; partitionable devices count by their counters:
per counter set (the ``sharedCounters`` of the pool's slices), the most consumed counter, and
these averaged over the counter sets the devices consume; a pool holding both is the weighted
average by device count (partitionable devices counted once per counter set). A node without
local slices is measured by ``max(cpu, memory)``: the pods' requests over allocatable.

Pods are all counted, DaemonSet and mirror pods included (upstream's
``--ignore-daemonsets-utilization`` and ``--ignore-mirror-pods-utilization`` default to false);
pods being deleted for longer than their grace period are not (``drain.IsPodLongTerminating``
needs the current time: a pod with a ``deletionTimestamp`` is counted, and the caller warns).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from drasnap.snapshot.allocation.pools import newest_generation, pool_fields
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import UtilizationError
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.k8s.quantity import quantity_value
from drasnap.snapshot.scheduling import compute_pod_requests, node_allocatable_requests

# UtilizationError lives in snapshot.errors' tree; it is named here too, as this module's.
__all__ = ["Utilization", "UtilizationError", "node_utilization", "pool_utilization"]


@dataclass(frozen=True)
class Utilization:
    """``value`` is what is compared with the threshold; ``resource`` names where it came
    from (``cpu``, ``memory`` or ``driver/pool``)."""

    value: float
    resource: str
    cpu: float = 0.0
    memory: float = 0.0
    dra: float = 0.0


def node_utilization(cs: ClusterSnapshot, node_name: str) -> Utilization:
    """The utilization of ``node_name`` in ``cs`` (module docstring).

    Raises:
        UtilizationError: as upstream: a claim of a pod on the node is not allocated, a pool
            is missing slices of its newest generation, or allocatable cpu/memory is absent or 0.
    """
    node = cs.node(node_name)
    if node is None:
        raise UtilizationError(f"node {node_name!r} not found")
    pods = cs.pods_on_node(node_name)
    slices = cs.dra.node_resource_slices(node_name) or []
    if slices:
        claims: dict[str, KubeObject] = {}
        for pod in pods:
            for claim in (
                cs.dra.pod_claims(pod) if (pod.get("spec") or {}).get("resourceClaims") else ()
            ):
                claims.setdefault(key_of(claim), claim)
        resource, value = highest_dra_utilization(slices, claims.values())
        return Utilization(value, resource, dra=value)
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    alloc = node_allocatable_requests(node)
    for name in ("cpu", "memory"):
        if name not in allocatable:
            raise UtilizationError(f"failed to get {name} from {node_name}")
    if alloc.cpu == 0:
        raise UtilizationError(f"cpu is 0 at {node_name}")
    if alloc.memory == 0:
        raise UtilizationError(f"memory is 0 at {node_name}")
    cpu = sum(compute_pod_requests(p).cpu for p in pods) / alloc.cpu
    memory = sum(compute_pod_requests(p).memory for p in pods) / alloc.memory
    # Upstream takes cpu only when strictly higher.
    if cpu > memory:
        return Utilization(cpu, "cpu", cpu=cpu, memory=memory)
    return Utilization(memory, "memory", cpu=cpu, memory=memory)


def highest_dra_utilization(
    slices: list[KubeObject], claims: Iterable[KubeObject]
) -> tuple[str, float]:
    """The (``driver/pool``, utilization) of the most used pool of ``slices``."""
    allocated: dict[tuple[str, str], set[str]] = {}
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation")
        if allocation is None:
            raise UtilizationError(f"claim {key_of(claim)} not allocated")
        for result in (allocation.get("devices") or {}).get("results") or ():
            if result.get("adminAccess"):
                continue  # admin access does not take the device
            where = (str(result.get("driver")), str(result.get("pool")))
            allocated.setdefault(where, set()).add(str(result.get("device")))
    pools: dict[tuple[str, str], list[KubeObject]] = {}
    for slice_ in slices:
        spec = slice_.get("spec") or {}
        pools.setdefault(
            (str(spec.get("driver")), str((spec.get("pool") or {}).get("name"))), []
        ).append(slice_)
    best_name, best = "", 0.0
    # Upstream walks Go maps (random order) and keeps the last pool on a tie (>=); sorted here.
    for (driver, pool), pool_slices in sorted(pools.items()):
        current = _current_generation(pool, pool_slices)
        util = pool_utilization(current, allocated.get((driver, pool), set()))
        if util >= best:
            best_name, best = f"{driver}/{pool}", util
    return best_name, best


def _current_generation(pool: str, slices: list[KubeObject]) -> list[KubeObject]:
    ((current, want),) = newest_generation(slices).values()  # the slices of one pool
    if len(current) != want:
        newest = pool_fields(current[0])[1]
        raise UtilizationError(
            f'pool "{pool}" error: newest generation: {newest}, slice count: {want} - found '
            f"only {len(current)} slices"
        )
    return current


def _value(counter: Any) -> Fraction:
    """A counter's exact value: upstream divides ``AsApproximateFloat64`` values, so 100m of
    400m is 0.25 (``Value()`` would round both up to 1)."""
    return quantity_value(str((counter or {}).get("value", "0")))


def pool_utilization(slices: list[KubeObject], allocated: set[str]) -> float:
    """One pool's utilization (module docstring), ``allocated`` naming its taken devices."""
    devices = [d for s in slices for d in (s.get("spec") or {}).get("devices") or ()]
    atomic = [d for d in devices if not d.get("consumesCounters")]
    partitionable = [d for d in devices if d.get("consumesCounters")]
    taken_atomic = [d for d in atomic if d.get("name") in allocated]
    taken_parts = [d for d in partitionable if d.get("name") in allocated]
    atomic_util = len(taken_atomic) / len(atomic) if atomic else 0.0
    if len(taken_atomic) == len(taken_atomic) + len(taken_parts):
        return atomic_util  # nothing partitionable allocated (upstream's first shortcut)
    sets = {c.get("counterSet") for d in partitionable for c in d["consumesCounters"]}
    totals: dict[str, dict[str, Fraction]] = {}
    for s in slices:
        for counter_set in (s.get("spec") or {}).get("sharedCounters") or ():
            named = totals.setdefault(str(counter_set.get("name")), {})
            for name, counter in (counter_set.get("counters") or {}).items():
                named[name] = named.get(name, Fraction(0)) + _value(counter)
    consumed: dict[str, dict[str, Fraction]] = {}
    for d in taken_parts:
        for use in d["consumesCounters"]:
            named = consumed.setdefault(str(use.get("counterSet")), {})
            for name, counter in (use.get("counters") or {}).items():
                named[name] = named.get(name, Fraction(0)) + _value(counter)
    part_util = 0.0
    for set_name, counters in totals.items():
        highest = 0.0
        for name, total in counters.items():
            if total == 0:
                continue
            used = consumed.get(set_name, {}).get(name)
            if used is not None:
                # As a float at once: for integer counters, the float division as before.
                highest = max(highest, float(used / total))
        part_util += highest / len(sets)
    if not taken_atomic:
        return part_util  # only partitionable devices allocated (upstream's second shortcut)
    weight = len(sets) / (len(sets) + len(atomic))
    return part_util * weight + atomic_util * (1 - weight)
