"""Why a node's devices do (not) take a pod's claims, device by device: below the scheduler's
``cannot allocate all claims``.

:func:`explain_allocation` takes exactly the inputs of `snapshot.allocation.allocator.allocate`
and answers, for every claim and request (each subrequest of a prioritized list apart):

- how many devices the node's pools hold, how many pass the device class's selectors, then
  each of the request's selectors in turn (the allocator's order: class selectors, then the
  request's; per-device node selection and binding conditions count as the last step);
- of those, which are already allocated (exclusively, to which claims when the caller says);
- which free ones are refused, each checked alone against what other claims hold, in the
  allocator's order: consumable capacity, counters (``sharedCounters``), taints not
  tolerated, a constraint the device breaks alone (it lacks the attribute) or with every
  usable device of another request in the constraint's scope (``matchAttribute``: no common
  value; ``distinctAttribute``: not enough different values);
- how many stay usable, and the first device (in the allocator's pool order) that came
  closest, with the check that stopped it.

``fits`` is not derived from those counts: it is :func:`allocate`'s own answer on the same
inputs, so a pod the explanation says fits is a pod the allocator places. The per-device
checks take each device alone; the search can still fail with every request showing usable
devices (the devices taken for one request use counters or capacity another needs, or no
combination satisfies the constraints together): ``fits`` is then False and the
explanation says so (``combination``).

Pure: it never imports ``store``; inputs are never mutated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from drasnap.snapshot.allocation import fields
from drasnap.snapshot.allocation.allocator import _class_map, allocate
from drasnap.snapshot.allocation.capacity import format_binary
from drasnap.snapshot.allocation.constraints import (
    Constraint,
    DistinctAttribute,
    MatchAttribute,
    lookup_attribute,
)
from drasnap.snapshot.allocation.pools import Device, Pool, device_node_matches, gather_pools
from drasnap.snapshot.allocation.requests import Request, plan_claims
from drasnap.snapshot.allocation.search import Search
from drasnap.snapshot.allocation.state import allocated_state
from drasnap.snapshot.allocation.taint_rules import apply_device_taint_rules
from drasnap.snapshot.k8s.features import AllocatorFeatures, allocator_features
from drasnap.snapshot.k8s.kinds import klog_kobj

__all__ = [
    "AllocationExplanation",
    "DeviceRefusal",
    "RequestExplanation",
    "explain_allocation",
]

Obj = Mapping[str, Any]

# The checks in the order a device meets them; a refusal's ``check`` is one of these.
CHECKS = ("class", "selector", "node", "allocated", "capacity", "counters", "taints", "constraint")


@dataclass(frozen=True)
class DeviceRefusal:
    """One device refused for a request: ``driver/pool/device``, the check and why."""

    device: str
    check: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"device": self.device, "check": self.check, "reason": self.reason}


@dataclass
class RequestExplanation:
    """One request (or subrequest) of one claim, on one node."""

    claim: str  # namespace/name
    request: str  # as results name it: ``req`` or ``req/sub``
    device_class: str
    count: int  # devices it needs
    devices: int  # devices in the node's pools
    selectors: list[tuple[str, int]]  # (who: expression, devices passing it and those before)
    matching: int  # pass every selector and the node selection
    allocated: dict[str, list[str]]  # matching device -> claims holding it ([] when unknown)
    refused: list[DeviceRefusal]  # free matching devices refused, in pool order
    usable: int
    closest: DeviceRefusal | None  # the first device that got furthest (None: enough usable)
    alternative: tuple[int, int] | None = None  # prioritized list: (1-based index, how many)

    def refused_by(self, check: str) -> list[str]:
        return [r.device for r in self.refused if r.check == check]

    def to_json(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "request": self.request,
            "deviceClassName": self.device_class,
            "count": self.count,
            "devices": self.devices,
            "selectors": [{"selector": s, "devices": n} for s, n in self.selectors],
            "matching": self.matching,
            "allocated": self.allocated,
            "refused": {c: self.refused_by(c) for c in CHECKS[4:] if self.refused_by(c)},
            "reasons": [r.to_json() for r in self.refused],
            "usable": self.usable,
            "closest": self.closest.to_json() if self.closest else None,
            "alternative": list(self.alternative) if self.alternative else None,
        }

    def lines(self) -> list[str]:
        """The explanation as text, one fact a line (``drasnap explain`` prints them)."""
        head = f"claim {self.claim}, request {self.request} ({self.count} of class "
        if self.alternative:
            i, n = self.alternative
            head = f"claim {self.claim}, request {self.request} (choice {i} of {n}: "
            head += f"{self.count} of class "
        out = [head + f"{self.device_class}): {self.devices} device(s) on the node"]
        for who, n in self.selectors:
            out.append(f"  {n} pass {who}")
        if self.allocated:
            held = ", ".join(
                f"{d} ({', '.join(c)})" if c else d for d, c in sorted(self.allocated.items())
            )
            out.append(f"  {len(self.allocated)} already allocated: {held}")
        for check in CHECKS[4:]:
            refused = [r for r in self.refused if r.check == check]
            if refused:
                out.append(
                    f"  {len(refused)} refused by {check}: "
                    + "; ".join(f"{r.device} ({r.reason})" for r in refused)
                )
        out.append(f"  {self.usable} usable, {self.count} needed")
        if self.closest is not None:
            out.append(
                f"  closest: {self.closest.device}, stopped by {self.closest.check}: "
                f"{self.closest.reason}"
            )
        return out


@dataclass
class AllocationExplanation:
    """The allocator's answer (``fits``) and why, request by request."""

    node: str
    fits: bool
    requests: list[RequestExplanation] = field(default_factory=list)
    pools: list[str] = field(default_factory=list)  # pool problems (incomplete, invalid)
    error: str | None = None  # the allocator's error (then fits is False)
    combination: bool = False  # every request has usable devices, yet no combination fits

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "fits": self.fits,
            "error": self.error,
            "pools": list(self.pools),
            "combination": self.combination,
            "requests": [r.to_json() for r in self.requests],
        }

    def lines(self) -> list[str]:
        verdict = "the claims fit" if self.fits else "cannot allocate all claims"
        out = [f"node {self.node}: {verdict}"]
        if self.error:
            out.append(f"  allocator error: {self.error}")
        out.extend(f"  pool {p}" for p in self.pools)
        for request in self.requests:
            out.extend(request.lines())
        if self.combination:
            out.append(
                "  every request has usable devices alone, but no combination satisfies all "
                "requests together (counters or capacity shared between them, or constraints)"
            )
        return out


