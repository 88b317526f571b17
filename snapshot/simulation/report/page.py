"""The report's HTML: one file, its style, script and charts inside it (no network request).

The page reads at 1280 px and on a phone: tables scroll inside their own box, charts scale to
the page's width. Its one script filters the pending pods and the nodes by the values of a
column; without it every row shows. Each table names the command that prints its rows.
"""

from __future__ import annotations

import html
import os
import tempfile
from pathlib import Path
from typing import Any

from drasnap.snapshot.simulation.report.charts import charts
from drasnap.snapshot.simulation.report.data import RunReport, Table

__all__ = ["head", "html_table", "render", "tail", "write_page", "write_report"]

_STYLE = """
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,sans-serif;margin:0;padding:0 12px 40px;color:#111827;
 max-width:1200px;margin-inline:auto;overflow-wrap:anywhere}
h1{font-size:1.5em;margin:16px 0 4px}h2{font-size:1.2em;margin:28px 0 8px;
 border-bottom:1px solid #e5e7eb}
.banner{background:#fef3c7;border:1px solid #f59e0b;padding:8px 12px;border-radius:6px}
.note{color:#4b5563;font-size:.92em}
.scroll{overflow-x:auto;max-width:100%;max-height:70vh;overflow-y:auto}
table{border-collapse:collapse;font-size:.9em;min-width:60%}
th,td{border-bottom:1px solid #e5e7eb;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f9fafb;position:sticky;top:0}
dl.summary{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
dl.summary dt{font-weight:600}dl.summary dd{margin:0}
code{background:#f3f4f6;padding:1px 4px;border-radius:3px;font-size:.88em}
p.source{font-size:.88em}
svg{width:100%;height:auto;max-width:100%}
figure{margin:8px 0}
label{margin-right:12px}select{max-width:100%}
@media (max-width:600px){body{font-size:14px}td,th{padding:2px 4px}}
"""

_SCRIPT = """
document.querySelectorAll('[data-filter-for]').forEach(function (select) {
  var table = document.getElementById(select.dataset.filterFor);
  select.addEventListener('change', function () {
    var filters = table.parentNode.parentNode.querySelectorAll('[data-filter-for]');
    table.querySelectorAll('tbody tr').forEach(function (row) {
      var show = true;
      filters.forEach(function (f) {
        if (f.value && row.cells[+f.dataset.column].textContent !== f.value) show = false;
      });
      row.hidden = !show;
    });
  });
});
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def html_table(table: Table) -> str:
    parts = [f'<h2 id="{table.id}-title">{_e(table.title)}</h2>']
    if table.filters:
        parts.append('<div class="filters">')
        for header, column in table.filters.items():
            values = sorted({str(r[column]) for r in table.rows})
            options = "".join(f"<option>{_e(v)}</option>" for v in values)
            parts.append(
                f'<label>{_e(header)} <select data-filter-for="{table.id}" '
                f'data-column="{column}" aria-label="filter by {_e(header)}">'
                f'<option value="">all</option>{options}</select></label>'
            )
        parts.append("</div>")
    head = "".join(f"<th scope=col>{_e(h)}</th>" for h in table.headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in table.rows
    )
    if not table.rows:
        body = f'<tr><td colspan="{len(table.headers)}">none</td></tr>'
    parts.append(
        f'<div class="scroll"><table id="{table.id}" aria-labelledby="{table.id}-title">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )
    if table.note:
        parts.append(f'<p class="note">{_e(table.note)}</p>')
    parts.append(
        f'<p class="source">The same rows in a terminal: <a href="#{table.id}-source" '
        f'id="{table.id}-source"><code>{_e(table.source)}</code></a></p>'
    )
    return "".join(parts)


def _figure(svg: str | None, caption: str) -> str:
    if svg is None:
        return ""
    return f"<figure>{svg}<figcaption class=note>{_e(caption)}</figcaption></figure>"


def head(title: str) -> str:
    """The page's head, up to ``<body>``: its style inside, no request allowed out."""
    return "".join(
        [
            "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
            '<meta name="viewport" content="width=device-width,initial-scale=1">',
            # No request leaves the page: no fetch, no image, no font, nothing but what is inline.
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        ]
    )


def tail() -> str:
    """The page's end: its one script (the tables' filters)."""
    return f"<script>{_SCRIPT}</script></body></html>"


