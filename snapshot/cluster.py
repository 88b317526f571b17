"""``ClusterSnapshot``: nodes and pods next to the DRA snapshot, on one store.

Store kinds added to the DRA ones: ``Node`` (key: node name; value: the Node) and ``Pod`` (key:
``namespace/name``; value: the Pod with ``spec.nodeName`` set: only scheduled pods are held, as
in cluster-autoscaler's snapshot). Fork, Commit and Revert go through the DRA snapshot, so every
kind moves in lock-step.

In memory only: which pods are on which node (read by every fit check), a follower of the store
(:mod:`snapshot.pod_index`) like the DRA snapshot's indexes, so it stays right whatever forks,
commits or reverts the store.

Scheduling a pod (``schedule_pod``) follows PredicateSnapshot.SchedulePod: the pod's claims
must be tracked; its CPU, memory and pod-count requests must fit the node's allocatable minus
the pods already there; its unallocated claims are allocated together on that node (the
structured allocator, with every allocated device excluded) and stored through
``signal_claim_pending_allocation``; then the pod is reserved on all its claims, every claim is
checked to be allocated and available on the node, and the pod is bound. Like upstream, there is
no rollback when the reservation step fails after allocating. Upstream:
``cluster-autoscaler/simulator/clustersnapshot/predicate/predicate_snapshot.go``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from snapshot.allocator import allocate
from snapshot.claims import DeviceID, is_allocated
from snapshot.dra import DraSnapshot
from snapshot.errors import (
    AlreadyTrackedError,
    NotFoundError,
    ReservationError,
    SchedulingError,
)
from snapshot.features import allocator_features, resolve_feature_gates
from snapshot.kinds import (
    NODE_KIND,
    NON_LOCAL_SLICES_KEY,
    POD_KIND,
    SLICE_KIND,
    key_of,
    namespaced_key,
)
from snapshot.node_selectors import node_selector_matches
from snapshot.objects import KubeObject, name_of
from snapshot.placement import (
    PlacementIndex,
    device_names,
    free_in,
    shares_a_pool,
    slice_list_devices,
)
from snapshot.placement import allocatable as _allocatable
from snapshot.pod_index import NOTHING as _NOTHING
from snapshot.pod_index import PodIndex
from snapshot.pods import Resources, node_name_of, pod_requests
from store import Store, VersionedStore


@dataclass
class _Pod:
    """A pod about to be placed: what every node it is tried on needs to know."""

    key: str
    requests: Resources
    allocated: list[KubeObject]  # its claims that are allocated already
    pending: dict[str, KubeObject]  # its claims to allocate, by key
    needs_free_device: bool


@dataclass
class _Placement:
    """What scheduling a pod on a node will write, computed before anything is written."""

    node: KubeObject
    allocations: list[tuple[KubeObject, dict[str, Any]]]  # (claim, status.allocation)


class ClusterSnapshot:
    """Nodes, pods and DRA objects on one versioned store, forked and reverted together.

    >>> from store import MemoryStore
    >>> cs = ClusterSnapshot(MemoryStore())
    >>> cs.add_node({"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1"}}})
    >>> cs.fork("try")
    1
    >>> cs.remove_node("n1")
    >>> cs.node("n1") is None
    True
    >>> cs.revert()
    0
    >>> cs.node_names()
    ['n1']
    """

    def __init__(
        self, store: VersionedStore, *, features: Mapping[str, bool] | None = None
    ) -> None:
        """Wrap ``store``. ``features``: Kubernetes feature gates for the allocator (unset
        gates take Kubernetes 1.36's defaults, see `snapshot.features`).

        Raises:
            FeatureGateError: an unknown gate.
        """
        allocator_features(features)  # an unknown gate fails here, not at the first pod
        # The defaults are passed as None: the allocator's fast path, with the same answer.
        self._features = (
            dict(features) if features and resolve_feature_gates(features) != _DEFAULTS else None
        )
        self.dra = DraSnapshot(store)
        self._store = store
        self._pods = PodIndex()
        self._pods.rebuild(store.items(POD_KIND))
        store.follow([POD_KIND], self._pods)
        self._placement = PlacementIndex(
            store, self._pods.used, self.dra.resource_claims.allocated_by_pool
        )
        self._pods.listener = self._placement.node_changed

    @classmethod
    def open(
        cls, target: str | os.PathLike[str] = "drasnap.db", *, name: str = "default", **options: Any
    ) -> ClusterSnapshot:
        """A cluster snapshot on the durable store ``name`` in ``target`` (see Store.open)."""
        return cls(Store.open(target, name=name, **options))

    @property
    def store(self) -> VersionedStore:
        return self._store

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> ClusterSnapshot:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- layers --------------------------------------------------------------------------------

    @property
    def depth(self) -> int:
        return self._store.depth

    def fork(self, label: str | None = None) -> int:
        """Fork every kind; returns the new depth."""
        return self._store.fork(label)

    def commit(self) -> int:
        """Merge the top layer into the one below (a no-op at the base)."""
        return self._store.commit()

    def revert(self) -> int:
        """Drop the top layer (a no-op at the base)."""
        return self._store.revert()

    # -- reads ---------------------------------------------------------------------------------

    def node(self, name: str) -> KubeObject | None:
        node: KubeObject | None = self._store.get(NODE_KIND, name)
        return node

    def node_names(self) -> list[str]:
        """Every node's name, sorted. O(nodes), from the placement index (no sort)."""
        return self._placement.names()

    def pod(self, namespace: str, name: str) -> KubeObject | None:
        pod: KubeObject | None = self._store.get(POD_KIND, namespaced_key(namespace, name))
        return pod

    def pods_on_node(self, node_name: str) -> list[KubeObject]:
        """The pods bound to the node, by ``namespace/name``.

        A fixed order, not the order of placement: a run resumed from a checkpoint (whose
        index is rebuilt from the store) must make the same choices as one never interrupted.
        """
        keys = sorted(self._pods.by_node.get(node_name, ()))
        return [self._store.get(POD_KIND, key) for key in keys]

    def pod_count(self) -> int:
        return self._store.count(POD_KIND)

    def free_resources(self, node: KubeObject) -> Resources:
        """The node's allocatable minus what the pods on it request."""
        return _allocatable(node) - self._pods.used.get(name_of(node), _NOTHING)

    # -- nodes ---------------------------------------------------------------------------------

    def add_node(
        self,
        node: KubeObject,
        *,
        slices: Iterable[KubeObject] = (),
        pods: Iterable[KubeObject] = (),
        claims: Iterable[KubeObject] = (),
    ) -> None:
        """Add a node with its local slices and the pods already running on it (AddNodeInfo).

        ``claims`` are the pods' own (pod-owned) claims, allocated, to track; shared claims must
        already be tracked. Each pod is reserved on its claims, which must be allocated and
        available on the node. Not transactional on error, as upstream (``predicate_snapshot.go``).

        Raises:
            AlreadyTrackedError: the node, its slices or a claim is already tracked.
            NotFoundError: a pod references a claim that is not tracked.
            SchedulingError: a pod's claim is not allocated or not available on the node.
        """
        name = name_of(node)
        if self._store.get(NODE_KIND, name) is not None:
            raise AlreadyTrackedError(f"node {name!r} already tracked in the snapshot")
        slices = list(slices)
        if slices:
            try:
                self.dra.add_node_resource_slices(name, slices)
            except AlreadyTrackedError as exc:
                raise AlreadyTrackedError(
                    f"couldn't add ResourceSlices to DRA snapshot: {exc}"
                ) from exc
        claims = list(claims)
        if claims:
            self.dra.add_claims(claims)
        placed: list[KubeObject] = []
        for pod in pods:
            bound = pod if node_name_of(pod) == name else _bound(pod, name)
            if (pod.get("spec") or {}).get("resourceClaims"):
                try:
                    self.dra.reserve_pod_claims(bound)
                except ReservationError as exc:
                    raise SchedulingError(
                        f"couldn't add pod {key_of(pod)} reservations to claims, this shouldn't "
                        f"happen: {exc}"
                    ) from exc
                self._verify_claims(bound, node)
            placed.append(bound)
        # The node and its pods go in last, as upstream stores the NodeInfo after the DRA steps:
        # an error above leaves the DRA changes (no rollback) but not the node.
        self._store.put(NODE_KIND, name, node)
        for bound in placed:
            self._put_pod(bound)

    def remove_node(self, name: str) -> None:
        """Remove a node, its slices, its pods and their own claims (RemoveNodeInfo).

        Shared claims stay allocated, without the removed pods' reservations.

        Raises:
            NotFoundError: the node is not tracked.
        """
        if self._store.get(NODE_KIND, name) is None:
            raise NotFoundError(f"node {name!r} not found in the snapshot")
        for pod in self.pods_on_node(name):
            self.dra.remove_pod_owned_claims(pod)
            self._store.delete(POD_KIND, key_of(pod))
        self.dra.remove_node_resource_slices(name)
        self._store.delete(NODE_KIND, name)

    # -- pods ----------------------------------------------------------------------------------

    def schedule_pod(self, pod: KubeObject, node_name: str) -> None:
        """Place a pod on a node, allocating its unallocated claims there (SchedulePod).

        Raises:
            SchedulingError: the node is unknown, the pod does not fit, or its claims cannot be
                allocated, reserved or used on that node (the message says which).
            NotFoundError: the pod references a claim that is not tracked.
        """
        placement = self._plan(self._prepare(pod), node_name)
        if isinstance(placement, str):
            raise SchedulingError(placement)
        self._apply(pod, placement)

    def schedule_pod_anywhere(
        self, pod: KubeObject, nodes: Sequence[str] | None = None
    ) -> str | None:
        """Place the pod on the first node (in ``nodes`` order, else by name) where it fits.

        Returns the node's name, or None when it fits nowhere (nothing is written then).

        Raises:
            NotFoundError: the pod references a claim that is not tracked.
        """
        prepared = self._prepare(pod)
        if prepared.key in self._pods.node_of:
            return None  # already on a node: placing it again is refused everywhere
        # Nodes _plan would refuse for resources or for want of a free device are skipped with
        # the cheap checks first: this loop runs for every node of the cluster.
        want = prepared.requests
        get = self._store.get
        used_on = self._pods.used.get
        allocated = self.dra.resource_claims.allocated_by_pool()
        global_slices = get(SLICE_KIND, NON_LOCAL_SLICES_KEY)
        check_devices = prepared.needs_free_device and not (
            global_slices and free_in(slice_list_devices(global_slices)[1], allocated)
        )
        if nodes is None:
            # Name order, the nodes the checks below would skip skipped by block (the same
            # nodes, found without visiting each: snapshot.placement).
            for node_name in self._placement.candidates(want, check_devices):
                placement = self._plan(prepared, node_name)
                if not isinstance(placement, str):
                    self._apply(pod, placement)
                    return node_name
            return None
        for node_name in nodes:
            node: KubeObject | None = get(NODE_KIND, node_name)
            if node is None:
                continue
            if not want.fits_beside(used_on(node_name, _NOTHING), _allocatable(node)):
                continue
            if check_devices:
                local = get(SLICE_KIND, node_name)
                if not local:
                    continue  # no local slice and no free global device
                spread, pools = slice_list_devices(local)
                if not spread and not free_in(pools, allocated):
                    continue
            placement = self._plan(prepared, node_name)
            if not isinstance(placement, str):
                self._apply(pod, placement)
                return node_name
        return None

    def unschedule_pod(self, namespace: str, name: str) -> KubeObject:
        """Take a pod off its node: its reservations go, its own claims are deallocated, and
        shared claims are deallocated when no other pod holds them. Returns the pod as it was
        before it was bound (no ``spec.nodeName``), for rescheduling.

        Raises:
            NotFoundError: the pod is not on any node.
        """
        key = f"{namespace}/{name}"
        pod: KubeObject | None = self._store.get(POD_KIND, key)
        where = self._pods.node_of.get(key)
        if pod is None or where is None:
            raise NotFoundError(f"pod {key} not found on any node")
        if (pod.get("spec") or {}).get("resourceClaims"):
            self.dra.unreserve_pod_claims(pod)
        self._store.delete(POD_KIND, key)
        return _unbound(pod)

    # -- internals -----------------------------------------------------------------------------

    def _put_pod(self, pod: KubeObject) -> None:
        self._store.put(POD_KIND, key_of(pod), pod)

    def _prepare(self, pod: KubeObject) -> _Pod:
        """What placing ``pod`` needs, whatever the node: worked out once per pod.

        Raises:
            NotFoundError: the pod references a claim that is not tracked.
        """
        claims: list[KubeObject] = []
        if (pod.get("spec") or {}).get("resourceClaims"):
            claims = self.dra.pod_claims(pod)  # a missing claim fails on every node
        pending: dict[str, KubeObject] = {}
        allocated: list[KubeObject] = []
        for claim in claims:
            if is_allocated(claim):
                allocated.append(claim)
            else:
                pending.setdefault(key_of(claim), claim)
        return _Pod(
            key_of(pod),
            pod_requests(pod),
            allocated,
            pending,
            bool(pending) and _needs_free_device(pending.values()),
        )

    def _plan(self, pod: _Pod, node_name: str) -> _Placement | str:
        """The writes that would schedule the pod on ``node_name``, or why it cannot go there."""
        node: KubeObject | None = self._store.get(NODE_KIND, node_name)
        if node is None:
            return f"node {node_name!r} not found in the snapshot"
        key = pod.key
        if key in self._pods.node_of:
            return f"pod {key} is already on node {self._pods.node_of[key][0]}"
        want = pod.requests
        alloc = _allocatable(node)
        used = self._pods.used.get(node_name, _NOTHING)
        if not want.fits_beside(used, alloc):
            free = alloc - used
            short = [
                what
                for what, need, have in (
                    ("cpu", want.cpu, free.cpu),
                    ("memory", want.memory, free.memory),
                    ("pods", want.pods, free.pods),
                )
                if need > have
            ]
            return f"pod {key} does not fit on node {node_name}: insufficient {', '.join(short)}"
        labels = (node.get("metadata") or {}).get("labels") or {}
        for claim in pod.allocated:
            if not _available_on(claim, node_name, labels):
                return (
                    f"pod {key} needs claim {key_of(claim)} to schedule, but it is allocated "
                    f"to another node than {node_name}"
                )
        if not pod.pending:
            return _Placement(node, [])
        slices = self._slices_for(node_name)
        allocated = self.dra.resource_claims.allocated_by_pool()
        if pod.needs_free_device and not free_in(map(device_names, slices), allocated):
            return f"no free device on node {node_name} for pod {key}'s claims"
        claims = self.dra.resource_claims
        shares, consumed = claims.allocated_shares()
        dedicated: AbstractSet[DeviceID] = claims.allocated_devices_view()
        if shares and self._features and not self._features.get("DRAConsumableCapacity", True):
            # Gate off: upstream's GatherAllocatedState counts every share as dedicated.
            dedicated = dedicated | {share[:3] for share in shares}
            shares, consumed = (), ()
        results = allocate(
            node,
            list(pod.pending.values()),
            classes=self.dra.device_classes.list(),
            slices=slices,
            allocated_devices=dedicated,
            allocated_shared_devices=shares,
            allocated_capacity=consumed,
            features=self._features,
            device_taint_rules=self.dra.device_taint_rules.list(),
        )
        if results is None:
            return f"cannot allocate the devices of pod {key}'s claims on node {node_name}"
        return _Placement(node, list(zip(pod.pending.values(), results, strict=True)))

    def _apply(self, pod: KubeObject, placement: _Placement) -> None:
        node_name = name_of(placement.node)
        allocated: dict[str, KubeObject] = {}
        for claim, allocation in placement.allocations:
            status = dict(claim.get("status") or {})
            status["allocation"] = allocation
            allocated[key_of(claim)] = {**claim, "status": status}
        bound = _bound(pod, node_name)
        if (pod.get("spec") or {}).get("resourceClaims"):
            try:
                # Upstream's Reserve (store the allocation) and PreBind (reserve the claim for
                # the pod) as one write per claim: half the writes, and one journal row each.
                self.dra.reserve_pod_claims(bound, allocated)
            except ReservationError as exc:
                raise SchedulingError(str(exc)) from exc  # allocations stay: upstream's TODO
            self._verify_claims(bound, placement.node)
        self._put_pod(bound)

    def _verify_claims(self, pod: KubeObject, node: KubeObject) -> None:
        node_name = name_of(node)
        labels = (node.get("metadata") or {}).get("labels") or {}
        for claim in self.dra.pod_claims(pod):
            allocated = is_allocated(claim)
            available = allocated and _available_on(claim, node_name, labels)
            if not available:
                raise SchedulingError(
                    f"pod {key_of(pod)} needs claim {key_of(claim)} to schedule, but it isn't "
                    f"available on node {node_name} (allocated: {str(allocated).lower()}, "
                    f"available: {str(available).lower()})"
                )

    def _slices_for(self, node_name: str) -> list[KubeObject]:
        local: list[KubeObject] = self._store.get(SLICE_KIND, node_name) or []
        spread, pools = slice_list_devices(local) if local else (False, ())
        if spread:
            # A pool spread over nodes: completeness needs every slice.
            return self.dra.resource_slices.list()
        global_slices: list[KubeObject] | None = self._store.get(SLICE_KIND, NON_LOCAL_SLICES_KEY)
        if not global_slices:
            return list(local)
        if pools and shares_a_pool(pools, slice_list_devices(global_slices)[1]):
            return self.dra.resource_slices.list()  # a local pool with global slices too
        return [*local, *global_slices]

    # -- read-only additions (the autoscale scenario) ------------------------------------------

    def placement_failure(self, pod: KubeObject, node_name: str) -> str | None:
        """Why ``pod`` cannot be scheduled on ``node_name`` now (``schedule_pod``'s message),
        or None when it can. Nothing is written.

        Raises:
            NotFoundError: the pod references a claim that is not tracked.
        """
        placement = self._plan(self._prepare(pod), node_name)
        return placement if isinstance(placement, str) else None


_DEFAULTS = resolve_feature_gates()


def _needs_free_device(claims: Iterable[KubeObject]) -> bool:
    """Does some request need a device nobody holds (any request without adminAccess)?

    A quick no on a node whose devices are all in use, before running the allocator.
    """
    for claim in claims:
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            exactly = request.get("exactly")
            if exactly is not None and not exactly.get("adminAccess"):
                return True
    return False


def _available_on(claim: KubeObject, node_name: str, labels: Mapping[str, str]) -> bool:
    selector = ((claim.get("status") or {}).get("allocation") or {}).get("nodeSelector")
    return selector is None or node_selector_matches(selector, node_name, labels)


def _bound(pod: KubeObject, node_name: str) -> KubeObject:
    return {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node_name}}


def _unbound(pod: KubeObject) -> KubeObject:
    spec = dict(pod.get("spec") or {})
    spec.pop("nodeName", None)
    return {**pod, "spec": spec}
