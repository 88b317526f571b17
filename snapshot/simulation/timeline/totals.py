"""A timeline's totals, from its records (docs/timelines.md 2.9; names as upstream's efficiency
benchmark gives them where it has one: kubernetes-sigs/cluster-autoscaler#18, #76)."""

from __future__ import annotations

import math
from typing import Any, Protocol

from drasnap.snapshot.simulation.plans import TimelinePlan
from drasnap.snapshot.simulation.scale_up import PENDING_KIND
from drasnap.snapshot.simulation.timeline.records import NODE_LIFE, POD_LIFE

_HOUR_MS = 3_600_000


class _Reader(Protocol):
    def items(self, kind: str) -> dict[str, Any]: ...


def nearest_rank(values: list[float], percent: int) -> float | None:
    """The nearest-rank percentile (the smallest value with ``percent`` % at or below it)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def totals(store: _Reader, plan: TimelinePlan) -> dict[str, Any]:
    """Node-hours per group (from the scale-up to the deletion: the cloud bills booting
    instances; ready node-hours from registration), the pods' waits, and what never ran."""
    end = plan.until_ms
    node_hours: dict[str, float] = {g: 0.0 for g in plan.groups}
    device_hours: dict[str, float] = {g: 0.0 for g in plan.groups}
    ready_hours: dict[str, float] = {g: 0.0 for g in plan.groups}
    count_final: dict[str, int] = {g: 0 for g in plan.groups}
    for record in store.items(NODE_LIFE).values():
        group = record["group"]
        gone = end if record.get("deleted") is None else min(end, int(record["deleted"]))
        node_hours[group] += max(0, gone - int(record["requested"])) / _HOUR_MS
        if record.get("published") is not None:  # its devices, from their publication
            hours = max(0, gone - int(record["published"])) / _HOUR_MS
            device_hours[group] += int(record.get("devices") or 0) * hours
        if record.get("ready") is not None:
            ready_hours[group] += max(0, gone - int(record["ready"])) / _HOUR_MS
            if record.get("deleted") is None:
                count_final[group] += 1
    waits: list[float] = []
    never = lost = 0
    pending = store.items(PENDING_KIND)
    for key, life in store.items(POD_LIFE).items():
        if life.get("bound") is not None:
            start = life.get("arrived")
            waits.append((int(life["bound"]) - (0 if start is None else int(start))) / 1000)
        elif key in pending:
            never += 1
        if life.get("fate") == "lost":
            lost += 1
    costs = {g: o["cost"] for g, o in plan.group_options.items() if "cost" in o}
    return {
        "until_s": end / 1000,
        # (groups without a cost: not counted; the summary says which have one)
        "cluster_cost": round(sum(node_hours[g] * c for g, c in costs.items()), 6)
        if costs
        else None,
        "node_hours": {g: round(h, 6) for g, h in node_hours.items()},
        "ready_node_hours": {g: round(h, 6) for g, h in ready_hours.items()},
        "device_hours": {g: round(h, 6) for g, h in device_hours.items()},
        "nodes_final": count_final,
        "pod_wait_s": {
            "p50": nearest_rank(waits, 50),
            "p90": nearest_rank(waits, 90),
            "p99": nearest_rank(waits, 99),
            "max": max(waits) if waits else None,
        },
        "pods_bound": len(waits),
        "never_scheduled": never,
        "lost": lost,
    }
