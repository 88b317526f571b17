"""The workloads of ``drasnap bench``, each runnable on any backend (tools/bench/backends.py).

Every workload builds its starting state untimed, then times what it is about, and returns the
final state digest, so a test can check that every backend ends in the same state.

- ``schedule-revert``: upstream's ``BenchmarkScheduleRevert`` shape (cluster-autoscaler
  ``simulator/clustersnapshot/predicate/predicate_snapshot_dra_benchmark_test.go``): N nodes with a
  slice of D devices each and C pods per node holding allocated, reserved claims; then, for each
  of I pending pods (one unallocated one-GPU claim each, created up front): Fork, schedule it on
  the next node (allocating its claim), then Commit every K-th time and Revert otherwise.
- ``scale-up`` / ``scale-down``: the two ``drasnap simulate`` scenarios, whole (set-up included).
- ``scale-up-partitionable``: scale-up at scale-up's sizes on partitionable GPUs
  (``drasnap simulate scale-up --devices partitionable``): each GPU whole and as slices through
  shared counters, pods asking for a full GPU else two slices (a prioritized list). Its ratio
  to ``scale-up`` is the price of those features in the allocator.
- ``scaling``: fork+revert as the store grows, and commit/revert as the changed keys grow
  (see ``scaling_rows``).
"""

from __future__ import annotations

import gc
import random
import time
from dataclasses import dataclass
from typing import Any

from drasnap.snapshot import ClusterSnapshot, claims_from_templates
from drasnap.snapshot.simulation import Settings, generated, prepare, simulate
from drasnap.store import VersionedStore
from drasnap.tools.bench import timing
from drasnap.tools.bench.names import UPSTREAM_WORKLOADS

SIZES: dict[str, dict[str, dict[str, int]]] = {
    "schedule-revert": {
        "full": {
            "nodes": 100,
            "devices": 100,
            "pods_per_node": 32,
            "iterations": 400,
            "commit_every": 10,
        },
        "quick": {
            "nodes": 20,
            "devices": 32,
            "pods_per_node": 8,
            "iterations": 100,
            "commit_every": 10,
        },
        "tiny": {"nodes": 3, "devices": 4, "pods_per_node": 1, "iterations": 6, "commit_every": 3},
    },
    "scale-up": {
        "full": {"pods": 4000, "node_groups": 1},
        "quick": {"pods": 800, "node_groups": 2},
        "tiny": {"pods": 24, "node_groups": 2},
    },
    "scale-up-partitionable": {
        "full": {"pods": 4000, "node_groups": 1},
        "quick": {"pods": 800, "node_groups": 2},
        "tiny": {"pods": 24, "node_groups": 2},
    },
    "scale-down": {
        "full": {"nodes": 800, "pods_per_node": 4},
        "quick": {"nodes": 200, "pods_per_node": 4},
        "tiny": {"nodes": 8, "pods_per_node": 2},
    },
}


@dataclass
class Run:
    """One timed run of a workload on a backend."""

    seconds: float
    digest: str
    forks: int
    commits: int
    reverts: int
    parts: dict[str, float] | None = None  # seconds of each part (an upstream configuration)


def run_workload(name: str, store: VersionedStore, size: str, seed: int) -> Run:
    """Run workload ``name`` at ``size`` ("full", "quick" or "tiny") on an empty ``store``."""
    if name in UPSTREAM_WORKLOADS:
        from drasnap.tools.bench import upstream_workloads

        done = upstream_workloads.run(name, store, size)
        return Run(done.seconds, done.digest, done.forks, done.commits, done.reverts, done.parts)
    params = SIZES[name][size]
    if name == "schedule-revert":
        return schedule_revert(store, seed=seed, **params)
    scenario, partitionable, _ = name.partition("-partitionable")
    settings = Settings(
        scenario=scenario,
        devices="partitionable" if partitionable else "flat",
        seed=seed,
        pods=params.get("pods", 1),
        node_groups=params.get("node_groups", 1),
        nodes=params.get("nodes", 1),
        pods_per_node=params.get("pods_per_node", 0),
    ).resolved()
    start = prepare(settings)
    gc.collect()
    began = time.perf_counter()
    outcome = simulate(
        ClusterSnapshot(store, features=settings.feature_gates), settings, lambda: start
    )
    seconds = time.perf_counter() - began
    c = outcome.counters
    return Run(seconds, outcome.state_digest, c.forks, c.commits, c.reverts)


