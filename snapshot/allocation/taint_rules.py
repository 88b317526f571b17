"""DeviceTaintRules: taints an administrator puts on devices without touching their slices.

Kubernetes 1.36 serves ``DeviceTaintRule`` as ``resource.k8s.io/v1beta2`` (beta, behind the
DRADeviceTaintRules gate, off by default; ``v1`` in 1.37 has the same shape). The scheduler
does not see the rules themselves: its ResourceSlice tracker
(``k8s.io/dynamic-resource-allocation/resourceslice/tracker/tracker.go``, ``applyPatches``)
hands the allocator slices whose devices carry the rules' taints, appended to the taints the
driver published. A rule selects devices by ``spec.deviceSelector``: ``driver``, ``pool`` and
``device`` name, each optional (an absent selector selects every device). Its
``spec.taint`` (``key``, ``value``, ``effect``, ``timeAdded``) is copied onto each selected
device. Rules apply in name order (the order of taints does not change an allocation).

`apply_device_taint_rules` is pure: it returns new slice dicts for the slices a rule touches
and the same objects for the others, and remembers its answer per (slice, rules) so that the
allocator's per-slice caches keep working across calls.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from drasnap.snapshot.errors import AllocationError
from drasnap.snapshot.k8s.objects import raw_name as _name

__all__ = ["DEVICE_TAINT_RULE_API_VERSIONS", "apply_device_taint_rules", "check_device_taint_rule"]

#: The API versions accepted for DeviceTaintRule (v1beta2 is Kubernetes 1.36's).
DEVICE_TAINT_RULE_API_VERSIONS: Final = (
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1alpha3",
)
_SELECTOR_FIELDS: Final = frozenset({"driver", "pool", "device"})
_TAINT_FIELDS: Final = frozenset({"key", "value", "effect", "timeAdded"})
_SPEC_FIELDS: Final = frozenset({"deviceSelector", "taint"})
_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute", "None"})

Obj = Mapping[str, Any]
# (driver, pool, device) selector values (None: any) and the taint to add.
_Rule = tuple[str | None, str | None, str | None, dict[str, Any]]

_CACHE_LIMIT = 100_000
_patched: dict[int, tuple[Obj, tuple[Any, ...], Obj]] = {}


def check_device_taint_rule(rule: Obj) -> None:
    """Refuse a DeviceTaintRule the scheduler would not read as drasnap does.

    Raises:
        AllocationError: an unknown apiVersion or kind, a selector or taint field drasnap does
            not know (for example the CEL ``selectors`` of Kubernetes 1.33's v1alpha3), or a
            taint without key or with an unknown effect; the message names the rule and field.
    """
    name = _name(rule)

    def refuse(field: str, what: str) -> AllocationError:
        return AllocationError(
            f"DeviceTaintRule {name}: {field}: {what}",
            kind="DeviceTaintRule",
            name=name,
            field=field,
        )

    api_version = rule.get("apiVersion")
    if api_version is not None and api_version not in DEVICE_TAINT_RULE_API_VERSIONS:
        raise refuse("apiVersion", f"expected one of {', '.join(DEVICE_TAINT_RULE_API_VERSIONS)}")
    if rule.get("kind") not in (None, "DeviceTaintRule"):
        raise refuse("kind", "expected DeviceTaintRule")
    spec = rule.get("spec") or {}
    for key in spec:
        if key not in _SPEC_FIELDS:
            raise refuse(f"spec.{key}", "unknown field of DeviceTaintRuleSpec")
    for key in spec.get("deviceSelector") or {}:
        if key not in _SELECTOR_FIELDS:
            raise refuse(
                f"spec.deviceSelector.{key}",
                "not supported: Kubernetes 1.36 selects devices by driver, pool and device only",
            )
    taint = spec.get("taint")
    if not isinstance(taint, Mapping) or not taint.get("key"):
        raise refuse("spec.taint.key", "a taint needs a key")
    for key in taint:
        if key not in _TAINT_FIELDS:
            raise refuse(f"spec.taint.{key}", "unknown field of DeviceTaint")
    if taint.get("effect") not in _EFFECTS:
        raise refuse(
            "spec.taint.effect",
            f"expected NoSchedule, NoExecute or None, not {taint.get('effect')!r}",
        )


def _parse(rules: Iterable[Obj]) -> tuple[_Rule, ...]:
    parsed = []
    for rule in sorted(rules, key=_name):
        check_device_taint_rule(rule)
        spec = rule.get("spec") or {}
        selector = spec.get("deviceSelector") or {}
        parsed.append(
            (
                selector.get("driver"),
                selector.get("pool"),
                selector.get("device"),
                dict(spec["taint"]),
            )
        )
    return tuple(parsed)


def _key(rules: Sequence[_Rule]) -> tuple[Any, ...]:
    return tuple(
        (driver, pool, device, tuple(sorted((k, str(v)) for k, v in taint.items())))
        for driver, pool, device, taint in rules
    )


def apply_device_taint_rules(slices: Iterable[Obj], rules: Iterable[Obj]) -> list[Obj]:
    """The slices with the rules' taints appended to the devices they select.

    Slices no rule touches are returned as they are (the same objects); inputs are never
    mutated.

    >>> slice_ = {"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com",
    ...     "pool": {"name": "n1"}, "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}
    >>> rule = {"metadata": {"name": "broken"}, "spec": {"deviceSelector": {"device": "gpu-1"},
    ...     "taint": {"key": "broken", "effect": "NoSchedule"}}}
    >>> [d.get("taints") for d in apply_device_taint_rules([slice_], [rule])[0]["spec"]["devices"]]
    [None, [{'key': 'broken', 'effect': 'NoSchedule'}]]

    Raises:
        AllocationError: a rule drasnap cannot apply (see `check_device_taint_rule`).
    """
    parsed = _parse(rules)
    key = _key(parsed)
    out = []
    for raw in slices:
        cached = _patched.get(id(raw))
        if cached is not None and cached[0] is raw and cached[1] == key:
            out.append(cached[2])
            continue
        patched = _patch(raw, parsed)
        if len(_patched) >= _CACHE_LIMIT:
            _patched.clear()
        _patched[id(raw)] = (raw, key, patched)
        out.append(patched)
    return out


def _patch(raw: Obj, rules: Sequence[_Rule]) -> Obj:
    spec = raw.get("spec") or {}
    driver = spec.get("driver")
    pool = (spec.get("pool") or {}).get("name")
    devices = list(spec.get("devices") or ())
    changed = False
    for rule_driver, rule_pool, rule_device, taint in rules:
        if rule_driver is not None and rule_driver != driver:
            continue
        if rule_pool is not None and rule_pool != pool:
            continue
        for i, device in enumerate(devices):
            if rule_device is not None and rule_device != device.get("name"):
                continue
            taints = [*(device.get("taints") or ()), copy.deepcopy(taint)]
            devices[i] = {**device, "taints": taints}
            changed = True
    if not changed:
        return raw
    return {**raw, "spec": {**spec, "devices": devices}}
