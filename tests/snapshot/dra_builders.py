"""Builders and fixture objects for the DraSnapshot tests, as in upstream's
``cluster-autoscaler/simulator/dynamicresources/snapshot/snapshot_test.go``.

Pods are in namespace "default" with UID = name (``test.BuildTestPod``); claims have UID =
name. ``reserved(claim, *pods)`` is the spec's R(c, pods...), ``allocated(claim)`` its A(c).
Every builder returns new dicts and never mutates its arguments.
"""

from __future__ import annotations

import copy
from typing import Any

from drasnap.snapshot.dra.snapshot import DraSnapshot

Obj = dict[str, Any]


def pod(name: str, *refs: tuple[str, str, str], namespace: str = "default") -> Obj:
    """A pod; each ref is (reference name, claim name, template name) as ``WithResourceClaim``.

    With a template the claim name goes to ``status.resourceClaimStatuses``; without one it is
    the reference's ``resourceClaimName``.
    """
    spec_refs: list[Obj] = []
    statuses: list[Obj] = []
    for ref_name, claim_name, template in refs:
        if template:
            spec_refs.append({"name": ref_name, "resourceClaimTemplateName": template})
            statuses.append({"name": ref_name, "resourceClaimName": claim_name})
        else:
            spec_refs.append({"name": ref_name, "resourceClaimName": claim_name})
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": name},
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
    }
    if spec_refs:
        obj["spec"]["resourceClaims"] = spec_refs
    if statuses:
        obj["status"] = {"resourceClaimStatuses": statuses}
    return obj


def without_claim_statuses(p: Obj) -> Obj:
    out = copy.deepcopy(p)
    out.pop("status", None)
    return out


def claim(name: str, namespace: str = "default") -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": name},
        "spec": {"devices": {"requests": [{"name": "req1", "exactly": {"deviceClassName": "c"}}]}},
    }


def owned(owner: Obj, c: Obj) -> Obj:
    """``TestClaimWithPodOwnership``: a controller owner reference to ``owner``."""
    out = copy.deepcopy(c)
    out["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    return out


def consumer(p: Obj) -> Obj:
    return {"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}


def reserved(c: Obj, *pods: Obj) -> Obj:
    """R(c, pods...): reservations of ``pods`` appended, in order."""
    out = copy.deepcopy(c)
    status = out.setdefault("status", {})
    status["reservedFor"] = [*status.get("reservedFor", []), *map(consumer, pods)]
    return out


def result(driver: str, pool: str, device: str, request: str = "req1") -> Obj:
    return {"request": request, "driver": driver, "pool": pool, "device": device}


def allocated(c: Obj, *results: Obj) -> Obj:
    """A(c): with the default test allocation (req1 on driver.example.com/pool1/device1)."""
    out = copy.deepcopy(c)
    res = list(results) or [result("driver.example.com", "pool1", "device1")]
    out.setdefault("status", {})["allocation"] = {"devices": {"results": res}}
    return out


def test_pods(count: int) -> list[Obj]:
    return [pod(f"test-pod-{i}") for i in range(count)]


test_pods.__test__ = False  # type: ignore[attr-defined]  # not a test, despite the name


def resource_slice(name: str, node: str | None = None, **spec: Any) -> Obj:
    body: Obj = {"driver": "driver.example.com", "pool": {"name": name, "generation": 0}}
    if node is not None:
        body["nodeName"] = node
    elif not spec:
        body["allNodes"] = True
    body.update(spec)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name, "uid": name},
        "spec": body,
    }


def device_class(name: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name, "uid": f"{name}-uid"},
        "spec": {},
    }


# -- the fixture objects of snapshot_test.go ----------------------------------------------------

POD1 = pod(
    "pod1",
    ("ownClaim1", "pod1-ownClaim1-abc", "pod1-ownClaim1"),
    ("ownClaim2", "pod1-ownClaim2-abc", "pod1-ownClaim2"),
    ("sharedClaim1", "sharedClaim1", ""),
    ("sharedClaim2", "sharedClaim2", ""),
)
POD2 = pod(
    "pod2",
    ("ownClaim1", "pod2-ownClaim1-abc", "pod1-ownClaim1"),
    ("sharedClaim1", "sharedClaim1", ""),
    ("sharedClaim3", "sharedClaim3", ""),
)
POD1_NO_STATUS = without_claim_statuses(POD1)

