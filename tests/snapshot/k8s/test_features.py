"""Kubernetes 1.36 feature gates: defaults, kube-scheduler's --feature-gates syntax, errors."""

from __future__ import annotations

import pytest
from drasnap.snapshot.errors import FeatureGateError
from drasnap.snapshot.k8s.features import (
    FEATURE_GATES,
    AllocatorFeatures,
    allocator_features,
    parse_feature_gates,
    resolve_feature_gates,
)

from tests.paths import ROOT

# Kubernetes 1.36's defaults, from the versioned feature specs of kubernetes/kubernetes
# (staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go, formerly
# pkg/features/kube_features.go).
DEFAULTS_1_36 = {
    "DRAAdminAccess": True,
    "DRAConsumableCapacity": True,
    "DRADeviceBindingConditions": True,
    "DRADeviceTaintRules": False,
    "DRADeviceTaints": True,
    "DRAExtendedResource": True,
    "DRAListTypeAttributes": False,
    "DRANodeAllocatableResources": False,
    "DRAPartitionableDevices": True,
    "DRAPrioritizedList": True,
    "DRAResourceClaimDeviceStatus": True,
    "DynamicResourceAllocation": True,
}


def test_resolved_gates_are_the_1_36_defaults_sorted() -> None:
    resolved = resolve_feature_gates()
    assert resolved == DEFAULTS_1_36
    assert list(resolved) == sorted(resolved)
    assert {name: gate.default for name, gate in FEATURE_GATES.items()} == DEFAULTS_1_36


def test_overrides_replace_defaults_and_the_rest_stays() -> None:
    resolved = resolve_feature_gates({"DRAPrioritizedList": False, "DRAListTypeAttributes": True})
    assert resolved == {**DEFAULTS_1_36, "DRAPrioritizedList": False, "DRAListTypeAttributes": True}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("DRAPrioritizedList=false", {"DRAPrioritizedList": False}),
        (
            " DRADeviceTaints=True , DRAListTypeAttributes=1,",
            {"DRADeviceTaints": True, "DRAListTypeAttributes": True},
        ),
        ("DRAPrioritizedList=true,DRAPrioritizedList=F", {"DRAPrioritizedList": False}),
        ("DRAAdminAccess=true", {"DRAAdminAccess": True}),  # a locked gate at its value
    ],
    ids=["empty", "one", "blanks-and-go-booleans", "last-wins", "locked-at-its-value"],
)
def test_parse_reads_kube_scheduler_syntax(text: str, expected: dict[str, bool]) -> None:
    assert parse_feature_gates(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("DRAPrioritizedList", "missing bool value for DRAPrioritizedList"),
        ("DRAPrioritizedList=maybe", "invalid value of DRAPrioritizedList=maybe"),
        ("DRAPrioritisedList=true", "unrecognized feature gate: DRAPrioritisedList"),
        (
            "DRAAdminAccess=false",
            "cannot set feature gate DRAAdminAccess to false, feature is "
            "locked to true in Kubernetes 1.36",
        ),
    ],
    ids=["no-value", "not-a-bool", "unknown", "locked"],
)
def test_parse_errors_name_the_gate(text: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as info:
        parse_feature_gates(text)
    assert str(info.value).startswith(message)
    assert info.value.gate == text.partition("=")[0]


def test_unknown_gate_lists_the_known_ones() -> None:
    with pytest.raises(FeatureGateError) as info:
        resolve_feature_gates({"InPlacePodVerticalScaling": True})
    for name in FEATURE_GATES:
        assert name in str(info.value)


def test_values_must_be_bools() -> None:
    with pytest.raises(FeatureGateError, match="expected true or false, not 'yes'"):
        resolve_feature_gates({"DRADeviceTaints": "yes"})  # type: ignore[dict-item]


def test_the_allocator_accepts_a_locked_gate_off_as_upstream_tests_do() -> None:
    assert not allocator_features({"DRAAdminAccess": False}).admin_access


def test_allocator_switches_follow_the_scheduler() -> None:
    assert allocator_features() == AllocatorFeatures(
        admin_access=True,
        consumable_capacity=True,
        device_binding_and_status=True,
        device_taints=True,
        device_taint_rules=False,
        list_type_attributes=False,
        partitionable_devices=True,
        prioritized_list=True,
    )
    # Binding conditions need both gates (DynamicResources' AllocatorFeatures).
    assert not allocator_features({"DRAResourceClaimDeviceStatus": False}).device_binding_and_status
    assert not allocator_features({"DRADeviceBindingConditions": False}).device_binding_and_status


def test_the_readme_table_lists_every_gate_with_its_stage_and_default() -> None:
    # README.md's "DRA features" table: one row per gate of FEATURE_GATES, stage and default
    # as Kubernetes 1.36 ships them, and what drasnap does with it.
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## DRA features", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 4 and cells[1].startswith("`"):
            rows[cells[1].strip("`")] = (cells[2], cells[3])
    assert sorted(rows) == sorted(FEATURE_GATES)
    for name, gate in FEATURE_GATES.items():
        stage = f"{gate.stage}, {'on' if gate.default else 'off'}"
        assert rows[name][0] == stage + (" (locked)" if gate.locked else ""), name
        assert rows[name][1].split(" ")[0].rstrip(":") in ("yes", "no", "refused"), name
