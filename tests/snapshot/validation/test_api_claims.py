"""The API server's rules for claims, templates, classes, taint rules and pods
(``snapshot.validation.api``): one case per rule, refused with the API server's message at its
field path, before anything is written; and the allocator's limit of 32 devices per claim.

Expected messages are written by hand from Kubernetes 1.36's
``pkg/apis/resource/validation/validation.go`` (``validateDeviceClaim`` and what it calls,
``validateResourceClaimStatusUpdate``, ``validateDeviceClassSpec``; pods:
``pkg/apis/core/validation``; the limit: ``Allocate`` of the experimental allocator), the
limits from ``k8s.io/api/resource/v1/types.go`` at ``v0.36.0`` and apimachinery's
``field.Error`` wording. ``docs/validation.md`` lists every rule.
"""

from __future__ import annotations

import copy
import json

import pytest
from drasnap.snapshot.validation import validate
from drasnap.snapshot.validation.limits import ALLOCATION_RESULTS_MAX_SIZE

from tests.snapshot.validation.api_objects import (
    UID,
    Obj,
    allocated_claim,
    check_refused,
    claim,
    device_class,
    edit,
    error_of,
    exact,
    pod,
    taint_rule,
    template,
)

REQ = "spec.devices.requests[0]"
CLASS_EXPR = "spec.selectors[0].cel.expression"
LIMIT = (
    "exceeds the claim limit of 32 (the limit of Kubernetes' allocator: the API server accepts "
    "this claim, but the scheduler can allocate it on no node)"
)

