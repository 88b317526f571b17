"""snapshot.ingest.conversion: resource.k8s.io v1beta1/v1beta2 objects converted to v1 as upstream
does.

Expected values follow ``pkg/apis/resource/v1beta1/conversion.go`` (and the generated
conversions of v1beta2, which carry every field over unchanged).
"""

from __future__ import annotations

import copy
import types
import typing
from typing import Any

import pydantic
import pytest
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.ingest.conversion import convert_to_v1, is_dra_object
from drasnap.snapshot.validation import validate
from kubernetes import client as k8s

# --------------------------------------------------------------------------------------------
# v1beta2 (and v1alpha3 DeviceTaintRule) have v1's shape: relabelling them is the conversion.


def _wire_shape(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _wire_shape(typing.get_args(tp)[0])
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _wire_shape(args[0]) if len(args) == 1 else tuple(_wire_shape(a) for a in args)
    if origin is list:
        return ("list", _wire_shape(typing.get_args(tp)[0]))
    if origin is dict:
        return ("map", _wire_shape(typing.get_args(tp)[1]))
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        return tp
    return tp


def _differences(a: type[pydantic.BaseModel], b: type[pydantic.BaseModel]) -> list[str]:
    out: list[str] = []
    seen: set[tuple[type, type]] = set()

    def walk(x: Any, y: Any, path: str) -> None:
        if isinstance(x, type) and issubclass(x, pydantic.BaseModel):
            if not (isinstance(y, type) and issubclass(y, pydantic.BaseModel)):
                out.append(f"{path}: model vs {y}")
                return
            if (x, y) in seen:
                return
            seen.add((x, y))
            fx = {f.serialization_alias or f.alias or n: f for n, f in x.model_fields.items()}
            fy = {f.serialization_alias or f.alias or n: f for n, f in y.model_fields.items()}
            for name in sorted(set(fx) ^ set(fy)):
                out.append(f"{path}.{name}: only in one version")
            for name in sorted(set(fx) & set(fy)):
                if fx[name].is_required() != fy[name].is_required():
                    out.append(f"{path}.{name}: required differs")
                walk(
                    _wire_shape(fx[name].annotation),
                    _wire_shape(fy[name].annotation),
                    f"{path}.{name}",
                )
        elif isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y):
            for i, (xi, yi) in enumerate(zip(x, y, strict=True)):
                walk(xi, yi, f"{path}[{i}]")
        elif x != y:
            out.append(f"{path}: {x} vs {y}")

    walk(a, b, a.__name__)
    return out


@pytest.mark.parametrize(
    ("older", "v1"),
    [
        ("V1beta2ResourceClaim", "ResourceV1ResourceClaim"),
        ("V1beta2ResourceClaimTemplate", "V1ResourceClaimTemplate"),
        ("V1beta2ResourceSlice", "V1ResourceSlice"),
        ("V1beta2DeviceClass", "V1DeviceClass"),
        ("V1beta2DeviceTaintRule", "V1DeviceTaintRule"),
        ("V1alpha3DeviceTaintRule", "V1DeviceTaintRule"),
    ],
    ids=["claim", "template", "slice", "class", "taint-rule", "taint-rule-v1alpha3"],
)
def test_relabelled_versions_have_the_v1_shape(older: str, v1: str) -> None:
    """If a client update gives v1beta2 a field v1 lacks (or the reverse), relabelling is no
    longer a conversion: this fails and the conversion has to learn the difference."""
    assert _differences(getattr(k8s, older), getattr(k8s, v1)) == []


