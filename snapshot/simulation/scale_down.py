"""Scale-down: upstream's ``BenchmarkRunOnceScaleDownDRA`` loop (cluster-autoscaler
``core/bench/benchmark_runonce_test.go``; the RemovalSimulator of ``simulator/cluster.go``).

For each candidate node in name order: Fork, unschedule its pods, remove the node, try to place
each pod on the remaining nodes (first fit, in name order); Commit if all fit, else Revert.
Step i decides candidate i.
"""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.simulation.plans import ScaleDownPlan
from drasnap.snapshot.simulation.record import RunContext


def setup(sim: RunContext, settings: dict[str, Any]) -> ScaleDownPlan:
    return ScaleDownPlan(settings, candidates=sim.cluster.node_names())


def try_remove(sim: RunContext, node: str, *, plan: bool = True) -> int | None:
    """Simulate removing ``node``; returns how many pods moved, or None if it stays.

    ``plan``: first find where the pods would go on the indexes, without writing
    (``ClusterSnapshot.plan_moves``); a removal found to fail is then a fork and a revert with
    nothing between (the journal does not say which pod found no node), and one found to
    succeed writes each move as one put, without searching again, then deletes the node. Where
    the plan cannot say (claims, affinity, taints), the pods are tried through the store. The
    state reached is the same either way (``tests/snapshot/simulation/test_scale_down_plan.py``)."""
    cs = sim.cluster
    on_node = cs.pods_on_node(node)
    decided, targets = cs.plan_moves(on_node, node) if plan else (False, None)
    sim.fork(f"remove node {node}")
    if decided and targets is None:
        sim.revert()
        return None
    if targets is not None:
        # Each pod leaves for its new node in one write (not a delete and a put), then the
        # node goes, empty: the same state as unscheduling all, removing, placing.
        for pod, target in zip(on_node, targets, strict=True):
            cs.move(pod, target)
        cs.remove_node(node)
        sim.commit()
        return len(on_node)
    pods = [
        cs.unschedule_pod(p["metadata"].get("namespace", "default"), p["metadata"]["name"])
        for p in on_node
    ]
    cs.remove_node(node)
    for pod in pods:  # first fit over the other nodes, in name order
        if cs.schedule_pod_anywhere(pod) is None:
            sim.revert()
            return None
    sim.commit()
    return len(pods)


def run(sim: RunContext, plan: ScaleDownPlan) -> dict[str, Any]:
    candidates = plan.candidates
    progress = sim.progress()
    results: dict[str, Any] = dict(progress["results"]) or {"nodes_removed": 0, "placed": 0}
    total = len(candidates)
    sim.advance(progress["step"], f"{results['nodes_removed']:,} nodes removed")
    for step in range(progress["step"], total):
        moved = try_remove(sim, candidates[step])
        if moved is not None:
            results = {
                "nodes_removed": results["nodes_removed"] + 1,
                "placed": results["placed"] + moved,
            }
        sim.advance(step + 1, f"{results['nodes_removed']:,} nodes removed")
        sim.save(step + 1, results, done=step + 1 == total)
    if total == 0:
        sim.save(0, results, done=True)
    return results
