"""ClusterSnapshot: the cluster-level DRA conformance cases of upstream's
``clustersnapshot_test.go``, resource fit, caller objects never mutated, and the pods-per-node index
against a recomputation.

Every case runs on each store backend. On ``sqlite-reopen`` the initial state is written, the
store closed and reopened, the operation applied, and the store reopened again before the check,
so partial states left by failing operations must survive a reopen too. The forking variants of
the same cases are in ``test_cluster_forking.py``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import AlreadyTrackedError, NotFoundError, SchedulingError
from drasnap.snapshot.k8s.claims import is_for_pod
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.scheduling import Requests, compute_pod_requests, node_allocatable_requests
from drasnap.store import MemoryStore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Backend
from tests.snapshot.cluster_builders import (
    FIXTURE_OBJECTS,
    NODE,
    NODE1,
    NODE2,
    OTHER_POD,
    OWNED,
    OWNED_ALLOCATED,
    OWNED_ON_OTHER_NODE,
    POD,
    POD_BOUND,
    POD_USING_OWNED,
    SHARED,
    SHARED_ALLOCATED,
    SHARED_FULL,
    SLICES,
    SPECIAL_NODE,
    ClusterHarness,
    Obj,
    State,
    assert_indexes_consistent,
    assert_state,
    bound,
    build_cluster,
    claim_request,
    device_class,
    free_resources,
    node,
    plain_pod,
)
from tests.snapshot.dra_builders import reserved


@pytest.fixture
def harness(backend: Backend) -> ClusterHarness:
    return ClusterHarness(backend)


@pytest.fixture(autouse=True)
def _fixture_objects_unchanged() -> Any:
    before = copy.deepcopy(FIXTURE_OBJECTS)
    yield
    assert before == FIXTURE_OBJECTS


_ANY = object()


@dataclass(frozen=True)
class Case:
    id: str
    initial: State
    op: Callable[[ClusterSnapshot], Any]
    modified: State
    error: tuple[type[Exception], str] | None = None
    returns: Any = _ANY


def run_op(cs: ClusterSnapshot, case: Case) -> None:
    """Apply the case's operation; check its error or result, and that no input was mutated."""
    before = copy.deepcopy(FIXTURE_OBJECTS)
    if case.error is None:
        out = case.op(cs)
        if case.returns is not _ANY:
            assert out == case.returns
    else:
        cls, fragment = case.error
        with pytest.raises(cls, match=re.escape(fragment)) as info:
            case.op(cs)
        assert type(info.value) is cls
    assert before == FIXTURE_OBJECTS, "the operation mutated an object its caller passed"


# -- the cases (upstream's clustersnapshot_test.go, "DRA cases") -------------------------------

EMPTY = State()
#: the node with its slices, podWithClaims not scheduled, both claims unallocated
NODE_READY = State(nodes=[SPECIAL_NODE], slices=SLICES, claims=[OWNED, SHARED])
#: podWithClaims scheduled on the node, both claims allocated there and reserved for it only
SCHEDULED = State(
    nodes=[SPECIAL_NODE],
    slices=SLICES,
    pods=[POD_BOUND],
    claims=[reserved(OWNED_ALLOCATED, POD), reserved(SHARED_ALLOCATED, POD)],
)
#: the same, with the shared claim also reserved for another pod
SCHEDULED_SHARING = SCHEDULED.but(
    claims=[reserved(OWNED_ALLOCATED, POD), reserved(SHARED_ALLOCATED, POD, OTHER_POD)]
)
THREE_NODES_READY = NODE_READY.but(nodes=[NODE1, NODE2, SPECIAL_NODE])


def add_node_with_pod(claims: list[Obj]) -> Callable[[ClusterSnapshot], None]:
    def op(cs: ClusterSnapshot) -> None:
        cs.add_node(SPECIAL_NODE, slices=SLICES, pods=[POD], claims=claims)

    return op


def add_empty_node(cs: ClusterSnapshot) -> None:
    cs.add_node(SPECIAL_NODE, slices=SLICES)


