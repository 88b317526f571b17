"""What a pod asks of a node: PodRequests (containers, init containers, sidecars, pod-level
resources, overhead), resource names, and what placed pods count for."""

from __future__ import annotations

from typing import Any

import pytest
from drasnap.snapshot.scheduling import (
    Requests,
    compute_pod_requests,
    dra_extended_resource_classes,
    extended_resource_requests,
    node_allocatable_requests,
)
from drasnap.snapshot.scheduling.resources import is_extended_resource_name, is_scalar_resource_name

GI = 1024**3


def _c(cpu: str | None = None, memory: str | None = None, **extra: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: dict[str, Any] = {
        "name": extra.pop("name", "c"),
        "resources": {"requests": requests},
    }
    container.update(extra)
    return container


def _sidecar(cpu: str) -> dict[str, Any]:
    return _c(cpu, restartPolicy="Always")


# (id, spec, expected cpu millicores, expected memory bytes)
SPEC_CASES = [
    # The example in upstream's computePodResourceRequest comment (noderesources/fit.go):
    # init containers 2/1G and 2/3G, containers 2/1G and 1/1G -> cpu 3, memory 3G.
    (
        "fit-go-doc-example",
        {
            "initContainers": [_c("2", "1G"), _c("2", "3G")],
            "containers": [_c("2", "1G"), _c("1", "1G")],
        },
        3000,
        3 * 10**9,
    ),
    # fit_test.go "init container fits because it's the max, not sum": 1m/1 + init 1m/1.
    ("init-max-not-sum", {"initContainers": [_c("1m", "1")], "containers": [_c("1m", "1")]}, 1, 1),
    # fit_test.go "too many resources fails due to highest init container cpu": init 3m, 2m.
    (
        "highest-init-container",
        {"initContainers": [_c("3m", "1"), _c("2m", "1")], "containers": [_c("1m", "1")]},
        3,
        1,
    ),
    # KEP-753 formula, by hand: a sidecar runs beside the containers (1 + 1) and beside the
    # init containers after it: init 3 after sidecar 1 needs 4 > 2.
    (
        "sidecar-before-init",
        {"initContainers": [_sidecar("1"), _c("3")], "containers": [_c("1")]},
        4000,
        0,
    ),
    # Sidecars 1 and 3 around an init of 2: containers 1 + sidecars 4 = 5; init peak 3 and 4.
    (
        "sidecars-around-init",
        {"initContainers": [_sidecar("1"), _c("2"), _sidecar("3")], "containers": [_c("1")]},
        5000,
        0,
    ),
    # An init container after the sidecars needs its own requests plus all of them.
    (
        "init-after-sidecars",
        {"initContainers": [_sidecar("1"), _sidecar("1"), _c("5")], "containers": [_c("1")]},
        7000,
        0,
    ),
    # fit_test.go "requests + overhead does not fit for memory": 1m/1 + overhead 1m/15.
    (
        "overhead",
        {"containers": [_c("1m", "1")], "overhead": {"cpu": "1m", "memory": "15"}},
        2,
        16,
    ),
    # fit_test.go "pod-level cpu resource not fit": pod-level 7m/2 replaces containers' 1m/1.
    (
        "pod-level-requests",
        {"containers": [_c("1m", "1")], "resources": {"requests": {"cpu": "7m", "memory": "2"}}},
        7,
        2,
    ),
    # Pod-level resources replace only what they name; overhead still adds.
    (
        "pod-level-cpu-only-plus-overhead",
        {
            "containers": [_c("1", "1Gi")],
            "resources": {"requests": {"cpu": "2"}},
            "overhead": {"cpu": "100m"},
        },
        2100,
        GI,
    ),
    # API defaulting: a container's limits stand in for its missing requests.
    (
        "limits-default-requests",
        {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]},
        2000,
        GI,
    ),
    # Quantities add exactly before rounding up once, as Go's Quantity.Add then Value.
    ("exact-sum", {"containers": [_c("1m", "500m"), _c("1m", "500m")]}, 2, 1),
    ("no-requests", {"containers": [{"name": "c"}]}, 0, 0),
]


