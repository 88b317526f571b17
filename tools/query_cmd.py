"""``drasnap query``: one read-only SQL statement, printed as a table, JSON or CSV."""

from __future__ import annotations

import csv
from pathlib import Path

import click
from drasnap.tools.options import DEFAULT_DB, json_option, resolve_db
from drasnap.tools.output import cell, count_line, echo_json, render_table

#: How database files are usually named (``drasnap query ref.db``, the SQL forgotten).
DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")


@click.command(name="query")
@click.argument("args", nargs=-1, metavar="[DB] SQL")
@click.option("--db", "db_option", metavar="DB", help="The database, as the DB argument.")
@json_option
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV with a header row.")
@click.option("--limit", type=click.IntRange(min=1), help="Fetch at most this many rows.")
@click.option(
    "--as-of",
    "as_of",
    type=click.IntRange(min=0),
    metavar="SEQ",
    help="Let a SELECT or WITH statement read objects_as_of: each store's live objects as of "
    "journal seq SEQ, as drasnap inspect --at SEQ shows them.",
)
def query_cmd(
    args: tuple[str, ...],
    db_option: str | None,
    as_json: bool,
    as_csv: bool,
    limit: int | None,
    as_of: int | None,
) -> None:
    """Run one read-only SQL statement on DB (a file or a URL) and print its rows.

    The database is opened read-only: INSERT, UPDATE, DELETE, DROP, ATTACH, COPY and other
    writes are refused, and on PostgreSQL so are the functions that reach outside the tables
    (pg_read_file, pg_ls_dir, lo_import, lo_export, pg_terminate_backend, set_config, dblink,
    ...); the query runs in a READ ONLY transaction that is rolled back, as the role
    pg_read_all_data where the connecting role may take it. The views current_objects,
    layer_history, object_versions and allocation_events are described in docs/sql.md.

    Example:

        drasnap query sim.db "SELECT fate, count(*) FROM allocation_events GROUP BY fate"

        drasnap query sim.db --as-of 1200 "SELECT kind, count(*) FROM objects_as_of GROUP BY kind"
    """
    from drasnap.store import query as run_query

    if as_json and as_csv:
        raise click.UsageError("give --json or --csv, not both")
    if not args or len(args) > 2:
        raise click.UsageError("give the SQL statement (and the database before it, or --db)")
    if len(args) == 1 and _names_a_database(args[0]):
        raise click.UsageError(
            f"the SQL statement is missing: give it after the database, as in "
            f'drasnap query {args[0]} "SELECT count(*) FROM journal"'
        )
    db = resolve_db(args[0] if len(args) == 2 else None, db_option) or DEFAULT_DB
    sql = args[-1]
    result = run_query(db, sql, max_rows=limit, as_of=as_of)
    if as_json:
        echo_json([dict(zip(result.columns, row, strict=True)) for row in result.rows])
    elif as_csv:
        writer = csv.writer(_ClickWriter(), lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows([cell(v) for v in row] for row in result.rows)
    else:
        click.echo(render_table(result.columns, result.rows))
        click.echo(count_line(len(result.rows), "row"), err=True)


def _names_a_database(word: str) -> bool:
    """A lone argument that is a database, not SQL (which has a space between its words): an
    existing file, a URL, or a name ending as database files do."""
    if any(c.isspace() for c in word):
        return False
    return "://" in word or Path(word).is_file() or word.endswith(DB_SUFFIXES)


class _ClickWriter:
    """A file-like object for csv.writer that prints through click (CliRunner captures it)."""

    def write(self, text: str) -> int:
        click.echo(text, nl=False)
        return len(text)