def test_v1beta1_differs_only_where_the_conversion_knows() -> None:
    diffs = _differences(k8s.V1beta1ResourceClaim, k8s.ResourceV1ResourceClaim)
    diffs += _differences(k8s.V1beta1ResourceSlice, k8s.V1ResourceSlice)
    moved = {d.split(": ")[0].rsplit(".", 1)[1] for d in diffs}
    assert moved == {
        # requests: the fields that move into `exactly`
        "deviceClassName", "selectors", "allocationMode", "count", "adminAccess",
        "tolerations", "capacity", "derivedAttributes", "exactly",
        # devices: `basic` flattened
        "basic", "attributes", "consumesCounters", "nodeName", "nodeSelector", "allNodes",
        "taints", "bindsToNode", "bindingConditions", "bindingFailureConditions",
        "allowMultipleAllocations", "nodeAllocatableResources",
    }  # fmt: skip
    assert _differences(k8s.V1beta1DeviceClass, k8s.V1DeviceClass) == []


def test_v1beta2_objects_are_relabelled_with_a_note() -> None:
    rule = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "example"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com"},
            "taint": {"key": "gpu.example.com/unhealthy", "value": "true", "effect": "NoSchedule"},
        },
    }
    notes: list[str] = []
    out = convert_to_v1(rule, source="rule.yaml doc 1", warnings=notes)
    assert out == {**rule, "apiVersion": "resource.k8s.io/v1"}
    assert notes == [
        "rule.yaml doc 1: DeviceTaintRule example: resource.k8s.io/v1beta2 converted to "
        "resource.k8s.io/v1"
    ]


# --------------------------------------------------------------------------------------------
# v1beta1 -> v1, field by field.


def beta_slice() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-a-gpu.nvidia.com-x7k2p"},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": "node-a",
            "allNodes": False,
            "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": "gpu-0",
                    "basic": {
                        "attributes": {
                            "type": {"string": "gpu"},
                            "productName": {"string": "NVIDIA A100-SXM4-40GB"},
                            "driverVersion": {"version": "550.54.15"},
                            "index": {"int": 0},
                        },
                        "capacity": {"memory": {"value": "40Gi"}},
                        "consumesCounters": [
                            {
                                "counterSet": "gpu-0-counters",
                                "counters": {"memory": {"value": "40Gi"}},
                            }
                        ],
                        "taints": [
                            {"key": "nvidia.com/xid", "value": "79", "effect": "NoSchedule"}
                        ],
                        "bindingConditions": ["example.com/ready"],
                        "bindingFailureConditions": ["example.com/failed"],
                        "bindsToNode": True,
                        "allowMultipleAllocations": False,
                    },
                },
                {"name": "gpu-1", "basic": {"attributes": {}, "capacity": {}}},
                {"name": "gpu-2"},
            ],
        },
    }


def test_slice_devices_lose_their_basic_wrapper() -> None:
    before = beta_slice()
    original = copy.deepcopy(before)
    out = convert_to_v1(before)
    assert before == original  # never mutated
    assert out["apiVersion"] == "resource.k8s.io/v1"
    basic = original["spec"]["devices"][0]["basic"]
    assert out["spec"]["devices"][0] == {"name": "gpu-0", **basic}
    # empty attribute and capacity maps are not copied (upstream: `if len(...) > 0`)
    assert out["spec"]["devices"][1] == {"name": "gpu-1"}
    assert out["spec"]["devices"][2] == {"name": "gpu-2"}
    # v1beta1's zero values of nodeName/allNodes mean "unset" in v1
    assert "allNodes" not in out["spec"]
    assert out["spec"]["nodeName"] == "node-a"
    assert out["spec"]["pool"] == original["spec"]["pool"]
    assert out["metadata"] == original["metadata"]
    assert validate(out) == out


def test_slice_empty_node_name_is_unset() -> None:
    obj = beta_slice()
    obj["spec"]["nodeName"] = ""
    obj["spec"]["allNodes"] = True
    out = convert_to_v1(obj)
    assert "nodeName" not in out["spec"]
    assert out["spec"]["allNodes"] is True


