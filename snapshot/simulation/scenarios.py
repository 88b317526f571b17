"""The scenarios ``drasnap simulate`` runs, as strategies in one table (as the expanders'
``STRATEGIES``). Adding a scenario (the timeline is next) is a plan type in
:mod:`snapshot.simulation.plans`, its engine module, and one class and one entry here; the
runner (:mod:`snapshot.simulation.runner`) never names a scenario.

A scenario is what the runner asks of it, in the order it asks:

- ``configure(start, settings)``: the starting objects completed from the scenario's own
  inputs (autoscale reads its node-groups file), before any store is touched;
- ``setup(sim, start, settings)``: write the starting state; returns the run's typed plan,
  which the runner stores;
- ``run(sim, plan)``: run, or go on with, the plan's steps; returns the run record's results;
- ``result(sim, results)``: what ``--json`` reports as the run's result.
"""

from __future__ import annotations

from typing import Any, Protocol

from drasnap.snapshot.simulation import scale_down, scale_up
from drasnap.snapshot.simulation.inputs import StartingObjects
from drasnap.snapshot.simulation.plans import (
    AutoscalePlan,
    Plan,
    ScaleDownPlan,
    ScaleUpPlan,
    TimelinePlan,
    plan_of,
)
from drasnap.snapshot.simulation.record import RunContext
from drasnap.snapshot.simulation.settings import Settings

__all__ = ["STRATEGIES", "Scenario"]


class Scenario(Protocol):
    """One scenario of ``drasnap simulate`` (module docstring)."""

    name: str

    def configure(self, start: StartingObjects, settings: Settings) -> StartingObjects: ...

    def setup(self, sim: RunContext, start: StartingObjects, settings: Settings) -> Plan: ...

    def run(self, sim: RunContext, plan: Any) -> dict[str, Any]: ...

    def result(self, sim: RunContext, results: dict[str, Any]) -> dict[str, Any]: ...


class _FromStart:
    """What the scenarios that need nothing beyond the starting objects share."""

    def configure(self, start: StartingObjects, settings: Settings) -> StartingObjects:
        return start


class ScaleUp(_FromStart):
    """Upstream's ``BenchmarkRunOnceScaleUpDRA`` loop (:mod:`snapshot.simulation.scale_up`)."""

    name = ScaleUpPlan.scenario

    def setup(self, sim: RunContext, start: StartingObjects, settings: Settings) -> ScaleUpPlan:
        return scale_up.setup(sim, start, settings.record())

    def run(self, sim: RunContext, plan: ScaleUpPlan) -> dict[str, Any]:
        return scale_up.run(sim, plan)

    def result(self, sim: RunContext, results: dict[str, Any]) -> dict[str, Any]:
        return {key: results[key] for key in ("nodes_added", "node_group", "estimates")}


class ScaleDown(_FromStart):
    """Upstream's ``BenchmarkRunOnceScaleDownDRA`` loop
    (:mod:`snapshot.simulation.scale_down`)."""

    name = ScaleDownPlan.scenario

    def setup(self, sim: RunContext, start: StartingObjects, settings: Settings) -> ScaleDownPlan:
        return scale_down.setup(sim, settings.record())

    def run(self, sim: RunContext, plan: ScaleDownPlan) -> dict[str, Any]:
        return scale_down.run(sim, plan)

    def result(self, sim: RunContext, results: dict[str, Any]) -> dict[str, Any]:
        return {"nodes_removed": results["nodes_removed"]}


class Autoscale:
    """One cluster-autoscaler loop on a given cluster (:mod:`snapshot.simulation.autoscale`).

    Its engine (the autoscale package and the autoscaler's expanders, estimator, drain and
    utilization) is imported when an autoscale run asks for it: a scale-up or scale-down run
    never loads it.
    """

    name = AutoscalePlan.scenario

    def configure(self, start: StartingObjects, settings: Settings) -> StartingObjects:
        from drasnap.snapshot.simulation import autoscale_config

        return autoscale_config.configure(start, settings)

    def setup(self, sim: RunContext, start: StartingObjects, settings: Settings) -> AutoscalePlan:
        from drasnap.snapshot.simulation.autoscale import loop

        return loop.setup(sim, start, settings.record())

    def run(self, sim: RunContext, plan: AutoscalePlan) -> dict[str, Any]:
        from drasnap.snapshot.simulation.autoscale import loop

        return loop.run(sim, plan)

    def result(self, sim: RunContext, results: dict[str, Any]) -> dict[str, Any]:
        from drasnap.snapshot.simulation.autoscale import records

        plan = plan_of(sim.plan() or {})
        assert isinstance(plan, AutoscalePlan)  # the result of the run this plan set up
        found = records.decisions(sim.store, plan)
        del found["pending"]
        return found


class Timeline:
    """The cluster-autoscaler over time, driven by a trace (:mod:`snapshot.simulation.timeline`).
    ``--no-skip`` (an execution option, ``sim.options``) runs the idle loops too."""

    name = TimelinePlan.scenario

    def configure(self, start: StartingObjects, settings: Settings) -> StartingObjects:
        from drasnap.snapshot.simulation import autoscale_config
        from drasnap.snapshot.simulation.timeline.trace_input import read_trace

        start = autoscale_config.configure(start, settings)
        start.trace = read_trace(start, settings)
        # (after the trace: Alibaba's brings its groups)
        start.groups = autoscale_config.priced(start.groups, settings)
        return start

    def setup(self, sim: RunContext, start: StartingObjects, settings: Settings) -> TimelinePlan:
        from drasnap.snapshot.simulation.timeline import setup

        return setup.setup(sim, start, settings.record(), start.trace)

    def run(self, sim: RunContext, plan: TimelinePlan) -> dict[str, Any]:
        from drasnap.snapshot.simulation.timeline import engine

        return engine.run(sim, plan, no_skip=bool(sim.options.get("no_skip")))

    def result(self, sim: RunContext, results: dict[str, Any]) -> dict[str, Any]:
        from drasnap.snapshot.simulation.timeline.totals import totals

        plan = plan_of(sim.plan() or {})
        assert isinstance(plan, TimelinePlan)
        from drasnap.snapshot.simulation.timeline.utilization import summary

        return {
            "scale_ups": results.get("scale_ups", 0),
            "scale_downs": results.get("scale_downs", 0),
            **totals(sim.store, plan),
            "utilization": summary(results),
            "warnings": list(plan.warnings),
        }


STRATEGIES: dict[str, Scenario] = {
    s.name: s for s in (ScaleUp(), ScaleDown(), Autoscale(), Timeline())
}
