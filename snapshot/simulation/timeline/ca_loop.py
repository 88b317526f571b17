"""One cluster-autoscaler loop of a timeline, in ``RunOnce``'s order (docs/timelines.md 1.1-1.4,
2.5), built on the autoscale scenario's steps rather than copies of them.

The loop's view is an :class:`AutoscalePlan` made in memory for this loop (the pods to help,
the candidates, each node's group, the target sizes); its simulations run in a fork that is
reverted (placeholders for upcoming nodes, filterOutSchedulable, each group's estimate, the
expansion, the scale-down's removals). Only what it decides comes out: the clusterstate
changes (requests done or timed out, backoffs) are made to ``state`` here; the scale-up and
the deletions are returned for :mod:`.engine` to carry out at depth 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from drasnap.snapshot.autoscaler.status import UnremovableReason
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.k8s.quantity import int_value
from drasnap.snapshot.simulation.autoscale import pod_list, scale_down, scale_up
from drasnap.snapshot.simulation.autoscale.records import CURSOR_KEY, DECISION_KIND, SCALE_UP_KEY
from drasnap.snapshot.simulation.inputs import NodeGroup, instantiate
from drasnap.snapshot.simulation.plans import AutoscalePlan, TimelinePlan
from drasnap.snapshot.simulation.record import RunContext
from drasnap.snapshot.simulation.scale_up import PENDING_KIND
from drasnap.snapshot.simulation.settings import CA_FLAGS, TIMELINE_LIMITS, limit_range
from drasnap.snapshot.simulation.timeline.timers import POD_TIME_BUFFER_MS, Timers

#: Kept reasons the planner caches for --unremovable-node-recheck-timeout: those of a failed
#: removal simulation (``categorizeNodes``: ``AddTimeout``); an ineligible node is rechecked at
#: the next loop.
_SIMULATION_FAILURES = frozenset(
    {UnremovableReason.NoPlaceToMovePods, UnremovableReason.BlockedByPod}
)


_GIB = 2**30


@dataclass(frozen=True)
class Limits:
    """--max-nodes-total, --cores-total and --memory-total (memory in bytes)."""

    max_nodes: int
    cores: tuple[int, int]
    memory: tuple[int, int]

    @classmethod
    def of(cls, settings: dict[str, Any]) -> Limits:
        def setting(name: str) -> Any:
            return settings.get(name, TIMELINE_LIMITS[name][0])

        low, high = limit_range(setting("memory_total"), "--memory-total")
        return cls(
            int(setting("max_nodes_total")),
            limit_range(setting("cores_total"), "--cores-total"),
            (low * _GIB, high * _GIB),
        )


def capacity(node: KubeObject) -> tuple[int, int]:
    """A node's cores (rounded up) and memory bytes, from its capacity
    (``core/utils/utils.go`` GetNodeCoresAndMemory)."""
    found = (node.get("status") or {}).get("capacity") or {}
    return int_value(str(found.get("cpu", "0"))), int_value(str(found.get("memory", "0")))


def usage(cs: Any, names: list[str]) -> tuple[int, int]:
    cores = memory = 0
    for name in names:
        c, m = capacity(cs.node(name) or {})
        cores += c
        memory += m
    return cores, memory


@dataclass
class Decided:
    """What a loop decided, for the engine to carry out at depth 0."""

    scale_up: tuple[str, int] | None = None  # node group, nodes
    delete: list[str] = field(default_factory=list)  # nodes, in order
    drained: set[str] = field(default_factory=set)  # of those, the ones with pods to move
    reasons: dict[str, str] = field(default_factory=dict)  # pending pod -> why CA left it
    timed_out: list[str] = field(default_factory=list)  # node groups whose scale-up timed out
    no_scale_down: str | None = None  # why scale-down deleted nothing this loop


def backed_off(state: dict[str, Any], group: str, now: int) -> bool:
    """``BackoffStatus``: backed off unless ``until`` is strictly before now."""
    entry = state["backoff"].get(group)
    return entry is not None and not entry["until"] < now


def _backoff(state: dict[str, Any], group: str, now: int, timers: Timers) -> None:
    """``exponentialBackoff.Backoff``: 5m first; a failure after the last backoff ended doubles
    it (up to the maximum), one during it keeps it."""
    entry = state["backoff"].get(group)
    duration = timers.initial_node_group_backoff_duration
    if entry is not None:
        duration = entry["duration"]
        if entry["until"] < now:  # the previous backoff had ended
            duration = min(2 * duration, timers.max_node_group_backoff_duration)
    state["backoff"][group] = {"until": now + duration, "duration": duration, "failed": now}


def update_cluster_state(
    state: dict[str, Any], registered: dict[str, int], now: int, timers: Timers
) -> list[str]:
    """``ClusterStateRegistry.UpdateNodes``: stale backoffs forgotten, then each scale-up in
    flight ended (no upcoming node left) or timed out (``expected`` strictly before now: the
    group is backed off and its target lowered by the request's increase, cancelling
    instances not yet registered). Returns the groups that timed out."""
    reset = timers.node_group_backoff_reset_timeout
    for group in [g for g, b in state["backoff"].items() if b["failed"] + reset < now]:
        del state["backoff"][group]  # RemoveStaleBackoffData
    timed_out = []
    for group, request in sorted(state["requests"].items()):
        if upcoming(state, registered, group) == 0:
            del state["requests"][group]
        elif request["expected"] < now:
            timed_out.append(group)
            _backoff(state, group, now, timers)
            decrease_target(state, group, request["increase"])
            del state["requests"][group]
    return timed_out


def upcoming(state: dict[str, Any], registered: dict[str, int], group: str) -> int:
    """Nodes the group's target has that are not registered yet."""
    return max(0, int(state["target"].get(group, 0)) - registered.get(group, 0))


