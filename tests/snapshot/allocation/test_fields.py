"""No silent wrong answers: every field of the v1 API the allocator reads is implemented,
without effect on an allocation, or refused by name."""

from __future__ import annotations

import typing
from typing import Any

import pydantic
import pytest
from drasnap.snapshot.allocation.fields import (
    FIELDS,
    REFUSED,
    ROOTS,
    check_supported,
    unsupported_fields,
)
from drasnap.snapshot.allocation.ignored import ignored_fields
from drasnap.snapshot.errors import AllocationError, FeatureGateError
from kubernetes import client as k8s

ROOT_MODELS: list[type[pydantic.BaseModel]] = [
    k8s.V1ResourceSliceSpec,
    k8s.V1DeviceClassSpec,
    k8s.V1ResourceClaimSpec,
]


def _nested(annotation: Any) -> tuple[type[pydantic.BaseModel] | None, str]:
    """The model inside a field's annotation, and how: "" (one), "[]" (list), "{}" (map)."""
    container = ""
    while True:
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is typing.Union:
            annotation = next(a for a in args if a is not type(None))
        elif origin is typing.Annotated:
            annotation = args[0]
        elif origin in (list, typing.List):  # noqa: UP006 - the client's annotations use List
            container, annotation = "[]", args[0]
        elif origin in (dict, typing.Dict):  # noqa: UP006
            container, annotation = "{}", args[1]
        else:
            break
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return annotation, container
    return None, ""


def _type_name(model: type[pydantic.BaseModel]) -> str:
    return model.__name__.removeprefix("V1")


def _walk_models() -> dict[str, dict[str, tuple[str | None, bool]]]:
    """Every model reachable from the allocator's roots: wire field -> (nested type, refused)."""
    seen: dict[str, dict[str, tuple[str | None, bool]]] = {}
    todo = list(ROOT_MODELS)
    while todo:
        model = todo.pop()
        name = _type_name(model)
        if name in seen:
            continue
        fields: dict[str, tuple[str | None, bool]] = {}
        for py_name, info in model.model_fields.items():
            wire = info.serialization_alias or info.alias or py_name
            entry = FIELDS.get(name, {}).get(wire)
            refused = entry is not None and entry[0] == REFUSED
            nested, container = _nested(info.annotation)
            fields[wire] = (None if nested is None else _type_name(nested) + container, refused)
            if nested is not None and not refused:
                todo.append(nested)
        seen[name] = fields
    return seen


def test_every_field_of_the_v1_models_is_classified() -> None:
    """A new field in the kubernetes client fails this test until it is implemented or refused
    in snapshot.allocation.fields.FIELDS."""
    models = _walk_models()
    missing = [
        f"{model}.{wire}"
        for model, fields in models.items()
        for wire in fields
        if wire not in FIELDS.get(model, {})
    ]
    assert not missing, f"neither implemented nor refused: {missing}"
    stale = [
        f"{model}.{wire}"
        for model, fields in FIELDS.items()
        for wire in fields
        if wire not in models.get(model, {})
    ]
    assert not stale, f"listed but not in the API: {stale}"
    for model, fields in models.items():
        for wire, (nested, refused) in fields.items():
            if not refused:
                assert FIELDS[model][wire][1] == nested, f"{model}.{wire}: nested type"


def test_the_refused_fields_are_the_ones_drasnap_does_not_implement() -> None:
    refused = sorted(
        f"{model}.{wire}"
        for model, fields in FIELDS.items()
        for wire, (status, _, _) in fields.items()
        if status == REFUSED
    )
    assert refused == [
        "Device.nodeAllocatableResources",
        "DeviceCounterConsumption.compatibilityGroups",
        "DeviceSubRequest.derivedAttributes",
        "ExactDeviceRequest.derivedAttributes",
        "ResourceSliceSpec.partitionTypeAttribute",
        "ResourceSliceSpec.skipNodeOperations",
    ]


def _slice(**device: Any) -> dict[str, Any]:
    return {
        "kind": "ResourceSlice",
        "metadata": {"name": "s1"},
        "spec": {
            "driver": "d",
            "nodeName": "n",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "dev-0"}, {"name": "dev-1", **device}],
        },
    }