def remove_node(cs: ClusterSnapshot) -> None:
    cs.remove_node(NODE)


def remove_and_add_back(cs: ClusterSnapshot) -> None:
    """RemoveNodeInfo, then AddNodeInfo of the NodeInfo read before (its pods' owned claims)."""
    n = cs.node(NODE)
    assert n is not None
    slices = cs.dra.node_resource_slices(NODE)
    assert slices is not None
    pods = cs.pods_on_node(NODE)
    owned = [c for p in pods for c in cs.dra.pod_claims(p) if is_for_pod(p, c)]
    cs.remove_node(NODE)
    cs.add_node(n, slices=slices, pods=pods, claims=owned)


def schedule(cs: ClusterSnapshot) -> None:
    cs.schedule_pod(POD, NODE)


def schedule_anywhere(cs: ClusterSnapshot) -> str | None:
    return cs.schedule_pod_anywhere(POD)


def unschedule(cs: ClusterSnapshot) -> Obj:
    return cs.unschedule_pod("default", "podWithClaims")


def unschedule_and_back(cs: ClusterSnapshot) -> None:
    cs.schedule_pod(cs.unschedule_pod("default", "podWithClaims"), NODE)


CASES = [
    # -- AddNodeInfo --
    Case(
        "add-empty-node-with-slices",
        EMPTY,
        add_empty_node,
        EMPTY.but(nodes=[SPECIAL_NODE], slices=SLICES),
    ),
    Case(
        "add-node-pod-with-allocated-owned-and-shared-claims",
        EMPTY.but(claims=[SHARED_ALLOCATED]),
        add_node_with_pod([OWNED_ALLOCATED]),
        SCHEDULED,
    ),
    Case(
        "add-node-whose-slices-are-already-tracked",
        EMPTY.but(slices=SLICES),
        add_empty_node,
        EMPTY.but(slices=SLICES),
        error=(
            AlreadyTrackedError,
            'couldn\'t add ResourceSlices to DRA snapshot: node "specialNode" ResourceSlices '
            "already present",
        ),
    ),
    Case(
        "add-node-already-tracked",
        EMPTY.but(nodes=[SPECIAL_NODE]),
        add_empty_node,
        EMPTY.but(nodes=[SPECIAL_NODE]),
        error=(AlreadyTrackedError, "node 'specialNode' already tracked"),
    ),
    Case(
        "add-node-pod-owned-claim-already-tracked",
        EMPTY.but(claims=[SHARED_ALLOCATED, OWNED_ALLOCATED]),
        add_node_with_pod([OWNED_ALLOCATED]),
        # no rollback: the slices stay; the node is not added (upstream stores it last)
        EMPTY.but(slices=SLICES, claims=[SHARED_ALLOCATED, OWNED_ALLOCATED]),
        error=(AlreadyTrackedError, "claim default/podWithClaims-owned already tracked"),
    ),
    Case(
        "add-node-pod-owned-claim-unallocated",
        EMPTY.but(claims=[SHARED_ALLOCATED]),
        add_node_with_pod([OWNED]),
        # partial changes remain: slices, the owned claim added, both claims reserved
        EMPTY.but(slices=SLICES, claims=[reserved(OWNED, POD), reserved(SHARED_ALLOCATED, POD)]),
        error=(
            SchedulingError,
            "pod default/podWithClaims needs claim default/podWithClaims-owned to schedule, but "
            "it isn't available on node specialNode (allocated: false, available: false)",
        ),
    ),
    Case(
        "add-node-pod-owned-claim-allocated-on-another-node",
        EMPTY.but(claims=[SHARED_ALLOCATED]),
        add_node_with_pod([OWNED_ON_OTHER_NODE]),
        EMPTY.but(
            slices=SLICES,
            claims=[reserved(OWNED_ON_OTHER_NODE, POD), reserved(SHARED_ALLOCATED, POD)],
        ),
        error=(SchedulingError, "isn't available on node specialNode (allocated: true, "),
    ),
    Case(
        "add-node-pod-shared-claim-fully-reserved",
        EMPTY.but(claims=[SHARED_FULL]),
        add_node_with_pod([OWNED_ALLOCATED]),
        # the owned claim was added, but not reserved (reservation is all or nothing)
        EMPTY.but(slices=SLICES, claims=[OWNED_ALLOCATED, SHARED_FULL]),
        error=(
            SchedulingError,
            "couldn't add pod default/podWithClaims reservations to claims, this shouldn't "
            "happen: claim default/sharedClaim already has max number of reservations set",
        ),
    ),
    Case(
        "add-node-pod-without-its-owned-claim",
        EMPTY.but(claims=[SHARED_ALLOCATED]),
        add_node_with_pod([]),
        EMPTY.but(slices=SLICES, claims=[SHARED_ALLOCATED]),
        error=(NotFoundError, "couldn't find ResourceClaim in the snapshot"),
    ),
    # -- RemoveNodeInfo --
    Case(
        "remove-node",
        SCHEDULED,
        remove_node,
        # node, slices, pod and owned claim gone; the shared claim stays allocated, unreserved
        EMPTY.but(claims=[SHARED_ALLOCATED]),
    ),
    Case("remove-node-then-add-it-back", SCHEDULED, remove_and_add_back, SCHEDULED),
    Case(
        "remove-unknown-node",
        SCHEDULED,
        lambda cs: cs.remove_node("nonExistingNode"),
        SCHEDULED,
        error=(NotFoundError, "node 'nonExistingNode' not found in the snapshot"),
    ),
    Case(
        # sigs #31/#32: the second pod's reference to the tombstoned claim is skipped
        "remove-node-second-pod-references-first-pods-owned-claim",
        SCHEDULED.but(
            pods=[POD_BOUND, POD_USING_OWNED],
            claims=[
                reserved(OWNED_ALLOCATED, POD, POD_USING_OWNED),
                reserved(SHARED_ALLOCATED, POD),
            ],
        ),
        remove_node,
        EMPTY.but(claims=[SHARED_ALLOCATED]),
    ),
    # -- SchedulePod --
    Case(
        "schedule-pod-both-claims-unallocated",
        NODE_READY,
        schedule,
        # owned: dev1-3 of pool1; shared: all 3 devices of pool2; both pinned to the node
        SCHEDULED,
    ),
    Case(
        "schedule-pod-shared-claim-already-allocated",
        NODE_READY.but(claims=[OWNED, SHARED_ALLOCATED]),
        schedule,
        SCHEDULED,
    ),
    Case(
        "schedule-pod-claim-missing",
        NODE_READY.but(claims=[SHARED]),
        schedule,
        NODE_READY.but(claims=[SHARED]),
        error=(
            NotFoundError,
            "error while obtaining ResourceClaim owned for pod default/podWithClaims: couldn't "
            "find ResourceClaim in the snapshot",
        ),
    ),
    Case(
        "schedule-pod-shared-claim-fully-reserved",
        NODE_READY.but(claims=[OWNED, SHARED_FULL]),
        schedule,
        # no rollback, as upstream: the owned claim stays allocated; the pod is not placed
        NODE_READY.but(claims=[OWNED_ALLOCATED, SHARED_FULL]),
        error=(SchedulingError, "already has max number of reservations set, can't add more"),
    ),
    Case(
        "schedule-pod-unknown-node",
        NODE_READY,
        lambda cs: cs.schedule_pod(POD, "nonExistingNode"),
        NODE_READY,
        error=(SchedulingError, "node 'nonExistingNode' not found in the snapshot"),
    ),
    # -- SchedulePodOnAnyNodeMatching --
    Case(
        "schedule-anywhere-only-one-node-has-slices",
        THREE_NODES_READY,
        schedule_anywhere,
        SCHEDULED.but(nodes=[NODE1, NODE2, SPECIAL_NODE]),
        returns=NODE,
    ),
    Case(
        "schedule-anywhere-claim-missing",
        THREE_NODES_READY.but(claims=[SHARED]),
        schedule_anywhere,
        THREE_NODES_READY.but(claims=[SHARED]),
        error=(NotFoundError, "couldn't find ResourceClaim in the snapshot"),
    ),
    Case(
        "schedule-anywhere-shared-claim-fully-reserved",
        THREE_NODES_READY.but(claims=[OWNED, SHARED_FULL]),
        schedule_anywhere,
        THREE_NODES_READY.but(claims=[OWNED_ALLOCATED, SHARED_FULL]),
        error=(SchedulingError, "already has max number of reservations set"),
    ),
    # -- UnschedulePod --
    Case(
        "unschedule-pod",
        SCHEDULED,
        unschedule,
        # both claims were the pod's only: unreserved and deallocated
        NODE_READY,
        returns=POD,
    ),
    Case("unschedule-then-schedule-back", SCHEDULED, unschedule_and_back, SCHEDULED),
    Case(
        "unschedule-pod-shared-claim-reserved-by-another-pod",
        SCHEDULED_SHARING,
        unschedule,
        # owned: deallocated and unreserved; shared: allocation and the other reservation kept
        NODE_READY.but(claims=[OWNED, reserved(SHARED_ALLOCATED, OTHER_POD)]),
        returns=POD,
    ),
    Case(
        "unschedule-shared-claim-reserved-by-another-pod-then-schedule-back",
        SCHEDULED_SHARING,
        unschedule_and_back,
        SCHEDULED_SHARING,  # reservedFor order differs: [other, pod]; ignored
    ),
    Case(
        "unschedule-unknown-pod",
        SCHEDULED,
        lambda cs: cs.unschedule_pod("default", "nonExistingPod"),
        SCHEDULED,
        error=(NotFoundError, "pod default/nonExistingPod not found on any node"),
    ),
]
CASES_BY_ID = {c.id: c for c in CASES}
assert len(CASES_BY_ID) == len(CASES), "case ids must be unique"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(harness: ClusterHarness, case: Case) -> None:
    cs = harness.build(case.initial)
    assert_state(cs, case.initial)
    run_op(cs, case)
    cs = harness.reopen(cs)
    assert_state(cs, case.modified)


