"""Autoscale: what one cluster-autoscaler loop (``StaticAutoscaler.RunOnce``) decides for the
cluster of ``--from``, by the cluster-autoscaler's code (README's table gives each source path).

0. Pending pods (no ``spec.nodeName``) of a priority under ``--expendable-pods-priority-cutoff``
   are ignored, and so are pods nominated to a node (warned about). The rest, highest
   ``spec.priority`` first, are packed on the existing nodes: each on the first node that fits,
   starting one past the node that took the previous pod (filterOutSchedulableByPacking through
   RunFiltersUntilPassingNode and lastIndexOrderMapping; nodes by name, one of CA's orders).
   Those that fit no node keep the scheduler's answer (``0/N nodes are available: ...``).
1. For each node group, the binpacking estimator (:mod:`snapshot.autoscaler.estimator`) places
   the rest on new nodes from the group's template, in a fork that is reverted, adding at most
   ``maxSize`` minus the group's current size and ``--max-nodes-per-scaleup``. A group at its
   maximum is skipped (``max node group size reached``).
2. The expander chain (``--expander``, :mod:`snapshot.autoscaler.expanders`) chooses among the
   groups that place some pod; that group's expansion is applied (fork, estimate, commit).
   A pod left pending gets its reason: the scheduler's answer, then ``pod didn't trigger
   scale-up: ...`` with each group's reason counted, as the NotTriggerScaleUp event says it.
3. Scale-down, simulated in one fork that is reverted: every candidate's utilization is
   measured first (a node at exactly ``--scale-down-utilization-threshold`` is a candidate);
   then, empty candidates first, each removal is simulated: its pods (drain rules,
   :mod:`snapshot.autoscaler.drain`, with CA's ``--skip-nodes-with-*`` flags) placed on the
   other nodes round robin, a success persisting for the next candidates. Of the unneeded
   nodes, empty ones first, those that keep their group above ``minSize`` are deleted within
   ``--max-scale-down-parallelism`` and ``--max-drain-parallelism``.
4. The deletions are applied: each chosen node removed, its pods where the simulation put them.

Not modelled, said in the README: the waiting times (``--scale-down-unneeded-time``,
``--scale-down-delay-after-add``), PodDisruptionBudgets, balancing similar groups, unready
nodes (warned about), resource limits.

Steps (each ends at depth 0 with the run record): 0 places on existing nodes; 1..G estimate
group i; G+1 applies the expander's choice; G+2 simulates the scale-down; G+3 applies it. The
run record holds only counts (it is rewritten at every step); each decision is written once,
at depth 0, under ``AutoscaleDecision``: ``pod/<ns>/<name>`` (the existing node it went to, or
the scheduler's answer; the new node, or why it stays pending), ``estimate/<group>`` (nodes,
pods placed, each other pod's reason), ``scale-up`` (the group chosen, nodes added),
``scale-down`` (the unneeded nodes, where their pods go, the nodes deleted), ``node/<name>``
(removed, or the reason it is kept), ``ignored``, ``cursor`` and ``warnings``.
:func:`decisions` reads them back, for the result and for ``drasnap inspect``. Pending pods and
node groups are kept as scale-up keeps them (``PendingPod``, ``NodeGroup``).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from drasnap.snapshot.autoscaler.drain import drain, is_daemonset_pod
from drasnap.snapshot.autoscaler.estimator import (
    Estimate,
    equivalence_groups,
    estimate,
    order_groups,
    pod_signature,
)
from drasnap.snapshot.autoscaler.expanders import Option, choose
from drasnap.snapshot.autoscaler.status import (
    MAX_SIZE_REACHED,
    UnremovableReason,
    not_trigger_scale_up,
)
from drasnap.snapshot.autoscaler.utilization import node_utilization
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import SchedulingError, UtilizationError
from drasnap.snapshot.k8s.kinds import key_of, namespace_or_default
from drasnap.snapshot.k8s.objects import KubeObject, name_of
from drasnap.snapshot.scheduling import pod_warnings
from drasnap.snapshot.scheduling.fit_error import FitError
from drasnap.snapshot.simulation.failures import record_unschedulable
from drasnap.snapshot.simulation.inputs import Cluster, NodeGroup, group_of, instantiate
from drasnap.snapshot.simulation.plan import PLAN_KEY, RUN_KEY, SIM_KIND, steps
from drasnap.snapshot.simulation.plans import AutoscalePlan
from drasnap.snapshot.simulation.record import Sim
from drasnap.snapshot.simulation.scale_up import GROUP_KIND, PENDING_KIND

DECISION_KIND = "AutoscaleDecision"  # keys: pod/<ns>/<name>, estimate/<group>, node/<name>
SCALE_UP_KEY = "scale-up"
SCALE_DOWN_KEY = "scale-down"  # the unneeded nodes, where their pods go, the nodes deleted
IGNORED_KEY = "ignored"  # pending pods CA leaves out: expendable, nominated
CURSOR_KEY = "cursor"  # the last node a pod went to (CA's lastIndexOrderMapping)
TO_BE_DELETED = "ToBeDeletedByClusterAutoscaler"
WARNINGS_KEY = "warnings"
SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"


def setup(sim: Sim, cluster: Cluster, settings: dict[str, Any]) -> AutoscalePlan:
    """Write the starting state; returns the run's plan."""
    cutoff = int(settings.get("expendable_pods_priority_cutoff", -10))
    warnings: list[str] = []
    pending, ignored = [], {}
    for pod in cluster.pending:
        priority = int((pod.get("spec") or {}).get("priority") or 0)
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        if priority < cutoff:
            # core/utils FilterOutExpendablePods: neither helped nor counted
            ignored[key_of(pod)] = (
                f"expendable: priority {priority} is under --expendable-pods-priority-cutoff "
                f"{cutoff}"
            )
        elif nominated:
            ignored[key_of(pod)] = f"nominated to node {nominated}"
            warnings.append(
                f"pod {key_of(pod)} is nominated to node {nominated} (it waits for a "
                "preemption): the cluster-autoscaler counts it on that node, drasnap does "
                "not model preemption and leaves it out"
            )
        else:
            pending.append(pod)
    # Upstream sorts pending pods by priority, highest first (sort.Slice: equal priorities in
    # no set order; here a stable sort, one order CA can take).
    pending.sort(key=lambda p: -int((p.get("spec") or {}).get("priority") or 0))
    for pod in pending:
        sim.store.put(PENDING_KIND, key_of(pod), pod)
    for node, _slices, _pods in cluster.nodes:
        conditions = (node.get("status") or {}).get("conditions") or ()
        ready = next((c for c in conditions if c.get("type") == "Ready"), None)
        if ready is not None and ready.get("status") != "True":
            warnings.append(
                f"node {name_of(node)} is not Ready: the cluster-autoscaler counts it as "
                "unready (upcoming or broken, --scale-down-unready-time); drasnap treats it "
                "as ready"
            )
    sim.store.put(DECISION_KIND, IGNORED_KEY, ignored)
    # What the scheduler's filters do not check, for every pod of the run, pending or bound.
    warnings += [w for p in pending for w in pod_warnings(p)]
    for _node, _slices, bound in cluster.nodes:
        warnings += [w for p in bound for w in pod_warnings(p)]
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
        daemons = [key_of(p) for p in pods_of.get(name_of(group.node), []) if is_daemonset_pod(p)]
        if daemons:
            warnings.append(
                f"node group {group.name}: the DaemonSet pods of template node "
                f"{name_of(group.node)} ({', '.join(daemons)}) are not copied to new nodes "
                "(the cluster-autoscaler adds them to its template)"
            )
    return AutoscalePlan(
        settings,
        pending=[key_of(p) for p in pending],
        groups=[g.name for g in cluster.groups],
        candidates=sorted(name_of(node) for node, _s, _p in cluster.nodes),
        members={name_of(node): group_of(node) for node, _s, _p in cluster.nodes},
        sizes=dict(Counter(g for n, _s, _p in cluster.nodes if (g := group_of(n)))),
        priorities=sorted(
            [p, list(patterns)] for p, patterns in (cluster.priorities or {}).items()
        ),
        warnings=warnings,
    )


