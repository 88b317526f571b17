"""Fields Kubernetes ignores (or that make it skip a device) under the given feature gates.

Not errors: with a gate off, upstream skips a slice with ``sharedCounters``, never allocates a
device with binding conditions, lets list attributes fail every constraint, and so on
(``internal/experimental`` of k8s.io/dynamic-resource-allocation). A user who simulates with
such gates off may not expect that; `ignored_fields` names each case so it can be shown as a
warning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drasnap.snapshot.allocation.fields import ROOTS, kind_of, label
from drasnap.snapshot.k8s.features import allocator_features

__all__ = ["ignored_fields"]


def ignored_fields(
    obj: Mapping[str, Any],
    features: Mapping[str, bool] | None = None,
    *,
    kind: str | None = None,
) -> list[str]:
    """Fields set in ``obj`` that Kubernetes ignores (or that make it skip a device) under
    these gates, one sentence each: worth a warning.

    Raises:
        ArgumentError: ``obj`` is not a kind the allocator reads.
        FeatureGateError: an unknown feature gate.
    """
    kind = kind_of(obj, kind)
    gates = allocator_features(features)
    who = label(obj, kind)
    notes: list[str] = []
    if kind == "ResourceSlice":
        spec = obj.get("spec") or {}
        if not gates.partitionable_devices:
            if spec.get("sharedCounters"):
                notes.append(
                    "spec.sharedCounters: the slice is skipped (DRAPartitionableDevices is off)"
                )
            if spec.get("perDeviceNodeSelection") is not None:
                notes.append(
                    "spec.perDeviceNodeSelection: the slice is skipped (DRAPartitionableDevices "
                    "is off)"
                )
        for i, device in enumerate(spec.get("devices") or ()):
            where = f"spec.devices[{i}]"
            if device.get("consumesCounters") and not gates.partitionable_devices:
                notes.append(
                    f"{where}.consumesCounters: the device is never allocated "
                    "(DRAPartitionableDevices is off)"
                )
            if device.get("taints") and not gates.device_taints:
                notes.append(f"{where}.taints: ignored (DRADeviceTaints is off)")
            if device.get("bindingConditions") and not gates.device_binding_and_status:
                notes.append(
                    f"{where}.bindingConditions: the device is never allocated "
                    "(DRADeviceBindingConditions and DRAResourceClaimDeviceStatus must both be on)"
                )
            if device.get("allowMultipleAllocations") and not gates.consumable_capacity:
                notes.append(
                    f"{where}.allowMultipleAllocations: the device is allocated to one claim at a "
                    "time (DRAConsumableCapacity is off)"
                )
            if not gates.list_type_attributes:
                for name, attribute in (device.get("attributes") or {}).items():
                    if any(
                        attribute.get(k) is not None
                        for k in ("ints", "bools", "strings", "versions")
                    ):
                        notes.append(
                            f'{where}.attributes["{name}"]: a list never satisfies a constraint '
                            "(DRAListTypeAttributes is off)"
                        )
    elif kind in ("ResourceClaim", "ResourceClaimTemplate") and not gates.device_taints:
        path, _ = ROOTS[kind]
        claim_spec: Any = obj
        for key in path:
            claim_spec = (claim_spec or {}).get(key)
        requests = ((claim_spec or {}).get("devices") or {}).get("requests") or ()
        for i, request in enumerate(requests):
            if (request.get("exactly") or {}).get("tolerations"):
                notes.append(
                    f"spec.devices.requests[{i}].exactly.tolerations: not needed, taints are "
                    "ignored (DRADeviceTaints is off)"
                )
    return [f"{who}: {note}" for note in notes]
