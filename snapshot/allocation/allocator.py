"""The structured-parameters DRA allocator: which devices of a node a pod's claims get.

A Python port of the scheduler's allocator in ``k8s.io/dynamic-resource-allocation/structured``
(the ``experimental`` variant, which every Kubernetes 1.36 feature needs; its deterministic
pool order), with Kubernetes 1.36's feature gates (`snapshot.k8s.features`). For one node it
gathers the pools (`snapshot.allocation.pools`), checks every claim
(`snapshot.allocation.requests`), then runs a depth-first search over claims -> requests ->
(subrequests) -> device slots (`snapshot.allocation.search`); the first complete solution
wins and becomes one ``status.allocation`` per claim (`snapshot.allocation.results`). Errors
and their texts are upstream's.

Implemented, each behind its gate as upstream does:

- ExactCount (``count`` defaults to 1) and All, DeviceClass and request CEL selectors
  (`snapshot.cel`), the 32-device claim limit, pool generations / ``resourceSliceCount`` /
  invalid pools, nodeName / nodeSelector / allNodes slices, result config and node selector;
- adminAccess (DRAAdminAccess);
- prioritized lists: ``firstAvailable`` subrequests, results named ``<request>/<subrequest>``
  (DRAPrioritizedList);
- partitionable devices: ``sharedCounters`` / ``consumesCounters`` across the devices of a
  counter set, ``perDeviceNodeSelection`` (DRAPartitionableDevices; off: such slices are
  skipped and counter-consuming devices never allocated);
- device taints (NoSchedule/NoExecute) and request tolerations, copied into the result
  (DRADeviceTaints; off: taints are ignored); DeviceTaintRules (`snapshot.allocation.taint_rules`,
  DRADeviceTaintRules, off by default in 1.36: rules given with the gate off are an error
  rather than silently ignored);
- consumable capacity: ``allowMultipleAllocations``, ``capacity.requests``, request policies,
  ``consumedCapacity`` and ``shareID`` in the result (DRAConsumableCapacity; off: capacity
  requests are an error, multi-allocatable devices are dedicated);
- ``matchAttribute`` and ``distinctAttribute`` constraints, with list-typed attributes and CEL
  ``includes()`` (DRAListTypeAttributes);
- binding conditions: ``bindingConditions``, ``bindingFailureConditions`` copied into the
  result, ``bindsToNode`` (DRADeviceBindingConditions + DRAResourceClaimDeviceStatus; off:
  devices with binding conditions are never chosen).

Fields of ``resource.k8s.io/v1`` that could change an allocation and are not implemented
(newer than 1.36, or alpha and unimplemented) are refused by name (`snapshot.allocation.fields`),
so nothing is silently ignored.

Where upstream's bookkeeping decides an answer, it is kept, so that drasnap answers what the
scheduler would: available counters are keyed by pool name only; counters taken by a device
that a taint, a constraint or its capacity then refuses stay taken for the rest of the
attempt; ``distinctAttribute`` remembers one value per request name (see
`snapshot.allocation.search` and `snapshot.allocation.constraints`).

Performance: CEL programs are compiled once per expression text, each device's CEL activation
is built once, selector results are cached per (device, expression, CEL environment) across
calls, and a pool is built once per set of slices. This relies on ResourceSlice and
DeviceClass dicts never being mutated after creation (see `snapshot.allocation.pools`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from drasnap.snapshot.allocation import fields
from drasnap.snapshot.allocation.pools import gather_pools
from drasnap.snapshot.allocation.requests import MAX_DEVICES_PER_CLAIM, plan_claims
from drasnap.snapshot.allocation.results import allocation_result
from drasnap.snapshot.allocation.search import Search
from drasnap.snapshot.allocation.state import allocated_state
from drasnap.snapshot.allocation.taint_rules import apply_device_taint_rules
from drasnap.snapshot.errors import AllocationError
from drasnap.snapshot.k8s.features import AllocatorFeatures, allocator_features
from drasnap.snapshot.k8s.objects import raw_name as _name

__all__ = ["MAX_DEVICES_PER_CLAIM", "allocate"]

Obj = Mapping[str, Any]
_DEFAULT_GATES = allocator_features()


def allocate(
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
) -> list[dict[str, Any]] | None:
    """Allocate devices on ``node`` for all ``claims`` together, or find that they do not fit.

    ``classes`` are DeviceClass dicts (or a mapping name -> class), ``slices`` every
    ResourceSlice. The allocated state other claims leave (upstream's ``AllocatedState``):

    - ``allocated_devices``: (driver, pool, device) of devices held exclusively;
    - ``allocated_shared_devices``: (driver, pool, device, shareID) of shares of devices that
      allow multiple allocations (or dicts with those keys);
    - ``allocated_capacity``: (driver, pool, device, {capacity: quantity}) consumed on such
      devices (or dicts with ``consumedCapacity``, or a mapping device -> consumed); entries
      of one device add up.

    ``features`` maps Kubernetes feature-gate names to booleans (unset gates take Kubernetes
    1.36's defaults, `snapshot.k8s.features`), or is the `AllocatorFeatures` resolved from them
    once by a caller that allocates again and again. ``device_taint_rules`` are DeviceTaintRule
    objects whose taints apply to the devices they select (needs DRADeviceTaintRules, off by
    default in 1.36). Inputs are never mutated.

    Returns:
        One ``status.allocation`` dict per claim, in claim order
        (``{"devices": {"results": [...], "config": [...]}, "nodeSelector": {...}}``, keys
        omitted when empty/null), or None when the claims cannot all be allocated on the node.

    Raises:
        AllocationError: what upstream treats as an error (invalid CEL, unknown class, "All"
            on an incomplete pool, too many devices, empty constraint, "invalid resource pools
            were encountered", a request using a disabled feature, ...), or an input using a
            field drasnap does not implement (named with its object).
        FeatureGateError: an unknown feature gate.

    >>> gpu = {"metadata": {"name": "gpu"}, "spec": {"selectors": [
    ...     {"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
    >>> slice_ = {"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com",
    ...     "nodeName": "n1", "pool": {"name": "n1", "generation": 0, "resourceSliceCount": 1},
    ...     "devices": [{"name": "gpu-0"}]}}
    >>> claim = {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [
    ...     {"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}
    >>> node = {"metadata": {"name": "n1"}}
    >>> allocate(node, [claim], classes=[gpu], slices=[slice_])[0]["devices"]["results"]
    [{'request': 'r', 'driver': 'gpu.example.com', 'pool': 'n1', 'device': 'gpu-0'}]
    """
    if isinstance(features, AllocatorFeatures):
        gates = features
    else:
        gates = _DEFAULT_GATES if features is None else allocator_features(features)
    rules = list(device_taint_rules) if device_taint_rules else []
    if rules:
        if not gates.device_taint_rules:
            raise AllocationError(
                f"DeviceTaintRule {_name(rules[0])}: the DRADeviceTaintRules feature gate is "
                "disabled (its Kubernetes 1.36 default), so the scheduler would not apply it; "
                "enable the gate (DRADeviceTaintRules=true) or leave the rule out",
                kind="DeviceTaintRule",
                name=_name(rules[0]),
            )
        slices = apply_device_taint_rules(slices, rules)
    class_map = _class_map(classes)
    for claim in claims:
        fields.check_claim(claim)
    metadata = node.get("metadata") or {}
    node_name = str(metadata.get("name", ""))
    labels = metadata.get("labels") or {}
    pools = gather_pools(slices, node_name, labels, partitionable=gates.partitionable_devices)
    state = allocated_state(allocated_devices, allocated_shared_devices, allocated_capacity)
    claim_list = list(claims)
    search = Search(claim_list, pools, state, gates, node_name, labels)
    plans = plan_claims(claim_list, class_map, gates, search.expand_all)
    if not search.run(plans):
        if any(pool.invalid for pool in pools):
            # Upstream wraps ErrFailedAllocationOnNode: a failure of this node only.
            raise AllocationError("invalid resource pools were encountered")
        return None
    return [allocation_result(search, index) for index in range(len(claim_list))]


def _class_map(classes: Iterable[Obj] | Mapping[str, Obj]) -> Mapping[str, Obj]:
    if type(classes) is not list and isinstance(classes, Mapping):
        return classes
    return {_name(c): c for c in classes}
