"""snapshot.k8s.objects: validation of wire-format objects with the kubernetes client models."""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any

import pydantic
import pytest
import yaml
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.k8s.kinds import object_key
from drasnap.snapshot.k8s.objects import (
    deep_copy,
    format_field_path,
    kind_of,
    name_of,
    object_label,
    uid_of,
)
from drasnap.snapshot.validation import as_model, validate
from drasnap.snapshot.validation.schema import QUANTITY_FIELDS
from kubernetes import client as k8s

# --------------------------------------------------------------------------------------------
# Builders for objects in the shapes the simulator sees.


def make_node(name: str = "node-a", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"kubernetes.io/hostname": name, **labels},
        },
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "allocatable": {"cpu": "7500m", "memory": "30Gi", "pods": "110"},
        },
    }


def make_slice(node: str = "node-a", devices: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "name": f"{node}-gpu.example.com",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node, "uid": f"uid-{node}"}
            ],
        },
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node,
            "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {
                        "index": {"int": i},
                        "model": {"string": "LATEST-GPU-MODEL"},
                        "driverVersion": {"version": "1.0.0"},
                        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}, "compute": {"value": "100"}},
                }
                for i in range(devices)
            ],
        },
    }


def make_claim(name: str = "shared-gpu", namespace: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "allocationMode": "ExactCount",
                            "count": 1,
                        },
                    }
                ]
            }
        },
    }


def make_pod(name: str = "trainer-0", namespace: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {
                        "requests": {"cpu": "1", "memory": "1Gi"},
                        "claims": [{"name": "gpu"}],
                    },
                }
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared-gpu"}],
        },
    }


def make_class(name: str = "gpu.example.com") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{name}'"}}]},
    }


def make_template(name: str = "one-gpu", namespace: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": make_claim()["spec"]},
    }


def error_of(obj: object, **kwargs: Any) -> ObjectValidationError:
    with pytest.raises(ObjectValidationError) as info:
        validate(obj, **kwargs)
    return info.value


def fixture_documents(directory: Path) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


# --------------------------------------------------------------------------------------------
# Valid objects.


def test_example_fixtures_validate_unchanged(dra_example_dir: Path) -> None:
    docs = fixture_documents(dra_example_dir)
    assert [d["kind"] for d in docs] == [
        "DeviceClass",
        "ResourceSlice",
        "ResourceClaimTemplate",
        "ResourceClaim",
    ]
    for doc in docs:
        warnings: list[str] = []
        out = validate(doc, source="fixture", warnings=warnings)
        assert out == doc
        assert out is not doc
        assert warnings == []


@pytest.mark.parametrize(
    "make",
    [make_node, make_slice, make_claim, make_pod, make_class, make_template],
)
def test_valid_objects_round_trip(make: Any) -> None:
    obj = make()
    before = copy.deepcopy(obj)
    warnings: list[str] = []
    out = validate(obj, warnings=warnings)
    assert out == before
    assert obj == before
    assert warnings == []


def test_result_is_an_independent_copy() -> None:
    obj = make_slice()
    out = validate(obj)
    out["spec"]["devices"][0]["capacity"]["memory"]["value"] = "1Gi"
    out["metadata"]["labels"] = {"x": "y"}
    assert obj == make_slice()
    assert out["spec"] is not obj["spec"]


def test_allocated_claim_with_owner_and_reservations() -> None:
    claim = make_claim("trainer-0-gpu-x7k2p")
    claim["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "trainer-0",
            "uid": "uid-trainer-0",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "n", "device": "g"}
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": "trainer-0", "uid": "uid-trainer-0"}],
    }
    assert validate(claim) == claim


# --------------------------------------------------------------------------------------------
# Normalisations.


