"""A ResourceSlice's structure, checked as the API server of Kubernetes 1.36 does.

Upstream: ``validateResourceSliceSpec``, ``validateDevice``, ``validateCounterSet``,
``validateDeviceCounterConsumption``, ``validateDeviceAttribute`` and
``validateDeviceBindingParameters`` in ``pkg/apis/resource/validation/validation.go``; the
limits are :mod:`snapshot.validation.limits`'. The names in a slice, the pool's count and
generation and the one-of rule of ``nodeName``/``nodeSelector``/``allNodes``/
``perDeviceNodeSelection`` are :mod:`snapshot.validation.names`'. Every rule, and whether
drasnap checks it: ``docs/validation.md``.

As upstream's ``validateSet``, a list over its size limit is reported once, as ``Too many``,
and its items are not looked at further here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

from drasnap.snapshot.validation.capacity_policies import check_request_policy
from drasnap.snapshot.validation.context import FieldPath
from drasnap.snapshot.validation.core import check_node_selector
from drasnap.snapshot.validation.limits import (
    BINDING_CONDITIONS_MAX_SIZE,
    BINDING_FAILURE_CONDITIONS_MAX_SIZE,
    DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH,
    DEVICE_TAINTS_MAX_LENGTH,
    RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE,
    RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE,
    RESOURCE_SLICE_MAX_COUNTER_SETS,
    RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET,
    RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION,
    RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE,
    RESOURCE_SLICE_MAX_DEVICES,
    RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES,
)
from drasnap.snapshot.validation.problems import Checker, Shown, as_list, as_map

__all__ = ["check_binding_conditions", "check_slice"]

# The list-typed attribute values (DRAListTypeAttributes) and how Go prints an empty one.
_LIST_VALUES: Final = {"bools": "[]bool{}", "ints": "[]int64{}", "strings": "[]string{}",
                       "versions": "[]string{}"}  # fmt: skip
_LIST_KEYS: Final = frozenset(_LIST_VALUES)
_BINDING_KEYS: Final = frozenset({"bindingConditions", "bindingFailureConditions"})
_NODE_KEYS: Final = frozenset({"nodeName", "nodeSelector", "allNodes"})
_PER_DEVICE_ONE_OF: Final = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)
# The semver 2.0.0 grammar of validation.go's semverRe.
_NUMERIC: Final = r"(0|[1-9]\d*)"
_PRERELEASE: Final = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD: Final = r"[0-9a-zA-Z-]+"
_SEMVER_RE: Final = re.compile(
    rf"{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}(-{_PRERELEASE}(\.{_PRERELEASE})*)?"
    rf"(\+{_BUILD}(\.{_BUILD})*)?",
    re.ASCII,
)


def check_slice(c: Checker, obj: Mapping[str, Any]) -> None:
    """``validateResourceSliceSpec`` (names: :mod:`snapshot.validation.names`)."""
    spec = as_map(obj.get("spec"))
    selector = spec.get("nodeSelector")
    if type(selector) is dict:
        path: FieldPath = ("spec", "nodeSelector")
        check_node_selector(c, path, selector)
        terms = as_list(selector.get("nodeSelectorTerms"))
        if len(terms) != 1:
            # Upstream: this simplifies merging the selectors of devices from several slices.
            c.invalid(
                (*path, "nodeSelectorTerms"), terms, "must have exactly one node selector term"
            )
    # The engine dropped null fields: a present key is a set list, even an empty one.
    if "sharedCounters" in spec and "devices" in spec:
        c.invalid(("spec",), "", "only one of `sharedCounters` or `devices` is allowed")
    devices = as_list(spec.get("devices"))
    limit = RESOURCE_SLICE_MAX_DEVICES
    # Only a slice over the lower limit needs its devices looked at for advanced features.
    if len(devices) > RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES and any(
        _advanced(as_map(device)) for device in devices
    ):
        limit = RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES
    if not c.too_many(("spec", "devices"), devices, limit):
        per_device = spec.get("perDeviceNodeSelection") is True
        for index, device in enumerate(devices):
            _device(c, ("spec", "devices", index), as_map(device), per_device)
    counter_sets = as_list(spec.get("sharedCounters"))
    if not c.too_many(("spec", "sharedCounters"), counter_sets, RESOURCE_SLICE_MAX_COUNTER_SETS):
        for index, counter_set in enumerate(counter_sets):
            path = ("spec", "sharedCounters", index, "counters")
            counters = as_map(counter_set).get("counters")
            if not counters:
                c.missing(path)
            else:
                c.too_many(path, counters, RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET)


def _advanced(device: Mapping[str, Any]) -> bool:
    """A device that lowers the slice's device limit: taints, counters, list attributes."""
    if device.get("taints") or device.get("consumesCounters"):
        return True
    attributes = device.get("attributes")
    return type(attributes) is dict and any(
        not _LIST_KEYS.isdisjoint(as_map(a)) for a in attributes.values()
    )


