"""The ``drasnap`` command group: shared error handling and the subcommands.

stdout carries data (tables for people, ``--json`` for programs); progress and logs go to
stderr. Exit 0 on success, 1 for our errors (printed as ``Error: ...``, no traceback unless
``--traceback``), 2 for usage errors; a run stopped by a signal exits 128 + its number.
"""

from __future__ import annotations

import socket
from typing import Any

import click
from drasnap.snapshot import SnapshotError
from drasnap.store import StoreError, StoreLockedError
from drasnap.tools.bench_cmd import bench
from drasnap.tools.demo_cmd import demo
from drasnap.tools.diff_cmd import diff_cmd
from drasnap.tools.errors import CommandError
from drasnap.tools.explain_cmd import explain_cmd
from drasnap.tools.history_cmd import history_cmd
from drasnap.tools.inspect_cmd import inspect_cmd
from drasnap.tools.query_cmd import query
from drasnap.tools.replay_cmd import replay_cmd
from drasnap.tools.runs_cmd import drop_cmd, runs_cmd
from drasnap.tools.simulate_cmd import simulate


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
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (StoreError, SnapshotError, CommandError) as exc:
            if ctx.meta.get("drasnap.traceback"):
                raise
            message = locked_message(exc) if isinstance(exc, StoreLockedError) else str(exc)
            # One line, whatever a library put in its message (a CEL error's caret diagram).
            click.echo(f"Error: {' '.join(message.split())}", err=True)
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--traceback", is_flag=True, help="Show the full traceback on errors.")
@click.version_option(package_name="drasnap")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """drasnap: a durable, versioned store for Kubernetes DRA state, and the scheduling
    simulations built on it."""
    ctx.meta["drasnap.traceback"] = traceback


for _command in (
    simulate,
    runs_cmd,
    drop_cmd,
    inspect_cmd,
    history_cmd,
    explain_cmd,
    replay_cmd,
    diff_cmd,
    query,
    bench,
    demo,
):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="drasnap")


if __name__ == "__main__":  # pragma: no cover
    main()
