"""Autoscale: what one cluster-autoscaler loop (``StaticAutoscaler.RunOnce``) decides for the
cluster of ``--from``.

1. Pending pods (pods without ``spec.nodeName``), highest ``spec.priority`` first, are placed
   on the existing nodes where they fit (first fit, nodes by name): upstream's
   ``FilterOutSchedulable`` pod-list processor. Those that fit no node keep the scheduler's
   answer (``0/N nodes are available: ...``).
2. For each node group, the binpacking estimator (:mod:`snapshot.autoscaler.estimator`) places
   the rest on new nodes from the group's template, in a fork that is reverted, adding at most
   ``maxSize`` minus the group's current size (and upstream's ``--max-nodes-per-scaleup``,
   1,000). A group at its maximum is skipped (``max node group size reached``).
3. The expander chain (``--expander``, :mod:`snapshot.autoscaler.expanders`) chooses among the
   groups that place some pod; that group's expansion is applied (fork, estimate, commit).
   A pod left pending gets its reason: the scheduler's answer, then ``pod didn't trigger
   scale-up: ...`` with each group's reason counted, as the cluster-autoscaler's
   NotTriggerScaleUp event says it.
4. Scale-down, for each node that existed, by name: a node outside any node group, in a group at
   its ``minSize``, or whose utilization (:mod:`snapshot.autoscaler.utilization`) is not under
   ``--scale-down-utilization-threshold`` is kept with that reason; otherwise its pods
   (DaemonSet and mirror pods aside: they go with the node) are taken off, the node removed,
   and each pod placed on the remaining nodes in a fork: Commit if all fit, else Revert and
   keep the node, naming the pod that could not move (``simulator/cluster.go``'s
   RemovalSimulator).

Not modelled, said in the README: the waiting times (``--scale-down-unneeded-time``,
``--scale-down-delay-after-add``: a real loop that scales up removes nothing; a warning says
so), drain rules beyond a warning for pods without a controller, balancing similar groups.

Steps (each ends at depth 0 with the run record): 0 places on existing nodes; 1..G estimate
group i; G+1 applies the expander's choice; then one per scale-down candidate.
"""

from __future__ import annotations

import copy
import random
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from snapshot.autoscaler.estimator import (
    Estimate,
    equivalence_groups,
    estimate,
    order_groups,
)
from snapshot.autoscaler.expanders import Option, choose
from snapshot.autoscaler.utilization import UtilizationError, node_utilization
from snapshot.cluster import ClusterSnapshot
from snapshot.kinds import key_of, namespace_or_default
from snapshot.objects import KubeObject, name_of
from snapshot.scheduling.fit_error import FitError, NodeResult
from tools.scenarios.base import Sim
from tools.scenarios.inputs import Cluster, NodeGroup, group_of, instantiate
from tools.scenarios.scale_up import GROUP_KIND, PENDING_KIND

MAX_NODES_PER_SCALEUP = 1000  # upstream's --max-nodes-per-scaleup default
MAX_SIZE_REACHED = "max node group size reached"
_MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def setup(sim: Sim, cluster: Cluster) -> dict[str, Any]:
    """Write the starting state; returns what the plan record holds."""
    # Upstream sorts pending pods by priority, highest first (a stable sort).
    pending = sorted(
        cluster.pending, key=lambda p: -int((p.get("spec") or {}).get("priority") or 0)
    )
    for pod in pending:
        sim.store.put(PENDING_KIND, key_of(pod), pod)
    warnings = []
    pods_of = {name_of(node): pods for node, _slices, pods in cluster.nodes}
    for group in cluster.groups:
        sim.store.put(
            GROUP_KIND,
            group.name,
            {
                "node": group.node,
                "slices": group.slices,
                "minSize": group.min_size,
                "maxSize": group.max_size,
            },
        )
        daemons = [key_of(p) for p in pods_of.get(name_of(group.node), []) if _is_daemon(p)]
        if daemons:
            warnings.append(
                f"node group {group.name}: the DaemonSet pods of template node "
                f"{name_of(group.node)} ({', '.join(daemons)}) are not copied to new nodes "
                "(the cluster-autoscaler adds them to its template)"
            )
    return {
        "pending": [key_of(p) for p in pending],
        "groups": [g.name for g in cluster.groups],
        "candidates": sorted(name_of(node) for node, _s, _p in cluster.nodes),
        "members": {name_of(node): group_of(node) for node, _s, _p in cluster.nodes},
        "priorities": sorted(
            [p, list(patterns)] for p, patterns in (cluster.priorities or {}).items()
        ),
        "warnings": warnings,
    }


