"""Checks across DRA objects that a simulation can make before it writes anything.

Each object can be valid on its own and the set still be unusable: a claim (or claim template)
naming a DeviceClass that is not there, or a CEL selector that does not compile. The scheduler
finds these only when it tries to allocate, so a simulation would find them midway, after it
had written its starting state; :func:`check_dra_objects` finds them up front, naming the
object and the field, so that a mistake in the input never leaves a run behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from drasnap.snapshot import cel
from drasnap.snapshot.allocation.fields import unsupported_fields
from drasnap.snapshot.errors import AllocationError, ObjectValidationError
from drasnap.snapshot.k8s.features import allocator_features
from drasnap.snapshot.k8s.kinds import klog_kobj as _name
from drasnap.snapshot.k8s.objects import raw_name

__all__ = ["check_dra_objects"]

Obj = Mapping[str, Any]


def _selectors(selectors: Any, path: str) -> Iterator[tuple[str, str]]:
    for i, selector in enumerate(selectors or ()):
        expression = (selector.get("cel") or {}).get("expression")
        if isinstance(expression, str):
            yield f"{path}[{i}].cel.expression", expression


def _requests(devices: Obj, path: str) -> Iterator[tuple[str, Obj]]:
    """Every device request of a claim spec's ``devices``: ``exactly`` and each subrequest."""
    for i, request in enumerate(devices.get("requests") or ()):
        where = f"{path}.requests[{i}]"
        if request.get("exactly") is not None:
            yield f"{where}.exactly", request["exactly"]
        for j, sub in enumerate(request.get("firstAvailable") or ()):
            yield f"{where}.firstAvailable[{j}]", sub


def check_dra_objects(
    classes: Iterable[Obj],
    claims: Iterable[Obj] = (),
    templates: Iterable[Obj] = (),
    slices: Iterable[Obj] = (),
    *,
    features: Mapping[str, bool] | None = None,
    taint_rules: Iterable[Obj] = (),
    class_names: Iterable[str] = (),
) -> None:
    """Every field of the classes, claims, templates and slices is one the allocator implements
    (under ``features``, Kubernetes 1.36's gates by default), every DeviceClass a claim or
    claim template names exists, and every CEL selector compiles.

    ``class_names``: DeviceClasses that exist besides ``classes``, known by name only (those of
    a starting cluster, already checked, when a trace creates claims later).

    Raises:
        ObjectValidationError: the first object that fails, with its kind, name and field.
    """
    classes, claims, templates = list(classes), list(claims), list(templates)
    for rule in taint_rules:
        if not allocator_features(features).device_taint_rules:
            raise ObjectValidationError(
                f"DeviceTaintRule {_name(rule)}: the DRADeviceTaintRules feature gate is "
                "disabled (its Kubernetes 1.36 default), so the scheduler would not apply it; "
                "enable the gate (--feature-gates DRADeviceTaintRules=true) or leave the rule out",
                kind="DeviceTaintRule",
                name=_name(rule),
            )
    for kind, objects in (
        ("DeviceClass", classes),
        ("ResourceClaim", claims),
        ("ResourceClaimTemplate", templates),
        ("ResourceSlice", slices),
    ):
        for obj in objects:
            problems = unsupported_fields(obj, features, kind=kind)
            if problems:
                raise ObjectValidationError(problems[0], kind=kind, name=_name(obj))
    known: dict[str, Obj | None] = dict.fromkeys(class_names)
    for device_class in classes:
        name = raw_name(device_class)
        known[name] = device_class
        spec = device_class.get("spec") or {}
        for path, expression in _selectors(spec.get("selectors"), "spec.selectors"):
            _compiles(expression, "DeviceClass", name, path)
    owners = [("ResourceClaim", claim, "spec.devices") for claim in claims]
    owners += [("ResourceClaimTemplate", t, "spec.spec.devices") for t in templates]
    for kind, obj, devices_path in owners:
        spec = obj.get("spec") or {}
        if kind == "ResourceClaimTemplate":
            spec = spec.get("spec") or {}
        devices = spec.get("devices") or {}
        for path, request in _requests(devices, devices_path):
            class_name = request.get("deviceClassName")
            if class_name and class_name not in known:
                choices = ", ".join(sorted(known)) or "none"
                raise ObjectValidationError(
                    f"{kind} {_name(obj)}: {path}.deviceClassName: DeviceClass {class_name!r} "
                    f"not found (the DeviceClasses given: {choices})",
                    kind=kind,
                    name=_name(obj),
                    field=f"{path}.deviceClassName",
                )
            for selector_path, expression in _selectors(
                request.get("selectors"), f"{path}.selectors"
            ):
                _compiles(expression, kind, _name(obj), selector_path)


def _compiles(expression: str, kind: str, name: str, path: str) -> None:
    try:
        cel.compile(expression)
    except AllocationError as exc:
        # cel-go's message goes on with the expression and a caret under the error: the first
        # line says it all in one line.
        first = str(exc).splitlines()[0]
        raise ObjectValidationError(
            f"{kind} {name}: {path}: CEL compile error: {first}", kind=kind, name=name, field=path
        ) from exc
