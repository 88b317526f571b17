"""The scenarios as one table: every scenario has a plan type and a strategy, and a run's plan
record is its typed plan, field for field, in the order the state digest has always hashed."""

from __future__ import annotations

from typing import Any

import pytest
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.simulation.plan import PLAN_KEY, SIM_KIND, steps
from drasnap.snapshot.simulation.plans import PLANS, ScaleDownPlan, ScaleUpPlan, plan_of
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.scenarios import STRATEGIES
from drasnap.snapshot.simulation.settings import SCENARIOS, Settings
from drasnap.store import MemoryStore


def test_each_scenario_has_one_plan_type_and_one_strategy() -> None:
    assert list(STRATEGIES) == list(PLANS) == list(SCENARIOS)
    assert SCENARIOS == ("scale-up", "scale-down", "autoscale", "timeline")  # the CLI's order


def stored_plan(settings: Settings) -> dict[str, Any]:
    resolved = settings.resolved()
    cs = ClusterSnapshot(MemoryStore(), features=resolved.feature_gates)
    simulate(cs, resolved, lambda: prepare(resolved))
    plan: dict[str, Any] = cs.store.get(SIM_KIND, PLAN_KEY)
    return plan


@pytest.mark.parametrize(
    ("settings", "fields", "expected_steps"),
    [
        # 3 node groups: one estimate each, then the expansion.
        (Settings("scale-up", pods=40, node_groups=3), ["pending", "groups"], 4),
        # One step per candidate node.
        (Settings("scale-down", nodes=6), ["candidates"], 6),
    ],
)
def test_a_runs_plan_record_is_its_typed_plan(
    settings: Settings, fields: list[str], expected_steps: int
) -> None:
    record = stored_plan(settings)
    assert list(record) == ["settings", *fields]  # the stored shape, settings first
    assert record["settings"] == settings.resolved().record()
    typed = plan_of(record)
    assert type(typed) is PLANS[settings.scenario]
    assert typed.record() == record
    assert typed.steps == steps(record) == expected_steps


def test_plans_are_frozen_and_compare_by_value() -> None:
    a = ScaleDownPlan({"scenario": "scale-down"}, candidates=["n1", "n2"])
    assert a == plan_of(a.record())
    with pytest.raises(AttributeError):
        a.candidates = []  # type: ignore[misc]
    assert plan_of({"pending": [], "groups": ["g"]}) == ScaleUpPlan({}, pending=[], groups=["g"])
