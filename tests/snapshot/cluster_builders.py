"""Builders, fixture objects and state checks for the ClusterSnapshot tests (upstream's
``clustersnapshot_test.go``).

The fixture objects follow upstream's ``predicate_snapshot_test.go``: ``podWithClaims`` has a
pod-owned claim (referenced through a template and ``status.resourceClaimStatuses``, asking for 3
devices of driver.foo.com) and a shared claim (referenced by name, AllocationMode All on
driver.bar.com); node "specialNode" has two node-local slices, pool1/driver.foo.com and
pool2/driver.bar.com, with 3 devices each. Nodes carry ``status.allocatable`` cpu/memory/pods so
that pods fit.

A :class:`State` is both how a test's initial cluster is written into a store
(:func:`build_cluster`, the equivalent of upstream's ``SetClusterState``) and what it is
compared with (:func:`assert_state`): nodes, pods per node, claims (order of ``reservedFor``
ignored), slices and classes. Every module-level object is checked unchanged after each test
(``FIXTURE_OBJECTS``).
"""

from __future__ import annotations

import copy
import difflib
import pprint
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.controllers.claim_templates import node_name_of
from drasnap.snapshot.dra.snapshot import DraSnapshot
from drasnap.snapshot.k8s.kinds import NODE_KIND, POD_KIND, SLICE_KIND, key_of
from drasnap.snapshot.scheduling import (
    Requests,
    compute_pod_requests,
    node_allocatable_requests,
    node_facts,
    pod_facts,
)
from drasnap.store import VersionedStore

from tests.snapshot.dra_builders import (
    assert_index_consistent,
    by_key,
    recomputed_devices,
    reserved,
    test_pods,
)

if TYPE_CHECKING:
    from tests.conftest import Backend

Obj = dict[str, Any]

NODE = "specialNode"
FOO_DRIVER = "driver.foo.com"
BAR_DRIVER = "driver.bar.com"


# -- builders -----------------------------------------------------------------------------------


def node(name: str, *, cpu: str = "4", memory: str = "8Gi", pods: str = "10") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}},
    }


def node_slice(node_name: str, driver: str, pool: str, devices: int = 3) -> Obj:
    """A node-local slice: one complete pool of ``dev1..devN``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{pool}"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": pool, "generation": 0, "resourceSliceCount": 1},
            "devices": [{"name": f"dev{i}"} for i in range(1, devices + 1)],
        },
    }


def device_class(name: str, driver: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def plain_pod(name: str, *, cpu: str = "500m", memory: str = "256Mi") -> Obj:
    """A pod without claims; UID = name, namespace default."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": {
            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]
        },
    }


def bound(pod: Obj, node_name: str) -> Obj:
    out = copy.deepcopy(pod)
    out["spec"]["nodeName"] = node_name
    return out


def claim_request(class_name: str, **exactly: Any) -> Obj:
    return {
        "devices": {
            "requests": [{"name": "req", "exactly": {"deviceClassName": class_name, **exactly}}]
        }
    }


def allocation(driver: str, pool: str, node_name: str, devices: int = 3) -> Obj:
    """The ``status.allocation`` the allocator writes for ``dev1..devN`` of a node-local pool."""
    return {
        "devices": {
            "results": [
                {"request": "req", "driver": driver, "pool": pool, "device": f"dev{i}"}
                for i in range(1, devices + 1)
            ]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        },
    }


def with_allocation(claim: Obj, alloc: Obj) -> Obj:
    out = copy.deepcopy(claim)
    out.setdefault("status", {})["allocation"] = copy.deepcopy(alloc)
    return out


def pod_with_claims(name: str, owned_claim: str, shared_claim: str) -> Obj:
    """A pod with an owned claim (through a template and its status) and a shared one (by name)."""
    pod = plain_pod(name, cpu="1", memory="1Gi")
    pod["spec"]["resourceClaims"] = [
        {"name": "owned", "resourceClaimTemplateName": "foo-template"},
        {"name": "shared", "resourceClaimName": shared_claim},
    ]
    pod["status"] = {"resourceClaimStatuses": [{"name": "owned", "resourceClaimName": owned_claim}]}
    return pod


def owned_claim(name: str, owner: Obj) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"{name}-uid",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": claim_request("foo-class", allocationMode="ExactCount", count=3),
    }


def shared_claim(name: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
        "spec": claim_request("bar-class", allocationMode="All"),
    }


# -- the fixture objects ------------------------------------------------------------------------

FOO_CLASS = device_class("foo-class", FOO_DRIVER)
BAR_CLASS = device_class("bar-class", BAR_DRIVER)
CLASSES = [FOO_CLASS, BAR_CLASS]

SPECIAL_NODE = node(NODE)
SLICE_FOO = node_slice(NODE, FOO_DRIVER, "pool1")
SLICE_BAR = node_slice(NODE, BAR_DRIVER, "pool2")
SLICES = [SLICE_FOO, SLICE_BAR]
NODE1 = node("node1")
NODE2 = node("node2")

