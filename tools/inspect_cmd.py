"""``drasnap inspect``: a store's open layers, object counts and claims, now or at a seq."""

from __future__ import annotations

import json as jsonlib
from typing import TYPE_CHECKING, Any

import click
from drasnap.tools.errors import CommandError
from drasnap.tools.options import at_option, database, json_option, name_option, store_to_read
from drasnap.tools.output import echo_json, iso, render_table

if TYPE_CHECKING:
    from drasnap.snapshot import ClaimSummary
    from drasnap.store import State


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
    from drasnap.snapshot import CLAIM_KIND, summarize_claims
    from drasnap.snapshot.simulation import decisions_so_far

    held = state.kinds()
    kinds = [kind] if kind is not None else held
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
        "kinds": sorted(k for k in held if state.count(k)),
        "autoscale": decisions_so_far(state),
        "claims": [_claim_json(c) for c in claims],
        "objects": objects,
    }


@click.command(name="inspect")
@database
@name_option
@at_option
@click.option("--kind", help="Only this kind: its count, and its objects listed.")
@click.option("--key", help="Only the objects with this key (e.g. a claim's namespace/name).")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="List at most this many claims and objects (0: all).",
)
@json_option
def inspect_cmd(
    db: str | None,
    name: str | None,
    at: int | None,
    kind: str | None,
    key: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Show a store's open layers, object counts per kind, and claims with their allocations
    and reservations: as stored (the last checkpoint), or as of seq --at (replayed from the
    journal).

    Example:

        drasnap inspect sim.db --name scale-up-1 --at 1200 --kind ResourceClaim
    """
    from drasnap.snapshot import CLAIM_KIND
    from drasnap.store import open_state

    db, name = store_to_read(db, name)
    with open_state(db, name=name, at=at) as state:
        data = _gather(state, kind, key)
    kinds = data.pop("kinds")
    point = f"at seq {data['seq']}" if at is not None else "as stored"
    if kind is not None and not data["counts"].get(kind):
        raise CommandError(
            f"run {name!r} holds no {kind} {point} (its kinds: {', '.join(kinds) or 'none'})"
        )
    if key is not None and not data["objects"]:
        where = f"of kind {kind} " if kind is not None else ""
        raise CommandError(f"run {name!r} holds no object {where}with key {key!r} {point}")
    for field in ("claims", "objects"):
        data[f"{field}_total"] = len(data[field])
        if limit:
            data[field] = data[field][:limit]
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
    if data["autoscale"] is not None:
        _echo_autoscale(data["autoscale"])
    if data["claims"]:
        click.echo("")
        claim_rows: list[tuple[Any, ...]] = [
            (
                c["claim"],
                "yes" if c["allocated"] else "no",
                c["node"],
                [f"{d['driver']}/{d['pool']}/{d['device']}" for d in c["devices"]],
                list(c["reserved_for"]),
            )
            for c in data["claims"]
        ]
        headers = ("claim", "allocated", "node", "devices", "reserved for")
        click.echo(render_table(headers, claim_rows))
        _more(data["claims_total"] - len(data["claims"]), "claims")
    for obj in data["objects"]:
        if obj["kind"] == CLAIM_KIND and kind is None:
            continue  # shown as a claim above
        click.echo(f"\n{obj['kind']} {obj['key']}:")
        click.echo(_indent(obj["value"]))
    if kind is not None or key is not None:
        _more(data["objects_total"] - len(data["objects"]), "objects")


def _echo_autoscale(run: dict[str, Any]) -> None:
    click.echo(f"\nautoscale, step {run['step']} of {run['steps']}:")
    click.echo(f"  pending pods: {', '.join(run['pending']) or 'none'}")
    for pod, node in (run["placed_on_existing"] or {}).items():
        click.echo(f"  placed on existing node {node}: {pod}")
    if run["node_group"] is not None:
        click.echo(f"  expander chose node group {run['node_group']}")
    for group, count in (run["added"] or {}).items():
        click.echo(f"  node group {group}: add {count} node(s)")
    for node in run["removed"] or ():
        click.echo(f"  remove node {node}")
    for node, reason in (run["kept"] or {}).items():
        click.echo(f"  kept {node}: {reason}")
    for pod, reason in (run["unschedulable"] or {}).items():
        click.echo(f"  unschedulable {pod}: {reason}")
    for warning in run["warnings"] or ():
        click.echo(f"  warning: {warning}")


def _more(hidden: int, what: str) -> None:
    if hidden > 0:
        click.echo(f"… and {hidden:,} more {what} (--limit 0 lists them all)")


def _indent(value: Any) -> str:
    return "\n".join("  " + line for line in jsonlib.dumps(value, indent=2).splitlines())
