"""``drasnap runs`` and ``drasnap drop``: list the runs of a database, remove one."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import click
from drasnap.tools.errors import CommandError
from drasnap.tools.options import DEFAULT_DB, database, json_option, name_option_with
from drasnap.tools.output import count_line, echo_json, iso, render_table

if TYPE_CHECKING:
    from drasnap.snapshot.simulation import RunInfo


def _run_json(run: RunInfo) -> dict[str, Any]:
    data = asdict(run)
    data["started_at"] = iso(run.started)
    data["checkpointed_at"] = iso(run.checkpointed)
    return data


@click.command(name="runs")
@database
@json_option
def runs_cmd(db: str | None, as_json: bool) -> None:
    """List the runs (named stores) of DB: name, scenario, settings that differ from the
    defaults, when it started, its status (finished, unfinished, failed, empty, other), its
    result so far and its state digest.

    Example:

        drasnap runs sim.db
    """
    from drasnap.snapshot.simulation import list_runs

    db = db or DEFAULT_DB
    runs = list_runs(db)
    if as_json:
        echo_json({"database": db, "runs": [_run_json(r) for r in runs]})
        return
    rows = [
        (
            r.name,
            r.scenario or "",
            r.settings_text(),
            iso(r.started),
            r.status if r.steps is None else f"{r.status} ({r.step}/{r.steps})",
            r.result_text(),
            r.state_digest,
        )
        for r in runs
    ]
    headers = ("name", "scenario", "settings", "started", "status", "result", "state digest")
    click.echo(render_table(headers, rows))
    click.echo(count_line(len(runs), "run"), err=True)


@click.command(name="drop")
@database
@name_option_with("The run to remove.", required=True)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def drop_cmd(db: str | None, name: str, yes: bool) -> None:
    """Remove the run NAME from DB, with everything it holds (its objects, layers and
    journal), in one transaction. Asks first, unless --yes.

    Example:

        drasnap drop sim.db --name scale-up-2 --yes
    """
    from drasnap.snapshot.simulation import find_run
    from drasnap.store import Store, hide_passwords

    db = db or DEFAULT_DB
    shown = hide_passwords(db)
    run = find_run(db, name)
    if run is None:
        raise CommandError(f"no run named {name!r} in {db} (drasnap runs {db} lists them)")
    if not yes:
        what = f"{run.status} {run.scenario} run" if run.scenario else "store"
        if not click.confirm(f"Remove the {what} {name!r} from {shown}?", err=True):
            raise CommandError(f"run {name!r} kept (nothing was removed)")
    Store.drop(db, name=name)
    click.echo(f"Dropped run {name!r} from {shown}", err=True)
