"""The FitError message as kube-scheduler prints it, PreFilter narrowing and refusals, the
per-node results kept for ``explain``, their JSON, and the DynamicResources slot."""

from __future__ import annotations

import json
from typing import Any

import pytest
from drasnap.snapshot.errors import ObjectValidationError, SchedulingError
from drasnap.snapshot.scheduling import (
    CANNOT_ALLOCATE_ALL_CLAIMS,
    NO_NODES_MESSAGE,
    Fit,
    FitError,
    NodeFacts,
    NodeResult,
    PodCycle,
    PodFacts,
    StaticCluster,
    default_plugins,
)
from drasnap.snapshot.scheduling.plugins.dynamic_resources import CLAIM_IN_USE

from tests.snapshot.scheduling.builders import node, pod

TAINT = "node(s) had untolerated taint {gpu: a100}"


def _result(plugin: str, *reasons: str) -> NodeResult:
    return NodeResult(plugin, reasons)


MESSAGE_CASES = [
    # The example; reasons sort as strings ("10 ..." before "30 ...").
    (
        "issue-example",
        FitError(
            120,
            nodes={
                **{
                    f"g{i}": _result("NodeResourcesFit", "Insufficient example.com/gpu")
                    for i in range(80)
                },
                **{f"t{i}": _result("TaintToleration", TAINT) for i in range(30)},
                **{
                    f"d{i}": _result("DynamicResources", CANNOT_ALLOCATE_ALL_CLAIMS)
                    for i in range(10)
                },
            },
        ),
        "0/120 nodes are available: 10 cannot allocate all claims, "
        "30 node(s) had untolerated taint {gpu: a100}, 80 Insufficient example.com/gpu.",
    ),
    # framework/types_test.go TestFitError_Error "nodes failed Prefilter plugin": the
    # PreFilter message alone.
    (
        "prefilter",
        FitError(
            3, prefilter=_result("FalsePreFilter", "Node(s) failed PreFilter plugin FalsePreFilter")
        ),
        "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter.",
    ),
    # A node refused for several resources counts under each reason; counts sort as strings.
    (
        "multiple-reasons-and-string-order",
        FitError(
            19,
            nodes={
                **{
                    f"a{i}": _result("NodeResourcesFit", "Insufficient cpu", "Insufficient memory")
                    for i in range(10)
                },
                **{f"b{i}": _result("NodeResourcesFit", "Insufficient cpu") for i in range(9)},
            },
        ),
        "0/19 nodes are available: 10 Insufficient memory, 19 Insufficient cpu.",
    ),
    # Nodes a PreFilter's node list left out count under its status (schedule_one.go).
    (
        "absent-nodes",
        FitError(
            4,
            nodes={"n1": _result("NodeResourcesFit", "Insufficient cpu")},
            absent=_result("", "node(s) didn't satisfy plugin(s) [NodeAffinity]"),
        ),
        "0/4 nodes are available: 1 Insufficient cpu, "
        "3 node(s) didn't satisfy plugin(s) [NodeAffinity].",
    ),
    ("no-nodes", FitError(0), NO_NODES_MESSAGE),
]


@pytest.mark.parametrize(
    ("error", "message"), [c[1:] for c in MESSAGE_CASES], ids=[c[0] for c in MESSAGE_CASES]
)
def test_fit_error_message(error: FitError, message: str) -> None:
    assert error.message() == message == str(error)


@pytest.mark.parametrize("error", [c[1] for c in MESSAGE_CASES], ids=[c[0] for c in MESSAGE_CASES])
def test_fit_error_json_round_trip(error: FitError) -> None:
    data = json.loads(json.dumps(error.to_json()))
    again = FitError.from_json(data)
    assert again == error
    assert again.message() == error.message()


def test_fit_error_json_groups_nodes_by_result() -> None:
    error = MESSAGE_CASES[0][1]
    groups = error.to_json()["filtered"]
    assert [(g["plugin"], len(g["nodes"])) for g in groups] == [
        ("DynamicResources", 10),
        ("NodeResourcesFit", 80),
        ("TaintToleration", 30),
    ]


@pytest.mark.parametrize(
    "data",
    [{"nodes": 1}, {"nodes": "x", "filtered": []}, {"nodes": 1, "filtered": [{"plugin": 1}]}],
    ids=["no-filtered", "bad-count", "bad-group"],
)
def test_fit_error_from_bad_json_is_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ObjectValidationError):
        FitError.from_json(data)


def _cluster() -> StaticCluster:
    return StaticCluster(
        [
            node("small", allocatable={"cpu": "1", "memory": "1Gi", "pods": "10"}),
            node("tainted", taints=[{"key": "gpu", "value": "a100", "effect": "NoSchedule"}]),
            node("cordoned", unschedulable=True),
        ]
    )


def test_a_cycle_explains_every_node() -> None:
    cycle = PodCycle(default_plugins(), pod(requests={"cpu": "2"}), _cluster())
    assert all(cycle.filter(n) is not None for n in ["small", "tainted", "cordoned"])
    error = cycle.fit_error()
    assert error.message() == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {gpu: a100}, "
        "1 node(s) were unschedulable."
    )
    assert error.node_result("tainted") == NodeResult("TaintToleration", (TAINT,))


