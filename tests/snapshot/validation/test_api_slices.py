"""The API server's rules for ResourceSlices (``snapshot.validation.api``): one case per rule,
refused with the API server's message at its field path, before anything is written.

Expected messages are written by hand from Kubernetes 1.36's
``pkg/apis/resource/validation/validation.go`` (``validateResourceSliceSpec``,
``validateDevice``, the request policies; node selectors: ``pkg/apis/core/validation``), the
limits from ``k8s.io/api/resource/v1/types.go`` at ``v0.36.0`` and apimachinery's
``field.Error`` wording (``Too many: N: must have at most M items``, ...).
``docs/validation.md`` lists every rule.
"""

from __future__ import annotations

import copy

import pytest
from drasnap.snapshot.validation import validate

from tests.snapshot.validation.api_objects import (
    Obj,
    check_refused,
    consuming,
    counters_slice,
    dev0,
    edit,
    error_of,
    expr,
    listing,
    multi_slice,
    per_device_slice,
    selector_slice,
    slice_,
    tainted,
)

TERMS = "spec.nodeSelector.nodeSelectorTerms"
ONE_PER_DEVICE = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)
POLICY = "spec.devices[0].capacity.memory.requestPolicy"

# (id, object, field path, the API server's message)
CASES: list[tuple[str, Obj, str, str]] = [
    # -- ResourceSlice: validateResourceSliceSpec ---------------------------------------------
    (
        "slice-counters-and-devices",
        edit(slice_(), lambda o: o["spec"].update(counters_slice()["spec"])),
        "spec",
        'Invalid value: "": only one of `sharedCounters` or `devices` is allowed',
    ),
    (
        "slice-counters-and-empty-devices",
        edit(counters_slice(), lambda o: o["spec"].update(devices=[])),
        "spec",
        'Invalid value: "": only one of `sharedCounters` or `devices` is allowed',
    ),
    (
        "slice-no-node-selection",
        edit(slice_(), lambda o: o["spec"].pop("nodeName")),
        "spec",
        "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
        "`perDeviceNodeSelection` is required",
    ),
    (
        "slice-129-devices",
        slice_(129),
        "spec.devices",
        "Too many: 129: must have at most 128 items",
    ),
    (
        "slice-65-devices-one-tainted",
        tainted(65),
        "spec.devices",
        "Too many: 65: must have at most 64 items",
    ),
    (
        "slice-65-devices-one-consuming-counters",
        consuming(65),
        "spec.devices",
        "Too many: 65: must have at most 64 items",
    ),
    (
        "slice-65-devices-one-list-attribute",
        listing(65),
        "spec.devices",
        "Too many: 65: must have at most 64 items",
    ),
    (
        "slice-selector-two-terms",
        selector_slice(expr("a", "Exists"), expr("b", "Exists")),
        TERMS,
        'Invalid value: [{"matchExpressions":[{"key":"a","operator":"Exists"}]},'
        '{"matchExpressions":[{"key":"b","operator":"Exists"}]}]: must have exactly one node '
        "selector term",
    ),
    (
        "slice-selector-no-term",
        selector_slice(),
        TERMS,
        "Required value: must have at least one node selector term",
    ),
    (
        "selector-in-without-values",
        selector_slice(expr("a", "In")),
        f"{TERMS}[0].matchExpressions[0].values",
        "Required value: must be specified when `operator` is 'In' or 'NotIn'",
    ),
    (
        "selector-exists-with-values",
        selector_slice(expr("a", "Exists", "x")),
        f"{TERMS}[0].matchExpressions[0].values",
        "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ),
    (
        "selector-gt-two-values",
        selector_slice(expr("a", "Gt", "1", "2")),
        f"{TERMS}[0].matchExpressions[0].values",
        "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
    ),
    (
        "selector-bad-operator",
        selector_slice(expr("a", "Maybe")),
        f"{TERMS}[0].matchExpressions[0].operator",
        'Invalid value: "Maybe": not a valid selector operator',
    ),
    (
        "selector-bad-label-value",
        selector_slice(expr("a", "In", "-x")),
        f"{TERMS}[0].matchExpressions[0].values[0]",
        'Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ),
    (
        "selector-field-key",
        selector_slice(expr("metadata.labels", "In", "x", field="matchFields")),
        f"{TERMS}[0].matchFields[0].key",
        'Invalid value: "metadata.labels": not a valid field selector key',
    ),
    (
        "selector-field-two-values",
        selector_slice(expr("metadata.name", "In", "a", "b", field="matchFields")),
        f"{TERMS}[0].matchFields[0].values",
        "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node "
        "field selector",
    ),
    # -- counter sets: validateCounterSet ------------------------------------------------------
    (
        "slice-9-counter-sets",
        counters_slice(9),
        "spec.sharedCounters",
        "Too many: 9: must have at most 8 items",
    ),
    (
        "counter-set-no-counters",
        edit(counters_slice(), lambda o: o["spec"]["sharedCounters"][0].update(counters={})),
        "spec.sharedCounters[0].counters",
        "Required value",
    ),
    (
        "counter-set-33-counters",
        counters_slice(1, 33),
        "spec.sharedCounters[0].counters",
        "Too many: 33: must have at most 32 items",
    ),
    # -- devices: validateDevice ----------------------------------------------------------------
    (
        "device-33-attributes-and-capacities",
        edit(
            slice_(),
            lambda o: dev0(o).update(
                attributes={f"a{i}": {"int": i} for i in range(20)},
                capacity={f"c{i}": {"value": "1"} for i in range(13)},
            ),
        ),
        "spec.devices[0]",
        "Invalid value: 33: the total number of attributes and capacities must not exceed 32",
    ),
    (
        "device-49-attribute-values",
        edit(
            slice_(),
            lambda o: dev0(o).update(
                attributes={"roots": {"strings": [f"r{i}" for i in range(48)]}, "x": {"int": 1}}
            ),
        ),
        "spec.devices[0]",
        "Invalid value: 49: the total number of attribute values must not exceed 48",
    ),
    (
        "attribute-string-too-long",
        edit(slice_(), lambda o: dev0(o).update(attributes={"model": {"string": "x" * 65}})),
        "spec.devices[0].attributes.model.string",
        "Too long: may not be more than 64 bytes",
    ),
    (
        "attribute-version-not-semver",
        edit(slice_(), lambda o: dev0(o).update(attributes={"v": {"version": "1.0"}})),
        "spec.devices[0].attributes.v.version",
        'Invalid value: "1.0": must be a string compatible with semver.org spec 2.0.0',
    ),
    (
        "attribute-empty-list",
        edit(slice_(), lambda o: dev0(o).update(attributes={"roots": {"bools": []}})),
        "spec.devices[0].attributes.roots.bools",
        "Invalid value: []bool{}: must not be empty if specified",
    ),
    (
        "attribute-list-item-too-long",
        edit(slice_(), lambda o: dev0(o).update(attributes={"roots": {"strings": ["y" * 65]}})),
        "spec.devices[0].attributes.roots.strings[0]",
        "Too long: may not be more than 64 bytes",
    ),
    (
        "attribute-list-version-not-semver",
        edit(slice_(), lambda o: dev0(o).update(attributes={"vs": {"versions": ["1"]}})),
        "spec.devices[0].attributes.vs.versions[0]",
        'Invalid value: "1": must be a string compatible with semver.org spec 2.0.0',
    ),
    (
        "device-17-taints",
        edit(
            slice_(),
            lambda o: dev0(o).update(
                taints=[{"key": f"example.com/t{i}", "effect": "NoSchedule"} for i in range(17)]
            ),
        ),
        "spec.devices[0].taints",
        "Too many: 17: must have at most 16 items",
    ),
    (
        "taint-effect-empty",
        edit(slice_(), lambda o: dev0(o).update(taints=[{"key": "example.com/t", "effect": ""}])),
        "spec.devices[0].taints[0].effect",
        "Required value",
    ),
    (
        "device-3-counter-consumptions",
        edit(
            slice_(),
            lambda o: dev0(o).update(
                consumesCounters=[
                    {"counterSet": f"s{i}", "counters": {"m": {"value": "1"}}} for i in range(3)
                ]
            ),
        ),
        "spec.devices[0].consumesCounters",
        "Too many: 3: must have at most 2 items",
    ),
    (
        "counter-consumption-twice-the-same-set",
        edit(
            slice_(),
            lambda o: dev0(o).update(
                consumesCounters=[{"counterSet": "s", "counters": {"m": {"value": "1"}}}] * 2
            ),
        ),
        "spec.devices[0].consumesCounters[1]",
        'Duplicate value: "s"',
    ),
    (
        "counter-consumption-no-counters",
        edit(
            slice_(),
            lambda o: dev0(o).update(consumesCounters=[{"counterSet": "s", "counters": {}}]),
        ),
        "spec.devices[0].consumesCounters[0].counters",
        "Required value",
    ),
    (
        "counter-consumption-33-counters",
        edit(
            slice_(),
            lambda o: dev0(o).update(
                consumesCounters=[
                    {"counterSet": "s", "counters": {f"c{i}": {"value": "1"} for i in range(33)}}
                ]
            ),
        ),
        "spec.devices[0].consumesCounters[0].counters",
        "Too many: 33: must have at most 32 items",
    ),
    (
        "device-node-without-per-device-selection",
        edit(slice_(), lambda o: dev0(o).update(allNodes=True)),
        "spec.devices[0]",
        "Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
    ),
    (
        "per-device-selection-device-says-nothing",
        edit(per_device_slice(), lambda o: dev0(o).pop("nodeName")),
        "spec.devices[0]",
        f"Required value: {ONE_PER_DEVICE}",
    ),
    (
        "per-device-selection-device-says-twice",
        edit(per_device_slice(), lambda o: dev0(o).update(allNodes=True)),
        "spec.devices[0]",
        f'Invalid value: "{{`nodeName`, `allNodes`}}": {ONE_PER_DEVICE}',
    ),
    (
        "per-device-node-name-empty",
        edit(per_device_slice(), lambda o: dev0(o).update(nodeName="", allNodes=True)),
        "spec.devices[0].nodeName",
        'Invalid value: "": must not be empty',
    ),
    (
        "per-device-all-nodes-false",
        edit(per_device_slice(), lambda o: dev0(o).update(allNodes=False)),
        "spec.devices[0].allNodes",
        "Invalid value: false: must be either unset or set to true",
    ),
    (
        "per-device-node-selector",
        edit(
            per_device_slice(),
            lambda o: (
                dev0(o).update(nodeSelector={"nodeSelectorTerms": []}) or dev0(o).pop("nodeName")
            ),
        ),
        "spec.devices[0].nodeSelector.nodeSelectorTerms",
        "Required value: must have at least one node selector term",
    ),
    # -- binding conditions: validateDeviceBindingParameters -----------------------------------
    (
        "binding-conditions-5",
        edit(
            slice_(),
            lambda o: dev0(o).update(
                bindingConditions=[f"c{i}" for i in range(5)], bindingFailureConditions=["f"]
            ),
        ),
        "spec.devices[0].bindingConditions",
        "Too many: 5: must have at most 4 items",
    ),
    (
        "binding-failure-conditions-5",
        edit(
            slice_(),
            lambda o: dev0(o).update(
                bindingConditions=["c"], bindingFailureConditions=[f"f{i}" for i in range(5)]
            ),
        ),
        "spec.devices[0].bindingFailureConditions",
        "Too many: 5: must have at most 4 items",
    ),
    (
        "binding-condition-twice",
        edit(
            slice_(),
            lambda o: dev0(o).update(bindingConditions=["c", "c"], bindingFailureConditions=["f"]),
        ),
        "spec.devices[0].bindingConditions[1]",
        'Duplicate value: "c"',
    ),
    (
        "binding-conditions-overlap",
        edit(
            slice_(),
            lambda o: dev0(o).update(bindingConditions=["c"], bindingFailureConditions=["c"]),
        ),
        "spec.devices[0].bindingFailureConditions[0]",
        'Invalid value: "c": bindingFailureConditions must not overlap with bindingConditions',
    ),
    (
        "binding-conditions-without-failure-conditions",
        edit(slice_(), lambda o: dev0(o).update(bindingConditions=["c"])),
        "spec.devices[0].bindingFailureConditions",
        "Invalid value: []string(nil): bindingFailureConditions are required to use "
        "bindingConditions",
    ),
    (
        "binding-failure-conditions-alone",
        edit(
            slice_(), lambda o: dev0(o).update(bindingConditions=[], bindingFailureConditions=["f"])
        ),
        "spec.devices[0].bindingConditions",
        "Invalid value: []string{}: bindingConditions are required to use bindingFailureConditions",
    ),
    # -- consumable capacity: validateRequestPolicy --------------------------------------------
    (
        "policy-without-multiple-allocations",
        edit(multi_slice({"default": "1"}), lambda o: dev0(o).pop("allowMultipleAllocations")),
        POLICY,
        "Forbidden: allowMultipleAllocations must be true",
    ),
    (
        "policy-values-and-range",
        multi_slice({"default": "1", "validValues": ["1"], "validRange": {"min": "1"}}),
        POLICY,
        'Forbidden: exactly one policy can be specified, cannot specify "validValues" and '
        '"validRange" at the same time',
    ),
    (
        "policy-values-without-default",
        multi_slice({"validValues": ["1"]}),
        f"{POLICY}.default",
        "Required value: required when validValues is defined",
    ),
    (
        "policy-values-unsorted",
        multi_slice({"default": "2", "validValues": ["2", "1"]}),
        f"{POLICY}.validValues[1]",
        'Invalid value: "1": values must be sorted in ascending order',
    ),
    (
        "policy-11-values",
        multi_slice({"default": "1", "validValues": [str(i) for i in range(1, 12)]}, value="20"),
        f"{POLICY}.validValues",
        "Too many: 11: must have at most 10 items",
    ),
    (
        "policy-value-over-capacity",
        multi_slice({"default": "1", "validValues": ["1", "2Gi"]}, value="1Gi"),
        f"{POLICY}.validValues[1]",
        'Invalid value: "2Gi": option is larger than capacity value: 1Gi',
    ),
    (
        "policy-value-twice",
        multi_slice({"default": "1", "validValues": ["1", "1000m"]}),
        f"{POLICY}.validValues[1]",
        'Duplicate value: "1"',
    ),
    (
        "policy-default-not-a-value",
        multi_slice({"default": "3", "validValues": ["1", "2"]}),
        f"{POLICY}.validValues",
        'Invalid value: "3": default value is not valid according to the requestPolicy',
    ),
    (
        "policy-range-without-default",
        multi_slice({"validRange": {"min": "1"}}),
        f"{POLICY}.default",
        "Required value: required when validRange is defined",
    ),
    (
        "policy-range-min-over-capacity",
        multi_slice({"default": "20", "validRange": {"min": "20"}}),
        f"{POLICY}.validRange.min",
        'Invalid value: "20": min is larger than capacity value: 10',
    ),
    (
        "policy-range-default-under-min",
        multi_slice({"default": "1", "validRange": {"min": "2"}}),
        f"{POLICY}.validRange.min",
        'Invalid value: "1": default is less than min: 2',
    ),
    (
        "policy-range-min-over-max",
        multi_slice({"default": "4", "validRange": {"min": "4", "max": "3"}}),
        f"{POLICY}.validRange.max",
        'Invalid value: "4": min is larger than max: 3',
    ),
    (
        "policy-range-max-over-capacity",
        multi_slice({"default": "1", "validRange": {"min": "1", "max": "2Gi"}}, value="1Gi"),
        f"{POLICY}.validRange.max",
        'Invalid value: "2Gi": max is larger than capacity value: 1Gi',
    ),
    (
        "policy-range-default-over-max",
        multi_slice({"default": "5", "validRange": {"min": "1", "max": "4"}}),
        f"{POLICY}.validRange.max",
        'Invalid value: "5": default is more than max: 4',
    ),
    (
        "policy-range-step-zero",
        multi_slice({"default": "1", "validRange": {"min": "1", "step": "0"}}),
        f"{POLICY}.validRange.step",
        'Invalid value: "0": must be greater than zero',
    ),
    (
        "policy-range-one-step-over-capacity",
        multi_slice({"default": "8", "validRange": {"min": "8", "step": "4"}}),
        f"{POLICY}.validRange.step",
        'Invalid value: "4": one step 12 is larger than capacity value: 10',
    ),
    (
        "policy-range-default-off-step",
        multi_slice({"default": "3", "validRange": {"min": "1", "step": "4"}}),
        f"{POLICY}.validRange.step",
        'Invalid value: "3": value is not a multiple of a given step (4) from (1)',
    ),
    (
        "policy-range-max-off-step",
        multi_slice({"default": "1", "validRange": {"min": "1", "max": "6", "step": "4"}}),
        f"{POLICY}.validRange.step",
        'Invalid value: "6": value is not a multiple of a given step (4) from (1)',
    ),
]


@pytest.mark.parametrize(("obj", "path", "body"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_api_server_refuses(obj: Obj, path: str, body: str) -> None:
    check_refused(obj, path, body)


VALID: list[tuple[str, Obj]] = [
    ("slice-128-devices", slice_(128)),
    ("slice-64-devices-one-tainted", tainted(64)),
    ("counters-slice-8-sets-of-32", counters_slice(8, 32)),
    ("per-device-selection", per_device_slice()),
    ("node-selector-one-term", selector_slice(expr("a", "In", "x"))),
    (
        "field-selector-one-name",
        selector_slice(expr("metadata.name", "In", "node-a", field="matchFields")),
    ),
    (
        "device-32-attributes-48-values",
        # 31 scalars and a list of 17: 32 attributes, 48 values, both at the limit.
        edit(
            slice_(),
            lambda o: dev0(o).update(
                attributes={"roots": {"strings": [f"r{i}" for i in range(17)]}}
                | {f"a{i}": {"int": i} for i in range(31)},
            ),
        ),
    ),
    (
        "policy-values",
        multi_slice({"default": "2", "validValues": ["1", "2", "10"]}),
    ),
    (
        "policy-range",
        multi_slice({"default": "2", "validRange": {"min": "2", "max": "10", "step": "4"}}),
    ),
]


@pytest.mark.parametrize("obj", [v[1] for v in VALID], ids=[v[0] for v in VALID])
def test_what_the_api_server_accepts_passes(obj: Obj) -> None:
    validate(copy.deepcopy(obj))


def test_a_list_over_its_limit_is_reported_once() -> None:
    # validateSet short-circuits: 129 devices, two of them named alike, give the size only
    # (the duplicate name comes from the name rules, after it).
    obj = slice_(129)
    obj["spec"]["devices"][1]["name"] = "gpu-0"
    text = str(error_of(obj))
    assert text.startswith("x.yaml doc 1: ResourceSlice s: spec.devices: Too many: 129:")
    assert text.endswith("(and 1 more problem: spec.devices[1])")