def explain_allocation(
    node: Obj,
    claims: Sequence[Obj],
    *,
    classes: Iterable[Obj] | Mapping[str, Obj],
    slices: Iterable[Obj],
    allocated_devices: Iterable[Sequence[str]] = (),
    allocated_shared_devices: Iterable[Sequence[str] | Obj] = (),
    allocated_capacity: Iterable[Sequence[Any] | Obj] | Mapping[Sequence[str], Obj] = (),
    features: Mapping[str, bool] | AllocatorFeatures | None = None,
    device_taint_rules: Iterable[Obj] = (),
    owners: Mapping[tuple[str, str, str], Sequence[str]] | None = None,
) -> AllocationExplanation:
    """Explain :func:`allocate` on the same inputs; ``owners`` maps an allocated device
    (driver, pool, device) to the claims (``namespace/name``) holding it, for the report.

    Raises:
        AllocationError, FeatureGateError: as :func:`allocate` raises them, for a claim or an
            input it refuses (an error of the search itself is reported in ``error``).
    """
    from drasnap.snapshot.errors import AllocationError

    slice_list = list(slices)
    rules = list(device_taint_rules)
    classes_map = _class_map(classes)
    dedicated = [tuple(d) for d in allocated_devices]
    shared = list(allocated_shared_devices)
    capacity = (
        allocated_capacity if isinstance(allocated_capacity, Mapping) else list(allocated_capacity)
    )
    kwargs: dict[str, Any] = {
        "classes": classes_map,
        "slices": slice_list,
        "allocated_devices": dedicated,
        "allocated_shared_devices": shared,
        "allocated_capacity": capacity,
        "features": features,
        "device_taint_rules": rules,
    }
    node_name = str((node.get("metadata") or {}).get("name", ""))
    error = None
    try:
        fits = allocate(node, claims, **kwargs) is not None
    except AllocationError as exc:
        fits, error = False, str(exc)
    gates = features if isinstance(features, AllocatorFeatures) else allocator_features(features)
    if rules and gates.device_taint_rules:
        slice_list = apply_device_taint_rules(slice_list, rules)
    for claim in claims:
        fields.check_claim(claim)
    labels = (node.get("metadata") or {}).get("labels") or {}
    pools = gather_pools(slice_list, node_name, labels, partitionable=gates.partitionable_devices)
    state = allocated_state(dedicated, shared, capacity)
    claim_list = list(claims)
    search = Search(claim_list, pools, state, gates, node_name, labels)
    try:
        plans = plan_claims(claim_list, classes_map, gates, search.expand_all)
    except AllocationError as exc:
        return AllocationExplanation(node_name, False, [], _pool_problems(pools), str(exc))
    search.plans = plans
    search.picks = [[] for _ in plans]
    owners = owners or {}
    explained: list[tuple[RequestExplanation, Request, list[Device]]] = []
    for ci, plan in enumerate(plans):
        for slot in plan.slots:
            for i, req in enumerate(slot.alternatives):
                found, usable = _explain_request(search, ci, req, pools, owners)
                if slot.prioritized:
                    found.alternative = (i + 1, len(slot.alternatives))
                explained.append((found, req, usable))
    for ci, plan in enumerate(plans):
        mine = [(e, r, u) for e, r, u in explained if r.claim_index == ci]
        for constraint in plan.constraints:
            _check_constraint(constraint, mine)
    result = AllocationExplanation(
        node_name, fits, [e for e, _, _ in explained], _pool_problems(pools), error
    )
    if not fits and error is None:
        result.combination = all(e.usable >= max(e.count, 1) for e in result.requests)
    return result


