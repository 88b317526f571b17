"""The pods a run leaves unplaced, and why: ``PodFailure`` records and the run's warnings.

At the end of a scale-up, each pending pod still unplaced gets a ``PodFailure`` record
(``snapshot.history.pod_failures``) written through the store at depth 0, so it is journaled,
replays
and shows in the ``pod_failures`` SQL view: the scheduler's answer over the cluster's nodes as
they are then, and for each node group why a new node of the group would not take it (found
on a node added in a fork that is reverted at once: the cluster is left as it was). A pod
that fits an existing node is not recorded: the scheduler would place it (the upstream
presets only add nodes; they never place pods on existing ones).

``run_warnings`` lists, for every pod of the run (pending or placed), the scheduling
constraints the filters do not check (``snapshot.scheduling.pod_warnings``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import orjson
from drasnap.snapshot.errors import SchedulingError
from drasnap.snapshot.history.pod_failures import POD_FAILURE_KIND, PodFailure
from drasnap.snapshot.k8s.kinds import POD_KIND, key_of
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.scheduling import NodeResult, spec_warnings, warning_lines
from drasnap.snapshot.simulation.inputs import NodeGroup, instantiate
from drasnap.snapshot.simulation.record import RunContext
from drasnap.store import VersionedStore

__all__ = ["record_unschedulable", "run_warnings", "unschedulable"]


def _group_reason(sim: RunContext, group: NodeGroup, pod: KubeObject) -> NodeResult | None:
    cs = sim.cluster
    name = f"{group.name}-why-not"
    cs.fork(f"why not {key_of(pod)} on node group {group.name}")
    try:
        node, slices = instantiate(group, name)
        cs.add_node(node, slices=slices)
        try:
            return cs.fit_error(pod, [name]).node_result(name)
        except SchedulingError:
            return None  # a new node of the group would take it
    finally:
        cs.revert()


def record_unschedulable(
    sim: RunContext,
    pending: Iterable[KubeObject],
    groups: Sequence[NodeGroup],
    context: str,
    autoscaler: Mapping[str, str] | None = None,
) -> int:
    """Write a PodFailure for each of ``pending`` not placed; returns how many were written.
    ``autoscaler``: the cluster-autoscaler's text for a pod (``pod didn't trigger scale-up:
    ...``), by ``namespace/name``."""
    cs = sim.cluster
    written = 0
    for pod in pending:
        meta = pod.get("metadata") or {}
        if cs.pod(meta.get("namespace") or "default", meta.get("name", "")) is not None:
            continue
        try:
            error = cs.fit_error(pod)
        except SchedulingError:
            continue  # it fits an existing node: not unschedulable
        groups_answer = {g.name: _group_reason(sim, g, pod) for g in groups}
        said = (autoscaler or {}).get(key_of(pod), "")
        failure = PodFailure(key_of(pod), error, groups_answer, context, said)
        sim.store.put(POD_FAILURE_KIND, failure.pod, failure.to_json())
        written += 1
    return written


def unschedulable(store: VersionedStore) -> dict[str, str]:
    """The recorded unplaced pods: ``namespace/name`` -> the scheduler's message."""
    return {
        key: str(value.get("message", ""))
        for key, value in sorted(store.items(POD_FAILURE_KIND).items())
    }


def run_warnings(store: VersionedStore, pending_kind: str) -> list[str]:
    """What the filters did not check, for every pod the run holds (placed or pending)."""
    out: list[str] = []
    seen: set[str] = set()
    # The findings depend on the spec alone, and a run's pods share a few specs (50,000 pods,
    # one spec, in the no-DRA scale-up): found once per spec.
    found: dict[bytes, list[tuple[str, str]]] = {}
    for kind in (pending_kind, POD_KIND):
        for key, pod in sorted(store.items(kind).items()):
            if key in seen:
                continue
            seen.add(key)
            spec = pod.get("spec") or {}
            shape = orjson.dumps(spec)
            if shape not in found:
                found[shape] = spec_warnings(spec)
            if found[shape]:
                out.extend(warning_lines(pod, found[shape]))
    return out
