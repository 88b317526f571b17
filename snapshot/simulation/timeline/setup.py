"""A timeline's start: the starting state written at depth 0 with the trace, and the plan."""

from __future__ import annotations

from collections import Counter
from typing import Any

from drasnap.snapshot.k8s.kinds import key_of, object_key
from drasnap.snapshot.k8s.objects import name_of
from drasnap.snapshot.scheduling import pod_warnings
from drasnap.snapshot.scheduling.scoring import node_scoring_warnings, unsupported_scoring
from drasnap.snapshot.simulation.autoscale.loop import write_groups
from drasnap.snapshot.simulation.durations import parse_duration
from drasnap.snapshot.simulation.inputs import StartingObjects, group_of
from drasnap.snapshot.simulation.plans import TimelinePlan
from drasnap.snapshot.simulation.record import RunContext
from drasnap.snapshot.simulation.scale_up import PENDING_KIND
from drasnap.snapshot.simulation.timeline import state
from drasnap.snapshot.simulation.timeline.records import (
    NODE_LIFE,
    POD_LIFE,
    TEMPLATE_KIND,
    TRACE_KIND,
    physical_devices,
    trace_key,
)

#: Without --until, a timeline runs this long past the trace's last event.
AFTER_LAST_EVENT_MS = 3_600_000


def until_ms(settings: dict[str, Any], last_event_ms: int, interval_ms: int) -> int:
    """The last tick: --until, else the trace's last event + 1h, rounded up to the scan grid."""
    if settings.get("until") is not None:
        end = parse_duration(str(settings["until"]), "--until")
    else:
        end = last_event_ms + AFTER_LAST_EVENT_MS
    return -(-end // interval_ms) * interval_ms


def setup(
    sim: RunContext, start: StartingObjects, settings: dict[str, Any], trace: Any
) -> TimelinePlan:
    """Write the starting state (the cluster is loaded already) and the trace; returns the
    run's plan. ``trace``: the read trace (``snapshot.simulation.traces``)."""
    store = sim.store
    warnings: list[str] = []
    for template in start.templates:
        store.put(TEMPLATE_KIND, object_key(template), template)
    for pod in start.pending:
        key = key_of(pod)
        store.put(PENDING_KIND, key, pod)
        store.put(
            POD_LIFE,
            key,
            {
                "arrived": None,
                "created": None,  # pending since before the start: old enough for CA
                "priority": int((pod.get("spec") or {}).get("priority") or 0),
                "runs": None,
                "bound": None,
                "node": None,
                "group": None,
                "ends_at": None,
                "ended": None,
                "fate": None,
                "incarnation_of": None,
                "reason": None,
            },
        )
        warnings += pod_warnings(pod) + unsupported_scoring(pod)
    for _node, _slices, bound in start.nodes:
        warnings += [w for p in bound for w in pod_warnings(p)]
    warnings += write_groups(sim, start)
    # What the scheduler's scores leave out on a node (the starting ones, the groups' templates).
    for node in [*(n for n, _s, _p in start.nodes), *(g.node for g in start.groups)]:
        warnings += node_scoring_warnings(node)
    # What reading the trace left out or changed (rows the mapping cannot take, ...): in the
    # result, not only said on the terminal.
    warnings += list(trace.notes)
    groups = {g.name for g in start.groups}
    targets: Counter[str] = Counter()
    for node, slices, _pods in start.nodes:
        group = group_of(node)
        if group in groups:
            targets[group] += 1
            life = {"group": group, "requested": 0, "ready": 0, "published": 0, "deleted": None}
            store.put(NODE_LIFE, name_of(node), {**life, "devices": physical_devices(slices)})
    seen: set[bytes] = set()
    for index, event in enumerate(trace.events):
        store.put(
            TRACE_KIND,
            trace_key(index),
            {
                "t_ms": event.t_ms,
                "op": event.op,
                "kind": event.kind,
                "key": event.key,
                "object": event.object,
                "runs_ms": event.runs_ms,
                "line": event.line,
            },
        )
        if event.op == "create" and event.kind == "Pod":
            spec = repr(sorted((event.object.get("spec") or {}).items())).encode()
            if spec not in seen:  # one warning per shape, not per pod of a trace
                seen.add(spec)
                warnings += pod_warnings(event.object) + unsupported_scoring(event.object)
    store.put(state.STATE_KIND, state.STATE_KEY, state.initial(dict(targets)))
    interval = parse_duration(str(settings["scan_interval"]), "--scan-interval")
    times = [e.t_ms for e in trace.events]
    return TimelinePlan(
        settings,
        groups=[g.name for g in start.groups],
        group_options={g.name: dict(g.options) for g in start.groups if g.options},
        priorities=sorted([p, list(patterns)] for p, patterns in (start.priorities or {}).items()),
        trace={
            "path": trace.path,
            "digest": trace.digest,
            "events": len(trace.events),
            "first_ms": min(times) if times else None,
            "last_ms": max(times) if times else None,
        },
        interval_ms=interval,
        until_ms=until_ms(settings, max(times) if times else 0, interval),
        warnings=list(dict.fromkeys(warnings)),
    )
