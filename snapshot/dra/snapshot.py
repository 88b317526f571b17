"""``DraSnapshot``: cluster-autoscaler's DRA snapshot on drasnap's versioned store.

Data model in the store (part of the on-disk format that SQL users query):

===================  =======================================  ==================================
kind                 key                                      value
===================  =======================================  ==================================
``ResourceClaim``    ``"namespace/name"``                     the claim
``ResourceSlice``    node name                                the list of that node's slices
``ResourceSlice``    ``"--NON-LOCAL--"`` (never a node name)  the non-node-local (global) slices
``DeviceClass``      class name                               the class
``DeviceTaintRule``  rule name                                the rule
===================  =======================================  ==================================

Layers are the store's: :meth:`DraSnapshot.fork`, :meth:`~DraSnapshot.commit` and
:meth:`~DraSnapshot.revert` move every kind in lock-step, Commit merges one level and the base
cannot be reverted, as upstream's
``cluster-autoscaler/simulator/dynamicresources/snapshot/snapshot.go``. Objects are wire-format
dicts. Values in the store are shared and read-only: the snapshot never mutates an object it
was given or read, it writes new dicts built copy-on-write along the changed path
(:mod:`snapshot.k8s.claims`), and every read-modify-write re-reads the claim from the store,
never the caller's object, which may be stale (a pod that names one claim twice finds, at the
second reference, the reservation the first one made).

Derived state, in memory only (:mod:`snapshot.dra.index`): the allocated-device index behind
``resource_claims.list_all_allocated_devices()`` (read on every scheduling attempt) and the
flattened lists behind ``resource_slices.list()`` and ``device_classes.list()``. Each is a
follower of the store (:mod:`store.followers`): built from the store when the snapshot is
created, then told of every change of its kind, including what a revert restores. So forking,
committing and reverting through the snapshot, a ``ClusterSnapshot`` or the store itself keeps
them right, as does a store reopened mid-fork, and a new kind of derived state is one more
follower registered in ``__init__``:

.. code-block:: python

    class SharedDevices:  # e.g. the allocated shared devices, per claim
        def __init__(self, store):
            self.by_claim = {k: shared_of(c) for k, c in store.items(CLAIM_KIND).items()}
            store.follow([CLAIM_KIND], self)

        def changed(self, kind, key, value):
            if value is ABSENT:
                self.by_claim.pop(key, None)
            else:
                self.by_claim[key] = shared_of(value)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from drasnap.snapshot.dra.index import DeviceIndex, FlatList
from drasnap.snapshot.dra.listers import (
    DeviceClassLister,
    DeviceTaintRuleLister,
    ResourceClaimTracker,
    ResourceSliceLister,
)
from drasnap.snapshot.errors import (
    AlreadyTrackedError,
    NotFoundError,
    ObjectValidationError,
    ReservationError,
)
from drasnap.snapshot.k8s.claims import (
    deallocated,
    is_for_pod,
    is_fully_reserved,
    is_in_use,
    is_reserved_for_pod,
    pod_claim_names,
    pod_identity,
    with_pod_reservation,
    without_pod_reservation,
)
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    CLASS_KIND,
    NON_LOCAL_SLICES_KEY,
    SLICE_KIND,
    TAINT_RULE_KIND,
    key_of,
    namespaced_key,
)
from drasnap.snapshot.k8s.objects import KubeObject, go_quote, object_label
from drasnap.store import Closing, MemoryStore, Store, VersionedStore

__all__ = [
    "DeviceClassLister",
    "DeviceTaintRuleLister",
    "DraSnapshot",
    "ResourceClaimTracker",
    "ResourceSliceLister",
]


class DraSnapshot(Closing):
    """DRA claims, slices and classes with cluster-autoscaler semantics, on a versioned store.

    Works on any :class:`store.VersionedStore` (durable or in memory); see the module
    docstring for the data model and the derived indexes. Objects handed to the snapshot
    (claims, slices, classes) are stored as given and become shared, read-only values: do not
    mutate them afterwards. Objects it returns are read-only too. Not thread-safe.

    >>> snap = DraSnapshot.from_objects(claims=[{"metadata": {"name": "c", "namespace": "ns"}}])
    >>> snap.fork()
    1
    >>> snap.resource_claims.get("ns", "c")["metadata"]["name"]
    'c'
    >>> snap.revert()
    0
    """

    def __init__(self, store: VersionedStore) -> None:
        """Wrap ``store``; the indexes are built from what it holds, then follow it."""
        self._store = store
        self._index = DeviceIndex()
        self._slice_list = FlatList(store, SLICE_KIND, spread=True)
        self._class_list = FlatList(store, CLASS_KIND, spread=False)
        self._rule_list = FlatList(store, TAINT_RULE_KIND, spread=False)
        self.resync()
        store.follow([CLAIM_KIND], self._index)
        store.follow([SLICE_KIND], self._slice_list)
        store.follow([CLASS_KIND], self._class_list)
        store.follow([TAINT_RULE_KIND], self._rule_list)
        self.resource_claims = ResourceClaimTracker(store, self._index)
        self.resource_slices = ResourceSliceLister(self._slice_list)
        self.device_classes = DeviceClassLister(store, self._class_list)
        self.device_taint_rules = DeviceTaintRuleLister(self._rule_list)

    @classmethod
    def open(
        cls,
        target: str | os.PathLike[str] = "drasnap.db",
        *,
        name: str = "default",
        **options: Any,
    ) -> DraSnapshot:
        """A snapshot on the durable store ``name`` in ``target`` (see :meth:`Store.open`)."""
        return cls(Store.open(target, name=name, **options))

    @classmethod
    def from_objects(
        cls,
        store: VersionedStore | None = None,
        *,
        claims: Iterable[KubeObject] = (),
        slices: Iterable[KubeObject] = (),
        classes: Iterable[KubeObject] = (),
    ) -> DraSnapshot:
        """A snapshot holding these objects, written into ``store``'s top layer.

        ``store`` defaults to a new :class:`MemoryStore`. Slices are grouped by
        ``spec.nodeName``; slices without one are global (upstream's Provider). Within one
        argument a repeated claim or class replaces the earlier one.

        All or nothing: everything is checked first, and writes are undone if the store
        refuses a value.

        Raises:
            AlreadyTrackedError: ``store`` already holds one of the claims, classes or a
                node's slices.
            ObjectValidationError: an object without ``metadata.name``.
            store.InvalidValueError: an object that is not JSON.
        """
        snap = cls(MemoryStore() if store is None else store)
        by_node: dict[str, list[KubeObject]] = {}
        global_slices: list[KubeObject] = []
        for slice_ in slices:
            node_name = (slice_.get("spec") or {}).get("nodeName")
            if isinstance(node_name, str) and node_name:
                by_node.setdefault(node_name, []).append(slice_)
            else:
                global_slices.append(slice_)
        claim_list = snap._check_new_claims(claims)
        class_list = snap._check_new_named(CLASS_KIND, classes)
        for node_name in by_node:
            snap._check_new_node(node_name)
        if global_slices and snap._store.get(SLICE_KIND, NON_LOCAL_SLICES_KEY) is not None:
            raise AlreadyTrackedError("non-node-local ResourceSlices already present")
        written: list[tuple[str, str]] = []
        try:
            snap._write_named(CLASS_KIND, class_list, written)
            for node_name, node_slices in by_node.items():
                snap._write_node_slices(node_name, node_slices, written)
            if global_slices:
                snap._write_node_slices(NON_LOCAL_SLICES_KEY, global_slices, written)
            snap._write_new_claims(claim_list, written)
        except Exception:
            snap._rollback(written)
            raise
        return snap

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def store(self) -> VersionedStore:
        """The underlying store."""
        return self._store

    def checkpoint(self, *, wait: bool = True) -> None:
        """Make the state durable (the store's checkpoint; a no-op on a memory store);
        ``wait=False``: see :meth:`store.Store.checkpoint`."""
        self._store.checkpoint(wait=wait)

    def close(self) -> None:
        """Close the underlying store (which checkpoints a durable one)."""
        self._store.close()

    def __repr__(self) -> str:
        return f"<DraSnapshot depth={self._store.depth} store={self._store!r}>"

    def resync(self) -> None:
        """Rebuild the derived indexes from the store. O(claims).

        Never needed for what goes through the store (the indexes follow it); kept for a store
        whose followers were dropped.
        """
        self._index.rebuild(self._store.items(CLAIM_KIND))
        self._slice_list.invalidate()
        self._class_list.invalidate()
        self._rule_list.invalidate()

    # -- layers ---------------------------------------------------------------------------------

    @property
    def depth(self) -> int:
        """Number of open forks (0 = only the base layer)."""
        return self._store.depth

    def fork(self, label: str | None = None) -> int:
        """Push an empty layer for every kind; returns the new depth. O(1)."""
        return self._store.fork(label)

    def commit(self) -> int:
        """Merge the top layer into the one below; a no-op at the base. Returns the new depth.

        O(keys changed in the layer). Durability is the store's (a commit into the base of a
        durable store checkpoints by default).
        """
        return self._store.commit()

    def revert(self) -> int:
        """Drop the top layer's changes; a no-op at the base. Returns the new depth.

        O(keys changed in the layer).
        """
        return self._store.revert()

    # -- claim writes --------------------------------------------------------------------------

    def _set_claim(self, key: str, claim: KubeObject) -> None:
        self._store.put(CLAIM_KIND, key, claim)

    def _delete_claim(self, key: str) -> None:
        self._store.delete(CLAIM_KIND, key)

    def _claim(self, key: str) -> KubeObject | None:
        claim: KubeObject | None = self._store.get(CLAIM_KIND, key)
        return claim

    # -- claims of a pod -----------------------------------------------------------------------

    def _pod_claims(self, pod: KubeObject, *, strict: bool) -> list[tuple[str, KubeObject]]:
        """``(key, claim)`` per reference, in spec order; lenient mode skips what it can't find."""
        namespace, pod_name, _ = pod_identity(pod)
        out: list[tuple[str, KubeObject]] = []
        for ref_name, claim_name in pod_claim_names(pod):
            if not claim_name:
                if strict:
                    raise NotFoundError(
                        f"error while obtaining ResourceClaim {ref_name} for pod "
                        f"{namespace}/{pod_name}: couldn't determine ResourceClaim name"
                    )
                continue
            key = namespaced_key(namespace, claim_name)
            claim = self._claim(key)
            if claim is None:
                if strict:
                    raise NotFoundError(
                        f"error while obtaining ResourceClaim {ref_name} for pod "
                        f"{namespace}/{pod_name}: couldn't find ResourceClaim in the snapshot"
                    )
                continue
            out.append((key, claim))
        return out

    def pod_claims(self, pod: KubeObject) -> list[KubeObject]:
        """The claims of every ``spec.resourceClaims`` entry of ``pod``, in spec order.

        A claim referenced twice appears twice; a pod without claims gives ``[]``.

        Raises:
            NotFoundError: a reference whose claim name cannot be determined, or whose claim
                is not tracked (upstream's wording).
        """
        return [claim for _, claim in self._pod_claims(pod, strict=True)]

    def add_claims(self, claims: Iterable[KubeObject]) -> None:
        """Track new claims (e.g. the owned claims of a duplicated pod), in the top layer.

        All or nothing: every claim is checked before any is written. A claim repeated in
        ``claims`` replaces the earlier one (as upstream).

        Raises:
            AlreadyTrackedError: a claim with the same namespace/name is already tracked.
            ObjectValidationError: a claim without ``metadata.name``.
        """
        checked = self._check_new_claims(claims)
        written: list[tuple[str, str]] = []
        try:
            self._write_new_claims(checked, written)
        except Exception:
            self._rollback(written)
            raise

    def _check_new_claims(self, claims: Iterable[KubeObject]) -> list[tuple[str, KubeObject]]:
        checked = [(key_of(claim), claim) for claim in claims]
        for key, _ in checked:
            if self._claim(key) is not None:
                raise AlreadyTrackedError(f"claim {key} already tracked in the snapshot")
        return checked

    def _write_new_claims(
        self, checked: list[tuple[str, KubeObject]], written: list[tuple[str, str]]
    ) -> None:
        for key, claim in checked:
            self._set_claim(key, claim)
            written.append((CLAIM_KIND, key))

    def _rollback(self, written: list[tuple[str, str]]) -> None:
        """Undo writes of keys that were absent (the store refused a later value as not JSON)."""
        for kind, key in reversed(written):
            self._store.delete(kind, key)

    def remove_pod_owned_claims(self, pod: KubeObject) -> None:
        """Drop the claims ``pod`` owns and its reservation on the others (a node removal).

        Owned claims (whose controller owner is the pod) are deleted; shared ones lose the pod's
        first reservation entry and keep their allocation. References that cannot be resolved
        and claims that are not tracked (or were deleted by an earlier reference of the same
        pod) are skipped. Never raises for missing claims.
        """
        for key, _ in self._pod_claims(pod, strict=False):
            current = self._claim(key)  # re-read: an earlier reference may have changed it
            if current is None:
                continue
            if is_for_pod(pod, current):
                self._delete_claim(key)
                continue
            updated = without_pod_reservation(current, pod)
            if updated is not current:
                self._set_claim(key, updated)

    def reserve_pod_claims(
        self, pod: KubeObject, allocations: Mapping[str, KubeObject] | None = None
    ) -> None:
        """Add ``pod`` to ``status.reservedFor`` of every claim it references.

        All or nothing: every claim is resolved and checked first. A claim already reserved
        for the pod's UID is left as is.

        ``allocations`` (claim key → the claim with its new ``status.allocation``, as the
        scheduler's Reserve step would store it) are stored in the same write as the
        reservation, so scheduling a pod writes each of its claims once. When the reservation
        is refused they are still stored, allocated but unreserved, as upstream's two separate
        calls would leave them.

        Raises:
            NotFoundError: as :meth:`pod_claims`.
            ReservationError: a claim already has 256 reservations and none for this pod.
        """
        pairs = self._pod_claims(pod, strict=True)
        pending = dict(allocations or {})
        for key, claim in pairs:
            if is_fully_reserved(claim) and not is_reserved_for_pod(pod, claim):
                for allocated_key, allocated_claim in pending.items():
                    self._set_claim(allocated_key, allocated_claim)
                raise ReservationError(
                    f"claim {key} already has max number of reservations set, can't add more"
                )
        for key, _ in pairs:
            allocated = pending.pop(key) if key in pending else None
            # Re-read, never the caller's or a stale object: the pod may name this claim twice.
            current = self._claim(key) if allocated is None else allocated
            assert current is not None  # resolved above; nothing here deletes claims
            updated = with_pod_reservation(current, pod)
            if allocated is not None or updated is not current:
                self._set_claim(key, updated)
        for key, left in pending.items():  # allocated, but not one of the pod's claims
            self._set_claim(key, left)

    def unreserve_pod_claims(self, pod: KubeObject) -> None:
        """Remove ``pod``'s reservation from every claim it references (an unschedule).

        A claim the pod owns, or one left without reservations, is also deallocated.
        All or nothing: every reference is resolved before anything changes.

        Raises:
            NotFoundError: as :meth:`pod_claims`.
        """
        pairs = self._pod_claims(pod, strict=True)
        for key, _ in pairs:
            current = self._claim(key)  # re-read: the pod may name this claim twice
            assert current is not None
            updated = without_pod_reservation(current, pod)
            if is_for_pod(pod, updated) or not is_in_use(updated):
                updated = deallocated(updated)
            if updated is not current:
                self._set_claim(key, updated)

    # -- slices ---------------------------------------------------------------------------------

    def local_slices(self, node_name: str) -> list[KubeObject]:
        """The node's local slices as stored, shared (read-only): ``[]`` without an entry.

        The same list object until the node's slices change, so per-list facts can be
        remembered by identity (``cluster.placement.slice_list_devices``).
        """
        slices: list[KubeObject] | None = self._store.get(SLICE_KIND, node_name)
        return slices or []

    def global_slices(self) -> list[KubeObject]:
        """The slices local to no node (``allNodes``, a node selector) as stored, shared
        (read-only) like `local_slices`: ``[]`` when there are none."""
        slices: list[KubeObject] | None = self._store.get(SLICE_KIND, NON_LOCAL_SLICES_KEY)
        return slices or []

    def node_resource_slices(self, node_name: str) -> list[KubeObject] | None:
        """A new list of the node's local slices, or None when the node has no entry.

        An entry may be an empty list (found, but no slices).
        """
        slices: list[KubeObject] | None = self._store.get(SLICE_KIND, node_name)
        return None if slices is None else list(slices)

    def add_node_resource_slices(self, node_name: str, slices: Iterable[KubeObject]) -> None:
        """Track the local slices of a node (e.g. a duplicated template node), in the top layer.

        Raises:
            AlreadyTrackedError: the node already has an entry (even an empty one).
            ObjectValidationError: an empty node name, or the reserved global key.
        """
        self._check_new_node(node_name)
        self._write_node_slices(node_name, list(slices), [])

    def add_global_resource_slices(self, slices: Iterable[KubeObject]) -> None:
        """Track the non-node-local slices (``allNodes`` or ``nodeSelector``), in the top layer.

        Raises:
            AlreadyTrackedError: global slices are already tracked.
        """
        if self._store.get(SLICE_KIND, NON_LOCAL_SLICES_KEY) is not None:
            raise AlreadyTrackedError("non-node-local ResourceSlices already present")
        self._write_node_slices(NON_LOCAL_SLICES_KEY, list(slices), [])

    def _check_new_node(self, node_name: str) -> None:
        if not isinstance(node_name, str) or not node_name or node_name == NON_LOCAL_SLICES_KEY:
            raise ObjectValidationError(
                f"invalid node name {node_name!r} for ResourceSlices", kind="Node"
            )
        if self._store.get(SLICE_KIND, node_name) is not None:
            raise AlreadyTrackedError(f"node {go_quote(node_name)} ResourceSlices already present")

    def _write_node_slices(
        self, key: str, slices: list[KubeObject], written: list[tuple[str, str]]
    ) -> None:
        self._store.put(SLICE_KIND, key, slices)
        written.append((SLICE_KIND, key))

    def remove_node_resource_slices(self, node_name: str) -> None:
        """Forget a node's local slices; a no-op when it has none."""
        if node_name == NON_LOCAL_SLICES_KEY:
            raise ObjectValidationError(
                f"invalid node name {node_name!r} for ResourceSlices", kind="Node"
            )
        if self._store.get(SLICE_KIND, node_name) is None:
            return
        self._store.delete(SLICE_KIND, node_name)

    # -- classes -------------------------------------------------------------------------------

    def add_device_classes(self, classes: Iterable[KubeObject]) -> None:
        """Track device classes, in the top layer. All or nothing.

        Raises:
            AlreadyTrackedError: a class with the same name is already tracked.
            ObjectValidationError: a class without ``metadata.name``.
        """
        self._add_named(CLASS_KIND, classes)

    # -- device taint rules ----------------------------------------------------------------------

    def add_device_taint_rules(self, rules: Iterable[KubeObject]) -> None:
        """Track DeviceTaintRules, in the top layer: their taints apply to the devices they
        select whenever devices are allocated (the scheduler's DRA plugin). All or nothing.

        Raises:
            AlreadyTrackedError: a rule with the same name is already tracked.
            ObjectValidationError: a rule without ``metadata.name``.
        """
        self._add_named(TAINT_RULE_KIND, rules)

    # -- cluster-scoped objects stored by name (classes, taint rules) -----------------------------

    def _add_named(self, kind: str, objects: Iterable[KubeObject]) -> None:
        checked = self._check_new_named(kind, objects)
        written: list[tuple[str, str]] = []
        try:
            self._write_named(kind, checked, written)
        except Exception:
            self._rollback(written)
            raise

    def _check_new_named(self, kind: str, objects: Iterable[KubeObject]) -> dict[str, KubeObject]:
        checked: dict[str, KubeObject] = {}
        for obj in objects:
            name = (obj.get("metadata") or {}).get("name")
            if not isinstance(name, str) or not name:
                raise ObjectValidationError(
                    f"{object_label(obj)}: metadata.name must be a non-empty string",
                    kind=kind,
                    field="metadata.name",
                )
            if self._store.get(kind, name) is not None:
                raise AlreadyTrackedError(
                    f"{kind} {go_quote(name)} already tracked in the snapshot"
                )
            checked[name] = obj  # a repeated name: the last one wins
        return checked

    def _write_named(
        self, kind: str, checked: dict[str, KubeObject], written: list[tuple[str, str]]
    ) -> None:
        for name, obj in checked.items():
            self._store.put(kind, name, obj)
            written.append((kind, name))
