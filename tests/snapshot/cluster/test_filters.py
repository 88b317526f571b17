"""``ClusterSnapshot`` places pods only where kube-scheduler's filters let them
(``snapshot.scheduling``): selectors, taints, unschedulable nodes, extended resources, host
ports, inter-pod anti-affinity kept right across fork and revert, DRA; and ``fit_error`` gives
the scheduler's ``0/N nodes are available`` answer with each node's reason."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import SchedulingError
from drasnap.store import MemoryStore

from tests.snapshot.cluster_builders import (
    assert_indexes_consistent,
    device_class,
    node,
    node_slice,
    plain_pod,
)

Obj = dict[str, Any]


def labelled(name: str, labels: dict[str, str], **extra: Any) -> Obj:
    n = node(name)
    n["metadata"]["labels"] = {**n["metadata"]["labels"], **labels}
    n.update(copy.deepcopy(extra))
    return n


def cluster(*nodes: Obj) -> ClusterSnapshot:
    cs = ClusterSnapshot(MemoryStore())
    for n in nodes:
        cs.add_node(n)
    return cs


def test_taints_and_selectors_decide_where_a_pod_goes() -> None:
    # a100 nodes are tainted gpu=a100:NoSchedule; the pod selects the h100 group. Tried in
    # name order, a-100 is refused for its taint (TaintToleration runs before NodeAffinity),
    # b-h100 for its label... nothing fits until the h100 node without taint.
    a100 = labelled(
        "a-100",
        {"drasnap.io/node-group": "a100"},
        spec={"taints": [{"key": "gpu", "value": "a100", "effect": "NoSchedule"}]},
    )
    other = labelled("b-other", {"drasnap.io/node-group": "other"})
    h100 = labelled("c-h100", {"drasnap.io/node-group": "h100"})
    cs = cluster(a100, other, h100)
    pod = plain_pod("p")
    pod["spec"]["nodeSelector"] = {"drasnap.io/node-group": "h100"}
    with pytest.raises(SchedulingError, match=re.escape("untolerated taint {gpu: a100}")):
        cs.schedule_pod(pod, "a-100")
    assert cs.schedule_pod_anywhere(pod) == "c-h100"
    # a pod without the selector and without toleration skips the tainted node
    assert cs.schedule_pod_anywhere(plain_pod("q")) == "b-other"


def test_fit_error_is_the_schedulers_message_with_each_nodes_reason() -> None:
    tainted = labelled(
        "t1", {}, spec={"taints": [{"key": "gpu", "value": "a100", "effect": "NoSchedule"}]}
    )
    cordoned = labelled("u1", {}, spec={"unschedulable": True})
    small = node("s1", cpu="1")
    cs = cluster(tainted, cordoned, small, node("s2", cpu="1"))
    pod = plain_pod("big", cpu="2")
    assert cs.schedule_pod_anywhere(pod) is None
    error = cs.fit_error(pod)
    assert error.message() == (
        "0/4 nodes are available: 1 node(s) had untolerated taint {gpu: a100}, "
        "1 node(s) were unschedulable, 2 Insufficient cpu."
    )
    result = error.node_result("s2")
    assert result is not None and result.plugin == "NodeResourcesFit"
    assert result.reasons == ("Insufficient cpu",)
    assert cs.pod("default", "big") is None
    with pytest.raises(SchedulingError, match="fits node"):
        cs.fit_error(plain_pod("tiny", cpu="100m"))


def test_extended_resources_must_be_advertised() -> None:
    with_gpu = node("g1")
    with_gpu["status"]["allocatable"]["example.com/gpu"] = "1"
    cs = cluster(node("a-none"), with_gpu)
    pod = plain_pod("p")
    pod["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    assert cs.schedule_pod_anywhere(pod) == "g1"
    second = copy.deepcopy(pod)
    second["metadata"].update(name="p2", uid="p2")
    assert cs.schedule_pod_anywhere(second) is None
    assert cs.fit_error(second).message() == (
        "0/2 nodes are available: 2 Insufficient example.com/gpu."
    )


def test_host_ports_conflict() -> None:
    cs = cluster(node("n1"), node("n2"))

    def with_port(name: str) -> Obj:
        pod = plain_pod(name)
        pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
        return pod

    assert cs.schedule_pod_anywhere(with_port("a")) == "n1"
    assert cs.schedule_pod_anywhere(with_port("b")) == "n2"
    assert cs.schedule_pod_anywhere(with_port("c")) is None


def test_placed_anti_affinity_follows_fork_and_revert() -> None:
    cs = cluster(node("n1"), node("n2"))
    loner = plain_pod("loner")
    loner["metadata"]["labels"] = {"app": "web"}
    loner["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    web = plain_pod("web")
    web["metadata"]["labels"] = {"app": "web"}
    cs.fork("try")
    assert cs.schedule_pod_anywhere(loner) == "n1"
    # the placed pod's anti-affinity keeps another web pod off n1
    assert cs.schedule_pod_anywhere(web) == "n2"
    cs.revert()
    assert cs.pod_count() == 0
    assert cs.schedule_pod_anywhere(web) == "n1"  # nothing remembered of the reverted pod
    assert_indexes_consistent(cs)


def test_claims_that_cannot_be_allocated_are_the_dynamic_resources_reason() -> None:
    cs = ClusterSnapshot(MemoryStore())
    cs.dra.add_device_classes([device_class("gpu", "gpu.example.com")])
    cs.add_node(node("n1"), slices=[node_slice("n1", "gpu.example.com", "n1", devices=1)])
    cs.add_node(node("n2"))

    def pod_with_claim(name: str) -> Obj:
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"{name}-gpu", "namespace": "default", "uid": f"{name}-gpu"},
            "spec": {
                "devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}
            },
        }
        cs.dra.add_claims([claim])
        pod = plain_pod(name)
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]
        return pod

    assert cs.schedule_pod_anywhere(pod_with_claim("a")) == "n1"
    second = pod_with_claim("b")
    assert cs.schedule_pod_anywhere(second) is None
    assert cs.fit_error(second).message() == (
        "0/2 nodes are available: 2 cannot allocate all claims."
    )


def test_a_cordoned_node_takes_only_pods_that_tolerate_it() -> None:
    cs = cluster(labelled("a-cordoned", {}, spec={"unschedulable": True}), node("b-open"))
    assert cs.schedule_pod_anywhere(plain_pod("p")) == "b-open"
    tolerant = plain_pod("t")
    tolerant["spec"]["tolerations"] = [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert cs.schedule_pod_anywhere(tolerant) == "a-cordoned"
