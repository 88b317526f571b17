"""DraSnapshot: the case tables of upstream's dynamicresources/snapshot/snapshot_test.go and the
upstream-bug regressions.

Every test runs on the memory store, the SQLite store, and the SQLite store closed and reopened
after the initial state is built and again after the operation (``dra_backend``). Fork, Commit
and Revert are in ``test_dra_fork.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from drasnap.snapshot.dra.snapshot import DraSnapshot
from drasnap.snapshot.errors import (
    AlreadyTrackedError,
    NotFoundError,
    ObjectValidationError,
    ReservationError,
    SnapshotError,
)
from drasnap.snapshot.k8s import claims as claim_helpers
from drasnap.snapshot.k8s.kinds import CLAIM_KIND, CLASS_KIND, NON_LOCAL_SLICES_KEY, SLICE_KIND
from drasnap.store import MemoryStore

from tests.snapshot.dra_builders import (
    ALL_CLAIMS,
    CLASS1,
    CLASS2,
    G1,
    G2,
    POD1,
    POD1_NO_STATUS,
    POD1_OWN1,
    POD1_OWN2,
    POD2,
    POD2_OWN1,
    S1,
    S2,
    S3,
    S4,
    S5,
    S6,
    SHARED1,
    SHARED2,
    SHARED3,
    Obj,
    allocated,
    assert_index_consistent,
    by_key,
    claim,
    device_class,
    owned,
    pod,
    reserved,
    resource_slice,
    result,
    test_pods,
)

pytestmark = pytest.mark.usefixtures("fixture_objects_unchanged")

Op = Callable[[DraSnapshot], Any]


# -- TestSnapshotResourceClaims (snapshot_test.go, cases 1-16) ------------------------------------


@dataclass
class ClaimsCase:
    id: str
    claims: list[Obj]
    op: Op | None = None
    op_error: type[Exception] | None = None
    pod: Obj | None = None
    want_pod_claims: list[Obj] | None = None
    want_pod_claims_error: bool = False
    want_all: list[Obj] | None = None


def _add_twice(snap: DraSnapshot) -> None:
    snap.add_claims([SHARED2, POD2_OWN1])
    snap.add_claims([SHARED3, POD1_OWN2])


CLAIMS_CASES = [
    ClaimsCase(
        "01-pod-claims-missing-owned-claim-is-error",
        [SHARED1, SHARED2, POD2_OWN1, POD1_OWN1],
        pod=POD1,
        want_pod_claims_error=True,
    ),
    ClaimsCase(
        "02-pod-claims-missing-shared-claim-is-error",
        [SHARED1, POD2_OWN1, POD1_OWN1, POD1_OWN2],
        pod=POD1,
        want_pod_claims_error=True,
    ),
    ClaimsCase(
        "03-pod-claims-template-without-status-name-is-error",
        [SHARED1, SHARED2, POD2_OWN1, POD1_OWN1, POD1_OWN2],
        pod=POD1_NO_STATUS,
        want_pod_claims_error=True,
    ),
    ClaimsCase(
        "04-pod-claims-all-shared-and-owned",
        ALL_CLAIMS,
        pod=POD1,
        want_pod_claims=[SHARED1, SHARED2, POD1_OWN1, POD1_OWN2],
    ),
    ClaimsCase(
        "05-add-claims-duplicate-is-error-and-atomic",
        [SHARED1, POD1_OWN1],
        op=lambda s: s.add_claims([SHARED2, SHARED1]),
        op_error=AlreadyTrackedError,
        want_all=[SHARED1, POD1_OWN1],
    ),
    ClaimsCase(
        "06-add-claims-new-claims-added",
        [SHARED1, POD1_OWN1],
        op=_add_twice,
        want_all=ALL_CLAIMS,
    ),
    ClaimsCase(
        "07-remove-pod-owned-claims-removes-owned",
        ALL_CLAIMS,
        op=lambda s: s.remove_pod_owned_claims(POD1),
        pod=POD1,
        want_pod_claims_error=True,
        want_all=[SHARED1, SHARED2, SHARED3, POD2_OWN1],
    ),
    ClaimsCase(
        "08-remove-pod-owned-claims-drops-shared-reservations",
        [
            reserved(SHARED1, POD1, POD2),
            reserved(SHARED2, POD1),
            reserved(SHARED3, POD2),
            POD2_OWN1,
            POD1_OWN1,
            POD1_OWN2,
        ],
        op=lambda s: s.remove_pod_owned_claims(POD1),
        pod=POD1,
        want_pod_claims_error=True,
        want_all=[reserved(SHARED1, POD2), SHARED2, reserved(SHARED3, POD2), POD2_OWN1],
    ),
    ClaimsCase(
        "09-reserve-missing-claim-is-error-and-atomic",
        [
            reserved(SHARED1, POD2),
            reserved(SHARED3, POD2),
            POD2_OWN1,
            reserved(POD1_OWN1, POD1),
            POD1_OWN2,
        ],
        op=lambda s: s.reserve_pod_claims(POD1),
        op_error=NotFoundError,
        want_all=[
            reserved(SHARED1, POD2),
            reserved(SHARED3, POD2),
            POD2_OWN1,
            reserved(POD1_OWN1, POD1),
            POD1_OWN2,
        ],
    ),
    ClaimsCase(
        "10-reserve-over-max-reservations-is-error-and-atomic",
        [
            reserved(SHARED1, POD2),
            reserved(SHARED2, *test_pods(256)),
            reserved(SHARED3, POD2),
            POD2_OWN1,
            reserved(POD1_OWN1, POD1),
            POD1_OWN2,
        ],
        op=lambda s: s.reserve_pod_claims(POD1),
        op_error=ReservationError,
        want_all=[
            reserved(SHARED1, POD2),
            reserved(SHARED2, *test_pods(256)),
            reserved(SHARED3, POD2),
            POD2_OWN1,
            reserved(POD1_OWN1, POD1),
            POD1_OWN2,
        ],
    ),
    ClaimsCase(
        "11-reserve-adds-reservations",
        [
            reserved(SHARED1, POD2),
            SHARED2,
            reserved(SHARED3, POD2),
            POD2_OWN1,
            reserved(POD1_OWN1, POD1),
            POD1_OWN2,
        ],
        op=lambda s: s.reserve_pod_claims(POD1),
        pod=POD1,
        want_pod_claims=[
            reserved(SHARED1, POD2, POD1),
            reserved(SHARED2, POD1),
            reserved(POD1_OWN1, POD1),  # not duplicated
            reserved(POD1_OWN2, POD1),
        ],
        want_all=[
            reserved(SHARED1, POD2, POD1),
            reserved(SHARED2, POD1),
            reserved(SHARED3, POD2),
            POD2_OWN1,
            reserved(POD1_OWN1, POD1),
            reserved(POD1_OWN2, POD1),
        ],
    ),
    ClaimsCase(
        "12-unreserve-missing-claim-is-error-and-atomic",
        [
            reserved(SHARED1, POD1, POD2),
            reserved(SHARED3, POD2),
            POD2_OWN1,
            reserved(POD1_OWN1, POD1),
            POD1_OWN2,
        ],
        op=lambda s: s.unreserve_pod_claims(POD1),
        op_error=NotFoundError,
        want_all=[
            reserved(SHARED1, POD1, POD2),
            reserved(SHARED3, POD2),
            POD2_OWN1,
            reserved(POD1_OWN1, POD1),
            POD1_OWN2,
        ],
    ),
    ClaimsCase(
        "13-unreserve-removes-reservations",
        [
            reserved(SHARED1, POD1, POD2),
            reserved(SHARED2, POD1),
            reserved(SHARED3, POD2),
            POD2_OWN1,
            reserved(POD1_OWN1, POD1),
            POD1_OWN2,
        ],
        op=lambda s: s.unreserve_pod_claims(POD1),
        pod=POD1,
        want_pod_claims=[reserved(SHARED1, POD2), SHARED2, POD1_OWN1, POD1_OWN2],
        want_all=[
            reserved(SHARED1, POD2),
            SHARED2,
            reserved(SHARED3, POD2),
            POD2_OWN1,
            POD1_OWN1,
            POD1_OWN2,
        ],
    ),
    ClaimsCase(
        "14-unreserve-deallocates-owned-and-unused-shared",
        [
            allocated(reserved(SHARED1, POD1, POD2)),
            allocated(reserved(SHARED2, POD1)),
            allocated(reserved(SHARED3, POD2)),
            allocated(POD2_OWN1),
            allocated(reserved(POD1_OWN1, POD1)),
            allocated(POD1_OWN2),
        ],
        op=lambda s: s.unreserve_pod_claims(POD1),
        want_all=[
            allocated(reserved(SHARED1, POD2)),  # still in use: allocation kept
            SHARED2,  # no reservation left: deallocated
            allocated(reserved(SHARED3, POD2)),
            allocated(POD2_OWN1),
            POD1_OWN1,  # owned: deallocated and unreserved
            POD1_OWN2,  # owned: deallocated even without a reservation
        ],
    ),
    ClaimsCase(
        "15-remove-pod-owned-claims-skips-missing-claim",  # sigs #31/#32
        [POD1_OWN1, reserved(SHARED1, POD1), reserved(SHARED2, POD1)],
        op=lambda s: s.remove_pod_owned_claims(POD1),
        want_all=[SHARED1, SHARED2],
    ),
    ClaimsCase(
        "16-remove-pod-owned-claims-skips-unresolvable-refs",  # sigs #31/#32
        [reserved(SHARED1, POD1_NO_STATUS), reserved(SHARED2, POD1_NO_STATUS)],
        op=lambda s: s.remove_pod_owned_claims(POD1_NO_STATUS),
        want_all=[SHARED1, SHARED2],
    ),
]


@pytest.mark.parametrize("case", CLAIMS_CASES, ids=lambda c: c.id)
def test_resource_claims(dra_backend: Any, case: ClaimsCase) -> None:
    inputs = copy.deepcopy((case.claims, case.pod))
    snap = dra_backend.build(claims=case.claims)
    if case.op is not None:
        if case.op_error is not None:
            with pytest.raises(case.op_error):
                case.op(snap)
        else:
            case.op(snap)
        snap = dra_backend.reopen(snap)
    if case.pod is not None:
        if case.want_pod_claims_error:
            with pytest.raises(NotFoundError):
                snap.pod_claims(case.pod)
        else:
            assert by_key(snap.pod_claims(case.pod)) == by_key(case.want_pod_claims or [])
    if case.want_all is not None:
        assert by_key(snap.resource_claims.list()) == by_key(case.want_all)
    assert_index_consistent(snap)
    assert (case.claims, case.pod) == inputs  # the caller's objects are never mutated (#37)


def test_pod_claims_keeps_spec_order_and_duplicates(dra_backend: Any) -> None:
    twice = pod(
        "twice", ("a", "sharedClaim2", ""), ("b", "sharedClaim1", ""), ("c", "sharedClaim2", "")
    )
    snap = dra_backend.build(claims=ALL_CLAIMS)
    assert snap.pod_claims(POD1) == [POD1_OWN1, POD1_OWN2, SHARED1, SHARED2]
    assert snap.pod_claims(twice) == [SHARED2, SHARED1, SHARED2]
    assert snap.pod_claims(pod("none")) == []


@pytest.mark.parametrize(
    ("the_pod", "message"),
    [
        pytest.param(
            POD1_NO_STATUS,
            "error while obtaining ResourceClaim ownClaim1 for pod default/pod1: "
            "couldn't determine ResourceClaim name",
            id="unresolvable",
        ),
        pytest.param(
            POD1,
            "error while obtaining ResourceClaim ownClaim2 for pod default/pod1: "
            "couldn't find ResourceClaim in the snapshot",
            id="untracked",
        ),
    ],
)
def test_pod_claims_error_wording(dra_backend: Any, the_pod: Obj, message: str) -> None:
    snap = dra_backend.build(claims=[SHARED1, SHARED2, POD1_OWN1])
    for op in (snap.pod_claims, snap.reserve_pod_claims, snap.unreserve_pod_claims):
        with pytest.raises(NotFoundError) as info:
            op(the_pod)
        assert str(info.value) == message


def test_write_error_wording(dra_backend: Any) -> None:
    snap = dra_backend.build(
        claims=[SHARED1, reserved(SHARED2, *test_pods(256))],
        slices=[S1],
        classes=[CLASS1],
    )
    with pytest.raises(
        AlreadyTrackedError, match=r"^claim default/sharedClaim1 already tracked in the snapshot$"
    ):
        snap.add_claims([SHARED1])
    with pytest.raises(
        ReservationError,
        match=r"^claim default/sharedClaim2 already has max number of reservations set, "
        r"can't add more$",
    ):
        snap.reserve_pod_claims(pod("p", ("x", "sharedClaim2", "")))
    with pytest.raises(AlreadyTrackedError, match=r'^node "node1" ResourceSlices already present$'):
        snap.add_node_resource_slices("node1", [])
    with pytest.raises(
        AlreadyTrackedError, match=r'^DeviceClass "class1" already tracked in the snapshot$'
    ):
        snap.add_device_classes([CLASS1])


def test_reserve_allows_a_full_claim_already_reserved_for_the_pod(dra_backend: Any) -> None:
    already = pod("test-pod-7", ("x", "sharedClaim2", ""))
    full = reserved(SHARED2, *test_pods(256))
    snap = dra_backend.build(claims=[full])
    snap.reserve_pod_claims(already)  # reserved by UID already: nothing to add, no error
    assert snap.resource_claims.get("default", "sharedClaim2") == full


def test_unreserve_matches_explicit_empty_api_group(dra_backend: Any) -> None:
    with_group = copy.deepcopy(reserved(SHARED1, POD2, POD1))
    for ref in with_group["status"]["reservedFor"]:
        ref["apiGroup"] = ""
    snap = dra_backend.build(claims=[allocated(with_group)])
    snap.unreserve_pod_claims(pod("pod1", ("s", "sharedClaim1", "")))
    [left] = snap.resource_claims.list()
    assert left["status"]["reservedFor"] == [
        {"apiGroup": "", "resource": "pods", "name": "pod2", "uid": "pod2"}
    ]
    assert "allocation" in left["status"]  # still in use by pod2


def test_reservation_presence_is_by_uid_removal_by_name_and_uid(dra_backend: Any) -> None:
    renamed = pod("pod1-renamed", ("s", "sharedClaim1", ""))
    renamed["metadata"]["uid"] = "pod1"
    snap = dra_backend.build(claims=[reserved(SHARED1, POD1)])
    snap.reserve_pod_claims(renamed)  # the UID is reserved already: no second entry
    assert snap.resource_claims.get("default", "sharedClaim1") == reserved(SHARED1, POD1)
    snap.unreserve_pod_claims(renamed)  # the name differs: nothing removed (and still in use)
    assert snap.resource_claims.get("default", "sharedClaim1") == reserved(SHARED1, POD1)


def test_ownership_needs_same_namespace_and_controller_uid(dra_backend: Any) -> None:
    not_controller = owned(POD1, claim("nc"))
    not_controller["metadata"]["ownerReferences"][0]["controller"] = False
    other_ns = owned(POD1, claim("ons", namespace="other"))
    p = pod("pod1", ("a", "nc", ""), ("b", "own", ""))
    snap = dra_backend.build(claims=[not_controller, other_ns, owned(POD1, claim("own"))])
    snap.remove_pod_owned_claims(p)
    assert by_key(snap.resource_claims.list()) == by_key([not_controller, other_ns])
    assert claim_helpers.is_for_pod(POD1, owned(POD1, claim("x")))
    assert not claim_helpers.is_for_pod(POD1, other_ns)
    assert not claim_helpers.is_for_pod(POD2, owned(POD1, claim("x")))


# -- upstream bugs not to copy ---------------------------------------------------------------------

TWICE = pod("twice", ("first", "sharedClaim1", ""), ("second", "sharedClaim1", ""))


def test_double_reference_reserve_after_fork_does_not_leak_into_base(dra_backend: Any) -> None:
    """sigs #33: the second reference must not write into the base claim."""
    snap = dra_backend.build(claims=[SHARED1])
    snap.fork()
    snap.reserve_pod_claims(TWICE)
    assert snap.resource_claims.get("default", "sharedClaim1") == reserved(SHARED1, TWICE)
    snap = dra_backend.reopen(snap)
    snap.revert()
    assert snap.resource_claims.get("default", "sharedClaim1") == SHARED1
    assert snap.resource_claims.list() == [SHARED1]


