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
from dataclasses import dataclass
from typing import Any

from drasnap.snapshot.allocation.capacity import Amount, parse_requests
from drasnap.snapshot.allocation.constraints import Constraint, DistinctAttribute, MatchAttribute
from drasnap.snapshot.allocation.fields import check_object_once
from drasnap.snapshot.allocation.pools import Device
from drasnap.snapshot.errors import AllocationError
from drasnap.snapshot.k8s.features import AllocatorFeatures
from drasnap.snapshot.k8s.kinds import klog_kobj
from drasnap.snapshot.validation.limits import ALLOCATION_RESULTS_MAX_SIZE

__all__ = [
    "MAX_DEVICES_PER_CLAIM",
    "ClaimPlan",
    "Request",
    "RequestSlot",
    "plan_claims",
]

#: ``resourceapi.AllocationResultsMaxSize``: at most this many devices per claim. Its home is
#: `snapshot.validation.limits`, whose up-front check of claims refuses the same claims.
MAX_DEVICES_PER_CLAIM = ALLOCATION_RESULTS_MAX_SIZE

Obj = Mapping[str, Any]


class Request:
    """One request, or one subrequest of a prioritized list, ready to allocate."""

    __slots__ = (
        "admin",
        "all_devices",
        "all_mode",
        "base_name",
        "cache",
        "capacity",
        "claim_index",
        "class_name",
        "device_class",
        "full_name",
        "name",
        "parent",
        "selectors",
        "size",
        "subrequest",
        "tolerations",
    )

    def __init__(
        self,
        claim_index: int,
        name: str,
        parent: str | None,
        class_name: str,
        device_class: Obj,
        admin: bool,
        selectors: Sequence[tuple[bool, int, str]],
        tolerations: Sequence[Obj],
    ) -> None:
        self.claim_index = claim_index
        self.name = name  # its own name (the subrequest's, for a subrequest)
        self.parent = parent  # the request holding this subrequest
        if parent is None:
            self.base_name, self.subrequest, self.full_name = name, "", name
        else:
            # The claim's request name, the subrequest's, and the name results use.
            self.base_name, self.subrequest, self.full_name = parent, name, f"{parent}/{name}"
        self.class_name = class_name
        self.device_class = device_class
        self.admin = admin
        # (from the class?, index, expression) in evaluation order: class selectors, then the
        # request's own.
        self.selectors = selectors
        self.tolerations = tolerations
        self.all_mode = False
        self.size = 0  # how many devices it takes ("All": once its devices are known)
        self.capacity: dict[str, Amount] | None = None  # capacity.requests
        self.all_devices: Sequence[Device] = ()  # "All": the devices it takes
        self.cache: dict[Device, bool] = {}  # selectable or not


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
                f"claim {klog_kobj(claim)}: number of requested devices {minimum} exceeds the "
                f"claim limit of {MAX_DEVICES_PER_CLAIM}"
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
            f"claim {klog_kobj(claim)}, request {name}: has subrequests, but the "
            "DRAPrioritizedList feature is disabled"
        )
    exactly = raw.get("exactly")
    if not features.consumable_capacity:
        if exactly is not None and exactly.get("capacity") is not None:
            raise AllocationError(
                f"claim {klog_kobj(claim)}, request {name}: has capacity requests, but the "
                "DRAConsumableCapacity feature is disabled"
            )
        for sub in subrequests:
            if sub.get("capacity") is not None:
                raise AllocationError(
                    f"claim {klog_kobj(claim)}, subrequest {sub.get('name', '')}: has capacity "
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

    def where() -> str:  # only called for errors
        return f"claim {klog_kobj(claim)}, request {name}"

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
    expressions: Sequence[tuple[bool, int, str]] = _class_selectors(device_class)
    if selectors:
        expressions = [
            *expressions,
            *((False, i, str(s["cel"].get("expression", ""))) for i, s in enumerate(selectors)),
        ]
    request = Request(
        index,
        name,
        parent,
        class_name,
        device_class,
        not sub and bool(spec.get("adminAccess")),
        expressions,
        spec.get("tolerations") or (),
    )
    capacity = spec.get("capacity")
    if capacity is not None:
        request.capacity = parse_requests(capacity, where())
    mode = spec.get("allocationMode") or "ExactCount"
    if mode == "ExactCount":
        count = spec.get("count")
        request.size = 1 if count is None else int(count)
    elif mode == "All":
        request.all_mode = True
        expand_all(request)
        request.size = len(request.all_devices)
    else:
        raise AllocationError(f"{where()}: unsupported count mode {mode}")
    return request


_CLASS_CACHE_LIMIT = 10_000
_class_cache: dict[int, tuple[Obj, tuple[tuple[bool, int, str], ...]]] = {}


def _class_selectors(device_class: Obj) -> tuple[tuple[bool, int, str], ...]:
    """A class's selectors, after checking the class: once per class object (immutable).

    Raises:
        AllocationError: the class sets a field drasnap does not implement.
    """
    found = _class_cache.get(id(device_class))
    if found is not None and found[0] is device_class:
        return found[1]
    check_object_once(device_class, "DeviceClass")
    selectors = tuple(
        (True, i, str((s.get("cel") or {}).get("expression", "")))
        for i, s in enumerate((device_class.get("spec") or {}).get("selectors") or ())
    )
    if len(_class_cache) >= _CLASS_CACHE_LIMIT:
        _class_cache.clear()
    _class_cache[id(device_class)] = (device_class, selectors)
    return selectors


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
                f"claim {klog_kobj(claim)}, constraint #{i}: empty constraint (unsupported "
                "constraint type?)"
            )
    return constraints
