"""Objects for the API validation tests: each valid as built, broken one field at a time."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.validation import validate

Obj = dict[str, Any]
UID = "0b1e4b2c-7c27-4b4c-9d6e-6f1a2b3c4d5e"


def slice_(devices: int = 1) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-a",
            "pool": {"name": "node-a", "generation": 0, "resourceSliceCount": 2},
            "devices": [{"name": f"gpu-{i}"} for i in range(devices)],
        },
    }


def counters_slice(sets: int = 1, counters: int = 1) -> Obj:
    obj = slice_()
    del obj["spec"]["devices"]
    obj["spec"]["sharedCounters"] = [
        {"name": f"set-{i}", "counters": {f"c{j}": {"value": "1"} for j in range(counters)}}
        for i in range(sets)
    ]
    return obj


def per_device_slice() -> Obj:
    obj = slice_()
    del obj["spec"]["nodeName"]
    obj["spec"]["perDeviceNodeSelection"] = True
    obj["spec"]["devices"][0]["nodeName"] = "node-a"
    return obj


def multi_slice(policy: Obj, value: str = "10") -> Obj:
    """A device with a consumable capacity ``memory`` of ``value`` and ``policy``."""
    obj = slice_()
    device = obj["spec"]["devices"][0]
    device["allowMultipleAllocations"] = True
    device["capacity"] = {"memory": {"value": value, "requestPolicy": policy}}
    return obj


def claim(*requests: Obj) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": {
            "devices": {
                "requests": list(requests)
                or [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
            }
        },
    }


def exact(name: str = "gpu", **fields: Any) -> Obj:
    return {"name": name, "exactly": {"deviceClassName": "gpu.example.com", **fields}}


def allocated_claim() -> Obj:
    obj = claim()
    obj["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "gpu",
                        "driver": "gpu.example.com",
                        "pool": "node-a",
                        "device": "gpu-0",
                    }
                ]
            }
        },
        "reservedFor": [{"resource": "pods", "name": "p", "uid": UID}],
    }
    return obj


def template(*requests: Obj) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "ml"},
        "spec": {"spec": claim(*requests)["spec"]},
    }


def device_class(**spec: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}
        | spec,
    }


def pod() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {
            "containers": [
                {"name": "main", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
        },
    }


def taint_rule() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "r"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com"},
            "taint": {"key": "example.com/unhealthy", "effect": "NoExecute"},
        },
    }


def edit(obj: Obj, change: Callable[[Obj], Any]) -> Obj:
    change(obj)
    return obj


def dev0(obj: Obj) -> Obj:
    device: Obj = obj["spec"]["devices"][0]
    return device


def tainted(devices: int) -> Obj:
    obj = slice_(devices)
    dev0(obj)["taints"] = [{"key": "example.com/x", "effect": "NoSchedule"}]
    return obj


def consuming(devices: int) -> Obj:
    obj = slice_(devices)
    dev0(obj)["consumesCounters"] = [{"counterSet": "s", "counters": {"m": {"value": "1"}}}]
    return obj


def listing(devices: int) -> Obj:
    obj = slice_(devices)
    dev0(obj)["attributes"] = {"roots": {"strings": ["a"]}}
    return obj


def selector_slice(*terms: Obj) -> Obj:
    obj = slice_()
    del obj["spec"]["nodeName"]
    obj["spec"]["nodeSelector"] = {"nodeSelectorTerms": list(terms)}
    return obj


def expr(key: str, operator: str, *values: str, field: str = "matchExpressions") -> Obj:
    requirement: Obj = {"key": key, "operator": operator}
    if values:
        requirement["values"] = list(values)
    return {field: [requirement]}


def error_of(obj: Obj) -> ObjectValidationError:
    with pytest.raises(ObjectValidationError) as info:
        validate(copy.deepcopy(obj), source="x.yaml doc 1")
    return info.value


def label(obj: Obj) -> str:
    namespace = obj["metadata"].get("namespace")
    name = obj["metadata"]["name"]
    return f"{obj['kind']} {namespace}/{name}" if namespace else f"{obj['kind']} {name}"


def check_refused(obj: Obj, path: str, body: str) -> None:
    """``obj`` is refused at ``path`` with ``body`` (where upstream reports more than one
    error, the others' paths follow "(and N more")."""
    err = error_of(obj)
    assert str(err).split(" (and ")[0] == f"x.yaml doc 1: {label(obj)}: {path}: {body}"
    assert (err.source, err.kind, err.field) == ("x.yaml doc 1", obj["kind"], path)
