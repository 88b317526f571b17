"""NodeResourcesFit: the pod's requests must fit what the node's pods leave of its allocatable.

``pkg/scheduler/framework/plugins/noderesources/fit.go`` (``fitsRequest``, here
`Requests.fits_on` and `Requests.shortfalls`): the pod count first (``Too many pods``), then
cpu, memory and ephemeral storage when the pod asks for them (``Insufficient cpu`` ...), then
each scalar resource it asks for (``Insufficient example.com/gpu``); every shortage is a
reason. Upstream walks the scalar resources in Go's random map order; here they are sorted by
name so that runs repeat.

DRA-backed extended resources (DRAExtendedResource, beta and on in 1.36): a resource that the
node does not advertise (allocatable absent or zero) but that a DeviceClass provides
(``spec.extendedResourceName``, or the implicit ``deviceclass.resource.kubernetes.io/<class>``)
is not checked here; the DynamicResources plugin allocates devices for it. The plugin takes
those names as an input (`dra_extended_resource_classes` computes them from DeviceClasses);
`Fit.dra_backed` names those the pod asks for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Final

from drasnap.snapshot.k8s.objects import raw_name
from drasnap.snapshot.scheduling.framework import Proceed
from drasnap.snapshot.scheduling.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Requests,
)
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts

__all__ = [
    "DEVICE_CLASS_PREFIX",
    "ERR_REASON_TOO_MANY_PODS",
    "Fit",
    "NodeResourcesFit",
    "dra_extended_resource_classes",
    "insufficient",
]

ERR_REASON_TOO_MANY_PODS: Final = "Too many pods"
DEVICE_CLASS_PREFIX: Final = "deviceclass.resource.kubernetes.io/"


def insufficient(resource: str) -> str:
    """``Insufficient <resource>``."""
    return f"Insufficient {resource}"


_REASONS: Final = {
    PODS: ERR_REASON_TOO_MANY_PODS,
    CPU: insufficient(CPU),
    MEMORY: insufficient(MEMORY),
    EPHEMERAL_STORAGE: insufficient(EPHEMERAL_STORAGE),
}


def dra_extended_resource_classes(classes: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Extended resource name -> DeviceClass name, for every DeviceClass.

    Each class provides ``deviceclass.resource.kubernetes.io/<name>`` and, when set, its
    ``spec.extendedResourceName`` (the scheduler's ``ExtendedResourceCache``). When several
    classes claim one name, the first by class name wins (upstream keeps whichever it saw
    last, an order it does not define).
    """
    out: dict[str, str] = {}
    for cls in sorted(classes, key=raw_name):
        name = raw_name(cls)
        explicit = (cls.get("spec") or {}).get("extendedResourceName")
        if explicit:
            out.setdefault(str(explicit), name)
        out.setdefault(DEVICE_CLASS_PREFIX + name, name)
    return out


@dataclass(frozen=True, slots=True)
class Fit:
    """NodeResourcesFit's PreFilter state: the pod's requests and which of its scalar
    resources DRA may provide."""

    requests: Requests
    dra_backed: frozenset[str]


def _plain_fit(pod: PodFacts) -> Fit:
    return Fit(pod.requests, frozenset())


def _plain_proceed(pod: PodFacts) -> Proceed:
    return Proceed(pod.derived(_plain_fit))


class NodeResourcesFit:
    """Refuses nodes whose free allocatable is short of what the pod requests.

    ``dra_resource_names`` returns the extended resource names DeviceClasses provide (read in
    PreFilter, and only for pods asking for scalar resources).
    """

    name: Final = "NodeResourcesFit"

    def relevant_for_pod(self, pod: PodFacts) -> bool:
        """For a pod asking only cpu, memory and a pod slot, Filter is `Requests.fits_on` of
        its requests: having room is all it checks. Any other resource may be DRA's."""
        requests = pod.requests
        return bool(requests.scalars or requests.ephemeral_storage)  # not only_cpu_memory

    def __init__(self, dra_resource_names: Callable[[], AbstractSet[str]] = frozenset) -> None:
        self._dra_resource_names = dra_resource_names

    def fit_for(self, pod: PodFacts) -> Fit:
        """The pod's requests and which of its extended resources DRA may provide."""
        requests = pod.requests
        if not requests.scalars:
            return pod.derived(_plain_fit)  # nothing DRA could provide: the same every time
        names = self._dra_resource_names()
        dra = frozenset(n for n, amount in requests.scalars.items() if amount and n in names)
        return Fit(requests, dra)

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Proceed:
        fit = self.fit_for(pod)
        if not fit.dra_backed and not fit.requests.scalars:
            return pod.derived(_plain_proceed)
        return Proceed(fit)

    def filter(
        self, state: Fit, pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        want, have = state.requests, node.allocatable
        used = cluster.requested(node.name)
        if want.fits_on(have, used, state.dra_backed):
            return None  # the common case, decided without building a list
        return tuple(
            _REASONS.get(name) or insufficient(name)
            for name in want.shortfalls(have, used, state.dra_backed)
        )