def test_fit_error_filters_nodes_not_tried_and_refuses_when_one_fits() -> None:
    cycle = PodCycle(default_plugins(), pod(requests={"cpu": "2"}), _cluster())
    assert cycle.fit_error().num_all_nodes == 3  # no node was tried before
    fits_small = PodCycle(default_plugins(), pod(requests={"cpu": "100m"}), _cluster())
    assert fits_small.filter("tainted") is not None
    assert fits_small.filter("small") is None
    with pytest.raises(SchedulingError, match="pod default/p fits node small"):
        fits_small.fit_error()


def _name_affinity(*terms: list[str]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": names}
                            ]
                        }
                        for names in terms
                    ]
                }
            }
        }
    }


def test_node_affinity_to_node_names_narrows_the_nodes_tried() -> None:
    # DaemonSet pods pin a node with matchFields: the others answer for the PreFilter.
    cycle = PodCycle(
        default_plugins(), pod(requests={"cpu": "2"}, **_name_affinity(["small"])), _cluster()
    )
    assert all(cycle.filter(n) is not None for n in ["small", "tainted", "cordoned"])
    assert cycle.fit_error().message() == (
        "0/3 nodes are available: 1 Insufficient cpu, "
        "2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    assert cycle.filter("cordoned") == NodeResult(
        "", ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)
    )


def test_node_affinity_terms_that_exclude_each_other_refuse_the_pod() -> None:
    # node_affinity.go PreFilter: ANDed names in a term with no common node.
    spec = _name_affinity(["small"])
    spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]["matchFields"].append({"key": "metadata.name", "operator": "In", "values": ["tainted"]})
    cycle = PodCycle(default_plugins(), pod(**spec), _cluster())
    assert cycle.filter("small") == NodeResult("NodeAffinity", ("pod affinity terms conflict",))
    assert cycle.fit_error().message() == "0/3 nodes are available: pod affinity terms conflict."


def test_node_names_that_do_not_exist_leave_every_node_absent() -> None:
    cycle = PodCycle(default_plugins(), pod(**_name_affinity(["gone"])), _cluster())
    assert cycle.fit_error().message() == (
        "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


class _Backend:
    """A DRA backend standing in for the cluster snapshot's allocator."""

    def __init__(self, allocatable_on: set[str], refuse: tuple[str, ...] | None = None) -> None:
        self.allocatable_on = allocatable_on
        self.refuse = refuse
        self.fits: list[Any] = []

    def prepare(self, pod: PodFacts, fit: Fit) -> object | tuple[str, ...] | None:
        self.fits.append(fit)
        if not pod.spec.get("resourceClaims") and not fit.dra_backed:
            return None
        return self.refuse or {"claims": pod.spec.get("resourceClaims")}

    def check(self, state: Any, node: NodeFacts) -> tuple[str, ...] | None:
        return None if node.name in self.allocatable_on else (CANNOT_ALLOCATE_ALL_CLAIMS,)


def test_dynamic_resources_plugs_in_last_with_its_reasons() -> None:
    backend = _Backend({"tainted"})
    cluster = StaticCluster(
        [
            node("a"),
            node("b"),
            node("tainted", taints=[{"key": "gpu", "value": "a100", "effect": "NoSchedule"}]),
        ]
    )
    claiming = pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "c"}])
    cycle = PodCycle(default_plugins(backend), claiming, cluster)
    assert all(cycle.filter(n) is not None for n in cluster.node_names())
    assert cycle.fit_error().message() == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {gpu: a100}, "
        "2 cannot allocate all claims."
    )
    assert cycle.fit_error().node_result("a") == NodeResult(
        "DynamicResources", (CANNOT_ALLOCATE_ALL_CLAIMS,)
    )


def test_dynamic_resources_prefilter_refusal_and_skip() -> None:
    cluster = StaticCluster([node("a")])
    claiming = pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "c"}])
    cycle = PodCycle(default_plugins(_Backend(set(), refuse=(CLAIM_IN_USE,))), claiming, cluster)
    assert cycle.fit_error().message() == "0/1 nodes are available: resourceclaim in use."
    plain = PodCycle(default_plugins(_Backend(set())), pod(requests={"cpu": "1"}), cluster)
    assert plain.filter("a") is None  # no claim: DynamicResources skipped


def test_dra_backed_extended_resources_reach_the_backend() -> None:
    backend = _Backend({"a"})
    plugins = default_plugins(backend, dra_resource_names=lambda: frozenset({"example.com/gpu"}))
    cycle = PodCycle(
        plugins, pod(requests={"example.com/gpu": "2"}), StaticCluster([node("a"), node("b")])
    )
    assert backend.fits[-1].dra_backed == frozenset({"example.com/gpu"})
    assert backend.fits[-1].requests.scalar("example.com/gpu") == 2
    assert cycle.filter("a") is None
    assert cycle.filter("b") == NodeResult("DynamicResources", (CANNOT_ALLOCATE_ALL_CLAIMS,))


def test_an_unknown_node_is_refused_by_name() -> None:
    cycle = PodCycle(default_plugins(), pod(), _cluster())
    with pytest.raises(KeyError, match="node 'nope' not found"):
        cycle.filter("nope")
