"""``drasnap export``: a run's objects at a point of its journal, as a folder ``--from`` reads."""

from __future__ import annotations

import click
from drasnap.tools.options import (
    at_option,
    database,
    json_option,
    name_option,
    output_dir,
    output_dir_option,
    redact_option,
    store_to_read,
)
from drasnap.tools.output import echo_json
from drasnap.tools.output_paths import check_output, writing


@click.command(name="export")
@database
@name_option
@at_option
@output_dir_option
@redact_option
@json_option
def export_cmd(
    db: str | None, name: str | None, at: int | None, output: str, redact: bool, as_json: bool
) -> None:
    """Write a run's Kubernetes objects (as stored, or as of seq --at) into DIR as kubectl
    List files, one per kind, that `drasnap simulate ... --from DIR` reads.

    Example:

        drasnap export sim.db --name autoscale-1 --at 40 -o at-40 --redact
    """
    from drasnap.snapshot import Redactor
    from drasnap.snapshot.simulation import write_state

    target, table_path = output_dir(output, redact)
    check_output(target, "-o", folder=True)
    db, name = store_to_read(db, name)
    redactor = Redactor() if redact else None
    with writing(target):  # (write_state leaves no partial folder: it writes beside, then renames)
        seq, lists = write_state(db, name, at, target, redactor.redact if redactor else None)
    if redactor is not None:
        with writing(table_path):
            redactor.write_table(table_path)
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
