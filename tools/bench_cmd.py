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
@click.option(
    "--postgres-url",
    metavar="URL",
    help="Also run the store rows on PostgreSQL (postgresql+psycopg://...), in a store of a "
    "unique name that is dropped afterwards.",
)
def bench(workloads: tuple[str, ...], quick: bool, as_json: bool, postgres_url: str | None) -> None:
    """Measure drasnap's operations and print medians side by side.

    Workloads: store (each store operation, MemoryStore vs SQLite Store, and with
    --postgres-url vs a PostgreSQL Store too). With no workload, all of them run.

    Examples:

        drasnap bench store

        drasnap bench store --postgres-url postgresql+psycopg://me@127.0.0.1:5432/test
    """
    chosen = workloads or WORKLOADS
    results = []
    info: dict[str, str] = {}
    if "store" in chosen:
        rows, info["database"] = store_bench.run(
            quick=quick,
            progress=lambda m: click.echo(f"... {m}", err=True),
            postgres_url=postgres_url,
        )
        for row in rows:
            result = {
                "workload": "store",
                "operation": row.operation,
                "memory_us": row.memory_us,
                "sqlite_us": row.sqlite_us,
                "ratio": row.ratio,
            }
            if postgres_url is not None:
                result["postgres_us"] = row.postgres_us
                result["postgres_ratio"] = row.postgres_ratio
            results.append(result)
        if not as_json:
            width = max(len(r.operation) for r in rows)
            head = f"{'operation':<{width}}  {'MemoryStore µs':>14}  {'Store µs':>10}  ratio"
            if postgres_url is not None:
                head = (
                    f"{'operation':<{width}}  {'MemoryStore µs':>14}  {'SQLite µs':>10}  "
                    f"{'ratio':>8}  {'PostgreSQL µs':>13}  {'ratio':>8}"
                )
            click.echo(head)
            for r in rows:
                line = f"{r.operation:<{width}}  {_fmt(r.memory_us):>14}  {_fmt(r.sqlite_us):>10}  "
                if postgres_url is None:
                    click.echo(line + _fmt(r.ratio))
                else:
                    click.echo(
                        line + f"{_fmt(r.ratio):>8}  {_fmt(r.postgres_us):>13}  "
                        f"{_fmt(r.postgres_ratio):>8}"
                    )
    if as_json:
        click.echo(jsonlib.dumps({"machine": machine(**info), "results": results}, indent=2))
    else:
        m = machine(**info)
        click.echo(
            f"\nmachine: {m['cpu']}, {m['cores']} cores, {m['system']}, Python {m['python']}, "
            f"{m.get('database', '')}"
        )
