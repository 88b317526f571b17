"""How a comparison of runs reads (``drasnap compare``, a sweep's page): its columns and each
cell as text. Light on purpose: ``drasnap compare --help`` names the columns without importing
the store."""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.errors import one_line

__all__ = ["COMPARE_COLUMNS", "compare_cell"]

#: A comparison's columns after the settings that differ (``drasnap compare``, the sweep page).
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
_NO_SCALE_UP = "pod didn't trigger scale-up: "


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
    if column in ("device_utilization", "cost_per_hour") and value is not None:
        return f"{value:.2f}"
    return "" if value is None else str(value)
