"""snapshot.validation.names: names the API server would reject are refused with their path.

Rules and messages from upstream ``pkg/apis/resource/validation/validation.go`` and
apimachinery's ``pkg/api/validate/content``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.validation import validate
from drasnap.snapshot.validation.formats import dns_label, dns_subdomain, label_key, label_value

DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
C_IDENTIFIER = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used "
    "for validation is '[A-Za-z_][A-Za-z0-9_]*')"
)


def slice_() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-a-gpu", "labels": {"example.com/tier": "gold"}},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-a",
            "pool": {"name": "node-a", "generation": 0, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": "gpu-0",
                    "attributes": {
                        "model": {"string": "x"},
                        "gpu.example.com/uuid": {"string": "u"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                    "taints": [{"key": "example.com/broken", "effect": "NoSchedule"}],
                },
                {
                    "name": "gpu-1",
                    "consumesCounters": [
                        {"counterSet": "gpu-0-set", "counters": {"mem": {"value": "1"}}}
                    ],
                },
            ],
        },
    }


def slice_with_counters() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-a-counters"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-a",
            "pool": {"name": "node-a", "generation": 0, "resourceSliceCount": 2},
            "sharedCounters": [{"name": "gpu-0-set", "counters": {"mem": {"value": "80Gi"}}}],
        },
    }


def claim() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": {
            "devices": {
                "requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}},
                    {
                        "name": "either",
                        "firstAvailable": [
                            {"name": "big", "deviceClassName": "gpu.example.com"},
                            {"name": "small", "deviceClassName": "gpu.example.com"},
                        ],
                    },
                ],
                "constraints": [
                    {"requests": ["gpu", "either/big"], "matchAttribute": "gpu.example.com/model"}
                ],
                "config": [
                    {
                        "requests": ["gpu"],
                        "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}},
                    }
                ],
            }
        },
        "status": {
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
            }
        },
    }


def template() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "ml"},
        "spec": {"spec": claim()["spec"]},
    }


def pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {
            "containers": [{"name": "c", "image": "busybox"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
        },
    }


def taint_rule() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "r"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-a", "device": "gpu-0"},
            "taint": {"key": "example.com/unhealthy", "value": "true", "effect": "NoExecute"},
        },
    }


def device_class() -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]},
    }


@pytest.mark.parametrize(
    "make",
    [slice_, slice_with_counters, claim, template, pod, taint_rule, device_class],
    ids=["slice", "counters", "claim", "template", "pod", "taint-rule", "class"],
)
def test_valid_names_pass(make: Callable[[], dict[str, Any]]) -> None:
    validate(make())


def set_path(obj: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    target = obj
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return obj


def rename_key(obj: dict[str, Any], path: tuple[Any, ...], old: str, new: str) -> dict[str, Any]:
    target = obj
    for part in path:
        target = target[part]
    target[new] = target.pop(old)
    return obj


DEV0 = ("spec", "devices", 0)
REQ0 = ("spec", "devices", "requests", 0)


def error_of(obj: dict[str, Any]) -> ObjectValidationError:
    with pytest.raises(ObjectValidationError) as info:
        validate(copy.deepcopy(obj), source="x.yaml doc 1")
    return info.value


# (object, wrong value written at path) -> (field path in the message, message body)
CASES = [
    (
        "device-name",
        set_path(slice_(), (*DEV0, "name"), "Bad_Name"),
        "spec.devices[0].name",
        f'Invalid value: "Bad_Name": {DNS_LABEL}',
    ),
    (
        "device-name-dots",
        set_path(slice_(), (*DEV0, "name"), "gpu.0"),
        "spec.devices[0].name",
        'Invalid value: "gpu.0": must not contain dots',
    ),
    (
        "device-name-too-long",
        set_path(slice_(), (*DEV0, "name"), "g" * 64),
        "spec.devices[0].name",
        f'Invalid value: "{"g" * 64}": must be no more than 63 characters',
    ),
    (
        "duplicate-device",
        set_path(slice_(), ("spec", "devices", 1, "name"), "gpu-0"),
        "spec.devices[1]",
        'Duplicate value: "gpu-0"',
    ),
    (
        "pool-name",
        set_path(slice_(), ("spec", "pool", "name"), "Bad_Name"),
        "spec.pool.name",
        f'Invalid value: "Bad_Name": {DNS_SUBDOMAIN}',
    ),
    (
        "pool-name-part",
        set_path(slice_(), ("spec", "pool", "name"), "rack-1//node-a"),
        "spec.pool.name",
        f'Invalid value: "": {DNS_SUBDOMAIN}',
    ),
    (
        "pool-empty",
        set_path(slice_(), ("spec", "pool", "name"), ""),
        "spec.pool.name",
        "Required value",
    ),
    (
        "slice-count",
        set_path(slice_(), ("spec", "pool", "resourceSliceCount"), 0),
        "spec.pool.resourceSliceCount",
        "Invalid value: 0: must be greater than zero",
    ),
    (
        "driver",
        set_path(slice_(), ("spec", "driver"), "gpu_example.com"),
        "spec.driver",
        f'Invalid value: "gpu_example.com": {DNS_SUBDOMAIN}',
    ),
    (
        "driver-too-long",
        set_path(slice_(), ("spec", "driver"), "a" * 64),
        "spec.driver",
        "Too long: may not be more than 63 bytes",
    ),
    (
        "slice-node-name",
        set_path(slice_(), ("spec", "nodeName"), "Node_A"),
        "spec.nodeName",
        f'Invalid value: "Node_A": {DNS_SUBDOMAIN}',
    ),
    (
        "slice-empty-node-name",
        set_path(slice_(), ("spec", "nodeName"), ""),
        "spec.nodeName",
        'Invalid value: "": must be either unset or set to a non-empty string',
    ),
    (
        "attribute-name",
        rename_key(slice_(), (*DEV0, "attributes"), "model", "model-name"),
        "spec.devices[0].attributes.model-name",
        f'Invalid value: "model-name": {C_IDENTIFIER}',
    ),
    (
        "attribute-domain",
        rename_key(slice_(), (*DEV0, "attributes"), "gpu.example.com/uuid", "GPU_x/uuid"),
        'spec.devices[0].attributes["GPU_x/uuid"]',
        f'Invalid value: "GPU_x": {DNS_SUBDOMAIN}',
    ),
    (
        "attribute-too-long",
        rename_key(slice_(), (*DEV0, "attributes"), "model", "m" * 33),
        f"spec.devices[0].attributes.{'m' * 33}",
        "Too long: may not be more than 32 bytes",
    ),
    (
        "attribute-two-values",
        set_path(slice_(), (*DEV0, "attributes", "model"), {"string": "x", "int": 1}),
        "spec.devices[0].attributes.model",
        'Invalid value: "": exactly one value must be specified',
    ),
    (
        "capacity-name",
        rename_key(slice_(), (*DEV0, "capacity"), "memory", "1memory"),
        'spec.devices[0].capacity["1memory"]',
        f'Invalid value: "1memory": {C_IDENTIFIER}',
    ),
    (
        "taint-effect",
        set_path(slice_(), (*DEV0, "taints", 0, "effect"), "PreferNoSchedule"),
        "spec.devices[0].taints[0].effect",
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", '
        '"None"',
    ),
    (
        "counter-set",
        set_path(slice_(), ("spec", "devices", 1, "consumesCounters", 0, "counterSet"), "Set"),
        "spec.devices[1].consumesCounters[0].counterSet",
        f'Invalid value: "Set": {DNS_LABEL}',
    ),
    (
        "shared-counter-name",
        rename_key(slice_with_counters(), ("spec", "sharedCounters", 0, "counters"), "mem", "MEM"),
        "spec.sharedCounters[0].counters.MEM",
        f'Invalid value: "MEM": {DNS_LABEL}',
    ),
    (
        "request-name",
        set_path(claim(), (*REQ0, "name"), "Bad_Name"),
        "spec.devices.requests[0].name",
        f'Invalid value: "Bad_Name": {DNS_LABEL}',
    ),
    (
        "duplicate-request",
        set_path(claim(), ("spec", "devices", "requests", 1, "name"), "gpu"),
        "spec.devices.requests[1]",
        'Duplicate value: "gpu"',
    ),
    (
        "subrequest-name",
        set_path(claim(), ("spec", "devices", "requests", 1, "firstAvailable", 1, "name"), "S"),
        "spec.devices.requests[1].firstAvailable[1].name",
        f'Invalid value: "S": {DNS_LABEL}',
    ),
    (
        "class-name",
        set_path(claim(), (*REQ0, "exactly", "deviceClassName"), "GPU"),
        "spec.devices.requests[0].exactly.deviceClassName",
        f'Invalid value: "GPU": {DNS_SUBDOMAIN}',
    ),
    (
        "class-name-empty",
        set_path(claim(), (*REQ0, "exactly", "deviceClassName"), ""),
        "spec.devices.requests[0].exactly.deviceClassName",
        "Required value",
    ),
    (
        "constraint-unknown-request",
        set_path(claim(), ("spec", "devices", "constraints", 0, "requests", 1), "either/huge"),
        "spec.devices.constraints[0].requests[1]",
        'Invalid value: "either/huge": must be the name of a request in the claim or the name of '
        "a request and a subrequest separated by '/'",
    ),
    (
        "match-attribute",
        set_path(claim(), ("spec", "devices", "constraints", 0, "matchAttribute"), "model"),
        "spec.devices.constraints[0].matchAttribute",
        'Invalid value: "model": a fully qualified name must be a domain and a name separated by '
        "a slash",
    ),
    (
        "config-driver",
        set_path(claim(), ("spec", "devices", "config", 0, "opaque", "driver"), "Bad_Driver"),
        "spec.devices.config[0].opaque.driver",
        f'Invalid value: "Bad_Driver": {DNS_SUBDOMAIN}',
    ),
    (
        "result-device",
        set_path(claim(), ("status", "allocation", "devices", "results", 0, "device"), "GPU0"),
        "status.allocation.devices.results[0].device",
        f'Invalid value: "GPU0": {DNS_LABEL}',
    ),
    (
        "toleration-operator",
        set_path(claim(), (*REQ0, "exactly", "tolerations"), [{"key": "k", "operator": "In"}]),
        "spec.devices.requests[0].exactly.tolerations[0].operator",
        'Unsupported value: "In": supported values: "Equal", "Exists"',
    ),
    (
        "template-request",
        set_path(template(), ("spec", "spec", "devices", "requests", 0, "name"), "GPU"),
        "spec.spec.devices.requests[0].name",
        f'Invalid value: "GPU": {DNS_LABEL}',
    ),
    (
        "object-name",
        set_path(slice_(), ("metadata", "name"), "Node-A"),
        "metadata.name",
        f'Invalid value: "Node-A": {DNS_SUBDOMAIN}',
    ),
    (
        "namespace",
        set_path(claim(), ("metadata", "namespace"), "my.ns"),
        "metadata.namespace",
        'Invalid value: "my.ns": must not contain dots',
    ),
    (
        "label-value",
        set_path(slice_(), ("metadata", "labels", "example.com/tier"), "gold!"),
        'metadata.labels["example.com/tier"]',
        'Invalid value: "gold!": a valid label must be an empty string or consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ),
    (
        "pod-claim-name",
        set_path(pod(), ("spec", "resourceClaims", 0, "name"), "GPU"),
        "spec.resourceClaims[0].name",
        f'Invalid value: "GPU": {DNS_LABEL}',
    ),
    (
        "pod-template-name",
        set_path(pod(), ("spec", "resourceClaims", 0, "resourceClaimTemplateName"), "T_1"),
        "spec.resourceClaims[0].resourceClaimTemplateName",
        f'Invalid value: "T_1": {DNS_SUBDOMAIN}',
    ),
    (
        "taint-rule-device",
        set_path(taint_rule(), ("spec", "deviceSelector", "device"), "GPU-0"),
        "spec.deviceSelector.device",
        f'Invalid value: "GPU-0": {DNS_LABEL}',
    ),
    (
        "taint-rule-key",
        set_path(taint_rule(), ("spec", "taint", "key"), "a/b/c"),
        "spec.taint.key",
        'Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
        "or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
        "'/' (e.g. 'example.com/MyName')",
    ),
    (
        "request-without-type",
        set_path(claim(), REQ0, {"name": "gpu"}),
        "spec.devices.requests[0]",
        "Required value: exactly one of `exactly` or `firstAvailable` is required",
    ),
    (
        "request-with-both-types",
        set_path(claim(), (*REQ0, "firstAvailable"), [{"name": "a", "deviceClassName": "c"}]),
        "spec.devices.requests[0]",
        "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but "
        "multiple fields are set",
    ),
    (
        "slice-two-node-selections",
        set_path(slice_(), ("spec", "allNodes"), True),
        "spec",
        'Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, '
        "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set",
    ),
    (
        "slice-all-nodes-false",
        set_path(slice_(), ("spec", "allNodes"), False),
        "spec.allNodes",
        "Invalid value: false: must be either unset or set to true",
    ),
    (
        "class-config-driver",
        set_path(device_class(), ("spec", "config", 0, "opaque", "driver"), ""),
        "spec.config[0].opaque.driver",
        "Required value",
    ),
]


@pytest.mark.parametrize(("obj", "path", "body"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_names_the_api_server_refuses(obj: dict[str, Any], path: str, body: str) -> None:
    err = error_of(obj)
    kind = obj["kind"]
    namespace = obj["metadata"].get("namespace")
    name = obj["metadata"]["name"]
    label = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
    # A renamed request also breaks the references to it: those are counted after the first.
    assert str(err).split(" (and ")[0] == f"x.yaml doc 1: {label}: {path}: {body}"
    assert (err.source, err.kind, err.field) == ("x.yaml doc 1", kind, path)


def test_several_problems_are_counted() -> None:
    obj = slice_()
    obj["spec"]["devices"][0]["name"] = "A"
    obj["spec"]["devices"][1]["name"] = "B"
    obj["spec"]["driver"] = "x_y"
    err = error_of(obj)
    assert str(err).startswith(
        'x.yaml doc 1: ResourceSlice node-a-gpu: spec.driver: Invalid value: "x_y"'
    )
    assert str(err).endswith("(and 2 more problems: spec.devices[0].name, spec.devices[1].name)")


@pytest.mark.parametrize(
    ("check", "value", "valid"),
    [
        (dns_label, "gpu-0", True),
        (dns_label, "0", True),
        (dns_label, "-gpu", False),
        (dns_label, "gpu-", False),
        (dns_label, "a" * 63, True),
        (dns_subdomain, "gpu.example.com", True),
        (dns_subdomain, "gpu..example", False),
        (dns_subdomain, "a" * 254, False),
        (label_key, "example.com/Name_1", True),
        (label_key, "/name", False),
        (label_key, "example.com/", False),
        (label_value, "", True),
        (label_value, "a_b.c-D", True),
        (label_value, "-a", False),
    ],
    ids=lambda v: v.__name__ if callable(v) else str(v)[:20],
)
def test_formats(check: Callable[[str], tuple[str, ...]], value: str, valid: bool) -> None:
    assert (check(value) == ()) is valid
