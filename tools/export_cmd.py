"""``drasnap export``: a run's objects at a point of its journal, as a folder ``--from`` reads."""

from __future__ import annotations

from pathlib import Path

import click
from drasnap.tools.errors import CommandError
from drasnap.tools.options import at_option, database, json_option, name_option, store_to_read
from drasnap.tools.output import echo_json


@click.command(name="export")
@database
@name_option
@at_option
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="DIR",
    help="The folder to write (must not exist, or be empty).",
)
@click.option(
    "--redact",
    is_flag=True,
    help="Replace names by stable pseudonyms; the "
    "translation table is written beside DIR as DIR.redaction.json.",
)
@json_option
def export_cmd(
    db: str | None, name: str | None, at: int | None, output: str, redact: bool, as_json: bool
) -> None:
    """Write a run's Kubernetes objects (as stored, or as of seq --at) into DIR as kubectl
    List files, one per kind, that `drasnap simulate ... --from DIR` reads.

    Example:

        drasnap export sim.db --name autoscale-1 --at 40 -o at-40 --redact
    """
    import orjson
    from drasnap.snapshot import Redactor
    from drasnap.snapshot.simulation import write_state

    target = Path(output)
    table_path = target.parent / f"{target.name}.redaction.json"
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise CommandError(f"{output} exists and is not an empty folder: give a new one with -o")
    if redact and table_path.exists():
        raise CommandError(f"{table_path} exists: move it away or give another -o")
    db, name = store_to_read(db, name)
    redactor = Redactor() if redact else None
    seq, lists = write_state(db, name, at, target, redactor.redact if redactor else None)
    if redactor is not None:
        table_path.write_bytes(orjson.dumps(redactor.table(), option=orjson.OPT_INDENT_2))
        for warning in redactor.warnings:
            click.echo(f"warning: {warning}", err=True)
    counts = {kind: len(objects) for kind, objects in lists.items()}
    if as_json:
        echo_json(
            {
                "output": str(target),
                "name": name,
                "seq": seq,
                "kinds": counts,
                "redaction_table": str(table_path) if redactor else None,
            }
        )
        return
    for kind, count in counts.items():
        click.echo(f"{kind:<22} {count:>7} objects")
    click.echo(f"wrote {target} ({name} at seq {seq})")