POD = pod_with_claims("podWithClaims", "podWithClaims-owned", "sharedClaim")
POD_BOUND = bound(POD, NODE)
OTHER_POD = plain_pod("otherPod")  # holds a reservation on the shared claim only
#: a second pod on the node that references POD's owned claim by name (sigs #31)
POD_USING_OWNED = bound(plain_pod("podUsingOwned"), NODE)
POD_USING_OWNED["spec"]["resourceClaims"] = [
    {"name": "borrowed", "resourceClaimName": "podWithClaims-owned"}
]

OWNED = owned_claim("podWithClaims-owned", POD)
SHARED = shared_claim("sharedClaim")
OWNED_ALLOCATION = allocation(FOO_DRIVER, "pool1", NODE)
SHARED_ALLOCATION = allocation(BAR_DRIVER, "pool2", NODE)
OWNED_ALLOCATED = with_allocation(OWNED, OWNED_ALLOCATION)
SHARED_ALLOCATED = with_allocation(SHARED, SHARED_ALLOCATION)
OWNED_ON_OTHER_NODE = with_allocation(OWNED, allocation(FOO_DRIVER, "pool1", "otherNode"))
MAX_PODS = test_pods(256)
SHARED_FULL = reserved(SHARED_ALLOCATED, *MAX_PODS)

#: what "add a node" adds in the forking variants: a node, its slice and a pod without claims
EXTRA_NODE = node("extraNode")
EXTRA_SLICE = node_slice("extraNode", FOO_DRIVER, "extraPool")
EXTRA_POD = plain_pod("extraPod")
EXTRA_POD_BOUND = bound(EXTRA_POD, "extraNode")

#: every module-level fixture object, checked unchanged after each test
FIXTURE_OBJECTS: dict[str, Any] = {
    name: value
    for name, value in dict(globals()).items()
    if name.isupper() and isinstance(value, dict | list)
}


# -- states -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class State:
    """A whole cluster: nodes, their local slices, bound pods, claims and classes."""

    nodes: list[Obj] = field(default_factory=list)
    slices: list[Obj] = field(default_factory=list)
    pods: list[Obj] = field(default_factory=list)
    claims: list[Obj] = field(default_factory=list)
    classes: list[Obj] = field(default_factory=lambda: list(CLASSES))

    def but(self, **changes: Any) -> State:
        return replace(self, **changes)

    def plus_extra_node(self) -> State:
        """This state after the forking variants' "add a node"."""
        return self.but(
            nodes=[*self.nodes, EXTRA_NODE],
            slices=[*self.slices, EXTRA_SLICE],
            pods=[*self.pods, EXTRA_POD_BOUND],
        )


def build_cluster(store: VersionedStore, state: State) -> ClusterSnapshot:
    """Write ``state`` into an empty store (SetClusterState) and wrap it in a ClusterSnapshot."""
    DraSnapshot.from_objects(store, claims=state.claims, slices=state.slices, classes=state.classes)
    for n in state.nodes:
        store.put(NODE_KIND, n["metadata"]["name"], n)
    for p in state.pods:
        store.put(POD_KIND, key_of(p), p)
    return ClusterSnapshot(store)


def add_extra_node(cs: ClusterSnapshot) -> None:
    cs.add_node(EXTRA_NODE, slices=[EXTRA_SLICE], pods=[EXTRA_POD])


def normalised_claim(claim: Obj) -> Obj:
    """The claim with ``status.reservedFor`` sorted (comparisons ignore its order)."""
    reserved_for = (claim.get("status") or {}).get("reservedFor")
    if not reserved_for:
        return claim
    out = copy.deepcopy(claim)
    out["status"]["reservedFor"] = sorted(reserved_for, key=lambda r: (r.get("uid"), r["name"]))
    return out


def _pods_by_node(pods: Iterable[Obj]) -> dict[str, list[Obj]]:
    out: dict[str, list[Obj]] = {}
    for p in pods:
        name = node_name_of(p)
        assert name is not None, f"pod {key_of(p)} is not bound"
        out.setdefault(name, []).append(p)
    return {n: sorted(ps, key=key_of) for n, ps in sorted(out.items())}


def expected(state: State) -> dict[str, Any]:
    return {
        "nodes": sorted(state.nodes, key=lambda n: n["metadata"]["name"]),
        "pods": _pods_by_node(state.pods),
        "claims": by_key([normalised_claim(c) for c in state.claims]),
        "slices": by_key(state.slices),
        "classes": by_key(state.classes),
    }


def actual(cs: ClusterSnapshot) -> dict[str, Any]:
    names = cs.node_names()
    pods = {n: sorted(cs.pods_on_node(n), key=key_of) for n in names}
    return {
        "nodes": [cs.node(n) for n in names],
        "pods": {n: ps for n, ps in pods.items() if ps},
        "claims": by_key([normalised_claim(c) for c in cs.dra.resource_claims.list()]),
        "slices": by_key(cs.dra.resource_slices.list()),
        "classes": by_key(cs.dra.device_classes.list()),
    }