@pytest.mark.parametrize(
    ("spec", "cpu", "memory"), [c[1:] for c in SPEC_CASES], ids=[c[0] for c in SPEC_CASES]
)
def test_pod_requests_as_the_scheduler_computes_them(
    spec: dict[str, Any], cpu: int, memory: int
) -> None:
    got = compute_pod_requests({"spec": spec})
    assert (got.cpu, got.memory, got.pods) == (cpu, memory, 1)


def test_scalar_resources_are_summed_and_maxed_like_cpu() -> None:
    # fit_test.go "extended resource allocatable enforced for multiple containers" (3 + 3) and
    # "... admits multiple init containers" (max of 3 and 3); hugepages and ephemeral storage.
    gpu, huge = "example.com/aaa", "hugepages-2Mi"
    spec = {
        "containers": [
            {"name": "a", "resources": {"requests": {gpu: "3", huge: "2Mi"}}},
            {"name": "b", "resources": {"requests": {gpu: "3", "ephemeral-storage": "1Gi"}}},
        ],
        "initContainers": [{"name": "i", "resources": {"requests": {gpu: "4"}}}],
    }
    got = compute_pod_requests({"spec": spec})
    assert got.scalars == {gpu: 6, huge: 2 * 1024**2}
    assert got.ephemeral_storage == GI


def test_names_the_scheduler_does_not_check_are_dropped() -> None:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"gpu": "1", "cpu": "1"}}}]}
    assert compute_pod_requests({"spec": spec}) == Requests(cpu=1000, pods=1)


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("example.com/gpu", True, True),
        ("nvidia.com/gpu", True, True),
        ("deviceclass.resource.kubernetes.io/gpu", False, True),  # kubernetes.io: native
        ("kubernetes.io/something", False, True),  # fit_test.go kubernetesIOResourceA
        ("hugepages-2Mi", False, True),
        ("attachable-volumes-aws-ebs", False, True),
        ("cpu", False, False),
        ("gpu", False, False),
        ("requests.example.com/gpu", False, False),
    ],
    ids=lambda v: str(v),
)
def test_resource_name_classes(name: str, extended: bool, scalar: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar


def _placed(
    containers: list[dict[str, Any]], statuses: list[dict[str, Any]], **status: Any
) -> dict[str, Any]:
    return {
        "spec": {"nodeName": "n", "containers": containers},
        "status": {"containerStatuses": statuses, **status},
    }


PLACED_CASES = [
    # Resized up, allocated but not actuated yet: the allocation counts.
    (
        "allocated-above-spec",
        _placed([_c("1", name="a")], [{"name": "a", "allocatedResources": {"cpu": "2"}}]),
        2000,
    ),
    # Resized down in the spec, still running with more: the actuated requests count.
    (
        "actuated-above-spec",
        _placed(
            [_c("1", name="a")],
            [
                {
                    "name": "a",
                    "allocatedResources": {"cpu": "1"},
                    "resources": {"requests": {"cpu": "3"}},
                }
            ],
        ),
        3000,
    ),
    # An infeasible resize: the spec is not what runs; allocated and actuated count.
    (
        "infeasible-resize",
        _placed(
            [_c("4", name="a")],
            [{"name": "a", "allocatedResources": {"cpu": "1"}}],
            conditions=[{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
        ),
        1000,
    ),
    ("no-status", _placed([_c("1", name="a")], []), 1000),
]


@pytest.mark.parametrize(
    ("pod", "cpu"), [c[1:] for c in PLACED_CASES], ids=[c[0] for c in PLACED_CASES]
)
def test_placed_pods_count_their_status_resources(pod: dict[str, Any], cpu: int) -> None:
    assert compute_pod_requests(pod, use_status=True).cpu == cpu


@pytest.mark.parametrize(
    ("requests", "cpu", "memory"),
    [
        ({"cpu": "1", "memory": "1Gi"}, 1000, GI),
        ({"cpu": "250m"}, 250, 0),
        ({"memory": "129Mi"}, 0, 129 * 2**20),
        ({}, 0, 0),
        ({"cpu": "0.1"}, 100, 0),
    ],
    ids=["cpu-memory", "millicpu", "memory", "none", "decimal-cpu"],
)
def test_plain_pods_take_the_simulation_hot_path(
    requests: dict[str, str], cpu: int, memory: int
) -> None:
    pod = {"spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}}
    mine = compute_pod_requests(pod)
    assert (mine.cpu, mine.memory, mine.pods) == (cpu, memory, 1)
    assert mine.only_cpu_memory


def test_node_allocatable_falls_back_to_capacity_and_default_pods() -> None:
    node = {"status": {"capacity": {"cpu": "2", "memory": "1Gi", "example.com/gpu": "4"}}}
    got = node_allocatable_requests(node)
    assert got == Requests(cpu=2000, memory=GI, pods=110, scalars={"example.com/gpu": 4})


def test_requests_add_and_subtract_by_name() -> None:
    a = Requests(cpu=1, pods=1, scalars={"x.io/a": 2})
    b = Requests(memory=5, pods=1, scalars={"x.io/b": 1})
    total = a + b
    assert (total.cpu, total.memory, total.pods) == (1, 5, 2)
    assert dict(total.scalars) == {"x.io/a": 2, "x.io/b": 1}
    assert (total - b).scalar("x.io/a") == 2 and (total - b).scalar("x.io/b") == 0
    assert total.to_json() == {"cpu": 1, "memory": 5, "pods": 2, "x.io/a": 2, "x.io/b": 1}


def test_dra_extended_resource_names_come_from_device_classes() -> None:
    # extended/deviceclassresolver_test.go TestDeviceClassMapping: explicit and implicit names.
    classes = [
        {"metadata": {"name": "class1"}, "spec": {"extendedResourceName": "example.com/gpu1"}},
        {"metadata": {"name": "class2"}, "spec": {"extendedResourceName": "example.com/gpu2"}},
        {"metadata": {"name": "class3"}, "spec": {}},
    ]
    assert dra_extended_resource_classes(classes) == {
        "example.com/gpu1": "class1",
        "example.com/gpu2": "class2",
        "deviceclass.resource.kubernetes.io/class1": "class1",
        "deviceclass.resource.kubernetes.io/class2": "class2",
        "deviceclass.resource.kubernetes.io/class3": "class3",
    }


def test_extended_resource_device_requests_are_named_as_upstream() -> None:
    # createDeviceRequests (dynamicresources.go): container index over init containers then
    # containers; request index in the container's sorted resource names.
    pod = {
        "spec": {
            "initContainers": [{"name": "i", "resources": {"requests": {"example.com/gpu": "1"}}}],
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "1", "example.com/gpu": "2"}}},
                {"name": "b", "resources": {"requests": {"example.com/other": "1"}}},
            ],
        }
    }
    got = extended_resource_requests(pod, {"example.com/gpu": "gpu-class"})
    assert [(r.name, r.device_class, r.count) for r in got] == [
        ("container-0-request-0", "gpu-class", 1),
        ("container-1-request-1", "gpu-class", 2),
    ]


