"""Generated cluster objects in the shape of upstream's DRA RunOnce benchmarks
(cluster-autoscaler ``core/bench/benchmark_runonce_test.go``).

One DeviceClass (``gpu.example.com``, every device of the driver), one claim template asking
for one GPU, GPU nodes whose node-local slice (pool = node name, one slice) lists ``gpus``
devices, and pods asking for one GPU through the template. CPU and memory are ample, so that
DRA is the binding constraint, as upstream sets them.

Partitionable GPUs (scale-up's ``--devices partitionable``), in the shape the DRA example driver
publishes them with ``gpuPartitions`` (``kubernetes-sigs/dra-example-driver``,
``internal/profiles/gpu``): each GPU has a counter set (``memory`` 80Gi, ``compute`` 100) and is
offered as ``PARTITIONS`` slices (``gpu-<i>-partition-<j>``) and as a whole (``gpu-<i>-full``),
each consuming its share of the counters, so a GPU is handed out either whole or in slices, never
both. Counter sets and devices go in separate slices of the node's pool (a ResourceSlice holds
either, since Kubernetes 1.35), chunked to the API's limits: 8 counter sets and 64
counter-consuming devices a slice. The pods' claim template asks for "a full GPU, else two
slices of one GPU": one request with a prioritized list (``firstAvailable``) and a
``matchAttribute`` constraint on the GPU's ``index``.

Without DRA (``--no-dra``), upstream's ``BenchmarkRunOnceScaleUp`` and
``BenchmarkRunOnceScaleDown`` shapes (its ``BuildTestNode`` and ``BuildTestPod``): nodes of 10
CPUs, 10,000 bytes of memory and 100 pods (``plain_node``), no device, and pods sized by CPU
and memory alone (``plain_pod``): a fiftieth of a node each for scale-up, so CPU and memory bind
at 50 a node; a hundredth for scale-down, so 100 fit a node, as its pod count does.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from drasnap.snapshot.k8s.objects import KubeObject

DRIVER = "gpu.example.com"
NAMESPACE = "default"
TEMPLATE_NAME = "one-gpu"
PARTITIONABLE_TEMPLATE_NAME = "full-gpu-or-two-slices"
PARTITIONS = 4  # slices per GPU
GPU_MEMORY_GI = 80
GPU_COMPUTE = 100
#: ``resource.k8s.io/v1`` limits: ResourceSliceMaxCounterSets and
#: ResourceSliceMaxDevicesWithAdvancedFeatures (devices consuming counters).
MAX_COUNTER_SETS_PER_SLICE = 8
MAX_COUNTER_DEVICES_PER_SLICE = 64
GROUP_LABEL = "drasnap.io/node-group"
#: Upstream's non-DRA benchmark nodes (``nodeCPU``, ``nodeMem``; BuildTestNode's pod count).
PLAIN_NODE_CPU_MILLI = 10_000
PLAIN_NODE_MEMORY = 10_000
PLAIN_NODE_PODS = 100
#: Pods per node upstream's scale-up sizes its pods for, and the share of a node a scale-down
#: pod takes (one hundredth).
PLAIN_SCALE_UP_PODS_PER_NODE = 50
PLAIN_SCALE_DOWN_SHARE = 100
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"


def device_class() -> KubeObject:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
    }


def claim_template() -> KubeObject:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE_NAME, "namespace": NAMESPACE},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": DRIVER,
                                "allocationMode": "ExactCount",
                                "count": 1,
                            },
                        }
                    ]
                }
            }
        },
    }


def partitionable_claim_template() -> KubeObject:
    """One request ``gpu``: a full GPU, else two slices of one GPU (``firstAvailable``)."""
    attrs = f"device.attributes['{DRIVER}']"
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": PARTITIONABLE_TEMPLATE_NAME, "namespace": NAMESPACE},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "firstAvailable": [
                                {
                                    "name": "full-gpu",
                                    "deviceClassName": DRIVER,
                                    "selectors": [{"cel": {"expression": f"'full' in {attrs}"}}],
                                },
                                {
                                    "name": "two-slices",
                                    "deviceClassName": DRIVER,
                                    "allocationMode": "ExactCount",
                                    "count": 2,
                                    "selectors": [
                                        {"cel": {"expression": f"'partition' in {attrs}"}}
                                    ],
                                },
                            ],
                        }
                    ],
                    # Both slices from one GPU (a no-op for the full GPU).
                    "constraints": [{"requests": ["gpu"], "matchAttribute": f"{DRIVER}/index"}],
                }
            }
        },
    }


def node(name: str, *, group: str | None = None) -> KubeObject:
    labels: dict[str, Any] = {"kubernetes.io/hostname": name}
    if group is not None:
        labels[GROUP_LABEL] = group
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {
            "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
            "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"},
        },
    }


def plain_node(name: str, *, group: str | None = None, halvings: int = 0) -> KubeObject:
    """A node in the shape of upstream's non-DRA benchmarks; ``halvings`` halves its CPU and
    memory that many times (scale-up's further node groups)."""
    labels: dict[str, Any] = {"kubernetes.io/hostname": name}
    if group is not None:
        labels[GROUP_LABEL] = group
    amounts = {
        "cpu": f"{PLAIN_NODE_CPU_MILLI >> halvings}m",
        "memory": str(PLAIN_NODE_MEMORY >> halvings),
        "pods": str(PLAIN_NODE_PODS),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": dict(amounts), "allocatable": dict(amounts)},
    }


def plain_pod(name: str, rng: random.Random, *, share: int, evictable: bool = False) -> KubeObject:
    """A pod asking for ``1 / share`` of a plain node's CPU and memory, and no device;
    ``evictable`` annotates it safe to evict, as upstream's scale-down pods are."""
    meta: dict[str, Any] = {
        "name": name,
        "namespace": NAMESPACE,
        "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
    }
    if evictable:
        meta["annotations"] = {SAFE_TO_EVICT: "true"}
    requests = {
        "cpu": f"{PLAIN_NODE_CPU_MILLI // share}m",
        "memory": str(PLAIN_NODE_MEMORY // share),
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example/app:1",
                    "resources": {"requests": requests},
                }
            ]
        },
    }


