"""kube-scheduler between the cluster-autoscaler's loops (docs/timelines.md 1.5, 2.4).

A pass takes the pending pods in the queue's order (``queuesort/priority_sort.go``: higher
priority first, then the earlier arrival; then the key, so the order is total), keeps the nodes
every filter passes (drasnap's filters, DynamicResources included), scores them with the
default profile (:mod:`snapshot.scheduling.scoring`: LeastAllocated, or MostAllocated with
``--scheduler-scoring``) and binds the pod to the best, allocating its claims as the
DynamicResources plugin does. Ties break from the seed, per pod and instant, so a resumed run
breaks them the same way.

Pods alike (the estimator's equivalence: same namespace, labels and spec) that one of them
found no node for are not tried again in the same pass until a pod is bound: nothing changed
for them. kube-scheduler's retry backoff (1 to 10 s) is not modelled: a pod is retried at the
first instant that frees or adds capacity.
"""

from __future__ import annotations

from typing import Any, Protocol

from drasnap.snapshot.autoscaler.estimator import pod_signature
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.scheduling.scoring import best_node
from drasnap.snapshot.simulation.autoscale.pod_list import refusal_message
from drasnap.snapshot.simulation.plans import TimelinePlan
from drasnap.snapshot.simulation.record import RunContext
from drasnap.snapshot.simulation.scale_up import PENDING_KIND


class World(Protocol):
    """What a pass reads and writes of the engine's world (:class:`.engine.World`)."""

    sim: RunContext
    plan: TimelinePlan
    lives: dict[str, dict[str, Any]]

    @property
    def store(self) -> Any: ...

    def waits(self, key: str, reason: str, now: int, by: str) -> None: ...

    def bound(self, key: str, node: str, now: int) -> None: ...

    def count(self, name: str, by: int = 1) -> None: ...


def schedule(world: World, now: int, only: list[str] | None) -> int:
    """One pass at ``now`` over the pending pods (``only``: just these, when nothing but their
    arrival changed since the last pass). Returns how many were bound."""
    store = world.store
    cs = world.sim.cluster
    pending: dict[str, KubeObject] = dict(store.items(PENDING_KIND))
    if only is not None:
        pending = {k: pending[k] for k in only if k in pending}
    if not pending:
        return 0
    strategy = str(world.plan.settings.get("scheduler_scoring") or "LeastAllocated")
    seed = world.plan.settings.get("seed", 0)
    order = sorted(pending, key=lambda key: _queue_order(world, key, pending[key]))
    failed: dict[bytes, str] = {}
    bound = 0
    for key in order:
        pod = pending[key]
        alike = pod_signature(pod)
        if alike in failed:
            world.waits(key, failed[alike], now, "scheduler")
            continue
        nodes = cs.feasible_nodes(pod)
        if not nodes:
            failed[alike] = refusal_message(cs, pod, cs.node_names())
            world.waits(key, failed[alike], now, "scheduler")
            continue
        node = best_node(cs, pod, nodes, strategy, f"{seed}/{now}/{key}")
        cs.schedule_pod(pod, node)
        store.delete(PENDING_KIND, key)
        world.bound(key, node, now)
        bound += 1
        failed.clear()
    world.count("placed", bound)
    return bound


def _queue_order(world: World, key: str, pod: KubeObject) -> tuple[int, int, str]:
    life = world.lives.get(key) or {}
    arrived = life.get("arrived")
    priority = int((pod.get("spec") or {}).get("priority") or 0)
    return (-priority, -1 if arrived is None else int(arrived), key)