def steps(plan: dict[str, Any]) -> int:
    """How many steps the run has (module docstring)."""
    return len(plan["groups"]) + 2 + len(plan["candidates"])


def run(sim: Sim, plan: dict[str, Any]) -> dict[str, Any]:
    """Run (or go on with) the steps; returns the final results."""
    store = sim.store
    groups = []
    for name in plan["groups"]:
        record = store.get(GROUP_KIND, name)
        groups.append(
            NodeGroup(name, record["node"], record["slices"], record["minSize"], record["maxSize"])
        )
    progress = sim.progress()
    # A copy: the store keeps the values it is given, which must never change afterwards.
    results: dict[str, Any] = copy.deepcopy(progress["results"]) or {
        "placed_on_existing": {},
        "pending_reasons": {},
        "estimates": {},
        "node_group": None,
        "added": {},
        "new_nodes": [],
        "placed_on_new": {},
        "unschedulable": {},
        "removed": [],
        "kept": {},
        "warnings": list(plan["warnings"]),
        "placed": 0,
    }
    total = steps(plan)
    count = len(groups)
    for step in range(progress["step"], total):
        if step == 0:
            _place_on_existing(sim, plan, results)
            detail = f"{len(results['placed_on_existing']):,} pods on existing nodes"
        elif step <= count:
            _estimate_group(sim, plan, groups[step - 1], results)
            detail = f"estimated {groups[step - 1].name}"
        elif step == count + 1:
            _scale_up(sim, plan, groups, results)
            detail = f"added {sum(results['added'].values()):,} nodes"
        else:
            _scale_down(sim, plan, groups, plan["candidates"][step - count - 2], results)
            detail = f"{len(results['removed']):,} nodes removed"
        sim.advance(step + 1, detail)
        sim.save(step + 1, copy.deepcopy(results), done=step + 1 == total)
    return results


# -- step 0: the existing nodes' free room ------------------------------------------------------


def _pending(sim: Sim, plan: dict[str, Any]) -> list[KubeObject]:
    """The pods still pending, in plan order."""
    found = (sim.store.get(PENDING_KIND, key) for key in plan["pending"])
    return [pod for pod in found if pod is not None]


def _place_on_existing(sim: Sim, plan: dict[str, Any], results: dict[str, Any]) -> None:
    cs = sim.cluster
    existing = cs.node_names()
    pending = _pending(sim, plan)
    if not pending:
        return
    sim.fork("place pending pods on existing nodes")
    for pod in pending:
        where = cs.schedule_pod_anywhere(pod, existing)
        if where is not None:
            results["placed_on_existing"][key_of(pod)] = where
        else:
            results["pending_reasons"][key_of(pod)] = fit_error(cs, pod, existing).message()
    sim.commit()
    for key in results["placed_on_existing"]:
        sim.store.delete(PENDING_KIND, key)
    results["placed"] += len(results["placed_on_existing"])


def node_result(message: str) -> NodeResult:
    """The scheduler's reasons for a cluster snapshot's refusal of one node.

    The snapshot's messages name the pod and node; the scheduler's reasons do not, so that
    nodes refusing alike count together (``2 Insufficient cpu``). Messages this does not know
    are kept whole."""
    short = re.search(r"does not fit on node \S+: insufficient (.+)$", message)
    if short:
        return NodeResult(
            "NodeResourcesFit",
            tuple(
                "Too many pods" if what == "pods" else f"Insufficient {what}"
                for what in short.group(1).split(", ")
            ),
        )
    if "cannot allocate the devices" in message or message.startswith("no free device"):
        return NodeResult("DynamicResources", ("cannot allocate all claims",))
    if "allocated to another node" in message:
        return NodeResult("DynamicResources", ("resourceclaim not available on the node",))
    return NodeResult("", (message,))


