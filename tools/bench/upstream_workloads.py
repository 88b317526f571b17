"""``drasnap bench`` workloads in the shape of two upstream cluster-autoscaler benchmarks that the
compiled ``ca-runonce-bench`` does not hold (so ``--against-ca`` has no figure for them): run
only when named, each checked for upstream's outcome (a different one raises).

- ``schedule-revert-configs``: the 60 configurations of ``BenchmarkScheduleRevert``
  (kubernetes/autoscaler PR #8090, ``simulator/clustersnapshot/predicate/
  predicate_snapshot_dra_benchmark_test.go``). 100 nodes (10 CPUs, 10,000 bytes, 100 pods) with
  a slice of 100 devices; per node a shared claim of 100 one-device requests allocated every
  device of the node, and 100 pod-owned one-device claims, allocated (upstream's helper gives
  each the node's first device: the allocations overlap, as upstream's do, and the scheduler
  takes allocated claims as they are). Per configuration: the shared claims of every node and
  the owned claims of the nodes it uses are added, then per node: ``forks`` Forks, AddNodeInfo,
  ``shared`` pods of the node's shared claim and ``owned`` owning pods scheduled on it,
  ``commits`` Commits, ``reverts`` Reverts. The outcome checked: every pod is scheduled, and
  the nodes, pods and depth left are what those operations leave. Upstream times each
  configuration on a fresh snapshot; here they run one after the other, each in a Fork of the
  empty store, reverted after (timed, as upstream times its claims' set-up). One difference:
  upstream names the shared claims' pods ``pod-<i>`` on every node (its snapshot does not
  mind); here they are ``pod-<node>-shared-<i>``, since a pod name is one pod. The table gives
  the 60 together; ``--json`` each one's seconds too (``parts_s``), as upstream reports each.
- ``binpacking-dra-1000`` / ``binpacking-dra-5000``: ``BenchmarkBinpackingEstimateDRA``
  (kubernetes-sigs/cluster-autoscaler#53, ``pkg/estimator``), its sizes
  ``nodes=1000/claims=4000/pendingPods=200`` and ``nodes=5000/claims=20000/pendingPods=500``:
  a fleet of nodes (16 CPUs, 64,000 MiB, 110 pods) with 8 devices each and 4 allocated claims
  each (no pod: they stand for running ones), pending pods (500m, 1,000 bytes) each owning an
  unallocated one-device claim; timed: one binpacking estimate on a node group whose template
  is the fleet's node (each pod tries the newest new node, then a new one), in a Fork reverted
  after. The outcome checked: every pod placed on ceil(pods / 8) new nodes (devices bind),
  where upstream checks only that some are.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import Any

from drasnap.snapshot import ClusterSnapshot
from drasnap.snapshot.simulation import generated
from drasnap.store import VersionedStore

NAMES = ("schedule-revert-configs", "binpacking-dra-1000", "binpacking-dra-5000")
NOTE = (
    "schedule-revert-configs, binpacking-dra-*: upstream's BenchmarkScheduleRevert (PR #8090) "
    "and BenchmarkBinpackingEstimateDRA (kubernetes-sigs/cluster-autoscaler#53) shapes, not in "
    "the compiled ca-runonce-bench: no cluster-autoscaler figure beside them"
)


@dataclass(frozen=True)
class Config:
    name: str
    nodes: int
    shared: int  # pods of the node's shared claim
    owned: int  # pods of their own claims
    forks: int
    commits: int
    reverts: int


_OPS = {  # name: (forks, commits, reverts)
    "ForkRevert": (1, 0, 1),
    "ForkCommit": (1, 1, 0),
    "ForkForkCommitRevert": (2, 1, 1),
    "Fork": (1, 0, 0),
    "Fork5Revert5": (5, 0, 5),
}


def configurations(size: str) -> list[Config]:
    """Upstream's 60 (size full); quick: its 30 of 10 nodes; tiny: the 60 shrunk."""
    if size == "tiny":
        nodes, shared, owned, mixed = {100: 3, 10: 2}, {32: 2, 1: 1}, {100: 3, 1: 1}, 2
    else:
        nodes, shared, owned, mixed = {100: 100, 10: 10}, {32: 32, 1: 1}, {100: 100, 1: 1}, 50
    configs = []
    for n in (100, 10):
        if size == "quick" and n == 100:
            continue
        shapes = [("SharedClaims", f"{n}x{s}", shared[s], 0) for s in (32, 1)]
        shapes += [("OwnedClaims", f"{n}x{o}", 0, owned[o]) for o in (100, 1)]
        shapes += [
            ("MixedClaims", f"{n}x32x50", shared[32], mixed),
            ("MixedClaims", f"{n}x1x1", 1, 1),
        ]
        for kind, label, s, o in shapes:
            for op, (forks, commits, reverts) in _OPS.items():
                name = f"{label}/{kind}/{op}"
                configs.append(Config(name, nodes[n], s, o, forks, commits, reverts))
    return configs


