"""``drasnap explain``: why a run left a pod unplaced, in the scheduler's words; for a timeline's
pod, why it waited, loop by loop.

Reads the ``PodFailure`` record a run wrote (``snapshot.history.pod_failures``): as stored (the last
checkpoint), or as of seq ``--at`` (replayed from the journal, so an answer later replaced or
removed can still be read). Prints kube-scheduler's ``0/N nodes are available: ...`` message,
the reasons with how many nodes gave each, why a new node of each node group would not take the
pod (scale-up), or with ``--node`` that one node's reason.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import click
from drasnap.tools.errors import CommandError
from drasnap.tools.options import at_option, database, json_option, name_option, store_to_read
from drasnap.tools.output import echo_json

if TYPE_CHECKING:
    from drasnap.snapshot import NodeResult, PodFailure


def _refusal(result: NodeResult | None) -> str:
    if result is None:
        return "fits (a new node of this group would take the pod)"
    who = f"{result.plugin}: " if result.plugin else ""
    return who + result.message


def _reasons(failure: PodFailure) -> list[tuple[str, int]]:
    """(plugin: reasons, how many nodes gave it), the most frequent first."""
    error = failure.fit_error
    if error.prefilter is not None:
        return [(_refusal(error.prefilter), error.num_all_nodes)]
    counts: Counter[str] = Counter(_refusal(r) for r in error.nodes.values())
    missing = error.num_all_nodes - len(error.nodes)
    if error.absent is not None and missing > 0:
        counts[_refusal(error.absent)] += missing
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


@click.command(name="explain")
@database
@name_option
@click.option("--pod", "pod_key", required=True, metavar="NS/NAME", help="The pod.")
@at_option
@click.option("--node", metavar="NODE", help="This node's reason, and its devices' for each claim.")
@click.option(
    "--group",
    metavar="GROUP",
    help="Device by device on a new node of this node group (its template).",
)
@json_option
def explain_cmd(
    db: str | None,
    name: str | None,
    pod_key: str,
    at: int | None,
    node: str | None,
    group: str | None,
    as_json: bool,
) -> None:
    """Say why a run left a pod unplaced: kube-scheduler's message (0/N nodes are available:
    ...), the reasons and how many nodes gave each, and for a scale-up why a new node of each
    node group would not take it either; --node gives one node's reason. With --node or
    --group, below the scheduler's "cannot allocate all claims": for each claim and request,
    the devices of its class, how many pass each selector, which are already allocated (to
    which claims), which are refused by capacity, counters, taints or a constraint, and the
    device that came closest.

    Example:

        drasnap explain sim.db --name scale-up-1 --pod default/pending-big --node gpu-a-0

        drasnap explain sim.db --pod default/pending-big --group gpu-b --json
    """
    if node is not None and group is not None:
        raise click.UsageError("--node and --group are exclusive: give one")
    namespace, slash, pod_name = pod_key.partition("/")
    if not slash or not namespace or not pod_name or "/" in pod_name:
        raise CommandError(f"--pod takes namespace/name, got {pod_key!r}")
    from drasnap.snapshot import POD_FAILURE_KIND, POD_KIND, PodFailure
    from drasnap.snapshot.simulation import explain_pod_devices, pod_story
    from drasnap.store import open_state

    db, name = store_to_read(db, name)
    devices = None
    with open_state(db, name=name, at=at) as state:
        story = pod_story(state, pod_key)
        value = state.get(POD_FAILURE_KIND, pod_key)
        placed = state.get(POD_KIND, pod_key)
        seq = state.seq
        if node is not None or group is not None:
            from drasnap.snapshot import AllocationError, NotFoundError

            try:
                devices = explain_pod_devices(state, state.kinds(), pod_key, node=node, group=group)
            except (NotFoundError, AllocationError) as exc:
                raise CommandError(str(exc)) from exc
    point = f"at seq {seq}" if at is not None else "as stored"
    if node is not None or group is not None:
        _echo_devices(name, seq, pod_key, value, node, group, devices, as_json)
        return
    if story is not None:
        _echo_story(name, seq, pod_key, story, as_json)
        return
    if value is None:
        if placed is not None:
            where = (placed.get("spec") or {}).get("nodeName")
            raise CommandError(
                f"pod {pod_key} is on node {where} in run {name!r} {point}: nothing to explain"
            )
        raise CommandError(
            f"run {name!r} holds no record of pod {pod_key} left unplaced {point} "
            '(drasnap query DB "SELECT pod, message FROM pod_failures" lists those it holds)'
        )
    failure = PodFailure.from_json(pod_key, value)
    data: dict[str, Any] = {
        "store": name,
        "seq": seq,
        "pod": pod_key,
        "message": failure.message,
        "context": failure.context,
    }
    data["fit_error"] = failure.fit_error.to_json()
    data["node_groups"] = {
        g: (r.to_json() if r is not None else None) for g, r in failure.node_groups.items()
    }
    if as_json:
        echo_json(data)
        return
    click.echo(f"pod {pod_key}: {failure.message}")
    for reason, count in _reasons(failure):
        click.echo(f"  {count} node(s): {reason}")
    for group, result in sorted(failure.node_groups.items()):
        click.echo(f"node group {group}, a new node: {_refusal(result)}")


def _echo_devices(
    name: str,
    seq: int,
    pod_key: str,
    value: Any,
    node: str | None,
    group: str | None,
    devices: Any,  # snapshot.simulation.explain_pod_devices's answer
    as_json: bool,
) -> None:
    """--node / --group: the scheduler's answer for the node (when the run recorded one), then
    the claims device by device."""
    from drasnap.snapshot import PodFailure

    data: dict[str, Any] = {"store": name, "seq": seq, "pod": pod_key}
    lines = []
    if value is not None:
        failure = PodFailure.from_json(pod_key, value)
        data["message"] = failure.message
        lines.append(f"pod {pod_key}: {failure.message}")
        if node is not None:
            result = failure.node_reason(node)
            data["node"] = {"name": node, **(result.to_json() if result else {})}
            if result is not None:
                lines.append(f"node {node}: {_refusal(result)}")
        else:
            assert group is not None
            data["node_group"] = {"name": group}
            if group in failure.node_groups:
                found = failure.node_groups[group]
                data["node_group"]["result"] = found.to_json() if found else None
                lines.append(f"node group {group}, a new node: {_refusal(found)}")
    data["devices"] = devices.to_json() if devices is not None else None
    if devices is None:
        lines.append(f"pod {pod_key} has no claim left to allocate: nothing below the scheduler")
    else:
        lines.extend(devices.lines())
    if as_json:
        echo_json(data)
        return
    for line in lines:
        click.echo(line)


def _seconds(ms: int | None) -> str:
    return "-" if ms is None else f"{ms / 1000:g}s"


def _echo_story(name: str, seq: int, pod_key: str, story: Any, as_json: bool) -> None:
    """A timeline's pod: when it arrived, was bound and ended, and why it waited, loop by
    loop (the scheduler's reason, then the cluster-autoscaler's)."""
    life = story["life"]
    if as_json:
        echo_json({"store": name, "seq": seq, "pod": pod_key, **story})
        return
    arrived, bound = life.get("arrived"), life.get("bound")
    line = f"pod {pod_key}: arrived at {_seconds(arrived) if arrived is not None else 'the start'}"
    if bound is not None:
        line += f", bound at {_seconds(bound)} to node {life.get('node')}"
        line += f" (waited {_seconds(int(bound) - int(arrived or 0))})"
    else:
        line += ", never bound"
    if life.get("ended") is not None:
        line += f", {life.get('fate')} at {_seconds(life['ended'])}"
    click.echo(line)
    for said in story["reasons"]:
        click.echo(f"  at {_seconds(said['t']):>9}  {said['by']}: {said['reason']}")
    if not story["reasons"]:
        click.echo("  it never waited")
