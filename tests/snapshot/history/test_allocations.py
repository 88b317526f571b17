"""snapshot.history.allocations's pure parts: device ids, allocations, node pins, claim
summaries."""

from __future__ import annotations

from typing import Any

import pytest
from drasnap.snapshot.history.allocations import (
    AllocatedDevice,
    allocation_of,
    parse_device,
    summarize_claims,
)

from tests.store.journal_session import claim

DEVICE_IDS = [
    ("gpu.example.com/node-a/gpu-0", ("gpu.example.com", "node-a", "gpu-0")),
    ("gpu.example.com/rack-1/switch-2/gpu-0", ("gpu.example.com", "rack-1/switch-2", "gpu-0")),
]


@pytest.mark.parametrize(("text", "parts"), DEVICE_IDS, ids=["plain", "pool-with-slashes"])
def test_parse_device(text: str, parts: tuple[str, str, str]) -> None:
    assert parse_device(text) == parts


@pytest.mark.parametrize("text", ["gpu-0", "a/b", "a//c", "/b/c", "a/b/"], ids=str)
def test_parse_device_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="DRIVER/POOL/DEVICE"):
        parse_device(text)


def test_bad_arguments_are_the_packages_own_errors() -> None:
    """A caller catching `SnapshotError` catches these too (they stay ValueErrors as well)."""
    from drasnap.snapshot import ArgumentError, SnapshotError
    from drasnap.snapshot.allocation.state import allocated_state

    with pytest.raises(ArgumentError, match="DRIVER/POOL/DEVICE"):
        parse_device("gpu-0")
    with pytest.raises(SnapshotError, match="expected \\(driver, pool, device"):
        allocated_state((), [("gpu.example.com", "pool")], ())


def _selector(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": fields} for fields in terms]}


PIN = {"key": "metadata.name", "operator": "In", "values": ["node-a"]}
NODES = [
    (_selector([PIN]), "node-a"),
    (_selector([PIN], [PIN]), None),  # two terms: either may match
    (_selector([PIN, PIN]), None),
    (_selector([{**PIN, "operator": "NotIn"}]), None),
    (_selector([{**PIN, "key": "metadata.uid"}]), None),
    (_selector([{**PIN, "values": ["node-a", "node-b"]}]), None),
    (None, None),
]


@pytest.mark.parametrize(
    ("selector", "node"),
    NODES,
    ids=["pinned", "two-terms", "two-fields", "not-in", "other-field", "two-values", "none"],
)
def test_the_node_an_allocation_pins(selector: Any, node: str | None) -> None:
    value = claim("ns", "c", [("pool", "dev")])
    if selector is None:
        value["status"]["allocation"].pop("nodeSelector", None)
    else:
        value["status"]["allocation"]["nodeSelector"] = selector
    allocation = allocation_of(value)
    assert allocation is not None and allocation.node == node


@pytest.mark.parametrize(
    "value",
    [
        None,
        "text",
        {},
        {"status": {}},
        {"status": {"allocation": None}},
        {"status": {"allocation": {}}},
    ],
    ids=["none", "text", "empty", "no-allocation", "null", "empty-allocation"],
)
def test_unallocated(value: Any) -> None:
    assert allocation_of(value) is None


def test_summaries_are_sorted_with_devices_and_consumers() -> None:
    claims = {
        "ml/b": claim("ml", "b"),
        "ml/a": claim(
            "ml", "a", [("node-a", "gpu-0"), ("node-a", "gpu-1")], node="node-a", pods=("p1", "p2")
        ),
    }
    a, b = summarize_claims(claims)
    assert (a.claim, a.allocated, a.node, a.reserved_for) == (
        "ml/a",
        True,
        "node-a",
        ("pods/p1", "pods/p2"),
    )
    assert a.devices == (
        AllocatedDevice("gpu", "gpu.example.com", "node-a", "gpu-0"),
        AllocatedDevice("gpu", "gpu.example.com", "node-a", "gpu-1"),
    )
    assert a.devices[0].id == "gpu.example.com/node-a/gpu-0"
    assert (b.claim, b.allocated, b.devices, b.node) == ("ml/b", False, (), None)