def decrease_target(state: dict[str, Any], group: str, by: int) -> None:
    """``DecreaseTargetSize``: at most the instances not registered yet, the newest first (each
    named in ``state["cancelled"]`` for the engine to close its node's life)."""
    waiting = sorted(
        (i["serial"], name) for name, i in state["instances"].items() if i["group"] == group
    )
    for _serial, name in reversed(waiting[len(waiting) - min(by, len(waiting)) :]):
        del state["instances"][name]
        state["target"][group] -= 1
        state.setdefault("cancelled", []).append(name)


def run_loop(
    sim: RunContext,
    plan: TimelinePlan,
    groups: list[NodeGroup],
    state: dict[str, Any],
    members: dict[str, str],
    pods: dict[str, dict[str, Any]],
    now: int,
    timers: Timers,
) -> Decided:
    """One loop at ``now``. ``members``: each registered node's group; ``pods``: each pending
    pod's life record (its ``created`` time ages it)."""
    cs = sim.cluster
    # A node whose slices are not published yet is resource-unready (the DRA custom-resources
    # processor, docs/timelines.md 1.1): CA sees it NotStarted, so still upcoming.
    not_started = {n for n in state["slices"] if n in members}
    registered: dict[str, int] = {}  # per group, the registered nodes CA counts as there
    for name in cs.node_names():
        member_of = members.get(name)
        if member_of is not None and name not in not_started:
            registered[member_of] = registered.get(member_of, 0) + 1
    unaffiliated = [name for name in cs.node_names() if name not in members]
    limits = Limits.of(plan.settings)
    decided = Decided(timed_out=update_cluster_state(state, registered, now, timers))
    for node in [n for n, (until, _e) in state["unremovable"].items() if not until > now]:
        del state["unremovable"][node]  # unremovable.Nodes.Update: the recheck time came
    # Upcoming nodes (GetUpcomingNodes: groups with a scale-up in flight, not backed off) as
    # placeholders from the group's template: pods they will take trigger no second scale-up;
    # the group's NotStarted nodes leave CA's view, their pods with them.
    coming = sorted(g for g in state["requests"] if not backed_off(state, g, now))
    replaced = {n for n in not_started if members[n] in coming}
    loop = _loop_plan(sim, plan, state, members, pods, now, timers, replaced)
    sim.fork(f"cluster-autoscaler loop at {now} ms")
    # The scheduling simulations' round robin (lastIndexOrderMapping) starts each loop at the
    # first node: CA's node list comes from a Go map, in an order that changes every loop, so
    # where its cursor stopped last loop names no node this loop (drasnap lists by name). A
    # cursor carried over would make every loop differ from the last, and none idle.
    sim.store.put(DECISION_KIND, CURSOR_KEY, 0)
    for name in sorted(replaced):
        cs.remove_node(name)
    by_name = {g.name: g for g in groups}
    for group in coming:
        for index in range(upcoming(state, registered, group)):
            node, slices = instantiate(by_name[group], placeholder(group, index))
            cs.add_node(node, slices=slices)
    results: dict[str, Any] = {"placed": 0, "added": {}, "removed_from": {}}
    pod_list.place_on_existing(sim, loop)  # filterOutSchedulable
    _coming(sim, loop, decided)
    helped = pod_list.still_pending(sim, loop)
    disable_scale_down = False
    if helped and _all_new(helped, pods, now):
        # allPodsAreNew: wait one iteration for more, and skip a real scale-down too
        disable_scale_down = True
        decided.reasons = {key_of(p): "pods are very new: waiting a loop for more" for p in helped}
    elif helped and 0 < limits.max_nodes <= sum(registered.values()) + len(unaffiliated):
        # shouldScaleUp: ScaleUpLimitedByMaxNodesTotal, on the ready nodes
        decided.reasons = {key_of(p): "max total nodes in cluster reached" for p in helped}
    elif helped:
        decided.scale_up = _scale_up(sim, loop, groups, state, now, results, decided, limits)
    found = scale_down.find_unneeded(sim, loop, groups, recent=set(state["unremovable"]))
    sim.revert()
    unready = not_started - replaced  # the unready copy CA keeps (its request gone)
    _scale_down(
        state, loop, groups, found, now, timers, disable_scale_down, decided, limits, cs, unready
    )
    return decided


