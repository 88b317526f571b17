"""The binpacking estimator on upstream's own tests (kubernetes/autoscaler a16f0ae8,
``cluster-autoscaler/estimator/binpacking_estimator_test.go`` TestBinpackingEstimate and
``decreasing_pod_orderer_test.go`` TestPodPriorityProcessor). Each test names its case.

Upstream's ``Estimate`` orders the groups (DecreasingPodOrderer) then packs them; here
:func:`order_groups` then :func:`estimate`. As upstream's test, the snapshot holds one node
already, "oldnode" (100m, 100Mi, 10 pods, zone-jupiter), to make topology spreading count a
second zone; new nodes copy the template ("template", zone-mars, 10 pods) as ``e-<i>``.
Upstream's fastpath (``determineBestPEGToFastpath``) is not modelled: its cases are left out.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from drasnap.snapshot.autoscaler.estimator import estimate, order_groups
from drasnap.snapshot.k8s.kinds import key_of

from tests.snapshot.autoscaler.builders import HOSTNAME, ZONE, build_node, build_pod, snapshot

Obj = dict[str, Any]

MIB = 1024 * 1024
NO_LIMIT = 10**6  # upstream's StaticThreshold(0): no limit


def make_node(cpu_m: int, mem_mib: int, pods: int, name: str, zone: str) -> Obj:
    """``makeNode(cpu, mem, podCount, name, zone)``: memory in MiB."""
    return build_node(name, cpu_m, mem_mib * MIB, pods=pods, labels={ZONE: zone})


def group(prefix: str, cpu_m: int, mem: int, count: int, **spec: Any) -> list[Obj]:
    """``makePodEquivalenceGroup(BuildTestPod("estimatee", cpu, mem, WithNamespace("universe"),
    WithLabels(app: estimatee), ...), count)``; drasnap needs a name per pod."""
    return [
        build_pod(
            f"{prefix}-{i}", cpu_m, mem, namespace="universe", labels={"app": "estimatee"}, **spec
        )
        for i in range(count)
    ]


def max_skew(skew: int, key: str, min_domains: int) -> dict[str, Any]:
    """``WithMaxSkew(skew, key, minDomains)``."""
    return {
        "topologySpreadConstraints": [
            {
                "maxSkew": skew,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "estimatee"}},
                "minDomains": min_domains,
            }
        ]
    }


def _with_host_port(pods: list[Obj], port: int) -> list[Obj]:
    """``WithHostPort``: the first container's host port."""
    for p in pods:
        p["spec"]["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port}]
    return pods


@dataclass
class Result:
    nodes: int
    pods: list[str]


def run(groups: list[list[Obj]], millicores: int, memory_mib: int, max_nodes: int = 0) -> Result:
    """TestBinpackingEstimate's body: oldnode in the snapshot, the template, Estimate."""
    cs = snapshot(make_node(100, 100, 10, "oldnode", "zone-jupiter"))
    template = make_node(millicores, memory_mib, 10, "template", "zone-mars")

    def new_node(i: int) -> tuple[Obj, list[Obj]]:
        node = copy.deepcopy(template)
        node["metadata"]["name"] = f"e-{i}"
        node["metadata"]["labels"][HOSTNAME] = f"e-{i}"
        return node, []

    found = estimate(cs, order_groups(groups, template), new_node, max_nodes or NO_LIMIT)
    return Result(len(found.nodes), found.pods)


@pytest.mark.parametrize(
    ("groups", "millicores", "memory", "max_nodes", "nodes", "pods"),
    [
        pytest.param(
            [group("estimatee", 350, 1000, 10)],
            350 * 3 - 50,
            2 * 1000,
            0,
            5,
            10,
            id="simple resource-based binpacking",
        ),
        pytest.param(
            [group("estimatee", 10, 100, 20)],
            10000,
            20000,
            0,
            2,
            20,
            id="pods-per-node bound binpacking",
        ),
        pytest.param(
            [_with_host_port(group("estimatee", 200, 1000, 8), 5555)],
            1000,
            5000,
            0,
            8,
            8,
            id="hostport conflict forces pod-per-node",
        ),
        pytest.param(
            [group("estimatee", 500, 1000, 20)],
            1000,
            5000,
            5,
            5,
            10,
            id="limiter cuts binpacking",
        ),
        pytest.param(
            [group("estimatee", 200, 200, 8, **max_skew(2, HOSTNAME, 1))],
            1000,
            5000,
            0,
            4,
            8,
            id="hostname topology spreading with maxSkew=2 forces 2 pods/node",
        ),
        pytest.param(
            [group("estimatee", 20, 100, 8, **max_skew(2, ZONE, 1))],
            1000,
            5000,
            0,
            1,
            2,
            id="zonal topology spreading with maxSkew=2 only allows 2 pods to schedule",
        ),
    ],
)
def test_binpacking_estimate(
    groups: list[list[Obj]], millicores: int, memory: int, max_nodes: int, nodes: int, pods: int
) -> None:
    # TestBinpackingEstimate
    found = run(groups, millicores, memory, max_nodes)
    assert (found.nodes, len(found.pods)) == (nodes, pods)


def test_decreasing_ordered_pods_are_processed_first() -> None:
    # TestBinpackingEstimate "decreasing ordered pods are processed first": the 500m group
    # (given second) fills the 5 nodes the limit allows; the 50m group places nothing.
    small = group("small", 50, 1000, 10)
    high = group("high", 500, 1000, 10)
    found = run([small, high], 1000, 5000, max_nodes=5)
    assert found.nodes == 5
    assert found.pods == [key_of(p) for p in high]


@pytest.mark.xfail(
    strict=True,
    reason="upstream binpacking_estimator.go tryToScheduleOnNewNodes retries a pod that fails "
    "the last node on hostname topology spreading on every other node (oldnode included, "
    "which then counts): drasnap tries the last new node only and adds nodes",
)
def test_hostname_topology_spreading_schedules_retroactively() -> None:
    # TestBinpackingEstimate "hostname topology spreading with maxSkew=1 with a large scaleup
    # handles scheduling pods retroactively": 12 pods of 20m, minDomains 3: 3 nodes.
    found = run([group("estimatee", 20, 100, 12, **max_skew(1, HOSTNAME, 3))], 1000, 5000)
    assert (found.nodes, len(found.pods)) == (3, 12)


# -- decreasing_pod_orderer_test.go TestPodPriorityProcessor ------------------------------------

PG1 = [build_pod("p1", 1, 1)]
PG2 = [build_pod("p2", 2, 1)]
PG3 = [build_pod("p3", 2, 100)]
ORDER_NODE = make_node(4, 600, 10, "node1", "zone-sun")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param([PG1], [PG1], id="single pod"),
        pytest.param([PG3, PG2, PG1], [PG3, PG2, PG1], id="sorted list of pods"),
        pytest.param([PG1, PG3, PG2], [PG3, PG2, PG1], id="randomised list of pods"),
        pytest.param([], [], id="empty pod list"),
    ],
)
def test_pod_priority_processor(given: list[list[Obj]], expected: list[list[Obj]]) -> None:
    assert order_groups(given, ORDER_NODE) == expected


def test_orderer_scores_the_pods_full_requests() -> None:
    # decreasing_pod_orderer.go calculatePodScore scores podutils.PodRequests: an init container
    # larger than the containers sets the pod's cpu. "init" asks 1m in its container but 3m to
    # start, so it comes before p2 (2m).
    init = build_pod("init", 1, 1)
    init["spec"]["initContainers"] = [
        {"name": "i", "image": "pause", "resources": {"requests": {"cpu": "3m"}}}
    ]
    assert order_groups([PG2, [init]], ORDER_NODE) == [[init], PG2]
