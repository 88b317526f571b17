"""Steps 1..G+1: one estimate per node group, then the expander's choice applied
(``core/scaleup``: the binpacking estimator per group, the expander chain, the expansion), and
each pod left pending with CA's NotTriggerScaleUp reasons."""

from __future__ import annotations

import random
import re
from typing import Any

from drasnap.snapshot.autoscaler.estimator import (
    Estimate,
    equivalence_groups,
    estimate,
    order_groups,
)
from drasnap.snapshot.autoscaler.expanders import Option, choose
from drasnap.snapshot.autoscaler.status import MAX_SIZE_REACHED, not_trigger_scale_up
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.k8s.objects import KubeObject, name_of
from drasnap.snapshot.simulation.autoscale.flags import flag
from drasnap.snapshot.simulation.autoscale.pod_list import fit_error, still_pending
from drasnap.snapshot.simulation.autoscale.records import DECISION_KIND, SCALE_UP_KEY, warn
from drasnap.snapshot.simulation.failures import record_unschedulable
from drasnap.snapshot.simulation.inputs import NodeGroup, instantiate
from drasnap.snapshot.simulation.plans import AutoscalePlan
from drasnap.snapshot.simulation.record import RunContext
from drasnap.snapshot.simulation.scale_up import PENDING_KIND


def group_size(plan: AutoscalePlan, results: dict[str, Any], group: str) -> int:
    """The group's nodes now: its members not removed, and the nodes added to it."""
    added = int(results["added"].get(group, 0))
    removed = int(results.get("removed_from", {}).get(group, 0))
    return int(plan.sizes.get(group, 0)) + added - removed


def _limit(plan: AutoscalePlan, results: dict[str, Any], group: NodeGroup) -> int:
    most = int(flag(plan, "max_nodes_per_scaleup"))
    if group.max_size is None:
        return most
    return min(most, group.max_size - group_size(plan, results, group.name))


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


def estimate_group(
    sim: RunContext, plan: AutoscalePlan, group: NodeGroup, results: dict[str, Any]
) -> None:
    cs = sim.cluster
    pending = still_pending(sim, plan)
    record: dict[str, Any] = {"nodes": 0, "pods": [], "reasons": {}}
    limit = _limit(plan, results, group)
    if pending and limit <= 0:
        record["reasons"] = {key_of(p): MAX_SIZE_REACHED for p in pending}
        record["skipped"] = [MAX_SIZE_REACHED]  # CA's SkippedReasons, for every pod
    elif pending:
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
            refused = fit_error(cs, pod, [probe])
            refusal = refused.node_result(probe) if refused is not None else None
            if refusal is not None:
                reason = refusal.message
                # The failing predicate's reasons, each counted by CA's ReasonsMessage.
                record.setdefault("rejected", {})[key_of(pod)] = list(refusal.reasons)
            else:
                reason = MAX_SIZE_REACHED if found.limited else "not placed by the estimator"
            record["reasons"][key_of(pod)] = reason
        sim.revert()
    sim.store.put(DECISION_KIND, f"estimate/{group.name}", record)


def expand(
    sim: RunContext, plan: AutoscalePlan, groups: list[NodeGroup], results: dict[str, Any]
) -> dict[str, Any]:
    cs = sim.cluster
    store = sim.store
    settings = plan.settings
    estimates = {g.name: store.get(DECISION_KIND, f"estimate/{g.name}") or {} for g in groups}
    options = []
    for group in groups:
        found = estimates[group.name]
        if found.get("nodes", 0) > 0 and found.get("pods"):
            pods = [store.get(PENDING_KIND, key) for key in found["pods"]]
            options.append(Option(group.name, found["nodes"], pods, group.node))
    priorities = {int(p): list(patterns) for p, patterns in plan.priorities}
    if "priority" in settings["expander"].split(","):
        for option in options:
            if not any(re.search(x, option.group) for xs in priorities.values() for x in xs):
                warn(
                    sim,
                    f"priority expander: node group {option.group} not found in the priority "
                    "expander's configuration; the group won't be used",
                )
    rng = random.Random(settings["seed"])
    best = choose(options, settings["expander"].split(","), rng, priorities)
    chosen: dict[str, Any] = {"node_group": None, "added": {}, "new_nodes": []}
    placed = 0
    if best is not None:
        group = next(g for g in groups if g.name == best.group)
        pending = still_pending(sim, plan)
        sim.fork(f"scale up node group {group.name}")
        found = _run_estimator(cs, group, pending, _limit(plan, results, group))
        for name in found.added:
            if name not in found.nodes:
                cs.remove_node(name)  # upstream counts only new nodes that got a pod
        sim.commit()
        for key in found.pods:
            store.delete(PENDING_KIND, key)
            namespace, pod_name = key.split("/", 1)
            bound = cs.pod(namespace, pod_name) or {}
            decision = store.get(DECISION_KIND, f"pod/{key}") or {}
            where = (bound.get("spec") or {}).get("nodeName")
            store.put(DECISION_KIND, f"pod/{key}", {**decision, "new": where})
        chosen = {
            "node_group": group.name,
            "added": {group.name: len(found.nodes)},
            "new_nodes": list(found.nodes),
        }
        placed = len(found.pods)
    store.put(DECISION_KIND, SCALE_UP_KEY, chosen)
    unschedulable = 0
    texts: dict[str, str] = {}
    for pod in still_pending(sim, plan):
        key = key_of(pod)
        decision = store.get(DECISION_KIND, f"pod/{key}") or {}
        fits = [g.name for g in groups if key in estimates[g.name].get("pods", ())]
        if fits:
            tail = (
                f"pod didn't trigger scale-up: it fits node group(s) {', '.join(fits)}, but "
                f"the expander chose {chosen['node_group']}"
            )
        elif not groups:
            tail = "pod didn't trigger scale-up: no node groups"
        else:
            tail = not_trigger_scale_up(*_group_reasons(estimates, groups, key))
        texts[key] = tail
        reason = f"{decision.get('why') or ''} {tail}".strip()
        store.put(DECISION_KIND, f"pod/{key}", {**decision, "unschedulable": reason})
        unschedulable += 1
    # The scheduler's answer and each group's, as PodFailure records: `drasnap explain` and
    # the pod_failures view read them, as for a scale-up (with CA's text).
    record_unschedulable(sim, list(still_pending(sim, plan)), groups, "autoscale", texts)
    return {
        **results,
        "placed": results["placed"] + placed,
        "node_group": chosen["node_group"],
        "added": chosen["added"],
        "unschedulable": unschedulable,
    }


def _group_reasons(
    estimates: dict[str, Any], groups: list[NodeGroup], key: str
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(rejected, skipped) for CA's ReasonsMessage: each group's failing predicate reasons for
    the pod, or the reason it was skipped for every pod; another reason the estimate gave
    (the group filled up) counts as that group's one reason."""
    rejected: dict[str, list[str]] = {}
    skipped: dict[str, list[str]] = {}
    for group in groups:
        found = estimates[group.name]
        if found.get("skipped"):
            skipped[group.name] = list(found["skipped"])
        elif key in found.get("rejected", {}):
            rejected[group.name] = list(found["rejected"][key])
        else:
            rejected[group.name] = [found.get("reasons", {}).get(key, "no pending pods")]
    return rejected, skipped