def _device(c: Checker, path: FieldPath, device: Mapping[str, Any], per_device: bool) -> None:
    attributes = as_map(device.get("attributes"))
    capacity = as_map(device.get("capacity"))
    total = len(attributes) + len(capacity)
    if total > RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        c.invalid(
            path,
            total,
            "the total number of attributes and capacities must not exceed "
            f"{RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}",
        )
    # numEntriesDeviceAttribute: a scalar counts one, a list its items (an empty list: one).
    values = 0
    for name, attribute in attributes.items():
        attribute = as_map(attribute)
        if _LIST_KEYS.isdisjoint(attribute):
            values += 1
            text = attribute.get("string")
            # No string of at most 16 characters is over 64 bytes in UTF-8.
            if type(text) is str and len(text) > 16:
                _string_value(c, (*path, "attributes", name, "string"), text)
            elif "version" in attribute:
                version = attribute["version"]
                if type(version) is str and (len(version) > 16 or not _is_semver(version)):
                    _version_value(c, (*path, "attributes", name, "version"), version)
            continue
        values += sum(len(as_list(attribute.get(key))) for key in _LIST_VALUES) or 1
        _attribute(c, (*path, "attributes", name), attribute)
    if values > RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE:
        c.invalid(
            path,
            values,
            "the total number of attribute values must not exceed "
            f"{RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE}",
        )
    multiple = device.get("allowMultipleAllocations") is True
    for name, entry in capacity.items() if capacity else ():
        policy = as_map(entry).get("requestPolicy")
        if type(policy) is not dict:
            continue
        ppath = (*path, "capacity", name, "requestPolicy")
        if not multiple:
            c.forbidden(ppath, "allowMultipleAllocations must be true")
        else:
            check_request_policy(c, ppath, as_map(entry).get("value"), policy)
    taints = device.get("taints")
    if taints:
        c.too_many((*path, "taints"), taints, DEVICE_TAINTS_MAX_LENGTH)
    consumptions = device.get("consumesCounters")
    if consumptions:
        _consumes_counters(c, (*path, "consumesCounters"), as_list(consumptions))
    if per_device or not _NODE_KEYS.isdisjoint(device):
        _node_selection(c, path, device, per_device)
    if not _BINDING_KEYS.isdisjoint(device):
        check_binding_conditions(c, path, device)


def _attribute(c: Checker, path: FieldPath, attribute: Mapping[str, Any]) -> None:
    """``validateDeviceAttribute`` (the one-value rule: :mod:`snapshot.validation.names`)."""
    if isinstance(attribute.get("string"), str):
        _string_value(c, (*path, "string"), attribute["string"])
    if isinstance(attribute.get("version"), str):
        _version_value(c, (*path, "version"), attribute["version"])
    for key, empty in _LIST_VALUES.items():
        if key not in attribute:
            continue
        items = as_list(attribute[key])
        if not items:
            c.invalid((*path, key), Shown(empty), "must not be empty if specified")
        if key == "strings":
            for index, item in enumerate(items):
                if isinstance(item, str):
                    _string_value(c, (*path, key, index), item)
        elif key == "versions":
            for index, item in enumerate(items):
                if isinstance(item, str):
                    _version_value(c, (*path, key, index), item)


