"""The scheduler-facing views of a :class:`snapshot.dra.DraSnapshot`.

``resource_claims`` (the scheduler's ResourceClaimTracker), ``resource_slices``
(ResourceSliceLister) and ``device_classes`` (DeviceClassLister): thin objects holding the
store and the derived indexes they serve (:mod:`snapshot.dra.index`). The store kinds and keys
are :mod:`snapshot.k8s.kinds`'. Upstream: ``snapshot_claim_tracker.go``,
``snapshot_slice_lister.go``
and ``snapshot_class_lister.go`` in ``cluster-autoscaler/simulator/dynamicresources/snapshot/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from drasnap.snapshot.dra.index import DeviceIndex, FlatList
from drasnap.snapshot.errors import NotFoundError, SnapshotError
from drasnap.snapshot.k8s.claims import ConsumedCapacity, DeviceID, SharedDevice
from drasnap.snapshot.k8s.kinds import CLAIM_KIND, CLASS_KIND, key_of, namespaced_key
from drasnap.snapshot.k8s.objects import KubeObject, go_quote, uid_of
from drasnap.store import VersionedStore

__all__ = [
    "DeviceClassLister",
    "DeviceTaintRuleLister",
    "ResourceClaimTracker",
    "ResourceSliceLister",
]


class ResourceClaimTracker:
    """``resource_claims``: the scheduler's ResourceClaimTracker view of a snapshot."""

    __slots__ = ("_index", "_store")

    def __init__(self, store: VersionedStore, index: DeviceIndex) -> None:
        self._store = store
        self._index = index

    def _claim(self, key: str) -> KubeObject | None:
        claim: KubeObject | None = self._store.get(CLAIM_KIND, key)
        return claim

    def get(self, namespace: str, name: str) -> KubeObject:
        """The claim ``namespace/name`` (shared, read-only).

        Raises:
            NotFoundError: not tracked.
        """
        claim = self._claim(namespaced_key(namespace, name))
        if claim is None:
            raise NotFoundError(f"claim {namespace}/{name} not found")
        return claim

    def list(self) -> list[KubeObject]:
        """Every tracked claim (a new list of shared, read-only claims), in no set order."""
        return list(self._store.items(CLAIM_KIND).values())

    def list_all_allocated_devices(self) -> frozenset[DeviceID]:
        """The ``(driver, pool, device)`` of every result of every allocated claim.

        An immutable set, maintained incrementally as claims change (never a scan of the
        claims): the same object is returned until the allocated devices change, so a call is
        O(1), or O(devices) once after a change. Copy it (``set(...)``) to modify it.
        """
        return self._index.devices()

    def allocated_devices_view(self) -> AbstractSet[DeviceID]:
        """A live, read-only view of the same devices: O(1) always, nothing copied.

        It follows every later change (Revert included), so test membership right away and do
        not keep it across writes; :meth:`list_all_allocated_devices` is the stable value.
        """
        return self._index.refs.keys()

    def allocated_by_pool(self) -> Mapping[tuple[str, str], AbstractSet[str]]:
        """The allocated device names of each (driver, pool) that has any: a live, read-only
        view, as :meth:`allocated_devices_view` (test it right away)."""
        return self._index.by_pool

    def allocated_shares(self) -> tuple[tuple[SharedDevice, ...], tuple[ConsumedCapacity, ...]]:
        """The shares of devices that allow multiple allocations, and the capacity they
        consume: upstream's ``AllocatedSharedDeviceIDs`` and ``AggregatedCapacity`` (before
        aggregation), for `snapshot.allocation.allocator.allocate`. ``((), ())`` when there are
        none."""
        return self._index.shared()

    def signal_claim_pending_allocation(self, claim_uid: str, allocated_claim: KubeObject) -> None:
        """Store ``allocated_claim`` (as given) in the top layer: the DRA plugin's Reserve.

        Raises:
            NotFoundError: no claim with its namespace/name is tracked.
            SnapshotError: the tracked claim has another UID.
        """
        key = key_of(allocated_claim)
        stored = self._claim(key)
        if stored is None:
            raise NotFoundError(f"claim {key} not found")
        stored_uid = uid_of(stored) or ""
        if stored_uid != claim_uid:
            raise SnapshotError(
                f"claim {key}: snapshot has UID {go_quote(stored_uid)}, allocation came for "
                f"UID {go_quote(claim_uid)} - shouldn't happenn"
            )
        self._store.put(CLAIM_KIND, key, allocated_claim)

    def claim_has_pending_allocation(self, claim_uid: str) -> bool:
        """Always False: the snapshot applies allocations synchronously (as upstream's tracker)."""
        return False


class ResourceSliceLister:
    """``resource_slices``: the scheduler's ResourceSliceLister view of a snapshot."""

    __slots__ = ("_slices",)

    def __init__(self, slices: FlatList) -> None:
        self._slices = slices

    def list(self) -> list[KubeObject]:
        """A new list of every slice, node-local and global (shared, read-only slices).

        O(slices) for the copy of a cached flat list. Adding a node's slices appends to it and
        reverting that cuts it back; it is rebuilt only after other changes of slices.
        """
        return list(self._slices.get())


class DeviceClassLister:
    """``device_classes``: the scheduler's DeviceClassLister view of a snapshot."""

    __slots__ = ("_classes", "_store")

    def __init__(self, store: VersionedStore, classes: FlatList) -> None:
        self._store = store
        self._classes = classes

    def get(self, name: str) -> KubeObject:
        """The class ``name`` (shared, read-only).

        Raises:
            NotFoundError: not tracked.
        """
        device_class: KubeObject | None = self._store.get(CLASS_KIND, name)
        if device_class is None:
            raise NotFoundError(f"DeviceClass {go_quote(name)} not found")
        return device_class

    def list(self) -> list[KubeObject]:
        """A new list of every class (shared, read-only), from a cached list."""
        return list(self._classes.get())


class DeviceTaintRuleLister:
    """``device_taint_rules``: the DeviceTaintRules the scheduler applies to slices."""

    __slots__ = ("_rules",)

    def __init__(self, rules: FlatList) -> None:
        self._rules = rules

    def list(self) -> list[KubeObject]:
        """A new list of every rule (shared, read-only), from a cached list."""
        return list(self._rules.get())