def test_node_reads_carry_slices_and_pod_claims(harness: ClusterHarness) -> None:
    """GetNodeInfo / ListNodeInfos: the node's slices and each pod's claims; none without."""
    cs = harness.build(SCHEDULED.but(nodes=[NODE1, SPECIAL_NODE]))
    assert cs.node_names() == ["node1", NODE]
    assert cs.node(NODE) == SPECIAL_NODE
    assert cs.node("unknown") is None
    assert cs.dra.node_resource_slices(NODE) == SLICES
    assert cs.dra.node_resource_slices("node1") is None
    assert cs.pods_on_node("node1") == []
    assert cs.pods_on_node(NODE) == [POD_BOUND]
    assert cs.pod("default", "podWithClaims") == POD_BOUND
    assert cs.pod("default", "unknown") is None
    assert cs.pod_count() == 1
    assert cs.dra.pod_claims(POD_BOUND) == [
        reserved(OWNED_ALLOCATED, POD),
        reserved(SHARED_ALLOCATED, POD),
    ]


# -- CPU, memory and pod-count fit --------------------------------------------------------------

SMALL = node("small", cpu="1", memory="1Gi", pods="2")
BIG = node("big", cpu="8", memory="16Gi", pods="110")


@pytest.mark.parametrize(
    ("pod", "short"),
    [
        (plain_pod("cpu-hog", cpu="1500m", memory="128Mi"), "Insufficient cpu"),
        (plain_pod("memory-hog", cpu="100m", memory="2Gi"), "Insufficient memory"),
        (plain_pod("both-hog", cpu="2", memory="2Gi"), "Insufficient cpu, Insufficient memory"),
    ],
    ids=["cpu", "memory", "cpu-and-memory"],
)
def test_pod_that_does_not_fit(harness: ClusterHarness, pod: Obj, short: str) -> None:
    cs = harness.build(State(nodes=[SMALL]))
    with pytest.raises(SchedulingError, match=f"does not fit on node small: {short}$"):
        cs.schedule_pod(pod, "small")
    assert cs.pods_on_node("small") == []
    assert free_resources(cs, SMALL) == node_allocatable_requests(SMALL)


