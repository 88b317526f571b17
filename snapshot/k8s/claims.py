"""Pure ResourceClaim helpers: pod references, ownership, reservations, allocations.

cluster-autoscaler's ``dynamicresources/utils`` and the ``resourceclaim`` helpers it calls
(``cluster-autoscaler/simulator/dynamicresources/utils/resource_claims.go``), on wire-format
dicts. Nothing here mutates an argument: the functions that change a claim return a **new**
dict built copy-on-write along the changed path (new claim dict, new ``status`` dict, new
``reservedFor`` list; untouched subtrees are shared), or the claim itself when there is nothing
to change, so ``new is claim`` tells whether a write is needed.

Keys and namespaces (``namespace/name``, ``"default"`` when missing) live in
:mod:`snapshot.k8s.kinds`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypeAlias

from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.k8s.kinds import CORE_API_VERSION, POD_KIND, namespace_or_default
from drasnap.snapshot.k8s.objects import KubeObject, object_label

__all__ = [
    "MAX_RESERVATIONS",
    "DeviceID",
    "allocated_shares",
    "deallocated",
    "is_allocated",
    "is_for_pod",
    "is_fully_reserved",
    "is_in_use",
    "is_reserved_for_pod",
    "pod_claim_names",
    "pod_consumer_reference",
    "pod_identity",
    "pod_owner_reference",
    "with_pod_reservation",
    "without_pod_reservation",
]

DeviceID: TypeAlias = tuple[str, str, str]
"""An allocated device: ``(driver, pool, device)``."""

MAX_RESERVATIONS: Final = 256
"""``resourceapi.ResourceClaimReservedForMaxSize`` in resource.k8s.io v1/v1beta1."""


# -- identity ----------------------------------------------------------------------------------


def pod_identity(pod: Mapping[str, Any]) -> tuple[str, str, str]:
    """``(namespace, name, uid)`` of a pod; a missing UID is ``""`` (as in Go).

    Raises:
        ObjectValidationError: no ``metadata.name`` string, or a UID that is not a string.
    """
    # Plain dicts first (as in kinds.key_of): this runs several times per pod placed, and
    # ``isinstance(x, Mapping)`` is an ABC check, slower than the rest of the function.
    metadata = pod.get("metadata") if type(pod) is dict or isinstance(pod, Mapping) else None
    if type(metadata) is not dict and not isinstance(metadata, Mapping):
        metadata = {}
    name = metadata.get("name")
    uid = metadata.get("uid")
    if not isinstance(name, str) or not name:
        raise ObjectValidationError(
            f"{object_label(pod)}: metadata.name must be a non-empty string",
            kind=POD_KIND,
            field="metadata.name",
        )
    if uid is not None and not isinstance(uid, str):
        raise ObjectValidationError(
            f"{object_label(pod)}: metadata.uid must be a string",
            kind=POD_KIND,
            name=name,
            field="metadata.uid",
        )
    return namespace_or_default(pod), name, uid or ""


def pod_claim_names(pod: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(reference name, claim name)`` for each ``spec.resourceClaims`` entry, in spec order.

    The claim name is the entry's ``resourceClaimName`` if set, else the ``resourceClaimName``
    of the ``status.resourceClaimStatuses`` entry with the same name (claims generated from a
    template), else ``""``: it cannot be determined (upstream ``claimRefToName``).
    """
    refs = (pod.get("spec") or {}).get("resourceClaims") or ()
    if not refs:
        return []
    statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or ()
    out: list[tuple[str, str]] = []
    for ref in refs:
        ref_name = str(ref.get("name") or "")
        claim_name = ref.get("resourceClaimName")
        if claim_name is None:
            for status in statuses:
                if status.get("name") == ref_name and status.get("resourceClaimName") is not None:
                    claim_name = status["resourceClaimName"]
                    break
        out.append((ref_name, claim_name if isinstance(claim_name, str) else ""))
    return out


# -- ownership and reservations ----------------------------------------------------------------


def _reserved_for(claim: Mapping[str, Any]) -> list[Any]:
    reserved: list[Any] = (claim.get("status") or {}).get("reservedFor") or []
    return reserved


def is_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """Is ``claim`` owned by ``pod`` (upstream ``resourceclaim.IsForPod``)?

    Both in the same namespace, and the claim's controller owner reference (the first one
    with ``controller: true``) carries the pod's UID.
    """
    if namespace_or_default(claim) != namespace_or_default(pod):
        return False
    pod_uid = (pod.get("metadata") or {}).get("uid") or ""
    for owner in (claim.get("metadata") or {}).get("ownerReferences") or ():
        if owner.get("controller") is True:
            return bool((owner.get("uid") or "") == pod_uid)
    return False


def is_reserved_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """Does ``status.reservedFor`` hold an entry with the pod's UID (UID only, as upstream)?"""
    pod_uid = (pod.get("metadata") or {}).get("uid") or ""
    return any((ref.get("uid") or "") == pod_uid for ref in _reserved_for(claim))


