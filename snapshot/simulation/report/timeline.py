"""What a report shows of a timeline (docs/timelines.md 2.6, 2.9): each node group's nodes
(ready, provisioning, deleting) and the pending pods over simulated time, node-hours and cost,
and the wait distribution.

A run shows this section when its store holds a timeline's records, whatever its scenario is
called: the page follows the data. The series are rebuilt from the per-object records, which
give every change (a node's ``requested``, ``ready`` and ``deleted``; a pod's ``arrived``,
``bound`` and ``ended``), and the loop records, which say when a deletion started and are
held as the truth at each loop: the rebuilt counts must equal theirs. (An instance the cloud
cancels after a timed-out scale-up, ``DecreaseTargetSize``, has its node record closed then.)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from drasnap.snapshot.simulation.plan import PLAN_KEY, SIM_KIND
from drasnap.snapshot.simulation.plans import TimelinePlan, plan_of
from drasnap.snapshot.simulation.timeline.records import LOOP_KIND, NODE_LIFE, POD_LIFE
from drasnap.snapshot.simulation.timeline.state import STATE_KEY, STATE_KIND
from drasnap.snapshot.simulation.timeline.totals import totals

__all__ = ["STATES", "TimelineSection", "gather_timeline", "histogram"]

#: A node's states in a group's count, in the order the page draws them.
STATES = ("ready", "provisioning", "deleting")

#: Past this many points a series is drawn binned (the most of each bin: a peak stays seen).
POINTS = 1500

# A pod that never waited: one of the starting cluster, running, then evicted or deleted with
# its node (the engine writes its life only then, with no arrival nor binding).
_NEVER_PENDING = frozenset({"evicted", "lost", "deleted"})


class _Reader(Protocol):
    def items(self, kind: str) -> dict[str, Any]: ...

    def get(self, kind: str, key: str) -> Any: ...


@dataclass
class TimelineSection:
    """A timeline run as its page shows it. Times in seconds of simulated time."""

    groups: list[str]
    end: float  # the time the run reached
    times: list[float]  # the instants the counts change, from 0, ascending
    nodes: dict[str, dict[str, list[int]]]  # group -> state -> count after each instant
    pending: list[int]  # pods pending after each instant
    waits: list[float]  # each bound pod's wait (s)
    totals: dict[str, Any]  # as the run's result gives them (timeline.totals), up to ``end``
    costs: dict[str, float]  # group -> cost per node-hour, for the groups that have one
    loops: list[dict[str, Any]]  # the TimelineLoop records, in time order
    peak: dict[str, int] = field(default_factory=dict)  # group -> most nodes at once
    notes: list[str] = field(default_factory=list)
    binned: int = 1  # instants per drawn point (1: every instant drawn)


def gather_timeline(store: _Reader) -> TimelineSection | None:
    """The timeline section of the run in ``store`` (its last checkpoint), or None when the
    store holds no timeline."""
    record = store.get(SIM_KIND, PLAN_KEY)
    plan = plan_of(record) if record else None
    if not isinstance(plan, TimelinePlan):
        return None
    state = store.get(STATE_KIND, STATE_KEY) or {}
    # An unfinished run reached its clock, not --until: count up to where it is.
    end_ms = max(0, min(plan.until_ms, int(state.get("now", plan.until_ms))))
    reached = replace(plan, until_ms=end_ms)
    loops = [v for _, v in sorted(store.items(LOOP_KIND).items())]
    section = TimelineSection(
        groups=list(plan.groups),
        end=end_ms / 1000,
        times=[],
        nodes={},
        pending=[],
        waits=[],
        totals=totals(store, reached),
        costs={
            g: float(o["cost"]) for g, o in plan.group_options.items() if o.get("cost") is not None
        },
        loops=loops,
    )
    lives = store.items(POD_LIFE)
    _series(section, store.items(NODE_LIFE), lives, loops, end_ms)
    _bin(section)
    section.waits = sorted(
        (int(life["bound"]) - int(life.get("arrived") or 0)) / 1000
        for life in lives.values()
        if life.get("bound") is not None
    )
    return section


def _series(
    section: TimelineSection,
    nodes: dict[str, Any],
    lives: dict[str, Any],
    loops: list[dict[str, Any]],
    end: int,
) -> None:
    """Counts after each instant at which one changes, from the records' times (ms)."""
    groups = section.groups
    # (time, group, state, change); the loops' deletions start the 'deleting' state.
    changes: list[tuple[int, str, str, int]] = []
    deleting_from = {node: int(loop["t"]) for loop in loops for node in loop.get("deleted") or ()}
    for name, node in nodes.items():
        group = str(node["group"])
        if group not in groups:
            continue
        requested, ready, deleted = node.get("requested"), node.get("ready"), node.get("deleted")
        if ready is None:
            changes.append((int(requested), group, "provisioning", +1))
            if deleted is not None:
                changes.append((int(deleted), group, "provisioning", -1))
            continue
        if int(ready) > int(requested):
            changes.append((int(requested), group, "provisioning", +1))
            changes.append((int(ready), group, "provisioning", -1))
        changes.append((int(ready), group, "ready", +1))
        start = deleting_from.get(name)
        if start is not None:
            changes.append((start, group, "ready", -1))
            changes.append((start, group, "deleting", +1))
        if deleted is not None:
            changes.append((int(deleted), group, "deleting" if start is not None else "ready", -1))
    for life in lives.values():
        bound, ended = life.get("bound"), life.get("ended")
        if bound is None and life.get("fate") in _NEVER_PENDING:
            continue
        changes.append((int(life.get("arrived") or 0), "", "pending", +1))
        gone = bound if bound is not None else ended
        if gone is not None:
            changes.append((int(gone), "", "pending", -1))
    counts = {g: dict.fromkeys(STATES, 0) for g in groups}
    pending = 0
    by_time: dict[int, list[tuple[str, str, int]]] = defaultdict(list)
    for t, group, state, change in changes:
        by_time[min(t, end)].append((group, state, change))
    section.nodes = {g: {s: [] for s in STATES} for g in groups}
    section.peak = dict.fromkeys(groups, 0)
    for t in sorted({0, *by_time, end}):
        for group, state, change in by_time.get(t, ()):
            if state == "pending":
                pending += change
            else:
                counts[group][state] += change
        section.times.append(t / 1000)
        section.pending.append(pending)
        for g in groups:
            for s in STATES:
                section.nodes[g][s].append(counts[g][s])
            section.peak[g] = max(section.peak[g], sum(counts[g].values()))