def _string_value(c: Checker, path: FieldPath, value: str) -> None:
    if len(value.encode()) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        c.too_long(path, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)


@lru_cache(maxsize=4096)
def _is_semver(value: str) -> bool:
    """The same driver versions recur on every device of every slice: matched once each."""
    return _SEMVER_RE.fullmatch(value) is not None


def _version_value(c: Checker, path: FieldPath, value: str) -> None:
    if not _is_semver(value):
        c.invalid(path, value, "must be a string compatible with semver.org spec 2.0.0")
    _string_value(c, path, value)


def _consumes_counters(c: Checker, path: FieldPath, consumptions: list[Any]) -> None:
    limit = RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE
    if c.too_many(path, consumptions, limit):
        return
    for index, consumption in enumerate(consumptions):
        counters = as_map(consumption).get("counters")
        cpath = (*path, index, "counters")
        if not counters:
            c.missing(cpath)
        else:
            c.too_many(cpath, counters, RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION)
    c.unique(path, consumptions, "counterSet")


def _node_selection(
    c: Checker, path: FieldPath, device: Mapping[str, Any], per_device: bool
) -> None:
    """A device of a ``perDeviceNodeSelection`` slice says which nodes see it; others do not."""
    node_name = device.get("nodeName")
    selector = device.get("nodeSelector")
    all_nodes = device.get("allNodes")
    if not per_device:
        if node_name is not None or selector is not None or all_nodes is not None:
            c.invalid(
                path,
                None,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
        return
    chosen = []
    if isinstance(node_name, str):
        if node_name:
            chosen.append("`nodeName`")  # its format: snapshot.validation.names
        else:
            c.invalid((*path, "nodeName"), "", "must not be empty")
    if type(selector) is dict:
        chosen.append("`nodeSelector`")
        check_node_selector(c, (*path, "nodeSelector"), selector)
    if all_nodes is True:
        chosen.append("`allNodes`")
    elif all_nodes is False:
        c.invalid((*path, "allNodes"), False, "must be either unset or set to true")
    if not chosen:
        c.missing(path, _PER_DEVICE_ONE_OF)
    elif len(chosen) > 1:
        c.invalid(path, "{" + ", ".join(chosen) + "}", _PER_DEVICE_ONE_OF)


def check_binding_conditions(c: Checker, path: FieldPath, owner: Mapping[str, Any]) -> None:
    """``validateDeviceBindingParameters`` of a device or an allocation result (the condition
    names are label keys: :mod:`snapshot.validation.names`)."""
    conditions = owner.get("bindingConditions")
    failures = owner.get("bindingFailureConditions")
    cpath, fpath = (*path, "bindingConditions"), (*path, "bindingFailureConditions")
    c.too_many(cpath, conditions, BINDING_CONDITIONS_MAX_SIZE)
    c.too_many(fpath, failures, BINDING_FAILURE_CONDITIONS_MAX_SIZE)
    condition_list, failure_list = as_list(conditions), as_list(failures)
    c.unique(cpath, condition_list, None)
    c.unique(fpath, failure_list, None)
    for index, failure in enumerate(failure_list):
        if failure in condition_list:
            c.invalid(
                (*fpath, index), failure, "bindingFailureConditions must not overlap with "
                "bindingConditions"
            )  # fmt: skip
    if not condition_list and failure_list:
        c.invalid(
            cpath,
            Shown("[]string(nil)" if conditions is None else "[]string{}"),
            "bindingConditions are required to use bindingFailureConditions",
        )
    if not failure_list and condition_list:
        c.invalid(
            fpath,
            Shown("[]string(nil)" if failures is None else "[]string{}"),
            "bindingFailureConditions are required to use bindingConditions",
        )