def _pool_problems(pools: Sequence[Pool]) -> list[str]:
    out = []
    for pool in pools:
        if pool.invalid:
            out.append(f"{pool.pool_id}: invalid (its devices are not considered)")
        elif pool.incomplete:
            out.append(
                f"{pool.pool_id}: incomplete, being updated (its devices are not considered)"
            )
    return out


def _device_name(device: Device) -> str:
    return "/".join(device.id)


def _explain_request(
    search: Search,
    ci: int,
    req: Request,
    pools: Sequence[Pool],
    owners: Mapping[tuple[str, str, str], Sequence[str]],
) -> tuple[RequestExplanation, list[Device]]:
    features = search.features
    devices = [device for pool in pools for device in pool.devices]
    candidates = [(d, p) for d, p in search.candidates]  # the search's order and pools
    # Selectors, counted cumulatively in evaluation order.
    passing = list(devices)
    stopped: dict[Device, DeviceRefusal] = {}
    selectors: list[tuple[str, int]] = []
    for from_class, i, expression in req.selectors:
        who = f"{'class' if from_class else 'request'} selector #{i} ({expression})"
        kept = []
        for device in passing:
            if search._matches(req, from_class, i, expression, device):
                kept.append(device)
            else:
                check = "class" if from_class else "selector"
                stopped[device] = DeviceRefusal(_device_name(device), check, f"fails {who}")
        passing = kept
        selectors.append((who, len(passing)))
    kept = []
    for device in passing:
        if device.binding and not features.device_binding_and_status:
            stopped[device] = DeviceRefusal(
                _device_name(device), "node", "has binding conditions (gate off)"
            )
        elif device.slice.per_device and not device_node_matches(
            device, search.node_name, search.labels
        ):
            stopped[device] = DeviceRefusal(
                _device_name(device), "node", f"not available on node {search.node_name}"
            )
        else:
            kept.append(device)
    if len(kept) != len(passing):
        selectors.append(("node selection", len(kept)))
    matching = set(kept)
    allocated: dict[str, list[str]] = {}
    refused: list[DeviceRefusal] = []
    usable: list[Device] = []
    considered = {d for d, _ in candidates}
    for device, pool in candidates:
        if device not in matching:
            continue
        why = _refusal(search, ci, req, device, pool)
        if why is None:
            usable.append(device)
        elif why.check == "allocated":
            allocated[why.device] = list(owners.get(device.id, ()))
            stopped[device] = why
        else:
            refused.append(why)
            stopped[device] = why
    # Devices of pools the search does not consider (incomplete, invalid) count as matching
    # but are never candidates.
    for device in kept:
        if device not in considered:
            stopped[device] = DeviceRefusal(
                _device_name(device), "node", "its pool is incomplete or invalid"
            )
    claim = search.claims[ci]
    explanation = RequestExplanation(
        claim=klog_kobj(claim),
        request=req.full_name,
        device_class=req.class_name,
        count=req.size,
        devices=len(devices),
        selectors=selectors,
        matching=len(matching),
        allocated=allocated,
        refused=refused,
        usable=len(usable),
        closest=None if len(usable) >= max(req.size, 1) else _closest(devices, stopped),
    )
    return explanation, usable


def _closest(
    devices: Sequence[Device], stopped: Mapping[Device, DeviceRefusal]
) -> DeviceRefusal | None:
    best: DeviceRefusal | None = None
    for device in devices:
        found = stopped.get(device)
        if found is None:
            continue
        if best is None or CHECKS.index(found.check) > CHECKS.index(best.check):
            best = found
    return best


