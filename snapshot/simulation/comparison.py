"""How a comparison of runs reads (``drasnap compare``, a sweep's page): its columns and each
cell as text. Light on purpose: ``drasnap compare --help`` names the columns without importing
the store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drasnap.snapshot.errors import one_line

__all__ = [
    "COMPARE_COLUMNS",
    "SCENARIO_COLUMNS",
    "TIMELINE_COMPARE_COLUMNS",
    "compare_cell",
    "compare_values",
]

#: A comparison's columns after the settings that differ (``drasnap compare``, the sweep page):
#: autoscale runs'.
COMPARE_COLUMNS = (
    "name",
    "nodes_added",
    "added",
    "pods_pending",
    "main_reason",
    "nodes_removed",
    "device_utilization",
    "cost_per_hour",
)
#: Timelines' (their totals: ``snapshot.simulation.timeline.totals``), so "what does a shorter
#: unneeded-time buy" is one table: cost beside node-hours, the pods' waits and what never ran.
TIMELINE_COMPARE_COLUMNS = (
    "name",
    "cluster_cost",
    "node_hours",
    "group_node_hours",
    "device_hours",
    "wait_p50_s",
    "wait_p99_s",
    "never_scheduled",
    "lost",
    "scale_ups",
    "scale_downs",
)
#: Each scenario's columns, in order.
SCENARIO_COLUMNS: dict[str, tuple[str, ...]] = {
    "autoscale": COMPARE_COLUMNS,
    "timeline": TIMELINE_COMPARE_COLUMNS,
}
#: The columns that are not a field of the run's summary: column -> its value from the summary.
_DERIVED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "node_hours": lambda s: round(sum((s.get("node_hours") or {}).values()), 6),
    "group_node_hours": lambda s: s.get("node_hours"),
    "device_hours": lambda s: round(sum((s.get("device_hours") or {}).values()), 6),
    "wait_p50_s": lambda s: (s.get("pod_wait_s") or {}).get("p50"),
    "wait_p99_s": lambda s: (s.get("pod_wait_s") or {}).get("p99"),
}
#: Shown with two decimals.
_MONEY_LIKE = frozenset(
    {"device_utilization", "cost_per_hour", "cluster_cost", "node_hours", "device_hours"}
)
#: A per-group cell lists the groups when there are at most this many (--json has them all).
_FEW_GROUPS = 4
_NO_SCALE_UP = "pod didn't trigger scale-up: "


def compare_values(scenario: str, summary: dict[str, Any]) -> dict[str, Any]:
    """The values of ``scenario``'s columns (:data:`SCENARIO_COLUMNS`) from a run's summary.

    >>> compare_values("timeline", {"name": "t-0", "node_hours": {"a": 1.5, "b": 2},
    ...     "pod_wait_s": {"p50": 3.0, "p99": 40.0}})["node_hours"]
    3.5
    """
    return {
        column: _DERIVED[column](summary) if column in _DERIVED else summary.get(column)
        for column in SCENARIO_COLUMNS[scenario]
    }


def compare_cell(column: str, value: Any, width: int | None = None) -> str:
    """One cell of a comparison as text; ``main_reason`` cut to ``width`` characters if given.

    >>> compare_cell("added", {"a": 2}), compare_cell("cost_per_hour", 9.5)
    ('a +2', '9.50')
    """
    if column == "added":
        return ", ".join(f"{g} +{n}" for g, n in value.items()) or "-"
    if column == "main_reason" and value:
        text = one_line(value)
        if _NO_SCALE_UP in text:  # the part a sweep varies (the scheduler's is above it)
            text = "no scale-up: " + text.split(_NO_SCALE_UP, 1)[1]
        return text if width is None or len(text) <= width else text[: width - 3] + "..."
    if column == "group_node_hours" and isinstance(value, dict):
        if len(value) > _FEW_GROUPS:
            return f"{len(value)} groups (--json: each)"
        return ", ".join(f"{g} {h:.2f}" for g, h in value.items()) or "-"
    if column in _MONEY_LIKE and value is not None:
        return f"{value:.2f}"
    if isinstance(value, float):
        return f"{value:g}"
    return "" if value is None else str(value)
