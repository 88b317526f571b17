"""What a pod asks of a node, as ``k8s.io/component-helpers/resource.PodRequests`` computes it.

For a pod being placed (``use_status=False``, what NodeResourcesFit's PreFilter uses):

- the requests of ``spec.containers`` are summed;
- ``spec.initContainers`` run one after another: each ordinary init container needs its own
  requests plus those of the restartable init containers (sidecars, ``restartPolicy:
  Always``) started before it, and the pod needs the largest of these; sidecars keep running,
  so their requests are also added to the containers' sum (KEP-753's formula);
- pod-level ``spec.resources.requests`` (PodLevelResources, beta and on by default in 1.36)
  replace the aggregate for the resources pod-level resources support (cpu, memory,
  ``hugepages-*``);
- ``spec.overhead`` is added.

A container's ``limits`` stand in for its missing ``requests`` key by key, as API defaulting
stores them (a dump from the API server already has them; a hand-written manifest may not).

For a pod already on a node (``use_status=True``, what the scheduler's NodeInfo counts, with
InPlacePodVerticalScaling GA and InPlacePodLevelResourcesVerticalScaling beta in 1.36): each
resource is the largest of what the spec asks, what the kubelet allocated
(``status.containerStatuses[].allocatedResources``) and what is actuated
(``status.containerStatuses[].resources.requests``), or of the latter two alone when the
``PodResizePending`` condition says the resize is ``Infeasible``; pod-level status
(``status.allocatedResources``, ``status.resources``) is used when present.

With ``non_zero=True`` (what the scoring plugins and ``NodeInfo.NonZeroRequested`` use,
``PodResourcesOptions.NonMissingContainerRequests`` in ``k8s.io/component-helpers/resource``),
a container (init containers and sidecars included) that requests no cpu counts 100m and
one that requests no memory counts 200Mi (``pkg/scheduler/util`` ``DefaultMilliCPURequest``,
``DefaultMemoryRequest``); a request set to 0 stays 0. With ``use_status`` too, the defaults
fill each of the spec's, the allocated and the actuated requests before they are compared.

Quantities are added exactly (``Fraction``) and rounded up once at the end, as Go adds
``resource.Quantity`` values before ``MilliValue``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Final

from drasnap.snapshot.k8s.quantity import quantity_value
from drasnap.snapshot.scheduling.resources import (
    CPU,
    MEMORY,
    Requests,
    requests_from_list,
)

__all__ = [
    "DEFAULT_CPU_REQUEST",
    "DEFAULT_MEMORY_REQUEST",
    "ExtendedResourceRequest",
    "compute_pod_requests",
    "extended_resource_requests",
    "pod_level_requests_set",
    "restartable",
    "status_counts",
]

Values = dict[str, Fraction]

DEFAULT_CPU_REQUEST: Final = Fraction(1, 10)
"""What a container without a cpu request counts for when scoring (100m)."""
DEFAULT_MEMORY_REQUEST: Final = Fraction(200 * 1024 * 1024)
"""What a container without a memory request counts for when scoring (200Mi)."""
_NON_ZERO_DEFAULTS: Final = ((CPU, DEFAULT_CPU_REQUEST), (MEMORY, DEFAULT_MEMORY_REQUEST))


def _with_defaults(values: Values, non_zero: bool) -> Values:
    """``applyNonMissing``: the defaults for the resources a container does not name."""
    if non_zero:
        for name, value in _NON_ZERO_DEFAULTS:
            values.setdefault(name, value)
    return values


def restartable(container: Mapping[str, Any]) -> bool:
    """Whether an init container is a sidecar (``restartPolicy: Always``)."""
    return container.get("restartPolicy") == "Always"


def _values(resources: Mapping[str, Any] | None) -> Values:
    return {str(k): quantity_value(str(v)) for k, v in (resources or {}).items()}


def _container_requests(container: Mapping[str, Any], non_zero: bool = False) -> Values:
    resources = container.get("resources") or {}
    values = _values(resources.get("requests"))
    for name, value in _values(resources.get("limits")).items():
        values.setdefault(name, value)  # API defaulting: requests default to limits
    return _with_defaults(values, non_zero)


def _add(into: Values, other: Mapping[str, Fraction]) -> None:
    for name, value in other.items():
        into[name] = into.get(name, Fraction(0)) + value


def _max_into(into: Values, other: Mapping[str, Fraction]) -> None:
    for name, value in other.items():
        if name not in into or value > into[name]:
            into[name] = value


def _max(*lists: Mapping[str, Fraction] | None) -> Values:
    out: Values = {}
    for values in lists:
        if values:
            _max_into(out, values)
    return out


def _aggregate(containers: Iterable[Values], inits: Iterable[tuple[Values, bool]]) -> Values:
    """Containers summed; each init container with the sidecars before it, the largest kept."""
    total: Values = {}
    for values in containers:
        _add(total, values)
    sidecars: Values = {}
    init_peak: Values = {}
    for values, is_sidecar in inits:
        if is_sidecar:
            _add(total, values)
            _add(sidecars, values)
            _max_into(init_peak, sidecars)
        else:
            combined = dict(values)
            _add(combined, sidecars)
            _max_into(init_peak, combined)
    _max_into(total, init_peak)
    return total


def _supported_pod_level(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


def pod_level_requests_set(spec: Mapping[str, Any]) -> bool:
    """``IsPodLevelRequestsSet``: pod-level requests name a supported resource."""
    return any(_supported_pod_level(str(n)) for n in _pod_level_requests(spec))


def _pod_level_requests(spec: Mapping[str, Any]) -> Values:
    resources = spec.get("resources") or {}
    values = _values(resources.get("requests"))
    for name, value in _values(resources.get("limits")).items():
        if _supported_pod_level(name):
            values.setdefault(name, value)
    return values


def _status_of(pod: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    status = pod.get("status") or {}
    found: dict[str, Mapping[str, Any]] = {}
    for key in ("initContainerStatuses", "containerStatuses"):  # containers win a name clash
        for cs in status.get(key) or ():
            found[str(cs.get("name"))] = cs
    return found


def _resize_infeasible(pod: Mapping[str, Any]) -> bool:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodResizePending":
            return bool(condition.get("reason") == "Infeasible")
    return False


def _by_status(
    spec: Mapping[str, Any],
    statuses: Mapping[str, Mapping[str, Any]],
    infeasible: bool,
    kind: str,
    non_zero: bool = False,
) -> Values:
    """The aggregate with each container's allocated or actuated requests (upstream's
    ``containerAllocatedRequests``/``containerActuatedRequests``)."""

    def pick(container: Mapping[str, Any]) -> Values:
        cs = statuses.get(str(container.get("name"))) or {}
        if kind == "actuated" and (cs.get("resources") or {}).get("requests") is not None:
            return _with_defaults(_values(cs["resources"]["requests"]), non_zero)
        if cs.get("allocatedResources") is not None:
            return _with_defaults(_values(cs["allocatedResources"]), non_zero)
        return (
            _with_defaults({}, non_zero) if infeasible else _container_requests(container, non_zero)
        )

    return _aggregate(
        (pick(c) for c in spec.get("containers") or ()),
        ((pick(c), restartable(c)) for c in spec.get("initContainers") or ()),
    )


def _minus(values: Values | None, overhead: Values) -> Values | None:
    if values is None:
        return None
    out = dict(values)
    for name, value in overhead.items():
        if name in out:
            out[name] -= value
    return out


@lru_cache(maxsize=4096)
def _single_container(requests: tuple[tuple[str, Any], ...]) -> Requests:
    """The requests of a pod of one container with only ``requests`` (remembered: the pods of
    a workload repeat them)."""
    return requests_from_list(_values(dict(requests)), pods=1)


def status_counts(pod: Mapping[str, Any]) -> bool:
    """Whether the pod's status can make ``use_status=True`` differ from the spec's requests
    (container or pod-level resources in the status, or a resize condition); when not, a
    placed pod counts for what it asks."""
    status = pod.get("status")
    if not status:
        return False
    return any(
        status.get(key) is not None
        for key in (
            "containerStatuses",
            "initContainerStatuses",
            "allocatedResources",
            "resources",
            "conditions",
        )
    )


def compute_pod_requests(
    pod: Mapping[str, Any], *, use_status: bool = False, non_zero: bool = False
) -> Requests:
    """The pod's requests with one pod slot (``pods=1``); see the module docstring.

    >>> pod = {"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}],
    ...     "initContainers": [{"restartPolicy": "Always",
    ...                         "resources": {"requests": {"cpu": "500m"}}}]}}
    >>> compute_pod_requests(pod).cpu
    1500

    Raises:
        ObjectValidationError: a quantity does not parse.
    """
    spec = pod.get("spec") or {}
    containers: list[Mapping[str, Any]] = spec.get("containers") or []
    inits = spec.get("initContainers") or ()
    if (
        not non_zero
        and len(containers) == 1
        and not inits
        and not spec.get("overhead")
        and not spec.get("resources")
        and not (use_status and status_counts(pod))
    ):
        # The common shape, one container and nothing else: its requests are the pod's.
        resources = containers[0].get("resources") or {}
        if not resources.get("limits"):
            try:
                return _single_container(tuple((resources.get("requests") or {}).items()))
            except TypeError:  # an unhashable value: no shortcut
                pass
        return requests_from_list(_container_requests(containers[0]), pods=1)
    spec_total = _aggregate(
        (_container_requests(c, non_zero) for c in containers),
        ((_container_requests(c, non_zero), restartable(c)) for c in inits),
    )
    status = pod.get("status") or {}
    overhead = _values(spec.get("overhead"))
    infeasible = use_status and _resize_infeasible(pod)
    if not use_status:
        total = spec_total
    else:
        pod_allocated = status.get("allocatedResources")
        pod_actuated = (status.get("resources") or {}).get("requests")
        if pod_allocated is not None and pod_actuated is not None:
            allocated, actuated = _values(pod_allocated), _values(pod_actuated)
        else:
            statuses = _status_of(pod)
            allocated = _by_status(spec, statuses, infeasible, "allocated", non_zero)
            actuated = _by_status(spec, statuses, infeasible, "actuated", non_zero)
        total = _max(actuated, allocated) if infeasible else _max(spec_total, actuated, allocated)
    if pod_level_requests_set(spec):
        effective = _pod_level_requests(spec)
        if use_status and (status.get("resources") is not None or status.get("allocatedResources")):
            actuated_pod = (status.get("resources") or {}).get("requests")
            allocated_pod = status.get("allocatedResources")
            effective = _max(
                None if infeasible else effective,
                _minus(_values(actuated_pod) if actuated_pod is not None else None, overhead),
                _minus(_values(allocated_pod) if allocated_pod is not None else None, overhead),
            )
        for name, value in effective.items():
            if _supported_pod_level(name):
                total[name] = value
    _add(total, overhead)
    return requests_from_list(total, pods=1)


@dataclass(frozen=True, slots=True)
class ExtendedResourceRequest:
    """One device request the DynamicResources plugin makes for an extended resource backed
    by DRA (``createDeviceRequests`` in upstream's ``dynamicresources.go``).

    ``name`` is ``container-<i>-request-<j>``: ``i`` indexes init containers then containers,
    ``j`` the resource in the container's requests sorted by name.
    """

    name: str
    resource: str
    device_class: str
    count: int


def extended_resource_requests(
    pod: Mapping[str, Any], classes_by_resource: Mapping[str, str]
) -> list[ExtendedResourceRequest]:
    """The device requests for the pod's extended resources that a DeviceClass provides.

    ``classes_by_resource`` maps a resource name to its DeviceClass (see
    ``dra_extended_resource_classes``). Only container requests count (pod-level resources do
    not include extended resources); a request that is zero or not an integer is skipped, as
    upstream does. Which of these a node must satisfy through DRA depends on the node: those it
    advertises in ``status.allocatable`` come from its device plugin instead.
    """
    spec = pod.get("spec") or {}
    containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
    out: list[ExtendedResourceRequest] = []
    for index, container in enumerate(containers):
        requests = (container.get("resources") or {}).get("requests") or {}
        names = sorted(str(n) for n in requests)
        for position, name in enumerate(names):
            device_class = classes_by_resource.get(name)
            if not device_class:
                continue
            value = quantity_value(str(requests[name]))
            if value.denominator != 1 or value == 0:
                continue
            out.append(
                ExtendedResourceRequest(
                    f"container-{index}-request-{position}", name, device_class, int(value)
                )
            )
    return out