def test_double_reference_unreserve_after_fork_does_not_leak_into_base(dra_backend: Any) -> None:
    base = allocated(reserved(SHARED1, TWICE, POD2))
    snap = dra_backend.build(claims=[base])
    snap.fork()
    snap.unreserve_pod_claims(TWICE)
    assert snap.resource_claims.get("default", "sharedClaim1") == allocated(reserved(SHARED1, POD2))
    snap.fork()
    snap.unreserve_pod_claims(pod("pod2", ("s", "sharedClaim1", "")))
    assert snap.resource_claims.get("default", "sharedClaim1") == SHARED1  # no one left
    assert snap.resource_claims.list_all_allocated_devices() == set()
    snap = dra_backend.reopen(snap)
    snap.revert()
    assert snap.resource_claims.get("default", "sharedClaim1") == allocated(reserved(SHARED1, POD2))
    snap.revert()
    assert snap.resource_claims.get("default", "sharedClaim1") == base
    assert snap.resource_claims.list_all_allocated_devices() == {
        ("driver.example.com", "pool1", "device1")
    }


def test_double_reference_remove_pod_owned_after_fork_does_not_leak(dra_backend: Any) -> None:
    own = owned(TWICE, claim("own"))
    p = copy.deepcopy(TWICE)
    p["spec"]["resourceClaims"] += [
        {"name": "o1", "resourceClaimName": "own"},
        {"name": "o2", "resourceClaimName": "own"},
    ]
    base = [reserved(SHARED1, TWICE, POD2), own]
    snap = dra_backend.build(claims=base)
    snap.fork()
    snap.remove_pod_owned_claims(p)
    assert by_key(snap.resource_claims.list()) == [reserved(SHARED1, POD2)]
    snap.revert()
    assert by_key(snap.resource_claims.list()) == by_key(base)


