"""NodeResourcesFit: requests against allocatable minus what the node's pods use, with the
cases of upstream's noderesources/fit_test.go TestEnoughRequests (node: 10m cpu, 20 bytes of
memory, 32 pods, 5 example.com/aaa, 20 bytes ephemeral storage, 5 hugepages-2Mi)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from drasnap.snapshot.scheduling import (
    NodeResourcesFit,
    NodeResult,
    PodCycle,
    StaticCluster,
    default_plugins,
    pod_facts,
)

from tests.snapshot.scheduling.builders import node, reasons

A, B, HUGE = "example.com/aaa", "example.com/bbb", "hugepages-2Mi"
K8S_A = "kubernetes.io/something"
ALLOCATABLE = {
    "cpu": "10m",
    "memory": "20",
    "pods": "32",
    A: "5",
    "ephemeral-storage": "20",
    HUGE: "5",
}


def _req(cpu: int = 0, memory: int = 0, **scalars: int) -> dict[str, str]:
    out = {"cpu": f"{cpu}m", "memory": str(memory)}
    out.update({k.replace("__", "/").replace("_", "-"): str(v) for k, v in scalars.items()})
    return out


def _pod(
    *containers: dict[str, str], init: tuple[dict[str, str], ...] = (), **spec: Any
) -> dict[str, Any]:
    body = {
        "containers": [
            {"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(containers)
        ]
    }
    if init:
        body["initContainers"] = [
            {"name": f"i{i}", "resources": {"requests": r}} for i, r in enumerate(init)
        ]
    body.update(spec)
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": body}


def _run(
    pending: dict[str, Any],
    used: dict[str, str],
    dra: frozenset[str] = frozenset(),
    allocatable: Mapping[str, str] | None = None,
) -> NodeResult | None:
    existing = {
        "metadata": {"name": "existing", "namespace": "default"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": used}}]},
    }
    cluster = StaticCluster([node("n1", allocatable=allocatable or ALLOCATABLE)], [existing])
    cycle = PodCycle(default_plugins(dra_resource_names=lambda: dra), pending, cluster)
    return cycle.filter("n1")


def _insufficient(*names: str) -> tuple[str, ...]:
    return tuple(f"Insufficient {n}" for n in names)


CASES = [
    (
        "no-resources-requested-always-fits",
        {"spec": {"containers": [{"name": "c"}]}},
        _req(10, 20),
        None,
    ),
    ("too-many-resources-fails", _pod(_req(1, 1)), _req(10, 20), _insufficient("cpu", "memory")),
    (
        "fails-due-to-init-container-cpu",
        _pod(_req(1, 1), init=(_req(3, 1),)),
        _req(8, 19),
        _insufficient("cpu"),
    ),
    (
        "fails-due-to-highest-init-container-cpu",
        _pod(_req(1, 1), init=(_req(3, 1), _req(2, 1))),
        _req(8, 19),
        _insufficient("cpu"),
    ),
    (
        "fails-due-to-init-container-memory",
        _pod(_req(1, 1), init=(_req(1, 3),)),
        _req(9, 19),
        _insufficient("memory"),
    ),
    ("init-container-fits-max-not-sum", _pod(_req(1, 1), init=(_req(1, 1),)), _req(9, 19), None),
    ("both-resources-fit", _pod(_req(1, 1)), _req(5, 5), None),
    ("one-resource-memory-fits", _pod(_req(2, 1)), _req(9, 5), _insufficient("cpu")),
    ("one-resource-cpu-fits", _pod(_req(1, 2)), _req(5, 19), _insufficient("memory")),
    ("equal-edge-case", _pod(_req(5, 1)), _req(5, 19), None),
    ("equal-edge-case-for-init-container", _pod(_req(4, 1), init=(_req(5, 1),)), _req(5, 19), None),
    ("extended-resource-fits", _pod({A: "1"}), {}, None),
    (
        "extended-resource-capacity-enforced",
        _pod({**_req(1, 1), A: "10"}),
        {A: "0"},
        _insufficient(A),
    ),
    (
        "extended-resource-allocatable-enforced",
        _pod({**_req(1, 1), A: "1"}),
        {A: "5"},
        _insufficient(A),
    ),
    (
        "extended-resource-multiple-containers",
        _pod({**_req(1, 1), A: "3"}, {**_req(1, 1), A: "3"}),
        {A: "2"},
        _insufficient(A),
    ),
    (
        "extended-resource-admits-multiple-init-containers",
        _pod({}, init=({**_req(1, 1), A: "3"}, {**_req(1, 1), A: "3"})),
        {A: "2"},
        None,
    ),
    ("extended-resource-unknown-resource", _pod({**_req(1, 1), B: "1"}), {}, _insufficient(B)),
    (
        "kubernetes-io-resource-capacity-enforced",
        _pod({**_req(1, 1), K8S_A: "10"}),
        {},
        _insufficient(K8S_A),
    ),
    (
        "hugepages-capacity-enforced",
        _pod({**_req(1, 1), HUGE: "10"}),
        {HUGE: "0"},
        _insufficient(HUGE),
    ),
    (
        "hugepages-multiple-containers",
        _pod({**_req(1, 1), HUGE: "3"}, {**_req(1, 1), HUGE: "3"}),
        {HUGE: "2"},
        _insufficient(HUGE),
    ),
    ("overhead-fits", _pod(_req(1, 1), overhead={"cpu": "3m", "memory": "13"}), _req(5, 5), None),
    (
        "overhead-does-not-fit-memory",
        _pod(_req(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        _req(5, 5),
        _insufficient("memory"),
    ),
    ("zero-extended-request-skipped", _pod({**_req(1, 1), A: "0"}), {A: "6"}, None),
    (
        "pod-level-cpu-not-fit",
        _pod(_req(1, 1), resources={"requests": {"cpu": "7m", "memory": "2"}}),
        _req(5, 5),
        _insufficient("cpu"),
    ),
    (
        "pod-level-memory-not-fit",
        _pod(_req(1, 1), resources={"requests": {"cpu": "3m", "memory": "2"}}),
        _req(5, 19),
        _insufficient("memory"),
    ),
    (
        "pod-level-hugepages-not-fit",
        _pod(resources={"requests": {"cpu": "3m", "memory": "2", HUGE: "10"}}),
        {},
        _insufficient(HUGE),
    ),
    # ephemeral storage (fit_test.go TestStorageRequests)
    (
        "storage-fits",
        _pod({**_req(2, 10), "ephemeral-storage": "5"}),
        {**_req(2, 10), "ephemeral-storage": "10"},
        None,
    ),
    (
        "storage-does-not-fit",
        _pod({**_req(2, 1), "ephemeral-storage": "25"}),
        _req(2, 2),
        _insufficient("ephemeral-storage"),
    ),
    # Ours: every shortage is a reason, scalar resources in name order after the others.
    (
        "all-reasons-in-order",
        _pod({**_req(20, 30), B: "1", A: "9", "ephemeral-storage": "30"}),
        {},
        _insufficient("cpu", "memory", "ephemeral-storage", A, B),
    ),
]


@pytest.mark.parametrize(
    ("pending", "used", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_enough_requests(pending: dict[str, Any], used: dict[str, str], want: Any) -> None:
    result = _run(pending, used)
    assert reasons(result) == want
    if want:
        assert result is not None and result.plugin == "NodeResourcesFit"


def test_too_many_pods_comes_first() -> None:
    # fit_test.go TestNotEnoughRequests: a node full of pods refuses even an empty pod.
    result = _run(_pod(_req(20, 30)), {}, allocatable={**ALLOCATABLE, "pods": "1"})
    assert reasons(result) == ("Too many pods", *_insufficient("cpu", "memory"))


@pytest.mark.parametrize(
    ("node_amount", "used", "want"),
    [
        (None, "0", None),
        ("0", "0", None),
        ("1", "0", None),
        ("1", "1", _insufficient("example.com/gpu")),
    ],
    ids=["not-advertised", "advertised-zero", "device-plugin-fits", "device-plugin-short"],
)
def test_dra_backed_extended_resources_are_left_to_dra(
    node_amount: str | None, used: str, want: Any
) -> None:
    # fit_test.go "extended resource backed by DRA": a DeviceClass provides it, the node does
    # not advertise it (or advertises zero): DynamicResources decides. A node that does
    # advertise it (a device plugin) is checked here as any extended resource.
    gpu = "example.com/gpu"
    allocatable = dict(ALLOCATABLE)
    if node_amount is not None:
        allocatable[gpu] = node_amount
    pending = _pod({**_req(1, 1), gpu: "1"})
    result = _run(pending, {gpu: used}, dra=frozenset({gpu}), allocatable=allocatable)
    assert reasons(result) == want


def test_dra_requests_are_available_to_the_dra_side() -> None:
    fit = NodeResourcesFit(lambda: frozenset({"example.com/gpu", "unused.io/x"}))
    state = fit.fit_for(pod_facts(_pod({"example.com/gpu": "2", A: "1"})))
    assert state.dra_backed == frozenset({"example.com/gpu"})
    assert state.requests.scalar("example.com/gpu") == 2


def test_plain_pods_take_the_fast_path_with_the_same_answer() -> None:
    # cpu/memory-only pods are decided without listing reasons when they fit; when they do
    # not, the reasons are the general path's.
    assert _run(_pod(_req(5, 10)), _req(5, 10)) is None
    assert reasons(_run(_pod(_req(6, 10)), _req(5, 10))) == _insufficient("cpu")
    overcommitted = _run(_pod({"memory": "1"}), _req(20, 5))  # cpu is not asked: not checked
    assert overcommitted is None
