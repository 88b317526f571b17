"""The page of a sweep: its points side by side (the rows ``drasnap compare --sweep S``
prints, from :func:`snapshot.simulation.compare_rows`) and, for each axis whose variants
differ, a chart of nodes added, pods left pending and cost per hour by the axis's variant.

It uses the run page's style, table and chart code (:mod:`.page`, :mod:`.charts`): one file,
no script needed to read it, no network request.
"""

from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass
from statistics import mean
from typing import Any

from drasnap.snapshot.simulation.comparison import SCENARIO_COLUMNS, compare_cell, compare_values
from drasnap.snapshot.simulation.report.charts import new_figure, svg_text
from drasnap.snapshot.simulation.report.data import Table
from drasnap.snapshot.simulation.report.page import head, html_table, tail, write_page
from drasnap.snapshot.simulation.sweep import compare_rows, differing

__all__ = ["SweepReport", "gather_sweep", "render_sweep", "write_sweep_report"]

#: What each axis's chart draws, with its label, by the points' scenario.
METRICS: dict[str, tuple[tuple[str, str], ...]] = {
    "autoscale": (
        ("nodes_added", "nodes added"),
        ("pods_pending", "pods pending"),
        ("cost_per_hour", "cost per hour"),
    ),
    "timeline": (
        ("cluster_cost", "cost"),
        ("node_hours", "node-hours"),
        ("wait_p99_s", "pod wait p99 (s)"),
    ),
}
#: What the charts draw, in words (the chart's name), by scenario.
_CHART_TITLES = {
    "autoscale": "nodes added, pods pending and cost",
    "timeline": "cost, node-hours and pod wait p99",
}
#: What the points' table says under it, by scenario.
_NOTES = {
    "autoscale": "Device utilization: the mean over nodes with devices after the run; cost: of "
    "the node groups' nodes after the run, per hour (the sweep file's cost:).",
    "timeline": "Cost: the node-hours of each priced group times its cost (the sweep file's "
    "cost:); waits in seconds, from arrival to binding (nearest rank).",
}


@dataclass
class SweepReport:
    """One sweep, as its page shows it: the points' rows and the axes that differ."""

    db: str
    sweep: str
    generated: float
    rows: list[dict[str, Any]]
    axes: list[str]

    @property
    def scenario(self) -> str:
        """The points' scenario (one for all: compare_rows refuses a mix)."""
        return str(self.rows[0].get("scenario") or "autoscale") if self.rows else "autoscale"


def gather_sweep(db: str, sweep: str) -> SweepReport:
    """The finished points of ``sweep`` in ``db``, in index order.

    Raises:
        ScenarioError: ``db`` holds no finished point of ``sweep``.
    """
    rows = compare_rows(db, sweep=sweep)
    return SweepReport(db, sweep, time.time(), rows, differing(rows) if len(rows) > 1 else [])


def _value(row: dict[str, Any], axis: str) -> Any:
    return row["variants"].get(axis, row["settings"].get(axis))


def sweep_table(report: SweepReport) -> Table:
    columns = SCENARIO_COLUMNS[report.scenario]
    headers = [*report.axes, *columns]
    rows = [
        [str(_value(r, a)) for a in report.axes]
        + [compare_cell(c, v) for c, v in compare_values(report.scenario, r).items()]
        for r in report.rows
    ]
    return Table(
        "points",
        f"The {len(rows)} point{'s' if len(rows) != 1 else ''}",
        headers,
        rows,
        f"drasnap compare {report.db} --sweep {report.sweep}",
        note=_NOTES[report.scenario],
        filters={a: i for i, a in enumerate(report.axes)},
    )


def axis_chart(report: SweepReport, axis: str) -> str:
    """Nodes added, pods pending and cost by ``axis``'s variant: each point a dot, the
    variant's mean a bar."""
    variants: list[str] = []
    for row in report.rows:
        if str(_value(row, axis)) not in variants:
            variants.append(str(_value(row, axis)))
    fig, first = new_figure(10, 2.8)
    fig.delaxes(first)
    metrics = METRICS[report.scenario]
    values_of = [compare_values(report.scenario, r) for r in report.rows]
    panels = fig.subplots(1, len(metrics))
    for ax, (metric, label) in zip(panels, metrics, strict=True):
        ax.spines[["top", "right"]].set_visible(False)
        for i, variant in enumerate(variants):
            values = [
                v[metric]
                for r, v in zip(report.rows, values_of, strict=True)
                if str(_value(r, axis)) == variant and v.get(metric) is not None
            ]
            if values:
                ax.bar(i, mean(values), 0.6, color="#93c5fd")
                ax.plot([i] * len(values), values, "o", color="#1d4ed8", markersize=4)
        ax.set_xticks(range(len(variants)), variants, rotation=30, ha="right")
        ax.set_title(label, fontsize=10)
    fig.tight_layout()
    return svg_text(fig, f"{axis} chart: {_CHART_TITLES[report.scenario]} by variant")


def render_sweep(report: SweepReport) -> str:
    """The page of one sweep."""
    e = html.escape
    out = [
        head(f"drasnap report: sweep {report.sweep}"),
        f"<h1>Sweep {e(report.sweep)}</h1>",
        f'<p class="note">Database {e(report.db)}, read '
        f"{e(time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(report.generated)))} by "
        f"drasnap report. Each point is a{'n' if report.scenario[0] in 'aeiou' else ''} "
        f"{e(report.scenario)} run; "
        f"<code>drasnap report {e(report.db)} --name POINT</code> writes its own page.</p>",
        f"<section>{html_table(sweep_table(report))}</section>",
    ]
    if report.axes:
        out.append('<section><h2 id="axes-title">By axis</h2>')
        for axis in report.axes:
            out.append(
                f"<h3>{e(axis)}</h3><figure>{axis_chart(report, axis)}"
                f"<figcaption class=note>{e(axis)}: each dot a point, each bar the mean of the "
                "points with that variant.</figcaption></figure>"
            )
        out.append("</section>")
    else:
        out.append('<p class="note">No setting differs between the points: no chart.</p>')
    out.append(tail())
    return "\n".join(out)


def write_sweep_report(report: SweepReport, path: str | os.PathLike[str]) -> int:
    """Write the page of ``report`` to ``path`` whole or not at all; returns its size in
    bytes."""
    return write_page(render_sweep(report), path)