def test_bare_number_quantities_in_a_slice_become_strings_with_warnings() -> None:
    obj = make_slice()
    obj["spec"]["devices"][0]["capacity"]["compute"]["value"] = 100
    # A request policy needs allowMultipleAllocations, counter sets a slice of their own.
    obj["spec"]["devices"][1]["allowMultipleAllocations"] = True
    obj["spec"]["devices"][1]["capacity"]["memory"]["requestPolicy"] = {
        "default": 1,
        "validRange": {"min": 1, "max": 2.5, "step": 0.5},
    }
    counters = make_slice()
    del counters["spec"]["devices"]
    counters["spec"]["sharedCounters"] = [{"name": "c", "counters": {"memory": {"value": 2.0}}}]
    before = copy.deepcopy(obj)
    warnings: list[str] = []
    out = validate(obj, source="slices.yaml doc 2", warnings=warnings)
    counters_out = validate(counters, source="slices.yaml doc 3", warnings=warnings)

    assert obj == before  # never mutated
    device0, device1 = out["spec"]["devices"]
    assert device0["capacity"]["compute"]["value"] == "100"
    assert device1["capacity"]["memory"]["requestPolicy"] == {
        "default": "1",
        "validRange": {"min": "1", "max": "2.5", "step": "0.5"},
    }
    assert counters_out["spec"]["sharedCounters"][0]["counters"]["memory"]["value"] == "2"
    assert (
        "slices.yaml doc 2: ResourceSlice node-a-gpu.example.com: "
        'spec.devices[0].capacity.compute.value: number 100 taken as quantity "100"'
    ) in warnings
    assert len(warnings) == 6


def test_bare_number_quantities_in_pods_and_nodes() -> None:
    pod = make_pod()
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": 1}, "limits": {"cpu": 2}}
    pod["spec"]["overhead"] = {"cpu": 0.25}
    node = make_node()
    node["status"]["capacity"]["pods"] = 110
    node["status"]["allocatable"]["cpu"] = 7

    warnings: list[str] = []
    out_pod = validate(pod, warnings=warnings)
    out_node = validate(node, warnings=warnings)
    assert out_pod["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "1"},
        "limits": {"cpu": "2"},
    }
    assert out_pod["spec"]["overhead"] == {"cpu": "0.25"}
    assert out_node["status"]["capacity"]["pods"] == "110"
    assert out_node["status"]["allocatable"]["cpu"] == "7"
    assert warnings == [
        'Pod ml/trainer-0: spec.containers[0].resources.limits.cpu: number 2 taken as quantity "2"',
        "Pod ml/trainer-0: spec.containers[0].resources.requests.cpu: "
        'number 1 taken as quantity "1"',
        'Pod ml/trainer-0: spec.overhead.cpu: number 0.25 taken as quantity "0.25"',
        'Node node-a: status.allocatable.cpu: number 7 taken as quantity "7"',
        'Node node-a: status.capacity.pods: number 110 taken as quantity "110"',
    ]


def test_quantity_strings_are_checked() -> None:
    obj = make_slice()
    obj["spec"]["devices"][1]["capacity"]["memory"]["value"] = "80 GB"
    err = error_of(obj, source="s.yaml doc 1")
    assert str(err) == (
        "s.yaml doc 1: ResourceSlice node-a-gpu.example.com: "
        'spec.devices[1].capacity.memory.value: "80 GB" is not a valid quantity '
        '(expected a number with an optional suffix, such as "80Gi", "500m", "100" or "1e3")'
    )
    assert err.field == "spec.devices[1].capacity.memory.value"


@pytest.mark.parametrize("good", ["80Gi", "500m", "1", "-1", "1.5", ".5", "1e3", "2E-2", "1k"])
def test_valid_quantity_syntax(good: str) -> None:
    node = make_node()
    node["status"]["capacity"]["cpu"] = good
    assert validate(node)["status"]["capacity"]["cpu"] == good


def test_boolean_in_a_quantity_field_is_an_error() -> None:
    node = make_node()
    node["status"]["capacity"]["cpu"] = True
    err = error_of(node)
    assert str(err) == (
        'Node node-a: status.capacity.cpu: expected a quantity string such as "80Gi", '
        "got boolean true (YAML reads unquoted yes/no/on/off/true/false as booleans: quote it)"
    )


def test_v1beta2_objects_come_out_as_v1() -> None:
    obj = make_slice()
    obj["apiVersion"] = "resource.k8s.io/v1beta2"
    warnings: list[str] = []
    out = validate(obj, warnings=warnings)
    assert out["apiVersion"] == "resource.k8s.io/v1"
    assert out["spec"] == obj["spec"]
    assert obj["apiVersion"] == "resource.k8s.io/v1beta2"
    assert warnings == [
        "ResourceSlice node-a-gpu.example.com: "
        "resource.k8s.io/v1beta2 converted to resource.k8s.io/v1"
    ]