def render(report: RunReport) -> str:
    """The page of one run (a sweep's page: :mod:`.sweep_page`)."""
    drawn = charts(report)
    info = report.info
    out = [
        head(f"drasnap report: {report.name}"),
        f"<h1>Run {_e(report.name)}: {_e(info.scenario)}</h1>",
        f'<p class="note">Database {_e(report.db)}, read {_e(_when(report.generated))} '
        "by drasnap report.</p>",
    ]
    if report.in_progress:
        out.append(f'<p class="banner" role="status">{_e(report.in_progress)}</p>')
    out.append('<section aria-labelledby="summary-title"><h2 id="summary-title">Summary</h2>')
    out.append('<dl class="summary">')
    out += [f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in report.summary]
    out.append("</dl>")
    out.append(
        f'<p class="source">The same in a terminal: <code>drasnap runs {_e(report.db)} '
        "--json</code></p>"
    )
    if report.warnings:
        out.append("<h3>Warnings</h3><ul>")
        out += [f"<li>{_e(w)}</li>" for w in report.warnings]
        out.append("</ul>")
    if report.aggregated:
        out.append(
            '<h3>Aggregated</h3><p class="note">This run is too large to read node by '
            "node; the page aggregates:</p><ul>"
        )
        out += [f"<li>{_e(a)}</li>" for a in report.aggregated]
        out.append("</ul>")
    out.append("</section>")
    tables = report.tables
    if report.timeline is not None:
        out.append(_timeline_section(report, drawn))
    if "groups" in tables:
        out.append(f"<section>{html_table(tables['groups'])}")
        out.append(_figure(drawn.get("groups"), "Nodes each node group would need."))
        out.append("</section>")
    out.append(f"<section>{html_table(tables['pending'])}</section>")
    if "nodes" in tables:
        out.append(f"<section>{html_table(tables['nodes'])}")
        out.append(
            _figure(
                drawn.get("nodes"),
                "Utilization as the cluster-autoscaler computes it: a node with local "
                "ResourceSlices by its most used DRA pool (shared counters for partitionable "
                "devices), others by max(cpu, memory) requests over allocatable.",
            )
        )
        out.append("</section>")
    out.append('<section><h2 id="shape-title">The run over time</h2>')
    out.append(
        _figure(
            drawn.get("shape"),
            "Fork depth along the journal; commits and reverts of the top-level forks, per step.",
        )
    )
    out.append(html_table(tables["layers"]) + "</section>")
    out.append('<section><h2 id="devices-title">Device allocation</h2>')
    if "devices" in drawn:
        out.append(
            _figure(
                drawn["devices"],
                "Devices per node (rows; the nodes of the last checkpoint) in slice order: "
                "free, allocated, or shared by several claims.",
            )
        )
    else:
        out.append('<p class="note">No node of this run has local ResourceSlices.</p>')
    if "claim" in tables:
        out.append(html_table(tables["claim"]))
    out.append("</section>")
    out.append(tail())
    return "\n".join(out)


def _timeline_section(report: RunReport, drawn: dict[str, str]) -> str:
    """Nodes and pending pods over simulated time, node-hours and cost, the waits."""
    tables = report.tables
    section = report.timeline
    assert section is not None
    binned = f" Each point is the most of {section.binned} instants." if section.binned > 1 else ""
    out = [
        '<section><h2 id="timeline-title">Nodes and pending pods over time</h2>',
        _figure(
            drawn.get("timeline"),
            "Each node group's nodes: ready (solid), provisioning (dashed: scaled up, not "
            "registered yet), deleting (dotted: tainted, pods evicted); below, the pods pending "
            f"after each instant.{binned}",
        ),
        html_table(tables["timeline-groups"]),
        html_table(tables["loops"]),
        "</section>",
        f"<section>{html_table(tables['waits'])}",
        _figure(drawn.get("waits"), "Bound pods by their wait, in 20 equal bins."),
        "</section>",
    ]
    return "".join(out)


def _when(ts: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def write_report(report: RunReport, path: str | os.PathLike[str]) -> int:
    """Write the page of ``report`` to ``path`` whole or not at all; returns its size in
    bytes."""
    return write_page(render(report), path)


def write_page(page: str, path: str | os.PathLike[str]) -> int:
    """Write ``page`` to ``path`` whole or not at all; returns its size in bytes."""
    text = page.encode()
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=".report-", suffix=".html")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open() would make it, not mkstemp's 0600
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(text)
