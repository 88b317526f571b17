"""The loop (``StaticAutoscaler.RunOnce``): the setup, which writes the starting state and
leaves out the pods CA ignores, and the steps, each ending at depth 0 with the run record."""

from __future__ import annotations

from collections import Counter
from typing import Any

from drasnap.snapshot.autoscaler.drain import is_daemonset_pod
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.k8s.objects import name_of
from drasnap.snapshot.scheduling import pod_warnings
from drasnap.snapshot.simulation.autoscale import pod_list, scale_down, scale_up
from drasnap.snapshot.simulation.autoscale.records import (
    DECISION_KIND,
    IGNORED_KEY,
    WARNINGS_KEY,
)
from drasnap.snapshot.simulation.inputs import NodeGroup, StartingObjects, group_of
from drasnap.snapshot.simulation.plans import AutoscalePlan
from drasnap.snapshot.simulation.record import RunContext
from drasnap.snapshot.simulation.scale_up import GROUP_KIND, PENDING_KIND


def setup(sim: RunContext, cluster: StartingObjects, settings: dict[str, Any]) -> AutoscalePlan:
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
    warnings += write_groups(sim, cluster)
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


def write_groups(sim: RunContext, cluster: StartingObjects) -> list[str]:
    """Write each node group (template node and slices, sizes); returns the warnings about
    them."""
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
        daemons = [key_of(p) for p in pods_of.get(name_of(group.node), []) if is_daemonset_pod(p)]
        if daemons:
            warnings.append(
                f"node group {group.name}: the DaemonSet pods of template node "
                f"{name_of(group.node)} ({', '.join(daemons)}) are not copied to new nodes "
                "(the cluster-autoscaler adds them to its template)"
            )
    return warnings


def run(sim: RunContext, plan: AutoscalePlan) -> dict[str, Any]:
    """Run (or go on with) the steps; returns the run record's results (the decisions are in
    the store: :func:`.records.decisions`)."""
    store = sim.store
    groups = []
    for name in plan.groups:
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
        store.put(DECISION_KIND, WARNINGS_KEY, list(plan.warnings))
    total = plan.steps
    count = len(groups)
    for step in range(progress["step"], total):
        if step == 0:
            placed = pod_list.place_on_existing(sim, plan)
            results = {**results, "placed": results["placed"] + placed}
            detail = f"{placed:,} pods on existing nodes"
        elif step <= count:
            scale_up.estimate_group(sim, plan, groups[step - 1], results)
            detail = f"estimated {groups[step - 1].name}"
        elif step == count + 1:
            results = scale_up.expand(sim, plan, groups, results)
            detail = f"added {sum(results['added'].values()):,} nodes"
        elif step == count + 2:
            results = scale_down.simulate(sim, plan, groups, results)
            detail = "scale-down simulated"
        else:
            results = scale_down.apply(sim, plan, results)
            detail = f"{results['removed']:,} nodes removed"
        sim.advance(step + 1, detail)
        sim.save(step + 1, results, done=step + 1 == total)
    return results