def test_nulls_are_dropped_and_datetimes_become_rfc3339() -> None:
    node = make_node()
    node["metadata"]["creationTimestamp"] = None
    node["spec"] = None
    claim = make_claim()
    claim["metadata"]["creationTimestamp"] = datetime.datetime(
        2025, 6, 1, 12, 0, tzinfo=datetime.UTC
    )
    claim["spec"]["devices"]["config"] = [
        {"opaque": {"driver": "gpu.example.com", "parameters": {"keep": None}}}
    ]
    out_node = validate(node)
    assert "creationTimestamp" not in out_node["metadata"]
    assert "spec" not in out_node
    out_claim = validate(claim)
    assert out_claim["metadata"]["creationTimestamp"] == "2025-06-01T12:00:00Z"
    # Free-form driver parameters are kept as they are, nulls included.
    assert out_claim["spec"]["devices"]["config"][0]["opaque"]["parameters"] == {"keep": None}


def test_namespace_defaults_and_cluster_scoped_namespace_is_dropped() -> None:
    pod = make_pod()
    del pod["metadata"]["namespace"]
    node = make_node()
    node["metadata"]["namespace"] = "ml"
    warnings: list[str] = []
    assert validate(pod, warnings=warnings)["metadata"]["namespace"] == "default"
    assert "namespace" not in validate(node, warnings=warnings)["metadata"]
    assert warnings == [
        'Pod default/trainer-0: metadata.namespace: no namespace given, taken as "default"',
        "Node node-a: metadata.namespace: Node is cluster-scoped; namespace dropped",
    ]


def test_warnings_only_when_valid() -> None:
    obj = make_slice()
    obj["spec"]["devices"][0]["capacity"]["compute"]["value"] = 100
    del obj["spec"]["driver"]
    warnings: list[str] = []
    with pytest.raises(ObjectValidationError):
        validate(obj, warnings=warnings)
    assert warnings == []


# --------------------------------------------------------------------------------------------
# Errors: each names the source, the object, the field and what was expected.


def test_missing_driver() -> None:
    obj = make_slice()
    del obj["spec"]["driver"]
    err = error_of(obj, source="slices.yaml doc 2")
    assert str(err) == (
        "slices.yaml doc 2: ResourceSlice node-a-gpu.example.com: "
        "spec.driver: required field is missing"
    )
    assert (err.source, err.kind, err.namespace, err.name, err.field) == (
        "slices.yaml doc 2",
        "ResourceSlice",
        None,
        "node-a-gpu.example.com",
        "spec.driver",
    )
    assert isinstance(err.__cause__, pydantic.ValidationError)


def test_missing_device_class_name() -> None:
    obj = make_claim()
    del obj["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"]
    err = error_of(obj, source="claims.yaml doc 1")
    assert str(err) == (
        "claims.yaml doc 1: ResourceClaim ml/shared-gpu: "
        "spec.devices.requests[0].exactly.deviceClassName: required field is missing"
    )
    assert err.namespace == "ml"


def test_wrong_type_count() -> None:
    obj = make_claim()
    obj["spec"]["devices"]["requests"][0]["exactly"]["count"] = "two"
    err = error_of(obj)
    assert str(err) == (
        "ResourceClaim ml/shared-gpu: spec.devices.requests[0].exactly.count: "
        'expected an integer, got string "two"'
    )


def test_unknown_field_with_suggestion() -> None:
    obj = make_slice()
    obj["spec"]["nodeNmae"] = obj["spec"].pop("nodeName")
    err = error_of(obj, source="s.yaml doc 1")
    assert str(err) == (
        "s.yaml doc 1: ResourceSlice node-a-gpu.example.com: spec.nodeNmae: "
        'unknown field "nodeNmae" (did you mean "nodeName"?)'
    )
    assert err.field == "spec.nodeNmae"


def test_python_attribute_names_are_unknown_fields() -> None:
    obj = make_slice()
    pool = obj["spec"]["pool"]
    pool["resource_slice_count"] = pool.pop("resourceSliceCount")
    err = error_of(obj)
    assert str(err) == (
        "ResourceSlice node-a-gpu.example.com: spec.pool.resource_slice_count: "
        'unknown field "resource_slice_count" (the API spells it "resourceSliceCount")'
    )


