"""Each scenario's plan, typed: what a run iterates over, fixed when it starts.

A plan is stored once as the run's ``Simulation/plan`` record (:mod:`snapshot.simulation.plan`),
as the JSON object of its fields in their declared order, ``settings`` first. That record is
part of every state digest, so a field is never renamed, reordered or dropped without a
migration of the runs that hold it.

Light on purpose: ``drasnap runs`` and the command line read plans (their step counts, the
scenarios' names) without importing the engine that runs them
(:mod:`snapshot.simulation.scenarios`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

__all__ = [
    "PLANS",
    "AutoscalePlan",
    "Plan",
    "ScaleDownPlan",
    "ScaleUpPlan",
    "TimelinePlan",
    "plan_of",
]


@dataclass(frozen=True)
class Plan:
    """What every plan has: the run's settings (``Settings.record()``)."""

    scenario: ClassVar[str]
    settings: dict[str, Any]

    @property
    def steps(self) -> int:
        """How many restart points the run has."""
        raise NotImplementedError

    def record(self) -> dict[str, Any]:
        """The plan as it is stored (its values as they are: a plan never changes, and
        ``asdict`` would copy every key of a 50,000-pod plan)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class ScaleUpPlan(Plan):
    scenario = "scale-up"
    pending: list[str]  # the pending pods' keys, in the order they are packed
    groups: list[str]  # the node groups, in the order they are estimated

    @property
    def steps(self) -> int:
        return len(self.groups) + 1  # one estimate per node group, then the expansion


@dataclass(frozen=True)
class ScaleDownPlan(Plan):
    scenario = "scale-down"
    candidates: list[str]  # the nodes, in the order they are tried

    @property
    def steps(self) -> int:
        return len(self.candidates)


@dataclass(frozen=True)
class AutoscalePlan(Plan):
    scenario = "autoscale"
    pending: list[str]  # the pods it helps, by priority, highest first
    groups: list[str]
    candidates: list[str]  # the nodes, by name
    members: dict[str, str | None]  # node -> its node group (None: in none)
    sizes: dict[str, int]  # node group -> its ready members
    priorities: list[list[Any]]  # the priority expander's [priority, [patterns]]
    warnings: list[str]  # what drasnap does not model, found at setup

    @property
    def steps(self) -> int:
        # The pending pods on existing nodes, one estimate per node group, the expansion, the
        # scale-down's simulation, its removals.
        return len(self.groups) + 4


@dataclass(frozen=True)
class TimelinePlan(Plan):
    """A timeline (docs/timelines.md): the cluster-autoscaler every scan interval, the scheduler
    between, driven by a trace, on a simulated clock. One step per scan tick."""

    scenario = "timeline"
    groups: list[str]  # the node groups, in the order they are estimated
    group_options: dict[str, dict[str, Any]]  # per group, from the node-groups file
    priorities: list[list[Any]]  # the priority expander's [priority, [patterns]]
    trace: dict[str, Any]  # the trace: its file, digest, events, first and last time (ms)
    interval_ms: int  # the scan interval
    until_ms: int  # the last tick's time
    warnings: list[str]  # what drasnap does not model, found at setup

    @property
    def steps(self) -> int:
        return self.until_ms // self.interval_ms + 1  # the ticks 0, interval, ..., until


#: Each scenario's plan type, by scenario name: the scenarios drasnap knows.
PLANS: dict[str, type[Plan]] = {
    p.scenario: p for p in (ScaleUpPlan, ScaleDownPlan, AutoscalePlan, TimelinePlan)
}


def plan_of(record: Mapping[str, Any]) -> Plan:
    """The typed plan of a stored plan record (one naming no scenario is scale-up's, the
    default scenario)."""
    settings = record.get("settings") or {}
    kind = PLANS[settings.get("scenario") or ScaleUpPlan.scenario]
    return kind(
        **{f.name: record[f.name] for f in fields(kind) if f.name != "settings"},
        settings=dict(settings),
    )
