"""``drasnap replay``: re-apply a store's journal to a fresh store, and check it."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import click
from drasnap.tools.options import database, json_option, name_option, store_to_read
from drasnap.tools.output import command_line, echo_json
from drasnap.tools.output_paths import check_output, writing
from drasnap.tools.progress import milestone

if TYPE_CHECKING:
    from drasnap.store import ReplayReport


def report_json(report: ReplayReport) -> dict[str, object]:
    d = report.divergence
    return {
        "store": report.store,
        "source": report.source,
        "into": report.into,
        "records": report.records,
        "last_seq": report.last_seq,
        "depth": report.depth,
        "state_digest": report.state_digest,
        "recorded_digest": report.recorded_digest,
        "matches": report.matches,
        "checkpoints_verified": report.checkpoints_verified,
        "divergence": None
        if d is None
        else {
            "seq": d.seq,
            "kind": d.kind,
            "key": d.key,
            "last_write_seq": d.last_write_seq,
            "recorded_digest": d.recorded,
            "replayed_digest": d.replayed,
            "candidates": [{"kind": k, "key": y} for k, y in d.candidates],
            "journal_from": d.journal_from,
        },
        "stored_differs": [{"kind": k, "key": y} for k, y in report.stored_differs],
    }


@click.command(name="replay")
@database
@name_option
@click.option("--to", "to", type=int, metavar="SEQ", help="Stop after this sequence number.")
@click.option(
    "--into",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Replay into this new database file instead of memory.",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Compare the state digest and the journal chain at every recorded checkpoint.",
)
@json_option
@click.pass_context
def replay_cmd(
    ctx: click.Context,
    db: str | None,
    name: str | None,
    to: int | None,
    into: Path | None,
    verify: bool,
    as_json: bool,
) -> None:
    """Re-apply the journal of a store in DB to a fresh store, in order.

    Replayed to the end, the state digest must equal the one the store recorded; with
    --verify it is compared at every checkpoint, and the first divergence is reported (seq,
    kind, key), as is the first checkpoint whose journal chain shows that a row before it was
    changed (a write of a reverted layer included); replayed to the end, the state the store
    holds is compared with the replayed one too, naming each kind and key that differs. Exits 1
    when any of them differs.

    Example:

        drasnap replay sim.db --name scale-up-1 --verify
    """
    from drasnap.store import replay

    if into is not None:
        check_output(into, "--into")
    db, name = store_to_read(db, name)
    # (A replay that fails leaves no empty or half-made database where --into named a new one.)
    with writing(into, database=True) if into is not None else contextlib.nullcontext():
        report = replay(
            db,
            name=name,
            to=to,
            into=into,
            verify=verify,
            progress=lambda n: milestone(f"{n:,} records"),
        )
    if as_json:
        echo_json(report_json(report))
    else:
        where = report.into or "memory"
        click.echo(
            f"replayed {report.records:,} records of store {report.store!r} "
            f"(seq 1..{report.last_seq}) into {where}"
        )
        click.echo(f"state digest {report.state_digest}, {report.depth} open layer(s)")
        if report.recorded_digest is not None:
            same = report.divergence is None and report.recorded_digest == report.state_digest
            click.echo(
                f"recorded digest {report.recorded_digest}: {'identical' if same else 'DIFFERENT'}"
            )
        if verify:
            click.echo(f"checkpoints verified: {report.checkpoints_verified}")
            if report.divergence is None and to is None:
                n = len(report.stored_differs)
                stored = f"DIFFERENT in {n} entr{'y' if n == 1 else 'ies'}" if n else "identical"
                click.echo(f"stored state: {stored}")
    if report.divergence is not None:
        click.echo(f"Error: {report.divergence.describe()}", err=True)
        ctx.exit(1)
    if report.stored_differs:
        click.echo(f"Error: {_stored_differs(report, db)}", err=True)
        ctx.exit(1)
    if report.matches is False:
        click.echo(
            f"Error: the replayed state digest {report.state_digest} differs from the recorded "
            f"{report.recorded_digest}; run with --verify to find where",
            err=True,
        )
        ctx.exit(1)


def _stored_differs(report: ReplayReport, db: str) -> str:
    """The stored state that its journal's replay does not give: which entries, and the repair
    (the journal verified whole, a replay into a new database rebuilds the state)."""
    differs = report.stored_differs
    shown = ", ".join(f"{kind} {key}" for kind, key in differs[:5])
    more = f" and {len(differs) - 5} more" if len(differs) > 5 else ""
    repair = command_line("replay", db, "--name", report.store, "--into", "NEW.db")
    return (
        f"the stored state of store {report.store!r} differs from its journal's replay in "
        f"{len(differs)} entr{'y' if len(differs) == 1 else 'ies'}: {shown}{more}; the journal "
        f"verified whole, so a replay into a new database rebuilds the state: {repair}"
    )
