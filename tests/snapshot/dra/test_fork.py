"""DraSnapshot Fork / Commit / Revert: TestSnapshotForkCommitRevert (upstream's
dynamicresources/snapshot/snapshot_test.go), persistence across close and reopen (also mid-fork),
and the incremental allocated-device index.

On the ``sqlite-reopen`` backend the snapshot is closed and reopened before every checkpoint of
the fork tables, so most checks happen on a store reopened mid-fork.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from drasnap.snapshot.dra.snapshot import DraSnapshot
from drasnap.snapshot.errors import NotFoundError
from drasnap.snapshot.k8s.kinds import CLAIM_KIND, SLICE_KIND
from drasnap.store import MemoryStore, Store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.snapshot.dra_builders import (
    CLASS1,
    CLASS2,
    G1,
    G2,
    POD1,
    POD1_OWN1,
    POD1_OWN2,
    S1,
    S3,
    S5,
    SHARED1,
    SHARED2,
    SHARED3,
    Obj,
    allocated,
    assert_index_consistent,
    by_key,
    claim,
    expected_state,
    owned,
    pod,
    recomputed_devices,
    reserved,
    resource_slice,
    result,
    state,
)

pytestmark = pytest.mark.usefixtures("fixture_objects_unchanged")

# S1 here is the spec's node1 slice [s1]; node2 gets [s3], node3 [s5].
INITIAL = {"claims": [SHARED1, POD1_OWN1, POD1_OWN2], "slices": [S1, G1, G2]}
CLASSES = [CLASS1, CLASS2]

STATES = {
    "I": expected_state([SHARED1, POD1_OWN1, POD1_OWN2], [S1, G1, G2], CLASSES),
    "S_M": expected_state(
        [
            reserved(SHARED1, POD1),
            reserved(SHARED2, POD1),
            reserved(POD1_OWN1, POD1),
            reserved(POD1_OWN2, POD1),
        ],
        [S3, G1, G2],
        CLASSES,
    ),
    "I+shared3": expected_state([SHARED1, POD1_OWN1, POD1_OWN2, SHARED3], [S1, G1, G2], CLASSES),
}


def modify(snap: DraSnapshot) -> None:
    """The spec's modification M."""
    snap.add_node_resource_slices("node2", [S3])
    snap.add_claims([SHARED2])
    snap.reserve_pod_claims(POD1)
    snap.remove_node_resource_slices("node1")


STEPS: dict[str, Any] = {
    "fork": lambda s: s.fork(),
    "commit": lambda s: s.commit(),
    "revert": lambda s: s.revert(),
    "M": modify,
    "add-shared3": lambda s: s.add_claims([SHARED3]),
    "add-node3": lambda s: s.add_node_resource_slices("node3", [S5]),
}

# Steps, base first; "=X" checks the flattened state X (and reopens first on sqlite-reopen).
FORK_CASES = {
    "Fork": "fork M =S_M",
    "ForkRevert": "fork M revert =I",
    "ForkCommit": "fork M commit =S_M",
    "ForkForkRevertRevert": "fork M fork add-shared3 add-node3 revert =S_M revert =I",
    "ForkForkCommitRevert": "fork fork M commit =S_M revert =I",
    "ForkForkRevertCommit": "fork M fork add-shared3 add-node3 revert =S_M commit =S_M",
    "CommitNoFork": "commit =I",
    "RevertNoFork": "revert =I",
    "ForkCommitRevert": "fork M commit revert =S_M",
    "ForkRevertFork": "fork M revert =I fork add-shared3 =I+shared3",
}


def run_steps(dra_backend: Any, snap: DraSnapshot, steps: str) -> DraSnapshot:
    depth = snap.depth
    for step in steps.split():
        if step.startswith("="):
            snap = dra_backend.reopen(snap)
            assert snap.depth == depth
            assert state(snap) == STATES[step[1:]]
            assert_index_consistent(snap)
            continue
        got = STEPS[step](snap)
        if step == "fork":
            depth += 1
        elif step in ("commit", "revert"):
            depth = max(0, depth - 1)
        if step in ("fork", "commit", "revert"):
            assert got == depth
    return snap


@pytest.mark.parametrize("steps", FORK_CASES.values(), ids=FORK_CASES.keys())
def test_fork_commit_revert(dra_backend: Any, steps: str) -> None:
    snap = dra_backend.build(**INITIAL, classes=CLASSES)
    # warm every cache first, so that a stale one would show
    state(snap)
    run_steps(dra_backend, snap, steps)