def free_resources(cs: ClusterSnapshot, node: dict[str, Any]) -> Requests:
    """What the node offers minus what the snapshot counts its pods requesting (``requested``,
    which the filters read)."""
    return node_allocatable_requests(node) - cs.requested(node["metadata"]["name"])


def recomputed_free(cs: ClusterSnapshot, node_name: str) -> Requests:
    """Allocatable minus the requests of the pods the store holds on the node."""
    n = cs.node(node_name)
    assert n is not None
    used = Requests()
    for p in cs.store.items(POD_KIND).values():
        if node_name_of(p) == node_name:
            used = used + compute_pod_requests(p)
    return node_allocatable_requests(n) - used


def assert_indexes_consistent(cs: ClusterSnapshot) -> None:
    """The in-memory indexes (pods per node, used resources, allocated devices) match the store."""
    stored = cs.store.items(POD_KIND)
    assert cs.pod_count() == len(stored)
    on_nodes = 0
    for name in cs.node_names():
        from_store = sorted(k for k, p in stored.items() if node_name_of(p) == name)
        assert sorted(key_of(p) for p in cs.pods_on_node(name)) == from_store
        on_nodes += len(from_store)
        n = cs.node(name)
        assert n is not None
        assert free_resources(cs, n) == recomputed_free(cs, name)
    assert on_nodes == len(stored), "a pod is bound to a node the snapshot does not hold"
    assert_index_consistent(cs.dra)
    assert_placement_consistent(cs)


def _device_free_recomputed(cs: ClusterSnapshot, name: str) -> bool:
    """A free local device on the node, by a scan of every claim (or a pool whose newest
    generation lacks slices on the node, which the cheap checks leave to the allocator)."""
    local = cs.store.get(SLICE_KIND, name) or []
    newest: dict[Any, int] = {}
    for s in local:
        pool = (s["spec"]["driver"], s["spec"]["pool"]["name"])
        newest[pool] = max(newest.get(pool, 0), s["spec"]["pool"].get("generation", 0))
    for pool, generation in newest.items():
        there = [
            s
            for s in local
            if (s["spec"]["driver"], s["spec"]["pool"]["name"]) == pool
            and s["spec"]["pool"].get("generation", 0) == generation
        ]
        if len(there) != there[0]["spec"]["pool"].get("resourceSliceCount", 1):
            return True
    taken = recomputed_devices(cs.dra)
    return any(
        (s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]) not in taken
        for s in local
        for d in s["spec"].get("devices") or ()
    )


def _free_slots(cs: ClusterSnapshot, name: str) -> tuple[int, int, int]:
    """Free CPU, memory and pod slots as the filters count them, by a scan of the store."""
    node = cs.node(name)
    assert node is not None
    have = node_facts(node).allocatable
    used = Requests()
    for p in cs.store.items(POD_KIND).values():
        if node_name_of(p) == name:
            used = used + pod_facts(p).placed_requests
    return have.cpu - used.cpu, have.memory - used.memory, have.pods - used.pods


def assert_placement_consistent(cs: ClusterSnapshot) -> None:
    """The placement index yields exactly the nodes a scan of every node lets through
    ``schedule_pod_anywhere``'s cheap checks."""
    names = sorted(cs.store.keys(NODE_KIND))
    assert cs.node_names() == names
    free = {name: _free_slots(cs, name) for name in names}
    for cpu, memory in ((0, 0), (500, 256 * 2**20), (3000, 2**30), (0, 2**30)):
        for needs_device in (False, True):
            scan = [
                name
                for name in names
                if free[name][2] >= 1
                and (cpu == 0 or cpu <= free[name][0])
                and (memory == 0 or memory <= free[name][1])
                and (not needs_device or _device_free_recomputed(cs, name))
            ]
            found = list(cs._placement.candidates(cpu, memory, needs_device))
            assert found == scan, (cpu, memory, needs_device)


def assert_state(cs: ClusterSnapshot, state: State) -> None:
    """``cs`` holds ``state`` (a diff per part when not: this module is not assert-rewritten)."""
    have, want = actual(cs), expected(state)
    for part in want:
        if have[part] != want[part]:
            diff = difflib.unified_diff(
                pprint.pformat(want[part], width=100).splitlines(),
                pprint.pformat(have[part], width=100).splitlines(),
                "expected",
                "actual",
                lineterm="",
            )
            raise AssertionError(f"{part} differ:\n" + "\n".join(diff))
    assert_indexes_consistent(cs)


# -- backends -----------------------------------------------------------------------------------


@dataclass
class ClusterHarness:
    """ClusterSnapshots on one ``backend``; ``reopen`` closes and reopens ``*-reopen`` stores."""

    backend: Backend

    @property
    def reopens(self) -> bool:
        return self.backend.name.endswith("-reopen")

    def build(self, state: State) -> ClusterSnapshot:
        return self.reopen(build_cluster(self.backend.open(), state))

    def reopen(self, cs: ClusterSnapshot) -> ClusterSnapshot:
        if not self.reopens:
            return cs
        cs.store.checkpoint()
        return ClusterSnapshot(self.backend.reopen(cs.store))
