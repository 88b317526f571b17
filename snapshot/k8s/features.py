"""Kubernetes 1.36 feature gates that change how DRA devices are allocated.

The names, defaults and stages are Kubernetes 1.36's, read from the versioned feature specs of
``kubernetes/kubernetes`` (``pkg/features/kube_features.go`` up to 1.36; the scheduler's gates
now live in ``staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go``, whose
``VersionedSpecs`` keep the 1.36 entries): the spec in force for 1.36 is the last one whose
version is at most 1.36.

`parse_feature_gates` reads kube-scheduler's ``--feature-gates`` syntax (``A=true,B=false``),
`resolve_feature_gates` gives the full mapping a run records (defaults plus overrides), and
`allocator_features` turns a mapping into what the allocator branches on, as the scheduler's
DynamicResources plugin does (``AllocatorFeatures`` in
``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``).

>>> parse_feature_gates("DRAPrioritizedList=false, DRADeviceTaints=true")
{'DRADeviceTaints': True, 'DRAPrioritizedList': False}
>>> resolve_feature_gates({"DRAListTypeAttributes": True})["DRAListTypeAttributes"]
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from drasnap.snapshot.errors import FeatureGateError

__all__ = [
    "FEATURE_GATES",
    "KUBERNETES_VERSION",
    "AllocatorFeatures",
    "FeatureGate",
    "allocator_features",
    "parse_feature_gates",
    "resolve_feature_gates",
]

#: The Kubernetes release whose defaults unset gates take.
KUBERNETES_VERSION: Final = "1.36"


@dataclass(frozen=True, slots=True)
class FeatureGate:
    """One feature gate as Kubernetes 1.36 ships it."""

    name: str
    default: bool
    stage: str  # "Alpha", "Beta" or "GA"
    locked: bool  # LockToDefault: kube-scheduler refuses any other value
    effect: str  # what it changes, in a few words


def _gate(
    name: str, default: bool, stage: str, effect: str, *, locked: bool = False
) -> FeatureGate:
    return FeatureGate(name, default, stage, locked, effect)


#: The gates that change an allocation (or the DRA objects the scheduler sees), by name.
FEATURE_GATES: Final[Mapping[str, FeatureGate]] = {
    g.name: g
    for g in (
        _gate("DRAAdminAccess", True, "GA", "adminAccess requests", locked=True),
        _gate(
            "DRAConsumableCapacity",
            True,
            "Beta",
            "allowMultipleAllocations, capacity requests, request policies, shareID",
        ),
        _gate(
            "DRADeviceBindingConditions",
            True,
            "Beta",
            "bindingConditions, bindingFailureConditions, bindsToNode (with "
            "DRAResourceClaimDeviceStatus)",
        ),
        _gate("DRADeviceTaintRules", False, "Beta", "DeviceTaintRule objects taint devices"),
        _gate("DRADeviceTaints", True, "Beta", "device taints and request tolerations"),
        _gate(
            "DRAExtendedResource",
            True,
            "Beta",
            "extended resources backed by DeviceClasses (extendedResourceName)",
        ),
        _gate(
            "DRAListTypeAttributes",
            False,
            "Alpha",
            "list-typed attributes in constraints and CEL (includes())",
        ),
        _gate(
            "DRANodeAllocatableResources",
            False,
            "Alpha",
            "devices that consume node allocatable resources (nodeAllocatableResources)",
        ),
        _gate(
            "DRAPartitionableDevices",
            True,
            "Beta",
            "sharedCounters, consumesCounters, perDeviceNodeSelection",
        ),
        _gate("DRAPrioritizedList", True, "GA", "firstAvailable subrequests"),
        _gate(
            "DRAResourceClaimDeviceStatus",
            True,
            "Beta",
            "claim device status (needed by DRADeviceBindingConditions)",
        ),
        _gate("DynamicResourceAllocation", True, "GA", "DRA itself", locked=True),
    )
}

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _unknown(name: str) -> FeatureGateError:
    known = ", ".join(sorted(FEATURE_GATES))
    return FeatureGateError(
        f"unrecognized feature gate: {name} (drasnap knows the gates that change a DRA "
        f"allocation: {known})",
        gate=name,
    )


def parse_feature_gates(text: str) -> dict[str, bool]:
    """Parse kube-scheduler's ``--feature-gates`` value into {gate: enabled}, sorted by name.

    Entries are ``Name=bool`` separated by commas (blanks around them are ignored; booleans as
    Go's ``strconv.ParseBool`` reads them). An empty text gives ``{}``. Locked gates may only be
    set to their locked value, as kube-scheduler enforces.

    Raises:
        FeatureGateError: bad syntax, an unknown gate, or a locked gate set to another value.
    """
    result: dict[str, bool] = {}
    for entry in text.split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, raw = entry.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep:
            raise FeatureGateError(
                f"missing bool value for {name} in --feature-gates (expected Name=true or "
                "Name=false)",
                gate=name,
            )
        if raw in _TRUE:
            value = True
        elif raw in _FALSE:
            value = False
        else:
            raise FeatureGateError(
                f"invalid value of {name}={raw} in --feature-gates: expected true or false",
                gate=name,
            )
        result[name] = value
    resolve_feature_gates(result, enforce_locks=True)  # names and locks
    return {name: result[name] for name in sorted(result)}


def resolve_feature_gates(
    overrides: Mapping[str, bool] | None = None, *, enforce_locks: bool = False
) -> dict[str, bool]:
    """Every gate of `FEATURE_GATES` with its value: the override if given, else the 1.36 default.

    The mapping is sorted by name, ready to be recorded with a run. ``enforce_locks`` refuses a
    locked gate set to another value, as kube-scheduler does; the allocator itself accepts it,
    so that upstream's gate-off behaviour stays reachable (upstream's own tests use it).

    Raises:
        FeatureGateError: an unknown gate, a value that is not a bool, or (with
            ``enforce_locks``) a locked gate set to another value.
    """
    resolved = {name: gate.default for name, gate in sorted(FEATURE_GATES.items())}
    for name, value in (overrides or {}).items():
        gate = FEATURE_GATES.get(name)
        if gate is None:
            raise _unknown(name)
        if not isinstance(value, bool):
            raise FeatureGateError(
                f"feature gate {name}: expected true or false, not {value!r}", gate=name
            )
        if enforce_locks and gate.locked and value != gate.default:
            raise FeatureGateError(
                f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to "
                f"{str(gate.default).lower()} in Kubernetes {KUBERNETES_VERSION}",
                gate=name,
            )
        resolved[name] = value
    return resolved


@dataclass(frozen=True, slots=True)
class AllocatorFeatures:
    """What the allocator branches on: upstream's ``structured.Features``."""

    admin_access: bool
    consumable_capacity: bool
    device_binding_and_status: bool
    device_taints: bool
    device_taint_rules: bool
    list_type_attributes: bool
    partitionable_devices: bool
    prioritized_list: bool


_cache: dict[tuple[tuple[str, bool], ...], AllocatorFeatures] = {}


def allocator_features(gates: Mapping[str, bool] | None = None) -> AllocatorFeatures:
    """The allocator's switches for these gates (unset gates take their 1.36 defaults).

    Raises:
        FeatureGateError: an unknown gate or a value that is not a bool.
    """
    key = tuple(sorted(gates.items())) if gates else ()
    found = _cache.get(key)
    if found is not None:
        return found
    g = resolve_feature_gates(gates)
    found = AllocatorFeatures(
        admin_access=g["DRAAdminAccess"],
        consumable_capacity=g["DRAConsumableCapacity"],
        device_binding_and_status=(
            g["DRADeviceBindingConditions"] and g["DRAResourceClaimDeviceStatus"]
        ),
        device_taints=g["DRADeviceTaints"],
        device_taint_rules=g["DRADeviceTaintRules"],
        list_type_attributes=g["DRAListTypeAttributes"],
        partitionable_devices=g["DRAPartitionableDevices"],
        prioritized_list=g["DRAPrioritizedList"],
    )
    if len(_cache) < 1024:
        _cache[key] = found
    return found
