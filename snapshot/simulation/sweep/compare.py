"""Comparing autoscale runs: one row per finished run (a sweep's points, or runs named), and
which axes differ between rows, for ``drasnap compare`` and the sweep's report page.
"""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.simulation.runs import RunStatus, list_runs
from drasnap.snapshot.simulation.sweep.file import AXES
from drasnap.snapshot.simulation.sweep.points import point_summary
from drasnap.snapshot.simulation.sweep.views import SUMMARY_KEY, SUMMARY_KIND
from drasnap.store import Store

__all__ = ["compare_rows", "differing"]


def compare_rows(
    db: str, *, sweep: str | None = None, names: list[str] | None = None
) -> list[dict[str, Any]]:
    """One row per finished autoscale run: the points of ``sweep``, or the runs ``names``
    (a run without a summary, e.g. one ``drasnap simulate autoscale`` ran, is summarised here).

    Raises:
        ScenarioError: no such sweep, or a named run that is missing or no finished autoscale run.
        store.NotADatabaseError: ``db`` is not a drasnap database.
    """
    runs = {r.name: r for r in list_runs(db)}
    if names:
        chosen = []
        for name in names:
            run = runs.get(name)
            if run is None:
                raise ScenarioError(f"no run {name!r} in {db} (drasnap runs lists them)")
            if run.scenario != "autoscale" or run.status != RunStatus.FINISHED:
                raise ScenarioError(
                    f"run {name!r} is {run.status}"
                    + (f" ({run.scenario})" if run.scenario != "autoscale" else "")
                    + ": compare reads finished autoscale runs"
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
    rows = []
    for name in chosen:
        with Store.open(db, name=name, readonly=True, cache_size=1) as store:
            summary = store.get(SUMMARY_KIND, SUMMARY_KEY)
            if summary is None:
                summary = point_summary(ClusterSnapshot(store))
        rows.append({"name": name, **summary})
    return rows


def differing(rows: list[dict[str, Any]]) -> list[str]:
    """The setting names (axes) whose value differs between ``rows``."""
    keys: list[str] = []
    for row in rows:
        for key in [*row["variants"], *row["settings"]]:
            if key not in keys:
                keys.append(key)
    shown = []
    for key in sorted(keys, key=lambda k: AXES.index(k) if k in AXES else len(AXES)):
        values = {str(row["variants"].get(key, row["settings"].get(key))) for row in rows}
        if len(values) > 1:
            shown.append(key)
    return shown
