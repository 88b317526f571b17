"""The derived indexes follow the store, whoever moves the layers.

A hypothesis state machine drives a :class:`ClusterSnapshot` — scheduling, unscheduling, nodes
coming and going, claims allocated behind the snapshot's back — and forks, commits and reverts
through ``cs``, ``cs.dra`` or ``cs.dra.store`` at random, interleaved. After every step each
index (allocated devices, the slice and class lists, pods per node) must equal one rebuilt from
scratch from the store. On MemoryStore, and on the durable store with every value cached and
with ``cache_size=2``, closed and reopened at any depth (mid-fork included).
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import hypothesis.strategies as st
import pytest
from drasnap.snapshot.cluster.node_index import NodeIndex
from drasnap.snapshot.cluster.pod_index import NOTHING, PodIndex
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.dra.index import DeviceIndex, FlatList
from drasnap.snapshot.errors import NotFoundError, SchedulingError
from drasnap.snapshot.k8s.kinds import CLAIM_KIND, CLASS_KIND, NODE_KIND, POD_KIND, SLICE_KIND
from drasnap.store import ABSENT, MemoryStore, Store
from drasnap.store.codec import encode
from hypothesis import HealthCheck, settings
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests.snapshot.cluster_builders import (
    FOO_DRIVER,
    allocation,
    claim_request,
    device_class,
    node,
    node_slice,
    plain_pod,
    with_allocation,
)

Obj = dict[str, Any]
NODES = [f"n{i}" for i in range(5)]
PODS = [f"p{i}" for i in range(5)]


def claim_of(pod_name: str) -> Obj:
    """The pod's own claim: one device of foo-class."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": f"{pod_name}-gpu",
            "namespace": "default",
            "uid": f"{pod_name}-gpu-uid",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod_name,
                 "controller": True, "blockOwnerDeletion": True}
            ],
        },
        "spec": claim_request("foo-class", allocationMode="ExactCount", count=1),
    }  # fmt: skip


