"""``drasnap bench``: measured medians, side by side, printed as a table or JSON."""

from __future__ import annotations

import json as jsonlib

import click

from tools.bench import store_bench
from tools.bench.timing import machine

WORKLOADS = ("store",)


def _fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


@click.command()
@click.argument("workloads", nargs=-1, type=click.Choice(WORKLOADS))
@click.option("--quick", is_flag=True, help="Smaller sizes, for a fast look.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def bench(workloads: tuple[str, ...], quick: bool, as_json: bool) -> None:
    """Measure drasnap's operations and print medians side by side.

    Workloads: store (each store operation, MemoryStore vs SQLite Store). With no workload,
    all of them run.

    Example:

        drasnap bench store
    """
    chosen = workloads or WORKLOADS
    results = []
    info: dict[str, str] = {}
    if "store" in chosen:
        rows, info["database"] = store_bench.run(
            quick=quick, progress=lambda m: click.echo(f"... {m}", err=True)
        )
        for row in rows:
            results.append(
                {
                    "workload": "store",
                    "operation": row.operation,
                    "memory_us": row.memory_us,
                    "sqlite_us": row.sqlite_us,
                    "ratio": row.ratio,
                }
            )
        if not as_json:
            width = max(len(r.operation) for r in rows)
            click.echo(f"{'operation':<{width}}  {'MemoryStore µs':>14}  {'Store µs':>10}  ratio")
            for r in rows:
                click.echo(
                    f"{r.operation:<{width}}  {_fmt(r.memory_us):>14}  {_fmt(r.sqlite_us):>10}  "
                    f"{_fmt(r.ratio)}"
                )
    if as_json:
        click.echo(jsonlib.dumps({"machine": machine(**info), "results": results}, indent=2))
    else:
        m = machine(**info)
        click.echo(
            f"\nmachine: {m['cpu']}, {m['cores']} cores, {m['system']}, Python {m['python']}, "
            f"{m.get('database', '')}"
        )