_SR_SIZES = {"full": (100, 100, 100), "quick": (100, 100, 100), "tiny": (3, 4, 3)}
# (nodes, devices per slice, owned claims per node)


def _node(name: str) -> dict[str, Any]:
    node = generated.plain_node(name)
    return node


def _allocated(name: str, node: str, devices: list[str], owner: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": generated.NAMESPACE, "uid": f"{name}-uid"}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": owner,
                "uid": owner,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    requests = [
        {
            "name": f"deviceRequest-{i}",
            "exactly": {
                "deviceClassName": generated.DRIVER,
                "allocationMode": "ExactCount",
                "count": 1,
            },
        }
        for i in range(len(devices))
    ]
    allocation = generated.allocation(node, devices[0])
    allocation["devices"]["results"] = [
        {"request": f"deviceRequest-{i}", "driver": generated.DRIVER, "pool": node, "device": d}
        for i, d in enumerate(devices)
    ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": requests}},
        "status": {"allocation": allocation},
    }


def _pod(name: str, claim: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": generated.NAMESPACE, "uid": name},
        "spec": {
            "containers": [
                {"name": "main", "resources": {"requests": {"cpu": "1m", "memory": "1"}}}
            ],
            "resourceClaims": [{"name": claim, "resourceClaimName": claim}],
        },
    }


@dataclass
class Counted:
    seconds: float
    digest: str
    forks: int
    commits: int
    reverts: int
    parts: dict[str, float] | None = None  # schedule-revert-configs: seconds per configuration


def schedule_revert_configs(store: VersionedStore, size: str) -> Counted:
    max_nodes, devices, max_owned = _SR_SIZES[size]
    names = [f"node-{i}" for i in range(max_nodes)]
    device_names = [f"gpu-{d}" for d in range(devices)]
    shared = [_allocated(f"shared-{n}", n, device_names, None) for n in names]
    owned = [
        [
            _allocated(f"owned-{n}-{j}", n, device_names[:1], f"pod-{n}-{j}")
            for j in range(max_owned)
        ]
        for n in names
    ]
    cluster = ClusterSnapshot(store)
    cluster.dra.add_device_classes([generated.device_class()])
    store.checkpoint()
    forks = commits = reverts = 0
    gc.collect()
    began = time.perf_counter()
    parts: dict[str, float] = {}
    for config in configurations(size):
        started = time.perf_counter()
        cluster.fork(config.name)
        forks += 1
        cluster.dra.add_claims(shared)
        for i in range(config.nodes):
            cluster.dra.add_claims(owned[i])
        base = cluster.depth
        for i in range(config.nodes):
            node = names[i]
            for _ in range(config.forks):
                cluster.fork()
            cluster.add_node(_node(node), slices=[generated.gpu_slice(node, devices)])
            for p in range(config.shared):
                cluster.schedule_pod(_pod(f"pod-{node}-shared-{p}", f"shared-{node}"), node)
            for p in range(config.owned):
                cluster.schedule_pod(_pod(f"pod-{node}-{p}", f"owned-{node}-{p}"), node)
            for _ in range(config.commits):
                cluster.commit()
            for _ in range(config.reverts):
                cluster.revert()
        forks += config.nodes * config.forks
        commits += config.nodes * config.commits
        reverts += config.nodes * config.reverts
        parts[config.name] = time.perf_counter() - started  # (its check and clean-up not)
        _check_configuration(cluster, config, base)
        while cluster.depth:
            cluster.revert()
            reverts += 1
    store.checkpoint()
    seconds = time.perf_counter() - began
    return Counted(seconds, store.state_digest(), forks, commits, reverts, parts)


def _check_configuration(cluster: ClusterSnapshot, config: Config, base: int) -> None:
    """What the configuration's operations leave (a Revert drops the node's layer: its node
    and pods go; every configuration leaves the layers above it or none)."""
    kept = config.nodes if config.reverts == 0 else 0
    depth = base + config.nodes * (config.forks - config.commits - config.reverts)
    found = (len(cluster.node_names()), cluster.pod_count(), cluster.depth)
    wanted = (kept, kept * (config.shared + config.owned), depth)
    if found != wanted:
        raise AssertionError(
            f"{config.name}: (nodes, pods, depth) {found}, upstream's operations leave {wanted}"
        )


# -- BenchmarkBinpackingEstimateDRA ------------------------------------------------------------

_BINPACK_DEVICES = 8
_BINPACK_CLAIMS_PER_NODE = 4
BINPACK_SIZES: dict[str, dict[str, tuple[int, int]]] = {  # (nodes, pending pods)
    "binpacking-dra-1000": {"full": (1000, 200), "quick": (200, 40), "tiny": (5, 10)},
    "binpacking-dra-5000": {"full": (5000, 500), "quick": (1000, 100), "tiny": (10, 20)},
}


def _fleet_node(name: str) -> dict[str, Any]:
    amounts = {"cpu": "16", "memory": f"{64000 * 2**20}", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": dict(amounts), "allocatable": dict(amounts)},
    }


def _pending(index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A pending pod and the unallocated one-device claim it owns."""
    pod_name, claim_name = f"pending-pod-{index}", f"pending-{index}"
    pod = _pod(pod_name, claim_name)
    pod["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "500m", "memory": "1000"}
    claim = _allocated(claim_name, "unused", ["unused"], pod_name)
    del claim["status"]
    claim["spec"]["devices"]["requests"][0]["name"] = "req"
    return pod, claim


def binpacking_estimate(store: VersionedStore, name: str, size: str) -> Counted:
    nodes, pending_count = BINPACK_SIZES[name][size]
    cluster = ClusterSnapshot(store)
    cluster.dra.add_device_classes([generated.device_class()])
    for n in range(nodes):
        node = f"node-{n}"
        cluster.add_node(_fleet_node(node), slices=[generated.gpu_slice(node, _BINPACK_DEVICES)])
    cluster.dra.add_claims(
        _allocated(f"running-{n}-{c}", f"node-{n}", [f"gpu-{c}"], None)
        for n in range(nodes)
        for c in range(_BINPACK_CLAIMS_PER_NODE)
    )
    pending = [_pending(i) for i in range(pending_count)]
    cluster.dra.add_claims(claim for _, claim in pending)
    store.checkpoint()
    gc.collect()
    began = time.perf_counter()
    cluster.fork("estimate")
    added = placed = 0
    newest: str | None = None
    for pod, _ in pending:
        if newest is not None and cluster.schedule_pod_anywhere(pod, [newest]) is not None:
            placed += 1
            continue
        newest = f"template-{added}"
        cluster.add_node(
            _fleet_node(newest), slices=[generated.gpu_slice(newest, _BINPACK_DEVICES)]
        )
        if cluster.schedule_pod_anywhere(pod, [newest]) is None:
            raise AssertionError(f"{name}: {pod['metadata']['name']} fits no new node")
        added += 1
        placed += 1
    cluster.revert()
    seconds = time.perf_counter() - began
    wanted = -(-pending_count // _BINPACK_DEVICES)
    if (added, placed) != (wanted, pending_count):
        raise AssertionError(
            f"{name}: {added} nodes for {placed} pods, devices bind at {wanted} for {pending_count}"
        )
    return Counted(seconds, store.state_digest(), 1, 0, 1)


def run(name: str, store: VersionedStore, size: str) -> Counted:
    if name == "schedule-revert-configs":
        return schedule_revert_configs(store, size)
    return binpacking_estimate(store, name, size)