def is_in_use(claim: Mapping[str, Any]) -> bool:
    """Is the claim reserved for at least one consumer?"""
    return bool(_reserved_for(claim))


def is_fully_reserved(claim: Mapping[str, Any]) -> bool:
    """Does the claim hold :data:`MAX_RESERVATIONS` reservations or more?"""
    return len(_reserved_for(claim)) >= MAX_RESERVATIONS


def is_allocated(claim: Mapping[str, Any]) -> bool:
    """Has the claim a ``status.allocation``?"""
    return (claim.get("status") or {}).get("allocation") is not None


def pod_consumer_reference(pod: Mapping[str, Any]) -> KubeObject:
    """The ``reservedFor`` entry for a pod, in wire form.

    ``{"resource": "pods", "name": ..., "uid": ...}``: the empty ``apiGroup`` of the core group
    is omitted, as the API server prints it (matching treats a missing apiGroup as ``""``).
    """
    _, name, uid = pod_identity(pod)
    return {"resource": "pods", "name": name, "uid": uid}


def pod_owner_reference(pod: Mapping[str, Any]) -> KubeObject:
    """The controller owner reference of a claim generated for ``pod``."""
    _, name, uid = pod_identity(pod)
    return {
        "apiVersion": CORE_API_VERSION,
        "kind": POD_KIND,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _matches_pod(ref: Mapping[str, Any], name: str, uid: str) -> bool:
    return (
        (ref.get("apiGroup") or "") == ""
        and ref.get("resource") == "pods"
        and ref.get("name") == name
        and (ref.get("uid") or "") == uid
    )


def _with_status(claim: Mapping[str, Any], status: dict[str, Any]) -> KubeObject:
    new = dict(claim)
    if status:
        new["status"] = status
    else:
        new.pop("status", None)
    return new


def with_pod_reservation(claim: KubeObject, pod: Mapping[str, Any]) -> KubeObject:
    """``claim`` with the pod appended to ``status.reservedFor``.

    Returns ``claim`` itself when an entry with the pod's UID is already there. The size limit
    is not checked here (callers pre-check it, as upstream's snapshot.go).
    """
    if is_reserved_for_pod(pod, claim):
        return claim
    status = dict(claim.get("status") or {})
    status["reservedFor"] = [*_reserved_for(claim), pod_consumer_reference(pod)]
    return _with_status(claim, status)


def without_pod_reservation(claim: KubeObject, pod: Mapping[str, Any]) -> KubeObject:
    """``claim`` without the pod's first ``reservedFor`` entry.

    An entry matches on apiGroup ``""``, resource ``"pods"``, the pod's name **and** UID; only
    the first match is removed. An emptied ``reservedFor`` (then ``status``) is dropped, as the
    API server omits empty fields. Returns ``claim`` itself when nothing matches.
    """
    reserved = _reserved_for(claim)
    _, name, uid = pod_identity(pod)
    for index, ref in enumerate(reserved):
        if _matches_pod(ref, name, uid):
            status = dict(claim.get("status") or {})
            rest = reserved[:index] + reserved[index + 1 :]
            if rest:
                status["reservedFor"] = rest
            else:
                del status["reservedFor"]
            return _with_status(claim, status)
    return claim


def deallocated(claim: KubeObject) -> KubeObject:
    """``claim`` without ``status.allocation``; ``claim`` itself when it has none.

    Reservations are not touched.
    """
    status = claim.get("status") or {}
    if "allocation" not in status:
        return claim
    new_status = dict(status)
    del new_status["allocation"]
    return _with_status(claim, new_status)


# -- allocations -------------------------------------------------------------------------------


SharedDevice = tuple[str, str, str, str]
"""(driver, pool, device, shareID) of one share of a device that allows multiple allocations."""
ConsumedCapacity = tuple[str, str, str, Mapping[str, Any]]
"""(driver, pool, device, consumedCapacity) of one share."""


def allocated_shares(
    claim: Mapping[str, Any],
) -> tuple[tuple[DeviceID, ...], tuple[SharedDevice, ...], tuple[ConsumedCapacity, ...]]:
    """The claim's results split as upstream's ``GatherAllocatedState`` splits them.

    A result with a ``shareID`` is a share of a device that allows multiple allocations: it
    goes to the shared devices (and its ``consumedCapacity``, if any, to the consumed
    capacity); every other result holds its device exclusively. Result order, repeats kept.
    """
    allocation = (claim.get("status") or {}).get("allocation")
    results = ((allocation or {}).get("devices") or {}).get("results") or ()
    dedicated: list[DeviceID] = []
    shared: list[SharedDevice] = []
    consumed: list[ConsumedCapacity] = []
    for r in results:
        device = (str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", "")))
        share = r.get("shareID")
        if share is None:
            dedicated.append(device)
            continue
        shared.append((*device, str(share)))
        if r.get("consumedCapacity"):
            consumed.append((*device, r["consumedCapacity"]))
    return tuple(dedicated), tuple(shared), tuple(consumed)
