"""Running an allocator case of the corpus format (tests/fixtures/allocator-cases/README.md)
through `allocate`, and comparing its answer the way upstream's tests do.

Shared by the upstream corpora and drasnap's own cases (answers by dra-oracle).
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from typing import Any

import pytest
from drasnap.snapshot.allocation.allocator import allocate
from drasnap.snapshot.errors import AllocationError
from drasnap.snapshot.k8s.quantity import Quantity

from tests.paths import FIXTURES

CASES_DIR = FIXTURES / "allocator-cases"

#: upstream's ``Features{}`` fields (the corpus' ``upstream_features``) -> Kubernetes gates.
FEATURE_FIELDS: dict[str, tuple[str, ...]] = {
    "AdminAccess": ("DRAAdminAccess",),
    "PrioritizedList": ("DRAPrioritizedList",),
    "PartitionableDevices": ("DRAPartitionableDevices",),
    "DeviceTaints": ("DRADeviceTaints",),
    "DeviceBindingAndStatus": ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
    "ConsumableCapacity": ("DRAConsumableCapacity",),
    "ListTypeAttributes": ("DRAListTypeAttributes",),
}


def load(name: str) -> list[dict[str, Any]]:
    return json.loads((CASES_DIR / name).read_text())  # type: ignore[no-any-return]


def gates_of(case: dict[str, Any]) -> dict[str, bool]:
    """Upstream's tests: only the features a case names are on, every other one is off."""
    named = case.get("upstream_features") or {}
    gates = {}
    for field, names in FEATURE_FIELDS.items():
        for gate in names:
            gates[gate] = bool(named.get(field, False))
    return gates


def run_case(case: dict[str, Any]) -> list[dict[str, Any]] | None:
    node = case.get("node") or {"name": "node-1", "labels": {"region": "region-1"}}
    return allocate(
        {"metadata": {"name": node["name"], "labels": node.get("labels") or {}}},
        case["claims"],
        classes=case["classes"],
        slices=case["slices"],
        allocated_devices=[tuple(d) for d in case.get("allocated_devices") or ()],
        allocated_shared_devices=case.get("allocated_shared_devices") or (),
        allocated_capacity=case.get("allocated_capacity") or (),
        features=gates_of(case),
    )


def _requirements(reqs: list[dict[str, Any]] | None) -> Counter[Any]:
    return Counter((r["key"], r["operator"], frozenset(r.get("values") or ())) for r in reqs or ())


def _selector_key(selector: dict[str, Any] | None) -> Counter[Any] | None:
    """Terms, requirements and values compared order-insensitively (upstream's matcher)."""
    if selector is None:
        return None
    return Counter(
        (
            frozenset(_requirements(t.get("matchExpressions")).items()),
            frozenset(_requirements(t.get("matchFields")).items()),
        )
        for t in selector["nodeSelectorTerms"]
    )


def _quantities(consumed: dict[str, str] | None) -> frozenset[tuple[str, Fraction]]:
    return frozenset((k, Quantity.parse(str(v)).value) for k, v in (consumed or {}).items())


def device_key(d: dict[str, Any]) -> tuple[Any, ...]:
    """A result entry as upstream compares it: share IDs by presence, capacities by value."""
    return (
        d["request"],
        d["driver"],
        d["pool"],
        d["device"],
        bool(d.get("adminAccess", False)),
        json.dumps(d.get("tolerations") or [], sort_keys=True),
        tuple(d.get("bindingConditions") or ()),
        tuple(d.get("bindingFailureConditions") or ()),
        _quantities(d.get("consumedCapacity")),
        "shareID" in d,
    )


def check_result(got: dict[str, Any], want: dict[str, Any]) -> None:
    devices = got["devices"]["results"]
    config = got["devices"].get("config", [])
    node_selector = got.get("nodeSelector")
    if want["exact_order"]:
        assert [device_key(d) for d in devices] == [device_key(d) for d in want["devices"]]
        assert config == want["config"]
        assert node_selector == want["nodeSelector"]
    else:
        assert Counter(map(device_key, devices)) == Counter(map(device_key, want["devices"]))
        assert config == want["config"]
        assert _selector_key(node_selector) == _selector_key(want["nodeSelector"])


def check_case(case: dict[str, Any]) -> None:
    """Run ``case`` and assert upstream's answer: results, nothing, or an error substring."""
    expect = case["expect"]
    if expect["kind"] == "error":
        with pytest.raises(AllocationError) as info:
            run_case(case)
        assert expect["match"] in str(info.value)
    elif expect["kind"] == "unsatisfiable":
        assert run_case(case) is None
    else:
        got = run_case(case)
        assert got is not None
        assert len(got) == len(expect["results"])
        for result, want in zip(got, expect["results"], strict=True):
            check_result(result, want)
