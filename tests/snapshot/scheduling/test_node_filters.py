"""NodeUnschedulable, NodeName, TaintToleration, NodeAffinity and NodePorts: one node at a time,
with the reasons kube-scheduler gives (cases from each plugin's upstream test, named)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.snapshot.scheduling.builders import filter_one, node, pod, reasons

UNSCHEDULABLE = "node(s) were unschedulable"
NODE_NAME = "node(s) didn't match the requested node name"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
PORTS = "node(s) didn't have free ports for the requested pod ports"


def _tolerations(*items: dict[str, str]) -> dict[str, Any]:
    return {"tolerations": list(items)}


def _taint(key: str, value: str, effect: str = "NoSchedule") -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


# nodeunschedulable/node_unschedulable_test.go TestNodeUnschedulable
UNSCHEDULABLE_CASES = [
    ("schedulable-node", {}, False, None),
    ("cordoned-node", {}, True, (UNSCHEDULABLE,)),
    (
        "cordoned-node-tolerated",
        _tolerations({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}),
        True,
        None,
    ),
    (
        "cordoned-node-tolerated-by-exists-all",
        _tolerations({"operator": "Exists"}),
        True,
        None,
    ),
]


@pytest.mark.parametrize(
    ("spec", "cordoned", "want"),
    [c[1:] for c in UNSCHEDULABLE_CASES],
    ids=[c[0] for c in UNSCHEDULABLE_CASES],
)
def test_node_unschedulable(spec: dict[str, Any], cordoned: bool, want: Any) -> None:
    result = filter_one(pod(**spec), node("n1", unschedulable=cordoned))
    assert reasons(result) == want
    if want:
        assert result is not None and result.plugin == "NodeUnschedulable"


# nodename/node_name_test.go TestNodeName
@pytest.mark.parametrize(
    ("wanted", "want"),
    [(None, None), ("n1", None), ("other", (NODE_NAME,))],
    ids=["no-host-specified", "host-matches", "host-differs"],
)
def test_node_name(wanted: str | None, want: Any) -> None:
    assert reasons(filter_one(pod(node_name=wanted), node("n1"))) == want


# tainttoleration/taint_toleration_test.go TestTaintTolerationFilter, case by case.
TAINT_CASES = [
    ("no-tolerations-nonempty-taints", [], [_taint("dedicated", "user1")], "{dedicated: user1}"),
    (
        "toleration-matches",
        [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}],
        [_taint("dedicated", "user1")],
        None,
    ),
    (
        "toleration-other-value",
        [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
        [_taint("dedicated", "user1")],
        "{dedicated: user1}",
    ),
    (
        "exists-toleration",
        [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
        [_taint("foo", "bar")],
        None,
    ),
    (
        "all-tolerated",
        [
            {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"},
            {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
        ],
        [_taint("dedicated", "user2"), _taint("foo", "bar")],
        None,
    ),
    (
        "effect-differs",
        [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}],
        [_taint("foo", "bar")],
        "{foo: bar}",
    ),
    (
        "empty-effect-tolerates-all",
        [{"key": "foo", "operator": "Equal", "value": "bar"}],
        [_taint("foo", "bar")],
        None,
    ),
    (
        "prefer-no-schedule-ignored",
        [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}],
        [_taint("dedicated", "user1", "PreferNoSchedule")],
        None,
    ),
    (
        "prefer-no-schedule-no-toleration",
        [],
        [_taint("dedicated", "user1", "PreferNoSchedule")],
        None,
    ),
    # Ours: NoExecute counts too, the first untolerated taint in node order is named, and a
    # comparison operator (TaintTolerationComparisonOperators, off in 1.36) tolerates nothing.
    ("no-execute", [], [_taint("gpu", "a100", "NoExecute")], "{gpu: a100}"),
    (
        "first-untolerated-in-order",
        [{"key": "a", "operator": "Exists"}],
        [_taint("a", "1"), _taint("b", "2"), _taint("c", "3")],
        "{b: 2}",
    ),
    ("empty-value", [], [{"key": "gpu", "effect": "NoSchedule"}], "{gpu: }"),
    (
        "comparison-operator",
        [{"key": "n", "operator": "Gt", "value": "1"}],
        [_taint("n", "5")],
        "{n: 5}",
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "taints", "named"),
    [c[1:] for c in TAINT_CASES],
    ids=[c[0] for c in TAINT_CASES],
)
def test_taint_toleration(
    tolerations: list[dict[str, str]], taints: list[dict[str, str]], named: str | None
) -> None:
    result = filter_one(pod(**_tolerations(*tolerations)), node("n1", taints=taints))
    want = None if named is None else (f"node(s) had untolerated taint {named}",)
    assert reasons(result) == want


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
            }
        }
    }


def _expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}


# nodeaffinity/node_affinity_test.go TestNodeAffinity (cases adapted one by one).
AFFINITY_CASES = [
    ("no-selector", {}, {"foo": "bar"}, None),
    ("selector-misses", {"nodeSelector": {"foo": "bar"}}, {}, AFFINITY),
    ("selector-matches", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, None),
    (
        "selector-and-affinity-both-needed",
        {"nodeSelector": {"foo": "bar"}, **_required(_expr("foo", "Exists"))},
        {"foo": "other"},
        AFFINITY,
    ),
    ("in-matches", _required(_expr("foo", "In", "bar", "value2")), {"foo": "bar"}, None),
    ("in-misses", _required(_expr("foo", "In", "value1", "value2")), {"foo": "bar"}, AFFINITY),
    (
        "gt-matches",
        _required(_expr("kernel-version", "Gt", "0204")),
        {"kernel-version": "0206"},
        None,
    ),
    (
        "lt-not-integer",
        _required(_expr("kernel-version", "Lt", "0204")),
        {"kernel-version": "abc"},
        AFFINITY,
    ),
    (
        "notin-matches",
        _required(_expr("mem-type", "NotIn", "DDR", "DDR2")),
        {"mem-type": "DDR3"},
        None,
    ),
    (
        "doesnotexist-misses",
        _required(_expr("GPU", "DoesNotExist")),
        {"GPU": "NVIDIA-GRID-K1"},
        AFFINITY,
    ),
    (
        "terms-ored",
        _required(_expr("foo", "In", "x"), _expr("diffkey", "In", "wrong", "value2")),
        {"diffkey": "value2"},
        None,
    ),
    ("empty-term-selects-nothing", _required({}), {"foo": "bar"}, AFFINITY),
    ("no-terms-selects-nothing", _required(), {"foo": "bar"}, AFFINITY),
    (
        "malformed-term-selects-nothing",
        _required(_expr("foo", "Bogus", "bar")),
        {"foo": "bar"},
        AFFINITY,
    ),
    (
        "match-fields-name",
        _required({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}),
        {},
        None,
    ),
    (
        "match-fields-not-in",
        _required(
            {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}
        ),
        {},
        AFFINITY,
    ),
]


@pytest.mark.parametrize(
    ("spec", "labels", "want"), [c[1:] for c in AFFINITY_CASES], ids=[c[0] for c in AFFINITY_CASES]
)
def test_node_affinity(spec: dict[str, Any], labels: dict[str, str], want: str | None) -> None:
    result = filter_one(pod(**spec), node("n1", labels=labels))
    assert reasons(result) == (None if want is None else (want,))


def _ports(*ports: dict[str, Any], host_network: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "ports": list(ports)}]}
    if host_network:
        spec["hostNetwork"] = True
    return spec


def _port(port: int, protocol: str = "TCP", ip: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"containerPort": port, "hostPort": port, "protocol": protocol}
    if ip:
        out["hostIP"] = ip
    return out


# nodeports/node_ports_test.go TestNodePorts
PORT_CASES = [
    ("nothing-running", [_port(8080, "UDP", "127.0.0.1")], [], None),
    ("other-port", [_port(8080, "UDP", "127.0.0.1")], [_port(9090, "UDP", "127.0.0.1")], None),
    ("same-udp-port", [_port(8080, "UDP", "127.0.0.1")], [_port(8080, "UDP", "127.0.0.1")], PORTS),
    ("same-tcp-port", [_port(8080, "TCP", "127.0.0.1")], [_port(8080, "TCP", "127.0.0.1")], PORTS),
    ("other-protocol", [_port(8080, "TCP", "127.0.0.1")], [_port(8080, "UDP", "127.0.0.1")], None),
    ("other-ip", [_port(8080, "TCP", "127.0.0.2")], [_port(8080, "TCP", "127.0.0.1")], None),
    ("wildcard-wanted", [_port(8001, "UDP", "0.0.0.0")], [_port(8001, "UDP", "127.0.0.1")], PORTS),
    ("wildcard-used", [_port(8001, "TCP", "127.0.0.1")], [_port(8001, "TCP", "0.0.0.0")], PORTS),
    ("defaults-tcp-any-ip", [_port(8001)], [_port(8001, "TCP", "10.0.0.1")], PORTS),
]


@pytest.mark.parametrize(
    ("wanted", "used", "want"), [c[1:] for c in PORT_CASES], ids=[c[0] for c in PORT_CASES]
)
def test_node_ports(
    wanted: list[dict[str, Any]], used: list[dict[str, Any]], want: str | None
) -> None:
    placed = [pod("existing", node_name="n1", **_ports(*used))] if used else []
    result = filter_one(pod(**_ports(*wanted)), node("n1"), placed)
    assert reasons(result) == (None if want is None else (want,))


def test_host_network_ports_default_to_container_ports_and_sidecars_count() -> None:
    wanted = pod(**_ports({"containerPort": 53, "protocol": "UDP"}, host_network=True))
    sidecar = {
        "name": "s",
        "restartPolicy": "Always",
        "ports": [{"containerPort": 53, "hostPort": 53, "protocol": "UDP"}],
    }
    ordinary_init = {
        "name": "i",
        "ports": [{"containerPort": 53, "hostPort": 53, "protocol": "UDP"}],
    }
    with_sidecar = pod("s", node_name="n1", initContainers=[sidecar])
    with_init = pod("i", node_name="n1", initContainers=[ordinary_init])
    assert reasons(filter_one(wanted, node("n1"), [with_sidecar])) == (PORTS,)
    assert filter_one(wanted, node("n1"), [with_init]) is None  # finished init containers hold none


def test_the_first_failing_filter_in_upstream_order_answers() -> None:
    # A cordoned, tainted node too small for the pod: NodeUnschedulable runs first.
    big = pod(requests={"cpu": "64"}, nodeSelector={"x": "y"})
    n = node("n1", unschedulable=True, taints=[_taint("gpu", "a100")], allocatable={"cpu": "1"})
    result = filter_one(big, n)
    assert result is not None and (result.plugin, result.reasons) == (
        "NodeUnschedulable",
        (UNSCHEDULABLE,),
    )
    n = node("n1", taints=[_taint("gpu", "a100")], allocatable={"cpu": "1"})
    result = filter_one(big, n)
    assert result is not None and result.plugin == "TaintToleration"
    result = filter_one(big, node("n1", allocatable={"cpu": "1"}))
    assert result is not None and result.plugin == "NodeAffinity"