def test_pod_count_limit(harness: ClusterHarness) -> None:
    cs = harness.build(State(nodes=[SMALL]))
    tiny = [plain_pod(f"tiny-{i}", cpu="10m", memory="1Mi") for i in range(3)]
    cs.schedule_pod(tiny[0], "small")
    cs.schedule_pod(tiny[1], "small")
    with pytest.raises(SchedulingError, match=r"does not fit on node small: Too many pods$"):
        cs.schedule_pod(tiny[2], "small")
    cs = harness.reopen(cs)
    assert free_resources(cs, SMALL) == Requests(cpu=980, memory=2**30 - 2 * 2**20, pods=0)
    assert_indexes_consistent(cs)


def test_requests_count_init_containers_and_overhead(harness: ClusterHarness) -> None:
    """The larger of the containers' sum and any init container, plus the pod overhead."""
    init_heavy = plain_pod("init-heavy", cpu="200m", memory="64Mi")
    init_heavy["spec"]["initContainers"] = [
        {"name": "init", "resources": {"requests": {"cpu": "1200m"}}}
    ]
    with_overhead = plain_pod("with-overhead", cpu="900m", memory="64Mi")
    with_overhead["spec"]["overhead"] = {"cpu": "200m"}
    assert compute_pod_requests(init_heavy) == Requests(cpu=1200, memory=64 * 2**20, pods=1)
    assert compute_pod_requests(with_overhead) == Requests(cpu=1100, memory=64 * 2**20, pods=1)
    cs = harness.build(State(nodes=[SMALL]))
    for p in (init_heavy, with_overhead):
        with pytest.raises(SchedulingError, match=r"does not fit on node small: Insufficient cpu$"):
            cs.schedule_pod(p, "small")


