"""The ``drasnap`` command group: shared error handling and the subcommands.

stdout carries data (tables for people, ``--json`` for programs); progress and logs go to
stderr. Exit 0 on success, 1 for our errors (printed as ``Error: ...``, no traceback unless
``--traceback``), 2 for usage errors; a run stopped by a signal exits 128 + its number.
"""

from __future__ import annotations

import importlib
import socket
from typing import Any

import click
from drasnap.snapshot import SnapshotError
from drasnap.store import StoreError, StoreLockedError, hide_passwords
from drasnap.tools.errors import CommandError, one_line

#: Each command: the module that holds it and its line in ``drasnap --help``. A command's module is
#: imported only when the command runs or shows its own help, so ``drasnap --help`` and a typo
#: answer before any heavy module loads.
COMMANDS: dict[str, tuple[str, str]] = {
    "capture": ("capture_cmd", "Capture a live cluster's DRA objects as --from files."),
    "record": ("record_cmd", "Record a live cluster's DRA history into a store (watch)."),
    "simulate": ("simulate_cmd", "Simulate a scale-up, scale-down or autoscale run, crash-safe."),
    "sweep": ("sweep_cmd", "Run a what-if sweep: many autoscale runs, local workers or a Job."),
    "compare": ("compare_cmd", "Compare autoscale runs (a sweep's points) in one table."),
    "runs": ("runs_cmd", "List the runs of a database, their status and results."),
    "drop": ("runs_cmd", "Remove a run and everything it holds."),
    "inspect": ("inspect_cmd", "Show what a run holds: layers, counts, claims (--at SEQ)."),
    "history": ("history_cmd", "List the allocations and releases of claims, with fates."),
    "explain": ("explain_cmd", "Say why a run left a pod unplaced."),
    "replay": ("replay_cmd", "Replay a run's journal into a fresh store (--verify)."),
    "diff": ("diff_cmd", "Compare a run's state at two points of its journal."),
    "export": ("export_cmd", "Write a run's objects at a seq as --from files (--redact)."),
    "query": ("query_cmd", "Run one read-only SQL statement and print its rows."),
    "report": ("report_cmd", "Write one self-contained HTML page of a run."),
    "bench": ("bench_cmd", "Measure the store backends on the simulations' workloads."),
    "demo": ("demo_cmd", "A tour of the versioned store on a SQLite file."),
}


def locked_message(exc: StoreLockedError) -> str:
    """The lock error as a person at the command line needs it: who, where, what to do."""
    if exc.pid is None:
        holder = "another process"
    elif exc.host and exc.host != socket.gethostname():
        holder = f"process {exc.pid} on host {exc.host}"
    else:
        holder = f"process {exc.pid} on this host"
    where = f" in {exc.database}" if exc.database else ""
    stop = f" (kill {exc.pid} stops it)" if exc.pid is not None and holder.endswith("host") else ""
    return (
        f"run {exc.name!r}{where} is being written by {holder}: wait for it to end{stop}, then "
        "run this command again; drasnap inspect, history, query and runs read it meanwhile"
    )


class _Group(click.Group):
    """The commands of :data:`COMMANDS`, each imported when it is used; our errors become one
    ``Error: ...`` line and exit status 1."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(f"drasnap.tools.{COMMANDS[cmd_name][0]}")
        command: click.Command = getattr(module, f"{cmd_name}_cmd")
        command.short_help = COMMANDS[cmd_name][1]
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The listing from the table, without importing a command.
        with formatter.section("Commands"):
            formatter.write_dl([(name, line) for name, (_, line) in COMMANDS.items()])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # (click prints it: a database URL without its password)
            text = exc.format_message()
            if hide_passwords(text) == text:
                raise
            raise click.UsageError(hide_passwords(text), exc.ctx) from None
        except (StoreError, SnapshotError, CommandError) as exc:
            if ctx.meta.get("drasnap.traceback"):
                raise
            message = locked_message(exc) if isinstance(exc, StoreLockedError) else str(exc)
            # One line, whatever a library put in its message (a CEL error's caret diagram),
            # and no password, wherever a database URL was put in it.
            click.echo(f"Error: {one_line(hide_passwords(message))}", err=True)
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--traceback", is_flag=True, help="Show the full traceback on errors.")
@click.version_option(package_name="drasnap")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """drasnap: a durable, versioned store for Kubernetes DRA state, and the scheduling
    simulations built on it."""
    ctx.meta["drasnap.traceback"] = traceback


def main() -> None:
    cli(prog_name="drasnap")


if __name__ == "__main__":  # pragma: no cover
    main()
