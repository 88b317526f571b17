"""The options and arguments several commands share, declared once.

- the database: an optional ``DB`` argument or ``--db`` (the same on every command; both at
  once must agree), ``./drasnap-sim.db`` when neither is given;
- ``--name``: the named store (a run) inside it; when a read command is given none, the
  database's newest run is read (:func:`snapshot.simulation.runs.choose_store` says which, on
  stderr);
- ``--json``: one JSON document on stdout instead of a table;
- ``-o/--output DIR`` and ``--redact``: the new folder a command writes kubectl List files to,
  names replaced by pseudonyms whose table is written beside it (capture, export), and
  ``--page-size`` for the commands that list a live cluster (capture, record).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from drasnap.tools.errors import CommandError

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_DB = "drasnap-sim.db"


def resolve_db(argument: str | None, option: str | None) -> str | None:
    """One database from the ``DB`` argument and ``--db``; None when neither was given."""
    if argument is not None and option is not None and argument != option:
        raise click.UsageError(f"two databases given: {argument} (DB) and {option} (--db)")
    return argument if argument is not None else option


def database(command: F) -> F:
    """Add ``[DB]`` and ``--db DB`` to a command, which receives ``db`` (None: not given)."""

    @functools.wraps(command)
    def wrapper(*args: Any, db: str | None, db_option: str | None, **kwargs: Any) -> Any:
        return command(*args, db=resolve_db(db, db_option), **kwargs)

    wrapper = click.option(
        "--db",
        "db_option",
        metavar="DB",
        help=f"The database: a file or a URL, as the DB argument [default: ./{DEFAULT_DB}].",
    )(wrapper)
    wrapper = click.argument("db", metavar="[DB]", required=False)(wrapper)
    return wrapper  # type: ignore[return-value]


def name_option_with(help: str, **kwargs: Any) -> Callable[[F], F]:
    """``--name NAME`` with the command's own help (and click's other settings)."""
    return click.option("--name", metavar="NAME", help=help, **kwargs)


#: What a new run's or recording's name may hold: it is printed in commands to paste into a
#: shell, in file names (report pages) and in tables, so no slash, space or newline.
_NEW_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def new_name(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """A click callback refusing a name a new run may not take, saying what it may hold."""
    if value is not None and not _NEW_NAME.fullmatch(value):
        raise click.BadParameter(
            f"{value!r}: a name holds letters, digits, '.', '_' and '-' (at most 200, starting "
            "with a letter or digit)"
        )
    return value


name_option = name_option_with("The run (named store) inside the database [default: the newest].")


def seed_option(help: str) -> Callable[[F], F]:
    """``--seed N``: the same seed, the same run."""
    return click.option("--seed", default=0, show_default=True, help=help)


at_option = click.option(
    "--at", type=int, metavar="SEQ", help="As of this sequence number (replayed)."
)
json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document instead of a table."
)

output_dir_option = click.option(
    "-o",
    "--output",
    required=True,
    metavar="DIR",
    help="The folder to write (must not exist, or be empty).",
)
redact_option = click.option(
    "--redact",
    is_flag=True,
    help="Replace names by stable pseudonyms; the "
    "translation table is written beside DIR as DIR.redaction.json.",
)


def output_dir(output: str, redact: bool) -> tuple[Path, Path]:
    """The folder ``-o`` names and the redaction table's path beside it (``DIR.redaction.json``);
    refused when the folder exists and is not empty, or, with ``--redact``, the table exists
    (neither is ever overwritten)."""
    target = Path(output)
    table_path = target.parent / f"{target.name}.redaction.json"
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise CommandError(f"{output} exists and is not an empty folder: give a new one with -o")
    if redact and table_path.exists():
        raise CommandError(f"{table_path} exists: move it away or give another -o")
    return target, table_path


def page_size_option(help: str) -> Callable[[F], F]:
    """``--page-size N``: objects per list request to a live cluster."""
    return click.option(
        "--page-size",
        type=click.IntRange(1, 10000),
        default=500,
        show_default=True,
        help=help,
    )


def cluster_options(verb: str) -> Callable[[F], F]:
    """``--kubeconfig``, ``--context`` and ``--namespace``: which cluster, and which part."""

    def decorate(command: F) -> F:
        for option in reversed(
            (
                click.option(
                    "--kubeconfig",
                    metavar="FILE",
                    help="The kubeconfig [default: $KUBECONFIG, ~/.kube/config, or in a pod "
                    "its service account].",
                ),
                click.option(
                    "--context", metavar="NAME", help="The kubeconfig's context [default: current]."
                ),
                click.option(
                    "--namespace",
                    "-n",
                    "namespaces",
                    multiple=True,
                    metavar="NS",
                    help=f"{verb} namespaced kinds in NS only (repeat for more) [default: all].",
                ),
            )
        ):
            command = option(command)
        return command

    return decorate


def store_to_read(db: str | None, name: str | None) -> tuple[str, str]:
    """The database and run a read command reads: as given, else ``./drasnap-sim.db`` and its
    newest run (said on stderr when the database holds several)."""
    from drasnap.snapshot.simulation import (
        choose_store,  # (runs reads the scenarios' records: import late)
    )

    db = db if db is not None else DEFAULT_DB
    name, note = choose_store(db, name)
    if note:
        click.echo(note, err=True)
    return db, name
