"""What a run's records are called in its store, and what its plan says without running it
(light: ``drasnap runs`` reads this for every run of a database).

``Simulation/plan`` is written once at the start (the settings, and what the run iterates
over); ``Simulation/run`` is the progress, rewritten at every step boundary
(:mod:`snapshot.simulation.record`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["PLAN_KEY", "RUN_KEY", "SIM_KIND", "steps"]

SIM_KIND = "Simulation"
PLAN_KEY = "plan"
RUN_KEY = "run"


def steps(plan: dict[str, Any]) -> int:
    """How many steps the run of ``plan`` has: scale-up, one per node group then the
    expansion; scale-down, one per candidate node; autoscale, the pending pods' placement on
    existing nodes, one per node group, the expansion, the scale-down's simulation, its removals."""
    scenario = (plan.get("settings") or {}).get("scenario")
    if scenario == "autoscale":
        return len(plan["groups"]) + 4
    if scenario == "scale-down":
        return len(plan["candidates"])
    return len(plan["groups"]) + 1