def pod(name: str) -> Obj:
    p = plain_pod(name, cpu="1", memory="1Gi")
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    p["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]}
    return p


def add_node(cs: ClusterSnapshot, name: str) -> None:
    cs.add_node(node(name, cpu="2", pods="3"), slices=[node_slice(name, FOO_DRIVER, name, 2)])


def rebuilt_devices(store: Any) -> DeviceIndex:
    fresh = DeviceIndex()
    fresh.rebuild(store.items(CLAIM_KIND))
    return fresh


def rebuilt_pods(store: Any) -> PodIndex:
    fresh = PodIndex()
    fresh.rebuild(store.items(POD_KIND))
    return fresh


def canonical(value: Any) -> str:
    return encode(value)


def nonempty(mapping: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if v and v != NOTHING}


def assert_follows(cs: ClusterSnapshot) -> None:
    """Every index of ``cs`` equals one rebuilt from the store."""
    store = cs.store
    live, fresh = cs.dra._index, rebuilt_devices(store)
    assert live.by_claim == fresh.by_claim
    assert live.refs == fresh.refs
    assert live.by_pool == fresh.by_pool
    assert live.devices() == fresh.devices()
    for flat, kind, spread in (
        (cs.dra._slice_list, SLICE_KIND, True),
        (cs.dra._class_list, CLASS_KIND, False),
    ):
        again = FlatList(store, kind, spread=spread).get()
        if flat.items is not None:
            # With every value in memory the durable store lists a kind in insertion order,
            # which the list keeps; the other stores list in layer or SQL order.
            same = list if isinstance(store, Store) and store.options.cache_size is None else sorted
            assert same(map(canonical, flat.items)) == same(map(canonical, again))
        assert sorted(map(canonical, flat.get())) == sorted(map(canonical, again))
    pods, fresh_pods = cs._pods, rebuilt_pods(store)
    assert {n: set(keys) for n, keys in nonempty(pods.by_node).items()} == {
        n: set(keys) for n, keys in nonempty(fresh_pods.by_node).items()
    }
    assert pods.node_of == fresh_pods.node_of
    assert nonempty(pods.requested) == nonempty(fresh_pods.requested)
    assert pods.anti_affinity == fresh_pods.anti_affinity
    fresh_nodes = NodeIndex(cs._nodes.restricts)
    fresh_nodes.rebuild(store.items(NODE_KIND), store.items(SLICE_KIND))
    assert cs._nodes.allocatable == fresh_nodes.allocatable
    assert cs._nodes.slices == fresh_nodes.slices
    assert cs._nodes.restricted == fresh_nodes.restricted


class FollowerMachine(RuleBasedStateMachine):
    options: ClassVar[dict[str, Any] | None] = None  # None: MemoryStore; else Store.open options

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "f.db"
        store = MemoryStore() if self.options is None else self._open()
        self.cs = ClusterSnapshot(store)
        self.cs.dra.add_device_classes([device_class("foo-class", FOO_DRIVER)])
        for name in NODES[:3]:
            add_node(self.cs, name)
        self.cs.dra.add_claims([claim_of(p) for p in PODS])

    def _open(self) -> Store:
        assert self.options is not None
        return Store.open(self.path, **self.options)

    def teardown(self) -> None:
        self.cs.close()
        self.tmp.cleanup()

    def _via(self, via: str) -> Any:
        return {"cs": self.cs, "dra": self.cs.dra, "store": self.cs.store}[via]

    # -- layers, from any level ------------------------------------------------------------

    @rule(via=st.sampled_from(["cs", "dra", "store"]))
    def fork(self, via: str) -> None:
        self._via(via).fork(f"via {via}")

    @rule(via=st.sampled_from(["cs", "dra", "store"]))
    def commit(self, via: str) -> None:
        self._via(via).commit()

    @rule(via=st.sampled_from(["cs", "dra", "store"]))
    def revert(self, via: str) -> None:
        self._via(via).revert()

    @precondition(lambda self: self.options is not None)
    @rule()
    def reopen(self) -> None:
        self.cs.close()
        self.cs = ClusterSnapshot(self._open())

    @precondition(lambda self: self.options is not None)
    @rule()
    def checkpoint(self) -> None:
        self.cs.store.checkpoint()

    # -- the cluster -------------------------------------------------------------------------

    @rule(i=st.integers(0, len(PODS) - 1))
    def schedule(self, i: int) -> None:
        with contextlib.suppress(NotFoundError):  # its claim went with a removed node
            self.cs.schedule_pod_anywhere(pod(PODS[i]))

    @rule(i=st.integers(0, len(PODS) - 1))
    def unschedule(self, i: int) -> None:
        with contextlib.suppress(NotFoundError):
            self.cs.unschedule_pod("default", PODS[i])

    @rule(i=st.integers(0, len(NODES) - 1))
    def add_or_remove_node(self, i: int) -> None:
        name = NODES[i]
        if self.cs.node(name) is None:
            add_node(self.cs, name)
        else:
            self.cs.remove_node(name)

    @rule(i=st.integers(0, len(PODS) - 1))
    def add_claim(self, i: int) -> None:
        c = claim_of(PODS[i])
        if self.cs.dra.store.get(CLAIM_KIND, f"default/{c['metadata']['name']}") is None:
            self.cs.dra.add_claims([c])

    @rule(i=st.integers(0, len(PODS) - 1), n=st.integers(0, len(NODES) - 1), allocate=st.booleans())
    def claim_behind_the_snapshots_back(self, i: int, n: int, allocate: bool) -> None:
        c = claim_of(PODS[i])
        if allocate:
            c = with_allocation(c, allocation(FOO_DRIVER, NODES[n], NODES[n], 1))
        self.cs.store.put(CLAIM_KIND, f"default/{c['metadata']['name']}", c)

    @rule(i=st.integers(0, len(PODS) - 1))
    def delete_behind_the_snapshots_back(self, i: int) -> None:
        self.cs.store.delete(POD_KIND, f"default/{PODS[i]}")
        self.cs.store.delete(CLAIM_KIND, f"default/{PODS[i]}-gpu")

    @rule(i=st.integers(0, 3))
    def add_class(self, i: int) -> None:
        if self.cs.store.get(CLASS_KIND, f"class-{i}") is None:
            self.cs.dra.add_device_classes([device_class(f"class-{i}", FOO_DRIVER)])

    @rule()
    def read_lists(self) -> None:
        self.cs.dra.resource_slices.list()
        self.cs.dra.device_classes.list()

    @rule(i=st.integers(0, len(PODS) - 1), n=st.integers(0, len(NODES) - 1))
    def schedule_on(self, i: int, n: int) -> None:
        with contextlib.suppress(NotFoundError, SchedulingError):
            self.cs.schedule_pod(pod(PODS[i]), NODES[n])

    @invariant()
    def indexes_follow_the_store(self) -> None:
        assert_follows(self.cs)


BACKENDS = {
    "memory": None,
    "sqlite": {},
    "sqlite-cache-2": {"cache_size": 2},
}


@pytest.mark.parametrize("options", BACKENDS.values(), ids=BACKENDS.keys())
def test_indexes_follow_every_fork_commit_and_revert(options: dict[str, Any] | None) -> None:
    machine = type("Machine", (FollowerMachine,), {"options": options})
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=100 if options is None else 40,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


@pytest.mark.parametrize("options", [{}, {"cache_size": 2}], ids=["sqlite", "sqlite-cache-2"])
def test_a_revert_after_a_reopen_mid_fork_restores_the_indexes(
    tmp_path: Path, options: dict[str, Any]
) -> None:
    path = tmp_path / "mid.db"
    with ClusterSnapshot(Store.open(path, **options)) as cs:
        cs.dra.add_device_classes([device_class("foo-class", FOO_DRIVER)])
        add_node(cs, "n0")
        cs.dra.add_claims([claim_of("p0")])
        cs.fork("outer")
        cs.dra.fork("inner")
        assert cs.schedule_pod_anywhere(pod("p0")) == "n0"
    with ClusterSnapshot(Store.open(path, **options)) as cs:
        assert cs.pods_on_node("n0") and cs.dra.resource_claims.list_all_allocated_devices()
        cs.store.revert()  # a layer from before the reopen, reverted on the store itself
        assert_follows(cs)
        assert cs.pods_on_node("n0") == []
        assert cs.dra.resource_claims.list_all_allocated_devices() == set()
        cs.dra.revert()
        assert cs.depth == 0
        assert_follows(cs)


def test_followers_are_told_once_and_can_leave() -> None:
    store = MemoryStore()
    seen: list[tuple[str, str, Any]] = []

    class Recorder:
        def changed(self, kind: str, key: str, value: Any) -> None:
            seen.append((kind, key, value))

    recorder = Recorder()
    store.follow(["a"], recorder)
    store.follow(["a", "b"], recorder)
    store.put("a", "x", 1)
    store.put("c", "x", 1)  # not followed
    store.fork()
    store.put("b", "y", 2)
    store.revert()
    store.unfollow(recorder)
    store.put("a", "x", 3)
    assert seen == [("a", "x", 1), ("b", "y", 2), ("b", "y", ABSENT)]


def test_values_of_other_shapes_written_to_the_store_are_followed_without_error() -> None:
    """The store takes any JSON under any kind: the followers never raise on it (the store's
    write is done by then), and treat it as allocating nothing, bound nowhere, one item."""
    cs = ClusterSnapshot(MemoryStore())
    add_node(cs, "n0")
    cs.dra.resource_slices.list()
    cs.store.fork()
    cs.store.put(CLAIM_KIND, "default/odd", ["not", "a", "claim"])
    cs.store.put(POD_KIND, "default/odd", "not a pod")
    cs.store.put(SLICE_KIND, "odd", {"not": "a list"})
    assert_follows(cs)
    assert cs.dra.resource_claims.list_all_allocated_devices() == set()
    cs.store.revert()
    assert_follows(cs)