def test_double_reference_reserves_once(dra_backend: Any) -> None:
    snap = dra_backend.build(claims=[reserved(SHARED1, *test_pods(255))])
    snap.reserve_pod_claims(TWICE)  # 255 + 1: the second reference sees the pod reserved
    got = snap.resource_claims.get("default", "sharedClaim1")
    assert got == reserved(SHARED1, *test_pods(255), TWICE)


@pytest.mark.parametrize(
    "op",
    [
        pytest.param(lambda s: s.reserve_pod_claims(POD1), id="reserve"),
        pytest.param(lambda s: s.unreserve_pod_claims(POD1), id="unreserve"),
        pytest.param(lambda s: s.remove_pod_owned_claims(POD1), id="remove-pod-owned"),
        pytest.param(lambda s: s.remove_pod_owned_claims(POD2), id="remove-pod-owned-pod2"),
        pytest.param(
            lambda s: s.resource_claims.signal_claim_pending_allocation(
                "sharedClaim1", allocated(SHARED1, result("d", "p", "x"))
            ),
            id="signal",
        ),
        pytest.param(lambda s: s.remove_node_resource_slices("node1"), id="remove-slices"),
        pytest.param(lambda s: s.add_node_resource_slices("node3", [S5, S6]), id="add-slices"),
        pytest.param(lambda s: s.add_device_classes([device_class("class3")]), id="add-class"),
        pytest.param(lambda s: s.add_claims([SHARED3]), id="add-claims"),
    ],
)
@pytest.mark.parametrize("forked", [False, True], ids=["unforked", "forked"])
def test_caller_objects_never_mutated(op: Op, forked: bool) -> None:
    """sigs #37: not even on an unforked snapshot, whose top layer is the base."""
    claims = [
        allocated(reserved(SHARED1, POD1, POD2)),
        allocated(reserved(SHARED2, POD1)),
        allocated(reserved(POD1_OWN1, POD1)),
        POD1_OWN2,
        POD2_OWN1,
    ]
    slices = [S1, S2, S3, G1]
    classes = [CLASS1, CLASS2]
    everything = (claims, slices, classes)
    before = copy.deepcopy(everything)
    snap = DraSnapshot.from_objects(claims=claims, slices=slices, classes=classes)
    read = (snap.resource_claims.list(), snap.resource_slices.list(), snap.pod_claims(POD1))
    read_copy = copy.deepcopy(read)
    if forked:
        snap.fork()
    op(snap)
    assert everything == before
    assert read == read_copy  # nor what was read from the store before the op
    assert_index_consistent(snap)


