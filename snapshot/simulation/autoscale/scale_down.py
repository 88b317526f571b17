"""The last two steps, scale-down (``core/scaledown``): which candidates are eligible, the
planner's simulated removals in one reverted fork, the budgets, then the actuation. Each node
kept gets its reason where it is decided (:class:`Kept`), never parsed back from text."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from drasnap.snapshot.autoscaler.drain import drain
from drasnap.snapshot.autoscaler.status import UnremovableReason
from drasnap.snapshot.autoscaler.utilization import node_utilization
from drasnap.snapshot.errors import UtilizationError
from drasnap.snapshot.k8s.kinds import key_of, namespace_or_default
from drasnap.snapshot.k8s.objects import KubeObject, name_of
from drasnap.snapshot.simulation.autoscale.flags import flag
from drasnap.snapshot.simulation.autoscale.pod_list import refusal_message, round_robin
from drasnap.snapshot.simulation.autoscale.records import CURSOR_KEY, DECISION_KIND, SCALE_DOWN_KEY
from drasnap.snapshot.simulation.autoscale.scale_up import group_size
from drasnap.snapshot.simulation.inputs import NodeGroup
from drasnap.snapshot.simulation.plans import AutoscalePlan
from drasnap.snapshot.simulation.record import RunContext

TO_BE_DELETED = "ToBeDeletedByClusterAutoscaler"
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"


def _being_deleted(node: KubeObject) -> bool:
    """CA's ``actuation.IsNodeBeingDeleted``: tainted ToBeDeletedByClusterAutoscaler, or
    being deleted by the API server."""
    if (node.get("metadata") or {}).get("deletionTimestamp"):
        return True
    taints = (node.get("spec") or {}).get("taints") or ()
    return any(t.get("key") == TO_BE_DELETED for t in taints)


@dataclass(frozen=True)
class Kept:
    """Why scale-down keeps a node, decided where it is found: the cluster-autoscaler's
    UnremovableReason (None for a node unneeded but left for a later loop by the budgets or
    the planner's limit, which CA does not count as unremovable), and drasnap's words for it."""

    reason: UnremovableReason | None
    text: str


def _eligibility(
    sim: RunContext, plan: AutoscalePlan, groups: list[NodeGroup], recent: Collection[str]
) -> dict[str, Kept | None]:
    """Why each candidate is no candidate, or None: measured once, before any removal is
    simulated (``core/scaledown/eligibility/eligibility.go``, ``FilterOutUnremovable``;
    the planner's ``categorizeNodes`` calls it first). A node at exactly the threshold is a
    candidate (``isNodeAtOrBelowUtilizationThreshold`` refuses only above it). ``recent``: the
    nodes whose removal failed in a simulation less than --unremovable-node-recheck-timeout
    ago (the planner's unremovable cache, ``IsRecent``; a timeline's, none in one loop)."""
    threshold = float(plan.settings["scale_down_utilization_threshold"])
    names = {g.name for g in groups}
    found: dict[str, Kept | None] = {}
    for node in plan.candidates:
        obj = sim.cluster.node(node) or {}
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if node in recent:
            found[node] = Kept(
                UnremovableReason.RecentlyUnremovable,
                "its removal failed in a recent simulation (--unremovable-node-recheck-timeout)",
            )
        elif _being_deleted(obj):
            found[node] = Kept(UnremovableReason.CurrentlyBeingDeleted, "being deleted")
        elif annotations.get(SCALE_DOWN_DISABLED) == "true":
            found[node] = Kept(
                UnremovableReason.ScaleDownDisabledAnnotation,
                f"scale-down disabled by annotation {SCALE_DOWN_DISABLED}",
            )
        elif plan.members.get(node) not in names:
            found[node] = Kept(UnremovableReason.NotAutoscaled, "not in an autoscaled node group")
        else:
            try:
                utilization = node_utilization(sim.cluster, node)
            except UtilizationError as exc:
                found[node] = Kept(
                    UnremovableReason.UnexpectedError, f"utilization not known: {exc}"
                )
                continue
            found[node] = (
                Kept(
                    UnremovableReason.NotUnderutilized,
                    f"not underutilized: {utilization.resource} utilization "
                    f"{utilization.value:.3g} is above the threshold {threshold:g}",
                )
                if utilization.value > threshold
                else None
            )
    return found


@dataclass(frozen=True)
class Unneeded:
    """What the planner found in one loop: the unneeded nodes in order, each with where its
    pods go (``{"node", "moves"}``), why each other candidate is kept, and the cursor after."""

    unneeded: list[dict[str, Any]]
    kept: dict[str, Kept]
    cursor: int


def simulate(
    sim: RunContext, plan: AutoscalePlan, groups: list[NodeGroup], results: dict[str, Any]
) -> dict[str, Any]:
    """The planner's ``categorizeNodes`` (:func:`find_unneeded`), then ``NodesToDelete`` and
    the budgets: which nodes this loop deletes; the decisions and where each pod went are
    written for the next step to apply."""
    found = find_unneeded(sim, plan, groups)
    unneeded, kept, cursor = found.unneeded, dict(found.kept), found.cursor
    removed = nodes_to_delete(plan, groups, results, unneeded, kept)
    sim.store.put(DECISION_KIND, CURSOR_KEY, cursor)
    sim.store.put(DECISION_KIND, SCALE_DOWN_KEY, {"unneeded": unneeded, "removed": removed})
    for node in plan.candidates:
        why = kept.get(node)
        decision = {
            "removed": node in removed,
            "reason": None if why is None else why.text,
            "unremovable": None if why is None or why.reason is None else why.reason.value,
        }
        sim.store.put(DECISION_KIND, f"node/{node}", decision)
    return {**results, "kept": len(plan.candidates) - len(removed)}


def find_unneeded(
    sim: RunContext, plan: AutoscalePlan, groups: list[NodeGroup], recent: Collection[str] = ()
) -> Unneeded:
    """The planner's ``categorizeNodes`` (``core/scaledown/planner/planner.go``): eligibility,
    then every eligible candidate's removal simulated in turn in one fork (a successful one
    persists: its pods stay where they went, the node is gone for the next ones), which is
    reverted. Nothing is written but the fork's own changes."""
    eligible = _eligibility(sim, plan, groups, recent)
    limit = 2 * int(flag(plan, "max_scale_down_parallelism"))  # unneededNodesLimit
    rules = {
        name: bool(flag(plan, name))
        for name in (
            "skip_nodes_with_system_pods",
            "skip_nodes_with_local_storage",
            "skip_nodes_with_custom_controller_pods",
        )
    }
    cursor = int(sim.store.get(DECISION_KIND, CURSOR_KEY) or 0)
    existing = set(plan.candidates)
    kept: dict[str, Kept] = {}
    unneeded: list[dict[str, Any]] = []

    # Empty candidates first (processors/scaledowncandidates/emptycandidates: nothing to move
    # and nothing blocking), then the rest; by name within each (CA's order: the lister's).
    def is_empty(node: str) -> bool:
        pods = drain(sim.cluster.pods_on_node(node), **rules)
        return pods.blocked is None and not pods.move

    order = sorted(plan.candidates, key=lambda node: not is_empty(node))
    sim.fork("simulate scale-down")
    for node in order:
        why = eligible[node]
        if why is None and len(unneeded) >= limit:
            why = Kept(
                None,
                f"not simulated: {len(unneeded)} nodes already found unneeded in this loop "
                "(the planner's unneededNodesLimit)",
            )
        if why is None:
            found, cursor = _try_remove(sim, node, existing, cursor, rules)
            if isinstance(found, Kept):
                why = found
            else:
                unneeded.append({"node": node, "moves": [list(m) for m in found]})
        if why is not None:
            kept[node] = why
    sim.revert()
    return Unneeded(unneeded, kept, cursor)


def nodes_to_delete(
    plan: AutoscalePlan,
    groups: list[NodeGroup],
    results: dict[str, Any],
    unneeded: list[dict[str, Any]],
    kept: dict[str, Kept],
    quota: Callable[[str], Kept | None] | None = None,
) -> list[str]:
    """Of the unneeded nodes, those deleted in this loop, in order; the others get their
    reason in ``kept``. Empty nodes first (``core/scaledown/unneeded/nodes.go``, RemovableAt:
    they use a group's allowance above minSize first), then those to drain; then the budgets
    (``core/scaledown/budgets/budgets.go``, CropNodes): at most --max-scale-down-parallelism
    in all, of which at most --max-drain-parallelism need draining. ``quota``: why a node would
    take the cluster under a minimum resource limit (``MinimalResourceLimitExceeded``), asked
    after the group's minimum size; it counts the node as gone when it says None."""
    sizes = {g: group_size(plan, results, g) for g in plan.groups}
    mins = {g.name: g.min_size for g in groups}
    total = int(flag(plan, "max_scale_down_parallelism"))
    drain_budget = int(flag(plan, "max_drain_parallelism"))
    empty = [u for u in unneeded if not u["moves"]]
    drained = [u for u in unneeded if u["moves"]]
    chosen: list[str] = []
    drains = 0
    for entry in [*empty, *drained]:
        node = entry["node"]
        group = plan.members[node]
        assert group is not None  # eligibility keeps every node outside the groups
        if sizes[group] <= mins.get(group, 0):
            kept[node] = Kept(
                UnremovableReason.NodeGroupMinSizeReached,
                f"node group {group} is at its minimum size ({mins.get(group, 0)})",
            )
            continue
        over = quota(node) if quota is not None else None  # the minimum resource limits
        if over is not None:
            kept[node] = over
            continue
        sizes[group] -= 1
        if len(chosen) >= total:
            kept[node] = Kept(
                None, f"unneeded, but --max-scale-down-parallelism ({total}) is used up"
            )
            continue
        if entry["moves"] and drains >= min(drain_budget, total - len(chosen)):
            kept[node] = Kept(
                None, f"unneeded, but --max-drain-parallelism ({drain_budget}) is used up"
            )
            continue
        drains += bool(entry["moves"])
        chosen.append(node)
    return chosen


def apply(sim: RunContext, plan: AutoscalePlan, results: dict[str, Any]) -> dict[str, Any]:
    """Remove the nodes the previous step chose, their pods where the simulation put them."""
    cs = sim.cluster
    record = sim.store.get(DECISION_KIND, SCALE_DOWN_KEY) or {"unneeded": [], "removed": []}
    chosen = set(record["removed"])
    moved = 0
    removed_from = dict(results.get("removed_from", {}))
    for entry in record["unneeded"]:
        node = entry["node"]
        if node not in chosen:
            continue
        here = {key_of(p) for p in cs.pods_on_node(node)}
        pods = [
            (cs.unschedule_pod(*key.split("/", 1)), where)
            for key, where in entry["moves"]
            if key in here
        ]
        cs.remove_node(node)
        for pod, where in pods:
            cs.schedule_pod(pod, where)
        moved += len(pods)
        group = plan.members[node]
        removed_from[group] = removed_from.get(group, 0) + 1
    return {
        **results,
        "placed": results["placed"] + moved,
        "removed": len(chosen),
        "removed_from": removed_from,
    }


def _try_remove(
    sim: RunContext, node: str, existing: set[str], cursor: int, rules: dict[str, bool]
) -> tuple[list[tuple[str, str]] | Kept, int]:
    """Simulate removing ``node`` (``simulator/cluster.go``, SimulateNodeRemoval): its pods
    that must move, each placed on the other existing nodes left (round robin, as CA's
    scheduling simulations); on success the removal persists. Returns (pod key, node) for each
    pod moved, or why the node stays; and the cursor."""
    cs = sim.cluster
    pods = drain(cs.pods_on_node(node), **rules)
    if pods.blocked is not None:
        key, message = pods.blocked
        blocked = Kept(UnremovableReason.BlockedByPod, f"pod {key} blocks its removal: {message}")
        return blocked, cursor
    sim.fork(f"remove node {node}")
    order = [n for n in cs.node_names() if n in existing]
    unbound = [cs.unschedule_pod(namespace_or_default(p), name_of(p)) for p in pods.move]
    others = [n for n in order if n != node]
    cs.remove_node(node)
    moves: list[tuple[str, str]] = []
    start = cursor
    for pod in unbound:
        where, cursor = round_robin(cs, pod, order, cursor, skip=node)
        if where is None:
            why = refusal_message(cs, pod, others)
            sim.revert()
            text = f"pod {key_of(pod)} cannot move to another node: {why}"
            return Kept(UnremovableReason.NoPlaceToMovePods, text), start
        moves.append((key_of(pod), where))
    sim.commit()
    existing.discard(node)
    return moves, cursor