SHARED1 = claim("sharedClaim1")
SHARED2 = claim("sharedClaim2")
SHARED3 = claim("sharedClaim3")
POD1_OWN1 = owned(POD1, claim("pod1-ownClaim1-abc"))
POD1_OWN2 = owned(POD1, claim("pod1-ownClaim2-abc"))
POD2_OWN1 = owned(POD2, claim("pod2-ownClaim1-abc"))
ALL_CLAIMS = [SHARED1, SHARED2, SHARED3, POD1_OWN1, POD1_OWN2, POD2_OWN1]

S1 = resource_slice("local-slice-1", "node1")
S2 = resource_slice("local-slice-2", "node1")
S3 = resource_slice("local-slice-3", "node2")
S4 = resource_slice("local-slice-4", "node2")
S5 = resource_slice("local-slice-5", "node3")
S6 = resource_slice("local-slice-6", "node3")
G1 = resource_slice("global-slice-1")
G2 = resource_slice("global-slice-2")

CLASS1 = device_class("class1")
CLASS2 = device_class("class2")

#: every module-level fixture object, checked unchanged after each test (sigs #37)
FIXTURE_OBJECTS: dict[str, Obj] = {
    name: value
    for name, value in dict(globals()).items()
    if name.isupper() and isinstance(value, dict)
}


# -- checks -------------------------------------------------------------------------------------


def key(obj: Obj) -> tuple[str, str]:
    return (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def by_key(objs: list[Obj]) -> list[Obj]:
    """Sorted by (namespace, name): list comparisons ignore order (as upstream's tests do)."""
    return sorted(objs, key=key)


def recomputed_devices(snap: DraSnapshot) -> set[tuple[str, str, str]]:
    """The devices held exclusively, the upstream way (GatherAllocatedState): a scan of every
    claim, results with a shareID left out (they are shares)."""
    out: set[tuple[str, str, str]] = set()
    for c in snap.resource_claims.list():
        allocation = (c.get("status") or {}).get("allocation") or {}
        for r in (allocation.get("devices") or {}).get("results") or []:
            if r.get("shareID") is None:
                out.add((r["driver"], r["pool"], r["device"]))
    return out


def recomputed_shares(snap: DraSnapshot) -> tuple[list[Any], list[Any]]:
    """The shares and consumed capacities, sorted, by a scan of every claim."""
    shares: list[Any] = []
    consumed: list[Any] = []
    for c in snap.resource_claims.list():
        allocation = (c.get("status") or {}).get("allocation") or {}
        for r in (allocation.get("devices") or {}).get("results") or []:
            if r.get("shareID") is not None:
                device = (r["driver"], r["pool"], r["device"])
                shares.append((*device, r["shareID"]))
                if r.get("consumedCapacity"):
                    consumed.append((*device, sorted(r["consumedCapacity"].items())))
    return sorted(shares), sorted(consumed)


def assert_index_consistent(snap: DraSnapshot) -> None:
    devices = recomputed_devices(snap)
    tracker = snap.resource_claims
    assert tracker.list_all_allocated_devices() == devices
    pools = {(d, p) for d, p, _ in devices} | {
        (s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in snap.resource_slices.list()
    }
    by_pool = tracker.allocated_by_pool()
    for driver, pool in pools:
        names = {name for d, p, name in devices if (d, p) == (driver, pool)}
        assert set(by_pool.get((driver, pool), ())) == names, (driver, pool)
    assert all(by_pool.values()), "a pool with no allocated device is kept"
    shares, consumed = tracker.allocated_shares()
    assert (
        sorted(shares),
        sorted((*c[:3], sorted(c[3].items())) for c in consumed),
    ) == recomputed_shares(snap)


def state(snap: DraSnapshot) -> dict[str, Any]:
    """The flattened state (``SnapshotFlattenedComparer``): claims, slices, classes."""
    return {
        "claims": by_key(snap.resource_claims.list()),
        "slices": by_key(snap.resource_slices.list()),
        "classes": by_key(snap.device_classes.list()),
    }


def expected_state(
    claims: list[Obj], slices: list[Obj], classes: list[Obj] | None = None
) -> dict[str, Any]:
    return {
        "claims": by_key(claims),
        "slices": by_key(slices),
        "classes": by_key(classes or []),
    }