# -- the allocated-device index across layers ---------------------------------------------------

DEV_A = result("driver.example.com", "pool1", "a")
DEV_B = result("driver.example.com", "pool1", "b")
DEV_C = result("driver.example.com", "pool1", "c")
ID_A, ID_B, ID_C = (("driver.example.com", "pool1", name) for name in "abc")
OWNER = pod("owner", ("own", "owner-own", "tmpl"), ("s", "sharedClaim1", ""))
OWNER_OWN = owned(OWNER, claim("owner-own"))


def allocate(snap: DraSnapshot, c: Obj, *results: Obj) -> None:
    name = c["metadata"]["name"]
    current = snap.resource_claims.get("default", name)
    snap.resource_claims.signal_claim_pending_allocation(name, allocated(current, *results))


def schedule_owner(snap: DraSnapshot) -> None:
    allocate(snap, OWNER_OWN, DEV_B, DEV_C)
    allocate(snap, SHARED1, DEV_A)
    snap.reserve_pod_claims(OWNER)


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        pytest.param("fork schedule", {ID_A, ID_B, ID_C}, id="fork"),
        pytest.param("fork schedule revert", {ID_A}, id="fork-revert"),
        pytest.param("fork schedule commit", {ID_A, ID_B, ID_C}, id="fork-commit"),
        pytest.param("fork schedule commit revert", {ID_A, ID_B, ID_C}, id="commit-revert"),
        pytest.param("fork fork schedule commit revert", {ID_A}, id="fork-fork-commit-revert"),
        pytest.param("schedule unschedule", set(), id="unforked-unschedule"),
        pytest.param("schedule fork unschedule", set(), id="fork-unschedule"),
        pytest.param("schedule fork unschedule revert", {ID_A, ID_B, ID_C}, id="unschedule-revert"),
        pytest.param("schedule fork remove", {ID_A}, id="fork-remove"),
        pytest.param("schedule fork remove revert", {ID_A, ID_B, ID_C}, id="remove-revert"),
        pytest.param(
            "fork schedule fork unschedule commit revert", {ID_A}, id="nested-commit-revert"
        ),
        pytest.param("fork schedule fork unschedule revert", {ID_A, ID_B, ID_C}, id="nested"),
    ],
)
def test_allocated_devices_across_layers(
    dra_backend: Any, steps: str, want: set[tuple[str, str, str]]
) -> None:
    # sharedClaim1 starts allocated to device a: the owner's scheduling re-signals it (two
    # writes of the same device), its unschedule deallocates it (no reservation left).
    snap = dra_backend.build(claims=[allocated(SHARED1, DEV_A), OWNER_OWN])
    actions: dict[str, Callable[[DraSnapshot], Any]] = {
        "fork": lambda s: s.fork(),
        "commit": lambda s: s.commit(),
        "revert": lambda s: s.revert(),
        "schedule": schedule_owner,
        "unschedule": lambda s: s.unreserve_pod_claims(OWNER),
        "remove": lambda s: s.remove_pod_owned_claims(OWNER),
    }
    for step in steps.split():
        actions[step](snap)
        snap = dra_backend.reopen(snap)
        assert_index_consistent(snap)
    assert snap.resource_claims.list_all_allocated_devices() == want


def test_shared_device_is_refcounted() -> None:
    """Two claims naming the same device: it stays allocated until both let it go."""
    snap = DraSnapshot.from_objects(claims=[SHARED1, SHARED2])
    allocate(snap, SHARED1, DEV_A)
    snap.fork()
    allocate(snap, SHARED2, DEV_A, DEV_B)
    snap.unreserve_pod_claims(pod("x", ("s", "sharedClaim1", "")))  # no reservations: dealloc
    assert snap.resource_claims.list_all_allocated_devices() == {ID_A, ID_B}
    snap.unreserve_pod_claims(pod("x", ("s", "sharedClaim2", "")))
    assert snap.resource_claims.list_all_allocated_devices() == set()
    snap.revert()
    assert snap.resource_claims.list_all_allocated_devices() == {ID_A}


# -- persistence ----------------------------------------------------------------------------------


def full_state(snap: DraSnapshot) -> dict[str, Any]:
    return {
        **state(snap),
        "depth": snap.depth,
        "devices": snap.resource_claims.list_all_allocated_devices(),
        "node1": snap.node_resource_slices("node1"),
        "node2": snap.node_resource_slices("node2"),
    }


