"""Comparing runs of one scenario (autoscale or timeline): one row per finished run (a sweep's
points, or runs named), and which axes differ between rows, for ``drasnap compare`` and the
sweep's report page. Each row says its ``scenario``; its columns are that scenario's
(``snapshot.simulation.comparison.SCENARIO_COLUMNS``).
"""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.simulation.runs import RunStatus, list_runs
from drasnap.snapshot.simulation.sweep.file import AXES
from drasnap.snapshot.simulation.sweep.points import SUMMARIES, point_summary
from drasnap.snapshot.simulation.sweep.views import SUMMARY_KEY, SUMMARY_KIND
from drasnap.store import Store

__all__ = ["compare_rows", "differing"]


def compare_rows(
    db: str, *, sweep: str | None = None, names: list[str] | None = None
) -> list[dict[str, Any]]:
    """One row per finished run, all of one scenario (autoscale or timeline): the points of
    ``sweep``, or the runs ``names`` (a run without a summary, e.g. one ``drasnap simulate``
    ran, is summarised here).

    Raises:
        ScenarioError: no such sweep, a named run that is missing or no finished autoscale or
            timeline run, or runs of both scenarios (their columns differ).
        store.NotADatabaseError: ``db`` is not a drasnap database.
    """
    runs = {r.name: r for r in list_runs(db)}
    if names:
        chosen = []
        for name in names:
            run = runs.get(name)
            if run is None:
                raise ScenarioError(f"no run {name!r} in {db} (drasnap runs lists them)")
            if run.scenario not in SUMMARIES or run.status != RunStatus.FINISHED:
                raise ScenarioError(
                    f"run {name!r} is {run.status}"
                    + (f" ({run.scenario})" if run.scenario not in SUMMARIES else "")
                    + f": compare reads finished {' or '.join(SUMMARIES)} runs"
                )
            chosen.append(name)
    else:
        points = {
            r.name: (r.settings or {})["sweep"]
            for r in runs.values()
            if (r.settings or {}).get("sweep") and r.status == RunStatus.FINISHED
        }
        chosen = [n for n, p in points.items() if sweep is None or p["sweep"] == sweep]
        chosen.sort(key=lambda n: (points[n]["sweep"], points[n]["index"]))
        if not chosen:
            what = f"sweep {sweep!r}" if sweep else "sweep"
            raise ScenarioError(
                f"{db} holds no finished point of a {what} (drasnap sweep runs one)"
            )
    scenarios: dict[str, list[str]] = {}
    for name in chosen:
        scenarios.setdefault(str(runs[name].scenario), []).append(name)
    if len(scenarios) > 1:
        (few, some), *_ = sorted(scenarios.items(), key=lambda item: len(item[1]))
        raise ScenarioError(
            f"cannot compare {' and '.join(sorted(scenarios))} runs in one table ({few}: "
            f"{', '.join(some[:3])}{', ...' if len(some) > 3 else ''}): give --sweep or --name "
            "for runs of one scenario"
        )
    rows = []
    for name in chosen:
        with Store.open(db, name=name, readonly=True, cache_size=1) as store:
            summary = store.get(SUMMARY_KIND, SUMMARY_KEY)
            if summary is None:
                summary = point_summary(ClusterSnapshot(store))
        rows.append({"name": name, "scenario": runs[name].scenario, **summary})
    return rows


def differing(rows: list[dict[str, Any]]) -> list[str]:
    """The setting names (axes) whose value differs between ``rows``."""
    keys: list[str] = []
    for row in rows:
        for key in [*row["variants"], *row["settings"]]:
            if key not in keys:
                keys.append(key)
    # The base axes in their order, then the settings as the rows name them (a sweep's axes
    # in its file's order).
    base = AXES[: AXES.index("featureGates") + 1]
    shown = []
    for key in sorted(keys, key=lambda k: (0, base.index(k)) if k in base else (1, keys.index(k))):
        values = {str(row["variants"].get(key, row["settings"].get(key))) for row in rows}
        if len(values) > 1:
            shown.append(key)
    return shown
