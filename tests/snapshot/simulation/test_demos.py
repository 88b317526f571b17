"""The DRA example driver's feature demos simulate to what each feature promises.

Each folder under tests/fixtures/demos/ holds a demo written in the shape of
``kubernetes-sigs/dra-example-driver``'s ``demo/examples/<name>/`` and a node dump (DeviceClass,
Node, ResourceSlices in that driver's slice shape); origins in tests/fixtures/README.md. A demo
is loaded with `load_manifests`, its claim templates instantiated for its pods, and the pods
placed on a `ClusterSnapshot` in file order, as the scheduler would take them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from drasnap.snapshot import load_manifests
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.controllers.claim_templates import claims_from_templates
from drasnap.snapshot.errors import AllocationError, ObjectValidationError
from drasnap.snapshot.k8s.kinds import object_key
from drasnap.snapshot.k8s.objects import KubeObject, name_of
from drasnap.snapshot.k8s.quantity import Quantity
from drasnap.snapshot.simulation.inputs import source_digest
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.settings import Settings
from drasnap.store import MemoryStore

from tests.paths import FIXTURES

DEMOS = FIXTURES / "demos"


@dataclass
class Demo:
    cs: ClusterSnapshot
    pods: dict[str, KubeObject]  # by name, claims from templates named
    placed: dict[str, str | None]  # pod name -> node, None: placed nowhere

    def results(self, pod: str) -> list[dict[str, Any]]:
        """The allocation results of the pod's claims, in claim order."""
        return [
            result
            for claim in self.cs.dra.pod_claims(self.pods[pod])
            for result in claim["status"]["allocation"]["devices"]["results"]
        ]

    def devices(self, pod: str) -> list[tuple[str, str]]:
        return [(r["request"], r["device"]) for r in self.results(pod)]


def load(
    name: str, features: Mapping[str, bool] | None = None
) -> tuple[ClusterSnapshot, list[KubeObject]]:
    """The demo's cluster on a new snapshot, and its pods (not placed yet)."""
    manifests = load_manifests([DEMOS / name])
    cs = ClusterSnapshot(MemoryStore(), features=features)
    cs.dra.add_device_classes(manifests.classes)
    if manifests.taint_rules:
        cs.dra.add_device_taint_rules(manifests.taint_rules)
    templates = {object_key(t): t for t in manifests.claim_templates}
    claims = list(manifests.claims)
    pods = []
    for pod in manifests.pods:
        pod, generated = claims_from_templates(pod, templates)
        claims.extend(generated)
        pods.append(pod)
    cs.dra.add_claims(claims)
    for node in manifests.nodes:
        slices = [s for s in manifests.slices if s["spec"].get("nodeName") == name_of(node)]
        cs.add_node(node, slices=slices)
    return cs, pods


def run_demo(name: str, features: Mapping[str, bool] | None = None) -> Demo:
    cs, pods = load(name, features)
    placed = {name_of(pod): cs.schedule_pod_anywhere(pod) for pod in pods}
    return Demo(cs, {name_of(p): p for p in pods}, placed)