def test_schedule_anywhere_skips_nodes_where_the_pod_does_not_fit(harness: ClusterHarness) -> None:
    cs = harness.build(State(nodes=[SMALL, BIG]))  # tried in name order: big, small
    hog = plain_pod("hog", cpu="7", memory="1Gi")
    assert cs.schedule_pod_anywhere(hog, ["small", "big"]) == "big"
    # now "big" has 1 CPU left: a 1500m pod fits nowhere and nothing is written
    assert cs.schedule_pod_anywhere(plain_pod("p", cpu="1500m", memory="1Mi")) is None
    # a 900m pod goes to "big" first (by name), the next one to "small"
    assert cs.schedule_pod_anywhere(plain_pod("q1", cpu="900m", memory="1Mi")) == "big"
    assert cs.schedule_pod_anywhere(plain_pod("q2", cpu="900m", memory="1Mi")) == "small"
    cs = harness.reopen(cs)
    assert [p["metadata"]["name"] for p in cs.pods_on_node("big")] == ["hog", "q1"]
    assert [p["metadata"]["name"] for p in cs.pods_on_node("small")] == ["q2"]
    assert cs.pod("default", "p") is None
    assert_indexes_consistent(cs)


def test_schedule_pod_twice_is_refused(harness: ClusterHarness) -> None:
    cs = harness.build(State(nodes=[SMALL, BIG]))
    p = plain_pod("p", cpu="100m", memory="1Mi")
    cs.schedule_pod(p, "big")
    with pytest.raises(SchedulingError, match="pod default/p is already on node big"):
        cs.schedule_pod(p, "small")
    assert cs.schedule_pod_anywhere(p) is None