def fit_error(cs: ClusterSnapshot, pod: KubeObject, nodes: Sequence[str]) -> FitError:
    """Why ``pod`` fits none of ``nodes`` (each must refuse it)."""
    refused = {}
    for name in nodes:
        message = cs.placement_failure(pod, name)
        if message is not None:
            refused[name] = node_result(message)
    return FitError(len(nodes), nodes=refused)


# -- steps 1..G: one estimate per group -----------------------------------------------------------


def _group_size(plan: dict[str, Any], results: dict[str, Any], group: str) -> int:
    removed = set(results["removed"])
    existing = sum(1 for n, g in plan["members"].items() if g == group and n not in removed)
    return existing + int(results["added"].get(group, 0))


def _limit(plan: dict[str, Any], results: dict[str, Any], group: NodeGroup) -> int:
    if group.max_size is None:
        return MAX_NODES_PER_SCALEUP
    return min(MAX_NODES_PER_SCALEUP, group.max_size - _group_size(plan, results, group.name))


def _new_node(cs: ClusterSnapshot, group: NodeGroup) -> Any:
    def make(index: int) -> tuple[KubeObject, list[KubeObject]]:
        name = f"{group.name}-new-{index}"
        while cs.node(name) is not None:  # a name the cluster already has
            name += "-x"
        return instantiate(group, name)

    return make


def _run_estimator(
    cs: ClusterSnapshot, group: NodeGroup, pending: list[KubeObject], limit: int
) -> Estimate:
    ordered = order_groups(equivalence_groups(pending), group.node)
    return estimate(cs, ordered, _new_node(cs, group), limit)


def _estimate_group(
    sim: Sim, plan: dict[str, Any], group: NodeGroup, results: dict[str, Any]
) -> None:
    cs = sim.cluster
    pending = _pending(sim, plan)
    record: dict[str, Any] = {"nodes": 0, "pods": [], "reasons": {}}
    results["estimates"][group.name] = record
    if not pending:
        return
    limit = _limit(plan, results, group)
    if limit <= 0:
        record["reasons"] = {key_of(p): MAX_SIZE_REACHED for p in pending}
        return
    sim.fork(f"estimate node group {group.name}")
    found = _run_estimator(cs, group, pending, limit)
    record["nodes"], record["pods"] = len(found.nodes), list(found.pods)
    placed = set(found.pods)
    probe: str | None = None
    for pod in pending:
        if key_of(pod) in placed:
            continue
        if probe is None:  # a fresh node of the group: why the pod fits no new node
            node, slices = _new_node(cs, group)(len(found.added))
            cs.add_node(node, slices=slices)
            probe = name_of(node)
        message = cs.placement_failure(pod, probe)
        if message is not None:
            reason = node_result(message).message
        else:
            reason = MAX_SIZE_REACHED if found.limited else "not placed by the estimator"
        record["reasons"][key_of(pod)] = reason
    sim.revert()


# -- step G+1: the expander's choice --------------------------------------------------------------


