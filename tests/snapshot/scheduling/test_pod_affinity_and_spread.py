"""InterPodAffinity and PodTopologySpread, whose PreFilter counts pods over the cluster."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.scheduling import PodCycle, StaticCluster, default_plugins
from drasnap.snapshot.scheduling.fit_error import NodeResult

from tests.snapshot.scheduling.builders import node, pod, reasons

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
SPREAD = "node(s) didn't match pod topology spread constraints"
SPREAD_LABEL = SPREAD + " (missing required label)"

# interpodaffinity/filtering_test.go TestRequiredAffinitySingleNode: its labels and node1.
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
LABELS1 = {"region": "r1", "zone": "z11"}


def _term(
    key: str, op: str, *values: str, topology: str = "region", **extra: Any
) -> dict[str, Any]:
    expr: dict[str, Any] = {"key": key, "operator": op}
    if values:
        expr["values"] = list(values)
    return {"labelSelector": {"matchExpressions": [expr]}, "topologyKey": topology, **extra}


def _affinity(
    affinity: Sequence[dict[str, Any]] = (), anti: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if affinity:
        out["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(affinity)}
    if anti:
        out["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(anti)}
    return {"affinity": out}


def _run(
    pending: dict[str, Any],
    placed: Sequence[dict[str, Any]],
    nodes: Sequence[dict[str, Any]] | None = None,
    namespaces: Sequence[dict[str, Any]] | None = None,
    node_name: str = "machine1",
) -> NodeResult | None:
    nodes = nodes or [node("machine1", labels=LABELS1)]
    cycle = PodCycle(default_plugins(), pending, StaticCluster(nodes, placed, namespaces))
    return cycle.filter(node_name)


SINGLE_NODE_CASES = [
    ("no-affinity", pod(labels=POD_LABEL), [], None),
    (
        "affinity-in-matches-existing",
        pod(labels=POD_LABEL2, **_affinity([_term("service", "In", "securityscan", "value2")])),
        [pod("e", labels=POD_LABEL, node_name="machine1")],
        None,
    ),
    (
        "affinity-notin-matches-existing",
        pod(labels=POD_LABEL2, **_affinity([_term("service", "NotIn", "securityscan3", "value3")])),
        [pod("e", labels=POD_LABEL, node_name="machine1")],
        None,
    ),
    (
        "affinity-other-namespace",
        pod(
            labels=POD_LABEL2,
            **_affinity(
                [_term("service", "In", "securityscan", "value2", namespaces=["DiffNameSpace"])]
            ),
        ),
        [pod("e", namespace="ns", labels=POD_LABEL, node_name="machine1")],
        AFFINITY,
    ),
    (
        "affinity-unmatching-selector",
        pod(labels=POD_LABEL, **_affinity([_term("service", "In", "antivirusscan", "value2")])),
        [pod("e", labels=POD_LABEL, node_name="machine1")],
        AFFINITY,
    ),
    (
        "affinity-and-anti-affinity-satisfied",
        pod(
            labels=POD_LABEL2,
            **_affinity(
                [_term("service", "In", "securityscan", "value2")],
                [_term("service", "In", "antivirusscan", "value2", topology="node")],
            ),
        ),
        [pod("e", labels=POD_LABEL, node_name="machine1")],
        None,
    ),
    (
        "affinity-ok-anti-affinity-broken",
        pod(
            labels=POD_LABEL2,
            **_affinity(
                [_term("service", "In", "securityscan", "value2")],
                [_term("service", "In", "securityscan", "value2", topology="zone")],
            ),
        ),
        [pod("e", labels=POD_LABEL, node_name="machine1")],
        ANTI,
    ),
    (
        "existing-anti-affinity-symmetry",
        pod(labels=POD_LABEL),
        [
            pod(
                "e",
                labels=POD_LABEL,
                node_name="machine1",
                **_affinity(
                    anti=[_term("service", "In", "securityscan", "value2", topology="zone")]
                ),
            )
        ],
        EXISTING,
    ),
    (
        "existing-anti-affinity-not-matching",
        pod(labels=POD_LABEL),
        [
            pod(
                "e",
                labels=POD_LABEL,
                node_name="machine1",
                **_affinity(
                    anti=[_term("service", "NotIn", "securityscan", "value2", topology="zone")]
                ),
            )
        ],
        None,
    ),
    (
        "affinity-topology-key-missing-on-node",
        pod(labels=POD_LABEL, **_affinity([_term("service", "Exists", topology="rack")])),
        [pod("e", labels=POD_LABEL, node_name="machine1")],
        AFFINITY,
    ),
    # filtering_test.go "pod matches its own Label in PodAffinity and that matches the existing
    # pod Labels": the matching pod is on another node of another region.
    (
        "matches-own-label-existing-elsewhere",
        pod(labels=POD_LABEL, **_affinity([_term("service", "NotIn", "securityscan", "value2")])),
        [pod("e", labels=POD_LABEL, node_name="machine2")],
        AFFINITY,
    ),
]


@pytest.mark.parametrize(
    ("pending", "placed", "want"),
    [c[1:] for c in SINGLE_NODE_CASES],
    ids=[c[0] for c in SINGLE_NODE_CASES],
)
def test_required_affinity_single_node(
    pending: dict[str, Any], placed: list[dict[str, Any]], want: str | None
) -> None:
    nodes = [
        node("machine1", labels=LABELS1),
        node("machine2", labels={"region": "r2", "zone": "z21"}),
    ]
    assert reasons(_run(pending, placed, nodes)) == (None if want is None else (want,))


def test_first_pod_of_a_group_may_go_anywhere_its_keys_exist() -> None:
    # satisfyPodAffinity's special case: no pod matches the terms anywhere and the pod matches
    # its own terms; the node must still carry the topology key.
    first = pod(labels=POD_LABEL, **_affinity([_term("service", "In", "securityscan")]))
    assert _run(first, []) is None
    assert reasons(_run(first, [], [node("bare", labels={})], node_name="bare")) == (AFFINITY,)
    not_self = pod(labels=POD_LABEL2, **_affinity([_term("service", "In", "securityscan")]))
    assert reasons(_run(not_self, [])) == (AFFINITY,)


def test_anti_affinity_spreads_over_hostnames() -> None:
    nodes = [node("a"), node("b")]
    spec = _affinity(anti=[_term("app", "In", "web", topology="kubernetes.io/hostname")])
    placed = [pod("web-1", labels={"app": "web"}, node_name="a", **spec)]
    pending = pod("web-2", labels={"app": "web"}, **spec)
    cluster = StaticCluster(nodes, placed)
    cycle = PodCycle(default_plugins(), pending, cluster)
    assert reasons(cycle.filter("a")) == (ANTI,)
    assert cycle.filter("b") is None


def test_namespace_selector_uses_namespace_labels() -> None:
    term = _term("app", "In", "db", namespaceSelector={"matchLabels": {"team": "data"}})
    pending = pod(labels={"app": "x"}, **_affinity([term]))
    placed = [pod("db", namespace="data", labels={"app": "db"}, node_name="machine1")]
    namespaces = [{"metadata": {"name": "data", "labels": {"team": "data"}}}]
    assert _run(pending, placed, namespaces=namespaces) is None
    other_team = [{"metadata": {"name": "data", "labels": {"team": "web"}}}]
    assert reasons(_run(pending, placed, namespaces=other_team)) == (AFFINITY,)
    everywhere = _term("app", "In", "db", namespaceSelector={})  # {} selects every namespace
    assert _run(pod(labels={"app": "x"}, **_affinity([everywhere])), placed) is None


def test_match_label_keys_and_mismatch_label_keys_join_the_selector() -> None:
    # Merged as the API server does at creation: key in / notin the pod's own value.
    placed = [pod("v1", labels={"app": "web", "rev": "1"}, node_name="machine1")]
    same_rev = _term("app", "In", "web", matchLabelKeys=["rev"])
    assert _run(pod(labels={"rev": "1"}, **_affinity([same_rev])), placed) is None
    assert reasons(_run(pod(labels={"rev": "2"}, **_affinity([same_rev])), placed)) == (AFFINITY,)
    other_rev = _term("app", "In", "web", mismatchLabelKeys=["rev"])
    assert reasons(_run(pod(labels={"rev": "1"}, **_affinity(anti=[other_rev])), placed)) is None
    assert reasons(_run(pod(labels={"rev": "2"}, **_affinity(anti=[other_rev])), placed)) == (ANTI,)


def test_a_malformed_selector_is_refused_with_its_place() -> None:
    bad = pod(
        **_affinity([{"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Gt"}]}}])
    )
    with pytest.raises(ObjectValidationError, match=r"pod default/p: spec\.affinity\.podAffinity"):
        _run(bad, [])


def _spread(max_skew: int = 1, key: str = "zone", **extra: Any) -> dict[str, Any]:
    constraint = {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"foo": ""}},
        **extra,
    }
    return {"topologySpreadConstraints": [constraint]}


# podtopologyspread/filtering_test.go TestSingleConstraint's cluster: zone1 (node-a, node-b),
# zone2 (node-x, node-y); pods labelled foo.
ZONE_NODES = [
    node("node-a", labels={"zone": "zone1", "node": "node-a"}),
    node("node-b", labels={"zone": "zone1", "node": "node-b"}),
    node("node-x", labels={"zone": "zone2", "node": "node-x"}),
    node("node-y", labels={"zone": "zone2", "node": "node-y"}),
]


def _foo(name: str, where: str, **extra: Any) -> dict[str, Any]:
    return pod(name, labels={"foo": ""}, node_name=where, **extra)


SPREAD_CASES = [
    # "no existing pods": every node fits.
    (
        "no-existing-pods",
        _spread(),
        [],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
    # "pods spread across zones as 3/3, all nodes fit"
    (
        "three-three",
        _spread(),
        [
            _foo("p-a1", "node-a"),
            _foo("p-b1", "node-b"),
            _foo("p-y1", "node-y"),
            _foo("p-y2", "node-y"),
            _foo("p-b2", "node-b"),
            _foo("p-x1", "node-x"),
        ],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
    # "pods spread across zones as 2/1, zone2 fits": zone1 holds 2, zone2 1.
    (
        "two-one",
        _spread(),
        [_foo("p-a1", "node-a"), _foo("p-b1", "node-b"), _foo("p-x1", "node-x")],
        {"node-a": SPREAD, "node-b": SPREAD, "node-x": None, "node-y": None},
    ),
    # maxSkew 2 admits zone1 too.
    (
        "two-one-max-skew-2",
        _spread(2),
        [_foo("p-a1", "node-a"), _foo("p-b1", "node-b"), _foo("p-x1", "node-x")],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
    # Terminating pods and pods of other namespaces do not count.
    (
        "terminating-and-other-namespaces-ignored",
        _spread(),
        [
            _foo("p-a1", "node-a"),
            pod("p-x1", namespace="other", labels={"foo": ""}, node_name="node-x"),
            {
                **_foo("p-a2", "node-a"),
                "metadata": {
                    "name": "p-a2",
                    "namespace": "default",
                    "labels": {"foo": ""},
                    "deletionTimestamp": "2026-01-01T00:00:00Z",
                },
            },
        ],
        {"node-a": SPREAD, "node-x": None},
    ),
    # minDomains 3 with two zones: the global minimum counts as 0 (filtering_test.go "2 domains
    # with minDomains 3").
    (
        "min-domains",
        _spread(minDomains=3),
        [_foo("p-x1", "node-x")],
        {"node-a": None, "node-x": SPREAD},
    ),
    # An empty selector ({}) counts no existing pod (countPodsMatchSelector returns 0 for
    # selector.Empty()), though the pod still matches it itself: zone1's three pods do not
    # count, skew 0 + 1 - 0 = 1 everywhere.
    (
        "empty-selector-counts-no-pod",
        _spread(labelSelector={}),
        [_foo("p-a1", "node-a"), _foo("p-a2", "node-a"), _foo("p-b1", "node-b")],
        {"node-a": None, "node-b": None, "node-x": None, "node-y": None},
    ),
]


@pytest.mark.parametrize(
    ("spec", "placed", "want"), [c[1:] for c in SPREAD_CASES], ids=[c[0] for c in SPREAD_CASES]
)
def test_single_constraint(
    spec: dict[str, Any], placed: list[dict[str, Any]], want: dict[str, str | None]
) -> None:
    cycle = PodCycle(
        default_plugins(), pod(labels={"foo": ""}, **spec), StaticCluster(ZONE_NODES, placed)
    )
    for name, reason in want.items():
        assert reasons(cycle.filter(name)) == (None if reason is None else (reason,)), name


def test_a_node_without_the_topology_key_is_refused_and_not_counted() -> None:
    nodes = [*ZONE_NODES[:1], node("node-b", labels={"node": "node-b"}), *ZONE_NODES[2:]]
    placed = [_foo("p-b1", "node-b"), _foo("p-b2", "node-b")]  # on the zoneless node: not counted
    cycle = PodCycle(
        default_plugins(), pod(labels={"foo": ""}, **_spread()), StaticCluster(nodes, placed)
    )
    assert reasons(cycle.filter("node-b")) == (SPREAD_LABEL,)
    assert cycle.filter("node-a") is None


def test_node_inclusion_policies() -> None:
    # nodeAffinityPolicy Honor (default): nodes the pod's selector excludes are not domains.
    # nodeTaintsPolicy Honor: tainted nodes the pod does not tolerate are not domains either.
    nodes = [
        node("a", labels={"zone": "z1", "pool": "x"}),
        node("b", labels={"zone": "z2", "pool": "y"}),
        node(
            "c",
            labels={"zone": "z3", "pool": "x"},
            taints=[{"key": "t", "value": "", "effect": "NoSchedule"}],
        ),
    ]
    placed = [_foo("p1", "a")]
    honor = pod(labels={"foo": ""}, nodeSelector={"pool": "x"}, **_spread())
    cycle = PodCycle(default_plugins(), honor, StaticCluster(nodes, placed))
    # Domains z1 (1 pod) and z3 (0): a is refused; b is excluded by the selector anyway.
    assert reasons(cycle.filter("a")) == (SPREAD,)
    ignore = pod(
        labels={"foo": ""}, nodeSelector={"pool": "x"}, **_spread(nodeAffinityPolicy="Ignore")
    )
    cycle = PodCycle(default_plugins(), ignore, StaticCluster(nodes, placed))
    assert reasons(cycle.filter("a")) == (SPREAD,)
    taints = pod(
        labels={"foo": ""}, nodeSelector={"pool": "x"}, **_spread(nodeTaintsPolicy="Honor")
    )
    cycle = PodCycle(default_plugins(), taints, StaticCluster(nodes, placed))
    # Only z1 is a domain (z2 excluded by the selector, z3 by its taint): skew 1 + 1 - 1 = 1.
    assert cycle.filter("a") is None


def test_match_label_keys_narrow_the_spread_selector() -> None:
    spec = _spread(matchLabelKeys=["rev"])
    placed = [pod("old", labels={"foo": "", "rev": "1"}, node_name="node-a")]
    cycle = PodCycle(
        default_plugins(),
        pod(labels={"foo": "", "rev": "2"}, **spec),
        StaticCluster(ZONE_NODES, placed),
    )
    assert cycle.filter("node-a") is None  # the old revision does not count
    cycle = PodCycle(
        default_plugins(),
        pod(labels={"foo": "", "rev": "1"}, **spec),
        StaticCluster(ZONE_NODES, placed),
    )
    assert reasons(cycle.filter("node-a")) == (SPREAD,)


def test_schedule_anyway_constraints_do_not_filter() -> None:
    spec = _spread()
    spec["topologySpreadConstraints"][0]["whenUnsatisfiable"] = "ScheduleAnyway"
    placed = [_foo("p-a1", "node-a"), _foo("p-a2", "node-a")]
    cycle = PodCycle(
        default_plugins(), pod(labels={"foo": ""}, **spec), StaticCluster(ZONE_NODES, placed)
    )
    assert cycle.filter("node-a") is None