def test_devices_run_out(harness: ClusterHarness) -> None:
    """A second pod whose claims need the devices the first one holds fits nowhere."""
    second = plain_pod("second", cpu="100m", memory="1Mi")
    second["spec"]["resourceClaims"] = [{"name": "owned", "resourceClaimName": "second-owned"}]
    second_owned = copy.deepcopy(OWNED)
    second_owned["metadata"].update(name="second-owned", uid="second-owned-uid")
    second_owned["metadata"]["ownerReferences"][0].update(name="second", uid="second")
    cs = harness.build(SCHEDULED.but(claims=[*SCHEDULED.claims, second_owned]))
    with pytest.raises(SchedulingError, match=r"on node specialNode: cannot allocate all claims$"):
        cs.schedule_pod(second, NODE)
    assert cs.schedule_pod_anywhere(second) is None
    cs = harness.reopen(cs)
    assert_state(cs, SCHEDULED.but(claims=[*SCHEDULED.claims, second_owned]))


class _CountingStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.puts: list[tuple[str, str]] = []

    def put(self, kind: str, key: str, value: Any) -> None:
        self.puts.append((kind, key))
        super().put(kind, key, value)


def test_scheduling_writes_each_claim_once() -> None:
    """Allocation and reservation land in one write per claim (one journal row each)."""
    store = _CountingStore()
    cs = build_cluster(store, NODE_READY.but(claims=[OWNED, SHARED]))
    store.puts.clear()
    cs.schedule_pod(POD, NODE)
    claims = [("ResourceClaim", key_of(c)) for c in (OWNED, SHARED)]
    assert sorted(store.puts) == sorted([("Pod", key_of(POD)), *claims])
    assert_state(cs, SCHEDULED)


# -- caller objects are never mutated -----------------------------------------------------------


def test_no_operation_mutates_its_arguments(harness: ClusterHarness) -> None:
    """Deep-compare every argument before and after each operation, through fork and commit."""
    node_ = copy.deepcopy(SPECIAL_NODE)
    slices = copy.deepcopy(SLICES)
    pod = copy.deepcopy(POD)
    owned = copy.deepcopy(OWNED)
    shared = copy.deepcopy(SHARED)
    extra = copy.deepcopy(NODE1)
    owned_again = reserved(OWNED_ALLOCATED, POD)
    args = [node_, slices, pod, owned, shared, extra, owned_again]
    snapshot = copy.deepcopy(args)

    def unchanged() -> None:
        assert args == snapshot

    cs = harness.build(EMPTY)
    cs.dra.add_claims([shared])
    cs.add_node(extra)
    unchanged()
    cs.fork()
    cs.add_node(node_, slices=slices)
    unchanged()
    cs.dra.add_claims([owned])
    cs.schedule_pod(pod, NODE)
    unchanged()
    unbound = cs.unschedule_pod("default", "podWithClaims")
    assert unbound == pod
    unchanged()
    assert cs.schedule_pod_anywhere(pod) == NODE
    unchanged()
    cs.commit()
    reads = [cs.node(NODE), cs.pods_on_node(NODE), cs.dra.resource_claims.list()]
    read_copies = copy.deepcopy(reads)
    cs.remove_node(NODE)
    unchanged()
    assert reads == read_copies, "an operation mutated an object the snapshot handed out"
    cs.add_node(node_, slices=slices, pods=[pod], claims=[owned_again])
    unchanged()
    assert cs.pods_on_node(NODE) == [bound(pod, NODE)]


# -- the pods-per-node index against a recomputation --------------------------------------------

GRID_NODES = [node(f"n{i}", cpu="2", memory="4Gi", pods="3") for i in range(3)]
GRID_PODS = [plain_pod(f"p{i}", cpu=f"{300 + 100 * (i % 4)}m", memory="512Mi") for i in range(8)]

_ops = st.one_of(
    st.tuples(st.just("fork"), st.just(0)),
    st.tuples(st.just("commit"), st.just(0)),
    st.tuples(st.just("revert"), st.just(0)),
    st.tuples(st.just("schedule"), st.integers(0, len(GRID_PODS) - 1)),
    st.tuples(st.just("unschedule"), st.integers(0, len(GRID_PODS) - 1)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ops, max_size=40))
