"""Extended resources backed by DRA (DRAExtendedResource; issue 13.5): a container asking for
``example.com/gpu`` that no node advertises, but that a DeviceClass provides
(``spec.extendedResourceName``, or the implicit ``deviceclass.resource.kubernetes.io/<class>``),
is placed only where the allocator can serve it; the scheduler's extended-resource claim holds
the devices (counted as allocated), and goes when the pod leaves its node.

The cluster, tried in name order:
  a-plain   no devices, does not advertise the resource
  b-dra     two devices of driver gpu.example.com, does not advertise the resource
  c-plugin  advertises example.com/gpu: 1 (a device plugin), no devices
"""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.scheduling.extended_claims import EXTENDED_RESOURCE_CLAIM_ANNOTATION
from drasnap.store import MemoryStore

from tests.snapshot.cluster_builders import (
    assert_indexes_consistent,
    device_class,
    node,
    node_slice,
    plain_pod,
)

Obj = dict[str, Any]
DRIVER = "gpu.example.com"


def gpu_pod(name: str, count: int, resource: str = "example.com/gpu") -> Obj:
    pod = plain_pod(name)
    pod["spec"]["containers"][0]["resources"]["requests"][resource] = str(count)
    return pod


def cluster(**options: Any) -> ClusterSnapshot:
    cs = ClusterSnapshot(MemoryStore(), **options)
    gpu = device_class("gpu", DRIVER)
    gpu["spec"]["extendedResourceName"] = "example.com/gpu"
    cs.dra.add_device_classes([gpu])
    plugin = node("c-plugin")
    plugin["status"]["allocatable"]["example.com/gpu"] = "1"
    cs.add_node(node("a-plain"))
    cs.add_node(node("b-dra"), slices=[node_slice("b-dra", DRIVER, "b-dra", devices=2)])
    cs.add_node(plugin)
    return cs


def extended_claims(cs: ClusterSnapshot) -> list[Obj]:
    return [
        c
        for c in cs.dra.resource_claims.list()
        if (c["metadata"].get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION)
    ]


def test_dra_serves_the_resource_where_no_node_advertises_it() -> None:
    cs = cluster()
    assert cs.schedule_pod_anywhere(gpu_pod("two", 2)) == "b-dra"
    (claim,) = extended_claims(cs)
    requests = claim["spec"]["devices"]["requests"]
    # request j is the resource's place in the container's requests sorted by name (cpu,
    # example.com/gpu, memory): 1
    assert requests == [
        {
            "name": "container-0-request-1",
            "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2},
        }
    ]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert sorted(r["device"] for r in results) == ["dev1", "dev2"]
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["two"]
    placed = cs.pod("default", "two")
    assert placed is not None
    assert placed["status"]["extendedResourceClaimStatus"] == {
        "resourceClaimName": claim["metadata"]["name"],
        "requestMappings": [
            {
                "containerName": "c",
                "resourceName": "example.com/gpu",
                "requestName": "container-0-request-1",
            }
        ],
    }
    # b-dra's devices are taken: the next pod goes to the node whose device plugin has one,
    # through NodeResourcesFit, without a claim
    assert cs.schedule_pod_anywhere(gpu_pod("one", 1)) == "c-plugin"
    assert len(extended_claims(cs)) == 1
    third = gpu_pod("third", 1)
    assert cs.schedule_pod_anywhere(third) is None
    assert cs.fit_error(third).message() == (
        "0/3 nodes are available: 1 Insufficient example.com/gpu, 2 cannot allocate all claims."
    )
    assert_indexes_consistent(cs)


def test_the_implicit_class_name_works_too() -> None:
    cs = cluster()
    pod = gpu_pod("implicit", 1, "deviceclass.resource.kubernetes.io/gpu")
    assert cs.schedule_pod_anywhere(pod) == "b-dra"
    (claim,) = extended_claims(cs)
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu"


def test_the_claim_goes_with_the_binding_and_follows_revert() -> None:
    cs = cluster()
    cs.fork("try")
    assert cs.schedule_pod_anywhere(gpu_pod("two", 2)) == "b-dra"
    cs.revert()
    assert extended_claims(cs) == []
    assert cs.schedule_pod_anywhere(gpu_pod("two", 2)) == "b-dra"
    unplaced = cs.unschedule_pod("default", "two")
    assert "extendedResourceClaimStatus" not in (unplaced.get("status") or {})
    assert extended_claims(cs) == []  # the devices are free again
    assert cs.schedule_pod_anywhere(gpu_pod("again", 2)) == "b-dra"
    cs.remove_node("b-dra")
    assert extended_claims(cs) == []
    assert_indexes_consistent(cs)


def test_with_the_gate_off_only_nodes_advertising_the_resource_take_the_pod() -> None:
    # DRAExtendedResource off: the scheduler treats example.com/gpu as a plain extended
    # resource (NodeResourcesFit against allocatable), so only c-plugin has it.
    cs = cluster(features={"DRAExtendedResource": False})
    assert cs.schedule_pod_anywhere(gpu_pod("one", 1)) == "c-plugin"
    assert cs.schedule_pod_anywhere(gpu_pod("two", 1)) is None
    assert extended_claims(cs) == []
