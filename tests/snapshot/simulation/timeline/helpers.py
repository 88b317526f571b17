"""Small timelines for the tests: a cluster folder (``--from``), a node-groups file, a trace,
run in memory; and readers of what the run wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.simulation.autoscale_config import files_digest
from drasnap.snapshot.simulation.inputs import source_digest
from drasnap.snapshot.simulation.record import Outcome
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.settings import Settings
from drasnap.snapshot.simulation.timeline.records import LOOP_KIND, NODE_LIFE, POD_LIFE
from drasnap.store import MemoryStore, VersionedStore

from tests.snapshot.simulation.test_autoscale import REPLICA_SET, node, pod, write


def group_entry(name: str, cpu: int, *, min_size: int = 0, max_size: int = 10) -> dict[str, Any]:
    """A node-groups file entry whose template is a node of ``cpu`` CPUs (not in the cluster)."""
    return {
        "name": name,
        "minSize": min_size,
        "maxSize": max_size,
        "node": node(f"{name}-template", name, cpu),
    }


def owned(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (a pod) owned by a ReplicaSet: scale-down may move it, its controller makes it
    again when evicted."""
    return {**obj, "metadata": {**obj["metadata"], "ownerReferences": [REPLICA_SET]}}


def create(t: float, obj: dict[str, Any], runs: float | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"t": t, "op": "create", "object": obj}
    if runs is not None:
        line["runs"] = runs
    return line


def delete(t: float, name: str, kind: str = "Pod") -> dict[str, Any]:
    return {
        "t": t,
        "op": "delete",
        "object": {"apiVersion": "v1", "kind": kind, "metadata": {"name": name}},
    }


def run_timeline(
    tmp: Path,
    objects: list[dict[str, Any]],
    groups: list[dict[str, Any]],
    trace: list[dict[str, Any]],
    *,
    store: VersionedStore | None = None,
    no_skip: bool = False,
    ticks: list[float] | None = None,
    **settings: Any,
) -> tuple[Outcome, VersionedStore]:
    """Run a timeline on ``objects`` with node ``groups`` and ``trace`` (lines). ``ticks``
    receives the progress of each tick the run ran (how many it ran: its length)."""
    source = write(tmp / "cluster", *objects)
    groups_file = tmp / "node-groups.yaml"
    groups_file.write_text(yaml.safe_dump({"nodeGroups": groups}, sort_keys=False))
    trace_file = tmp / "trace.jsonl"
    trace_file.write_text("".join(json.dumps(line) + "\n" for line in trace))
    digest = files_digest(source_digest(source), str(groups_file), None, str(trace_file))
    resolved = Settings(
        "timeline",
        source=str(source),
        source_digest=digest,
        node_groups_file=str(groups_file),
        trace=str(trace_file),
        **settings,
    ).resolved()
    store = store if store is not None else MemoryStore()
    outcome = simulate(
        ClusterSnapshot(store),
        resolved,
        lambda: prepare(resolved),
        options={"no_skip": no_skip},
        report=lambda done, _total, _detail: None if ticks is None else ticks.append(done),
    )
    return outcome, store


def deleted_at(store: VersionedStore, name: str) -> int | None:
    """When node ``name`` was deleted (ms), None if never."""
    record = store.get(NODE_LIFE, name)
    assert record is not None, f"no node {name}"
    deleted = record["deleted"]
    return None if deleted is None else int(deleted)


def loops(store: VersionedStore) -> list[dict[str, Any]]:
    """The loops that decided something, in time order."""
    return [store.get(LOOP_KIND, k) for k in sorted(store.keys(LOOP_KIND))]


def scale_up_times(store: VersionedStore) -> list[tuple[int, dict[str, int]]]:
    return [(loop["t"], loop["scaled_up"]) for loop in loops(store) if loop["scaled_up"]]


def life(store: VersionedStore, key: str) -> dict[str, Any]:
    found = store.get(POD_LIFE, key)
    assert found is not None, f"no pod {key}"
    return dict(found)


def minutes(text: str) -> int:
    """``"10m40s"`` as milliseconds (test arithmetic only)."""
    total, number = 0, ""
    for char in text:
        if char.isdigit():
            number += char
        else:
            total += int(number) * {"h": 3_600_000, "m": 60_000, "s": 1000}[char]
            number = ""
    return total


__all__ = ["node", "owned", "pod"]