def test_pod_index_matches_a_recomputation(ops: list[tuple[str, int]]) -> None:
    """Random fork/schedule/unschedule/commit/revert: free resources and pods per node always
    equal allocatable minus the requests of the pods the store holds; placements follow a model
    (a stack of pod -> node maps)."""
    cs = build_cluster(MemoryStore(), State(nodes=GRID_NODES, classes=[]))
    model: list[dict[str, str]] = [{}]
    for op, i in ops:
        if op == "fork":
            cs.fork()
            model.append(dict(model[-1]))
        elif op == "commit":
            cs.commit()
            if len(model) > 1:
                top = model.pop()
                model[-1] = top
        elif op == "revert":
            cs.revert()
            if len(model) > 1:
                model.pop()
        elif op == "schedule":
            name = GRID_PODS[i]["metadata"]["name"]
            where = cs.schedule_pod_anywhere(GRID_PODS[i])
            if name in model[-1]:
                assert where is None
            elif where is not None:
                model[-1][name] = where
        else:
            name = GRID_PODS[i]["metadata"]["name"]
            if name in model[-1]:
                assert cs.unschedule_pod("default", name) == GRID_PODS[i]
                del model[-1][name]
            else:
                with pytest.raises(NotFoundError):
                    cs.unschedule_pod("default", name)
        assert cs.depth == len(model) - 1
        for n in GRID_NODES:
            name = n["metadata"]["name"]
            on_node = cs.pods_on_node(name)
            want = sum((compute_pod_requests(p) for p in on_node), Requests())
            assert free_resources(cs, n) == node_allocatable_requests(n) - want
            assert sorted(p["metadata"]["name"] for p in on_node) == sorted(
                p for p, where in model[-1].items() if where == name
            )
            free = free_resources(cs, n)
            assert free.cpu >= 0 and free.memory >= 0 and free.pods >= 0
        assert_indexes_consistent(cs)


# -- pools of several slices ------------------------------------------------------------------


def _pool_slice(name: str, node_name: str, pool: str, count: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "d",
            "nodeName": node_name,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
            **spec,
        },
    }


def _one_device_pod(cs: ClusterSnapshot, name: str) -> dict[str, Any]:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
        "spec": claim_request("c"),
    }
    cs.dra.add_claims([claim])
    pod = plain_pod(name)
    pod["spec"]["resourceClaims"] = [{"name": "r", "resourceClaimName": name}]
    return pod


def test_a_pool_whole_on_its_node_and_a_pool_spread_over_nodes() -> None:
    # "whole": both slices on n1 (counter sets apart from devices, as drivers publish
    # partitionable devices); "spread": one slice on n1, one on n2, so on n1 the pool is
    # complete only counting n2's slice too (upstream's allocator looks at every slice), and n1
    # uses only its own devices of it.
    cs = ClusterSnapshot(MemoryStore())
    cs.dra.add_device_classes([device_class("c", "d")])
    counters = [{"name": "set", "counters": {"n": {"value": "1"}}}]
    consume = [{"counterSet": "set", "counters": {"n": {"value": "1"}}}]
    whole = [
        _pool_slice("w-0", "n1", "whole", 2, sharedCounters=counters),
        _pool_slice("w-1", "n1", "whole", 2, devices=[{"name": "w", "consumesCounters": consume}]),
    ]
    spread_1 = _pool_slice("s-1", "n1", "spread", 2, devices=[{"name": "s1"}])
    spread_2 = _pool_slice("s-2", "n2", "spread", 2, devices=[{"name": "s2"}])
    cs.add_node(node("n1"), slices=[*whole, spread_1])
    cs.add_node(node("n2"), slices=[spread_2])
    placed = [cs.schedule_pod_anywhere(_one_device_pod(cs, f"p{i}"), ["n1"]) for i in range(3)]
    assert placed == ["n1", "n1", None]  # pools in name order: s1 ("spread"), then w
    held = {
        c["metadata"]["name"]: c["status"]["allocation"]["devices"]["results"][0]["device"]
        for c in cs.dra.resource_claims.list()
        if (c.get("status") or {}).get("allocation")
    }
    assert held == {"p0": "s1", "p1": "w"}
    assert cs.schedule_pod_anywhere(_one_device_pod(cs, "p3"), ["n2"]) == "n2"