def test_values_read_from_the_store_are_never_mutated() -> None:
    snap = DraSnapshot.from_objects(claims=[allocated(reserved(SHARED1, POD1, POD2))])
    got = snap.resource_claims.get("default", "sharedClaim1")
    frozen = copy.deepcopy(got)
    pod1, pod2 = (pod(name, ("s", "sharedClaim1", "")) for name in ("pod1", "pod2"))
    snap.unreserve_pod_claims(pod1)
    snap.reserve_pod_claims(pod1)
    snap.unreserve_pod_claims(pod1)
    snap.unreserve_pod_claims(pod2)
    assert got == frozen
    new = snap.resource_claims.get("default", "sharedClaim1")
    assert new is not got
    assert new == SHARED1


def test_removal_by_two_pods_sharing_an_owned_claim() -> None:
    """sigs #31: pod A owns a claim that pod B (same node) references directly."""
    owner = pod("a", ("own", "a-own", "tmpl"))
    other = pod("b", ("direct", "a-own", ""), ("s", "sharedClaim1", ""))
    snap = DraSnapshot.from_objects(claims=[owned(owner, claim("a-own")), reserved(SHARED1, other)])
    snap.fork()
    snap.remove_pod_owned_claims(owner)
    snap.remove_pod_owned_claims(other)  # its first claim is gone: skipped, the rest processed
    assert snap.resource_claims.list() == [SHARED1]