# (id, object, field path, the API server's message)
CASES: list[tuple[str, Obj, str, str]] = [
    # -- claims: validateDeviceClaim ------------------------------------------------------------
    (
        "claim-33-requests",
        claim(*(exact(f"r{i}") for i in range(33))),
        "spec.devices.requests",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "claim-9-subrequests",
        claim(
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": f"s{i}", "deviceClassName": "gpu.example.com"} for i in range(9)
                ],
            }
        ),
        f"{REQ}.firstAvailable",
        "Too many: 9: must have at most 8 items",
    ),
    (
        "request-count-negative",
        claim(exact(count=-1)),
        f"{REQ}.exactly.count",
        "Invalid value: -1: must be greater than zero",
    ),
    (
        "request-all-with-count",
        claim(exact(allocationMode="All", count=2)),
        f"{REQ}.exactly.count",
        "Invalid value: 2: must not be specified when allocationMode is 'All'",
    ),
    (
        "request-unknown-mode",
        claim(exact(allocationMode="Some")),
        f"{REQ}.exactly.allocationMode",
        'Unsupported value: "Some": supported values: "All", "ExactCount"',
    ),
    (
        "subrequest-unknown-mode",
        claim(
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "a", "deviceClassName": "gpu.example.com", "allocationMode": "Any"}
                ],
            }
        ),
        f"{REQ}.firstAvailable[0].allocationMode",
        'Unsupported value: "Any": supported values: "All", "ExactCount"',
    ),
    (
        "request-33-selectors",
        claim(exact(selectors=[{"cel": {"expression": "true"}}] * 33)),
        f"{REQ}.exactly.selectors",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "selector-without-cel",
        claim(exact(selectors=[{}])),
        f"{REQ}.exactly.selectors[0].cel",
        "Required value",
    ),
    (
        "selector-expression-too-long",
        claim(exact(selectors=[{"cel": {"expression": "true" + " " * 10240}}])),
        f"{REQ}.exactly.selectors[0].cel.expression",
        "Too long: may not be more than 10240 bytes",
    ),
    (
        "claim-33-constraints",
        edit(
            claim(),
            lambda o: o["spec"]["devices"].update(
                constraints=[{"matchAttribute": "gpu.example.com/m"}] * 33
            ),
        ),
        "spec.devices.constraints",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "constraint-without-attribute",
        edit(claim(), lambda o: o["spec"]["devices"].update(constraints=[{"requests": ["gpu"]}])),
        "spec.devices.constraints[0]",
        'Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, '
        "but multiple fields are set",
    ),
    (
        "constraint-request-twice",
        edit(
            claim(),
            lambda o: o["spec"]["devices"].update(
                constraints=[{"requests": ["gpu", "gpu"], "matchAttribute": "gpu.example.com/m"}]
            ),
        ),
        "spec.devices.constraints[0].requests[1]",
        'Duplicate value: "gpu"',
    ),
    (
        "claim-33-configs",
        edit(
            claim(),
            lambda o: o["spec"]["devices"].update(
                config=[{"opaque": {"driver": "gpu.example.com", "parameters": {}}}] * 33
            ),
        ),
        "spec.devices.config",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "config-without-opaque",
        edit(claim(), lambda o: o["spec"]["devices"].update(config=[{"requests": ["gpu"]}])),
        "spec.devices.config[0].opaque",
        "Required value",
    ),
    (
        "config-parameters-too-long",
        edit(
            claim(),
            lambda o: o["spec"]["devices"].update(
                config=[{"opaque": {"driver": "gpu.example.com", "parameters": {"a": "x" * 10240}}}]
            ),
        ),
        "spec.devices.config[0].opaque.parameters",
        "Too long: may not be more than 10240 bytes",
    ),
    # -- a claim's status: validateResourceClaimStatusUpdate -----------------------------------
    (
        "reserved-without-allocation",
        edit(allocated_claim(), lambda o: o["status"].pop("allocation")),
        "status.reservedFor",
        "Forbidden: may not be specified when `allocated` is not set",
    ),
    (
        "reserved-for-twice",
        edit(
            allocated_claim(),
            lambda o: o["status"]["reservedFor"].append(o["status"]["reservedFor"][0]),
        ),
        "status.reservedFor[1]",
        f'Duplicate value: "{UID}"',
    ),
    (
        "reserved-for-without-uid",
        edit(allocated_claim(), lambda o: o["status"]["reservedFor"][0].update(uid="")),
        "status.reservedFor[0].uid",
        "Required value",
    ),
    (
        "allocation-33-results",
        edit(
            allocated_claim(),
            lambda o: o["status"]["allocation"]["devices"].update(
                results=o["status"]["allocation"]["devices"]["results"] * 33
            ),
        ),
        "status.allocation.devices.results",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "result-for-an-unknown-request",
        edit(
            allocated_claim(),
            lambda o: o["status"]["allocation"]["devices"]["results"][0].update(request="cpu"),
        ),
        "status.allocation.devices.results[0].request",
        'Invalid value: "cpu": must be the name of a request in the claim or the name of a '
        "request and a subrequest separated by '/'",
    ),
    (
        "result-share-id-uppercase",
        edit(
            allocated_claim(),
            lambda o: o["status"]["allocation"]["devices"]["results"][0].update(
                shareID=UID.upper()
            ),
        ),
        "status.allocation.devices.results[0].shareID",
        f'Invalid value: "{UID.upper()}": uid must be in RFC 4122 normalized form, '
        "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters",
    ),
    (
        "result-share-id-short",
        edit(
            allocated_claim(),
            lambda o: o["status"]["allocation"]["devices"]["results"][0].update(shareID="abc"),
        ),
        "status.allocation.devices.results[0].shareID",
        'Invalid value: "abc": error validating uid: invalid UUID length: 3',
    ),
    (
        "allocation-config-source",
        edit(
            allocated_claim(),
            lambda o: o["status"]["allocation"]["devices"].update(
                config=[
                    {
                        "source": "FromPod",
                        "opaque": {"driver": "gpu.example.com", "parameters": {}},
                    }
                ]
            ),
        ),
        "status.allocation.devices.config[0].source",
        'Unsupported value: "FromPod": supported values: "FromClaim", "FromClass"',
    ),
    # -- the allocator's limit of 32 devices per claim, found up front ------------------------
    (
        "claim-count-1000000000",
        claim(exact(count=1_000_000_000)),
        f"{REQ}.exactly.count",
        f"Invalid value: 1000000000: number of requested devices 1000000000 {LIMIT}",
    ),
    (
        "claim-requests-33-devices-together",
        claim(exact("a", count=16), exact("b", count=17)),
        "spec.devices.requests",
        f"Invalid value: 33: number of requested devices 33 {LIMIT}",
    ),
    (
        "claim-smallest-alternative-33-devices",
        claim(
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "a", "deviceClassName": "gpu.example.com", "count": 40},
                    {"name": "b", "deviceClassName": "gpu.example.com", "count": 33},
                ],
            }
        ),
        f"{REQ}.firstAvailable",
        f"Invalid value: 33: number of requested devices 33 {LIMIT}",
    ),
    (
        "template-count-33",
        template(exact(count=33)),
        "spec.spec.devices.requests[0].exactly.count",
        f"Invalid value: 33: number of requested devices 33 {LIMIT}",
    ),
    # -- device classes: validateDeviceClassSpec -----------------------------------------------
    (
        "class-33-selectors",
        device_class(selectors=[{"cel": {"expression": "true"}}] * 33),
        "spec.selectors",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "class-33-configs",
        device_class(config=[{"opaque": {"driver": "gpu.example.com", "parameters": {}}}] * 33),
        "spec.config",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "class-config-without-opaque",
        device_class(config=[{}]),
        "spec.config[0].opaque",
        "Required value",
    ),
    (
        "class-extended-resource-name-native",
        device_class(extendedResourceName="gpu"),
        "spec.extendedResourceName",
        'Invalid value: "gpu": must be a valid extended resource name',
    ),
    (
        "class-extended-resource-name-kubernetes-io",
        device_class(extendedResourceName="kubernetes.io/gpu"),
        "spec.extendedResourceName",
        'Invalid value: "kubernetes.io/gpu": must be a valid extended resource name',
    ),
    # -- DeviceTaintRule: validateDeviceTaint --------------------------------------------------
    (
        "taint-rule-effect-empty",
        edit(taint_rule(), lambda o: o["spec"]["taint"].update(effect="")),
        "spec.taint.effect",
        "Required value",
    ),
    # -- pods: validatePodResourceClaim, validateResourceClaimNames ----------------------------
    (
        "pod-claim-with-neither-source",
        edit(pod(), lambda o: o["spec"]["resourceClaims"][0].pop("resourceClaimTemplateName")),
        "spec.resourceClaims[0]",
        'Invalid value: {"name":"gpu"}: must specify one of: `resourceClaimName`, '
        "`resourceClaimTemplateName`",
    ),
    (
        "pod-claim-with-both-sources",
        edit(pod(), lambda o: o["spec"]["resourceClaims"][0].update(resourceClaimName="c")),
        "spec.resourceClaims[0]",
        'Invalid value: {"name":"gpu","resourceClaimName":"c","resourceClaimTemplateName":"t"}: '
        "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
    ),
    (
        "pod-claim-name-twice",
        edit(pod(), lambda o: o["spec"]["resourceClaims"].append(o["spec"]["resourceClaims"][0])),
        "spec.resourceClaims[1].name",
        'Duplicate value: "gpu"',
    ),
    (
        "container-claim-unknown",
        edit(
            pod(), lambda o: o["spec"]["containers"][0]["resources"]["claims"][0].update(name="tpu")
        ),
        "spec.containers[0].resources.claims[0]",
        'Not found: "tpu": must be one of the names in pod.spec.resourceClaims: gpu',
    ),
    (
        "container-claim-without-pod-claims",
        edit(pod(), lambda o: o["spec"].pop("resourceClaims")),
        "spec.containers[0].resources.claims[0]",
        'Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty',
    ),
    (
        "container-claim-twice",
        edit(
            pod(),
            lambda o: o["spec"]["containers"][0]["resources"].update(
                claims=[{"name": "gpu"}, {"name": "gpu"}]
            ),
        ),
        "spec.containers[0].resources.claims[1]",
        'Duplicate value: "gpu"',
    ),
    (
        "pod-claim-status-unknown",
        edit(
            pod(),
            lambda o: o.update(
                status={"resourceClaimStatuses": [{"name": "tpu", "resourceClaimName": "p-tpu"}]}
            ),
        ),
        "status.resourceClaimStatuses[0].name",
        'Invalid value: "tpu": must match the name of an entry in `spec.resourceClaims`',
    ),
]