def test_reopen_mid_fork_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "dra.db"
    snap = DraSnapshot.from_objects(
        Store.open(path), claims=[SHARED1, POD1_OWN1, POD1_OWN2], slices=[S1, G1, G2]
    )
    snap.add_device_classes(CLASSES)
    snap.fork("scale-up")
    modify(snap)
    allocate(snap, SHARED1, DEV_A, DEV_B)
    snap.fork("node-2")
    allocate(snap, SHARED2, DEV_B, DEV_C)
    snap.add_claims([SHARED3])
    levels = [full_state(snap)]
    snap.checkpoint()
    snap.close()

    with DraSnapshot.open(path) as again:
        assert full_state(again) == levels[0]
        assert [layer.label for layer in again.store.layers()] == [None, "scale-up", "node-2"]
        again.revert()  # a layer from before the reopen: the index is rebuilt from claims
        assert_index_consistent(again)
        assert again.resource_claims.list_all_allocated_devices() == {ID_A, ID_B}
        assert state(again)["slices"] == STATES["S_M"]["slices"]
        again.fork()
        allocate(again, SHARED2, DEV_C)
        levels.append(full_state(again))
    with DraSnapshot.open(path) as third:
        assert full_state(third) == levels[1]
        third.revert()
        third.revert()
        assert state(third) == STATES["I"]
        assert third.resource_claims.list_all_allocated_devices() == set()
        assert third.depth == 0


def test_reopen_after_commit_into_base(tmp_path: Path) -> None:
    path = tmp_path / "dra.db"
    with DraSnapshot.from_objects(Store.open(path), claims=[SHARED1], classes=CLASSES) as snap:
        snap.fork()
        allocate(snap, SHARED1, DEV_A)
        snap.commit()
        want = full_state(snap)
    with DraSnapshot.open(path) as again:
        assert full_state(again) == want
        again.revert()  # no-op at the base
        assert full_state(again) == want


def test_open_names_a_store(tmp_path: Path) -> None:
    path = tmp_path / "two.db"
    with DraSnapshot.open(path, name="a") as a:
        a.add_claims([SHARED1])
    with DraSnapshot.open(path, name="b") as b:
        assert b.resource_claims.list() == []
    with DraSnapshot.open(path, name="a") as a:
        assert a.resource_claims.list() == [SHARED1]


# -- layers moved behind the snapshot's back -------------------------------------------------------


@pytest.mark.parametrize("backend_name", ["memory", "sqlite"])
def test_direct_store_fork_is_noticed(tmp_path: Path, backend_name: str) -> None:
    store: Any = MemoryStore() if backend_name == "memory" else Store.open(tmp_path / "s.db")
    snap = DraSnapshot.from_objects(store, claims=[allocated(SHARED1, DEV_A), SHARED2])
    store.fork()  # not through the snapshot
    allocate(snap, SHARED2, DEV_B)
    assert snap.resource_claims.list_all_allocated_devices() == {ID_A, ID_B}
    snap.revert()
    assert snap.resource_claims.list_all_allocated_devices() == {ID_A}
    snap.fork()
    allocate(snap, SHARED2, DEV_C)
    store.revert()  # not through the snapshot either: depth changed, so it is noticed
    assert snap.resource_claims.list_all_allocated_devices() == {ID_A}
    store.put(CLAIM_KIND, "default/direct", allocated(claim("direct"), DEV_C))
    snap.resync()  # a direct write needs an explicit resync
    assert snap.resource_claims.list_all_allocated_devices() == {ID_A, ID_C}
    store.close()


# -- random fork/commit/revert: incremental index == recomputation -------------------------------

PODS = [
    pod("p0", ("own", "own-0", "t"), ("s", "sh-0", "")),
    pod("p1", ("own", "own-1", "t"), ("s", "sh-0", ""), ("t", "sh-1", "")),
    pod("p2", ("own", "own-2", "t"), ("s", "sh-1", ""), ("again", "sh-1", "")),  # twice
]
CLAIMS = [owned(PODS[i], claim(f"own-{i}")) for i in range(3)] + [claim("sh-0"), claim("sh-1")]
DEVICES = [result("drv", "pool", f"d{i}") for i in range(4)]  # few: claims overlap
NODE_SLICES = [[resource_slice(f"n{i}-{j}", f"n{i}") for j in range(i + 1)] for i in range(3)]