def extra_claim(namespace: str, name: str, exactly: dict[str, Any]) -> KubeObject:
    """A claim of one request ``r``, for probing what a demo leaves free."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": f"{name}-uid"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}},
    }


def extra_pod(namespace: str, name: str, claim: str) -> KubeObject:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"{name}-uid"},
        "spec": {
            "containers": [{"name": "c", "image": "i"}],
            "resourceClaims": [{"name": "r", "resourceClaimName": claim}],
        },
    }


def probe(cs: ClusterSnapshot, namespace: str, name: str, exactly: dict[str, Any]) -> str | None:
    """Place a new pod whose claim asks for ``exactly``: the node, or None."""
    cs.dra.add_claims([extra_claim(namespace, name, exactly)])
    return cs.schedule_pod_anywhere(extra_pod(namespace, f"{name}-pod", name))


def full_gpu(index: int) -> dict[str, Any]:
    """A request for GPU ``index`` whole (partitionable-devices' node dump)."""
    return {
        "deviceClassName": "gpu.example.com",
        "selectors": [
            {
                "cel": {
                    "expression": f"device.attributes['gpu.example.com'].index == "
                    f"{index} && 'full' in device.attributes['gpu.example.com']"
                }
            }
        ],
    }


# -- partitionable-devices ----------------------------------------------------------------------


def test_partitionable_devices_two_partitions_then_counters_refuse_the_full_gpu() -> None:
    demo = run_demo("partitionable-devices")
    # pod0's two devices: the first two of the slice, partitions of GPU 0.
    assert demo.placed == {"pod0": "gpu-node-0"}
    assert demo.devices("pod0") == [
        ("gpu-partition", "gpu-0-partition-0"),
        ("gpu-partition", "gpu-0-partition-1"),
    ]
    # GPU 0's counters now lack the 40Gi and 50 compute its partitions took: its full device
    # cannot be allocated, GPU 1's can, and then GPU 1 has nothing left for a partition.
    assert probe(demo.cs, "partitionable-devices", "whole-0", full_gpu(0)) is None
    assert probe(demo.cs, "partitionable-devices", "whole-1", full_gpu(1)) == "gpu-node-0"
    two_left = {"deviceClassName": "gpu.example.com", "count": 2}
    assert probe(demo.cs, "partitionable-devices", "two-more", two_left) == "gpu-node-0"
    claim = demo.cs.dra.resource_claims.get("partitionable-devices", "two-more")
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == [
        "gpu-0-partition-2",
        "gpu-0-partition-3",
    ]
    one_more = {"deviceClassName": "gpu.example.com"}
    assert probe(demo.cs, "partitionable-devices", "none-left", one_more) is None


def test_partitionable_devices_scale_up_from_the_dump_adds_a_node() -> None:
    # drasnap simulate scale-up --from the demo: the pending pod fits a new node of the
    # node's instance type (it used to fit none: nodes_added 0).
    directory = DEMOS / "partitionable-devices"
    settings = Settings(
        "scale-up", source=str(directory), source_digest=source_digest(directory)
    ).resolved()
    outcome = simulate(ClusterSnapshot(MemoryStore()), settings, lambda: prepare(settings))
    assert outcome.result == {
        "nodes_added": 1,
        "node_group": "gpu-2x",
        "estimates": {"gpu-2x": 1},
    }
    assert outcome.pods_placed == 1


# -- prioritized-alternatives -------------------------------------------------------------------


def test_prioritized_alternatives_fall_back_and_prefer() -> None:
    demo = run_demo("prioritized-alternatives")
    assert demo.placed == {"pod0": "gpu-node-0", "pod1": "gpu-node-0"}
    # pod0: no BLEEDING-EDGE-GPU, no GPU of 1Ti: the third subrequest. pod1: the first.
    assert demo.devices("pod0") == [("gpu/older-gpu", "gpu-0")]
    assert demo.devices("pod1") == [("gpu/latest-gpu", "gpu-1")]


# -- binding-conditions -------------------------------------------------------------------------


def test_binding_conditions_are_copied_into_the_allocation() -> None:
    demo = run_demo("binding-conditions")
    assert demo.placed == {"pod0": "gpu-node-0"}
    assert demo.results("pod0") == [
        {
            "request": "gpu",
            "driver": "gpu.example.com",
            "pool": "gpu-node-0",
            "device": "gpu-0",
            "bindingConditions": ["BindingConditions"],
            "bindingFailureConditions": ["BindingFailureConditions"],
        }
    ]


def test_binding_conditions_gate_off_never_chooses_such_devices() -> None:
    # DRADeviceBindingConditions off: upstream's allocator skips devices with binding
    # conditions, and every GPU of the dump has them.
    demo = run_demo("binding-conditions", {"DRADeviceBindingConditions": False})
    assert demo.placed == {"pod0": None}


# -- device-taints-tolerations ------------------------------------------------------------------


def test_device_taint_rule_keeps_the_untolerating_pod_off_the_gpus() -> None:
    # The rule taints both GPUs NoExecute (DRADeviceTaintRules on: off by default in 1.36).
    demo = run_demo("device-taints-tolerations", {"DRADeviceTaintRules": True})
    assert demo.placed == {"pod-without-toleration": None, "pod-with-toleration": "gpu-node-0"}
    toleration = {
        "key": "gpu.example.com/unhealthy",
        "operator": "Equal",
        "value": "true",
        "effect": "NoExecute",
    }
    assert demo.results("pod-with-toleration") == [
        {
            "request": "gpu",
            "driver": "gpu.example.com",
            "pool": "gpu-node-0",
            "device": "gpu-0",
            "tolerations": [toleration],
        }
    ]


def test_device_taint_rule_in_a_scale_up_from_the_demo() -> None:
    # A new node's GPUs are tainted too: the tolerating pod gets one, the other stays pending.
    # With the gate at its 1.36 default (off) the rule is refused, not ignored.
    directory = DEMOS / "device-taints-tolerations"
    settings = Settings(
        "scale-up", source=str(directory), source_digest=source_digest(directory)
    ).resolved()
    with pytest.raises(ObjectValidationError, match="DRADeviceTaintRules"):
        prepare(settings)
    gates = {**settings.feature_gates, "DRADeviceTaintRules": True}
    settings = dataclasses.replace(settings, feature_gates=gates)
    cs = ClusterSnapshot(MemoryStore(), features=gates)
    outcome = simulate(cs, settings, lambda: prepare(settings))
    assert (outcome.result["nodes_added"], outcome.pods_placed) == (1, 1)
    assert [name_of(p) for p in cs.pods_on_node("gpu-2x-00000")] == ["pod-with-toleration"]


# -- gpu-allow-multiple-allocations -------------------------------------------------------------


def consumed(results: list[dict[str, Any]]) -> list[dict[str, Quantity]]:
    return [
        {name: Quantity.parse(value) for name, value in r["consumedCapacity"].items()}
        for r in results
    ]


def test_two_pods_share_one_gpu_and_its_capacity_adds_up() -> None:
    demo = run_demo("gpu-allow-multiple-allocations")
    assert demo.placed == {"pod0": "gpu-node-0", "pod1": "gpu-node-0"}
    # Both on GPU 0 (the first device that still has the capacity), each with a share of its
    # own, each consuming what it asked for.
    assert demo.devices("pod0") == demo.devices("pod1") == [("gpu", "gpu-0")]
    share0, share1 = (r["shareID"] for p in ("pod0", "pod1") for r in demo.results(p))
    assert share0 != share1
    ask = {"memory": Quantity.parse("16Gi"), "compute": Quantity.parse("20")}
    assert consumed(demo.results("pod0")) == consumed(demo.results("pod1")) == [ask]
    # 32Gi and 40 of GPU 0 are taken: 48Gi and 60 more fill it exactly; then even 1Gi and 1
    # do not fit on it (over-commit refused) and go to GPU 1.
    ns = "gpu-allow-multiple-allocations"
    rest = {"requests": {"memory": "48Gi", "compute": "60"}}
    gpu = "gpu.example.com"
    assert probe(demo.cs, ns, "rest", {"deviceClassName": gpu, "capacity": rest}) == "gpu-node-0"
    little = {"requests": {"memory": "1Gi", "compute": "1"}}
    assert (
        probe(demo.cs, ns, "little", {"deviceClassName": gpu, "capacity": little}) == "gpu-node-0"
    )
    devices = {
        name: [r["device"] for r in c["status"]["allocation"]["devices"]["results"]]
        for name in ("rest", "little")
        for c in [demo.cs.dra.resource_claims.get(ns, name)]
    }
    assert devices == {"rest": ["gpu-0"], "little": ["gpu-1"]}


def test_gpu_allow_multiple_allocations_gate_off_is_refused() -> None:
    # DRAConsumableCapacity off: a capacity request is an error (upstream's gate-off answer).
    cs, pods = load("gpu-allow-multiple-allocations", {"DRAConsumableCapacity": False})
    with pytest.raises(AllocationError, match="the DRAConsumableCapacity feature is disabled"):
        cs.schedule_pod_anywhere(pods[0])


# -- net-consumable-capacity --------------------------------------------------------------------


def test_nic_bandwidth_is_consumed_and_over_commit_refused() -> None:
    demo = run_demo("net-consumable-capacity")
    assert demo.placed == {"pod0": "net-node-0", "pod1": "net-node-0"}
    assert demo.devices("pod0") == demo.devices("pod1") == [("nic", "nic-0")]
    # What each asked for, rounded up to the policy's 1M steps, and one VF (the only valid
    # amount, taken without being asked for). Quantities are compared by value: the result
    # writes them as upstream formats them (10G as 9765625Ki).
    q = Quantity.parse
    assert consumed(demo.results("pod0")) == [
        {"vfs": q("1"), "ingressBandwidth": q("10G"), "egressBandwidth": q("5G")}
    ]
    assert consumed(demo.results("pod1")) == [
        {"vfs": q("1"), "ingressBandwidth": q("5G"), "egressBandwidth": q("5G")}
    ]
    # 15G of 100G ingress are taken: 85G more fit exactly, then not even the 100M minimum.
    ns = "net-consumable-capacity"

    def nic(ingress: str) -> dict[str, Any]:
        capacity = {"requests": {"ingressBandwidth": ingress, "egressBandwidth": "100M"}}
        return {"deviceClassName": "net.example.com", "capacity": capacity}

    assert probe(demo.cs, ns, "rest", nic("85G")) == "net-node-0"
    assert probe(demo.cs, ns, "more", nic("100M")) is None
