"""DynamicResources: the slot for the DRA allocator, with the plugin's upstream reasons.

The allocation itself is the cluster snapshot's (the structured allocator over the DRA
snapshot); this plugin only fits it into the framework. A `DraBackend` gives:

- ``prepare(pod, fit)``: PreFilter. ``fit`` is NodeResourcesFit's answer for the pod (its
  requests and which extended resources DRA must provide, ``Fit.dra_requests``; see also
  ``pod_requests.extended_resource_requests``). Return None when the pod has no claim and no
  DRA-backed extended resource (the plugin is skipped), a tuple of reasons when it fits no
  node (e.g. ``resourceclaim in use``), or any state for ``check``.
- ``check(state, node)``: Filter. None when the claims can be allocated (or are available) on
  the node, else the reasons, e.g. ``(CANNOT_ALLOCATE_ALL_CLAIMS,)``. A backend may keep the
  allocation it found per node in ``state`` for the placement that follows (upstream's
  ``nodeAllocations``).

The texts are those of ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``
(statuses ``UnschedulableAndUnresolvable``); the formatted ones have a helper.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from drasnap.snapshot.scheduling.framework import SKIP, Proceed, Reject, Skip
from drasnap.snapshot.scheduling.plugins.node_resources_fit import Fit, NodeResourcesFit
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts

__all__ = [
    "CANNOT_ALLOCATE_ALL_CLAIMS",
    "CANNOT_FIT_RESOURCE",
    "CANNOT_SCHEDULE_EXTENDED_RESOURCE_CLAIM",
    "CLAIM_IN_USE",
    "CLAIM_NOT_AVAILABLE_ON_NODE",
    "TIMED_OUT_ALLOCATING",
    "DraBackend",
    "DynamicResources",
    "claim_being_allocated",
    "claim_being_deleted",
    "device_class_missing",
]

CANNOT_ALLOCATE_ALL_CLAIMS: Final = "cannot allocate all claims"
CLAIM_NOT_AVAILABLE_ON_NODE: Final = "resourceclaim not available on the node"
CLAIM_IN_USE: Final = "resourceclaim in use"
TIMED_OUT_ALLOCATING: Final = "timed out trying to allocate devices"
CANNOT_SCHEDULE_EXTENDED_RESOURCE_CLAIM: Final = "cannot schedule extended resource claim"
CANNOT_FIT_RESOURCE: Final = "cannot fit resource"


def claim_being_allocated(namespace: str, name: str) -> str:
    """PreFilter: another pod's allocation of the claim is in flight."""
    return f"resource claim {namespace}/{name} is in the process of being allocated"


def claim_being_deleted(name: str) -> str:
    """PreFilter: the claim has a deletion timestamp."""
    return f'resourceclaim "{name}" is being deleted'


def device_class_missing(request: str, device_class: str) -> str:
    """PreFilter: a request names a DeviceClass that does not exist."""
    return f"request {request}: device class {device_class} does not exist"


class DraBackend(Protocol):
    """What the cluster snapshot provides to run DRA as a filter (see the module docstring)."""

    def prepare(self, pod: PodFacts, fit: Fit) -> object | tuple[str, ...] | None: ...

    def check(self, state: Any, node: NodeFacts) -> tuple[str, ...] | None: ...


class DynamicResources:
    """Refuses nodes where the pod's claims cannot be allocated or used."""

    name: Final = "DynamicResources"

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
