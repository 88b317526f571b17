"""``drasnap inspect``: a store's open layers, object counts and claims, now or at a seq."""

from __future__ import annotations

import json as jsonlib
from typing import Any

import click

from snapshot.allocation_history import CLAIM_KIND, ClaimSummary, summarize_claims
from store import State, open_state
from tools.query_cmd import db_argument, echo_json, iso, json_option, name_option, render_table


def _claim_json(c: ClaimSummary) -> dict[str, Any]:
    return {
        "claim": c.claim,
        "allocated": c.allocated,
        "node": c.node,
        "devices": [
            {"request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device}
            for d in c.devices
        ],
        "reserved_for": list(c.reserved_for),
    }


def _gather(state: State, kind: str | None, key: str | None) -> dict[str, Any]:
    kinds = [kind] if kind is not None else state.kinds()
    counts = {k: state.count(k) for k in kinds}
    claims: list[ClaimSummary] = []
    if kind in (None, CLAIM_KIND):
        items = state.items(CLAIM_KIND)
        if key is not None:
            items = {key: items[key]} if key in items else {}
        claims = summarize_claims(items)
    objects: list[dict[str, Any]] = []
    if kind is not None or key is not None:
        for k in kinds:
            if key is not None:
                value = state.get(k, key)
                if value is not None:
                    objects.append({"kind": k, "key": key, "value": value})
            else:
                objects += [
                    {"kind": k, "key": y, "value": v} for y, v in sorted(state.items(k).items())
                ]
    return {
        "store": state.store,
        "seq": state.seq,
        "state_digest": state.state_digest(),
        "depth": len(state.layers),
        "layers": [
            {
                "depth": ly.depth,
                "instance": ly.instance,
                "label": ly.label,
                "created_at": ly.created_at,
                "entries": ly.entries,
            }
            for ly in state.layers
        ],
        "counts": counts,
        "claims": [_claim_json(c) for c in claims],
        "objects": objects,
    }


@click.command(name="inspect")
@db_argument
@name_option
@click.option("--at", type=int, metavar="SEQ", help="As of this sequence number (replayed).")
@click.option("--kind", help="Only this kind: its count, and its objects listed.")
@click.option("--key", help="Only the objects with this key (e.g. a claim's namespace/name).")
@json_option
def inspect_cmd(
    db: str, name: str, at: int | None, kind: str | None, key: str | None, as_json: bool
) -> None:
    """Show a store's open layers, object counts per kind, and claims with their allocations
    and reservations: as stored (the last checkpoint), or as of seq --at (replayed from the
    journal).

    Example:

        drasnap inspect sim.db --name sim --at 1200 --kind ResourceClaim
    """
    with open_state(db, name=name, at=at) as state:
        data = _gather(state, kind, key)
    if as_json:
        echo_json(data)
        return
    where = f"at seq {data['seq']}" if at is not None else f"as stored (seq {data['seq']})"
    click.echo(f"store {data['store']!r} {where}, state digest {data['state_digest']}")
    click.echo(f"\nopen layers: {data['depth']}")
    if data["layers"]:
        rows = [
            (ly["depth"], ly["instance"], ly["label"], ly["entries"], iso(ly["created_at"]))
            for ly in data["layers"]
        ]
        click.echo(render_table(("depth", "instance", "label", "entries", "forked"), rows))
    click.echo("")
    click.echo(render_table(("kind", "objects"), sorted(data["counts"].items())))
    if data["claims"]:
        click.echo("")
        rows = [
            (
                c["claim"],
                "yes" if c["allocated"] else "no",
                c["node"],
                " ".join(f"{d['driver']}/{d['pool']}/{d['device']}" for d in c["devices"]),
                " ".join(c["reserved_for"]),
            )
            for c in data["claims"]
        ]
        click.echo(render_table(("claim", "allocated", "node", "devices", "reserved for"), rows))
    for obj in data["objects"]:
        if obj["kind"] == CLAIM_KIND and kind is None:
            continue  # shown as a claim above
        click.echo(f"\n{obj['kind']} {obj['key']}:")
        click.echo(_indent(obj["value"]))


def _indent(value: Any) -> str:
    return "\n".join("  " + line for line in jsonlib.dumps(value, indent=2).splitlines())