# -- snapshot_claim_tracker_test.go -------------------------------------------------------------

CLAIM_1 = claim("claim-1")
CLAIM_2 = claim("claim-2")
CLAIM_3 = claim("claim-3")
ALLOCATED_1 = allocated(
    CLAIM_1,
    result("driver.example.com", "pool-1", "device-1"),
    result("driver.example.com", "pool-1", "device-2"),
)
ALLOCATED_2 = allocated(
    CLAIM_2,
    result("driver.example.com", "pool-1", "device-3"),
    result("driver2.example.com", "pool-2", "device-1"),
)


@pytest.mark.parametrize(
    ("claims", "want"),
    [
        pytest.param([], [], id="no-claims"),
        pytest.param([CLAIM_1, CLAIM_2, CLAIM_3], [CLAIM_1, CLAIM_2, CLAIM_3], id="three-claims"),
    ],
)
def test_claim_tracker_list(dra_backend: Any, claims: list[Obj], want: list[Obj]) -> None:
    snap = dra_backend.build(claims=claims)
    assert by_key(snap.resource_claims.list()) == by_key(want)


@pytest.mark.parametrize(
    ("namespace", "name", "want"),
    [
        pytest.param("default", "claim-2", CLAIM_2, id="found"),
        pytest.param("default", "claim-1337", None, id="missing-name"),
        pytest.param("non-default", "claim-2", None, id="wrong-namespace"),
    ],
)
def test_claim_tracker_get(dra_backend: Any, namespace: str, name: str, want: Obj | None) -> None:
    snap = dra_backend.build(claims=[CLAIM_1, CLAIM_2, CLAIM_3])
    if want is None:
        with pytest.raises(NotFoundError, match=rf"^claim {namespace}/{name} not found$"):
            snap.resource_claims.get(namespace, name)
    else:
        assert snap.resource_claims.get(namespace, name) == want


