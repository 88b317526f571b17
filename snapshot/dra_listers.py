"""The scheduler-facing views of a :class:`snapshot.dra.DraSnapshot` (spec §2.3).

``resource_claims`` (the scheduler's ResourceClaimTracker), ``resource_slices``
(ResourceSliceLister) and ``device_classes`` (DeviceClassLister): thin objects holding only the
snapshot, serving reads from the store and from the snapshot's derived indexes
(:mod:`snapshot.dra_index`). The store kinds and keys are :mod:`snapshot.kinds`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

import orjson

from snapshot.claims import DeviceId
from snapshot.errors import NotFoundError, SnapshotError
from snapshot.kinds import CLAIM_KIND, CLASS_KIND, SLICE_KIND, key_of, namespaced_key
from snapshot.objects import KubeObject, uid_of

if TYPE_CHECKING:
    from snapshot.dra import DraSnapshot

__all__ = [
    "DeviceClassLister",
    "ResourceClaimTracker",
    "ResourceSliceLister",
    "go_quote",
]


def go_quote(text: str) -> str:
    """Go's ``%q`` for the strings we quote (printable text: JSON string syntax)."""
    return orjson.dumps(text).decode()


def _flatten(groups: dict[str, list[KubeObject]]) -> list[KubeObject]:
    return [item for group in groups.values() for item in group]


class ResourceClaimTracker:
    """``resource_claims``: the scheduler's ResourceClaimTracker view of a snapshot."""

    __slots__ = ("_snap",)

    def __init__(self, snapshot: DraSnapshot) -> None:
        self._snap = snapshot

    def get(self, namespace: str, name: str) -> KubeObject:
        """The claim ``namespace/name`` (shared, read-only).

        Raises:
            NotFoundError: not tracked.
        """
        claim = self._snap._claim(namespaced_key(namespace, name))
        if claim is None:
            raise NotFoundError(f"claim {namespace}/{name} not found")
        return claim

    def list(self) -> list[KubeObject]:
        """Every tracked claim (a new list of shared, read-only claims), in no set order."""
        return list(self._snap._store.items(CLAIM_KIND).values())

    def list_all_allocated_devices(self) -> frozenset[DeviceId]:
        """The ``(driver, pool, device)`` of every result of every allocated claim.

        An immutable set, maintained incrementally as claims change (never a scan of the
        claims): the same object is returned until the allocated devices change, so a call is
        O(1), or O(devices) once after a change. Copy it (``set(...)``) to modify it.
        """
        snap = self._snap
        snap._in_step()
        return snap._index.devices()

    def allocated_devices_view(self) -> AbstractSet[DeviceId]:
        """A live, read-only view of the same devices: O(1) always, nothing copied.

        It follows every later change (Revert included), so test membership right away and do
        not keep it across writes; :meth:`list_all_allocated_devices` is the stable value.
        """
        snap = self._snap
        snap._in_step()
        return snap._index.refs.keys()

    def allocated_by_pool(self) -> Mapping[tuple[str, str], AbstractSet[str]]:
        """The allocated device names of each (driver, pool) that has any: a live, read-only
        view, as :meth:`allocated_devices_view` (test it right away)."""
        snap = self._snap
        snap._in_step()
        return snap._index.by_pool

    def signal_claim_pending_allocation(self, claim_uid: str, allocated_claim: KubeObject) -> None:
        """Store ``allocated_claim`` (as given) in the top layer: the DRA plugin's Reserve.

        Raises:
            NotFoundError: no claim with its namespace/name is tracked.
            SnapshotError: the tracked claim has another UID.
        """
        snap = self._snap
        key = key_of(allocated_claim)
        stored = snap._claim(key)
        if stored is None:
            raise NotFoundError(f"claim {key} not found")
        stored_uid = uid_of(stored) or ""
        if stored_uid != claim_uid:
            raise SnapshotError(
                f"claim {key}: snapshot has UID {go_quote(stored_uid)}, allocation came for "
                f"UID {go_quote(claim_uid)} - shouldn't happenn"
            )
        snap._in_step()
        snap._set_claim(key, allocated_claim)

    def claim_has_pending_allocation(self, claim_uid: str) -> bool:
        """Always False: the snapshot applies allocations synchronously (spec §2.3)."""
        return False


class ResourceSliceLister:
    """``resource_slices``: the scheduler's ResourceSliceLister view of a snapshot."""

    __slots__ = ("_snap",)

    def __init__(self, snapshot: DraSnapshot) -> None:
        self._snap = snapshot

    def list(self) -> list[KubeObject]:
        """A new list of every slice, node-local and global (shared, read-only slices).

        O(slices) for the copy of a cached flat list. Adding a node's slices appends to it and
        reverting that cuts it back; it is rebuilt only after slices were removed.
        """
        snap = self._snap
        snap._in_step()
        return list(snap._slice_list.get(lambda: _flatten(snap._store.items(SLICE_KIND))))


class DeviceClassLister:
    """``device_classes``: the scheduler's DeviceClassLister view of a snapshot."""

    __slots__ = ("_snap",)

    def __init__(self, snapshot: DraSnapshot) -> None:
        self._snap = snapshot

    def get(self, name: str) -> KubeObject:
        """The class ``name`` (shared, read-only).

        Raises:
            NotFoundError: not tracked.
        """
        device_class: KubeObject | None = self._snap._store.get(CLASS_KIND, name)
        if device_class is None:
            raise NotFoundError(f"DeviceClass {go_quote(name)} not found")
        return device_class

    def list(self) -> list[KubeObject]:
        """A new list of every class (shared, read-only), from a cached list."""
        snap = self._snap
        snap._in_step()
        return list(snap._class_list.get(lambda: list(snap._store.items(CLASS_KIND).values())))