def run(sim: Sim, typed: AutoscalePlan) -> dict[str, Any]:
    """Run (or go on with) the steps; returns the run record's results (the decisions are in
    the store: :func:`decisions`)."""
    store = sim.store
    plan = typed.record()  # the steps below read the plan as it is stored
    groups = []
    for name in typed.groups:
        record = store.get(GROUP_KIND, name)
        groups.append(
            NodeGroup(name, record["node"], record["slices"], record["minSize"], record["maxSize"])
        )
    progress = sim.progress()
    # Small on purpose: the run record is rewritten at every step; what is per pod, per node
    # or per group is written once, under DECISION_KIND.
    results: dict[str, Any] = dict(progress["results"]) or {
        "placed": 0,
        "node_group": None,
        "added": {},
        "removed": 0,
        "kept": 0,
        "unschedulable": 0,
    }
    if progress["step"] == 0:
        store.put(DECISION_KIND, WARNINGS_KEY, list(typed.warnings))
    total = typed.steps
    count = len(groups)
    for step in range(progress["step"], total):
        if step == 0:
            placed = _place_on_existing(sim, plan)
            results = {**results, "placed": results["placed"] + placed}
            detail = f"{placed:,} pods on existing nodes"
        elif step <= count:
            _estimate_group(sim, plan, groups[step - 1], results)
            detail = f"estimated {groups[step - 1].name}"
        elif step == count + 1:
            results = _scale_up(sim, plan, groups, results)
            detail = f"added {sum(results['added'].values()):,} nodes"
        elif step == count + 2:
            results = _simulate_scale_down(sim, plan, groups, results)
            detail = "scale-down simulated"
        else:
            results = _apply_scale_down(sim, plan, results)
            detail = f"{results['removed']:,} nodes removed"
        sim.advance(step + 1, detail)
        sim.save(step + 1, results, done=step + 1 == total)
    return results


