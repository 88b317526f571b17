"""ClusterSnapshot hands the allocator what Kubernetes 1.36's DRA needs: the feature gates, the
DeviceTaintRules and the allocated state of shared devices (upstream's GatherAllocatedState),
kept right across fork/commit/revert.

Each expected answer follows the scheduler's DRA plugin: the allocator runs with the gates
kube-scheduler was started with, with every share and consumed capacity of other claims, and
with the taints DeviceTaintRules put on the devices they select.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from drasnap.snapshot import AllocationError, FeatureGateError
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.store import MemoryStore

from tests.snapshot.cluster_builders import assert_indexes_consistent, node, plain_pod

Obj = dict[str, Any]
NIC = "nic.example.com"
GPU = "gpu.example.com"


def _class(name: str, driver: str) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def _slice(node_name: str, driver: str, devices: list[Obj]) -> Obj:
    return {
        "metadata": {"name": f"{node_name}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _nic(name: str, bandwidth: str = "100G") -> Obj:
    return {
        "name": name,
        "allowMultipleAllocations": True,
        "capacity": {"bandwidth": {"value": bandwidth}},
    }


def _pod_with_claim(cs: ClusterSnapshot, name: str, request: Obj) -> Obj:
    """A pod and its own claim (tracked in ``cs``) with one request."""
    pod = plain_pod(name, cpu="10m", memory="1Mi")
    pod["spec"]["resourceClaims"] = [{"name": "c", "resourceClaimName": f"{name}-claim"}]
    claim = {
        "metadata": {"name": f"{name}-claim", "namespace": "default", "uid": f"{name}-claim"},
        "spec": {"devices": {"requests": [request]}},
    }
    cs.dra.add_claims([claim])
    return pod


def _bandwidth(name: str, amount: str) -> Obj:
    return {
        "name": "net",
        "exactly": {"deviceClassName": "nic", "capacity": {"requests": {"bandwidth": amount}}},
    }


def _results(cs: ClusterSnapshot, pod: str) -> list[Obj]:
    claim = cs.dra.resource_claims.get("default", f"{pod}-claim")
    results: list[Obj] = claim["status"]["allocation"]["devices"]["results"]
    return results


def _nic_cluster(**options: Any) -> ClusterSnapshot:
    cs = ClusterSnapshot(MemoryStore(), **options)
    cs.dra.add_device_classes([_class("nic", NIC)])
    cs.add_node(node("n1"), slices=[_slice("n1", NIC, [_nic("nic-0")])])
    return cs


def test_shares_of_a_device_add_up_and_overcommit_is_refused() -> None:
    # Upstream: shares of an allowMultipleAllocations device are AllocatedSharedDeviceIDs and
    # their consumedCapacity is aggregated (GatherAllocatedState), so 60G + 40G fill a 100G
    # NIC and a third share of 10G does not fit.
    cs = _nic_cluster()
    first = _pod_with_claim(cs, "a", _bandwidth("a", "60G"))
    second = _pod_with_claim(cs, "b", _bandwidth("b", "40G"))
    third = _pod_with_claim(cs, "c", _bandwidth("c", "10G"))
    cs.schedule_pod(first, "n1")
    cs.schedule_pod(second, "n1")
    (a,), (b,) = _results(cs, "a"), _results(cs, "b")
    assert (a["device"], b["device"]) == ("nic-0", "nic-0")
    assert a["shareID"] != b["shareID"]
    assert (a["consumedCapacity"], b["consumedCapacity"]) == (
        {"bandwidth": "60G"},
        {"bandwidth": "40G"},
    )
    assert cs.dra.resource_claims.list_all_allocated_devices() == frozenset()  # only shares
    assert cs.schedule_pod_anywhere(third) is None
    assert_indexes_consistent(cs)


def test_shares_follow_fork_commit_and_revert() -> None:
    cs = _nic_cluster()
    pods = [_pod_with_claim(cs, name, _bandwidth(name, "50G")) for name in ("a", "b", "c")]
    cs.fork()
    cs.schedule_pod(pods[0], "n1")
    cs.fork()
    cs.schedule_pod(pods[1], "n1")
    assert cs.schedule_pod_anywhere(pods[2]) is None  # 100G taken
    assert_indexes_consistent(cs)
    cs.revert()  # b's share goes: c fits where b was
    assert_indexes_consistent(cs)
    cs.fork()
    assert cs.schedule_pod_anywhere(pods[2]) == "n1"
    cs.commit()
    cs.commit()
    assert_indexes_consistent(cs)
    shares, consumed = cs.dra.resource_claims.allocated_shares()
    assert len(shares) == 2 and len(consumed) == 2
    cs.unschedule_pod("default", "a")
    assert_indexes_consistent(cs)
    assert len(cs.dra.resource_claims.allocated_shares()[0]) == 1


def test_shares_are_rebuilt_from_a_reopened_store(tmp_path: Any) -> None:
    db = tmp_path / "s.db"
    with ClusterSnapshot.open(db) as cs:
        cs.dra.add_device_classes([_class("nic", NIC)])
        cs.add_node(node("n1"), slices=[_slice("n1", NIC, [_nic("nic-0")])])
        cs.schedule_pod(_pod_with_claim(cs, "a", _bandwidth("a", "70G")), "n1")
        cs.store.checkpoint()
    with ClusterSnapshot.open(db) as cs:
        assert_indexes_consistent(cs)
        late = _pod_with_claim(cs, "b", _bandwidth("b", "40G"))
        assert cs.schedule_pod_anywhere(late) is None  # 70G + 40G > 100G


def test_consumable_capacity_gate_off_makes_every_share_dedicated() -> None:
    # Gate off, the allocator refuses capacity requests (upstream: the request needs the
    # DRAConsumableCapacity feature) ...
    cs = _nic_cluster(features={"DRAConsumableCapacity": False})
    pod = _pod_with_claim(cs, "a", _bandwidth("a", "10G"))
    with pytest.raises(AllocationError, match="DRAConsumableCapacity"):
        cs.schedule_pod(pod, "n1")
    # ... and a share allocated earlier (e.g. in the dump) holds its device exclusively, as
    # GatherAllocatedState does without the gate: a plain request cannot get it.
    cs = _nic_cluster(features={"DRAConsumableCapacity": False})
    holder = _pod_with_claim(cs, "h", {"name": "net", "exactly": {"deviceClassName": "nic"}})
    claim = cs.dra.resource_claims.get("default", "h-claim")
    shared = copy.deepcopy(claim)
    shared["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "net", "driver": NIC, "pool": "n1", "device": "nic-0",
                     "shareID": "11111111-1111-1111-1111-111111111111"}
                ]
            }
        }
    }  # fmt: skip
    cs.dra.resource_claims.signal_claim_pending_allocation("h-claim", shared)
    del holder
    plain = _pod_with_claim(cs, "p", {"name": "net", "exactly": {"deviceClassName": "nic"}})
    assert cs.schedule_pod_anywhere(plain) is None
    # With the gate on (1.36's default), the same share leaves the device to others.
    on = _nic_cluster()
    on.dra.add_claims([{**shared, "metadata": {**shared["metadata"]}}])
    plain = _pod_with_claim(on, "p", {"name": "net", "exactly": {"deviceClassName": "nic"}})
    assert on.schedule_pod_anywhere(plain) == "n1"


def _gpu_cluster(**options: Any) -> ClusterSnapshot:
    cs = ClusterSnapshot(MemoryStore(), **options)
    cs.dra.add_device_classes([_class("gpu", GPU)])
    devices = [{"name": f"gpu-{i}"} for i in range(2)]
    cs.add_node(node("n1"), slices=[_slice("n1", GPU, devices)])
    return cs


def test_feature_gates_reach_the_allocator() -> None:
    prioritized = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "two", "deviceClassName": "gpu", "count": 2},
            {"name": "one", "deviceClassName": "gpu"},
        ],
    }
    cs = _gpu_cluster()
    cs.schedule_pod(_pod_with_claim(cs, "a", prioritized), "n1")
    assert [r["request"] for r in _results(cs, "a")] == ["gpu/two", "gpu/two"]
    off = _gpu_cluster(features={"DRAPrioritizedList": False})
    with pytest.raises(AllocationError, match="DRAPrioritizedList"):
        off.schedule_pod(_pod_with_claim(off, "a", prioritized), "n1")


def test_an_unknown_gate_is_refused_at_once() -> None:
    with pytest.raises(FeatureGateError, match="DRANoSuchGate"):
        ClusterSnapshot(MemoryStore(), features={"DRANoSuchGate": True})


def _taint_rule(device: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceTaintRule",
        "metadata": {"name": f"taint-{device}"},
        "spec": {
            "deviceSelector": {"driver": GPU, "pool": "n1", "device": device},
            "taint": {"key": "broken", "value": "yes", "effect": "NoSchedule"},
        },
    }


def test_device_taint_rules_taint_the_devices_they_select() -> None:
    cs = _gpu_cluster(features={"DRADeviceTaintRules": True})
    cs.dra.add_device_taint_rules([_taint_rule("gpu-0")])
    one = {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}
    cs.schedule_pod(_pod_with_claim(cs, "a", one), "n1")
    assert [r["device"] for r in _results(cs, "a")] == ["gpu-1"]  # gpu-0 is tainted
    assert cs.schedule_pod_anywhere(_pod_with_claim(cs, "b", one)) is None
    tolerating: dict[str, Any] = {
        "name": "gpu",
        "exactly": {
            "deviceClassName": "gpu",
            "tolerations": [{"key": "broken", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    cs.schedule_pod(_pod_with_claim(cs, "c", tolerating), "n1")
    (result,) = _results(cs, "c")
    assert result["device"] == "gpu-0"
    assert result["tolerations"] == tolerating["exactly"]["tolerations"]


def test_taint_rules_follow_the_layers() -> None:
    cs = _gpu_cluster(features={"DRADeviceTaintRules": True})
    one = {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}
    pod = _pod_with_claim(cs, "a", one)
    cs.fork()
    cs.dra.add_device_taint_rules([_taint_rule("gpu-0"), _taint_rule("gpu-1")])
    assert cs.schedule_pod_anywhere(pod) is None
    cs.revert()
    assert cs.dra.device_taint_rules.list() == []
    assert cs.schedule_pod_anywhere(pod) == "n1"


def test_taint_rules_with_their_gate_off_are_an_error_not_ignored() -> None:
    cs = _gpu_cluster()  # DRADeviceTaintRules is off by default in 1.36
    cs.dra.add_device_taint_rules([_taint_rule("gpu-0")])
    one = {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}
    with pytest.raises(AllocationError, match="DRADeviceTaintRules"):
        cs.schedule_pod(_pod_with_claim(cs, "a", one), "n1")


def test_plain_pods_are_unaffected_by_the_gates() -> None:
    cs = _gpu_cluster(features={"DRAPrioritizedList": False, "DRADeviceTaintRules": True})
    assert cs.schedule_pod_anywhere(plain_pod("p")) == "n1"