def schedule_revert(
    store: VersionedStore,
    *,
    nodes: int,
    devices: int,
    pods_per_node: int,
    iterations: int,
    commit_every: int,
    seed: int,
) -> Run:
    rng = random.Random(seed)
    cluster = ClusterSnapshot(store)
    templates = {f"{generated.NAMESPACE}/{generated.TEMPLATE_NAME}": generated.claim_template()}
    cluster.dra.add_device_classes([generated.device_class()])
    node_names = [f"node-{n:03d}" for n in range(nodes)]
    for name in node_names:
        pods, claims = [], []
        for j in range(pods_per_node):
            pod, (claim,) = claims_from_templates(generated.pod(f"{name}-pod-{j}", rng), templates)
            pods.append({**pod, "spec": {**pod["spec"], "nodeName": name}})
            claims.append(
                {**claim, "status": {"allocation": generated.allocation(name, f"gpu-{j}")}}
            )
        cluster.add_node(
            generated.node(name),
            slices=[generated.gpu_slice(name, devices)],
            pods=pods,
            claims=claims,
        )
    pending = []
    new_claims = []
    for i in range(iterations):
        pod, claims = claims_from_templates(generated.pod(f"pending-{i:05d}", rng), templates)
        pending.append(pod)
        new_claims.extend(claims)
    cluster.dra.add_claims(new_claims)
    store.checkpoint()
    gc.collect()  # the set-up's garbage is not the loop's to pay for
    forks = commits = reverts = 0
    began = time.perf_counter()
    for i, pod in enumerate(pending):
        cluster.fork("schedule")
        forks += 1
        placed = cluster.schedule_pod_anywhere(pod, [node_names[i % nodes]])
        if placed is not None and (i + 1) % commit_every == 0:
            cluster.commit()
            commits += 1
        else:
            cluster.revert()
            reverts += 1
    store.checkpoint()
    seconds = time.perf_counter() - began
    return Run(seconds, store.state_digest(), forks, commits, reverts)


# -- scaling ----------------------------------------------------------------------------------


def _value(i: int) -> dict[str, Any]:
    return {"metadata": {"name": f"c{i}", "namespace": "default"}, "spec": {"n": i}}


def fill(store: VersionedStore, keys: int, *, start: int = 0, batch: int = 100_000) -> None:
    """Put claim-shaped values ``start`` .. ``keys - 1`` in the base layer, checkpointing every
    batch (so a bounded-cache store never holds more than a batch of unflushed values)."""
    kind = "ResourceClaim"
    for i in range(start, keys):
        store.put(kind, f"default/c{i}", _value(i))
        if (i + 1) % batch == 0:
            store.checkpoint()
    store.checkpoint()


def fork_revert_samples(
    store: VersionedStore, *, samples: int = 5, batch: int = 2_000
) -> list[float]:
    """Seconds per Fork+Revert in each of ``samples`` batches (after a warm-up batch), with
    the GC paused as in ``drasnap bench store``: the cell reports their median. A checkpoint
    the store's policy takes lands in one batch, as it would in one stretch of a run.
    Batches are up to ``batch`` operations, fewer when one operation is slow."""
    began = time.perf_counter()
    store.fork()
    store.revert()
    once = time.perf_counter() - began
    # A batch is capped at 0.05 s of work: deepcopy's Fork of a large state is slow enough
    # that a fixed count of them would run for minutes.
    batch = max(1, min(int(batch * timing.scale()), int(0.05 / max(once, 1e-9))))
    out = []
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for n in range(samples + 1):
            began = time.perf_counter()
            for _ in range(batch):
                store.fork()
                store.revert()
            if n:  # the first batch is the warm-up
                out.append((time.perf_counter() - began) / batch)
    finally:
        if enabled:
            gc.enable()
    return out


def changed_keys_samples(store: VersionedStore, changed: int, *, commit: bool) -> list[float]:
    """Seconds for one commit (or revert) of a layer in which ``changed`` keys were put, three
    times: the cell reports their median."""
    samples = []
    for _ in range(3):
        store.fork("outer")
        store.fork("changes")
        for i in range(changed):
            store.put("ResourceClaim", f"default/c{i}", _value(-i))
        began = time.perf_counter()
        if commit:
            store.commit()
        else:
            store.revert()
        samples.append(time.perf_counter() - began)
        while store.depth:
            store.revert()
    return samples
