"""A node's utilization on upstream's own tests (kubernetes/autoscaler a16f0ae8):
``simulator/utilization/info_test.go`` (TestCalculate, TestCalculateWithDynamicResources) and
``simulator/dynamicresources/utils/utilization_test.go`` (the DRA pools). Each test names the
upstream test (and case) it follows.

drasnap has no ``--ignore-daemonsets-utilization`` / ``--ignore-mirror-pods-utilization`` (both
default to false upstream), no GPU config and DRA always on: the cases with those set are left
out. Upstream's ``assert.InEpsilon(want, got, 0.01)`` is ``pytest.approx(want, rel=0.01)``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from drasnap.snapshot.autoscaler.utilization import (
    Utilization,
    UtilizationError,
    highest_dra_utilization,
    node_utilization,
    pool_utilization,
)

from tests.snapshot.autoscaler.builders import build_node, build_pod, owner, snapshot
from tests.snapshot.dra_builders import allocated, claim, result

Obj = dict[str, Any]

# -- TestCalculate ----------------------------------------------------------------------------


def _pod(name: str) -> Obj:
    return build_pod(name, 100, 200000)  # BuildTestPod("p1", 100, 200000)


def _no_requests(name: str) -> Obj:
    return build_pod(name)  # BuildTestPod("p2", -1, -1)


def _node(name: str = "node1", mem: int = 2000000) -> Obj:
    return build_node(name, 2000, mem)  # BuildTestNode("node1", 2000, 2000000)


def test_calculate_cpu_and_memory() -> None:
    # TestCalculate: node1 with pod, pod, pod2: memory 400000/2000000 wins over cpu 200/2000.
    cs = snapshot(_node(), pods=[_pod("p1"), _pod("p1b"), _no_requests("p2")])
    found = node_utilization(cs, "node1")
    assert found.value == pytest.approx(2.0 / 10, rel=0.01)
    assert found.resource == "memory"
    assert found.cpu == 0.1


def test_calculate_fails_without_memory() -> None:
    # TestCalculate: node2 = BuildTestNode("node2", 2000, -1): an error.
    cs = snapshot(_node("node2", mem=-1), pods=[_pod("p1"), _pod("p1b"), _no_requests("p2")])
    with pytest.raises(UtilizationError):
        node_utilization(cs, "node2")


def test_calculate_counts_init_containers() -> None:
    # TestCalculate: node3 with pod, podWithInitContainers (a restartable 50m init container
    # counts, a non-restartable 5m one does not) and podWithLargeNonRestartableInitContainers
    # (its 50000m init container overwhelms the pod's 100m).
    with_init = _pod("p-init")
    with_init["spec"]["initContainers"] = [
        {
            "name": "sidecar",
            "image": "pause",
            "restartPolicy": "Always",
            "resources": {"requests": {"cpu": "50m", "memory": "100000"}},
        },
        {
            "name": "once",
            "image": "pause",
            "resources": {"requests": {"cpu": "5m", "memory": "100"}},
        },
    ]
    large_init = _pod("p-large-init")
    large_init["spec"]["initContainers"] = [
        {
            "name": "once",
            "image": "pause",
            "resources": {"requests": {"cpu": "50000m", "memory": "100000000"}},
        }
    ]
    # The node is too small for these pods; add_node takes them as they run (AddNodeInfo).
    cs = snapshot(_node("node3"), pods=[_pod("p1"), with_init, large_init])
    found = node_utilization(cs, "node3")
    assert found.value == pytest.approx(50.25, rel=0.01)
    assert found.cpu == pytest.approx(25.125, rel=0.005)


def test_calculate_counts_daemonset_and_mirror_pods() -> None:
    # TestCalculate with skipDaemonSetPods and skipMirrorPods false (upstream's defaults):
    # pod, pod2, daemonSetPod3 and pod, pod2, mirrorPod both give 2/10.
    ds = build_pod("p3", 100, 200000, owners=owner("ds", "DaemonSet"))
    mirror = build_pod("p4", 100, 200000, annotations={"kubernetes.io/config.mirror": ""})
    for extra in (ds, mirror):
        cs = snapshot(_node(), pods=[_pod("p1"), _no_requests("p2"), extra])
        assert node_utilization(cs, "node1").value == pytest.approx(2.0 / 10, rel=0.01)


@pytest.mark.xfail(
    strict=True,
    reason="upstream info.go skips pods terminating past their grace period "
    "(drain.IsPodLongTerminating at the loop's time): drasnap has no current time and counts them",
)
def test_calculate_leaves_out_long_terminating_pods() -> None:
    # TestCalculate: terminatedPod, deleted 10 minutes before testTime (default grace 30s).
    terminated = build_pod(
        "podTerminated", 100, 200000, metadata={"deletionTimestamp": "2020-12-18T16:50:00Z"}
    )
    cs = snapshot(_node(), pods=[_pod("p1"), _pod("p1b"), _no_requests("p2"), terminated])
    assert node_utilization(cs, "node1").value == pytest.approx(2.0 / 10, rel=0.01)


# -- TestCalculateWithDynamicResources ---------------------------------------------------------

FOO = "driver.foo.com"
BAR = "driver.bar.com"


def _slice(name: str, driver: str, pool: str, devices: int, count: int = 1) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name, "uid": name},
        "spec": {
            "driver": driver,
            "nodeName": "node",
            "pool": {"name": pool, "generation": 0, "resourceSliceCount": count},
            "devices": [{"name": f"dev{i}"} for i in range(1, devices + 1)],
        },
    }


SLICE1 = _slice("node-slice1", FOO, "node-pool1", 5)
SLICE2 = _slice("node-slice2", BAR, "node-pool2", 5)
INCOMPLETE = _slice("incompleteResourceSlice", FOO, "node-pool3", 3, count=999)

POD1_CLAIM1 = allocated(
    claim("pod1-claim1"),
    result(FOO, "node-pool1", "dev1", "req1"),
    result(FOO, "node-pool1", "dev2", "req2"),
    result(FOO, "node-pool1", "dev3", "req3"),
)
POD1_CLAIM2 = allocated(claim("pod1-claim2"), result(BAR, "node-pool2", "dev1", "req4"))
POD2_CLAIM = allocated(
    claim("pod2-claim"),
    result(FOO, "node-pool1", "dev4", "req1"),
    result(BAR, "node-pool2", "dev2", "req2"),
    result(BAR, "node-pool2", "dev3", "req3"),
)


def _dra_pod(name: str, *claims: Obj) -> Obj:
    """BuildTestPod(name, 250, 0, WithNodeName("node")) holding ``claims`` (by name)."""
    refs = [
        {"name": c["metadata"]["name"], "resourceClaimName": c["metadata"]["name"]} for c in claims
    ]
    return build_pod(name, 250, 0, resourceClaims=refs) if refs else build_pod(name, 250, 0)


def _dra_node(slices: list[Obj], pods: list[Obj], claims: list[Obj]) -> Utilization:
    node = build_node("node", 1000, 1000)
    cs = snapshot()
    cs.dra.add_claims(copy.deepcopy(claims))
    cs.add_node(node, slices=slices, pods=pods)
    return node_utilization(cs, "node")


POD1 = _dra_pod("pod1", POD1_CLAIM1, POD1_CLAIM2)
POD2 = _dra_pod("pod2", POD2_CLAIM)
ALL_CLAIMS = [POD1_CLAIM1, POD1_CLAIM2, POD2_CLAIM]


def test_no_dra_resources() -> None:
    # "no DRA resources, DRA enabled -> normal resource util returned"
    found = _dra_node([], [_dra_pod("pod1"), _dra_pod("pod2")], [])
    assert found == Utilization(0.5, "cpu", cpu=0.5, memory=0.0)


def test_dra_slices_without_claims() -> None:
    # "DRA slices present, but no claims, DRA enabled -> DRA util returned despite being lower
    # than CPU"
    found = _dra_node([SLICE1], [_dra_pod("pod1"), _dra_pod("pod2")], [])
    assert found == Utilization(0.0, f"{FOO}/node-pool1", dra=0.0)


def test_dra_pool2_higher() -> None:
    # "DRA slices and claims present, DRA enabled -> DRA util returned despite being lower
    # than CPU": pod2 only, node-pool2 2/5.
    found = _dra_node([SLICE1, SLICE2], [POD2], [POD2_CLAIM])
    assert found == Utilization(0.4, f"{BAR}/node-pool2", dra=0.4)


def test_dra_pool1_higher() -> None:
    # "DRA slices and claims present, DRA enabled -> DRA util returned": node-pool1 4/5.
    found = _dra_node([SLICE1, SLICE2], [POD1, POD2], ALL_CLAIMS)
    assert found == Utilization(0.8, f"{FOO}/node-pool1", dra=0.8)


def test_dra_incomplete_pool_is_an_error() -> None:
    # "DRA slices and claims present, DRA enabled, error while calculating DRA util -> error"
    with pytest.raises(UtilizationError):
        _dra_node([SLICE1, SLICE2, INCOMPLETE], [POD1, POD2], ALL_CLAIMS)


# -- dynamicresources/utils/utilization_test.go ------------------------------------------------


@pytest.mark.parametrize(
    ("allocated_names", "unallocated", "want"),
    [
        pytest.param([], [], 0.0, id="no devices"),
        pytest.param([], ["dev-0", "dev-1"], 0.0, id="no allocated devices"),
        pytest.param(["dev-0", "dev-1"], [], 1.0, id="all devices allocated"),
        pytest.param(["dev-0"], ["dev-1", "dev-2"], 1.0 / 3.0, id="partial allocation"),
    ],
)
def test_atomic_devices_pool_utilization(
    allocated_names: list[str], unallocated: list[str], want: float
) -> None:
    # TestCalculateAtomicDevicesPoolUtilization (exact equality, as upstream's `!=`).
    devices = [{"name": n} for n in [*allocated_names, *unallocated]]
    pool = _slice("s", FOO, "pool1", 0)
    pool["spec"]["devices"] = devices
    assert pool_utilization([pool], set(allocated_names)) == want


def _partitionable_slices(pool: str, partitions: int, *gpus: str) -> list[Obj]:
    """``testResourceSlicesWithPartitionableDevices(foo, pool, "node", 1, partitions, 2, gpus)``:
    per gpu, ``partitions`` partitions of 10Gi/100m and the whole gpu, from a counter set of
    10Gi/100m per partition, in a second slice."""

    def consumes(gpu: str, memory: str, cpu: str) -> list[Obj]:
        counters = {"memory": {"value": memory}, "cpu": {"value": cpu}}
        return [{"counterSet": f"{gpu}-counter-set", "counters": counters}]

    devices: list[Obj] = []
    for gpu in gpus:
        devices += [
            {"name": f"{gpu}-partition-{i}", "consumesCounters": consumes(gpu, "10Gi", "100m")}
            for i in range(partitions)
        ]
        whole = consumes(gpu, f"{10 * partitions}Gi", f"{100 * partitions}m")
        devices.append({"name": gpu, "consumesCounters": whole})
    counter_sets = [
        {
            "name": f"{gpu}-counter-set",
            "counters": {
                "memory": {"value": f"{10 * partitions}Gi"},
                "cpu": {"value": f"{100 * partitions}m"},
            },
        }
        for gpu in gpus
    ]
    name = f"{FOO}-{pool}-slice"
    spec = {
        "driver": FOO,
        "nodeName": "node",
        "pool": {"name": pool, "generation": 1, "resourceSliceCount": 2},
    }
    return [
        {"metadata": {"name": name}, "spec": {**copy.deepcopy(spec), "devices": devices}},
        {
            "metadata": {"name": f"{name}-counters"},
            "spec": {**spec, "sharedCounters": counter_sets},
        },
    ]


def _custom_claim(pod: str, pool: str, devices: list[str]) -> Obj:
    """``testPodsWithCustomClaims``: one claim holding ``devices`` of ``pool``."""
    results = [result(FOO, pool, d, f"request-{i}") for i, d in enumerate(devices)]
    return allocated(claim(f"{pod}-{FOO}-{pool}-pod-claim"), *results)


@pytest.mark.parametrize(
    ("slices", "claims", "want_name", "want"),
    [
        pytest.param(
            _partitionable_slices("pool1", 4, "gpu-0"),
            [_custom_claim("pod", "pool1", ["gpu-0-partition-0", "gpu-0-partition-1"])],
            f"{FOO}/pool1",
            0.5,
            id="partitionable devices, 2/4 partitions used",
        ),
        pytest.param(
            _partitionable_slices("pool1", 4, "gpu-0"),
            [
                _custom_claim("pod-0", "pool1", ["gpu-0-partition-0"]),
                _custom_claim("pod-1", "pool1", ["gpu-0-partition-1"]),
            ],
            f"{FOO}/pool1",
            0.5,
            id="partitionable devices, multiple pods, 2/4 partitions used",
        ),
        pytest.param(
            [
                *_partitionable_slices("pool0", 4, "gpu-0"),
                *_partitionable_slices("pool1", 4, "gpu-0"),
                *_partitionable_slices("pool2", 4, "gpu-1"),
            ],
            [
                _custom_claim("pod0", "pool0", ["gpu-0-partition-0", "gpu-0-partition-1"]),
                _custom_claim("pod1", "pool1", ["gpu-0"]),
            ],
            f"{FOO}/pool1",
            1.0,
            id="partitionable devices, multiple pools",
        ),
        pytest.param(
            _partitionable_slices("pool1", 4, "gpu-0", "gpu-1"),
            [_custom_claim("pod", "pool1", ["gpu-0-partition-0", "gpu-0-partition-1"])],
            f"{FOO}/pool1",
            0.25,
            id="multi-GPU partitionable devices, 2/8 partitions used",
        ),
    ],
)
def test_highest_dra_utilization_partitionable(
    slices: list[Obj], claims: list[Obj], want_name: str, want: float
) -> None:
    # TestDynamicResourceUtilization (HighestDynamicResourceUtilization), exact equality as
    # upstream's `!=`: counters are compared as exact ratios (AsApproximateFloat64), 100m of
    # 400m is 0.25.
    assert highest_dra_utilization(slices, claims) == (want_name, want)


def test_multi_counter_partitionable_devices() -> None:
    # TestDynamicResourceUtilization "multi-counter partitionable devices": a partition
    # consuming 1Gi of 40Gi and 500m of a cpu counter whose total is 1: 0.5.
    slices = _partitionable_slices("pool1", 4, "gpu-0")
    slices[0]["spec"]["devices"].append(
        {
            "name": "gpu-0-uneven-partition",
            "consumesCounters": [
                {
                    "counterSet": "gpu-0-counter-set",
                    "counters": {"memory": {"value": "1Gi"}, "cpu": {"value": "500m"}},
                }
            ],
        }
    )
    slices[1]["spec"]["sharedCounters"][0]["counters"]["cpu"] = {"value": "1"}
    claims = [_custom_claim("pod", "pool1", ["gpu-0-uneven-partition"])]
    assert highest_dra_utilization(slices, claims) == (f"{FOO}/pool1", 0.5)


@pytest.mark.xfail(
    strict=True,
    reason="upstream utilization.go calculatePoolUtil measures a pool with shared counters by "
    "its counters only (atomic devices in it count for nothing); drasnap averages the atomic "
    "and partitionable shares weighted by count",
)
def test_a_pool_with_counters_is_measured_by_its_counters_only() -> None:
    # calculatePoolUtil at a16f0ae8: isPartitionablePool (a slice with sharedCounters) takes
    # calculatePartitionableDevicesPoolUtilization over every device; getUniquePartitionable
    # DevicesCount counts counter sets only ("mixed atomic and partitionable devices": 1).
    slices = _partitionable_slices("pool1", 4, "gpu-0")
    slices[0]["spec"]["devices"].append({"name": "cpu-0"})  # atomic
    # The atomic device alone: no counter consumed, 0; with a partition: 100m of 400m, 0.25.
    assert pool_utilization(slices, {"cpu-0"}) == 0.0
    assert pool_utilization(slices, {"cpu-0", "gpu-0-partition-0"}) == 0.25


def _slices(driver: str, pool: str, generation: int, devices: int, per_slice: int) -> list[Obj]:
    """``testResourceSlices(driver, pool, "node", generation, devices, per_slice)``."""
    count = devices // per_slice
    return [
        {
            "metadata": {"name": f"{driver}-{pool}-slice-{s}-gen{generation}"},
            "spec": {
                "driver": driver,
                "nodeName": "node",
                "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
                "devices": [
                    {"name": f"{driver}-{pool}-dev-{s * per_slice + d}"} for d in range(per_slice)
                ],
            },
        }
        for s in range(count)
    ]


def _claims(
    driver: str, pool: str, devices: int, per_pod: int, admin: bool | list[bool] = False
) -> list[Obj]:
    """The claims of ``testPodsWithClaims(driver, pool, "node", devices, per_pod, admin, 0)``:
    one claim per device, devices counted from 0 on each call; ``admin`` a list is
    ``testPodsWithMixedAdminAccessClaims``' pattern, per claim of a pod."""
    out = []
    for index in range(devices):
        pattern = admin if isinstance(admin, list) else [admin] * per_pod
        taken = result(driver, pool, f"{driver}-{pool}-dev-{index}", f"request-{index % per_pod}")
        taken["adminAccess"] = pattern[index % per_pod]
        out.append(allocated(claim(f"{driver}-{pool}-claim-{index}"), taken))
    return out


