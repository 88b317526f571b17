"""explain_allocation: device-level reasons on the DRA example driver's demos, derived by hand
from the objects (tests/fixtures/demos/), and its verdict is the allocator's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from drasnap.snapshot.allocation.allocator import allocate
from drasnap.snapshot.allocation.explain import explain_allocation
from drasnap.snapshot.errors import AllocationError
from drasnap.snapshot.k8s.kinds import klog_kobj as klog

from tests.paths import FIXTURES
from tests.snapshot.allocation.corpus import gates_of, load

DEMOS = FIXTURES / "demos"


def _load(folder: str) -> dict[str, list[dict[str, Any]]]:
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(Path(DEMOS / folder).glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                by_kind.setdefault(doc["kind"], []).append(doc)
    return by_kind


def _claim(name: str, devices: dict[str, Any], namespace: str = "demo") -> dict[str, Any]:
    return {"metadata": {"namespace": namespace, "name": name}, "spec": {"devices": devices}}


def _from_template(objs: dict[str, list[dict[str, Any]]], template: str) -> dict[str, Any]:
    found = next(t for t in objs["ResourceClaimTemplate"] if t["metadata"]["name"] == template)
    return {
        "metadata": {"namespace": found["metadata"]["namespace"], "name": f"pod0-{template}"},
        "spec": found["spec"]["spec"],
    }


def _explain(objs: dict[str, list[dict[str, Any]]], claims: list[dict[str, Any]], **kw: Any) -> Any:
    owners = kw.pop("owners", None)
    args = {"classes": objs["DeviceClass"], "slices": objs["ResourceSlice"], **kw}
    found = explain_allocation(objs["Node"][0], claims, owners=owners, **args)
    # The verdict is the allocator's own on the same inputs.
    assert found.fits == (allocate(objs["Node"][0], claims, **args) is not None)
    return found


GPU0 = "gpu.example.com/gpu-node-0/gpu-0"
GPU1 = "gpu.example.com/gpu-node-0/gpu-1"


def test_partitions_left_by_counters_after_other_claims() -> None:
    # 2 GPUs x (4 partitions of 20Gi/25 + 1 full of 80Gi/100). Another claim holds
    # gpu-0-partition-0, a third gpu-1-full: gpu-1's counters are spent (its 4 partitions
    # refused), gpu-0 has 60Gi left (gpu-0-full refused); gpu-0-partition-1..3 are usable.
    objs = _load("partitionable-devices")
    claim = _from_template(objs, "gpu-partitions")
    held = [
        ("gpu.example.com", "gpu-node-0", "gpu-0-partition-0"),
        ("gpu.example.com", "gpu-node-0", "gpu-1-full"),
    ]
    owners = {held[0]: ["other/a"], held[1]: ["other/b"]}
    found = _explain(objs, [claim], allocated_devices=held, owners=owners)
    assert found.fits
    (request,) = found.requests
    assert (request.request, request.count, request.devices, request.matching) == (
        "gpu-partition",
        2,
        10,
        10,
    )
    assert request.selectors == [("class selector #0 (device.driver == 'gpu.example.com')", 10)]
    assert request.allocated == {f"{GPU0}-partition-0": ["other/a"], f"{GPU1}-full": ["other/b"]}
    assert request.refused_by("counters") == [
        f"{GPU0}-full",
        *(f"{GPU1}-partition-{i}" for i in range(4)),
    ]
    assert request.usable == 3 and request.closest is None


def test_four_partitions_do_not_fit_and_the_closest_is_named() -> None:
    objs = _load("partitionable-devices")
    claim = _claim(
        "four",
        {
            "requests": [
                {"name": "p", "exactly": {"deviceClassName": "gpu.example.com", "count": 4}}
            ]
        },
    )
    held = [
        ("gpu.example.com", "gpu-node-0", "gpu-0-partition-0"),
        ("gpu.example.com", "gpu-node-0", "gpu-1-full"),
    ]
    found = _explain(objs, [claim], allocated_devices=held)
    assert not found.fits and not found.combination
    (request,) = found.requests
    assert request.usable == 3
    assert request.allocated == {f"{GPU0}-partition-0": [], f"{GPU1}-full": []}
    assert request.closest is not None
    assert (request.closest.device, request.closest.check) == (f"{GPU0}-full", "counters")
    # gpu-0-partition-0 (20Gi, 25) is held: 60Gi and 75 left of gpu-0's counters.
    assert request.closest.reason == (
        "needs gpu-0-counters compute 100 of 75 left, memory 80Gi of 60Gi left"
    )


def test_match_attribute_without_a_common_value() -> None:
    # Request a takes gpu-0's devices (index 0), b gpu-1's (index 1): matchAttribute index
    # has no common value, so every usable device of both is refused by the constraint.
    objs = _load("partitionable-devices")
    sel = "device.attributes['gpu.example.com'].index == {}"
    claim = _claim(
        "pair",
        {
            "requests": [
                {
                    "name": "a",
                    "exactly": {
                        "deviceClassName": "gpu.example.com",
                        "selectors": [{"cel": {"expression": sel.format(0)}}],
                    },
                },
                {
                    "name": "b",
                    "exactly": {
                        "deviceClassName": "gpu.example.com",
                        "selectors": [{"cel": {"expression": sel.format(1)}}],
                    },
                },
            ],
            "constraints": [{"matchAttribute": "gpu.example.com/index"}],
        },
    )
    found = _explain(objs, [claim])
    assert not found.fits
    a, b = found.requests
    assert a.selectors[-1] == (f"request selector #0 ({sel.format(0)})", 5)
    assert a.matching == b.matching == 5
    assert a.usable == b.usable == 0
    assert len(a.refused_by("constraint")) == 5
    assert a.closest is not None and a.closest.check == "constraint"
    assert a.closest.device == f"{GPU0}-partition-0"
    assert "matchAttribute gpu.example.com/index" in a.closest.reason


def test_distinct_attribute_with_one_value() -> None:
    # Two devices of gpu-0 with distinct uuid: every gpu-0 device has the same uuid.
    objs = _load("partitionable-devices")
    claim = _claim(
        "distinct",
        {
            "requests": [
                {
                    "name": "r",
                    "exactly": {
                        "deviceClassName": "gpu.example.com",
                        "count": 2,
                        "selectors": [
                            {
                                "cel": {
                                    "expression": "device.attributes['gpu.example.com'].index == 0"
                                }
                            }
                        ],
                    },
                }
            ],
            "constraints": [{"distinctAttribute": "gpu.example.com/uuid"}],
        },
    )
    found = _explain(objs, [claim])
    assert not found.fits
    (request,) = found.requests
    assert request.usable == 0 and len(request.refused_by("constraint")) == 5
    assert "1 different value(s)" in request.refused[0].reason


@pytest.mark.parametrize(
    ("template", "fits"),
    [("single-gpu-without-toleration", False), ("single-gpu-with-toleration", True)],
)
def test_device_taint_rule(template: str, fits: bool) -> None:
    # The DeviceTaintRule taints both GPUs gpu.example.com/unhealthy=true:NoExecute.
    objs = _load("device-taints-tolerations")
    claim = _from_template(objs, template)
    found = _explain(
        objs,
        [claim],
        device_taint_rules=objs["DeviceTaintRule"],
        features={"DRADeviceTaintRules": True},
    )
    assert found.fits is fits
    (request,) = found.requests
    if fits:
        assert request.usable == 2 and not request.refused
    else:
        assert request.refused_by("taints") == [GPU0, GPU1]
        assert request.closest is not None
        assert request.closest.reason == (
            "taint not tolerated: gpu.example.com/unhealthy=true:NoExecute"
        )


CORPORA = ("upstream-cases.json", "upstream-feature-cases.json", "drasnap-cases.json")
CASES = [(corpus, case) for corpus in CORPORA for case in load(corpus)]


@pytest.mark.parametrize(
    ("corpus", "case"),
    CASES,
    ids=[f"{corpus.removesuffix('.json')}:{case['name']}" for corpus, case in CASES],
)
def test_agrees_with_the_allocator_on_every_corpus_case(corpus: str, case: dict[str, Any]) -> None:
    # Kubernetes' answers (tests/fixtures/allocator-cases): the verdict is theirs, and no device
    # the allocator gives a request is one the explanation says that request cannot use.
    node = case.get("node") or {"name": "node-1", "labels": {"region": "region-1"}}
    args: dict[str, Any] = {
        "classes": case["classes"],
        "slices": case["slices"],
        "allocated_devices": [tuple(d) for d in case.get("allocated_devices") or ()],
        "allocated_shared_devices": case.get("allocated_shared_devices") or (),
        "allocated_capacity": case.get("allocated_capacity") or (),
        "features": gates_of(case),
    }
    node_obj = {"metadata": {"name": node["name"], "labels": node.get("labels") or {}}}
    expect = case["expect"]["kind"]
    try:
        found = explain_allocation(node_obj, case["claims"], **args)
    except AllocationError:
        assert expect == "error"
        return
    if expect == "error":
        assert not found.fits and found.error is not None
        return
    assert found.fits is (expect != "unsatisfiable")
    if not found.fits:
        return
    results = allocate(node_obj, case["claims"], **args)
    assert results is not None
    for ci, allocation in enumerate(results):
        claim = klog(case["claims"][ci])
        for result in allocation["devices"]["results"]:
            name = f"{result['driver']}/{result['pool']}/{result['device']}"
            requests = [
                r for r in found.requests if r.claim == claim and r.request == result["request"]
            ]
            assert requests, (claim, result)
            # (Claims of one name are told apart by none: the device is usable for one.)
            assert any(
                name not in r.allocated and name not in {x.device for x in r.refused}
                for r in requests
            ), (claim, result)


@pytest.mark.parametrize(
    ("template", "fits"), [("nic-10g-in-5g-out", False), ("nic-5g-in-5g-out", True)]
)
def test_consumable_capacity_left_on_a_shared_nic(template: str, fits: bool) -> None:
    # nic-0 allows multiple allocations, 100G ingress. Other claims consumed 95G of it: 10G
    # more is refused by capacity, 5G fits (the device is not held exclusively: not allocated).
    objs = _load("net-consumable-capacity")
    claim = _from_template(objs, template)
    consumed = [("net.example.com", "net-node-0", "nic-0", {"ingressBandwidth": "95G"})]
    found = _explain(objs, [claim], allocated_capacity=consumed)
    assert found.fits is fits
    (request,) = found.requests
    assert request.allocated == {}
    if fits:
        assert request.usable == 1 and not request.refused
    else:
        assert request.refused_by("capacity") == ["net.example.com/net-node-0/nic-0"]
        assert request.closest is not None and request.closest.check == "capacity"
        assert request.closest.reason == (
            "not enough capacity left for ingressBandwidth=10G, egressBandwidth=5G"
        )


def test_prioritized_list_subrequests_each_explained() -> None:
    # prioritized-gpu: bleeding-edge-gpu (model BLEEDING-EDGE-GPU), huge-gpu (>= 1Ti memory),
    # older-gpu (any). The node's 2 GPUs are 80Gi LATEST-GPU-MODEL: the first two match none,
    # the third both; the claim fits (on older-gpu).
    objs = _load("prioritized-alternatives")
    claim = _from_template(objs, "prioritized-gpu")
    found = _explain(objs, [claim])
    assert found.fits
    names = [(r.request, r.matching, r.usable) for r in found.requests]
    assert names == [
        ("gpu/bleeding-edge-gpu", 0, 0),
        ("gpu/huge-gpu", 0, 0),
        ("gpu/older-gpu", 2, 2),
    ]
    assert found.requests[0].closest is not None
    assert found.requests[0].closest.check == "selector"
    assert [r.alternative for r in found.requests] == [(1, 3), (2, 3), (3, 3)]
    head = found.requests[2].lines()[0]
    assert head.endswith(
        "request gpu/older-gpu (choice 3 of 3: 1 of class gpu.example.com): 2 device(s) on the node"
    )