def _loop_plan(
    sim: RunContext,
    plan: TimelinePlan,
    state: dict[str, Any],
    members: dict[str, str],
    pods: dict[str, dict[str, Any]],
    now: int,
    timers: Timers,
    replaced: set[str],
) -> AutoscalePlan:
    """The loop's view as the autoscale steps read it (``replaced``: the nodes upcoming
    placeholders stand for, out of it)."""
    settings = plan.settings
    cutoff = int(
        settings.get(
            "expendable_pods_priority_cutoff", CA_FLAGS["expendable_pods_priority_cutoff"][0]
        )
    )
    helped = []
    for key, pod in sim.store.items(PENDING_KIND).items():
        life = pods.get(key) or {}
        priority = int((pod.get("spec") or {}).get("priority") or 0)
        if priority < cutoff or (pod.get("status") or {}).get("nominatedNodeName"):
            continue  # FilterOutExpendablePods; a nominated pod waits for its preemption
        created = life.get("created")
        if created is not None and not now - created > timers.new_pod_scale_up_delay:
            continue  # filterOutYoungPods: its age must be strictly more than the delay
        helped.append((-priority, _queue_time(life), key))
    helped.sort()
    registered = [n for n in sim.cluster.node_names() if n not in replaced]
    return AutoscalePlan(
        settings,
        pending=[key for _p, _t, key in helped],
        groups=list(plan.groups),
        candidates=sorted(registered),
        members={n: members.get(n) for n in registered},
        sizes={g: int(state["target"].get(g, 0)) for g in plan.groups},
        priorities=plan.priorities,
        warnings=[],
    )


def placeholder(group: str, index: int) -> str:
    """The name of the ``index``-th node coming in ``group`` (``getUpcomingNodeInfos``)."""
    return f"template-{group}-upcoming-{index}"


def _coming(sim: RunContext, loop: AutoscalePlan, decided: Decided) -> None:
    """Why pods filterOutSchedulable packed are left to wait, in CA's view: on a node coming
    (a scale-up in flight), or on a node that is there (the scheduler's view differs)."""
    for key in loop.pending:
        where = (sim.store.get(DECISION_KIND, f"pod/{key}") or {}).get("existing")
        if not where or key in decided.reasons:
            continue
        if where.startswith("template-") and "-upcoming-" in where:
            group = where[len("template-") : where.rindex("-upcoming-")]
            decided.reasons[key] = f"scale-up in flight: a node of node group {group} is coming"
        else:
            decided.reasons[key] = f"the cluster-autoscaler finds it fits node {where}"


def _queue_time(life: dict[str, Any]) -> int:
    arrived = life.get("arrived")
    return -1 if arrived is None else int(arrived)


def _all_new(helped: list[KubeObject], pods: dict[str, dict[str, Any]], now: int) -> bool:
    """``allPodsAreNew``: the oldest pod to help was created less than 2s ago (a pod pending
    since before the start is old)."""
    created = [(pods.get(key_of(p)) or {}).get("created") for p in helped]
    if any(c is None for c in created):
        return False
    return min(int(c) for c in created if c is not None) + POD_TIME_BUFFER_MS > now


