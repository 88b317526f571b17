"""``drasnap history``: every allocation and deallocation of a store's claims, in order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from drasnap.store import Fate
from drasnap.tools.errors import CommandError
from drasnap.tools.options import database, json_option, name_option, store_to_read
from drasnap.tools.output import TABLE_WIDTH, clock, count_line, echo_json, iso, render_table

if TYPE_CHECKING:
    from drasnap.snapshot import AllocatedDevice, AllocationEvent

FATES = [fate.value for fate in Fate if fate is not Fate.UNKNOWN]


def event_json(e: AllocationEvent) -> dict[str, Any]:
    return {
        "seq": e.seq,
        "ts": e.ts,
        "time": iso(e.ts),
        "event": e.event,
        "claim": e.claim,
        "devices": [
            {"request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device}
            for d in e.devices
        ],
        "node": e.node,
        "layer": e.layer,
        "label": e.label,
        "depth": e.depth,
        "fate": e.fate,
    }


def _device(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from drasnap.snapshot import parse_device

    try:
        return parse_device(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def _device_cell(device: AllocatedDevice, node: str | None, one_driver: bool) -> str:
    """A device as short as it can be said without ambiguity (the table's note says how)."""
    if not one_driver:
        return device.id
    return device.device if device.pool == node else f"{device.pool}/{device.device}"


@click.command(name="history")
@database
@name_option
@click.option("--claim", metavar="NS/NAME", help="Only this claim.")
@click.option("--node", help="Only allocations that pin this node.")
@click.option(
    "--device",
    metavar="DRIVER/POOL/DEVICE",
    callback=_device,
    help="Only events involving this device.",
)
@click.option("--fate", type=click.Choice(FATES), help="Only events in layers with this fate.")
@json_option
def history_cmd(
    db: str | None,
    name: str | None,
    claim: str | None,
    node: str | None,
    device: tuple[str, str, str] | None,
    fate: str | None,
    as_json: bool,
) -> None:
    """List every allocation and deallocation of claims in a store's journal, in order: seq,
    time, claim, devices, node, the layer it happened in (label and depth), and that layer's
    fate — committed, reverted, or still open.

    Example (which devices did a claim get in branches that were reverted?):

        drasnap history sim.db --claim default/pending-00001-gpu-b4x9z --fate reverted
    """
    from drasnap.snapshot import CLAIM_KIND, allocation_history
    from drasnap.store import Journal

    db, name = store_to_read(db, name)
    with Journal.open(db, name=name) as journal:
        complete = journal.info.complete
        events = allocation_history(journal, claim=claim, node=node, device=device, fate=fate)
        if claim is not None and not events and not journal.key_writes(CLAIM_KIND, [claim]):
            raise CommandError(
                f"run {name!r} never held a claim {claim!r} (give it as namespace/name)"
            )
    if not complete:
        click.echo(
            "warning: the journal is incomplete (a writer ran with journal=False): "
            "events may be missing and fates unknown",
            err=True,
        )
    if as_json:
        echo_json(
            {"store": name, "journal_complete": complete, "events": [event_json(e) for e in events]}
        )
        return
    drivers = sorted({d.driver for e in events for d in e.devices})
    rows = [
        (
            e.seq,
            clock(e.ts),
            e.event,
            e.claim,
            [_device_cell(d, e.node, len(drivers) == 1) for d in e.devices],
            e.node,
            f"{e.label} [{e.depth}]" if e.layer else "(base)",
            e.fate,
        )
        for e in events
    ]
    headers = ("seq", "time", "event", "claim", "devices", "node", "layer [depth]", "fate")
    # Labels wrap first; names (claims, nodes, devices) only when nothing else is left.
    wrap = ("layer [depth]", "devices", "node", "claim")
    click.echo(render_table(headers, rows, width=TABLE_WIDTH, wrap=wrap))
    days = sorted({iso(e.ts)[:10] for e in events})
    on = f", times UTC on {' to '.join(days[:: max(len(days) - 1, 1)])}" if days else ""
    click.echo(count_line(len(events), "event", on), err=True)
    if len(drivers) == 1:
        click.echo(
            f"(devices of driver {drivers[0]}, as POOL/DEVICE, or DEVICE where the pool is the "
            "node's name)",
            err=True,
        )
