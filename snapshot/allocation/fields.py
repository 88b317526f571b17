"""Every field of the ``resource.k8s.io/v1`` objects the allocator reads: implemented, without
effect on an allocation, or refused.

`FIELDS` lists, per API type (the kubernetes client's model name without its ``V1`` prefix),
each wire field with its status and, for nested objects, the type inside (``Type`` for an
object, ``Type[]`` for a list of them, ``Type{}`` for a map to them). A test walks the client's
models and fails when a field is missing here, so a new API field is never silently ignored.

- `unsupported_fields` / `check_supported`: fields set in a claim, claim template, slice or
  class that drasnap does not implement (newer than Kubernetes 1.36, or alpha and not
  implemented), fields unknown to the API, and requests that use a feature its gate turns off
  (upstream's errors, found before any allocation). The CLI calls them before it writes
  anything; `snapshot.allocation.allocator.allocate` calls them on what it allocates.
- `snapshot.allocation.ignored.ignored_fields`: fields that are valid but that Kubernetes
  ignores under the given gates: worth a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from drasnap.snapshot.errors import AllocationError, ArgumentError
from drasnap.snapshot.k8s.features import AllocatorFeatures, allocator_features
from drasnap.snapshot.k8s.kinds import klog_kobj
from drasnap.snapshot.k8s.objects import raw_name

__all__ = [
    "FIELDS",
    "IMPLEMENTED",
    "NO_EFFECT",
    "REFUSED",
    "ROOTS",
    "check_claim",
    "check_object",
    "check_object_once",
    "check_supported",
    "kind_of",
    "label",
    "unsupported_fields",
]

IMPLEMENTED: Final = "implemented"
NO_EFFECT: Final = "no effect on an allocation"
REFUSED: Final = "refused"

_I, _N, _R = IMPLEMENTED, NO_EFFECT, REFUSED

#: API type -> wire field -> (status, nested type or None, why: for refused fields).
FIELDS: Final[Mapping[str, Mapping[str, tuple[str, str | None, str]]]] = {
    "ResourceSliceSpec": {
        "allNodes": (_I, None, ""),
        "devices": (_I, "Device[]", ""),
        "driver": (_I, None, ""),
        "nodeName": (_I, None, ""),
        "nodeSelector": (_I, "NodeSelector", ""),
        "partitionTypeAttribute": (_R, None, "partition type attributes (after Kubernetes 1.36)"),
        "perDeviceNodeSelection": (_I, None, ""),
        "pool": (_I, "ResourcePool", ""),
        "sharedCounters": (_I, "CounterSet[]", ""),
        "skipNodeOperations": (
            _R,
            None,
            "optional node operations (DRAOptionalNodeOperations, after Kubernetes 1.36)",
        ),
    },
    "ResourcePool": {
        "generation": (_I, None, ""),
        "name": (_I, None, ""),
        "resourceSliceCount": (_I, None, ""),
    },
    "CounterSet": {"counters": (_I, "Counter{}", ""), "name": (_I, None, "")},
    "Counter": {"value": (_I, None, "")},
    "Device": {
        "allNodes": (_I, None, ""),
        "allowMultipleAllocations": (_I, None, ""),
        "attributes": (_I, "DeviceAttribute{}", ""),
        "bindingConditions": (_I, None, ""),
        "bindingFailureConditions": (_I, None, ""),
        "bindsToNode": (_I, None, ""),
        "capacity": (_I, "DeviceCapacity{}", ""),
        "consumesCounters": (_I, "DeviceCounterConsumption[]", ""),
        "name": (_I, None, ""),
        "nodeAllocatableResources": (
            _R,
            None,
            "devices that take node allocatable resources (DRANodeAllocatableResources, alpha "
            "in Kubernetes 1.36)",
        ),
        "nodeName": (_I, None, ""),
        "nodeSelector": (_I, "NodeSelector", ""),
        "taints": (_I, "DeviceTaint[]", ""),
    },
    "DeviceAttribute": {
        key: (_I, None, "")
        for key in ("bool", "bools", "int", "ints", "string", "strings", "version", "versions")
    },
    "DeviceCapacity": {
        "requestPolicy": (_I, "CapacityRequestPolicy", ""),
        "value": (_I, None, ""),
    },
    "CapacityRequestPolicy": {
        "default": (_I, None, ""),
        "validRange": (_I, "CapacityRequestPolicyRange", ""),
        "validValues": (_I, None, ""),
    },
    "CapacityRequestPolicyRange": {
        "max": (_I, None, ""),
        "min": (_I, None, ""),
        "step": (_I, None, ""),
    },
    "DeviceCounterConsumption": {
        "compatibilityGroups": (
            _R,
            None,
            "counter compatibility groups (DRADeviceCompatibilityGroups, after Kubernetes 1.36)",
        ),
        "counterSet": (_I, None, ""),
        "counters": (_I, "Counter{}", ""),
    },
    "DeviceTaint": {
        "effect": (_I, None, ""),
        "key": (_I, None, ""),
        "timeAdded": (_N, None, ""),
        "value": (_I, None, ""),
    },
    "DeviceClassSpec": {
        "config": (_I, "DeviceClassConfiguration[]", ""),
        # Matches pods' extended resources to the class: the scheduler's business, outside
        # the allocator.
        "extendedResourceName": (_N, None, ""),
        "selectors": (_I, "DeviceSelector[]", ""),
    },
    "DeviceClassConfiguration": {"opaque": (_I, "OpaqueDeviceConfiguration", "")},
    "OpaqueDeviceConfiguration": {"driver": (_I, None, ""), "parameters": (_I, None, "")},
    "DeviceSelector": {"cel": (_I, "CELDeviceSelector", "")},
    "CELDeviceSelector": {"expression": (_I, None, "")},
    "ResourceClaimSpec": {"devices": (_I, "DeviceClaim", "")},
    "DeviceClaim": {
        "config": (_I, "DeviceClaimConfiguration[]", ""),
        "constraints": (_I, "DeviceConstraint[]", ""),
        "requests": (_I, "DeviceRequest[]", ""),
    },
    "DeviceClaimConfiguration": {
        "opaque": (_I, "OpaqueDeviceConfiguration", ""),
        "requests": (_I, None, ""),
    },
    "DeviceConstraint": {
        "distinctAttribute": (_I, None, ""),
        "matchAttribute": (_I, None, ""),
        "requests": (_I, None, ""),
    },
    "DeviceRequest": {
        "exactly": (_I, "ExactDeviceRequest", ""),
        "firstAvailable": (_I, "DeviceSubRequest[]", ""),
        "name": (_I, None, ""),
    },
    "ExactDeviceRequest": {
        "adminAccess": (_I, None, ""),
        "allocationMode": (_I, None, ""),
        "capacity": (_I, "CapacityRequirements", ""),
        "count": (_I, None, ""),
        "derivedAttributes": (
            _R,
            None,
            "derived attributes (DRADerivedAttributes, after Kubernetes 1.36)",
        ),
        "deviceClassName": (_I, None, ""),
        "selectors": (_I, "DeviceSelector[]", ""),
        "tolerations": (_I, "DeviceToleration[]", ""),
    },
    "DeviceSubRequest": {
        "allocationMode": (_I, None, ""),
        "capacity": (_I, "CapacityRequirements", ""),
        "count": (_I, None, ""),
        "derivedAttributes": (
            _R,
            None,
            "derived attributes (DRADerivedAttributes, after Kubernetes 1.36)",
        ),
        "deviceClassName": (_I, None, ""),
        "name": (_I, None, ""),
        "selectors": (_I, "DeviceSelector[]", ""),
        "tolerations": (_I, "DeviceToleration[]", ""),
    },
    "CapacityRequirements": {"requests": (_I, None, "")},
    "DeviceToleration": {
        "effect": (_I, None, ""),
        "key": (_I, None, ""),
        "operator": (_I, None, ""),
        # NoExecute eviction timing: the allocator only looks at whether a taint is tolerated.
        "tolerationSeconds": (_N, None, ""),
        "value": (_I, None, ""),
    },
    "NodeSelector": {"nodeSelectorTerms": (_I, "NodeSelectorTerm[]", "")},
    "NodeSelectorTerm": {
        "matchExpressions": (_I, "NodeSelectorRequirement[]", ""),
        "matchFields": (_I, "NodeSelectorRequirement[]", ""),
    },
    "NodeSelectorRequirement": {
        "key": (_I, None, ""),
        "operator": (_I, None, ""),
        "values": (_I, None, ""),
    },
}

#: Kind -> (path to the spec the allocator reads, its API type).
ROOTS: Final[Mapping[str, tuple[tuple[str, ...], str]]] = {
    "ResourceSlice": (("spec",), "ResourceSliceSpec"),
    "DeviceClass": (("spec",), "DeviceClassSpec"),
    "ResourceClaim": (("spec",), "ResourceClaimSpec"),
    "ResourceClaimTemplate": (("spec", "spec"), "ResourceClaimSpec"),
}

_CACHE_LIMIT = 100_000
_checked: dict[int, tuple[Any, list[tuple[str, str]]]] = {}  # specs found clean


class _Shape:
    """A type of `FIELDS` prepared for the fast check: its keys, refused keys, nested types."""

    __slots__ = ("allowed", "leaf", "nested", "refused")

    def __init__(self, fields: Mapping[str, tuple[str, str | None, str]]) -> None:
        self.allowed = frozenset(fields)
        self.refused = tuple(key for key, (status, _, _) in fields.items() if status == REFUSED)
        self.nested = tuple(
            (key, nested.rstrip("[]{}"), nested[-2:] if nested[-2:] in ("[]", "{}") else "")
            for key, (status, nested, _) in fields.items()
            if nested is not None and status != REFUSED
        )
        self.leaf = not self.refused and not self.nested  # only its keys to check


_SHAPES: Final = {name: _Shape(fields) for name, fields in FIELDS.items()}


def _has_refused(type_name: str) -> bool:
    shape = _SHAPES[type_name]
    return bool(shape.refused) or any(_has_refused(nested) for _, nested, _ in shape.nested)


def _refused_checker(type_name: str) -> tuple[frozenset[str], Callable[[Any], bool]]:
    """The keys worth looking at in a value of this type, and a function telling whether the
    value sets no refused field.

    Built once per type from `FIELDS`: it looks only at refused fields and descends only into
    the nested types that can hold one (a value without any of the keys worth looking at is
    skipped at C speed), so that the allocator can check every claim it reads.
    """
    shape = _SHAPES[type_name]
    refused = frozenset(shape.refused)
    children = [
        (key, *_refused_checker(nested), container)
        for key, nested, container in shape.nested
        if _has_refused(nested)
    ]
    interesting = refused | {key for key, _, _, _ in children}

    def check(value: Any) -> bool:
        get = getattr(value, "get", None)
        if get is None:
            return True
        if refused and not refused.isdisjoint(value):
            for key in refused:
                if _is_set(get(key)):
                    return False
        for key, keys, child, container in children:
            item = get(key)
            if not item:
                continue
            if container == "[]":
                for element in item:
                    if not keys.isdisjoint(element) and not child(element):
                        return False
            elif container == "{}":
                for element in item.values():
                    if not keys.isdisjoint(element) and not child(element):
                        return False
            elif not child(item):
                return False
        return True

    return interesting, check


_NO_REFUSED: Final = {
    kind: _refused_checker(type_name)[1] for kind, (_, type_name) in ROOTS.items()
}


def _clean(value: Any, type_name: str) -> bool:
    """Whether nothing under ``value`` is refused or unknown (the common case, kept cheap)."""
    if type(value) is not dict and not isinstance(value, Mapping):
        return True
    shape = _SHAPES[type_name]
    if not value.keys() <= shape.allowed:
        return False
    for key in shape.refused:
        if _is_set(value.get(key)):
            return False
    for key, nested, container in shape.nested:
        item = value.get(key)
        if not item:
            continue
        if container:
            elements = item.values() if container == "{}" else item
            inner = _SHAPES[nested]
            if inner.leaf:
                allowed = inner.allowed
                if not all(type(e) is not dict or e.keys() <= allowed for e in elements):
                    return False
            elif not all(_clean(element, nested) for element in elements):
                return False
        elif not _clean(item, nested):
            return False
    return True


def _is_set(value: Any) -> bool:
    return value is not None and value is not False and value != [] and value != {}


def _walk(value: Any, type_name: str, path: str) -> Iterator[tuple[str, str]]:
    """(field path, problem) for every refused or unknown field under ``value``."""
    if not isinstance(value, Mapping):
        return
    known = FIELDS[type_name]
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        entry = known.get(key)
        if entry is None:
            yield where, f"unknown field of {type_name}"
            continue
        status, nested, why = entry
        if status == REFUSED:
            if _is_set(item):
                yield where, f"not implemented by drasnap: {why}"
            continue
        if nested is None or item is None:
            continue
        if nested.endswith("[]"):
            for i, element in enumerate(item or ()):
                yield from _walk(element, nested[:-2], f"{where}[{i}]")
        elif nested.endswith("{}"):
            for name, element in (item or {}).items():
                yield from _walk(element, nested[:-2], f'{where}["{name}"]')
        else:
            yield from _walk(item, nested, where)


def kind_of(obj: Mapping[str, Any], kind: str | None) -> str:
    """The kind to check ``obj`` as (``kind``, else its own), if the allocator reads that kind.

    Raises:
        ArgumentError: the allocator does not read that kind.
    """
    kind = kind or str(obj.get("kind") or "")
    if kind not in ROOTS:
        raise ArgumentError(
            f"cannot check a {kind or 'object without kind'}: expected one of {', '.join(ROOTS)}"
        )
    return kind


def _problems(
    obj: Mapping[str, Any], kind: str, features: AllocatorFeatures | None
) -> list[tuple[str, str]]:
    path, type_name = ROOTS[kind]
    spec: Any = obj
    for key in path:
        spec = (spec or {}).get(key) if isinstance(spec, Mapping) else None
    problems = [] if _clean(spec, type_name) else list(_walk(spec, type_name, ".".join(path)))
    if features is not None and type_name == "ResourceClaimSpec":
        problems.extend(_disabled_requests(spec or {}, ".".join(path), features))
    return problems


def _disabled_requests(
    spec: Mapping[str, Any], path: str, features: AllocatorFeatures
) -> Iterator[tuple[str, str]]:
    """Requests that upstream refuses under these gates (its allocation errors, found early)."""
    requests = ((spec.get("devices") or {}).get("requests")) or ()
    for i, request in enumerate(requests):
        where = f"{path}.devices.requests[{i}]"
        name = request.get("name", "")
        exactly = request.get("exactly") or {}
        if request.get("firstAvailable") and not features.prioritized_list:
            yield (
                f"{where}.firstAvailable",
                f"request {name}: has subrequests, but the DRAPrioritizedList feature is disabled",
            )
        if not features.consumable_capacity:
            if exactly.get("capacity") is not None:
                yield (
                    f"{where}.exactly.capacity",
                    f"request {name}: has capacity requests, but the DRAConsumableCapacity "
                    "feature is disabled",
                )
            for j, sub in enumerate(request.get("firstAvailable") or ()):
                if sub.get("capacity") is not None:
                    yield (
                        f"{where}.firstAvailable[{j}].capacity",
                        f"subrequest {sub.get('name', '')}: has capacity requests, but the "
                        "DRAConsumableCapacity feature is disabled",
                    )
        if exactly.get("adminAccess") is not None and not features.admin_access:
            yield (
                f"{where}.exactly.adminAccess",
                f"request {name}: admin access is requested, but the feature is disabled",
            )


def label(obj: Mapping[str, Any], kind: str) -> str:
    """``Kind namespace/name`` (or ``Kind name``) for messages: the kind and `klog_kobj`."""
    return f"{kind} {klog_kobj(obj)}"


def unsupported_fields(
    obj: Mapping[str, Any],
    features: Mapping[str, bool] | None = None,
    *,
    kind: str | None = None,
) -> list[str]:
    """Why drasnap cannot allocate with this object, one sentence per field; [] when it can.

    ``obj`` is a ResourceClaim, ResourceClaimTemplate, ResourceSlice or DeviceClass (its
    ``kind``, or ``kind=``). Refused: fields drasnap does not implement, fields unknown to the
    API, and (claims) requests using a feature that ``features`` (default: Kubernetes 1.36's)
    turns off.

    >>> request = {"name": "r", "firstAvailable": [{"name": "a", "deviceClassName": "g"}]}
    >>> claim = {"kind": "ResourceClaim", "metadata": {"name": "c"},
    ...     "spec": {"devices": {"requests": [request]}}}
    >>> unsupported_fields(claim, {"DRAPrioritizedList": True})
    []
    >>> unsupported_fields(claim, {"DRAPrioritizedList": False})[0].split(": ")[:3]
    ['ResourceClaim c', 'spec.devices.requests[0].firstAvailable', 'request r']

    Raises:
        ArgumentError: ``obj`` is not one of those kinds.
        FeatureGateError: an unknown feature gate.
    """
    kind = kind_of(obj, kind)
    problems = _problems(obj, kind, allocator_features(features))
    name = label(obj, kind)
    return [f"{name}: {where}: {what}" for where, what in problems]


def check_supported(
    obj: Mapping[str, Any],
    features: Mapping[str, bool] | None = None,
    *,
    kind: str | None = None,
) -> None:
    """Raise for the first problem `unsupported_fields` finds.

    Raises:
        AllocationError: naming the object and the field (also as ``kind``, ``name``,
            ``field`` attributes).
        ArgumentError: ``obj`` is not a kind the allocator reads.
        FeatureGateError: an unknown feature gate.
    """
    kind = kind_of(obj, kind)
    problems = _problems(obj, kind, allocator_features(features))
    if problems:
        _raise(obj, kind, problems[0])


def _raise(obj: Mapping[str, Any], kind: str, problem: tuple[str, str]) -> None:
    where, what = problem
    raise AllocationError(
        f"{label(obj, kind)}: {where}: {what}",
        kind=kind,
        name=raw_name(obj),
        field=where,
    )


def check_object(obj: Mapping[str, Any], kind: str) -> None:
    """What the allocator checks on each object it reads: no refused field is set.

    Cheaper than `check_supported`: it looks only where a refused field can be, and leaves
    unknown fields to `snapshot.k8s.objects.validate` at the edge and to the up-front check.

    Raises:
        AllocationError: as `check_supported`.
    """
    path, _ = ROOTS[kind]
    inner: Any = obj
    for key in path:
        inner = inner.get(key) if isinstance(inner, Mapping) else None
    if inner is None or _NO_REFUSED[kind](inner):
        return
    problems = [p for p in _problems(obj, kind, None) if p[1].startswith("not implemented")]
    _raise(obj, kind, problems[0])


_CLAIM_SPEC_OK: Final = _refused_checker("ResourceClaimSpec")[1]


def check_claim(claim: Mapping[str, Any]) -> None:
    """`check_object` for a ResourceClaim, on the allocator's hot path.

    Raises:
        AllocationError: as `check_supported`.
    """
    spec = claim.get("spec")
    if spec is not None and not _CLAIM_SPEC_OK(spec):
        check_object(claim, "ResourceClaim")


def check_object_once(obj: Mapping[str, Any], kind: str) -> None:
    """`check_object`, remembered per identity of the spec (for slices and classes, read on
    every allocation: objects are immutable values in this project).

    Raises:
        AllocationError: as `check_supported`.
    """
    spec = obj.get("spec")
    found = _checked.get(id(spec))
    if found is not None and found[0] is spec:
        return
    check_object(obj, kind)
    if len(_checked) >= _CACHE_LIMIT:
        _checked.clear()
    _checked[id(spec)] = (spec, [])
