"""``drasnap compare``: one row per run (a sweep's points, or runs named), the settings that
differ, then the scenario's columns: what each autoscale run added, left pending and removed,
device utilization and cost; each timeline's cost, node-hours, pod waits and what never ran
(``snapshot.simulation.sweep.compare_rows``, ``snapshot.simulation.SCENARIO_COLUMNS``)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import click
from drasnap.snapshot.simulation import SCENARIO_COLUMNS, compare_cell, compare_values
from drasnap.tools.options import DEFAULT_DB, database, json_option
from drasnap.tools.output import count_line, echo_json, render_table

_REASON_WIDTH = 80


@click.command(name="compare")
@database
@click.option("--sweep", metavar="S", help="The points of sweep S [default: every sweep's].")
@click.option(
    "--name", "names", metavar="RUN", multiple=True, help="A run to compare (repeat: one each)."
)
@click.option(
    "--sort",
    metavar="COL",
    default="name",
    show_default=True,
    help="The column to sort by, or a setting that differs: "
    + "; ".join(f"{s}: {', '.join(c)}" for s, c in SCENARIO_COLUMNS.items())
    + ".",
)
@json_option
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV instead of a table.")
def compare_cmd(
    db: str | None,
    sweep: str | None,
    names: tuple[str, ...],
    sort: str,
    as_json: bool,
    as_csv: bool,
) -> None:
    """Compare runs of DB, one row per run, all autoscale or all timeline runs: the settings
    that differ between them, then, for autoscale, nodes added per node group, pods left
    pending (with the most common reason), nodes removed, device utilization after (the mean
    over nodes with devices) and the cost per hour of the node groups' nodes after the run
    (when the sweep file gives node groups a cost:); for a timeline, cluster_cost, node-hours
    (in all and per group), pod wait p50 and p99 in seconds, pods never scheduled, pods lost,
    scale-ups and scale-downs (as `simulate timeline --json` gives them).

    An autoscale sweep's rows are in the SQL view sweep_results (docs/sql.md).

    Example:

        drasnap compare sweep.db --sweep gpu-shapes --sort cost_per_hour
    """
    if sweep is not None and names:
        raise click.UsageError("give --sweep or --name, not both")
    if as_json and as_csv:
        raise click.UsageError("give --json or --csv, not both")
    from drasnap.snapshot.simulation import compare_rows, differing

    rows = compare_rows(db or DEFAULT_DB, sweep=sweep, names=list(names) or None)
    settings = differing(rows) if len(rows) > 1 else []
    scenario = rows[0]["scenario"]  # (one for all: compare_rows refuses a mix)
    columns = [*settings, *SCENARIO_COLUMNS[scenario]]
    if sort not in columns:
        raise click.BadParameter(f"choose from {', '.join(columns)}", param_hint="--sort")
    flat = [_flat(scenario, row, settings) for row in rows]
    order = {row["name"]: (row.get("sweep") or "", row.get("index") or 0) for row in rows}
    flat.sort(key=lambda r: _key(r[sort]) if sort != "name" else (0, order[r["name"]]))
    if as_json:
        echo_json({"settings": settings, "rows": flat})
        return
    if as_csv:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for r in flat:
            writer.writerow(
                [
                    json.dumps(r[c], sort_keys=True) if isinstance(r[c], dict) else r[c]
                    for c in columns
                ]
            )
        click.echo(out.getvalue(), nl=False)
        return
    table = [[compare_cell(c, r[c], _REASON_WIDTH) for c in columns] for r in flat]
    click.echo(render_table(columns, table))
    click.echo(count_line(len(rows), "run"), err=True)


def _flat(scenario: str, row: dict[str, Any], settings: list[str]) -> dict[str, Any]:
    out = {s: row["variants"].get(s, row["settings"].get(s)) for s in settings}
    out.update(compare_values(scenario, row))
    return out


def _key(value: Any) -> tuple[int, Any]:
    if value is None:
        return (2, "")
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, dict):
        return (1, json.dumps(value, sort_keys=True))
    return (1, str(value))
