"""``ClusterSnapshot``: nodes and pods next to the DRA snapshot, on one store.

Store kinds added to the DRA ones: ``Node`` (key: node name; value: the Node) and ``Pod`` (key:
``namespace/name``; value: the Pod with ``spec.nodeName`` set: only scheduled pods are held, as
in cluster-autoscaler's snapshot). Fork, Commit and Revert go through the DRA snapshot, so every
kind moves in lock-step.

In memory only: which pods are on which node and what they request there (read by every fit
check), a follower of the store (:mod:`snapshot.cluster.pod_index`) like the DRA snapshot's
indexes, so
it stays right whatever forks, commits or reverts the store.

Scheduling a pod (``schedule_pod``) follows PredicateSnapshot.SchedulePod: the pod must pass
kube-scheduler's filters on the node (``snapshot.scheduling``: the snapshot is their
``ClusterView``, and through ``_Manager`` the ``DraManager`` of the DynamicResources plugin, whose
logic is ``scheduling.plugins.dynamic_resources.DraFilter``): node name, selectors and
affinity, taints, unschedulable nodes, host ports, resource fit, topology spread, inter-pod
affinity; then DRA: the pod's claims must be tracked, those allocated already must be
available on the node, and its unallocated claims are allocated together on that node (the
structured allocator, with every allocated device excluded) and stored through
``signal_claim_pending_allocation``; then the pod is reserved on all its claims, every claim is
checked to be allocated and available on the node, and the pod is bound. Like upstream, there is
no rollback when the reservation step fails after allocating. Upstream:
``cluster-autoscaler/simulator/clustersnapshot/predicate/predicate_snapshot.go``.

``schedule_pod_anywhere`` skips, before running the filters, the nodes whose CPU, memory or pod
count is short and, for a pod needing a device, those without a free one: both are what the
filters would refuse, and this loop runs over every node (the per-node facts it reads are
kept by the follower of :mod:`snapshot.cluster.node_index`). A pod that no filter declares it
may refuse where it has room, tried on a node that no filter declares it may refuse pods on
(``scheduling.relevance``: today a pod asking for nothing but CPU, memory, the pod slot and
claims, on a node without taints or cordon, while no placed pod has required anti-affinity),
passes every filter but DynamicResources there: only that one runs, so the upstream presets
cost what they cost before the filters. What may be skipped is worked out from the plugin
list, never listed here: a filter added without a declaration sends every pod through the
filters. ``fit_error`` gives the scheduler's ``0/N nodes are available: ...`` answer for a pod
that fits nowhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from drasnap.snapshot.allocation.allocator import allocate
from drasnap.snapshot.allocation.explain import AllocationExplanation, explain_allocation
from drasnap.snapshot.cluster.node_index import NodeIndex
from drasnap.snapshot.cluster.placement import (
    PlacementIndex,
    PoolKey,
    free_in,
    shares_a_pool,
    slice_list_devices,
)
from drasnap.snapshot.cluster.placement import device_names as _device_names
from drasnap.snapshot.cluster.pod_index import NOTHING as _NOTHING
from drasnap.snapshot.cluster.pod_index import PodIndex
from drasnap.snapshot.controllers.claim_templates import node_name_of
from drasnap.snapshot.dra.snapshot import DraSnapshot
from drasnap.snapshot.errors import (
    AlreadyTrackedError,
    NotFoundError,
    ReservationError,
    SchedulingError,
)
from drasnap.snapshot.k8s.claims import DeviceID, is_allocated, with_pod_reservation
from drasnap.snapshot.k8s.features import allocator_features, resolve_feature_gates
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    NODE_KIND,
    POD_KIND,
    SLICE_KIND,
    key_of,
    namespaced_key,
)
from drasnap.snapshot.k8s.objects import KubeObject, name_of
from drasnap.snapshot.scheduling import (
    NAMESPACE_NAME_LABEL,
    DraFilter,
    DraState,
    DynamicResources,
    FitError,
    Placement,
    PodCycle,
    PreparedPod,
    Relevance,
    Requests,
    available_on,
    default_plugins,
    dra_extended_resource_classes,
    pod_facts,
    share_pod_facts,
)
from drasnap.snapshot.scheduling.extended_claims import (
    extended_claim_key,
    with_extended_claim_status,
    without_extended_claim_status,
)
from drasnap.store import Closing, Store, VersionedStore


@dataclass(frozen=True)
class Placed:
    """A placement ``schedule_pod_anywhere`` made, recorded to be made again by
    :meth:`ClusterSnapshot.place` on the same state (see :meth:`ClusterSnapshot.recording`)."""

    pod: str  # namespace/name
    node: str
    placement: Placement
    # When writing the pod bound was all the placement did (no claim, no extended resource):
    # the pod given and the pod written, to write again as it is when given the same pod.
    bound: tuple[KubeObject, KubeObject] | None = None


class ClusterSnapshot(Closing):
    """Nodes, pods and DRA objects on one versioned store, forked and reverted together.

    >>> from drasnap.store import MemoryStore
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
        """Wrap ``store``. ``features``: Kubernetes feature gates for the allocator and the
        scheduler's DRA support (unset gates take Kubernetes 1.36's defaults, see
        `snapshot.k8s.features`).

        Raises:
            FeatureGateError: an unknown gate.
        """
        gates = resolve_feature_gates(features)  # an unknown gate fails here, not at a pod
        self._features = allocator_features(gates)  # resolved once, for every allocation
        self._extended_resources = gates["DRAExtendedResource"]
        self.dra = DraSnapshot(store)
        self._store = store
        self._pods = PodIndex()
        self._pods.rebuild(store.items(POD_KIND))
        store.follow([POD_KIND], self._pods)
        self._dra_filter = DraFilter(_Manager(self))
        # A tuple: what the shortcuts skip is worked out from these plugins, once.
        self._plugins = tuple(default_plugins(self._dra_filter, self._dra_resource_names))
        # plan_moves and move skip every filter; schedule_pod_anywhere's shortcut runs
        # DynamicResources itself (DraFilter.plan), so a pod with claims may take it.
        self._plain = Relevance(self._plugins)
        self._shortcut = Relevance(self._plugins, run_by_caller={DynamicResources.name})
        self._nodes = NodeIndex(self._plain.restricted)
        self._nodes.rebuild(store.items(NODE_KIND), store.items(SLICE_KIND))
        store.follow([NODE_KIND, SLICE_KIND], self._nodes)
        self._placement = PlacementIndex(
            store,
            self._pods.requested,
            self._nodes.allocatable,
            self._nodes.slices,
            self.dra.resource_claims.allocated_by_pool,
        )
        self._pods.listener = self._placement.node_changed
        self._recorded: list[Placed] | None = None

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

    # -- the filters' ClusterView --------------------------------------------------------------

    def requested(self, name: str) -> Requests:
        """What the pods on node ``name`` request together (``NodeInfo.Requested``)."""
        return self._pods.requested.get(name, _NOTHING)

    def non_zero_requested(self, name: str) -> Requests:
        """The scoring plugins' requests of node ``name``'s pods (``NodeInfo.NonZeroRequested``),
        summed when first asked after its pods changed."""
        total = self._pods.non_zero.get(name)
        if total is None:
            total = _NOTHING
            for pod in self.pods_on_node(name):
                total = total + pod_facts(pod).placed_non_zero_requests
            self._pods.non_zero[name] = total
        return total

    def pods_with_required_anti_affinity(self) -> Iterable[tuple[KubeObject, str]]:
        if not self._pods.anti_affinity:
            return ()  # the usual case, read for every pod placed
        get = self._store.get
        return [
            (get(POD_KIND, key), node) for key, node in sorted(self._pods.anti_affinity.items())
        ]

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        # Namespace objects are not held: only the label the API server always sets is known
        # (pod_warnings names the selectors this leaves unmatched).
        return {NAMESPACE_NAME_LABEL: namespace}

    def _dra_resource_names(self) -> AbstractSet[str]:
        if not self._extended_resources:
            return frozenset()  # DRAExtendedResource off: no class provides a resource
        return dra_extended_resource_classes(self.dra.device_classes.list()).keys()

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
            self._put_pod(bound, key_of(bound))

    def update_node(self, node: KubeObject) -> None:
        """Replace a tracked node's object (a taint added, a label changed), its slices and
        pods kept; every index follows the store.

        Raises:
            NotFoundError: the node is not tracked.
        """
        name = name_of(node)
        if self._store.get(NODE_KIND, name) is None:
            raise NotFoundError(f"node {name!r} not found in the snapshot")
        self._store.put(NODE_KIND, name, node)

    def publish_slices(self, name: str, slices: Iterable[KubeObject]) -> None:
        """A tracked node's ResourceSlices published after the node (a DRA driver starting
        later than the kubelet).

        Raises:
            NotFoundError: the node is not tracked.
            AlreadyTrackedError: the node has slices already.
        """
        if self._store.get(NODE_KIND, name) is None:
            raise NotFoundError(f"node {name!r} not found in the snapshot")
        self.dra.add_node_resource_slices(name, list(slices))

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
            self._drop_extended_claim(pod)
            self._store.delete(POD_KIND, key_of(pod))
        self.dra.remove_node_resource_slices(name)
        self._store.delete(NODE_KIND, name)

    # -- pods ----------------------------------------------------------------------------------

    def schedule_pod(self, pod: KubeObject, node_name: str) -> None:
        """Place a pod on a node, allocating its unallocated claims there (SchedulePod).

        Raises:
            SchedulingError: the node is unknown, the pod is on a node already, or a filter
                refuses the node (the message gives the scheduler's reasons), or its claims
                cannot be reserved or used on that node.
            NotFoundError: the pod references a claim that is not tracked.
        """
        node: KubeObject | None = self._store.get(NODE_KIND, node_name)
        if node is None:
            raise SchedulingError(f"node {node_name!r} not found in the snapshot")
        key = key_of(pod)
        if key in self._pods.node_of:
            raise SchedulingError(f"pod {key} is already on node {self._pods.node_of[key][0]}")
        cycle, dra = self._cycle(pod)
        refused = cycle.filter(node_name)
        if refused is not None:
            raise SchedulingError(f"pod {key} does not fit on node {node_name}: {refused.message}")
        self._apply(pod, _placement_on(node, dra))

    def schedule_pod_anywhere(
        self, pod: KubeObject, nodes: Sequence[str] | None = None
    ) -> str | None:
        """Place the pod on the first node (in ``nodes`` order, else by name) where it fits.

        Returns the node's name, or None when it fits nowhere (nothing is written then;
        ``fit_error`` says why).

        Raises:
            NotFoundError: the pod references a claim that is not tracked.
        """
        facts = pod_facts(pod)
        if facts.key in self._pods.node_of:
            return None  # already on a node: placing it again is refused everywhere
        cycle: PodCycle | None = None
        dra: DraState | None = None
        # Nodes the filters would refuse for CPU, memory or pod count, or for want of a free
        # device, are skipped with the cheap checks first: this loop runs for every node, and
        # the filters run only on the nodes that pass them.
        want = facts.requests
        cpu, memory = want.cpu, want.memory
        allocatable_of = self._nodes.allocatable.get
        slices_of = self._nodes.slices.get
        used_on = self._pods.requested.get
        allocated = self.dra.resource_claims.allocated_by_pool()
        prepared = self._dra_filter.prepare_pod(pod) if facts.spec.get("resourceClaims") else None
        check_devices = prepared is not None and _no_free_global_device(self, prepared, allocated)
        # A pod no filter declares it can refuse where it has room (scheduling.relevance)
        # passes every filter on a node none declares it can refuse on, but DynamicResources:
        # only that one runs there, after the room check below.
        shortcut = self._shortcut
        plain = shortcut.pod_is_plain(facts) and shortcut.cluster_is_quiet(self)
        restricted = self._nodes.restricted
        if nodes is None:
            # Name order, with the nodes the cheap checks below refuse skipped block by block
            # (the same nodes, found without visiting each: snapshot.cluster.placement).
            names: Iterable[str] = self._placement.candidates(cpu, memory, check_devices)
        else:
            names = nodes
        for node_name in names:
            have = allocatable_of(node_name)
            if have is None:
                continue  # no such node
            # room_on, not fits_on: the scalars may be DRA's, the filters check them
            if not want.room_on(have, used_on(node_name, _NOTHING)):
                continue
            if check_devices:
                local = slices_of(node_name)
                if local is None:
                    continue  # no local slice and no free global device
                spread, pools = local
                if not spread and not free_in(pools, allocated):
                    continue
            if plain and node_name not in restricted:
                placement = self._dra_filter.plan(prepared, node_name) if prepared else None
                if isinstance(placement, tuple):
                    continue  # DynamicResources' refusal
                node: KubeObject = self._store.get(NODE_KIND, node_name)
                self._apply(pod, placement or Placement(node, []))
                return node_name
            if cycle is None:
                cycle, dra = self._cycle(pod, prepared)
            if cycle.filter(node_name) is None:
                node = self._store.get(NODE_KIND, node_name)
                self._apply(pod, _placement_on(node, dra))
                return node_name
        return None

    def plan_moves(self, pods: Sequence[KubeObject], leaving: str) -> tuple[bool, list[str] | None]:
        """Where :meth:`schedule_pod_anywhere` would put each of ``pods``, in order, once node
        ``leaving`` is gone and the pods before it are placed, found on the indexes without
        writing anything.

        Returns (True, their nodes) when all fit, (True, None) when one fits no node, and
        (False, None) when only the filters proper can say: a pod some filter declares it may
        refuse (claims, or any constraint but CPU, memory and a pod slot), a cluster that
        makes a filter matter for every pod (a placed pod with required anti-affinity), or a
        node some filter declares it may refuse pods on (tainted, cordoned) that passes the
        cheap checks (``scheduling.relevance``). The answer is ``schedule_pod_anywhere``'s,
        whose own shortcut for such pods is this arithmetic.
        """
        if not self._plain.cluster_is_quiet(self):
            return False, None
        restricted = self._nodes.restricted
        allocatable_of = self._nodes.allocatable.get
        used_on = self._pods.requested.get
        # What each node's pods request once the moves planned so far are made: one sum per
        # move, not one per node tried.
        planned: dict[str, Requests] = {}
        targets: list[str] = []
        for pod in pods:
            facts = pod_facts(pod)
            if not self._plain.pod_is_plain(facts, off_node=True):
                return False, None
            want = facts.requests
            cpu, memory = want.cpu, want.memory
            for name in self._placement.candidates(cpu, memory, False):
                have = allocatable_of(name)
                if have is None or name == leaving:
                    continue
                used = planned.get(name)
                if used is None:
                    used = used_on(name, _NOTHING)
                if not want.fits_on(have, used):
                    continue
                if name in restricted:
                    return False, None  # a filter may refuse pods there (taints, cordon)
                targets.append(name)
                planned[name] = used + facts.placed_requests
                break
            else:
                return True, None
        return True, targets

    def move(self, pod: KubeObject, node_name: str) -> None:
        """Place ``pod`` on ``node_name`` as :meth:`plan_moves` planned, without a search: a
        pending pod as :meth:`schedule_pod_anywhere` would write it there; a pod on another
        node in one write, which ends as :meth:`unschedule_pod` and then placing it would.

        Raises:
            NotFoundError: the node is not in the snapshot.
            SchedulingError: the pod is on a node and has claims or constraints (those leave
                through :meth:`unschedule_pod`).
        """
        node: KubeObject | None = self._store.get(NODE_KIND, node_name)
        if node is None:
            raise NotFoundError(f"node {node_name!r} not found in the snapshot")
        facts = pod_facts(pod)
        if facts.key in self._pods.node_of:
            if not self._plain.pod_is_plain(facts, off_node=True):
                raise SchedulingError(f"pod {facts.key} cannot move in one write: unschedule it")
            if self._recorded is None and "extendedResourceClaimStatus" not in (
                pod.get("status") or {}
            ):
                # Rebound straight to its new node: an unbound copy in between would live on
                # in the facts cache (snapshot.scheduling.view) long after the move.
                self._put_pod(_bound(pod, name_of(node)), facts.key)
                return
            # What unschedule_pod returns for such a pod: nothing else of it changes.
            pod = without_extended_claim_status(_unbound(pod))
        self._apply(pod, Placement(node, []))

    @contextmanager
    def recording(self) -> Iterator[list[Placed]]:
        """Record every placement made meanwhile, in order, into the list yielded.

        A recorded placement is the scheduler's decision for that pod on the state it was made
        on; :meth:`place` writes it again without searching, which is only right on that same
        state (the same objects, reached again by a revert): a simulation that tries an
        expansion, reverts it and then applies it uses this for the second time."""
        log: list[Placed] = []
        outer, self._recorded = self._recorded, log
        try:
            yield log
        finally:
            self._recorded = outer

    def place(self, pod: KubeObject, placed: Placed) -> None:
        """Write again a placement :meth:`recording` recorded, on the state it was made on.

        What could have changed is checked, cheaply: the pod is the one placed and is on no
        node, the node exists and has room for its CPU, memory and pod slot, and no device of
        its allocations is taken.

        Raises:
            SchedulingError: one of those does not hold (the state is not the one recorded).
        """
        key = key_of(pod)
        have = self._nodes.allocatable.get(placed.node)
        if key != placed.pod or key in self._pods.node_of or have is None:
            raise SchedulingError(f"pod {key}: its recorded placement on {placed.node} is stale")
        want = pod_facts(pod).requests
        used = self._pods.requested.get(placed.node, _NOTHING)
        taken = self.dra.resource_claims.allocated_devices_view()
        if not want.room_on(have, used) or any(
            (r.get("driver"), r.get("pool"), r.get("device")) in taken
            for _, allocation in placed.placement.allocations
            for r in (allocation.get("devices") or {}).get("results") or ()
        ):
            raise SchedulingError(f"pod {key}: its recorded placement on {placed.node} is stale")
        if placed.bound is not None and placed.bound[0] is pod:
            self._put_pod(placed.bound[1], key)  # what _apply would write, made once already
            return
        self._apply(pod, placed.placement)

    def feasible_nodes(self, pod: KubeObject, nodes: Sequence[str] | None = None) -> list[str]:
        """The nodes (in ``nodes`` order, else by name) where every filter passes ``pod``:
        the nodes kube-scheduler would score. One scheduling attempt, nothing written.

        Raises:
            SchedulingError: the pod is on a node already.
            NotFoundError: a node of ``nodes`` is unknown, or the pod references a claim that
                is not tracked.
        """
        key = key_of(pod)
        if key in self._pods.node_of:
            raise SchedulingError(f"pod {key} is already on node {self._pods.node_of[key][0]}")
        cycle, _ = self._cycle(pod)
        names = self.node_names() if nodes is None else nodes
        return [name for name in names if cycle.filter(name) is None]

    def fit_error(self, pod: KubeObject, nodes: Sequence[str] | None = None) -> FitError:
        """Why the pod fits none of ``nodes`` (every node by default), in kube-scheduler's
        words: ``0/N nodes are available: ...`` and the reason of each node.

        Raises:
            SchedulingError: the pod fits one of the nodes.
            NotFoundError: the pod references a claim that is not tracked.
        """
        cycle, _ = self._cycle(pod)
        return cycle.fit_error(nodes)

    def unschedule_pod(self, namespace: str, name: str) -> KubeObject:
        """Take a pod off its node: its reservations go, its own claims are deallocated, and
        shared claims are deallocated when no other pod holds them. Returns the pod as it was
        before it was bound (no ``spec.nodeName``), for rescheduling.

        Raises:
            NotFoundError: the pod is not on any node.
        """
        key = namespaced_key(namespace, name)
        pod: KubeObject | None = self._store.get(POD_KIND, key)
        where = self._pods.node_of.get(key)
        if pod is None or where is None:
            raise NotFoundError(f"pod {key} not found on any node")
        if (pod.get("spec") or {}).get("resourceClaims"):
            self.dra.unreserve_pod_claims(pod)
        self._drop_extended_claim(pod)
        self._store.delete(POD_KIND, key)
        return without_extended_claim_status(_unbound(pod))

    # -- internals -----------------------------------------------------------------------------

    def _drop_extended_claim(self, pod: KubeObject) -> None:
        """The scheduler's extended-resource claim goes with the pod's binding: a new one is
        made when it is placed again."""
        key = extended_claim_key(pod)
        if key is not None and self._store.get(CLAIM_KIND, key) is not None:
            self._store.delete(CLAIM_KIND, key)

    def _put_pod(self, pod: KubeObject, key: str) -> None:
        """Write ``pod`` under ``key``, its `key_of`: every caller has it already (a pod is
        written once per placement, and the key is read from its metadata each time)."""
        self._store.put(POD_KIND, key, pod)

    def _cycle(
        self, pod: KubeObject, prepared: PreparedPod | None = None
    ) -> tuple[PodCycle, DraState | None]:
        """A scheduling attempt of ``pod`` on the cluster as it is, and its DRA state (None
        when the pod uses no DRA), which keeps the allocation found on each node it fits.
        ``prepared``: the pod's claims as PreFilter found them just now, not redone."""
        self._dra_filter.last = None
        self._dra_filter.ready = prepared
        try:
            cycle = PodCycle(self._plugins, pod, self)
        finally:
            self._dra_filter.ready = None
        return cycle, self._dra_filter.last

    def explain_devices(self, pod: KubeObject, node_name: str) -> AllocationExplanation | None:
        """Why ``pod``'s claims do (not) fit ``node_name``'s devices, device by device
        (`snapshot.allocation.explain`), on the same inputs as the scheduler's DRA filter; None
        when the pod has no claim left to allocate.

        Raises:
            NotFoundError: the pod references a claim that is not tracked, or the node is not
                in the snapshot.
            AllocationError: as the allocator raises it for the pod's claims.
        """
        node: KubeObject | None = self._store.get(NODE_KIND, node_name)
        if node is None:
            raise NotFoundError(f"node {node_name!r} is not in the cluster")
        prepared = self._dra_filter.on_node(self._dra_filter.prepare_pod(pod), node)
        if not prepared.pending:
            return None
        dedicated, shares, consumed = self._allocated_state()
        owners: dict[tuple[str, str, str], list[str]] = {}
        for key, claim in sorted(self._store.items(CLAIM_KIND).items()):
            allocation = (claim.get("status") or {}).get("allocation") or {}
            for result in (allocation.get("devices") or {}).get("results") or ():
                device = (
                    str(result.get("driver")),
                    str(result.get("pool")),
                    str(result.get("device")),
                )
                owners.setdefault(device, []).append(key)
        return explain_allocation(
            node,
            list(prepared.pending.values()),
            classes=self.dra.device_classes.list(),
            slices=self._slices_for(node_name),
            allocated_devices=dedicated,
            allocated_shared_devices=shares,
            allocated_capacity=consumed,
            features=self._features,
            device_taint_rules=self.dra.device_taint_rules.list(),
            owners=owners,
        )

    def _allocated_state(
        self,
    ) -> tuple[AbstractSet[DeviceID], Sequence[Any], Sequence[Any]]:
        """What the allocator must leave alone: devices held whole, shares of devices, and
        the capacity those shares consume."""
        claims = self.dra.resource_claims
        shares, consumed = claims.allocated_shares()
        dedicated: AbstractSet[DeviceID] = claims.allocated_devices_view()
        if shares and not self._features.consumable_capacity:
            # Gate off: upstream's GatherAllocatedState counts every share as dedicated.
            return dedicated | {share[:3] for share in shares}, (), ()
        return dedicated, shares, consumed

    def _apply(self, pod: KubeObject, placement: Placement) -> None:
        node_name = name_of(placement.node)
        key = key_of(pod)  # the bound pod's too
        if self._recorded is not None:
            plain = not placement.allocations and placement.extended is None
            if plain and not (pod.get("spec") or {}).get("resourceClaims"):
                bound = _bound(pod, node_name)
                self._recorded.append(Placed(key, node_name, placement, (pod, bound)))
                self._put_pod(bound, key)
                return
            self._recorded.append(Placed(key, node_name, placement))
        allocated: dict[str, KubeObject] = {}
        for claim, allocation in placement.allocations:
            status = dict(claim.get("status") or {})
            status["allocation"] = allocation
            allocated[key_of(claim)] = {**claim, "status": status}
        bound = _bound(pod, node_name)
        if placement.extended is not None:
            # PreBind creates the extended-resource claim, allocated and reserved for the pod,
            # and records it in the pod's status.
            claim, requests = placement.extended
            made = allocated.pop(key_of(claim))
            self.dra.add_claims([with_pod_reservation(made, bound)])
            bound = with_extended_claim_status(bound, claim, requests)
        if (pod.get("spec") or {}).get("resourceClaims"):
            try:
                # Upstream's Reserve (store the allocation) and PreBind (reserve the claim for
                # the pod) as one write per claim: half the writes, and one journal row each.
                self.dra.reserve_pod_claims(bound, allocated)
            except ReservationError as exc:
                raise SchedulingError(str(exc)) from exc  # allocations stay: upstream's TODO
            self._verify_claims(bound, placement.node)
        self._put_pod(bound, key)

    def _verify_claims(self, pod: KubeObject, node: KubeObject) -> None:
        node_name = name_of(node)
        labels = (node.get("metadata") or {}).get("labels") or {}
        for claim in self.dra.pod_claims(pod):
            allocated = is_allocated(claim)
            available = allocated and available_on(claim, node_name, labels)
            if not available:
                raise SchedulingError(
                    f"pod {key_of(pod)} needs claim {key_of(claim)} to schedule, but it isn't "
                    f"available on node {node_name} (allocated: {str(allocated).lower()}, "
                    f"available: {str(available).lower()})"
                )

    def _slices_for(self, node_name: str) -> list[KubeObject]:
        """The slices the allocator sees for ``node_name``: its own and the global ones, or
        every slice when one of its pools spreads over nodes or has global slices too."""
        local = self.dra.local_slices(node_name)
        spread, pools = slice_list_devices(local) if local else (False, ())
        if spread:
            # A pool spread over nodes: completeness needs every slice.
            return self.dra.resource_slices.list()
        global_slices = self.dra.global_slices()
        if not global_slices:
            return list(local)
        if pools and shares_a_pool(pools, slice_list_devices(global_slices)[1]):
            return self.dra.resource_slices.list()  # a local pool with global slices too
        return [*local, *global_slices]


