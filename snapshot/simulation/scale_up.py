"""Scale-up: upstream's ``BenchmarkRunOnceScaleUpDRA`` loop (cluster-autoscaler
``core/bench/benchmark_runonce_test.go``).

For each node group in turn: Fork, add template nodes one by one and bin-pack the pending pods
onto them (each pod tries the newest node, then a new one), record how many nodes the group
needs, Revert. Then take the group needing the fewest nodes (the first on a tie) and apply that
expansion: Fork, add, schedule, Commit. Pending pods that fit no node of a group stay pending,
and the run records why (``snapshot.simulation.failures``: a ``PodFailure`` each).

Steps: step i < len(groups) estimates group i; step len(groups) applies the best one.

The expansion is the best group's estimate made again on the state the estimate started
from (a revert returns to it): the estimate records its placements
(``ClusterSnapshot.recording``) and the expansion writes them again (``place``) rather than
searching for them a second time, when it runs in the same process. Same state, same
decisions: the objects, the journal's writes and the state digest are those a second search
gives (``tests/snapshot/simulation/test_scale_up_replay.py`` compares the two).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from drasnap.snapshot.cluster.snapshot import Placed
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.simulation.failures import record_unschedulable
from drasnap.snapshot.simulation.inputs import NodeGroup, StartingObjects, instantiate
from drasnap.snapshot.simulation.plans import ScaleUpPlan
from drasnap.snapshot.simulation.record import RunContext

PENDING_KIND = "PendingPod"
GROUP_KIND = "NodeGroup"


def setup(sim: RunContext, cluster: StartingObjects, settings: dict[str, Any]) -> ScaleUpPlan:
    """Write the starting state; returns the run's plan."""
    pending = [key_of(pod) for pod in cluster.pending]
    for key, pod in zip(pending, cluster.pending, strict=True):
        sim.store.put(PENDING_KIND, key, pod)
    for group in cluster.groups:
        sim.store.put(GROUP_KIND, group.name, {"node": group.node, "slices": group.slices})
    return ScaleUpPlan(
        settings,
        pending=pending,
        groups=[g.name for g in cluster.groups],
    )


_REPORT_EVERY = 64  # pods between progress reports


# What one pod's turn of the bin-packing did: None (placed on the newest node), a node name
# (placed on that new node), or ("removed", name) (a new node it did not fit, taken away).
_Turn = str | tuple[str, str] | None


class Packing(NamedTuple):
    """A bin-packing's decisions, to make again on the state it started from."""

    group: str
    turns: list[_Turn]
    placed: list[Placed]


def binpack(
    sim: RunContext,
    group: NodeGroup,
    pending: list[KubeObject],
    step: int = 0,
    *,
    again: Packing | None = None,
) -> tuple[int, int, Packing]:
    """Add nodes of ``group`` and place ``pending`` on them; returns (nodes added, pods
    placed, the decisions).

    ``again``: the decisions of a bin-packing of the same group and pods on this same state,
    written again instead of searched for. ``step`` is the run's step it belongs to, for
    progress reports."""
    if again is not None:
        added, placed = _write_again(sim, group, pending, step, again)
        return added, placed, again
    cs = sim.cluster
    added = placed = 0
    newest: str | None = None
    turns: list[_Turn] = []
    with cs.recording() as log:
        for i, pod in enumerate(pending):
            _report(sim, group, step, i, len(pending), added, placed)
            if newest is not None and cs.schedule_pod_anywhere(pod, [newest]) is not None:
                turns.append(None)
                placed += 1
                continue
            name = f"{group.name}-{added:05d}"
            node, slices = instantiate(group, name)
            cs.add_node(node, slices=slices)
            if cs.schedule_pod_anywhere(pod, [name]) is None:
                cs.remove_node(name)  # the pod fits no node of this group: it stays pending
                turns.append(("removed", name))
                continue
            turns.append(name)
            newest = name
            added += 1
            placed += 1
    return added, placed, Packing(group.name, turns, log)


def _write_again(
    sim: RunContext, group: NodeGroup, pending: list[KubeObject], step: int, again: Packing
) -> tuple[int, int]:
    """The writes of ``again``'s bin-packing, in its order, without its search."""
    cs = sim.cluster
    added = placed = 0
    recorded = iter(again.placed)
    for i, (pod, turn) in enumerate(zip(pending, again.turns, strict=True)):
        _report(sim, group, step, i, len(pending), added, placed)
        if isinstance(turn, tuple):  # a node the pod did not fit: added and taken away
            node, slices = instantiate(group, turn[1])
            cs.add_node(node, slices=slices)
            cs.remove_node(turn[1])
            continue
        if turn is not None:
            node, slices = instantiate(group, turn)
            cs.add_node(node, slices=slices)
            added += 1
        cs.place(pod, next(recorded))
        placed += 1
    return added, placed


def _report(
    sim: RunContext, group: NodeGroup, step: int, i: int, total: int, added: int, placed: int
) -> None:
    if i % _REPORT_EVERY == 0:
        sim.advance(step + i / total, f"{group.name}: {added:,} nodes, {placed:,} pods")


def run(sim: RunContext, plan: ScaleUpPlan) -> dict[str, Any]:
    """Run (or go on with) the steps; returns the final results."""
    store = sim.store
    pending = [store.get(PENDING_KIND, key) for key in plan.pending]
    groups = [
        NodeGroup(name, store.get(GROUP_KIND, name)["node"], store.get(GROUP_KIND, name)["slices"])
        for name in plan.groups
    ]
    progress = sim.progress()
    results: dict[str, Any] = dict(progress["results"])
    estimates: dict[str, int] = dict(results.get("estimates", {}))
    total = len(groups) + 1
    kept: Packing | None = None  # the best estimate's decisions so far, made in this process
    for step in range(progress["step"], len(groups)):
        group = groups[step]
        sim.fork(f"estimate node group {group.name}")
        nodes, placed, packing = binpack(sim, group, pending, step)
        sim.revert()
        estimates[group.name] = nodes if placed else -1
        if placed and (kept is None or nodes < estimates[kept.group]):
            kept = packing
        # A copy: the store keeps the value it is given, which must never change afterwards
        # (the next step adds to ``estimates``).
        results = {"estimates": dict(estimates)}
        sim.save(step + 1, results)
    usable = [g for g in groups if estimates.get(g.name, -1) > 0]
    if not usable:
        record_unschedulable(sim, pending, groups, "scale-up")
        results = {"estimates": estimates, "node_group": None, "nodes_added": 0, "placed": 0}
        sim.save(total, results, done=True)
        return results
    best = min(usable, key=lambda g: estimates[g.name])  # min keeps the first on a tie
    sim.fork(f"scale up node group {best.name}")
    again = kept if kept is not None and kept.group == best.name else None
    nodes, placed, _ = binpack(sim, best, pending, len(groups), again=again)
    sim.commit()
    for pod in pending:
        if sim.cluster.pod(pod["metadata"].get("namespace", "default"), pod["metadata"]["name"]):
            store.delete(PENDING_KIND, key_of(pod))
    record_unschedulable(sim, pending, groups, "scale-up")
    results = {"estimates": estimates, "node_group": best.name, "nodes_added": nodes}
    results["placed"] = placed
    sim.advance(total, f"{best.name}: {nodes:,} nodes added")
    sim.save(total, results, done=True)
    return results
