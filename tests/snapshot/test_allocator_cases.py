"""Every upstream allocator test case of the shared corpus, run through `allocate`.

Comparison rules follow the corpus README ("How upstream compares"): devices as a multiset and
node selector terms order-insensitively unless ``exact_order``; ``config: []`` means no config.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from snapshot.allocator import allocate
from snapshot.errors import AllocationError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES_FILE = FIXTURES / "allocator-cases" / "upstream-cases.json"
CASES: list[dict[str, Any]] = json.loads(CASES_FILE.read_text())


def _node(case: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": case["node"]["name"], "labels": case["node"]["labels"]}}


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


def _device_key(d: dict[str, Any]) -> tuple[Any, ...]:
    return (d["request"], d["driver"], d["pool"], d["device"], d.get("adminAccess", False))


def _check_result(got: dict[str, Any], want: dict[str, Any]) -> None:
    devices = got["devices"]["results"]
    config = got["devices"].get("config", [])
    node_selector = got.get("nodeSelector")
    if want["exact_order"]:
        assert devices == want["devices"]
        assert config == want["config"]
        assert node_selector == want["nodeSelector"]
    else:
        assert Counter(map(_device_key, devices)) == Counter(map(_device_key, want["devices"]))
        assert config == want["config"] == []
        assert _selector_key(node_selector) == _selector_key(want["nodeSelector"])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_upstream_case(case: dict[str, Any]) -> None:
    inputs = copy.deepcopy(case)

    def run() -> list[dict[str, Any]] | None:
        return allocate(
            _node(case),
            case["claims"],
            classes=case["classes"],
            slices=case["slices"],
            allocated_devices=[tuple(d) for d in case["allocated_devices"]],
        )

    expect = case["expect"]
    if expect["kind"] == "error":
        with pytest.raises(AllocationError) as info:
            run()
        assert expect["match"] in str(info.value)
    elif expect["kind"] == "unsatisfiable":
        assert run() is None
    else:
        got = run()
        assert got is not None
        assert len(got) == len(expect["results"])
        for result, want in zip(got, expect["results"], strict=True):
            _check_result(result, want)
    assert case == inputs, "allocate() mutated its inputs"


def test_corpus_is_present() -> None:
    """Guards against the whole table silently skipping in CI."""
    assert len(CASES) >= 41