class _Reader(Protocol):
    """A store, or a store's state as of a seq (``drasnap inspect --at``)."""

    def get(self, kind: str, key: str, default: Any = None) -> Any: ...

    def items(self, kind: str) -> dict[str, Any]: ...


def decisions(store: _Reader, plan: dict[str, Any]) -> dict[str, Any]:
    """What the run decided so far, as ``--json`` reports it (README)."""
    pods = [(key, store.get(DECISION_KIND, f"pod/{key}")) for key in plan["pending"]]
    nodes = [(name, store.get(DECISION_KIND, f"node/{name}")) for name in plan["candidates"]]
    scale_up = store.get(DECISION_KIND, SCALE_UP_KEY) or {}
    removed = [name for name, d in nodes if d is not None and d["removed"]]
    removed_by_group: dict[str, list[str]] = {}
    for name in removed:
        removed_by_group.setdefault(plan["members"].get(name) or "", []).append(name)
    estimates = {}
    for group in plan["groups"]:
        found = store.get(DECISION_KIND, f"estimate/{group}")
        if found is not None:
            estimates[group] = {"nodes": found["nodes"], "pods": len(found["pods"])}
    return {
        "placed_on_existing": {k: d["existing"] for k, d in pods if d and d.get("existing")},
        "node_group": scale_up.get("node_group"),
        "added": scale_up.get("added", {}),
        "new_nodes": scale_up.get("new_nodes", []),
        "placed_on_new": {k: d["new"] for k, d in pods if d and d.get("new")},
        "estimates": estimates,
        "removed": removed,
        "removed_by_group": removed_by_group,
        "kept": {n: d["reason"] for n, d in nodes if d is not None and not d["removed"]},
        # None also for a record written before kept nodes had CA's name
        "unremovable": {
            n: d.get("unremovable") for n, d in nodes if d is not None and not d["removed"]
        },
        "unschedulable": {k: d["unschedulable"] for k, d in pods if d and d.get("unschedulable")},
        "ignored": dict(store.get(DECISION_KIND, IGNORED_KEY) or {}),
        "unneeded": [
            u["node"] for u in (store.get(DECISION_KIND, SCALE_DOWN_KEY) or {}).get("unneeded", ())
        ],
        "warnings": list(store.get(DECISION_KIND, WARNINGS_KEY) or ()),
        "pending": sorted(store.items(PENDING_KIND)),
    }


def decisions_so_far(store: _Reader) -> dict[str, Any] | None:
    """An autoscale run's step and decisions so far, read from its store (or a state of it at a
    seq), or None for a store that holds no autoscale run."""
    plan = store.get(SIM_KIND, PLAN_KEY)
    run = store.get(SIM_KIND, RUN_KEY)
    if not plan or not run or (plan.get("settings") or {}).get("scenario") != "autoscale":
        return None
    return {"step": run.get("step"), "steps": steps(plan), **decisions(store, plan)}


def _warn(sim: Sim, text: str) -> None:
    warnings = sim.store.get(DECISION_KIND, WARNINGS_KEY) or []
    sim.store.put(DECISION_KIND, WARNINGS_KEY, [*warnings, text])


# -- step 0: the existing nodes' free room ------------------------------------------------------


def _pending(sim: Sim, plan: dict[str, Any]) -> list[KubeObject]:
    """The pods still pending, in plan order."""
    found = (sim.store.get(PENDING_KIND, key) for key in plan["pending"])
    return [pod for pod in found if pod is not None]


