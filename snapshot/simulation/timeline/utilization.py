"""The cluster's utilization over a timeline (docs/timelines.md 2.9): what the nodes hold over
what they offer, sampled after every instant and every loop that changed something, and
integrated over time (a step function between samples).

- ``cpu``, ``memory``: the bound pods' requests over the nodes' allocatable, summed over every
  node of the cluster (booting instances are not nodes yet);
- ``devices``: the devices some claim holds (whole, or a share of one that allows several
  allocations) over the devices the nodes' slices publish; a pool with shared counters
  (partitionable devices, whose devices overlap) is left out of both counts, and the result
  says how many such pools there were.
"""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.k8s.kinds import CLAIM_KIND
from drasnap.snapshot.scheduling import node_facts

RESOURCES = ("cpu", "memory", "devices")


def sample(cs: ClusterSnapshot) -> tuple[dict[str, float | None], int]:
    """Each resource's share in use now (None: nothing offered), and the pools left out."""
    used = {"cpu": 0, "memory": 0}
    offered = {"cpu": 0, "memory": 0}
    pools: dict[tuple[str, str], int] = {}
    left_out = 0
    for name in cs.node_names():
        node = cs.node(name)
        if node is None:
            continue
        have = node_facts(node).allocatable
        asked = cs.requested(name)
        offered["cpu"] += have.cpu
        offered["memory"] += have.memory
        used["cpu"] += min(asked.cpu, have.cpu)
        used["memory"] += min(asked.memory, have.memory)
        for slice_ in cs.dra.node_resource_slices(name) or ():
            spec = slice_.get("spec") or {}
            key = (str(spec.get("driver")), str((spec.get("pool") or {}).get("name")))
            if spec.get("sharedCounters") or any(
                d.get("consumesCounters") for d in spec.get("devices") or ()
            ):
                left_out += key not in pools or pools[key] >= 0
                pools[key] = -1
            elif pools.get(key, 0) >= 0:
                pools[key] = pools.get(key, 0) + len(spec.get("devices") or ())
    held: set[tuple[str, str, str]] = set()
    for claim in cs.store.items(CLAIM_KIND).values():
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for result in (allocation.get("devices") or {}).get("results") or ():
            key = (str(result.get("driver")), str(result.get("pool")))
            if pools.get(key, -1) >= 0:
                held.add((*key, str(result.get("device"))))
    devices = sum(n for n in pools.values() if n > 0)
    shares: dict[str, float | None] = {
        r: (used[r] / offered[r] if offered[r] else None) for r in ("cpu", "memory")
    }
    shares["devices"] = len(held) / devices if devices else None
    return shares, left_out


def integrate(results: dict[str, Any], cs: ClusterSnapshot, now: int) -> None:
    """Add the time since the last sample at the last sample's values to the running
    integrals in ``results`` (the run record's), then take a sample at ``now``."""
    last = results.get("utilization_last")
    if last is not None and now > int(last["t"]):
        spent = results.setdefault("utilization_ms", dict.fromkeys(RESOURCES, 0.0))
        offered = results.setdefault("offered_ms", dict.fromkeys(RESOURCES, 0))
        for r in RESOURCES:
            if last[r] is not None:
                spent[r] += last[r] * (now - int(last["t"]))
                offered[r] += now - int(last["t"])
    shares, left_out = sample(cs)
    results["utilization_last"] = {"t": now, **shares}
    results["partitionable_pools"] = max(int(results.get("partitionable_pools", 0)), left_out)


def summary(results: dict[str, Any]) -> dict[str, Any]:
    """Mean (over the time anything was offered) and final utilization per resource."""
    spent = results.get("utilization_ms") or {}
    offered = results.get("offered_ms") or {}
    last = results.get("utilization_last") or {}
    return {
        "mean": {
            r: (round(spent[r] / offered[r], 6) if offered.get(r) else None) for r in RESOURCES
        },
        "final": {r: (None if last.get(r) is None else round(last[r], 6)) for r in RESOURCES},
        "partitionable_pools_left_out": int(results.get("partitionable_pools", 0)),
    }