def _refusal(
    search: Search, ci: int, req: Request, device: Device, pool: Pool
) -> DeviceRefusal | None:
    """Why ``device`` alone cannot be taken for ``req`` (the allocator's checks in its order),
    or None when it can."""
    features = search.features
    name = _device_name(device)
    multi = device.multi and features.consumable_capacity
    if not req.admin and device.id in search.state.dedicated:
        return DeviceRefusal(name, "allocated", "already allocated")
    if features.consumable_capacity and not search.capacity_fits(req, device):
        asked = ", ".join(f"{k}={v.render()}" for k, v in (req.capacity or {}).items())
        return DeviceRefusal(
            name, "capacity", f"not enough capacity left{' for ' + asked if asked else ''}"
        )
    if device.consumes:
        if not features.partitionable_devices:
            return DeviceRefusal(name, "counters", "consumes counters (gate off)")
        in_use = device.id in search.state.capacity
        if not (multi and in_use):
            if not search._take_counters(device, pool):
                return DeviceRefusal(name, "counters", _counters_text(search, device, pool))
            search._release_counters(device, pool)
    if features.device_taints and device.taints:
        untolerated = [t for t in device.taints if not search._tolerated(t, req)]
        if untolerated:
            text = ", ".join(
                f"{t.get('key')}={t.get('value') or ''}:{t.get('effect')}" for t in untolerated
            )
            return DeviceRefusal(name, "taints", f"taint not tolerated: {text}")
    for constraint in search.plans[ci].constraints:
        if not constraint.applies(req.base_name, req.subrequest):
            continue
        if lookup_attribute(device, constraint.attribute) is None:
            return DeviceRefusal(
                name, "constraint", f"{_kind(constraint)} {constraint.attribute}: no such attribute"
            )
    return None


def _counters_text(search: Search, device: Device, pool: Pool) -> str:
    """What the device's counters need, and what the pool has left of each."""
    left = search._available_counters(pool)
    parts = []
    for set_name, counters in device.counters():
        have = left.get(set_name, {})
        amounts = ", ".join(
            f"{k} {format_binary(v)} of {format_binary(have.get(k, Fraction(0)))} left"
            for k, v in sorted(counters.items())
        )
        parts.append(f"{set_name} {amounts}")
    return "needs " + "; ".join(parts)


def _kind(constraint: Constraint) -> str:
    return "matchAttribute" if isinstance(constraint, MatchAttribute) else "distinctAttribute"


def _value(device: Device, attribute: str) -> Any:
    """The attribute's scalar value, comparable; None for a list-typed one (not analysed)."""
    found = lookup_attribute(device, attribute) or {}
    if any(isinstance(v, list) for v in found.values()):
        return None
    return tuple(sorted((k, str(v)) for k, v in found.items()))


def _check_constraint(
    constraint: Constraint,
    explained: list[tuple[RequestExplanation, Request, list[Device]]],
) -> None:
    """Refuse the usable devices a constraint rules out together with the other requests."""
    scope = [(e, r, u) for e, r, u in explained if constraint.applies(r.base_name, r.subrequest)]
    attribute = constraint.attribute
    # A prioritized list's subrequests are alternatives: one of them is allocated, so values
    # are pooled per claim request.
    by_request: dict[str, list[tuple[RequestExplanation, Request, list[Device]]]] = {}
    for item in scope:
        by_request.setdefault(item[1].base_name, []).append(item)
    if any(_value(d, attribute) is None for _, _, u in scope for d in u):
        return  # list-typed values: left to the search (``combination`` says when it fails)
    if isinstance(constraint, MatchAttribute):
        value_sets = [
            {_value(d, attribute) for _, _, u in items for d in u} for items in by_request.values()
        ]
        common = set.intersection(*value_sets) if value_sets else set()
        for e, _, usable in scope:
            keep = []
            for device in usable:
                if _value(device, attribute) in common:
                    keep.append(device)
                    continue
                e.refused.append(
                    DeviceRefusal(
                        _device_name(device),
                        "constraint",
                        f"matchAttribute {attribute}: no usable device of every other request "
                        "in scope has its value",
                    )
                )
            _narrow(e, usable, keep)
    elif isinstance(constraint, DistinctAttribute):
        values = {_value(d, attribute) for _, _, u in scope for d in u}
        # A lower bound of the different values the search needs: upstream remembers one
        # value per request (the latest), so each request needs one of its own, and a request
        # of two or more devices two (its second device differs from its first).
        sizes = [min(max(r.size, 1) for _, r, _ in items) for items in by_request.values()]
        needed = max(len(sizes), 2 if any(n > 1 for n in sizes) else 0)
        if len(values) < needed:
            for e, _, usable in scope:
                e.refused.extend(
                    DeviceRefusal(
                        _device_name(d),
                        "constraint",
                        f"distinctAttribute {attribute}: {len(values)} different value(s) "
                        f"among the usable devices in scope, {needed} device(s) needed",
                    )
                    for d in usable
                )
                _narrow(e, usable, [])


def _narrow(e: RequestExplanation, usable: list[Device], keep: list[Device]) -> None:
    removed = [d for d in usable if d not in keep]
    usable[:] = keep
    e.usable = len(keep)
    if len(keep) < max(e.count, 1) and removed and e.closest is None:
        e.closest = next(r for r in e.refused if r.device == _device_name(removed[0]))
