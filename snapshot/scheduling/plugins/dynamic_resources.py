"""DynamicResources: the DRA scheduler plugin, whole, with its upstream reasons.

The framework's plugin runs through a `DraBackend`, which gives:

- ``prepare(pod, fit)``: PreFilter. ``fit`` is NodeResourcesFit's answer for the pod (its
  requests and which extended resources DRA must provide, ``Fit.dra_backed``; the requests of
  those are ``pod_requests.extended_resource_requests``). Return None when the pod has no
  claim and no DRA-backed extended resource (the plugin is skipped), a tuple of reasons when
  it fits no node (e.g. ``resourceclaim in use``), or any state for ``check``.
- ``check(state, node)``: Filter. None when the claims can be allocated (or are available) on
  the node, else the reasons, e.g. ``(CANNOT_ALLOCATE_ALL_CLAIMS,)``. A backend may keep the
  allocation it found per node in ``state`` for the placement that follows (upstream's
  ``nodeAllocations``).

The texts are those of ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``
(statuses ``UnschedulableAndUnresolvable``).

The plugin's logic is here whole (:class:`DraFilter`, the backend every cluster snapshot uses):
PreFilter finds the pod's claims, which are allocated already and which still need devices,
and the DRA-backed extended resources; Filter checks that allocated claims are usable on the
node and has the others allocated there; the :class:`Placement` it finds is what Reserve and
PreBind then write. What it reads of the cluster, and the allocator itself, come through a
:class:`DraManager`, as upstream's plugin reads through the scheduler's ``SharedDRAManager``
(the cluster-autoscaler's DRA snapshot implements it there, ``snapshot.cluster`` here): this
package imports neither the allocator nor any snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from drasnap.snapshot.k8s.claims import is_allocated
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.k8s.node_selectors import node_selector_matches
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.scheduling.extended_claims import extended_claim
from drasnap.snapshot.scheduling.framework import SKIP, Proceed, Reject, Skip
from drasnap.snapshot.scheduling.plugins.node_resources_fit import (
    Fit,
    NodeResourcesFit,
    dra_extended_resource_classes,
)
from drasnap.snapshot.scheduling.pod_requests import (
    ExtendedResourceRequest,
    extended_resource_requests,
)
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts, node_facts

__all__ = [
    "CANNOT_ALLOCATE_ALL_CLAIMS",
    "CLAIM_IN_USE",
    "CLAIM_NOT_AVAILABLE_ON_NODE",
    "DraBackend",
    "DraFilter",
    "DraManager",
    "DraState",
    "DynamicResources",
    "Placement",
    "PreparedPod",
    "available_on",
]

CANNOT_ALLOCATE_ALL_CLAIMS: Final = "cannot allocate all claims"
CLAIM_NOT_AVAILABLE_ON_NODE: Final = "resourceclaim not available on the node"
CLAIM_IN_USE: Final = "resourceclaim in use"


class DraBackend(Protocol):
    """What the cluster snapshot provides to run DRA as a filter (see the module docstring)."""

    def prepare(self, pod: PodFacts, fit: Fit) -> object | tuple[str, ...] | None: ...

    def check(self, state: Any, node: NodeFacts) -> tuple[str, ...] | None: ...


class DynamicResources:
    """Refuses nodes where the pod's claims cannot be allocated or used."""

    name: Final = "DynamicResources"

    def relevant_for_pod(self, pod: PodFacts) -> bool:
        """A pod with claims, or with scalar requests a DeviceClass may provide (PreFilter
        skips the rest)."""
        return bool(pod.spec.get("resourceClaims") or pod.requests.scalars)

    def __init__(self, backend: DraBackend, resources: NodeResourcesFit | None = None) -> None:
        self.backend = backend
        self.resources = resources or NodeResourcesFit()

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Skip | Reject | Proceed:
        state = self.backend.prepare(pod, self.resources.fit_for(pod))
        if state is None:
            return SKIP
        if isinstance(state, tuple):
            return Reject(state)
        return Proceed(state)

    def filter(
        self, state: Any, pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        return self.backend.check(state, node)


# -- the plugin's logic --------------------------------------------------------------------------


@dataclass
class PreparedPod:
    """A pod about to be placed: what every node it is tried on needs to know (PreFilter)."""

    key: str
    allocated: list[KubeObject]  # its claims that are allocated already
    pending: dict[str, KubeObject]  # its claims to allocate, by key
    needs_free_device: bool
    obj: KubeObject | None = None  # the pod (set when it has DRA-backed extended resources)
    # Its requests of extended resources a DeviceClass provides (DRAExtendedResource); on a
    # node that does not advertise one, the scheduler's extended-resource claim serves it.
    extended: tuple[ExtendedResourceRequest, ...] = ()
    extended_claim: KubeObject | None = None  # that claim, on the node being tried
    extended_requests: tuple[ExtendedResourceRequest, ...] = ()  # and what it requests


@dataclass
class Placement:
    """What scheduling a pod on a node will write, computed before anything is written."""

    node: KubeObject
    allocations: list[tuple[KubeObject, dict[str, Any]]]  # (claim, status.allocation)
    extended: tuple[KubeObject, tuple[ExtendedResourceRequest, ...]] | None = None


@dataclass
class DraState:
    """The plugin's cycle state for one pod: what it needs, and the placement found per node
    (upstream's ``nodeAllocations``)."""

    pod: PreparedPod
    placements: dict[str, Placement]


class DraManager(Protocol):
    """What the plugin reads of the cluster, and the allocator it runs (upstream's
    ``SharedDRAManager``: listers of claims, slices and classes; plus the allocation, which
    this package leaves to ``snapshot.allocation``)."""

    def node(self, name: str) -> KubeObject | None:
        """The node, None when the cluster has no such node."""
        ...

    def pod_claims(self, pod: KubeObject) -> list[KubeObject]:
        """The pod's claims in spec order (NotFoundError: one is not tracked)."""
        ...

    def device_classes(self) -> list[KubeObject]: ...

    def slices_for(self, node_name: str) -> list[KubeObject]:
        """The slices the allocator must see for a node: its own, the global ones, and
        every slice of a pool spread over nodes."""
        ...

    def any_free_device(self, slices: list[KubeObject]) -> bool:
        """Whether some device of ``slices`` is allocated to no claim."""
        ...

    def allocate(
        self, node: KubeObject, claims: list[KubeObject], slices: list[KubeObject]
    ) -> list[dict[str, Any]] | None:
        """``status.allocation`` per claim on ``node`` with the cluster's allocated state,
        None when they do not all fit (``snapshot.allocation.allocate``)."""
        ...


class DraFilter:
    """The DynamicResources backend (:class:`DraBackend`) over a :class:`DraManager`.

    ``ready`` is a pod's :class:`PreparedPod` its caller worked out already (PreFilter is then
    not redone), ``last`` the state of the newest PreFilter (the placement per node that
    Filter found, for the caller's Reserve).
    """

    def __init__(self, manager: DraManager) -> None:
        self.manager = manager
        self.last: DraState | None = None
        self.ready: PreparedPod | None = None

    def prepare(self, pod: PodFacts, fit: Fit) -> DraState | None:
        prepared = self.ready
        if prepared is None or prepared.key != pod.key or fit.dra_backed:
            prepared = self.prepare_pod(pod.pod, fit)
        if not prepared.allocated and not prepared.pending and not prepared.extended:
            return None
        self.last = DraState(prepared, {})
        return self.last

    def check(self, state: DraState, node: NodeFacts) -> tuple[str, ...] | None:
        placement = self.plan(state.pod, node.name)
        if isinstance(placement, tuple):
            return placement
        state.placements[node.name] = placement
        return None

    def prepare_pod(self, pod: KubeObject, fit: Fit | None = None) -> PreparedPod:
        """What placing ``pod`` needs, whatever the node: worked out once per pod.

        Raises:
            NotFoundError: the pod references a claim that is not tracked.
        """
        claims: list[KubeObject] = []
        if (pod.get("spec") or {}).get("resourceClaims"):
            claims = self.manager.pod_claims(pod)  # a missing claim fails on every node
        pending: dict[str, KubeObject] = {}
        allocated: list[KubeObject] = []
        for claim in claims:
            if is_allocated(claim):
                allocated.append(claim)
            else:
                pending.setdefault(key_of(claim), claim)
        extended: tuple[ExtendedResourceRequest, ...] = ()
        if fit is not None and fit.dra_backed:
            by_resource = dra_extended_resource_classes(self.manager.device_classes())
            extended = tuple(
                r
                for r in extended_resource_requests(pod, by_resource)
                if r.resource in fit.dra_backed
            )
        return PreparedPod(
            key_of(pod),
            allocated,
            pending,
            bool(pending) and _needs_free_device(pending.values()),
            pod if extended else None,
            extended,
        )

    def on_node(self, pod: PreparedPod, node: KubeObject) -> PreparedPod:
        """``pod`` as tried on ``node``: with the scheduler's extended-resource claim for the
        DRA-backed resources the node does not advertise itself (they are left to DRA)."""
        if not pod.extended:
            return pod
        have = node_facts(node).allocatable
        needed = tuple(r for r in pod.extended if have.scalar(r.resource) <= 0)
        if not needed:
            return pod
        assert pod.obj is not None
        claim = extended_claim(pod.obj, needed)
        return PreparedPod(
            pod.key,
            pod.allocated,
            {**pod.pending, key_of(claim): claim},
            True,
            pod.obj,
            pod.extended,
            claim,
            needed,
        )

    def plan(self, pod: PreparedPod, node_name: str) -> Placement | tuple[str, ...]:
        """The DRA writes that would schedule the pod on ``node_name``, or the scheduler's
        reasons why its claims cannot be used there (Filter)."""
        manager = self.manager
        node = manager.node(node_name)
        if node is None:
            return (f"node {node_name!r} not found in the snapshot",)
        pod = self.on_node(pod, node)
        labels = (node.get("metadata") or {}).get("labels") or {}
        for claim in pod.allocated:
            if not available_on(claim, node_name, labels):
                return (CLAIM_NOT_AVAILABLE_ON_NODE,)
        if not pod.pending:
            return Placement(node, [])
        slices = manager.slices_for(node_name)
        if pod.needs_free_device and not manager.any_free_device(slices):
            return (CANNOT_ALLOCATE_ALL_CLAIMS,)  # no free device: the allocator would fail
        results = manager.allocate(node, list(pod.pending.values()), slices)
        if results is None:
            return (CANNOT_ALLOCATE_ALL_CLAIMS,)
        extended = None
        if pod.extended_claim is not None:
            extended = (pod.extended_claim, pod.extended_requests)
        return Placement(node, list(zip(pod.pending.values(), results, strict=True)), extended)


def available_on(claim: KubeObject, node_name: str, labels: Mapping[str, str]) -> bool:
    """Whether an allocated claim can be used on the node (its allocation's node selector)."""
    selector = ((claim.get("status") or {}).get("allocation") or {}).get("nodeSelector")
    return selector is None or node_selector_matches(selector, node_name, labels)


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