@pytest.mark.parametrize(
    ("value", "got"),
    [
        (1, "number 1 (quote it)"),
        (1.1, "number 1.1 (YAML reads unquoted 1.10 as the number 1.1: quote it)"),
        (True, "boolean true (YAML reads unquoted yes/no/on/off/true/false as booleans: quote it)"),
    ],
)
def test_label_values_must_be_strings(value: object, got: str) -> None:
    obj = make_node()
    obj["metadata"]["labels"]["topology.kubernetes.io/zone"] = value
    err = error_of(obj)
    assert str(err) == (
        f'Node node-a: metadata.labels["topology.kubernetes.io/zone"]: expected a string, got {got}'
    )


def test_version_attribute_read_as_float() -> None:
    obj = make_slice()
    obj["spec"]["devices"][0]["attributes"]["driverVersion"] = {"version": 1.1}
    err = error_of(obj)
    assert err.field == "spec.devices[0].attributes.driverVersion.version"
    assert "expected a string, got number 1.1 (YAML reads unquoted 1.10" in str(err)


def test_int_or_string_field_path_has_no_type_tag() -> None:
    pod = make_pod()
    pod["spec"]["containers"][0]["readinessProbe"] = {"httpGet": {"port": 1.5}}
    err = error_of(pod)
    assert str(err) == (
        "Pod ml/trainer-0: spec.containers[0].readinessProbe.httpGet.port: "
        "expected an integer or a string, got number 1.5"
    )


def test_several_problems_are_counted() -> None:
    obj = make_claim()
    exactly = obj["spec"]["devices"]["requests"][0]["exactly"]
    exactly["count"] = "two"
    del exactly["deviceClassName"]
    err = error_of(obj)
    assert str(err).endswith(
        'expected an integer, got string "two" '
        "(and 1 more problem: spec.devices.requests[0].exactly.deviceClassName)"
    )


def test_object_needs_a_name() -> None:
    obj = make_class()
    del obj["metadata"]["name"]
    assert str(error_of(obj)) == (
        "DeviceClass <unnamed>: metadata.name: required field is missing "
        "(every object needs a name)"
    )


def test_wrong_container_types() -> None:
    obj = make_slice()
    obj["spec"]["devices"] = {"name": "gpu-0"}
    assert str(error_of(obj)) == (
        "ResourceSlice node-a-gpu.example.com: spec.devices: expected a list, got a mapping"
    )
    obj = make_slice()
    obj["metadata"] = ["x"]
    assert str(error_of(obj)) == (
        "ResourceSlice <unnamed>: metadata: expected an object (ObjectMeta), got a list"
    )


def test_bad_timestamp() -> None:
    obj = make_claim()
    obj["metadata"]["creationTimestamp"] = "yesterday"
    assert str(error_of(obj)) == (
        "ResourceClaim ml/shared-gpu: metadata.creationTimestamp: expected an RFC 3339 "
        'timestamp such as "2025-06-01T12:00:00Z", got string "yesterday"'
    )


@pytest.mark.parametrize(
    "make",
    [make_node, make_slice, make_claim, make_pod, make_class, make_template],
)
def test_validate_is_idempotent(make: Any) -> None:
    once = validate(make())
    assert validate(once) == once


def test_non_string_keys() -> None:
    obj = make_node()
    obj["metadata"]["labels"] = {1: "a"}
    err = error_of(obj)
    assert str(err) == "Node node-a: metadata.labels: key 1 is not a string (quote it in YAML)"


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([make_node()], "x: expected a Kubernetes object (a mapping), got a list"),
        ("Node", 'x: expected a Kubernetes object (a mapping), got string "Node"'),
        ({"apiVersion": "v1", "metadata": {"name": "a"}}, "x: kind: required field is missing"),
        (
            {"kind": "Node", "metadata": {"name": "a"}},
            "x: Node a: apiVersion: required field is missing",
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}},
            'x: ConfigMap a: unknown kind "ConfigMap" (apiVersion v1); supported kinds: '
            "DeviceClass, ResourceSlice, DeviceTaintRule, Node, ResourceClaimTemplate, "
            "ResourceClaim, Pod",
        ),
        (
            {"apiVersion": "v1", "kind": "ResourceClaim", "metadata": {"name": "a"}},
            "x: ResourceClaim a: apiVersion: expected apiVersion resource.k8s.io/v1 "
            '(or resource.k8s.io/v1beta2) for a ResourceClaim, got "v1"',
        ),
        (
            {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice"},
            "x: ResourceSlice <unnamed>: apiVersion: resource.k8s.io/v1beta1 is not "
            "supported (its devices and requests have the older shape); use "
            "resource.k8s.io/v1 (or resource.k8s.io/v1beta2)",
        ),
        (
            {"apiVersion": "v1", "kind": "List", "items": []},
            "x: List <unnamed>: List is a list of objects, not an object; validate its items "
            "one by one (snapshot.ingest.manifests.load_manifests does)",
        ),
    ],
)
def test_structural_errors(obj: object, message: str) -> None:
    assert str(error_of(obj, source="x")) == message