@pytest.mark.parametrize(
    ("claims", "want"),
    [
        pytest.param([], set(), id="no-claims"),
        pytest.param([CLAIM_1, CLAIM_2, CLAIM_3], set(), id="unallocated"),
        pytest.param(
            [ALLOCATED_1, ALLOCATED_2, CLAIM_3],
            {
                ("driver.example.com", "pool-1", "device-1"),
                ("driver.example.com", "pool-1", "device-2"),
                ("driver.example.com", "pool-1", "device-3"),
                ("driver2.example.com", "pool-2", "device-1"),
            },
            id="allocated",
        ),
    ],
)
def test_claim_tracker_list_all_allocated_devices(
    dra_backend: Any, claims: list[Obj], want: set[tuple[str, str, str]]
) -> None:
    snap = dra_backend.build(claims=claims)
    got = snap.resource_claims.list_all_allocated_devices()
    assert got == want
    assert isinstance(got, frozenset)  # immutable: callers cannot corrupt the index
    assert snap.resource_claims.list_all_allocated_devices() is got  # cached until a change


def test_allocated_devices_cache_follows_changes(dra_backend: Any) -> None:
    snap = dra_backend.build(claims=[ALLOCATED_1, CLAIM_2, CLAIM_3])
    first = snap.resource_claims.list_all_allocated_devices()
    snap.reserve_pod_claims(pod("p", ("c", "claim-1", "")))  # no allocation change
    assert snap.resource_claims.list_all_allocated_devices() is first
    snap.resource_claims.signal_claim_pending_allocation("claim-2", ALLOCATED_2)
    second = snap.resource_claims.list_all_allocated_devices()
    assert second == first | {
        ("driver.example.com", "pool-1", "device-3"),
        ("driver2.example.com", "pool-2", "device-1"),
    }
    assert first == {  # an earlier result is not changed by later writes
        ("driver.example.com", "pool-1", "device-1"),
        ("driver.example.com", "pool-1", "device-2"),
    }
    snap.unreserve_pod_claims(pod("p", ("c", "claim-1", "")))  # no reservation left: dealloc
    assert snap.resource_claims.list_all_allocated_devices() == second - first
    view = snap.resource_claims.allocated_devices_view()
    assert view == second - first
    swapped = allocated(CLAIM_2, result("d", "p", "x"), result("d", "p", "y"))  # same size
    snap.resource_claims.signal_claim_pending_allocation("claim-2", swapped)
    assert snap.resource_claims.list_all_allocated_devices() == {("d", "p", "x"), ("d", "p", "y")}
    assert view == {("d", "p", "x"), ("d", "p", "y")}  # live
    assert ("d", "p", "x") in view
    assert not hasattr(view, "add")


@pytest.mark.parametrize(
    ("uid", "allocated_claim", "error"),
    [
        pytest.param("bad-name", allocated(claim("bad-name")), NotFoundError, id="not-tracked"),
        pytest.param("bad-name", ALLOCATED_2, SnapshotError, id="uid-mismatch"),
        pytest.param("claim-2", ALLOCATED_2, None, id="ok"),
    ],
)
def test_claim_tracker_signal_claim_pending_allocation(
    dra_backend: Any, uid: str, allocated_claim: Obj, error: type[Exception] | None
) -> None:
    snap = dra_backend.build(claims=[CLAIM_1, CLAIM_2, CLAIM_3])
    if error is not None:
        with pytest.raises(error):
            snap.resource_claims.signal_claim_pending_allocation(uid, allocated_claim)
        assert by_key(snap.resource_claims.list()) == [CLAIM_1, CLAIM_2, CLAIM_3]
    else:
        snap.resource_claims.signal_claim_pending_allocation(uid, allocated_claim)
        snap = dra_backend.reopen(snap)
        assert snap.resource_claims.get("default", "claim-2") == ALLOCATED_2
        assert snap.resource_claims.list_all_allocated_devices() == {
            ("driver.example.com", "pool-1", "device-3"),
            ("driver2.example.com", "pool-2", "device-1"),
        }
    assert_index_consistent(snap)
    assert not snap.resource_claims.claim_has_pending_allocation(uid)


def test_signal_error_wording(dra_backend: Any) -> None:
    snap = dra_backend.build(claims=[CLAIM_2])
    with pytest.raises(NotFoundError, match=r"^claim default/bad-name not found$"):
        snap.resource_claims.signal_claim_pending_allocation("bad-name", claim("bad-name"))
    with pytest.raises(SnapshotError) as info:
        snap.resource_claims.signal_claim_pending_allocation("bad-name", ALLOCATED_2)
    assert str(info.value) == (
        'claim default/claim-2: snapshot has UID "claim-2", allocation came for UID "bad-name"'
        " - shouldn't happenn"
    )


# -- snapshot_class_lister_test.go --------------------------------------------------------------

CLASSES_3 = [device_class("class-1"), device_class("class-2"), device_class("class-3")]