@pytest.mark.parametrize(
    ("slices", "claims", "want"),
    [
        pytest.param(
            _slices(FOO, "pool1", 0, 10, 1),
            _claims(FOO, "pool1", 6, 1),
            (f"{FOO}/pool1", 0.6),
            id="single slice, single pool, 6/10 devices used",
        ),
        pytest.param(
            [
                *_slices(FOO, "pool1", 0, 10, 2),
                *_slices(FOO, "pool2", 0, 20, 5),
                *_slices(BAR, "pool1", 0, 8, 2),
            ],
            [
                *_claims(FOO, "pool1", 6, 2),
                *_claims(FOO, "pool2", 18, 3),
                *_claims(BAR, "pool1", 2, 1),
            ],
            (f"{FOO}/pool2", 0.9),
            id="multiple slices, multiple pools, multiple drivers",
        ),
        pytest.param(
            [
                *_slices(FOO, "pool1", 0, 10, 2),
                *_slices(FOO, "pool1", 1, 20, 2),
                *_slices(FOO, "pool1", 2, 30, 2),
            ],
            _claims(FOO, "pool1", 6, 2),
            (f"{FOO}/pool1", 0.2),
            id="old pool generations are ignored",
        ),
        pytest.param(
            [
                *_slices(FOO, "pool1", 0, 10, 2)[:3],
                *_slices(FOO, "pool1", 1, 20, 2)[:7],
                *_slices(FOO, "pool1", 2, 30, 2),
            ],
            _claims(FOO, "pool1", 6, 2),
            (f"{FOO}/pool1", 0.2),
            id="incomplete older pool generations are not an error",
        ),
        pytest.param(
            _slices(FOO, "pool1", 0, 10, 1),
            _claims(FOO, "pool1", 6, 1, admin=True),
            (f"{FOO}/pool1", 0.0),
            id="Single Pod with AdminAccess ResourceClaim doesn't count for utilization",
        ),
        pytest.param(
            _slices(FOO, "pool1", 0, 10, 1),
            [*_claims(FOO, "pool1", 6, 1, admin=True), *_claims(FOO, "pool1", 6, 1)],
            (f"{FOO}/pool1", 0.6),
            id="Multiple Pods with AdminAccess ResourceClaims don't count for utilization",
        ),
        pytest.param(
            _slices(FOO, "pool1", 0, 10, 1),
            _claims(FOO, "pool1", 6, 6, admin=[True, True, False, False, False, False]),
            (f"{FOO}/pool1", 0.4),
            id="Pod with mixed AdminAccess requests counts only non-admin",
        ),
    ],
)
def test_dynamic_resource_utilization(
    slices: list[Obj], claims: list[Obj], want: tuple[str, float]
) -> None:
    # TestDynamicResourceUtilization (HighestDynamicResourceUtilization)
    assert highest_dra_utilization(slices, claims) == want


def test_dynamic_resource_utilization_incomplete_newest_generation() -> None:
    # TestDynamicResourceUtilization "incomplete newest pool generation is an error"
    slices = [
        *_slices(FOO, "pool1", 0, 10, 2),
        *_slices(FOO, "pool1", 1, 20, 2),
        *_slices(FOO, "pool1", 2, 30, 2)[:14],
    ]
    with pytest.raises(UtilizationError):
        highest_dra_utilization(slices, _claims(FOO, "pool1", 6, 2))