def _claim(**exactly: Any) -> dict[str, Any]:
    return {
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {
            "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x", **exactly}}]}
        },
    }


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            _slice(nodeAllocatableResources={"cpu": {}}),
            "ResourceSlice s1: spec.devices[1].nodeAllocatableResources: not implemented by "
            "drasnap: devices that take node allocatable resources (DRANodeAllocatableResources, "
            "alpha in Kubernetes 1.36)",
        ),
        (
            _slice(
                consumesCounters=[{"counterSet": "a", "counters": {}, "compatibilityGroups": ["g"]}]
            ),
            "ResourceSlice s1: spec.devices[1].consumesCounters[0].compatibilityGroups: not "
            "implemented by drasnap: counter compatibility groups (DRADeviceCompatibilityGroups, "
            "after Kubernetes 1.36)",
        ),
        (
            _slice(attributes={"a": {"string": "x", "strng": "y"}}),
            'ResourceSlice s1: spec.devices[1].attributes["a"].strng: unknown field of '
            "DeviceAttribute",
        ),
        (
            _claim(derivedAttributes=[{"name": "a", "expression": "1"}]),
            "ResourceClaim ns/c: spec.devices.requests[0].exactly.derivedAttributes: not "
            "implemented by drasnap: derived attributes (DRADerivedAttributes, after Kubernetes "
            "1.36)",
        ),
        (
            {
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "ns"},
                "spec": {
                    "spec": {
                        "devices": {
                            "requests": [
                                {
                                    "name": "r",
                                    "firstAvailable": [
                                        {
                                            "name": "s",
                                            "deviceClassName": "x",
                                            "derivedAttributes": [{"name": "a"}],
                                        }
                                    ],
                                }
                            ]
                        }
                    }
                },
            },
            "ResourceClaimTemplate ns/t: spec.spec.devices.requests[0].firstAvailable[0]."
            "derivedAttributes: not implemented by drasnap",
        ),
        (
            {"kind": "DeviceClass", "metadata": {"name": "k"}, "spec": {"selector": []}},
            "DeviceClass k: spec.selector: unknown field of DeviceClassSpec",
        ),
    ],
    ids=["device", "counter-consumption", "unknown-attribute-key", "claim", "template", "class"],
)
def test_unsupported_fields_are_named_with_their_object(obj: dict[str, Any], message: str) -> None:
    problems = unsupported_fields(obj)
    assert len(problems) == 1
    assert problems[0].startswith(message)
    with pytest.raises(AllocationError) as info:
        check_supported(obj)
    assert str(info.value) == problems[0]
    assert info.value.kind == obj["kind"]
    assert info.value.name == obj["metadata"]["name"]


def test_refused_fields_left_empty_are_fine() -> None:
    assert unsupported_fields(_slice(nodeAllocatableResources={})) == []
    assert unsupported_fields(_claim(derivedAttributes=[])) == []
    spec = _slice()
    spec["spec"]["skipNodeOperations"] = False
    assert unsupported_fields(spec) == []


@pytest.mark.parametrize(
    ("obj", "gates", "field"),
    [
        (
            {
                "kind": "ResourceClaim",
                "metadata": {"name": "c"},
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "x"}]}
                        ]
                    }
                },
            },
            {"DRAPrioritizedList": False},
            "spec.devices.requests[0].firstAvailable",
        ),
        (
            _claim(capacity={"requests": {"memory": "1Gi"}}),
            {"DRAConsumableCapacity": False},
            "spec.devices.requests[0].exactly.capacity",
        ),
        (
            _claim(adminAccess=True),
            {"DRAAdminAccess": False},
            "spec.devices.requests[0].exactly.adminAccess",
        ),
    ],
    ids=["prioritized-list", "consumable-capacity", "admin-access"],
)
def test_requests_using_a_gate_that_is_off_are_found_before_allocating(
    obj: dict[str, Any], gates: dict[str, bool], field: str
) -> None:
    assert unsupported_fields(obj) == []  # on by default in 1.36
    (problem,) = unsupported_fields(obj, gates)
    assert f": {field}: " in problem and "feature is disabled" in problem
    with pytest.raises(AllocationError) as info:
        check_supported(obj, gates)
    assert info.value.field == field


def test_ignored_fields_say_what_kubernetes_ignores_under_the_gates() -> None:
    obj = _slice(
        taints=[{"key": "k", "effect": "NoSchedule"}],
        consumesCounters=[{"counterSet": "a", "counters": {}}],
        attributes={"l": {"strings": ["a"]}},
    )
    obj["spec"]["sharedCounters"] = [{"name": "a", "counters": {}}]
    assert ignored_fields(obj) == [
        'ResourceSlice s1: spec.devices[1].attributes["l"]: a list never satisfies a constraint '
        "(DRAListTypeAttributes is off)"
    ]
    off = ignored_fields(obj, {"DRAPartitionableDevices": False, "DRADeviceTaints": False})
    assert [note.split(": ")[1] for note in off] == [
        "spec.sharedCounters",
        "spec.devices[1].consumesCounters",
        "spec.devices[1].taints",
        'spec.devices[1].attributes["l"]',
    ]


def test_objects_the_allocator_does_not_read_and_unknown_gates_are_errors() -> None:
    with pytest.raises(ValueError, match="cannot check a Pod"):
        unsupported_fields({"kind": "Pod"})
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: DRANope"):
        unsupported_fields(_claim(), {"DRANope": True})


def test_roots_cover_the_kinds_with_allocator_input() -> None:
    assert set(ROOTS) == {"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate"}
