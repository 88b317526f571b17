"""The cluster-autoscaler's flags as a run recorded them."""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.simulation.plans import AutoscalePlan
from drasnap.snapshot.simulation.settings import CA_FLAGS


def flag(plan: AutoscalePlan, name: str) -> Any:
    """A CA flag's value as the run recorded it (older records: CA's default)."""
    return plan.settings.get(name, CA_FLAGS[name][0])
