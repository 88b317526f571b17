"""The clock of a timeline (docs/timelines.md 2.3, 2.7, 2.8): events in time order, one step per
scan tick, the cluster-autoscaler's loop at each tick, idle ticks skipped.

A step is one tick ``t``: every instant in ``(previous tick, t]`` in time order, then the loop at
``t``. At an instant, in this order: pods that end (their run time elapsed), nodes whose
deletion comes, instances that register (Ready, with their slices), the trace's events at that
instant (in the trace's order), then one scheduler pass. The loop's actuation (evicted pods
recreated, taints) happens at ``t`` and is followed by a scheduler pass at ``t`` too.

Nothing of the engine lives only in memory across steps: each step ends at depth 0 with the
state record (:mod:`.state`) and the run record, so a run killed anywhere resumes from its last
checkpoint and replays the same steps (every choice is a function of the stored state and the
seed).

Idle ticks. After a tick, the next tick to run is the next one unless nothing changed since the
last loop began (no event, no write of the loop's own) and no timer falls due: then the run
skips to the first tick at or after the next event or timer (:func:`_next_due`). A skipped loop
would have seen the same inputs as the last one and decided the same, writing nothing;
``--no-skip`` runs them all (the tests compare the two digests).
"""

from __future__ import annotations

import dataclasses
import heapq
import uuid
from typing import Any

from drasnap.snapshot.autoscaler.drain import drain
from drasnap.snapshot.controllers.claim_templates import claims_from_templates
from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.k8s.kinds import key_of, namespace_or_default
from drasnap.snapshot.k8s.objects import KubeObject, name_of
from drasnap.snapshot.simulation.durations import parse_duration
from drasnap.snapshot.simulation.inputs import NodeGroup, instantiate
from drasnap.snapshot.simulation.plans import TimelinePlan
from drasnap.snapshot.simulation.record import RunContext
from drasnap.snapshot.simulation.scale_up import GROUP_KIND, PENDING_KIND
from drasnap.snapshot.simulation.settings import CA_FLAGS
from drasnap.snapshot.simulation.timeline import ca_loop, scheduler, utilization
from drasnap.snapshot.simulation.timeline.records import (
    LOOP_KIND,
    NODE_LIFE,
    POD_LIFE,
    REASON_KIND,
    TEMPLATE_KIND,
    TRACE_KIND,
    loop_key,
    physical_devices,
    reason_key,
    trace_key,
)
from drasnap.snapshot.simulation.timeline.state import STATE_KEY, STATE_KIND, snapshot
from drasnap.snapshot.simulation.timeline.timers import POD_TIME_BUFFER_MS, Timers

TO_BE_DELETED = "ToBeDeletedByClusterAutoscaler"
#: The namespace of the UIDs a timeline gives the pods it makes (uuid5: the same every run).
_UIDS = uuid.UUID("6f1d5c1e-3b1a-4f9e-9a53-2f4f8e7c0d11")
#: Controllers that make a new pod for one evicted: a new name (ReplicaSet, Job) or the same
#: (StatefulSet). A bare pod evicted is gone (CA evicts only one annotated safe-to-evict).
_RENAMES = frozenset({"ReplicaSet", "Job", "ReplicationController"})
_SAME_NAME = frozenset({"StatefulSet"})


