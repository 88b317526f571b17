"""The shortcuts of ``ClusterSnapshot`` against the filters run in full.

``schedule_pod_anywhere`` skips the filters for a pod and node that no filter declares it
may refuse (``scheduling.relevance``), and skips nodes short of CPU, memory or a pod slot
without running any. The differential test places random pods on random clusters both ways:
through ``schedule_pod_anywhere``, and by trying ``schedule_pod`` (every filter, every time) on
each node in a fork, in name order (``node_names``, the order ``schedule_pod_anywhere``
tries) or in the order given to both, keeping the first that takes the pod. Same node, same
state written (the claims' allocations included), or both refuse. ``plan_moves`` is compared
the same way with unscheduling a node's pods and placing them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from drasnap.snapshot.cluster import snapshot as cluster_snapshot
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import SchedulingError
from drasnap.snapshot.scheduling import (
    ClusterView,
    NodeFacts,
    PodFacts,
    Proceed,
    Relevance,
    default_plugins,
    node_facts,
    pod_facts,
)
from drasnap.store import MemoryStore
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.snapshot.cluster_builders import FOO_DRIVER, device_class, node_slice
from tests.snapshot.scheduling.builders import node, pod

Obj = dict[str, Any]

NAMES = ["alpha", "c1", "c10", "c2", "delta", "echo"]  # name order is not insertion order
HOSTNAME = "kubernetes.io/hostname"
CLASS = "gpu"

TAINTS: list[Obj] = [
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "spot", "value": "", "effect": "NoExecute"},
    {"key": "soft", "value": "", "effect": "PreferNoSchedule"},  # not a filter's business
]
TOLERATIONS = [
    {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    {"key": "spot", "operator": "Exists"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
    {"operator": "Exists"},
]


def _selector(app: str) -> Obj:
    return {"matchLabels": {"app": app}}


def _pod_term(app: str, key: str) -> Obj:
    return {"labelSelector": _selector(app), "topologyKey": key}


NODE_AFFINITIES: list[Obj] = [
    {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}},
    {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c10", "echo"]}]}
    ]}}},
    {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1,
        "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
    }]}},
]  # fmt: skip

POD_AFFINITIES: list[Obj] = [
    {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_pod_term("x", "zone")]}},
    {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        _pod_term("y", HOSTNAME)]}},
    {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": _pod_term("x", "zone")}]}},
]  # fmt: skip

SPREADS: list[list[Obj]] = [
    [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
      "labelSelector": _selector("x")}],
    [{"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule",
      "labelSelector": _selector("y"), "nodeTaintsPolicy": "Honor"}],
    [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
      "labelSelector": _selector("x")}],
]  # fmt: skip


def _key(taint: Mapping[str, Any]) -> str:
    return str(taint["key"])


def _with_port(body: Obj, port: int | None) -> Obj:
    if port is not None:
        body["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": port}]
    return body


@st.composite
def existing_pods(draw: st.DrawFn, node_name: str) -> list[Obj]:
    """Pods already on ``node_name``, over-committing it at times (add_node checks no fit)."""
    out: list[Obj] = []
    for i in range(draw(st.integers(0, 2))):
        body = pod(
            f"{node_name}-run{i}",
            labels={"app": draw(st.sampled_from(["x", "y"]))},
            requests={
                "cpu": draw(st.sampled_from(["0", "500m", "3"])),
                "memory": draw(st.sampled_from(["0", "512Mi"])),
            },
            node_name=node_name,
        )
        if draw(st.integers(0, 5)) == 0:
            required = {"requiredDuringSchedulingIgnoredDuringExecution": [_pod_term("x", "zone")]}
            body["spec"]["affinity"] = {"podAntiAffinity": required}
        out.append(_with_port(body, draw(st.sampled_from([None, None, None, 80]))))
    return out


@st.composite
def clusters(draw: st.DrawFn) -> list[tuple[Obj, int, list[Obj]]]:
    """(node, its devices, its pods), in the order they are added."""
    names = draw(st.permutations(NAMES))[: draw(st.integers(2, len(NAMES)))]
    out = []
    for name in names:
        labels = {HOSTNAME: name}
        zone = draw(st.sampled_from([None, "a", "b"]))
        if zone:
            labels["zone"] = zone
        if draw(st.booleans()):
            labels["disk"] = "ssd"
        allocatable = {
            "cpu": draw(st.sampled_from(["1", "2", "4"])),
            "memory": draw(st.sampled_from(["1Gi", "2Gi"])),
            "pods": draw(st.sampled_from(["1", "3", "110"])),
        }
        for resource in ("ephemeral-storage", "example.com/gpu"):
            amount = draw(st.sampled_from([None, "1", "1Gi"]))
            if amount is not None:
                allocatable[resource] = amount
        body = node(
            name,
            labels=labels,
            taints=draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique_by=_key))
            if draw(st.booleans())
            else (),
            unschedulable=draw(st.integers(0, 4)) == 0,
            allocatable=allocatable,
        )
        out.append((body, draw(st.integers(0, 2)), draw(existing_pods(name))))
    return out


CONSTRAINTS = [
    "selector",
    "node affinity",
    "pod affinity",
    "spread",
    "port",
    "other resource",
    "node name",
]


@st.composite
def pending_pods(draw: st.DrawFn, index: int, theme: str) -> tuple[Obj, bool]:
    """A pod to place, and whether it has a claim for one device.

    Most pods carry one constraint or none, so that each filter decides often: a pod with
    every constraint at once would be refused almost everywhere, whatever the shortcut did.
    Two in three carry the example's ``theme``, so that pods of one kind meet (spread and affinity
    count the pods placed before).
    """
    if draw(st.integers(0, 2)):
        kinds = {theme}
    else:
        kinds = set(draw(st.lists(st.sampled_from(CONSTRAINTS), max_size=2)))
    requests = {
        "cpu": draw(st.sampled_from(["0", "100m", "1", "3"])),
        "memory": draw(st.sampled_from(["0", "256Mi", "1Gi"])),
    }
    if "other resource" in kinds:
        resource = draw(st.sampled_from(["ephemeral-storage", "example.com/gpu"]))
        requests[resource] = draw(st.sampled_from(["1", "512Mi"]))
    spec: Obj = {}
    if draw(st.booleans()):
        spec["tolerations"] = draw(st.lists(st.sampled_from(TOLERATIONS), min_size=1, max_size=2))
    if "selector" in kinds:
        spec["nodeSelector"] = draw(st.sampled_from([{"disk": "ssd"}, {"zone": "a"}]))
    if "node affinity" in kinds:
        spec["affinity"] = draw(st.sampled_from(NODE_AFFINITIES))
    if "pod affinity" in kinds:
        spec["affinity"] = {**spec.get("affinity", {}), **draw(st.sampled_from(POD_AFFINITIES))}
    app = draw(st.sampled_from(["x", "y"]))
    if "spread" in kinds:
        spread = draw(st.sampled_from(SPREADS))
        spec["topologySpreadConstraints"] = spread
        if draw(st.integers(0, 3)):  # mostly a pod its own constraint counts
            app = spread[0]["labelSelector"]["matchLabels"]["app"]
    body = pod(
        f"p{index}",
        labels={"app": app},
        requests=requests,
        node_name=draw(st.sampled_from(NAMES)) if "node name" in kinds else None,
        **spec,
    )
    if "port" in kinds:
        _with_port(body, draw(st.sampled_from([80, 81])))
    claimed = draw(st.integers(0, 3)) == 0
    if claimed:
        body["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimName": f"p{index}-gpu"}]
    return body, claimed


def _claim(name: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": CLASS}}]}},
    }


def _build(cluster: list[tuple[Obj, int, list[Obj]]]) -> ClusterSnapshot:
    cs = ClusterSnapshot(MemoryStore())
    cs.dra.add_device_classes([device_class(CLASS, FOO_DRIVER)])
    for body, devices, pods in cluster:
        name = body["metadata"]["name"]
        slices = [node_slice(name, FOO_DRIVER, name, devices)] if devices else []
        cs.add_node(body, slices=slices, pods=pods)
    return cs


def _first_fit_in_full(
    cs: ClusterSnapshot, body: Obj, order: list[str]
) -> tuple[str | None, str | None]:
    """The first node of ``order`` where ``schedule_pod`` (every filter) takes the pod, and
    the state digest it leaves; nothing is kept."""
    for name in order:
        cs.fork()
        try:
            cs.schedule_pod(body, name)
        except SchedulingError:
            continue
        else:
            return name, cs.store.state_digest()
        finally:
            cs.revert()
    return None, None


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_schedule_pod_anywhere_places_where_the_full_filter_run_would(
    cluster: list[tuple[Obj, int, list[Obj]]], data: st.DataObject
) -> None:
    cs = _build(cluster)
    theme = data.draw(st.sampled_from(CONSTRAINTS))
    for index in range(data.draw(st.integers(2, 8))):
        body, claimed = data.draw(pending_pods(index, theme))
        if claimed:
            cs.dra.add_claims([_claim(f"p{index}-gpu")])
        # By name, as schedule_pod_anywhere tries them (node_names), or in an order given.
        order = data.draw(st.none() | st.permutations(cs.node_names()))
        expected, digest = _first_fit_in_full(cs, body, order or cs.node_names())
        assert cs.schedule_pod_anywhere(body, order) == expected
        if expected is None:
            cs.fit_error(body)  # and the scheduler's answer agrees: it fits no node
        else:
            assert cs.store.state_digest() == digest


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_plan_moves_plans_what_placing_the_pods_again_does(
    cluster: list[tuple[Obj, int, list[Obj]]], data: st.DataObject
) -> None:
    cs = _build(cluster)
    busy = [name for name in cs.node_names() if cs.pods_on_node(name)]
    assume(busy)
    leaving = data.draw(st.sampled_from(busy))
    on_node = cs.pods_on_node(leaving)
    decided, targets = cs.plan_moves(on_node, leaving)
    if not decided:
        return  # the filters proper must say: nothing to compare
    cs.fork()
    pods = [cs.unschedule_pod("default", p["metadata"]["name"]) for p in on_node]
    cs.remove_node(leaving)
    placed = []
    for body in pods:
        placed.append(cs.schedule_pod_anywhere(body))
        if placed[-1] is None:
            break
    assert targets == (None if None in placed else placed)


# -- a filter added to the list ------------------------------------------------------------------


class RejectEverything:
    """A new filter that has declared nothing: every node refused."""

    name = "RejectEverything"

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Proceed:
        return Proceed()

    def filter(
        self, state: Any, pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        return ("rejected by a new filter",)


class RejectLabelled(RejectEverything):
    """A new filter that declares the nodes it refuses pods on: those labelled ``reject``."""

    name = "RejectLabelled"

    def relevant_for_node(self, node: NodeFacts) -> bool:
        return "reject" in node.labels

    def filter(
        self, state: Any, pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        return ("rejected by a new filter",) if "reject" in node.labels else None


def _with_filter(monkeypatch: pytest.MonkeyPatch, extra: object) -> None:
    def plugins(*args: Any, **kwargs: Any) -> list[Any]:
        return [*default_plugins(*args, **kwargs), extra]

    monkeypatch.setattr(cluster_snapshot, "default_plugins", plugins)


def test_a_filter_that_rejects_everything_is_obeyed_by_every_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_filter(monkeypatch, RejectEverything())
    cs = ClusterSnapshot(MemoryStore())
    running = pod("running", requests={"cpu": "100m"}, node_name="n1")
    cs.add_node(node("n1"), pods=[running])
    cs.add_node(node("n2"))
    plain = pod("plain", requests={"cpu": "100m", "memory": "1Mi"})
    with pytest.raises(SchedulingError, match="rejected by a new filter"):
        cs.schedule_pod(plain, "n1")
    assert cs.schedule_pod_anywhere(plain) is None
    assert "rejected by a new filter" in cs.fit_error(plain).message()
    assert cs.plan_moves(cs.pods_on_node("n1"), "n1") == (False, None)
    with pytest.raises(SchedulingError, match="cannot move in one write"):
        cs.move(cs.pods_on_node("n1")[0], "n2")


def test_a_filter_that_declares_its_nodes_is_skipped_only_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_filter(monkeypatch, RejectLabelled())
    cs = ClusterSnapshot(MemoryStore())
    refusing = node("n1", labels={HOSTNAME: "n1", "reject": ""})
    running = pod("running", requests={"cpu": "100m"}, node_name="n0")
    cs.add_node(node("n0"), pods=[running])
    cs.add_node(refusing)
    cs.add_node(node("n2"))
    plain = pod("plain", requests={"cpu": "100m"})
    with pytest.raises(SchedulingError, match="rejected by a new filter"):
        cs.schedule_pod(plain, "n1")
    assert cs.plan_moves(cs.pods_on_node("n0"), "n0") == (False, None)  # n1 needs the filters
    assert cs.schedule_pod_anywhere(plain, ["n1", "n2"]) == "n2"


def test_a_plugin_without_declarations_makes_no_pod_plain() -> None:
    plain = pod_facts(pod("plain", requests={"cpu": "100m"}))
    assert Relevance(default_plugins()).pod_is_plain(plain)
    assert not Relevance([*default_plugins(), RejectEverything()]).pod_is_plain(plain)
    # Declared per node only: the pod stays plain, the labelled nodes are restricted.
    relevance = Relevance([*default_plugins(), RejectLabelled()])
    assert relevance.pod_is_plain(plain)
    labelled = node("n1", labels={"reject": ""})
    assert relevance.restricted(node_facts(labelled))
    assert not relevance.restricted(node_facts(node("n2")))


def test_the_pod_on_its_node_is_asked_as_it_will_be_off_it() -> None:
    relevance = Relevance(default_plugins())
    on_node = pod_facts(pod("p", requests={"cpu": "100m"}, node_name="n1"))
    assert not relevance.pod_is_plain(on_node)  # it names its node: NodeName matters
    assert relevance.pod_is_plain(on_node, off_node=True)
    assert not relevance.pod_is_plain(on_node)  # what is remembered is the pod off its node


def test_a_pod_asking_no_cpu_fits_an_overcommitted_node_on_every_path() -> None:
    # fitsRequest checks no resource asked at 0: the filters, the shortcut and the recorded
    # placement written again (place) agree.
    cs = ClusterSnapshot(MemoryStore())
    heavy = pod("heavy", requests={"cpu": "3", "memory": "1Gi"}, node_name="n1")
    cs.add_node(node("n1", allocatable={"cpu": "1", "memory": "2Gi", "pods": "4"}), pods=[heavy])
    zero = pod("zero", requests={"memory": "1Mi"})
    cs.fork()
    cs.schedule_pod(zero, "n1")
    cs.revert()
    with cs.recording() as log:
        cs.fork()
        assert cs.schedule_pod_anywhere(zero) == "n1"
        cs.revert()
    cs.place(zero, log[0])
    assert [p["metadata"]["name"] for p in cs.pods_on_node("n1")] == ["heavy", "zero"]
    assert cs.plan_moves([zero], "other") == (True, ["n1"])
