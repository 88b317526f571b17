"""``drasnap diff``: the objects added, removed and changed between two points of a journal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from drasnap.tools.options import database, json_option, name_option, store_to_read
from drasnap.tools.output import echo_json

if TYPE_CHECKING:
    from drasnap.store import FieldChange, StateDiff


def _field_json(f: FieldChange) -> dict[str, Any]:
    from drasnap.store import MISSING

    out: dict[str, Any] = {"path": f.path, "op": f.op}
    if f.old is not MISSING:
        out["old"] = f.old
    if f.new is not MISSING:
        out["new"] = f.new
    return out


def diff_json(result: StateDiff) -> dict[str, Any]:
    return {
        "store": result.store,
        "from": result.start,
        "to": result.stop,
        "added": [{"kind": c.kind, "key": c.key, "value": c.new} for c in result.of("added")],
        "removed": [{"kind": c.kind, "key": c.key, "value": c.old} for c in result.of("removed")],
        "changed": [
            {"kind": c.kind, "key": c.key, "fields": [_field_json(f) for f in c.fields]}
            for c in result.of("changed")
        ],
    }


@click.command(name="diff")
@database
@name_option
@click.option("--from", "start", type=int, metavar="SEQ", help="The state after this seq.")
@click.option("--to", "stop", type=int, metavar="SEQ", help="The state after this seq [end].")
@click.option(
    "--from-layer",
    "start_layer",
    metavar="LAYER",
    help="The state when this layer (instance number, or unique label) was forked.",
)
@click.option(
    "--to-layer",
    "stop_layer",
    metavar="LAYER",
    help="The state just before this layer was committed or reverted (now, if open).",
)
@click.option("--kind", "kinds", multiple=True, help="Only objects of this kind (repeatable).")
@json_option
def diff_cmd(
    db: str | None,
    name: str | None,
    start: int | None,
    stop: int | None,
    start_layer: str | None,
    stop_layer: str | None,
    kinds: tuple[str, ...],
    as_json: bool,
) -> None:
    """Compare a store's state at two points of its journal: objects added, removed and
    changed, with a field-level diff of each changed one.

    Example (what layer 42 changed, reverted or not):

        drasnap diff sim.db --from-layer 42 --to-layer 42
    """
    if (start is None) == (start_layer is None):
        raise click.UsageError("give the start point with --from SEQ or --from-layer LAYER")
    if stop is not None and stop_layer is not None:
        raise click.UsageError("give the end point with --to SEQ or --to-layer LAYER, not both")
    if start is not None and stop is not None and start > stop:
        raise click.BadParameter(
            f"--from {start} is after --to {stop}: give the earlier seq to --from",
            param_hint="'--from'",
        )
    from drasnap.store import diff

    db, name = store_to_read(db, name)
    result = diff(
        db,
        name=name,
        start=start,
        stop=stop,
        start_layer=start_layer,
        stop_layer=stop_layer,
        kinds=kinds or None,
    )
    if as_json:
        echo_json(diff_json(result))
        return
    click.echo(f"store {result.store!r}: seq {result.start} -> seq {result.stop}")
    if not result.changes:
        click.echo("no differences")
    for c in result.changes:
        mark = {"added": "+", "removed": "-", "changed": "~"}[c.change]
        click.echo(f"{mark} {c.kind} {c.key}")
        for f in c.fields:
            click.echo(f"    {f}")
    counts = {k: len(result.of(k)) for k in ("added", "removed", "changed")}
    click.echo(", ".join(f"{n} {k}" for k, n in counts.items()), err=True)