@pytest.mark.parametrize(("obj", "path", "body"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_api_server_refuses(obj: Obj, path: str, body: str) -> None:
    check_refused(obj, path, body)


VALID: list[tuple[str, Obj]] = [
    ("claim-32-devices", claim(exact("a", count=16), exact("b", count=16))),
    (
        "claim-all-mode-counts-none-up-front",
        claim(exact("a", count=32), exact("b", allocationMode="All")),
    ),
    ("allocated-claim", allocated_claim()),
    ("class", device_class(extendedResourceName="example.com/gpu")),
    ("pod", pod()),
    ("taint-rule", taint_rule()),
]


@pytest.mark.parametrize("obj", [v[1] for v in VALID], ids=[v[0] for v in VALID])
def test_what_the_api_server_accepts_passes(obj: Obj) -> None:
    validate(copy.deepcopy(obj))


def test_an_allocated_claim_is_not_held_to_the_allocator_limit() -> None:
    # The allocator never allocates an allocated claim again: only its results are limited.
    obj = allocated_claim()
    obj["spec"]["devices"]["requests"][0]["exactly"]["count"] = 40
    validate(obj)


def test_a_count_of_zero_is_defaulted_to_one_with_a_note() -> None:
    # SetDefaults_ExactDeviceRequest: ExactCount and count 0 (Go's unset) -> 1.
    obj = claim(exact(count=0), exact("all", allocationMode="All", count=0))
    notes: list[str] = []
    out = validate(obj, warnings=notes)
    requests = out["spec"]["devices"]["requests"]
    assert requests[0]["exactly"]["count"] == 1
    assert requests[1]["exactly"]["count"] == 0  # "All" takes no count: left as written
    assert notes == [
        "ResourceClaim ml/c: spec.devices.requests[0].exactly.count: count 0 taken as 1 "
        "(the API server's default)"
    ]


@pytest.mark.parametrize(
    ("expression", "reason"),
    [("device.driver ==", "Syntax error"), ('"gpu"', "must evaluate to bool")],
    ids=["syntax", "not-bool"],
)
def test_a_selector_that_does_not_compile(expression: str, reason: str) -> None:
    # validateCELSelector: "Invalid value: <expression>: compilation failed: ..." (the detail
    # is the CEL compiler's, drasnap's engine words it its own way).
    obj = device_class(selectors=[{"cel": {"expression": expression}}])
    text = str(error_of(obj))
    shown = json.dumps(expression)
    prefix = (
        f"x.yaml doc 1: DeviceClass gpu.example.com: {CLASS_EXPR}: Invalid value: {shown}: "
        "compilation failed: "
    )
    assert text.startswith(prefix)
    assert reason in text


def test_the_allocator_uses_the_same_limit() -> None:
    from drasnap.snapshot.allocation.requests import MAX_DEVICES_PER_CLAIM

    assert MAX_DEVICES_PER_CLAIM is ALLOCATION_RESULTS_MAX_SIZE


def test_parameters_that_are_not_an_object_are_refused_by_the_model() -> None:
    # validateRawExtension's "must be a valid JSON object": the client model (an object field)
    # refuses a list first, in its own words.
    obj = claim()
    obj["spec"]["devices"]["config"] = [
        {"opaque": {"driver": "gpu.example.com", "parameters": [1, 2]}}
    ]
    assert str(error_of(obj)) == (
        "x.yaml doc 1: ResourceClaim ml/c: spec.devices.config[0].opaque.parameters: "
        "expected a mapping, got a list"
    )
