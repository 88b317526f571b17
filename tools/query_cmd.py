"""``drasnap query``: one read-only SQL statement, printed as a table, JSON or CSV."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import click
from drasnap.tools.errors import CommandError
from drasnap.tools.options import DEFAULT_DB, json_option, resolve_db
from drasnap.tools.query_output import RowPrinter

#: How database files are usually named (``drasnap query ref.db``, the SQL forgotten).
DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")
#: ``--timeout``'s default, in seconds: long enough for any question of a run, short enough
#: that a runaway statement does not hold a server's backend for long.
DEFAULT_TIMEOUT = 300.0


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
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Stop the query after this many seconds (0: no limit); the rows printed by then stay.",
)
@click.pass_context
def query_cmd(
    ctx: click.Context,
    args: tuple[str, ...],
    db_option: str | None,
    as_json: bool,
    as_csv: bool,
    limit: int | None,
    as_of: int | None,
    timeout: float,
) -> None:
    """Run one read-only SQL statement on DB (a file or a URL) and print its rows.

    The database is opened read-only: INSERT, UPDATE, DELETE, DROP, ATTACH, COPY and other
    writes are refused, and on PostgreSQL so are the functions that reach outside the tables
    (pg_read_file, pg_ls_dir, lo_import, lo_export, pg_terminate_backend, set_config, dblink,
    ...); the query runs in a READ ONLY transaction that is rolled back, as the role
    pg_read_all_data where the connecting role may take it; pg_authid, pg_shadow,
    pg_user_mapping(s) and pg_subscription, which hold secrets, are refused. The views
    current_objects, layer_history, object_versions and allocation_events are described in
    docs/sql.md.

    Rows are printed as the database produces them, a batch at a time (a table's widths are
    those of its first 1,000 rows; a wider value later widens its column from there on).
    Ctrl-C or SIGTERM stops the query at once (exit 130 or 143), and so does --timeout
    (exit 1); the rows printed by then stay, and --json leaves its array unclosed.

    Example:

        drasnap query sim.db "SELECT fate, count(*) FROM allocation_events GROUP BY fate"

        drasnap query sim.db --as-of 1200 "SELECT kind, count(*) FROM objects_as_of GROUP BY kind"
    """
    from drasnap.store import QueryStoppedError, QueryTimeoutError
    from drasnap.store import query_rows as run_query

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
    fmt = "json" if as_json else "csv" if as_csv else "table"
    printer = RowPrinter(fmt)
    signals: list[int] = []
    try:
        with (
            run_query(db, sql, max_rows=limit, as_of=as_of, timeout=timeout or None) as rows,
            _stop_on_signals(rows.stop, signals),
        ):
            printer.print_all(rows, lambda: rows.columns)
    except (QueryStoppedError, _Stopped):
        if not signals:
            raise
        name = signal.Signals(signals[0]).name
        click.echo(f"{name}: the query was stopped after {_rows(printer.printed)}", err=True)
        ctx.exit(128 + signals[0])
    except QueryTimeoutError as exc:
        raise CommandError(
            f"the query ran longer than --timeout {exc.seconds:g} s and was stopped after "
            f"{_rows(printer.printed)}; give a larger --timeout, or --timeout 0 for no limit"
        ) from exc
    except BrokenPipeError:  # `drasnap query ... | head`: the reader is gone, so is the query
        ctx.exit(128 + signal.SIGPIPE)


def _rows(n: int) -> str:
    return f"{n} row{'s' if n != 1 else ''} printed"


class _Stopped(BaseException):
    """A signal stopped the query (raised where the signal's handler ran)."""


@contextlib.contextmanager
def _stop_on_signals(stop: Callable[[], None], received: list[int]) -> Iterator[None]:
    """SIGINT and SIGTERM stop the query: ``stop`` tells the database (SQLite ``interrupt()``,
    a PostgreSQL cancel request), the signal is appended to ``received``, and :class:`_Stopped`
    ends what Python was doing (waiting for a row, or writing to a pipe nobody reads, which
    would otherwise resume after the handler). Where the handler runs inside SQLite's progress
    handler, sqlite3 drops the exception and SQLite ends the statement ("interrupted"), which
    ``store`` raises as QueryStoppedError. A second signal exits at once.
    """

    def handler(number: int, _frame: FrameType | None) -> None:
        if received:
            raise SystemExit(128 + number)
        received.append(number)
        stop()
        raise _Stopped(number)

    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.getsignal(number) for number in signals}
    for number in signals:
        signal.signal(number, handler)
    try:
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)


def _names_a_database(word: str) -> bool:
    """A lone argument that is a database, not SQL (which has a space between its words): an
    existing file, a URL, or a name ending as database files do."""
    if any(c.isspace() for c in word):
        return False
    return "://" in word or Path(word).is_file() or word.endswith(DB_SUFFIXES)