def test_unserialisable_value() -> None:
    obj = make_node()
    obj["metadata"]["labels"]["x"] = {1, 2}
    err = error_of(obj)
    assert err.field == "metadata.labels.x"
    assert "cannot be represented as JSON" in str(err)


# --------------------------------------------------------------------------------------------
# as_model and helpers.


@pytest.mark.parametrize(
    ("make", "cls"),
    [
        (make_claim, k8s.ResourceV1ResourceClaim),
        (make_slice, k8s.V1ResourceSlice),
        (make_class, k8s.V1DeviceClass),
        (make_template, k8s.V1ResourceClaimTemplate),
        (make_pod, k8s.V1Pod),
        (make_node, k8s.V1Node),
    ],
)
def test_as_model_returns_the_client_class(make: Any, cls: type) -> None:
    model = as_model(make())
    model_type = type(model)
    assert model_type is cls
    assert model.metadata.name == make()["metadata"]["name"]


def test_as_model_v1beta2_and_normalised_values() -> None:
    obj = make_slice()
    obj["apiVersion"] = "resource.k8s.io/v1beta2"
    obj["spec"]["devices"][0]["capacity"]["compute"]["value"] = 100
    model = as_model(obj)
    model_type = type(model)
    assert model_type is k8s.V1beta2ResourceSlice
    assert model.spec.devices[0].capacity["compute"].value == "100"
    assert type(as_model(validate(obj))) is k8s.V1ResourceSlice

    pod = make_pod()
    del pod["metadata"]["namespace"]
    assert as_model(pod).metadata.namespace == "default"


def test_as_model_errors_are_object_validation_errors() -> None:
    obj = make_claim()
    obj["spec"]["devices"]["requests"][0]["exactly"]["count"] = "two"
    with pytest.raises(ObjectValidationError, match=r"exactly\.count: expected an integer"):
        as_model(obj, source="c.yaml doc 1")


def test_accessors() -> None:
    claim = validate(make_claim())
    node = validate(make_node())
    assert kind_of(claim) == "ResourceClaim"
    assert name_of(claim) == "shared-gpu"
    assert claim["metadata"]["namespace"] == "ml"
    assert uid_of(claim) == "uid-shared-gpu"
    assert object_key(claim) == "ml/shared-gpu"
    assert object_key(node) == "node-a"
    assert "namespace" not in node["metadata"]
    assert uid_of(validate(make_class())) is None
    assert object_label(claim) == "ResourceClaim ml/shared-gpu"
    assert object_label({"kind": "Pod"}) == "Pod <unnamed>"
    assert object_label(42) == "<unknown kind> <unnamed>"


def test_deep_copy() -> None:
    obj = make_slice()
    copied = deep_copy(obj)
    assert copied == obj
    copied["spec"]["devices"].clear()
    assert len(obj["spec"]["devices"]) == 2


def test_format_field_path() -> None:
    assert format_field_path(("spec", "devices", 0, "capacity", "memory", "value")) == (
        "spec.devices[0].capacity.memory.value"
    )
    assert format_field_path(["metadata", "labels", "a.b/c"]) == 'metadata.labels["a.b/c"]'
    assert format_field_path(()) == ""


def test_quantity_table_matches_the_client_models() -> None:
    """Every quantity field listed exists (v1 and, for DRA, v1beta2) and is a string field."""
    for stem, fields in QUANTITY_FIELDS.items():
        classes = [getattr(k8s, f"V1{stem}")]
        if hasattr(k8s, f"V1beta2{stem}"):
            classes.append(getattr(k8s, f"V1beta2{stem}"))
        for cls in classes:
            for name in fields:
                assert name in cls.model_fields, (cls.__name__, name)
                assert "str" in str(cls.model_fields[name].annotation), (cls.__name__, name)


def test_as_model_refuses_an_unknown_kind() -> None:
    # The class of each supported kind: test_as_model_returns_the_client_class above.
    with pytest.raises(ObjectValidationError, match="unknown kind"):
        as_model({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
