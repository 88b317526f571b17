"""``drasnap query``: one read-only SQL statement, printed as a table, JSON or CSV.

Also the pieces the journal commands (replay, inspect, diff, history) share: the ``DB``
argument, ``--name``, ``--json``, and table and JSON printing.
"""

from __future__ import annotations

import csv
import datetime as dt
import json as jsonlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from store import query as run_query

F = TypeVar("F", bound=Callable[..., Any])

db_argument = click.argument("db", metavar="DB")
name_option = click.option(
    "--name", default="default", show_default=True, help="The named store inside DB."
)
json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document instead of a table."
)


def echo_json(data: Any) -> None:
    click.echo(jsonlib.dumps(data, indent=2, default=_jsonable, ensure_ascii=False))


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def iso(ts: float | None) -> str:
    """Seconds since the epoch as UTC ISO 8601 with milliseconds ('' for None)."""
    if ts is None:
        return ""
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="milliseconds")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns padded to their widest cell, a rule under the header."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join(lines)


@click.command()
@db_argument
@click.argument("sql")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of row objects.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV with a header row.")
@click.option("--limit", type=click.IntRange(min=1), help="Fetch at most this many rows.")
def query(db: str, sql: str, as_json: bool, as_csv: bool, limit: int | None) -> None:
    """Run one read-only SQL statement on DB (a file or a URL) and print its rows.

    The database is opened read-only: INSERT, UPDATE, DELETE, DROP, ATTACH and other writes
    are refused. The views current_objects, layer_history and allocation_events are described
    in docs/sql.md.

    Example:

        drasnap query sim.db "SELECT fate, count(*) FROM allocation_events GROUP BY fate"
    """
    if as_json and as_csv:
        raise click.UsageError("give --json or --csv, not both")
    result = run_query(db, sql, max_rows=limit)
    if as_json:
        echo_json([dict(zip(result.columns, row, strict=True)) for row in result.rows])
    elif as_csv:
        writer = csv.writer(_ClickWriter(), lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows([_cell(v) for v in row] for row in result.rows)
    else:
        click.echo(render_table(result.columns, result.rows))
        click.echo(f"({len(result.rows)} row{'s' if len(result.rows) != 1 else ''})", err=True)


class _ClickWriter:
    """A file-like object for csv.writer that prints through click (CliRunner captures it)."""

    def write(self, text: str) -> int:
        click.echo(text, nl=False)
        return len(text)