def beta_claim() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": "mig-devices", "namespace": "gpu-test4"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "mig-1g",
                        "deviceClassName": "mig.nvidia.com",
                        "selectors": [
                            {
                                "cel": {
                                    "expression": "device.attributes['gpu.nvidia.com']"
                                    ".profile == '1g.5gb'"
                                }
                            }
                        ],
                        "allocationMode": "ExactCount",
                        "count": 2,
                        "adminAccess": False,
                        "tolerations": [{"key": "nvidia.com/xid", "operator": "Exists"}],
                        "capacity": {"requests": {"memory": "5Gi"}},
                    },
                    {"name": "plain", "deviceClassName": "gpu.nvidia.com"},
                    {
                        "name": "either",
                        "firstAvailable": [
                            {"name": "full", "deviceClassName": "gpu.nvidia.com"},
                            {"name": "half", "deviceClassName": "mig.nvidia.com", "count": 2},
                        ],
                    },
                    {
                        "name": "zeros",
                        "deviceClassName": "gpu.nvidia.com",
                        "count": 0,
                        "allocationMode": "",
                    },
                    {"name": "no-selectors", "deviceClassName": "gpu.nvidia.com", "selectors": []},
                ],
                "constraints": [{"requests": [], "matchAttribute": "gpu.nvidia.com/parentUUID"}],
                "config": [
                    {
                        "requests": ["plain"],
                        "opaque": {"driver": "gpu.nvidia.com", "parameters": {"kind": "GpuConfig"}},
                    }
                ],
            }
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "plain",
                            "driver": "gpu.nvidia.com",
                            "pool": "node-a",
                            "device": "gpu-0",
                        }
                    ]
                }
            },
            "reservedFor": [{"resource": "pods", "name": "p", "uid": "u-1"}],
        },
    }


def test_claim_request_fields_move_into_exactly() -> None:
    original = beta_claim()
    out = convert_to_v1(copy.deepcopy(original))
    requests = out["spec"]["devices"]["requests"]
    first = original["spec"]["devices"]["requests"][0]
    assert requests[0] == {
        "name": "mig-1g",
        "exactly": {k: v for k, v in first.items() if k != "name"},
    }
    assert requests[1] == {"name": "plain", "exactly": {"deviceClassName": "gpu.nvidia.com"}}
    # subrequests have v1's shape already; a request with only firstAvailable has no `exactly`
    assert requests[2] == original["spec"]["devices"]["requests"][2]
    # count 0 and allocationMode "" are unset (hasAnyMainRequestFieldsSet)...
    assert requests[3] == {"name": "zeros", "exactly": {"deviceClassName": "gpu.nvidia.com"}}
    # ... but an empty selector list is set
    assert requests[4] == {
        "name": "no-selectors",
        "exactly": {"deviceClassName": "gpu.nvidia.com", "selectors": []},
    }
    # constraints, config and status keep their shape
    assert out["spec"]["devices"]["constraints"] == original["spec"]["devices"]["constraints"]
    assert out["spec"]["devices"]["config"] == original["spec"]["devices"]["config"]
    assert out["status"] == original["status"]
    assert validate(out) == out


def test_template_and_class() -> None:
    template = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "single-gpu", "namespace": "gpu-test1"},
        "spec": {
            "metadata": {"labels": {"app": "x"}},
            "spec": {
                "devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com"}]}
            },
        },
    }
    out = convert_to_v1(template)
    assert out["spec"] == {
        "metadata": {"labels": {"app": "x"}},
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]
            }
        },
    }
    device_class = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.nvidia.com"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
    }
    assert convert_to_v1(device_class) == {**device_class, "apiVersion": "resource.k8s.io/v1"}


def test_v1beta1_notes() -> None:
    obj = beta_slice()
    obj["spec"]["devices"][0]["basic"]["capacity"]["memory"]["value"] = 40
    notes: list[str] = []
    out = convert_to_v1(obj, source="slices.yaml doc 1", warnings=notes)
    assert out["spec"]["devices"][0]["capacity"]["memory"]["value"] == "40"
    assert notes == [
        "slices.yaml doc 1: ResourceSlice node-a-gpu.nvidia.com-x7k2p: "
        'spec.devices[0].basic.capacity.memory.value: number 40 taken as quantity "40"',
        "slices.yaml doc 1: ResourceSlice node-a-gpu.nvidia.com-x7k2p: resource.k8s.io/v1beta1 "
        "converted to resource.k8s.io/v1",
    ]