def _scale_up(
    sim: RunContext,
    loop: AutoscalePlan,
    groups: list[NodeGroup],
    state: dict[str, Any],
    now: int,
    results: dict[str, Any],
    decided: Decided,
    limits: Limits,
) -> tuple[str, int] | None:
    """Each group estimated (a backed-off one skipped, as ``IsNodeGroupReadyToScaleUp``, and
    one whose template node alone passes a resource limit), the expander's choice, capped by
    --max-nodes-total and the resource limits; the expansion is simulated in the loop's fork
    and returned."""
    cs = sim.cluster
    nodes = cs.node_names()  # the snapshot's, placeholders included (calculateUsages)
    cores, memory = usage(cs, nodes)
    headroom = (limits.cores[1] - cores, limits.memory[1] - memory)
    for group in groups:
        reason = None
        per_node = capacity(group.node)
        if backed_off(state, group.name, now):
            reason = "node group is backed off after a failed scale-up"
        elif per_node[0] > headroom[0] or per_node[1] > headroom[1]:
            over = [
                n for n, a, b in zip(("cpu", "memory"), per_node, headroom, strict=True) if a > b
            ]
            reason = f"max cluster {', '.join(over)} limit reached"
        if reason is not None:
            pending = pod_list.still_pending(sim, loop)
            sim.store.put(
                DECISION_KIND,
                f"estimate/{group.name}",
                {
                    "nodes": 0,
                    "pods": [],
                    "reasons": {key_of(p): reason for p in pending},
                    "skipped": [reason],
                },
            )
        else:
            scale_up.estimate_group(sim, loop, group, results)
    scale_up.expand(sim, loop, groups, results)
    chosen = sim.store.get(DECISION_KIND, SCALE_UP_KEY) or {}
    for key in loop.pending:
        found = sim.store.get(DECISION_KIND, f"pod/{key}") or {}
        if found.get("unschedulable"):
            decided.reasons[key] = found["unschedulable"]
        elif found.get("new"):
            decided.reasons[key] = f"triggered a scale-up of node group {chosen['node_group']}"
    if not chosen.get("node_group"):
        return None
    chosen_group = str(chosen["node_group"])
    count = int(chosen["added"][chosen_group])
    if limits.max_nodes > 0:  # GetCappedNewNodeCount, on the snapshot's node list
        count = min(count, limits.max_nodes - len(nodes))
    per_node = capacity(next(g.node for g in groups if g.name == chosen_group))
    for need, room in zip(per_node, headroom, strict=True):  # applyLimits
        if need > 0:
            count = min(count, room // need)
    return (chosen_group, count) if count > 0 else None


def _scale_down(
    state: dict[str, Any],
    loop: AutoscalePlan,
    groups: list[NodeGroup],
    found: scale_down.Unneeded,
    now: int,
    timers: Timers,
    disabled: bool,
    decided: Decided,
    limits: Limits,
    cs: Any,
    unready: set[str],
) -> None:
    """The unneeded set kept with each node's ``since``, failed simulations cached, then the
    cooldown, ``RemovableAt`` (strictly longer than --scale-down-unneeded-time) and the budgets."""
    before = state["unneeded"]
    state["unneeded"] = {u["node"]: before.get(u["node"], now) for u in found.unneeded}
    recheck = now + timers.unremovable_node_recheck_timeout
    for node, why in found.kept.items():
        if why.reason in _SIMULATION_FAILURES:
            state["unremovable"][node] = [recheck, state["epoch"]]
    last = state["last"]
    if disabled:
        decided.no_scale_down = "pods are very new"
    elif last["scale_up"] + timers.scale_down_delay_after_add > now:
        decided.no_scale_down = "in cooldown after a scale-up"
    elif last["fail"] + timers.scale_down_delay_after_failure > now:
        decided.no_scale_down = "in cooldown after a failed scale-down"
    elif last["delete"] + timers.scale_down_delay_after_delete > now:
        decided.no_scale_down = "in cooldown after a deletion"
    if decided.no_scale_down is not None:
        return

    def threshold(node: str) -> int:  # lookupAndSetRemovalThreshold: unready nodes' own
        if node in unready:
            return timers.scale_down_unready_time
        return timers.scale_down_unneeded_time

    ready = [u for u in found.unneeded if state["unneeded"][u["node"]] + threshold(u["node"]) < now]
    kept = dict(found.kept)
    left = list(usage(cs, loop.candidates))
    lowest = (limits.cores[0], limits.memory[0])

    def quota(node: str) -> scale_down.Kept | None:
        """The minimum resource limits (``ConsumeQuota`` in ``unremovableReason``)."""
        gone = capacity(cs.node(node) or {})
        if any(have - g < low for have, g, low in zip(left, gone, lowest, strict=True)):
            return scale_down.Kept(
                UnremovableReason.MinimalResourceLimitExceeded,
                "the cluster would go under --cores-total or --memory-total's minimum",
            )
        left[0] -= gone[0]
        left[1] -= gone[1]
        return None

    decided.delete = scale_down.nodes_to_delete(loop, groups, {"added": {}}, ready, kept, quota)
    decided.drained = {u["node"] for u in ready if u["moves"]} & set(decided.delete)


__all__ = ["Decided", "backed_off", "run_loop"]