def gpu_slice(node_name: str, gpus: int) -> KubeObject:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {
                        "index": {"int": i},
                        "model": {"string": "LATEST-GPU-MODEL"},
                        "driverVersion": {"version": "1.0.0"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(gpus)
            ],
        },
    }


def partitionable_gpu_slices(node_name: str, gpus: int) -> list[KubeObject]:
    """The node-local pool of ``gpus`` partitionable GPUs: counter-set slices, then device
    slices (module docstring)."""
    counter_sets = [
        {
            "name": f"gpu-{i}-counters",
            "counters": {
                "memory": {"value": f"{GPU_MEMORY_GI}Gi"},
                "compute": {"value": str(GPU_COMPUTE)},
            },
        }
        for i in range(gpus)
    ]
    devices = []
    for i in range(gpus):
        base = {"index": {"int": i}, "model": {"string": "LATEST-GPU-MODEL"}}
        base["driverVersion"] = {"version": "1.0.0"}
        base["partitionable"] = {"bool": True}
        shares = [
            (
                f"gpu-{i}-partition-{j}",
                {**base, "partition": {"int": j}},
                f"{GPU_MEMORY_GI // PARTITIONS}Gi",
                str(GPU_COMPUTE // PARTITIONS),
            )
            for j in range(PARTITIONS)
        ]
        shares.append(
            (
                f"gpu-{i}-full",
                {**base, "full": {"bool": True}},
                f"{GPU_MEMORY_GI}Gi",
                str(GPU_COMPUTE),
            )
        )
        for name, attributes, memory, compute in shares:
            amounts = {"memory": {"value": memory}, "compute": {"value": compute}}
            devices.append(
                {
                    "name": name,
                    "attributes": attributes,
                    "capacity": amounts,
                    "consumesCounters": [{"counterSet": f"gpu-{i}-counters", "counters": amounts}],
                }
            )
    parts: list[tuple[str, dict[str, Any]]] = [
        ("counters", {"sharedCounters": counter_sets[k : k + MAX_COUNTER_SETS_PER_SLICE]})
        for k in range(0, len(counter_sets), MAX_COUNTER_SETS_PER_SLICE)
    ]
    parts += [
        ("devices", {"devices": devices[k : k + MAX_COUNTER_DEVICES_PER_SLICE]})
        for k in range(0, len(devices), MAX_COUNTER_DEVICES_PER_SLICE)
    ]
    pool = {"name": node_name, "generation": 1, "resourceSliceCount": len(parts)}
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-{DRIVER}-{what}-{k}"},
            "spec": {"driver": DRIVER, "nodeName": node_name, "pool": pool, **content},
        }
        for k, (what, content) in enumerate(parts)
    ]


def pod(name: str, rng: random.Random, template: str = TEMPLATE_NAME) -> KubeObject:
    """A pod asking for GPUs through the claim template (no claim generated yet)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example/trainer:1",
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                }
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
        },
    }


def allocation(node_name: str, device: str) -> dict[str, Any]:
    """The ``status.allocation`` of a one-GPU claim holding ``device`` on ``node_name``."""
    return {
        "devices": {
            "results": [{"request": "gpu", "driver": DRIVER, "pool": node_name, "device": device}]
        },
        "nodeSelector": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        },
    }
