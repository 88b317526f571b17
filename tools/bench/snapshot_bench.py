"""``drasnap bench snapshot``: upstream's DRA snapshot micro-benchmarks, per backend
(``simulator/dynamicresources/snapshot`` of PR #8090 in kubernetes/autoscaler).

At 1k and 10k claims (allocated, one GPU each, 8 per node, reserved by their pods): get a claim,
list the claims, list all allocated devices, read a node's slices, fork+revert, and reserve +
unreserve a pod's claims (a pod owning one claim and sharing another). Median µs per operation
on MemoryStore and on the SQLite Store, and their ratio.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from drasnap.snapshot import DraSnapshot, KubeObject, claims_from_templates
from drasnap.snapshot.simulation import generated
from drasnap.store import MemoryStore, Store
from drasnap.tools.bench.store_bench import Row
from drasnap.tools.bench.timing import per_op_us
from drasnap.tools.progress import Milestones


def _objects(claims: int) -> tuple[list[KubeObject], list[KubeObject], list[KubeObject]]:
    rng = random.Random(claims)
    templates = {f"{generated.NAMESPACE}/{generated.TEMPLATE_NAME}": generated.claim_template()}
    out_claims: list[KubeObject] = []
    slices: list[KubeObject] = []
    pods: list[KubeObject] = []
    for n in range((claims + 7) // 8):
        node = f"node-{n:05d}"
        slices.append(generated.gpu_slice(node, 8))
        for j in range(8):
            if len(out_claims) == claims:
                break
            pod, (claim,) = claims_from_templates(generated.pod(f"{node}-pod-{j}", rng), templates)
            reservation = {"resource": "pods", "name": pod["metadata"]["name"]}
            reservation["uid"] = pod["metadata"]["uid"]
            out_claims.append(
                {
                    **claim,
                    "status": {
                        "allocation": generated.allocation(node, f"gpu-{j}"),
                        "reservedFor": [reservation],
                    },
                }
            )
            pods.append(pod)
    shared = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default", "uid": "shared-uid"},
        "spec": {"devices": {"requests": []}},
    }
    out_claims.append(shared)
    return out_claims, slices, pods


@contextmanager
def _snapshots(claims: int) -> Iterator[tuple[DraSnapshot, DraSnapshot, list[KubeObject]]]:
    claim_objs, slices, pods = _objects(claims)
    with tempfile.TemporaryDirectory() as tmp:
        memory = DraSnapshot.from_objects(
            MemoryStore(), claims=claim_objs, slices=slices, classes=[generated.device_class()]
        )
        store = Store.open(Path(tmp) / "bench.db")
        durable = DraSnapshot.from_objects(
            store, claims=claim_objs, slices=slices, classes=[generated.device_class()]
        )
        store.checkpoint()
        try:
            yield memory, durable, pods
        finally:
            store.close()


def run(quick: bool = False, progress: Milestones = lambda _: None) -> list[Row]:
    rows: list[Row] = []
    for size in (1_000, 10_000):
        progress(f"snapshot micro-operations at {size:,} claims")
        rows.extend(_rows_at(size, quick))
    return rows


def _rows_at(size: int, quick: bool) -> list[Row]:
    rows: list[Row] = []
    with _snapshots(size) as (memory, durable, pods):
        pod = pods[len(pods) // 2]
        sharing = {
            **pod,
            "spec": {
                **pod["spec"],
                "resourceClaims": [
                    *pod["spec"]["resourceClaims"],
                    {"name": "shared", "resourceClaimName": "shared"},
                ],
            },
        }
        node = f"node-{(len(pods) // 2) // 8:05d}"
        number = 2_000 if quick else 20_000

        def measure(op: Callable[[DraSnapshot], Callable[[int], None]], n: int) -> Row:
            return Row("", per_op_us(op(memory), number=n), per_op_us(op(durable), number=n))

        def get(s: DraSnapshot) -> Callable[[int], None]:
            name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]

            def go(k: int) -> None:
                for _ in range(k):
                    s.resource_claims.get("default", name)

            return go

        def list_claims(s: DraSnapshot) -> Callable[[int], None]:
            def go(k: int) -> None:
                for _ in range(k):
                    s.resource_claims.list()

            return go

        def allocated(s: DraSnapshot) -> Callable[[int], None]:
            def go(k: int) -> None:
                for _ in range(k):
                    s.resource_claims.list_all_allocated_devices()

            return go

        def node_slices(s: DraSnapshot) -> Callable[[int], None]:
            def go(k: int) -> None:
                for _ in range(k):
                    s.node_resource_slices(node)

            return go

        def fork_revert(s: DraSnapshot) -> Callable[[int], None]:
            def go(k: int) -> None:
                for _ in range(k):
                    s.fork()
                    s.revert()

            return go

        def reserve_unreserve(s: DraSnapshot) -> Callable[[int], None]:
            def go(k: int) -> None:
                for _ in range(k):
                    s.fork()
                    s.reserve_pod_claims(sharing)
                    s.unreserve_pod_claims(sharing)
                    s.revert()

            return go

        for label, op, n in (
            ("get claim", get, number * 5),
            ("list claims", list_claims, max(20, number // (size // 50))),
            ("list all allocated devices", allocated, number * 5),
            ("node resource slices", node_slices, number * 5),
            ("fork+revert", fork_revert, number * 5),
            ("fork, reserve+unreserve a pod's 2 claims, revert", reserve_unreserve, number),
        ):
            row = measure(op, n)
            row.operation = f"{label}, {size:,} claims"
            rows.append(row)
    return rows