def _place_on_existing(sim: Sim, plan: dict[str, Any]) -> int:
    """Place what fits on the existing nodes (``core/podlistprocessor/filter_out_schedulable.go``,
    filterOutSchedulableByPacking): pods by priority, highest first, each on the first node
    that fits starting one past the node that took the previous pod (:func:`_round_robin`).
    Returns how many pods were placed."""
    cs = sim.cluster
    existing = cs.node_names()
    pending = _pending(sim, plan)
    cursor = int(sim.store.get(DECISION_KIND, CURSOR_KEY) or 0)
    if not pending:
        return 0
    found: dict[str, dict[str, Any]] = {}
    # Asking every node why is the costly part; pods alike get the same answer as long as
    # nothing was placed in between (a Deployment's pods once the free room is gone).
    answers: dict[bytes, str] = {}
    sim.fork("place pending pods on existing nodes")
    for pod in pending:
        where, cursor = _round_robin(cs, pod, existing, cursor)
        why = None
        if where is not None:
            answers.clear()
        else:
            alike = pod_signature(pod)
            why = answers.get(alike)
            if why is None:
                why = answers[alike] = _why(cs, pod, existing)
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


def _why(cs: ClusterSnapshot, pod: KubeObject, nodes: Sequence[str]) -> str:
    """The scheduler's message for a pod the caller found fits none of ``nodes``."""
    found = fit_error(cs, pod, nodes)
    assert found is not None, "the pod was just refused by every node"
    return found.message()


# -- steps 1..G: one estimate per group -----------------------------------------------------------


def _group_size(plan: dict[str, Any], results: dict[str, Any], group: str) -> int:
    """The group's nodes now: its members not removed, and the nodes added to it."""
    added = int(results["added"].get(group, 0))
    removed = int(results.get("removed_from", {}).get(group, 0))
    return int(plan["sizes"].get(group, 0)) + added - removed


def _limit(plan: dict[str, Any], results: dict[str, Any], group: NodeGroup) -> int:
    most = int(_settings_value(plan, "max_nodes_per_scaleup"))
    if group.max_size is None:
        return most
    return min(most, group.max_size - _group_size(plan, results, group.name))


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


# -- step G+1: the expander's choice --------------------------------------------------------------


