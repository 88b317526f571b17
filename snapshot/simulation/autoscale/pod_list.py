"""Step 0, the pending pods on the existing nodes (``core/podlistprocessor``,
filterOutSchedulableByPacking), and the round robin every scheduling simulation of the loop
places pods by."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drasnap.snapshot.autoscaler.estimator import pod_signature
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import SchedulingError
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.scheduling.fit_error import FitError
from drasnap.snapshot.simulation.autoscale.records import CURSOR_KEY, DECISION_KIND
from drasnap.snapshot.simulation.plans import AutoscalePlan
from drasnap.snapshot.simulation.record import RunContext
from drasnap.snapshot.simulation.scale_up import PENDING_KIND


def still_pending(sim: RunContext, plan: AutoscalePlan) -> list[KubeObject]:
    """The pods still pending, in plan order."""
    found = (sim.store.get(PENDING_KIND, key) for key in plan.pending)
    return [pod for pod in found if pod is not None]


def place_on_existing(sim: RunContext, plan: AutoscalePlan) -> int:
    """Place what fits on the existing nodes (``core/podlistprocessor/filter_out_schedulable.go``,
    filterOutSchedulableByPacking): pods by priority, highest first, each on the first node
    that fits starting one past the node that took the previous pod (:func:`round_robin`).
    Returns how many pods were placed."""
    cs = sim.cluster
    existing = cs.node_names()
    pending = still_pending(sim, plan)
    cursor = int(sim.store.get(DECISION_KIND, CURSOR_KEY) or 0)
    if not pending:
        return 0
    found: dict[str, dict[str, Any]] = {}
    # Asking every node why is the costly part; pods alike get the same answer as long as
    # nothing was placed in between (a Deployment's pods once the free room is gone).
    answers: dict[bytes, str] = {}
    sim.fork("place pending pods on existing nodes")
    for pod in pending:
        where, cursor = round_robin(cs, pod, existing, cursor)
        why = None
        if where is not None:
            answers.clear()
        else:
            alike = pod_signature(pod)
            why = answers.get(alike)
            if why is None:
                why = answers[alike] = refusal_message(cs, pod, existing)
        found[key_of(pod)] = {"existing": where, "why": why}
    sim.commit()
    sim.store.put(DECISION_KIND, CURSOR_KEY, cursor)
    for key, decision in found.items():
        sim.store.put(DECISION_KIND, f"pod/{key}", decision)
        if decision["existing"] is not None:
            sim.store.delete(PENDING_KIND, key)
    return sum(1 for d in found.values() if d["existing"] is not None)


def fit_error(cs: ClusterSnapshot, pod: KubeObject, nodes: Sequence[str]) -> FitError | None:
    """Why ``pod`` fits none of ``nodes``, in the scheduler's words (kube-scheduler's filters,
    ``ClusterSnapshot.fit_error``); None when it fits one."""
    try:
        return cs.fit_error(pod, nodes)
    except SchedulingError:
        return None


def refusal_message(cs: ClusterSnapshot, pod: KubeObject, nodes: Sequence[str]) -> str:
    """The scheduler's message for a pod the caller found fits none of ``nodes``."""
    found = fit_error(cs, pod, nodes)
    assert found is not None, "the pod was just refused by every node"
    return found.message()


def round_robin(
    cs: ClusterSnapshot, pod: KubeObject, order: list[str], cursor: int, skip: str | None = None
) -> tuple[str | None, int]:
    """Place ``pod`` on the first node of ``order`` where it fits, starting one past the node
    that took the previous pod (``lastIndexOrderMapping`` with offset 1,
    ``simulator/clustersnapshot/scheduling_opts.go``, through ``RunFiltersUntilPassingNode``).
    Returns the node (or None) and the new cursor."""
    count = len(order)
    if count == 0:
        return None, cursor
    first = (cursor + 1) % count
    rotated = [n for n in order[first:] + order[:first] if n != skip]
    where = cs.schedule_pod_anywhere(pod, rotated)
    if where is None:
        return None, cursor
    return where, order.index(where)
