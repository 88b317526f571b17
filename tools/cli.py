"""The ``drasnap`` command group: shared error handling and the subcommands.

stdout carries data (tables for people, ``--json`` for programs); progress and logs go to
stderr. Exit 0 on success, 1 for our errors (printed as ``Error: ...``, no traceback unless
``--traceback``), 2 for usage errors.
"""

from __future__ import annotations

from typing import Any

import click

from snapshot import SnapshotError
from store import StoreError
from tools.bench_cmd import bench
from tools.demo_cmd import demo
from tools.diff_cmd import diff_cmd
from tools.history_cmd import history_cmd
from tools.inspect_cmd import inspect_cmd
from tools.query_cmd import query
from tools.replay_cmd import replay_cmd
from tools.scenarios.base import ScenarioError
from tools.simulate_cmd import simulate


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (StoreError, SnapshotError, ScenarioError) as exc:
            if ctx.meta.get("drasnap.traceback"):
                raise
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--traceback", is_flag=True, help="Show the full traceback on errors.")
@click.version_option(package_name="drasnap")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """drasnap: a durable, versioned store for Kubernetes DRA state, and the scheduling
    simulations built on it."""
    ctx.meta["drasnap.traceback"] = traceback


cli.add_command(demo)
cli.add_command(bench)
cli.add_command(simulate)
cli.add_command(replay_cmd)
cli.add_command(inspect_cmd)
cli.add_command(diff_cmd)
cli.add_command(history_cmd)
cli.add_command(query)


def main() -> None:
    cli(prog_name="drasnap")


if __name__ == "__main__":  # pragma: no cover
    main()