def _scale_up(
    sim: Sim, plan: dict[str, Any], groups: list[NodeGroup], results: dict[str, Any]
) -> dict[str, Any]:
    cs = sim.cluster
    store = sim.store
    settings = plan["settings"]
    estimates = {g.name: store.get(DECISION_KIND, f"estimate/{g.name}") or {} for g in groups}
    options = []
    for group in groups:
        found = estimates[group.name]
        if found.get("nodes", 0) > 0 and found.get("pods"):
            pods = [store.get(PENDING_KIND, key) for key in found["pods"]]
            options.append(Option(group.name, found["nodes"], pods, group.node))
    priorities = {int(p): list(patterns) for p, patterns in plan["priorities"]}
    if "priority" in settings["expander"].split(","):
        for option in options:
            if not any(re.search(x, option.group) for xs in priorities.values() for x in xs):
                _warn(
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
        pending = _pending(sim, plan)
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
    for pod in _pending(sim, plan):
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
    record_unschedulable(sim, list(_pending(sim, plan)), groups, "autoscale", texts)
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


# -- the last two steps: scale-down -----------------------------------------------------------


def _settings_value(plan: dict[str, Any], name: str) -> Any:
    """A CA flag's value as the run recorded it (older records: CA's default)."""
    from drasnap.snapshot.simulation.settings import CA_FLAGS

    return plan["settings"].get(name, CA_FLAGS[name][0])


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


def _eligibility(sim: Sim, plan: dict[str, Any], groups: list[NodeGroup]) -> dict[str, Kept | None]:
    """Why each candidate is no candidate, or None: measured once, before any removal is
    simulated (``core/scaledown/eligibility/eligibility.go``, ``FilterOutUnremovable``;
    the planner's ``categorizeNodes`` calls it first). A node at exactly the threshold is a
    candidate (``isNodeAtOrBelowUtilizationThreshold`` refuses only above it)."""
    threshold = float(plan["settings"]["scale_down_utilization_threshold"])
    names = {g.name for g in groups}
    found: dict[str, Kept | None] = {}
    for node in plan["candidates"]:
        obj = sim.cluster.node(node) or {}
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if _being_deleted(obj):
            found[node] = Kept(UnremovableReason.CurrentlyBeingDeleted, "being deleted")
        elif annotations.get(SCALE_DOWN_DISABLED) == "true":
            found[node] = Kept(
                UnremovableReason.ScaleDownDisabledAnnotation,
                f"scale-down disabled by annotation {SCALE_DOWN_DISABLED}",
            )
        elif plan["members"].get(node) not in names:
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


def _simulate_scale_down(
    sim: Sim, plan: dict[str, Any], groups: list[NodeGroup], results: dict[str, Any]
) -> dict[str, Any]:
    """The planner's ``categorizeNodes`` (``core/scaledown/planner/planner.go``), then
    ``NodesToDelete`` and the budgets: which nodes this loop deletes. Every candidate's removal
    is simulated in turn in one fork (a successful one persists: its pods stay where they went,
    the node is gone for the next ones), which is reverted; the decisions and where each pod
    went are written for the next step to apply."""
    eligible = _eligibility(sim, plan, groups)
    limit = 2 * int(_settings_value(plan, "max_scale_down_parallelism"))  # unneededNodesLimit
    rules = {
        name: bool(_settings_value(plan, name))
        for name in (
            "skip_nodes_with_system_pods",
            "skip_nodes_with_local_storage",
            "skip_nodes_with_custom_controller_pods",
        )
    }
    cursor = int(sim.store.get(DECISION_KIND, CURSOR_KEY) or 0)
    existing = set(plan["candidates"])
    kept: dict[str, Kept] = {}
    unneeded: list[dict[str, Any]] = []

    # Empty candidates first (processors/scaledowncandidates/emptycandidates: nothing to move
    # and nothing blocking), then the rest; by name within each (CA's order: the lister's).
    def is_empty(node: str) -> bool:
        pods = drain(sim.cluster.pods_on_node(node), **rules)
        return pods.blocked is None and not pods.move

    order = sorted(plan["candidates"], key=lambda node: not is_empty(node))
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
    removed = _nodes_to_delete(plan, groups, results, unneeded, kept)
    sim.store.put(DECISION_KIND, CURSOR_KEY, cursor)
    sim.store.put(DECISION_KIND, SCALE_DOWN_KEY, {"unneeded": unneeded, "removed": removed})
    for node in plan["candidates"]:
        why = kept.get(node)
        decision = {
            "removed": node in removed,
            "reason": None if why is None else why.text,
            "unremovable": None if why is None or why.reason is None else why.reason.value,
        }
        sim.store.put(DECISION_KIND, f"node/{node}", decision)
    return {**results, "kept": len(plan["candidates"]) - len(removed)}


def _nodes_to_delete(
    plan: dict[str, Any],
    groups: list[NodeGroup],
    results: dict[str, Any],
    unneeded: list[dict[str, Any]],
    kept: dict[str, Kept],
) -> list[str]:
    """Of the unneeded nodes, those deleted in this loop, in order; the others get their
    reason in ``kept``. Empty nodes first (``core/scaledown/unneeded/nodes.go``, RemovableAt:
    they use a group's allowance above minSize first), then those to drain; then the budgets
    (``core/scaledown/budgets/budgets.go``, CropNodes): at most --max-scale-down-parallelism
    in all, of which at most --max-drain-parallelism need draining."""
    sizes = {g: _group_size(plan, results, g) for g in plan["groups"]}
    mins = {g.name: g.min_size for g in groups}
    total = int(_settings_value(plan, "max_scale_down_parallelism"))
    drain_budget = int(_settings_value(plan, "max_drain_parallelism"))
    empty = [u for u in unneeded if not u["moves"]]
    drained = [u for u in unneeded if u["moves"]]
    chosen: list[str] = []
    drains = 0
    for entry in [*empty, *drained]:
        node = entry["node"]
        group = plan["members"][node]
        if sizes[group] <= mins.get(group, 0):
            kept[node] = Kept(
                UnremovableReason.NodeGroupMinSizeReached,
                f"node group {group} is at its minimum size ({mins.get(group, 0)})",
            )
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


def _apply_scale_down(sim: Sim, plan: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
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
        group = plan["members"][node]
        removed_from[group] = removed_from.get(group, 0) + 1
    return {
        **results,
        "placed": results["placed"] + moved,
        "removed": len(chosen),
        "removed_from": removed_from,
    }


def _try_remove(
    sim: Sim, node: str, existing: set[str], cursor: int, rules: dict[str, bool]
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
        where, cursor = _round_robin(cs, pod, order, cursor, skip=node)
        if where is None:
            why = _why(cs, pod, others)
            sim.revert()
            text = f"pod {key_of(pod)} cannot move to another node: {why}"
            return Kept(UnremovableReason.NoPlaceToMovePods, text), start
        moves.append((key_of(pod), where))
    sim.commit()
    existing.discard(node)
    return moves, cursor


def _round_robin(
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