class _Manager:
    """The cluster snapshot as the DynamicResources plugin reads it (its ``DraManager``): the
    DRA snapshot's listers, and the allocator with the state the cluster's claims leave."""

    def __init__(self, cluster: ClusterSnapshot) -> None:
        self.cluster = cluster

    def node(self, name: str) -> KubeObject | None:
        return self.cluster.node(name)

    def pod_claims(self, pod: KubeObject) -> list[KubeObject]:
        return self.cluster.dra.pod_claims(pod)

    def device_classes(self) -> list[KubeObject]:
        return self.cluster.dra.device_classes.list()

    def slices_for(self, node_name: str) -> list[KubeObject]:
        return self.cluster._slices_for(node_name)

    def any_free_device(self, slices: list[KubeObject]) -> bool:
        allocated = self.cluster.dra.resource_claims.allocated_by_pool()
        return free_in(map(_device_names, slices), allocated)

    def allocate(
        self, node: KubeObject, claims: list[KubeObject], slices: list[KubeObject]
    ) -> list[dict[str, Any]] | None:
        cluster = self.cluster
        dedicated, shares, consumed = cluster._allocated_state()
        return allocate(
            node,
            claims,
            classes=cluster.dra.device_classes.list(),
            slices=slices,
            allocated_devices=dedicated,
            allocated_shared_devices=shares,
            allocated_capacity=consumed,
            features=cluster._features,
            device_taint_rules=cluster.dra.device_taint_rules.list(),
        )


def _placement_on(node: KubeObject, dra: DraState | None) -> Placement:
    """What the filters found for the pod on ``node``, which they let it onto."""
    if dra is None:
        return Placement(node, [])
    return dra.placements[name_of(node)]


def _no_free_global_device(
    cluster: ClusterSnapshot, pod: PreparedPod, allocated: Mapping[PoolKey, AbstractSet[str]]
) -> bool:
    """Whether the pod needs a free device that the global slices cannot give: then only
    nodes with a free local device are worth filtering."""
    if not pod.needs_free_device:
        return False
    global_slices = cluster.dra.global_slices()
    return not (global_slices and free_in(slice_list_devices(global_slices)[1], allocated))


def _bound(pod: KubeObject, node_name: str) -> KubeObject:
    bound = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node_name}}
    share_pod_facts(pod, bound)
    return bound


def _unbound(pod: KubeObject) -> KubeObject:
    spec = dict(pod.get("spec") or {})
    spec.pop("nodeName", None)
    unbound = {**pod, "spec": spec}
    share_pod_facts(pod, unbound)
    return unbound
