"""Hand-written allocator scenarios on the dra-example shapes (GPU driver, node-local pools)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from drasnap.snapshot import cel
from drasnap.snapshot.allocation.allocator import allocate
from drasnap.snapshot.errors import AllocationError

GPU = "gpu.example.com"
Obj = dict[str, Any]


def load(path: Path) -> list[Obj]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


@pytest.fixture
def example(dra_example_dir: Path) -> dict[str, Obj]:
    """The example DeviceClass, its two-GPU slice, the claim template and the allocated claim."""
    device_class, two_gpu_slice = load(dra_example_dir / "01-deviceclass-and-slice.yaml")
    (template,) = load(dra_example_dir / "02-claimtemplate.yaml")
    (allocated,) = load(dra_example_dir / "03-allocated-claim.yaml")
    return {
        "class": device_class,
        "slice": two_gpu_slice,
        "template": template,
        "allocated": allocated,
    }


def node(name: str, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": labels}}


def gpu_slice(example: dict[str, Obj], node_name: str, gpus: int = 8) -> Obj:
    """A node-local pool like the example driver publishes: gpu-0..3 on one PCIe root, 4..7 on
    another."""
    result = copy.deepcopy(example["slice"])
    result["metadata"]["name"] = f"{node_name}-{GPU}-x1"
    result["spec"]["nodeName"] = node_name
    result["spec"]["pool"]["name"] = node_name
    template = result["spec"]["devices"][0]
    result["spec"]["devices"] = []
    for i in range(gpus):
        device = copy.deepcopy(template)
        device["name"] = f"gpu-{i}"
        device["attributes"]["index"] = {"int": i}
        device["attributes"]["resource.kubernetes.io/pcieRoot"] = {"string": f"pci000{i // 4}:00"}
        result["spec"]["devices"].append(device)
    return result


def claim(name: str, count: int = 1, *, same_root: bool = False, **exactly: Any) -> Obj:
    spec: Obj = {
        "requests": [
            {
                "name": "gpus",
                "exactly": {
                    "deviceClassName": GPU,
                    "allocationMode": "ExactCount",
                    "count": count,
                    **exactly,
                },
            }
        ]
    }
    if same_root:
        spec["constraints"] = [{"matchAttribute": "resource.kubernetes.io/pcieRoot"}]
    return {"metadata": {"name": name, "namespace": "ml"}, "spec": {"devices": spec}}


def devices(allocation: Obj) -> list[str]:
    return [r["device"] for r in allocation["devices"]["results"]]


def test_claim_from_template_gets_two_gpus_on_the_same_root(example: dict[str, Obj]) -> None:
    template = example["template"]
    generated = {"metadata": {"name": "trainer-0-gpus", "namespace": "ml"}, **template["spec"]}
    result = allocate(
        node("node-a"), [generated], classes=[example["class"]], slices=[example["slice"]]
    )
    assert result is not None
    expected = example["allocated"]["status"]["allocation"]
    assert result[0]["devices"]["results"] == expected["devices"]["results"]
    assert result[0]["nodeSelector"] == expected["nodeSelector"]
    # The claim's opaque config covers its only request, so "requests" is dropped (= all).
    claim_config = template["spec"]["spec"]["devices"]["config"][0]
    assert result[0]["devices"]["config"] == [
        {"source": "FromClaim", "opaque": claim_config["opaque"]}
    ]
    # Another node sees no devices.
    assert (
        allocate(node("node-b"), [generated], classes=[example["class"]], slices=[example["slice"]])
        is None
    )


def test_two_claims_split_the_node_and_a_third_does_not_fit(example: dict[str, Obj]) -> None:
    slices = [gpu_slice(example, "node-a")]
    classes = {GPU: example["class"]}  # a mapping name -> class is accepted too
    two = allocate(node("node-a"), [claim("a", 4), claim("b", 4)], classes=classes, slices=slices)
    assert two is not None
    assert [devices(a) for a in two] == [
        [f"gpu-{i}" for i in range(4)],
        [f"gpu-{i}" for i in range(4, 8)],
    ]
    three = [claim("a", 4), claim("b", 4), claim("c", 1)]
    assert allocate(node("node-a"), three, classes=classes, slices=slices) is None


def test_in_use_devices_are_skipped(example: dict[str, Obj]) -> None:
    slices = [gpu_slice(example, "node-a")]
    in_use = {(GPU, "node-a", f"gpu-{i}") for i in (0, 1, 2)}
    result = allocate(
        node("node-a"),
        [claim("a", 2)],
        classes=[example["class"]],
        slices=slices,
        allocated_devices=in_use,
    )
    assert result is not None
    assert devices(result[0]) == ["gpu-3", "gpu-4"]
    everything = [(GPU, "node-a", f"gpu-{i}") for i in range(8)]
    assert (
        allocate(
            node("node-a"),
            [claim("a")],
            classes=[example["class"]],
            slices=slices,
            allocated_devices=everything,
        )
        is None
    )


def test_match_attribute_backtracks_to_the_other_pcie_root(example: dict[str, Obj]) -> None:
    slices = [gpu_slice(example, "node-a")]
    # gpu-1 is taken: root 0 has only three free GPUs left, so all four come from root 1.
    result = allocate(
        node("node-a"),
        [claim("a", 4, same_root=True)],
        classes=[example["class"]],
        slices=slices,
        allocated_devices=[(GPU, "node-a", "gpu-1")],
    )
    assert result is not None
    assert devices(result[0]) == ["gpu-4", "gpu-5", "gpu-6", "gpu-7"]
    # Five GPUs on one root never exist.
    five = [claim("a", 5, same_root=True)]
    assert allocate(node("node-a"), five, classes=[example["class"]], slices=slices) is None


def test_admin_access_ignores_other_claims_but_not_its_own(example: dict[str, Obj]) -> None:
    slices = [gpu_slice(example, "node-a", gpus=2)]
    everything = [(GPU, "node-a", "gpu-0"), (GPU, "node-a", "gpu-1")]
    monitor = claim("monitor", 2, adminAccess=True)
    result = allocate(
        node("node-a"),
        [monitor],
        classes=[example["class"]],
        slices=slices,
        allocated_devices=everything,
    )
    assert result is not None
    assert result[0]["devices"]["results"][0]["adminAccess"] is True
    assert devices(result[0]) == ["gpu-0", "gpu-1"]
    # The same claim cannot take a device twice, even with admin access.
    three = claim("monitor", 3, adminAccess=True)
    assert allocate(node("node-a"), [three], classes=[example["class"]], slices=slices) is None


def test_allocation_mode_all(example: dict[str, Obj]) -> None:
    slices = [gpu_slice(example, "node-a", gpus=3)]
    all_gpus = claim("all", allocationMode="All")
    result = allocate(node("node-a"), [all_gpus], classes=[example["class"]], slices=slices)
    assert result is not None
    assert devices(result[0]) == ["gpu-0", "gpu-1", "gpu-2"]
    # One of them in use: "All" cannot be satisfied (no error).
    taken = [(GPU, "node-a", "gpu-2")]
    assert (
        allocate(
            node("node-a"),
            [all_gpus],
            classes=[example["class"]],
            slices=slices,
            allocated_devices=taken,
        )
        is None
    )


def test_incomplete_pool_is_unusable_and_an_error_for_all(example: dict[str, Obj]) -> None:
    incomplete = gpu_slice(example, "node-a", gpus=2)
    incomplete["spec"]["pool"]["resourceSliceCount"] = 2  # the second slice is not published
    classes = [example["class"]]
    assert allocate(node("node-a"), [claim("a")], classes=classes, slices=[incomplete]) is None
    with pytest.raises(
        AllocationError, match=re.escape("resource pool gpu.example.com/node-a is currently")
    ):
        allocate(
            node("node-a"),
            [claim("a", allocationMode="All")],
            classes=classes,
            slices=[incomplete],
        )


def test_newer_generation_replaces_the_older_slice(example: dict[str, Obj]) -> None:
    old = gpu_slice(example, "node-a", gpus=2)
    new = gpu_slice(example, "node-a", gpus=1)
    new["metadata"]["name"] = "newer"
    new["spec"]["pool"]["generation"] = 1
    result = allocate(node("node-a"), [claim("a")], classes=[example["class"]], slices=[old, new])
    assert result is not None
    assert devices(result[0]) == ["gpu-0"]
    assert (
        allocate(node("node-a"), [claim("a", 2)], classes=[example["class"]], slices=[old, new])
        is None
    )


def test_network_attached_devices_merge_node_selectors(example: dict[str, Obj]) -> None:
    def network_slice(name: str, pool: str, term: Obj) -> Obj:
        result = gpu_slice(example, pool, gpus=1)
        result["metadata"]["name"] = name
        del result["spec"]["nodeName"]
        result["spec"]["nodeSelector"] = {"nodeSelectorTerms": [term]}
        return result

    region = {"matchExpressions": [{"key": "region", "operator": "In", "values": ["r1"]}]}
    rack = {"matchExpressions": [{"key": "rack", "operator": "Exists"}]}
    slices = [network_slice("s1", "pool-1", region), network_slice("s2", "pool-2", rack)]
    classes = [example["class"]]
    result = allocate(
        node("n1", region="r1", rack="7"), [claim("a", 2)], classes=classes, slices=slices
    )
    assert result is not None
    term = result[0]["nodeSelector"]["nodeSelectorTerms"]
    assert term == [{"matchExpressions": region["matchExpressions"] + rack["matchExpressions"]}]
    # A node outside the region only sees the rack pool.
    assert allocate(node("n2", rack="1"), [claim("a", 2)], classes=classes, slices=slices) is None
    # allNodes slices add no node selector at all.
    everywhere = gpu_slice(example, "shared", gpus=1)
    del everywhere["spec"]["nodeName"]
    everywhere["spec"]["allNodes"] = True
    result = allocate(node("n3"), [claim("a")], classes=classes, slices=[everywhere])
    assert result is not None
    assert "nodeSelector" not in result[0]


def test_class_config_comes_before_claim_config(example: dict[str, Obj]) -> None:
    gpu_class = copy.deepcopy(example["class"])
    gpu_class["spec"]["config"] = [{"opaque": {"driver": GPU, "parameters": {"from": "class"}}}]
    two_requests = claim("a")
    requests = two_requests["spec"]["devices"]["requests"]
    requests.append({"name": "more", "exactly": dict(requests[0]["exactly"])})
    opaque = {"driver": GPU, "parameters": {"from": "claim"}}
    two_requests["spec"]["devices"]["config"] = [
        {"requests": ["more"], "opaque": opaque},
        {"requests": ["elsewhere"], "opaque": opaque},  # names no request of this claim
    ]
    slices = [gpu_slice(example, "node-a", gpus=2)]
    result = allocate(node("node-a"), [two_requests], classes=[gpu_class], slices=slices)
    assert result is not None
    assert result[0]["devices"]["config"] == [
        {"source": "FromClass", "opaque": gpu_class["spec"]["config"][0]["opaque"]},
        {"source": "FromClaim", "requests": ["more"], "opaque": opaque},
    ]


def test_cel_errors_name_the_selector_and_device(example: dict[str, Obj]) -> None:
    slices = [gpu_slice(example, "node-a", gpus=1)]
    bad = claim("a", selectors=[{"cel": {"expression": f'device.attributes["{GPU}"].nosuch'}}])
    with pytest.raises(AllocationError) as info:
        allocate(node("node-a"), [bad], classes=[example["class"]], slices=slices)
    assert str(info.value).startswith(
        f"claim ml/a: selector #0 on device {GPU}/node-a/gpu-0: CEL runtime error: no such key"
    )
    broken_class = copy.deepcopy(example["class"])
    broken_class["spec"]["selectors"] = [{"cel": {"expression": "noSuchVar"}}]
    with pytest.raises(
        AllocationError, match=re.escape(f"class {GPU}: selector #0: CEL compile error: ")
    ):
        allocate(node("node-a"), [claim("a")], classes=[broken_class], slices=slices)
    # Compile errors only surface when a device is actually checked (as upstream).
    assert allocate(node("node-b"), [claim("a")], classes=[broken_class], slices=slices) is None


@pytest.mark.parametrize(
    ("change", "gates", "message"),
    [
        (
            lambda c: c["spec"]["devices"]["requests"][0].update(
                {"firstAvailable": [{"name": "x", "deviceClassName": GPU}]}
            ),
            {"DRAPrioritizedList": False},
            "claim ml/a, request gpus: has subrequests, but the DRAPrioritizedList feature is "
            "disabled",
        ),
        (
            lambda c: c["spec"]["devices"]["requests"][0]["exactly"].update(
                {"capacity": {"requests": {"memory": "1Gi"}}}
            ),
            {"DRAConsumableCapacity": False},
            "claim ml/a, request gpus: has capacity requests, but the DRAConsumableCapacity "
            "feature is disabled",
        ),
        (
            lambda c: c["spec"]["devices"]["requests"][0]["exactly"].update({"adminAccess": False}),
            {"DRAAdminAccess": False},
            "claim ml/a, request gpus: admin access is requested, but the feature is disabled",
        ),
        (
            lambda c: c["spec"]["devices"].update({"constraints": [{}]}),
            {},
            "claim ml/a, constraint #0: empty constraint (unsupported constraint type?)",
        ),
        (
            lambda c: c["spec"]["devices"]["requests"][0]["exactly"].update(
                {"derivedAttributes": [{"name": "x", "expression": "1"}]}
            ),
            {},
            "ResourceClaim ml/a: spec.devices.requests[0].exactly.derivedAttributes: not "
            "implemented by drasnap: derived attributes (DRADerivedAttributes, after Kubernetes "
            "1.36)",
        ),
    ],
    ids=[
        "prioritized-list-off",
        "consumable-capacity-off",
        "admin-access-off",
        "empty-constraint",
        "refused-field",
    ],
)
def test_claims_using_what_is_off_or_missing_are_errors(
    example: dict[str, Obj], change: Any, gates: dict[str, bool], message: str
) -> None:
    request = claim("a")
    change(request)
    slices = [gpu_slice(example, "node-a", gpus=1)]
    with pytest.raises(AllocationError) as info:
        allocate(
            node("node-a"), [request], classes=[example["class"]], slices=slices, features=gates
        )
    assert str(info.value) == message


def test_a_slice_with_a_refused_field_is_an_error_naming_it(example: dict[str, Obj]) -> None:
    slice_ = gpu_slice(example, "node-a", gpus=2)
    slice_["spec"]["devices"][1]["nodeAllocatableResources"] = {"cpu": {"quantity": "1"}}
    with pytest.raises(AllocationError) as info:
        allocate(node("node-a"), [claim("a")], classes=[example["class"]], slices=[slice_])
    assert info.value.kind == "ResourceSlice"
    assert info.value.field == "spec.devices[1].nodeAllocatableResources"
    assert str(info.value).startswith(
        f"ResourceSlice node-a-{GPU}-x1: spec.devices[1].nodeAllocatableResources: not "
        "implemented by drasnap"
    )
    # A slice that no pool of the node uses is never looked at, as upstream.
    assert allocate(node("node-b"), [claim("a")], classes=[example["class"]], slices=[slice_]) is (
        None
    )


def test_inputs_are_not_mutated(example: dict[str, Obj]) -> None:
    classes = [example["class"]]
    slices = [gpu_slice(example, "node-a")]
    claims = [claim("a", 2, same_root=True), claim("b", allocationMode="All")]
    claims[0]["spec"]["devices"]["config"] = [{"opaque": {"driver": GPU, "parameters": {"k": 1}}}]
    before = copy.deepcopy((classes, slices, claims))
    result = allocate(node("node-a"), claims, classes=classes, slices=slices)
    assert result is None  # "All" wants gpu-0 and gpu-1 too
    result = allocate(node("node-a"), claims[:1], classes=classes, slices=slices)
    assert result is not None
    result[0]["devices"]["config"][0]["opaque"]["parameters"]["k"] = 2  # results are copies
    assert (classes, slices, claims) == before


def test_selector_results_are_cached_across_calls(
    example: dict[str, Obj], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = cel.evaluate

    def counting(program: cel.Program, activation: cel.DeviceActivation) -> bool:
        calls.append(program.expression)
        return real(program, activation)

    monkeypatch.setattr(cel, "evaluate", counting)  # the allocator looks it up on the module
    slices = [gpu_slice(example, "node-a")]
    picky = claim(
        "a", 2, selectors=[{"cel": {"expression": f"device.attributes['{GPU}'].index >= 6"}}]
    )
    for _ in range(3):
        result = allocate(node("node-a"), [picky], classes=[example["class"]], slices=slices)
        assert result is not None
        assert devices(result[0]) == ["gpu-6", "gpu-7"]
    assert len(calls) == 16  # class + request selector, 8 GPUs, evaluated once


# --- the allocated state (upstream's AllocatedState) --------------------------------------------

NIC = "nic.example.com"
NIC_CLASS = {
    "metadata": {"name": "nic"},
    "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{NIC}'"}}]},
}
NIC_SLICE = {
    "metadata": {"name": "nics"},
    "spec": {
        "driver": NIC,
        "nodeName": "node-a",
        "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {
                "name": "nic-0",
                "allowMultipleAllocations": True,
                "capacity": {"bw": {"value": "10G"}},
            }
        ],
    },
}


def nic_claim(name: str, bandwidth: str) -> Obj:
    request = {
        "name": "net",
        "exactly": {"deviceClassName": "nic", "capacity": {"requests": {"bw": bandwidth}}},
    }
    return {
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"devices": {"requests": [request]}},
    }


@pytest.mark.parametrize(
    "allocated_capacity",
    [
        [(NIC, "node-a", "nic-0", {"bw": "4G"}), (NIC, "node-a", "nic-0", {"bw": "3G"})],
        [{"driver": NIC, "pool": "node-a", "device": "nic-0", "consumedCapacity": {"bw": "7G"}}],
        {(NIC, "node-a", "nic-0"): {"bw": "7000M"}},
    ],
    ids=["tuples-add-up", "dicts", "mapping"],
)
def test_capacity_other_claims_consume_is_taken_into_account(allocated_capacity: Any) -> None:
    kwargs: Any = {
        "classes": [NIC_CLASS],
        "slices": [NIC_SLICE],
        "allocated_capacity": allocated_capacity,
    }
    assert allocate(node("node-a"), [nic_claim("a", "4G")], **kwargs) is None  # 7G + 4G > 10G
    (result,) = allocate(node("node-a"), [nic_claim("a", "3G")], **kwargs) or []
    (entry,) = result["devices"]["results"]
    assert entry["consumedCapacity"] == {"bw": "3G"}
    assert "shareID" in entry


def test_share_ids_are_deterministic_and_distinct_per_share() -> None:
    claims = [nic_claim("a", "3G"), nic_claim("b", "3G")]
    first = allocate(node("node-a"), claims, classes=[NIC_CLASS], slices=[NIC_SLICE])
    again = allocate(node("node-a"), claims, classes=[NIC_CLASS], slices=[NIC_SLICE])
    assert first is not None and first == again
    ids = [r["devices"]["results"][0]["shareID"] for r in first]
    assert len(set(ids)) == 2
    assert all(len(i) == 36 for i in ids)  # UUIDs, as upstream's


def test_a_device_shared_elsewhere_consumes_its_counters() -> None:
    """Shared allocations count as allocated for counters (upstream's IsDeviceAllocated)."""
    pool = {"name": "node-a", "generation": 1, "resourceSliceCount": 2}
    lanes = [{"counterSet": "port", "counters": {"lanes": {"value": "4"}}}]
    devices = {
        "metadata": {"name": "nics"},
        "spec": {
            "driver": NIC,
            "nodeName": "node-a",
            "pool": pool,
            "devices": [
                {"name": "nic-0", "allowMultipleAllocations": True, "consumesCounters": lanes},
                {"name": "nic-1", "consumesCounters": lanes},
            ],
        },
    }
    counters = {
        "metadata": {"name": "counters"},
        "spec": {
            "driver": NIC,
            "nodeName": "node-a",
            "pool": pool,
            "sharedCounters": [{"name": "port", "counters": {"lanes": {"value": "4"}}}],
        },
    }
    dedicated = {"cel": {"expression": "!device.allowMultipleAllocations"}}
    request = {"name": "net", "exactly": {"deviceClassName": "nic", "selectors": [dedicated]}}
    plain = {
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"devices": {"requests": [request]}},
    }
    kwargs: Any = {"classes": [NIC_CLASS], "slices": [devices, counters]}
    assert allocate(node("node-a"), [plain], **kwargs) is not None
    shared = [(NIC, "node-a", "nic-0", "6f2a5d0c-0000-0000-0000-000000000000")]
    assert allocate(node("node-a"), [plain], **kwargs, allocated_shared_devices=shared) is None


def test_selector_results_cached_with_one_gate_do_not_leak_to_another(
    example: dict[str, Obj],
) -> None:
    """includes() exists only with DRAListTypeAttributes: a result cached with the gate on must
    not answer for a call with the gate off."""
    slices = [gpu_slice(example, "node-a", gpus=2)]
    expression = f"device.attributes['{GPU}'].index.includes(1)"
    picky = claim("a", selectors=[{"cel": {"expression": expression}}])
    lists_on = {"DRAListTypeAttributes": True}
    result = allocate(
        node("node-a"), [picky], classes=[example["class"]], slices=slices, features=lists_on
    )
    assert result is not None and devices(result[0]) == ["gpu-1"]
    with pytest.raises(AllocationError, match="undeclared reference to 'includes'"):
        allocate(node("node-a"), [picky], classes=[example["class"]], slices=slices)
