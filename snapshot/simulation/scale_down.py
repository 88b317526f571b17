"""Scale-down: upstream's ``BenchmarkRunOnceScaleDownDRA`` loop (cluster-autoscaler
``core/bench/benchmark_runonce_test.go``; the RemovalSimulator of ``simulator/cluster.go``).

For each candidate node in name order: Fork, unschedule its pods, remove the node, try to place
each pod on the remaining nodes (first fit, in name order); Commit if all fit, else Revert.
Step i decides candidate i.
"""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.simulation.record import Sim


def setup(sim: Sim) -> dict[str, Any]:
    return {"candidates": sim.cluster.node_names()}


def try_remove(sim: Sim, node: str) -> int | None:
    """Simulate removing ``node``; returns how many pods moved, or None if it stays."""
    cs = sim.cluster
    sim.fork(f"remove node {node}")
    pods = [
        cs.unschedule_pod(p["metadata"].get("namespace", "default"), p["metadata"]["name"])
        for p in cs.pods_on_node(node)
    ]
    cs.remove_node(node)
    for pod in pods:  # first fit over the other nodes, in name order
        if cs.schedule_pod_anywhere(pod) is None:
            sim.revert()
            return None
    sim.commit()
    return len(pods)


def run(sim: Sim, plan: dict[str, Any]) -> dict[str, Any]:
    candidates: list[str] = plan["candidates"]
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