op_strategy = st.one_of(
    st.tuples(st.sampled_from(["fork", "fork", "commit", "revert", "reopen", "list"])),
    st.tuples(st.sampled_from(["fork", "commit", "revert"])),
    st.tuples(st.just("alloc"), st.integers(0, len(CLAIMS) - 1), st.sets(st.integers(0, 3))),
    st.tuples(st.sampled_from(["reserve", "unreserve", "remove"]), st.integers(0, len(PODS) - 1)),
    st.tuples(st.just("add"), st.integers(0, len(CLAIMS) - 1)),
    st.tuples(st.sampled_from(["add-slices", "remove-slices"]), st.integers(0, 2)),
)


def observed(snap: DraSnapshot) -> tuple[dict[str, Obj], list[Obj]]:
    """Claims by name and the slice list, as the listers return them."""
    claims = {c["metadata"]["name"]: c for c in snap.resource_claims.list()}
    return claims, by_key(snap.resource_slices.list())


def check_derived(snap: DraSnapshot) -> None:
    """The incremental index and the cached slice list agree with the store."""
    assert snap.resource_claims.list_all_allocated_devices() == recomputed_devices(snap)
    assert snap.resource_claims.allocated_devices_view() == recomputed_devices(snap)
    truth = [s for group in snap.store.items(SLICE_KIND).values() for s in group]
    assert by_key(snap.resource_slices.list()) == by_key(truth)


def run_random_ops(snap: DraSnapshot, ops: list[tuple[Any, ...]], reopen: Any) -> None:
    model = [observed(snap)]  # the observed state per layer, base first
    for op in ops:
        kind = op[0]
        if kind == "fork":
            snap.fork()
            model.append(model[-1])
        elif kind == "commit":
            snap.commit()
            if len(model) > 1:
                top = model.pop()
                model[-1] = top
        elif kind == "revert":
            snap.revert()
            if len(model) > 1:
                model.pop()
            assert observed(snap) == model[-1]
        elif kind == "reopen":
            snap = reopen(snap)
            assert snap.depth == len(model) - 1
        elif kind == "list":
            snap.resource_slices.list()  # (re)build the cache at this point
        elif kind == "alloc":
            name = CLAIMS[op[1]]["metadata"]["name"]
            current = model[-1][0].get(name)
            if current is not None:
                new = allocated(current, *(DEVICES[i] for i in sorted(op[2])))
                if not op[2]:
                    new["status"].pop("allocation")
                snap.resource_claims.signal_claim_pending_allocation(name, new)
        elif kind == "add":
            c = CLAIMS[op[1]]
            if c["metadata"]["name"] not in model[-1][0]:
                snap.add_claims([copy.deepcopy(c)])
        elif kind == "add-slices":
            if snap.node_resource_slices(f"n{op[1]}") is None:
                snap.add_node_resource_slices(f"n{op[1]}", NODE_SLICES[op[1]])
        elif kind == "remove-slices":
            snap.remove_node_resource_slices(f"n{op[1]}")
        else:
            action = {
                "reserve": snap.reserve_pod_claims,
                "unreserve": snap.unreserve_pod_claims,
                "remove": snap.remove_pod_owned_claims,
            }[kind]
            try:
                action(PODS[op[1]])
            except NotFoundError:
                assert kind != "remove"
        model[-1] = observed(snap)
        check_derived(snap)
    while snap.depth:
        snap.revert()
        model.pop()
        assert observed(snap) == model[-1]
        check_derived(snap)


def initial_random(store: Any = None) -> DraSnapshot:
    return DraSnapshot.from_objects(store, claims=CLAIMS, slices=[*NODE_SLICES[0], G1])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op_strategy, max_size=40))
def test_random_ops_memory(ops: list[tuple[Any, ...]]) -> None:
    run_random_ops(initial_random(), ops, reopen=lambda s: s)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op_strategy, max_size=25))
def test_random_ops_sqlite_with_reopen(ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.db"
        opened: list[DraSnapshot] = []

        def reopen(s: DraSnapshot) -> DraSnapshot:
            s.close()
            again = DraSnapshot.open(path)
            opened.append(again)
            return again

        snap = initial_random(Store.open(path))
        opened.append(snap)
        try:
            run_random_ops(snap, ops, reopen)
        finally:
            for s in opened:
                s.close()