def _bin(section: TimelineSection) -> None:
    """Past :data:`POINTS` instants, each drawn point is a bin's most (its first time): the
    series of a week-long run stay small and no peak is lost."""
    count = len(section.times)
    if count <= POINTS:
        return
    per = -(-count // POINTS)
    starts = range(0, count, per)
    # The last instant as it is too, unless a bin starts there: the line reaches the end.
    last = [] if starts[-1] == count - 1 else [count - 1]

    def most(values: list[int]) -> list[int]:
        return [max(values[i : i + per]) for i in starts] + [values[i] for i in last]

    section.times = [section.times[i] for i in [*starts, *last]]
    section.pending = most(section.pending)
    section.nodes = {
        g: {s: most(v) for s, v in states.items()} for g, states in section.nodes.items()
    }
    section.binned = per


def histogram(values: list[float], bins: int = 20) -> list[tuple[float, float, int]]:
    """``values`` in ``bins`` equal bins from 0 to the largest: (low, high, count) each, the
    last bin closed. One bin [0, 0] when every value is 0; none without values."""
    if not values:
        return []
    top = max(values)
    if top <= 0:
        return [(0.0, 0.0, len(values))]
    width = top / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int(v / width))] += 1
    return [(i * width, (i + 1) * width, counts[i]) for i in range(bins)]