class World:
    """The run's world between steps: the store's cluster plus what the engine indexes of it."""

    def __init__(self, sim: RunContext, plan: TimelinePlan) -> None:
        self.sim = sim
        self.plan = plan
        self.store = sim.store
        self.timers = Timers.of(plan.settings)
        self.no_skip = False
        self.groups: list[NodeGroup] = []
        for name in plan.groups:
            record = self.store.get(GROUP_KIND, name)
            self.groups.append(
                NodeGroup(
                    name, record["node"], record["slices"], record["minSize"], record["maxSize"]
                )
            )
        self.by_group = {g.name: g for g in self.groups}
        self.drain_rules = {
            name: bool(plan.settings.get(name, CA_FLAGS[name][0]))
            for name in (
                "skip_nodes_with_system_pods",
                "skip_nodes_with_local_storage",
                "skip_nodes_with_custom_controller_pods",
            )
        }
        self.state: dict[str, Any] = snapshot(self.store.get(STATE_KIND, STATE_KEY))
        self._saved = snapshot(self.state)
        count = int(plan.trace["events"])
        self.trace = [self.store.get(TRACE_KIND, trace_key(i)) for i in range(count)]
        self.lives: dict[str, dict[str, Any]] = dict(self.store.items(POD_LIFE))
        self.members = {
            name: str(r["group"])
            for name, r in self.store.items(NODE_LIFE).items()
            if r.get("deleted") is None and r.get("ready") is not None
        }
        self.ends: list[tuple[int, str]] = [
            (int(life["ends_at"]), key)
            for key, life in self.lives.items()
            if life.get("ends_at") is not None and life.get("ended") is None
        ]
        heapq.heapify(self.ends)
        # A trace names a pod by its first name; its controller may have made it again.
        self.current = {
            str(life["incarnation_of"]): key
            for key, life in self.lives.items()
            if life.get("incarnation_of") and life.get("fate") is None
        }
        self.changed = True  # since the last loop began: an event, or a write of that loop's
        self.results: dict[str, Any] = {}  # the run record's running totals

    # -- records -------------------------------------------------------------------------------

    def life(self, key: str, **changes: Any) -> None:
        record = {**self.lives.get(key, {}), **changes}
        self.lives[key] = record
        self.store.put(POD_LIFE, key, record)

    def save_state(self) -> None:
        if self.state != self._saved:
            self.store.put(STATE_KIND, STATE_KEY, snapshot(self.state))
            self._saved = snapshot(self.state)

    # -- time ----------------------------------------------------------------------------------

    def next_instant(self) -> int | None:
        """The earliest time something is due after ``state["now"]``."""
        times = []
        cursor = int(self.state["trace"])
        if cursor < len(self.trace):
            times.append(int(self.trace[cursor]["t_ms"]))
        while self.ends and self.lives[self.ends[0][1]].get("ended") is not None:
            heapq.heappop(self.ends)  # ended otherwise (deleted, evicted) before its run's end
        if self.ends:
            times.append(self.ends[0][0])
        instances = self.state["instances"].values()
        times += [int(i["ready_at"]) for i in instances if i["ready_at"] is not None]
        times += [int(at) for at in self.state["deleting"].values()]
        times += [int(at) for at in self.state["slices"].values()]
        return min(times) if times else None

    def advance(self, until: int) -> None:
        """Every instant up to ``until`` (included), in time order. The start is an instant
        of its own: the scheduler tries the pods pending in the starting cluster."""
        if int(self.state["now"]) < 0 and until >= 0:
            at = self.next_instant()
            if at is None or at > 0:
                self._instant(0, everything=True)
        while True:
            at = self.next_instant()
            if at is None or at > until:
                break
            self._instant(at, everything=int(self.state["now"]) < 0)
        self.state["now"] = max(int(self.state["now"]), until)

    def _instant(self, now: int, *, everything: bool = False) -> None:
        cs = self.sim.cluster
        capacity = everything
        while self.ends and self.ends[0][0] == now:
            _t, key = heapq.heappop(self.ends)
            if self.lives[key].get("ended") is None:
                self._end(key, now, "completed")
                capacity = True
        for node, at in sorted(self.state["deleting"].items()):
            if at == now:
                self._delete_node(node, now)
                capacity = True
        waiting = sorted(
            (i["serial"], name, i["group"])
            for name, i in self.state["instances"].items()
            if i["ready_at"] is not None and i["ready_at"] == now
        )
        for _serial, name, group in waiting:
            node, slices = instantiate(self.by_group[group], name)
            lag = self._group_duration(group, "slicePublishLag", self.timers.slice_publish_lag)
            published: int | None = now
            if slices and lag > 0:  # Ready, its DRA driver not yet: slices come later
                cs.add_node(node)
                self.state["slices"][name] = now + lag
                published = None
            else:
                cs.add_node(node, slices=slices)
            del self.state["instances"][name]
            self.members[name] = group
            life = self.store.get(NODE_LIFE, name)
            self.store.put(NODE_LIFE, name, {**life, "ready": now, "published": published})
            capacity = True
        for name, at in sorted(self.state["slices"].items()):
            if at == now:
                group = self.members[name]
                cs.publish_slices(name, instantiate(self.by_group[group], name)[1])
                del self.state["slices"][name]
                self.store.put(
                    NODE_LIFE, name, {**self.store.get(NODE_LIFE, name), "published": now}
                )
                capacity = True
        arrived: list[str] = []
        cursor = int(self.state["trace"])
        while cursor < len(self.trace) and int(self.trace[cursor]["t_ms"]) == now:
            event = self.trace[cursor]
            cursor += 1
            if event["op"] == "create":
                arrived += self._create(event, now)
            else:
                capacity |= self._trace_delete(event, now)
        self.state["trace"] = cursor
        self.state["now"] = now
        scheduler.schedule(self, now, None if capacity else arrived)
        self.changed = True
        self.state["epoch"] += 1
        utilization.integrate(self.results, cs, now)

    # -- pods ----------------------------------------------------------------------------------

    def _create(self, event: dict[str, Any], now: int) -> list[str]:
        obj = event["object"]
        kind = event["kind"]
        if kind == "ResourceClaimTemplate":
            self.store.put(TEMPLATE_KIND, event["key"], obj)
            return []
        if kind == "ResourceClaim":
            self.sim.cluster.dra.add_claims([obj])
            return []
        runs = event.get("runs_ms")
        self.arrive(obj, now, created=now, runs=None if runs is None else int(runs))
        return [event["key"]]

    def arrive(
        self,
        pod: KubeObject,
        now: int,
        *,
        created: int | None,
        runs: int | None,
        incarnation_of: str | None = None,
    ) -> None:
        """A pod comes pending: its claims made from their templates, its life begun."""
        meta = dict(pod.get("metadata") or {})
        meta.setdefault("namespace", "default")
        if not meta.get("uid"):  # a trace's pod: a UID from its name (claims' owners need one)
            meta["uid"] = str(uuid.uuid5(_UIDS, f"{meta['namespace']}/{meta.get('name')}"))
        pod = {**pod, "metadata": meta}
        if (pod.get("spec") or {}).get("resourceClaims"):
            templates = self.store.items(TEMPLATE_KIND)
            try:
                pod, claims = claims_from_templates(pod, templates)
            except Exception as exc:  # NotFoundError, ObjectValidationError: the trace's
                raise ScenarioError(f"pod {key_of(pod)} at {now} ms: {exc}") from exc
            if claims:
                self.sim.cluster.dra.add_claims(claims)
        key = key_of(pod)
        self.store.put(PENDING_KIND, key, pod)
        self.life(
            key,
            arrived=now,
            created=created,
            priority=int((pod.get("spec") or {}).get("priority") or 0),
            runs=runs,
            bound=None,
            node=None,
            group=None,
            ends_at=None,
            ended=None,
            fate=None,
            incarnation_of=incarnation_of,
            reason=None,
        )

    def waits(self, key: str, reason: str, now: int, by: str) -> None:
        """Why pod ``key`` waits, said by the scheduler or the cluster-autoscaler: its life's
        last reason, and a ``PodReason`` record, written when it changes."""
        if key in self.lives and self.lives[key].get("reason") != reason:
            self.life(key, reason=reason)
            self.store.put(REASON_KIND, reason_key(key, now, by), reason)

    def bound(self, key: str, node: str, now: int) -> None:
        life = self.lives.get(key) or {}
        runs = life.get("runs")
        ends_at = None if runs is None else now + int(runs)
        self.life(key, bound=now, node=node, group=self.members.get(node), ends_at=ends_at)
        if ends_at is not None:
            heapq.heappush(self.ends, (ends_at, key))

    def _end(self, key: str, now: int, fate: str) -> None:
        """A pod goes: off its node (or out of the queue), its own claims deleted."""
        cs = self.sim.cluster
        namespace, name = key.split("/", 1)
        pending = self.store.get(PENDING_KIND, key)
        if pending is not None:
            self.store.delete(PENDING_KIND, key)
            cs.dra.remove_pod_owned_claims(pending)
        elif cs.pod(namespace, name) is not None:
            pod = cs.unschedule_pod(namespace, name)
            cs.dra.remove_pod_owned_claims(pod)
        self.life(key, ended=now, fate=fate)

    def _trace_delete(self, event: dict[str, Any], now: int) -> bool:
        kind, key = event["kind"], event["key"]
        if kind == "ResourceClaimTemplate":
            self.store.delete(TEMPLATE_KIND, key)
            return False
        assert kind == "Pod", "read_trace refuses the deletes a timeline does not model"
        key = self.current.pop(key, key)
        life = self.lives.get(key)
        if life is None:  # a pod of the starting cluster
            namespace, name = key.split("/", 1)
            if self.sim.cluster.pod(namespace, name) is not None:
                pod = self.sim.cluster.unschedule_pod(namespace, name)
                self.sim.cluster.dra.remove_pod_owned_claims(pod)
                return True
            pending = self.store.get(PENDING_KIND, key)
            if pending is not None:
                self.store.delete(PENDING_KIND, key)
                self.sim.cluster.dra.remove_pod_owned_claims(pending)
            return False
        if life.get("ended") is not None:
            return False  # its run ended first
        was_bound = life.get("bound") is not None
        self._end(key, now, "deleted" if was_bound else "withdrawn")
        return was_bound

    # -- nodes ---------------------------------------------------------------------------------

    def _delete_node(self, node: str, now: int) -> None:
        cs = self.sim.cluster
        for pod in cs.pods_on_node(node):  # DaemonSet and mirror pods go with their node
            key = key_of(pod)
            if key in self.lives and self.lives[key].get("ended") is None:
                self.life(key, ended=now, fate="deleted")
        cs.remove_node(node)
        del self.state["deleting"][node]
        self.state["slices"].pop(node, None)
        self.members.pop(node, None)
        self.store.put(NODE_LIFE, node, {**self.store.get(NODE_LIFE, node), "deleted": now})

    def scale_up(self, group: str, count: int, now: int) -> None:
        """The cloud's part of a scale-up: the target raised, instances that register after the
        provision time, and clusterstate's request."""
        state = self.state
        state["target"][group] = int(state["target"].get(group, 0)) + count
        options = self.plan.group_options.get(group, {})
        provision: int | None = self._group_duration(
            group, "nodeProvisionTime", self.timers.node_provision_time
        )
        if options.get("provisioning") == "fail":
            provision = None  # the cloud accepts the new target and never delivers a node
        for _ in range(count):
            serial = int(state["serial"].get(group, 0))
            state["serial"][group] = serial + 1
            name = f"{group}-{serial}"
            state["instances"][name] = {
                "group": group,
                "serial": serial,
                "ready_at": None if provision is None else now + provision,
            }
            life = {"group": group, "requested": now, "ready": None, "published": None}
            devices = physical_devices(self.by_group[group].slices)
            self.store.put(NODE_LIFE, name, {**life, "deleted": None, "devices": devices})
        request = state["requests"].get(group)
        increase = count + (int(request["increase"]) if request else 0)
        expected = now + self.timers.max_node_provision_time
        state["requests"][group] = {"increase": increase, "time": now, "expected": expected}
        state["last"]["scale_up"] = now

    def _group_duration(self, group: str, option: str, default: int) -> int:
        """A node group's own duration from the node-groups file, else the flag's."""
        value = self.plan.group_options.get(group, {}).get(option)
        return default if value is None else parse_duration(str(value), option)

    def actuate(
        self, delete: list[str], drained: set[str], now: int
    ) -> tuple[list[str], list[str]]:
        """``Actuator.StartDeletion``: the empty nodes tainted first, then those to drain, each
        batch all or nothing; a batch that cannot be tainted (a group with ``scaleDown:
        taint-fails``) fails the scale-down (``lastScaleDownFailTime``) and what is after it
        does not start. Returns the nodes whose deletion started, and those that failed."""
        started: list[str] = []
        for batch in ([n for n in delete if n not in drained], [n for n in delete if n in drained]):
            if not batch:
                continue
            options = self.plan.group_options
            if any(
                options.get(self.members[n], {}).get("scaleDown") == "taint-fails" for n in batch
            ):
                self.state["last"]["fail"] = now
                return started, batch
            for node in batch:
                self.start_deletion(node, now)
            started += batch
        return started, []

    def start_deletion(self, node: str, now: int) -> None:
        """The actuator: the node tainted, its pods evicted (their controllers make them
        again, pending), its deletion after --node-delete-delay-after-taint."""
        cs = self.sim.cluster
        obj = cs.node(node)
        assert obj is not None
        spec = dict(obj.get("spec") or {})
        spec["taints"] = [
            *(spec.get("taints") or ()),
            {"key": TO_BE_DELETED, "value": str(now // 1000), "effect": "NoSchedule"},
        ]
        cs.update_node({**obj, "spec": spec})
        # What the drain sorts to move (DaemonSet and mirror pods stay and go with the node;
        # a node with a blocking pod was never unneeded).
        for pod in drain(cs.pods_on_node(node), **self.drain_rules).move:
            self._evict(pod, now)
        group = self.members[node]
        self.state["target"][group] = int(self.state["target"][group]) - 1
        self.state["deleting"][node] = now + self.timers.node_delete_delay_after_taint
        self.state["last"]["delete"] = now

    def _evict(self, pod: KubeObject, now: int) -> None:
        cs = self.sim.cluster
        key = key_of(pod)
        unbound = cs.unschedule_pod(namespace_or_default(pod), name_of(pod))
        cs.dra.remove_pod_owned_claims(unbound)
        life = self.lives.get(key)
        controller = _controller_kind(pod)
        first = (life or {}).get("incarnation_of") or key
        if controller in _RENAMES or controller in _SAME_NAME:
            again = _recreated(unbound, controller, _incarnation(first, self.lives))
            self.life(key, **({} if life else _started_before(pod)), ended=now, fate="evicted")
            runs = (life or {}).get("runs")
            self.arrive(again, now, created=now, runs=runs, incarnation_of=first)
            self.current[first] = key_of(again)
        else:
            self.life(key, **({} if life else _started_before(pod)), ended=now, fate="lost")

    def count(self, name: str, by: int = 1) -> None:
        self.results[name] = int(self.results.get(name, 0)) + by

    # -- the loop ------------------------------------------------------------------------------

    def loop(self, now: int) -> bool:
        """The cluster-autoscaler's loop at ``now``, and what it decided carried out. Returns
        whether it changed anything."""
        before = snapshot(self.state)
        pending = {k: self.lives.get(k, {}) for k in self.store.keys(PENDING_KIND)}
        decided = ca_loop.run_loop(
            self.sim, self.plan, self.groups, self.state, self.members, pending, now, self.timers
        )
        for name in self.state.pop("cancelled", ()):  # instances a timed-out scale-up cancelled
            self.store.put(NODE_LIFE, name, {**self.store.get(NODE_LIFE, name), "deleted": now})
        scaled = None
        if decided.scale_up is not None:
            group, count = decided.scale_up
            self.scale_up(group, count, now)
            scaled = {group: count}
            self.count("scale_ups")
        recreated_before = len(self.lives)
        started, failed = self.actuate(decided.delete, decided.drained, now)
        if started:
            self.count("scale_downs")
        for key, reason in decided.reasons.items():
            self.waits(key, reason, now, "cluster-autoscaler")
        # What makes the next loop decide otherwise. Not the unremovable cache alone: a node
        # whose removal just failed is skipped next loop as recently unremovable, which decides
        # the same (a failed simulation leaves nothing behind for the others); its recheck is
        # a timer (next_due).
        changed = any(self.state[k] != before[k] for k in self.state if k != "unremovable")
        if changed:
            self.state["epoch"] += 1
            utilization.integrate(self.results, self.sim.cluster, now)
        if scaled or decided.delete or decided.timed_out:
            self.store.put(
                LOOP_KIND,
                loop_key(now),
                {
                    "t": now,
                    "pending": self.store.count(PENDING_KIND),
                    "groups": self.group_counts(),
                    "scaled_up": scaled,
                    "deleted": started,
                    "deletion_failed": failed,
                    "timed_out": list(decided.timed_out),
                    "unneeded": len(self.state["unneeded"]),
                    "cost_rate": self.cost_rate(),
                },
            )
        if len(self.lives) != recreated_before or started:
            scheduler.schedule(self, now, None)
        return changed

    def cost_rate(self) -> float | None:
        """What the nodes cost per hour now (each from its scale-up to its deletion: booting,
        ready or being deleted), over the groups the node-groups file gives a cost; None when
        it gives none."""
        costs = {g: o["cost"] for g, o in self.plan.group_options.items() if "cost" in o}
        if not costs:
            return None
        counts = self.group_counts()
        return round(float(sum(sum(counts[g].values()) * c for g, c in costs.items())), 6)

    def group_counts(self) -> dict[str, dict[str, int]]:
        counts = {g: {"ready": 0, "provisioning": 0, "deleting": 0} for g in self.plan.groups}
        for node, group in self.members.items():
            if group in counts:
                counts[group]["deleting" if node in self.state["deleting"] else "ready"] += 1
        for instance in self.state["instances"].values():
            counts[instance["group"]]["provisioning"] += 1
        return counts

    def next_due(self, now: int, *, rechecks: bool = True) -> int | None:
        """The earliest time after ``now`` at which a loop could decide otherwise than at
        ``now`` with nothing else changed: a timer's comparison flips (docs/timelines.md 2.8).
        Strict comparisons flip just after their instant (+1 ms)."""
        state, timers = self.state, self.timers
        due: list[int] = []
        for since in state["unneeded"].values():  # a ready node's threshold, an unready one's
            due.append(int(since) + timers.scale_down_unneeded_time + 1)
            due.append(int(since) + timers.scale_down_unready_time + 1)
        last = state["last"]
        due.append(int(last["scale_up"]) + timers.scale_down_delay_after_add)
        due.append(int(last["fail"]) + timers.scale_down_delay_after_failure)
        due.append(int(last["delete"]) + timers.scale_down_delay_after_delete)
        for request in state["requests"].values():
            due.append(int(request["expected"]) + 1)
        for entry in state["backoff"].values():
            due.append(int(entry["until"]) + 1)
            due.append(int(entry["failed"]) + timers.node_group_backoff_reset_timeout + 1)
        if rechecks:
            due += [int(until) for until, _epoch in state["unremovable"].values()]
        for key in self.store.keys(PENDING_KIND):
            created = (self.lives.get(key) or {}).get("created")
            if created is not None:
                due.append(int(created) + timers.new_pod_scale_up_delay + 1)
                due.append(int(created) + POD_TIME_BUFFER_MS)
        later = [d for d in due if d > now]
        return min(later) if later else None


def _started_before(pod: KubeObject) -> dict[str, Any]:
    """The life of a pod that ran before the start, when something happens to it."""
    spec = pod.get("spec") or {}
    return {
        "arrived": None,
        "created": None,
        "bound": None,
        "runs": None,
        "incarnation_of": None,
        "priority": int(spec.get("priority") or 0),
        "node": spec.get("nodeName"),
    }


def _controller_kind(pod: KubeObject) -> str | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return str(ref.get("kind"))
    return None


def _incarnation(first: str, lives: dict[str, dict[str, Any]]) -> int:
    return 1 + sum(1 for life in lives.values() if life.get("incarnation_of") == first)


def _recreated(pod: KubeObject, controller: str | None, incarnation: int) -> KubeObject:
    """The pod its controller makes for one evicted: from the same template (no status, a new
    UID), named anew unless a StatefulSet's."""
    meta = dict(pod.get("metadata") or {})
    name = str(meta.get("name"))
    if controller not in _SAME_NAME:
        base = name.split("-e", 1)[0] if "-e" in name else name
        meta["name"] = f"{base}-e{incarnation}"
    meta["uid"] = str(
        uuid.uuid5(_UIDS, f"{meta.get('namespace', 'default')}/{meta['name']}/{incarnation}")
    )
    spec = dict(pod.get("spec") or {})
    spec.pop("nodeName", None)
    return {**pod, "metadata": meta, "spec": spec, "status": {}}


def run(sim: RunContext, plan: TimelinePlan, *, no_skip: bool = False) -> dict[str, Any]:
    """Run (or go on with) the timeline's ticks; returns the run record's results."""
    world = World(sim, plan)
    progress = sim.progress()
    world.results = dict(progress["results"]) or {
        "placed": 0,
        "scale_ups": 0,
        "scale_downs": 0,
    }
    interval, steps = plan.interval_ms, plan.steps
    tick = int(progress["step"])
    skip_to = tick  # the tick a run that skips idle loops runs next
    while tick < steps:
        now = tick * interval
        world.advance(now)
        world.changed = False
        counters = dataclasses.replace(sim.counters)
        if world.loop(now):
            world.changed = True
        if tick < skip_to:
            # A loop the skipping run does not run (--no-skip runs it): it must have changed
            # nothing, and it leaves no trace in the run record either.
            if world.changed:
                raise AssertionError(f"timeline: the loop at {now} ms was idle but changed state")
            sim.counters = counters
        if world.changed:
            next_tick = tick + 1
        elif no_skip:  # (the rechecks it predicts are left for the loops to make: a check)
            kept, world.state = world.state, snapshot(world.state)
            try:
                next_tick = _after_idle(world, tick)
            finally:
                world.state = kept
        else:
            next_tick = _after_idle(world, tick)
        if tick >= skip_to:
            skip_to = next_tick
        if no_skip:
            next_tick = tick + 1
        if next_tick >= steps:
            world.advance(plan.until_ms)  # (nothing is due before the end: the clock only)
            utilization.integrate(world.results, sim.cluster, plan.until_ms)
        world.save_state()
        sim.advance(min(next_tick, steps), f"t={now // 1000}s")
        sim.save(min(next_tick, steps), dict(world.results), done=next_tick >= steps)
        tick = next_tick
    return dict(world.results)


def _after_idle(world: World, tick: int) -> int:
    """After a loop that changed nothing: the first tick at or after the next event or timer
    (the end when none is coming).

    A node's unremovable recheck that falls due in the epoch its removal failed in (nothing
    changed since) fails again the same way: that loop is not run either; its one effect, the
    node cached again until the recheck's loop + the timeout, is made here, recheck after
    recheck, up to the next tick something else is due (the loops that run them under
    --no-skip write the same)."""
    interval = world.plan.interval_ms
    state = world.state
    now = tick * interval
    found = (world.next_instant(), world.next_due(now, rechecks=False))
    others = [d for d in found if d is not None]
    cached = state["unremovable"]
    others += [int(u) for u, epoch in cached.values() if epoch != state["epoch"]]
    end = world.plan.steps
    horizon = min([end, *(max(tick + 1, -(-d // interval)) for d in others)])
    timeout = world.timers.unremovable_node_recheck_timeout
    for node, (until, epoch) in list(cached.items()):
        if epoch != state["epoch"]:
            continue
        recheck = max(tick + 1, -(-int(until) // interval))
        while recheck < horizon:  # that loop would find it failing again: cached anew
            until = recheck * interval + timeout
            recheck = -(-until // interval)
        cached[node] = [until, epoch]
    due = [horizon, *(max(tick + 1, -(-int(u) // interval)) for u, _e in cached.values())]
    return min(due)