MI = 1024**2


def test_non_zero_requests_fill_each_containers_missing_cpu_and_memory() -> None:
    # Scoring counts a container without a cpu/memory request at 100m / 200Mi
    # (NonMissingContainerRequests), init containers and sidecars included; limits stand in
    # for requests first, and an explicit 0 stays 0.
    pod = {
        "spec": {
            "containers": [_c(name="a"), _c(cpu="0", name="z")],
            "initContainers": [
                {"name": "s", "restartPolicy": "Always"},
                _c(cpu="500m", name="i"),
            ],
        }
    }
    # Actual: containers 0; sidecar s 0; init i 500m + sidecars 0 -> max(0, 500m) = 500m.
    actual = compute_pod_requests(pod)
    assert (actual.cpu, actual.memory) == (500, 0)
    # Non-zero cpu: a 100m + z 0 + sidecar s 100m = 200m; init i 500m + s 100m = 600m
    # -> 600m. Memory: a, z, s 200Mi each = 600Mi; i 200Mi + s 200Mi = 400Mi -> 600Mi.
    non_zero = compute_pod_requests(pod, non_zero=True)
    assert (non_zero.cpu, non_zero.memory) == (600, 600 * MI)
    limited = {"spec": {"containers": [{"name": "l", "resources": {"limits": {"cpu": "2"}}}]}}
    assert compute_pod_requests(limited, non_zero=True).cpu == 2000  # the limit, not 100m
