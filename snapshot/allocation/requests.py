"""Claims checked and turned into what the search allocates: requests, subrequests, constraints.

Follows the validation at the start of ``Allocate`` and ``validateDeviceRequest`` in
``internal/experimental/allocator_experimental.go`` (k8s.io/dynamic-resource-allocation): the
same checks, in the same order, with the same error texts. Errors abort the whole allocation.

A request either names its devices directly (``exactly``) or lists alternatives
(``firstAvailable`` subrequests, DRAPrioritizedList); a `RequestSlot` holds the one or the
other. Defaults are those the API server applies: ``allocationMode`` ExactCount, ``count`` 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from snapshot.allocation.capacity import Amount, parse_requests
from snapshot.allocation.constraints import Constraint, DistinctAttribute, MatchAttribute
from snapshot.allocation.fields import check_object
from snapshot.errors import AllocationError
from snapshot.features import AllocatorFeatures
from snapshot.pools import Device

__all__ = [
    "MAX_DEVICES_PER_CLAIM",
    "ClaimPlan",
    "Request",
    "RequestSlot",
    "kobj",
    "plan_claims",
]

#: ``resourceapi.AllocationResultsMaxSize``: at most this many devices per claim.
MAX_DEVICES_PER_CLAIM = 32

Obj = Mapping[str, Any]


def kobj(obj: Obj) -> str:
    """``klog.KObj``: namespace/name, or just the name without a namespace."""
    metadata = obj.get("metadata") or {}
    namespace, name = metadata.get("namespace") or "", str(metadata.get("name", ""))
    return f"{namespace}/{name}" if namespace else name


@dataclass(slots=True, eq=False)
class Request:
    """One request, or one subrequest of a prioritized list, ready to allocate."""

    claim_index: int
    name: str  # its own name (the subrequest's, for a subrequest)
    parent: str | None  # the request holding this subrequest
    class_name: str
    device_class: Obj
    admin: bool
    # (from the class?, index, expression) in evaluation order: class selectors, then the
    # request's own.
    selectors: list[tuple[bool, int, str]]
    all_mode: bool
    count: int
    tolerations: Sequence[Obj]
    capacity: dict[str, Amount] | None  # capacity.requests (DRAConsumableCapacity)
    size: int = 0  # how many devices it takes (an "All" request: once its devices are known)
    all_devices: list[Device] = field(default_factory=list)
    cache: dict[Device, bool] = field(default_factory=dict)  # selectable or not

    @property
    def full_name(self) -> str:
        """The name results use: ``<request>/<subrequest>`` for a subrequest."""
        return self.name if self.parent is None else f"{self.parent}/{self.name}"

    @property
    def base_name(self) -> str:
        """The claim's request name (the parent's, for a subrequest)."""
        return self.name if self.parent is None else self.parent

    @property
    def subrequest(self) -> str:
        return "" if self.parent is None else self.name


@dataclass(slots=True, eq=False)
class RequestSlot:
    """A request of a claim: its one `Request`, or its subrequests in order of preference."""

    alternatives: list[Request]
    prioritized: bool  # firstAvailable: exactly one alternative gets allocated


@dataclass(slots=True, eq=False)
class ClaimPlan:
    claim: Obj
    slots: list[RequestSlot]
    constraints: list[Constraint]


def plan_claims(
    claims: Sequence[Obj],
    classes: Mapping[str, Obj],
    features: AllocatorFeatures,
    expand_all: Callable[[Request], None],
) -> list[ClaimPlan]:
    """Check every claim and build its plan; ``expand_all`` fills an "All" request's devices
    (it is called right after that request's checks, so errors come in upstream's order).

    Raises:
        AllocationError: with upstream's text for an invalid claim (see the module docstring).
    """
    plans = []
    for index, claim in enumerate(claims):
        devices = (claim.get("spec") or {}).get("devices") or {}
        slots: list[RequestSlot] = []
        minimum = 0
        for raw in devices.get("requests") or ():
            slot = _slot(index, claim, raw, classes, features, expand_all)
            slots.append(slot)
            alternatives = slot.alternatives
            if len(alternatives) == 1:
                minimum += alternatives[0].size
            else:
                minimum += min(r.size for r in alternatives)
        if minimum > MAX_DEVICES_PER_CLAIM:
            raise AllocationError(
                f"claim {kobj(claim)}: number of requested devices {minimum} exceeds the claim "
                f"limit of {MAX_DEVICES_PER_CLAIM}"
            )
        constraints = devices.get("constraints")
        plans.append(
            ClaimPlan(
                claim, slots, _constraints(claim, constraints, features) if constraints else []
            )
        )
    return plans


def _slot(
    index: int,
    claim: Obj,
    raw: Obj,
    classes: Mapping[str, Obj],
    features: AllocatorFeatures,
    expand_all: Callable[[Request], None],
) -> RequestSlot:
    name = str(raw.get("name", ""))
    subrequests = raw.get("firstAvailable") or ()
    if subrequests and not features.prioritized_list:
        raise AllocationError(
            f"claim {kobj(claim)}, request {name}: has subrequests, but the DRAPrioritizedList "
            "feature is disabled"
        )
    exactly = raw.get("exactly")
    if not features.consumable_capacity:
        if exactly is not None and exactly.get("capacity") is not None:
            raise AllocationError(
                f"claim {kobj(claim)}, request {name}: has capacity requests, but the "
                "DRAConsumableCapacity feature is disabled"
            )
        for sub in subrequests:
            if sub.get("capacity") is not None:
                raise AllocationError(
                    f"claim {kobj(claim)}, subrequest {sub.get('name', '')}: has capacity "
                    "requests, but the DRAConsumableCapacity feature is disabled"
                )
    if subrequests:
        alternatives = []
        for sub in subrequests:
            alternatives.append(
                _request(index, claim, sub, name, classes, features, expand_all, sub=True)
            )
        return RequestSlot(alternatives, prioritized=True)
    request = _request(index, claim, exactly or {}, None, classes, features, expand_all, name)
    return RequestSlot([request], prioritized=False)


def _request(
    index: int,
    claim: Obj,
    spec: Obj,
    parent: str | None,
    classes: Mapping[str, Obj],
    features: AllocatorFeatures,
    expand_all: Callable[[Request], None],
    name: str = "",
    *,
    sub: bool = False,
) -> Request:
    """``validateDeviceRequest`` for an ``exactly`` request or a subrequest (``sub``)."""
    if sub:
        name = str(spec.get("name", ""))

    def where() -> str:
        return f"claim {kobj(claim)}, request {name}"

    selectors = spec.get("selectors") or ()
    for i, selector in enumerate(selectors):
        if selector.get("cel") is None:
            raise AllocationError(
                f"{where()}, selector #{i}: CEL expression empty (unsupported selector type?)"
            )
    if not sub and spec.get("adminAccess") is not None and not features.admin_access:
        raise AllocationError(f"{where()}: admin access is requested, but the feature is disabled")
    class_name = str(spec.get("deviceClassName") or "")
    if not class_name:
        raise AllocationError(f"{where()}: missing device class name (unsupported request type?)")
    device_class = classes.get(class_name)
    if device_class is None:
        raise AllocationError(
            f"{where()}: could not retrieve device class {class_name}: "
            f'deviceclass.resource.k8s.io "{class_name}" not found'
        )
    check_object(device_class, "DeviceClass")
    class_selectors = (device_class.get("spec") or {}).get("selectors") or ()
    request = Request(
        claim_index=index,
        name=name,
        parent=parent,
        class_name=class_name,
        device_class=device_class,
        admin=not sub and bool(spec.get("adminAccess")),
        selectors=[
            (True, i, str((s.get("cel") or {}).get("expression", "")))
            for i, s in enumerate(class_selectors)
        ]
        + [(False, i, str(s["cel"].get("expression", ""))) for i, s in enumerate(selectors)],
        all_mode=False,
        count=0,
        tolerations=spec.get("tolerations") or (),
        capacity=None,
    )
    capacity = spec.get("capacity")
    if capacity is not None:
        request.capacity = parse_requests(capacity, where())
    mode = spec.get("allocationMode") or "ExactCount"
    if mode == "ExactCount":
        count = spec.get("count")
        request.count = request.size = 1 if count is None else int(count)
    elif mode == "All":
        request.all_mode = True
        expand_all(request)
        request.size = len(request.all_devices)
    else:
        raise AllocationError(f"{where()}: unsupported count mode {mode}")
    return request


def _constraints(claim: Obj, specs: Sequence[Obj], features: AllocatorFeatures) -> list[Constraint]:
    constraints: list[Constraint] = []
    lists = features.list_type_attributes
    for i, constraint in enumerate(specs):
        names = frozenset(constraint.get("requests") or ())
        if constraint.get("matchAttribute") is not None:
            constraints.append(MatchAttribute(names, str(constraint["matchAttribute"]), lists))
        elif constraint.get("distinctAttribute") is not None:
            constraints.append(
                DistinctAttribute(names, str(constraint["distinctAttribute"]), lists)
            )
        else:
            raise AllocationError(
                f"claim {kobj(claim)}, constraint #{i}: empty constraint (unsupported "
                "constraint type?)"
            )
    return constraints