# --------------------------------------------------------------------------------------------
# Errors name the path as written in the v1beta1 document.


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda o: o["spec"]["devices"][0]["basic"].__setitem__("nodeNmae", "x"),
            'spec.devices[0].basic.nodeNmae: unknown field "nodeNmae" (did you mean "nodeName"?)',
        ),
        (
            lambda o: o["spec"]["devices"][0]["basic"]["attributes"].__setitem__(
                "Bad-Attr", {"int": 1}
            ),
            'spec.devices[0].basic.attributes.Bad-Attr: Invalid value: "Bad-Attr": a valid C '
            "identifier must start with alphabetic character or '_', followed by a string of "
            "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex "
            "used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
        ),
        (
            lambda o: o["spec"]["devices"][1].__setitem__("name", "GPU_1"),
            'spec.devices[1].name: Invalid value: "GPU_1": a lowercase RFC 1123 label must '
            "consist of lower case alphanumeric characters or '-', and must start and end with an "
            "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
        (
            lambda o: o["spec"]["devices"][0].__setitem__("exactly", {}),
            'spec.devices[0].exactly: unknown field "exactly"',
        ),
    ],
    ids=["unknown-field", "attribute-name", "device-name", "v1-field-in-v1beta1"],
)
def test_slice_errors_name_v1beta1_paths(change: Any, message: str) -> None:
    obj = beta_slice()
    change(obj)
    with pytest.raises(ObjectValidationError) as info:
        convert_to_v1(obj, source="s.yaml doc 1")
    assert str(info.value).startswith(
        f"s.yaml doc 1: ResourceSlice node-a-gpu.nvidia.com-x7k2p: {message}"
    )


def test_claim_errors_name_v1beta1_paths() -> None:
    obj = beta_claim()
    obj["spec"]["devices"]["requests"][1]["deviceClassName"] = "GPU"
    with pytest.raises(ObjectValidationError) as info:
        convert_to_v1(obj)
    assert info.value.field == "spec.devices.requests[1].deviceClassName"
    obj = beta_claim()
    obj["spec"]["devices"]["requests"][2]["count"] = 1
    with pytest.raises(ObjectValidationError) as info:
        convert_to_v1(obj)
    # `count` alone makes an `exactly` without a class, as upstream's conversion does
    assert str(info.value) == (
        "ResourceClaim gpu-test4/mig-devices: spec.devices.requests[2].deviceClassName: "
        "required field is missing"
    )


@pytest.mark.parametrize(
    ("api_version", "kind", "served"),
    [
        (
            "resource.k8s.io/v1alpha3",
            "ResourceClaimTemplate",
            "resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1beta1",
        ),
        (
            "resource.k8s.io/v1alpha2",
            "ResourceSlice",
            "resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1beta1",
        ),
        (
            "resource.k8s.io/v1beta1",
            "DeviceTaintRule",
            "resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1alpha3",
        ),
    ],
    ids=["v1alpha3-template", "v1alpha2-slice", "v1beta1-taint-rule"],
)
def test_versions_not_served_are_refused(api_version: str, kind: str, served: str) -> None:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "ns"}}
    with pytest.raises(ObjectValidationError) as info:
        convert_to_v1(obj, source="f.yaml doc 2")
    shown = f"{kind} ns/x" if kind == "ResourceClaimTemplate" else f"{kind} x"
    assert str(info.value) == (
        f"f.yaml doc 2: {shown}: apiVersion: Kubernetes 1.36 does not serve {kind} in "
        f'"{api_version}"; it serves {served}'
    )
    assert info.value.field == "apiVersion"


def test_is_dra_object() -> None:
    assert is_dra_object({"apiVersion": "resource.k8s.io/v1beta1"})
    assert not is_dra_object({"apiVersion": "v1"})
    assert not is_dra_object("x")