@pytest.mark.parametrize(
    "classes", [pytest.param([], id="no-classes"), pytest.param(CLASSES_3, id="three-classes")]
)
def test_class_lister_list(dra_backend: Any, classes: list[Obj]) -> None:
    snap = dra_backend.build(classes=classes)
    assert by_key(snap.device_classes.list()) == by_key(classes)


def test_class_lister_get(dra_backend: Any) -> None:
    snap = dra_backend.build(classes=CLASSES_3)
    assert snap.device_classes.get("class-2") == CLASSES_3[1]
    with pytest.raises(NotFoundError, match=r'^DeviceClass "class-1337" not found$'):
        snap.device_classes.get("class-1337")


def test_add_device_classes(dra_backend: Any) -> None:
    snap = dra_backend.build(classes=[CLASS1])
    assert snap.device_classes.list() == [CLASS1]  # fills the list cache
    with pytest.raises(AlreadyTrackedError):
        snap.add_device_classes([CLASS2, CLASS1])
    assert snap.device_classes.list() == [CLASS1]  # atomic
    snap.fork()
    snap.add_device_classes([CLASS2])
    assert by_key(snap.device_classes.list()) == [CLASS1, CLASS2]
    snap = dra_backend.reopen(snap)
    snap.revert()
    assert snap.device_classes.list() == [CLASS1]
    with pytest.raises(ObjectValidationError):
        snap.add_device_classes([{"metadata": {}}])


# -- snapshot_slice_lister_test.go and TestSnapshotResourceSlices --------------------------------

N1_A = resource_slice("n1-a", "n1")
N1_B = resource_slice("n1-b", "n1")
N2_A = resource_slice("n2-a", "n2")
N2_B = resource_slice("n2-b", "n2")
GLOBAL_A = resource_slice("global-a")
GLOBAL_B = resource_slice("global-b")
SELECTOR = resource_slice(
    "selector",
    nodeSelector={"nodeSelectorTerms": [{"matchLabels": {}, "matchExpressions": []}]},
)
LOCAL_4 = [N1_A, N1_B, N2_A, N2_B]
GLOBAL_3 = [GLOBAL_A, GLOBAL_B, SELECTOR]


@pytest.mark.parametrize(
    "slices",
    [
        pytest.param([], id="none"),
        pytest.param(LOCAL_4, id="local-only"),
        pytest.param(GLOBAL_3, id="global-only"),
        pytest.param(LOCAL_4 + GLOBAL_3, id="local-and-global"),
    ],
)
def test_slice_lister_list(dra_backend: Any, slices: list[Obj]) -> None:
    snap = dra_backend.build(slices=slices)
    assert by_key(snap.resource_slices.list()) == by_key(slices)
    assert snap.node_resource_slices("n1") == ([N1_A, N1_B] if N1_A in slices else None)
    assert snap.store.keys(SLICE_KIND).count(NON_LOCAL_SLICES_KEY) == (
        1 if GLOBAL_A in slices else 0
    )


@dataclass
class SlicesCase:
    id: str
    op: Op
    op_error: type[Exception] | None = None
    want: Any = None  # the op's return value
    want_all: list[Obj] = field(default_factory=lambda: [S1, S2, S3, S4, G1, G2])
    want_nodes: dict[str, list[Obj] | None] = field(default_factory=dict)


SLICES_CASES = [
    SlicesCase("node-resource-slices-absent", lambda s: s.node_resource_slices("node3")),
    SlicesCase(
        "node-resource-slices-present", lambda s: s.node_resource_slices("node2"), want=[S3, S4]
    ),
    SlicesCase(
        "add-existing-node-is-error",
        lambda s: s.add_node_resource_slices("node1", [S1]),
        op_error=AlreadyTrackedError,
        want_nodes={"node1": [S1, S2]},
    ),
    SlicesCase(
        "add-new-node",
        lambda s: s.add_node_resource_slices("node3", [S5, S6]),
        want_all=[S1, S2, S3, S4, G1, G2, S5, S6],
        want_nodes={"node3": [S5, S6]},
    ),
    SlicesCase(
        "remove-absent-node-is-noop",
        lambda s: s.remove_node_resource_slices("node3"),
        want_nodes={"node3": None},
    ),
    SlicesCase(
        "remove-node",
        lambda s: s.remove_node_resource_slices("node2"),
        want_all=[S1, S2, G1, G2],
        want_nodes={"node2": None, "node1": [S1, S2]},
    ),
]


@pytest.mark.parametrize("case", SLICES_CASES, ids=lambda c: c.id)
@pytest.mark.parametrize("warm_cache", [False, True], ids=["cold", "warm"])
def test_resource_slices(dra_backend: Any, case: SlicesCase, warm_cache: bool) -> None:
    snap = dra_backend.build(slices=[S1, S2, S3, S4, G1, G2])
    if warm_cache:
        snap.resource_slices.list()
    if case.op_error is not None:
        with pytest.raises(case.op_error):
            case.op(snap)
    else:
        assert case.op(snap) == case.want
    assert by_key(snap.resource_slices.list()) == by_key(case.want_all)
    snap = dra_backend.reopen(snap)
    assert by_key(snap.resource_slices.list()) == by_key(case.want_all)
    for node, want in case.want_nodes.items():
        assert snap.node_resource_slices(node) == want