def _scale_up(
    sim: Sim, plan: dict[str, Any], groups: list[NodeGroup], results: dict[str, Any]
) -> None:
    cs = sim.cluster
    settings = plan["settings"]
    estimates = results["estimates"]
    options = []
    for group in groups:
        found = estimates.get(group.name) or {}
        if found.get("nodes", 0) > 0 and found.get("pods"):
            pods = [sim.store.get(PENDING_KIND, key) for key in found["pods"]]
            options.append(Option(group.name, found["nodes"], pods, group.node))
    priorities = {int(p): list(patterns) for p, patterns in plan["priorities"]}
    best = choose(
        options, settings["expander"].split(","), random.Random(settings["seed"]), priorities
    )
    if best is not None:
        group = next(g for g in groups if g.name == best.group)
        pending = _pending(sim, plan)
        sim.fork(f"scale up node group {group.name}")
        found = _run_estimator(cs, group, pending, _limit(plan, results, group))
        for name in found.added:
            if name not in found.nodes:
                cs.remove_node(name)  # upstream counts only new nodes that got a pod
        sim.commit()
        for key in found.pods:
            sim.store.delete(PENDING_KIND, key)
            namespace, pod_name = key.split("/", 1)
            bound = cs.pod(namespace, pod_name)
            results["placed_on_new"][key] = (bound or {}).get("spec", {}).get("nodeName")
        results["node_group"] = group.name
        results["added"] = {group.name: len(found.nodes)}
        results["new_nodes"] = list(found.nodes)
        results["placed"] += len(found.pods)
    for pod in _pending(sim, plan):
        key = key_of(pod)
        why = results["pending_reasons"].get(key, "")
        fits = [g.name for g in groups if key in (estimates.get(g.name) or {}).get("pods", ())]
        if fits:
            tail = (
                f"pod didn't trigger scale-up: it fits node group(s) {', '.join(fits)}, but "
                f"the expander chose {results['node_group']}"
            )
        elif not groups:
            tail = "pod didn't trigger scale-up: no node groups"
        else:
            counts = Counter(
                (estimates.get(g.name) or {}).get("reasons", {}).get(key, "no pending pods")
                for g in groups
            )
            tail = "pod didn't trigger scale-up: " + ", ".join(
                sorted(f"{n} {reason}" for reason, n in counts.items())
            )
        results["unschedulable"][key] = f"{why} {tail}".strip()


# -- the rest: scale-down, one candidate per step ---------------------------------------------


def _is_daemon(pod: KubeObject) -> bool:
    owners = (pod.get("metadata") or {}).get("ownerReferences") or ()
    return any(o.get("kind") == "DaemonSet" and o.get("controller") is True for o in owners)


def _is_mirror(pod: KubeObject) -> bool:
    return _MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})


def _has_controller(pod: KubeObject) -> bool:
    owners = (pod.get("metadata") or {}).get("ownerReferences") or ()
    return any(o.get("controller") is True for o in owners)


def _scale_down(
    sim: Sim, plan: dict[str, Any], groups: list[NodeGroup], node: str, results: dict[str, Any]
) -> None:
    cs = sim.cluster
    kept = results["kept"]
    threshold = float(plan["settings"]["scale_down_utilization_threshold"])
    name = plan["members"].get(node)
    group = next((g for g in groups if g.name == name), None)
    if group is None:
        kept[node] = "not in an autoscaled node group"
        return
    size = _group_size(plan, results, group.name)
    if size <= group.min_size:
        kept[node] = f"node group {group.name} is at its minimum size ({group.min_size})"
        return
    try:
        utilization = node_utilization(cs, node)
    except UtilizationError as exc:
        kept[node] = f"utilization not known: {exc}"
        return
    if utilization.value >= threshold:
        kept[node] = (
            f"not underutilized: {utilization.resource} utilization {utilization.value:.3g} is "
            f"not under the threshold {threshold:g}"
        )
        return
    sim.fork(f"remove node {node}")
    moving = [p for p in cs.pods_on_node(node) if not _is_daemon(p) and not _is_mirror(p)]
    unbound = [cs.unschedule_pod(namespace_or_default(p), name_of(p)) for p in moving]
    cs.remove_node(node)
    others = cs.node_names()
    for pod in unbound:
        if cs.schedule_pod_anywhere(pod, others) is None:
            why = fit_error(cs, pod, others).message()
            sim.revert()
            kept[node] = f"pod {key_of(pod)} cannot move to another node: {why}"
            return
    sim.commit()
    results["removed"].append(node)
    results["placed"] += len(unbound)
    for pod in unbound:
        if not _has_controller(pod):
            results["warnings"].append(
                f"node {node} removed though its pod {key_of(pod)} has no controller: the "
                "cluster-autoscaler's drain rules would keep the node (not checked)"
            )
    if results["added"] and len(results["removed"]) == 1:
        results["warnings"].append(
            "the cluster-autoscaler removes no node in a loop that scales up "
            "(--scale-down-delay-after-add, 10m): removed lists the nodes found unneeded now"
        )
