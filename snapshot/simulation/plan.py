"""What a run's records are called in its store, and what its plan says without running it
(light: ``drasnap runs`` reads this for every run of a database).

``Simulation/plan`` is written once at the start (the settings, and what the run iterates
over); ``Simulation/run`` is the progress, rewritten at every step boundary
(:mod:`snapshot.simulation.record`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drasnap.snapshot.simulation.plans import plan_of

__all__ = ["PLAN_KEY", "RUN_KEY", "SIM_KIND", "steps"]

SIM_KIND = "Simulation"
PLAN_KEY = "plan"
RUN_KEY = "run"


def steps(plan: Mapping[str, Any]) -> int:
    """How many steps the run of the plan record ``plan`` has (``Plan.steps``)."""
    return plan_of(plan).steps