def test_node_resource_slices_found_when_empty(dra_backend: Any) -> None:
    snap = dra_backend.build()
    snap.add_node_resource_slices("empty", [])
    snap = dra_backend.reopen(snap)
    assert snap.node_resource_slices("empty") == []
    with pytest.raises(AlreadyTrackedError):
        snap.add_node_resource_slices("empty", [S1])


@pytest.mark.parametrize("bad", ["", NON_LOCAL_SLICES_KEY])
def test_node_name_checks(bad: str) -> None:
    snap = DraSnapshot.from_objects(slices=[G1])
    with pytest.raises(ObjectValidationError):
        snap.add_node_resource_slices(bad, [S1])
    if bad:
        with pytest.raises(ObjectValidationError):
            snap.remove_node_resource_slices(bad)
    assert snap.resource_slices.list() == [G1]


def test_returned_slice_lists_are_fresh() -> None:
    snap = DraSnapshot.from_objects(slices=[S1, S2, G1])
    snap.resource_slices.list().append(S6)
    node1 = snap.node_resource_slices("node1")
    assert node1 is not None
    node1.append(S6)
    assert by_key(snap.resource_slices.list()) == by_key([S1, S2, G1])
    assert snap.node_resource_slices("node1") == [S1, S2]


# -- construction --------------------------------------------------------------------------------


def test_from_objects_layout(dra_backend: Any) -> None:
    snap = dra_backend.build(
        claims=ALL_CLAIMS, slices=[S1, S2, S3, G1, G2], classes=[CLASS1, CLASS2]
    )
    store = snap.store
    assert sorted(store.kinds()) == sorted([CLAIM_KIND, SLICE_KIND, CLASS_KIND])
    assert sorted(store.keys(CLAIM_KIND)) == sorted(
        f"default/{c['metadata']['name']}" for c in ALL_CLAIMS
    )
    assert store.items(SLICE_KIND) == {
        "node1": [S1, S2],
        "node2": [S3],
        NON_LOCAL_SLICES_KEY: [G1, G2],
    }
    assert store.items(CLASS_KIND) == {"class1": CLASS1, "class2": CLASS2}
    assert snap.depth == 0


def test_from_objects_is_atomic_on_a_used_store() -> None:
    store = MemoryStore()
    DraSnapshot.from_objects(store, claims=[SHARED1], slices=[S1])
    digest = store.state_digest()
    with pytest.raises(AlreadyTrackedError):
        DraSnapshot.from_objects(store, claims=[SHARED2], slices=[S3, S1], classes=[CLASS1])
    with pytest.raises(AlreadyTrackedError):
        DraSnapshot.from_objects(store, claims=[SHARED1], classes=[CLASS1])
    assert store.state_digest() == digest


def test_add_claims_rolls_back_a_value_the_store_refuses(dra_backend: Any) -> None:
    bad = claim("bad") | {"spec": {"notJson": (1, 2)}}
    snap = dra_backend.build(claims=[SHARED1])
    with pytest.raises(Exception, match="not JSON"):
        snap.add_claims([allocated(SHARED2), bad])
    assert snap.resource_claims.list() == [SHARED1]
    assert_index_consistent(snap)
    with pytest.raises(ObjectValidationError):
        snap.add_claims([{"metadata": {"namespace": "x"}}])


def test_from_objects_rolls_back_a_value_the_store_refuses(dra_backend: Any) -> None:
    snap = dra_backend.build(claims=[SHARED1], slices=[S1], classes=[CLASS1])
    store = snap.store
    digest = store.state_digest()
    bad = claim("bad") | {"spec": {"notJson": {1, 2}}}
    with pytest.raises(Exception, match="not JSON"):
        DraSnapshot.from_objects(store, claims=[SHARED2, bad], slices=[S3, G1], classes=[CLASS2])
    with pytest.raises(Exception, match="not JSON"):
        snap.add_device_classes([CLASS2, device_class("x") | {"spec": {"bad": float("nan")}}])
    assert store.state_digest() == digest
    again = DraSnapshot(store)
    for s in (snap, again):
        assert s.resource_claims.list() == [SHARED1]
        assert s.resource_slices.list() == [S1]
        assert s.device_classes.list() == [CLASS1]
        assert_index_consistent(s)


def test_claim_without_namespace_is_in_default() -> None:
    bare = {"metadata": {"name": "bare", "uid": "bare"}}
    snap = DraSnapshot.from_objects(claims=[bare])
    assert snap.resource_claims.get("default", "bare") is bare
    snap.reserve_pod_claims(pod("p", ("x", "bare", "")))
    assert snap.resource_claims.get("default", "bare")["status"]["reservedFor"][0]["name"] == "p"
