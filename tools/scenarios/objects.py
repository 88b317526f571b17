"""Generated cluster objects in the shape of upstream's DRA RunOnce benchmarks.

One DeviceClass (``gpu.example.com``, every device of the driver), one claim template asking
for one GPU, GPU nodes whose node-local slice (pool = node name, one slice) lists ``gpus``
devices, and pods asking for one GPU through the template. CPU and memory are ample, so that
DRA is the binding constraint, as upstream sets them.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from snapshot.objects import KubeObject

DRIVER = "gpu.example.com"
NAMESPACE = "default"
TEMPLATE_NAME = "one-gpu"
GROUP_LABEL = "drasnap.io/node-group"


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


def pod(name: str, rng: random.Random) -> KubeObject:
    """A pod asking for one GPU through the claim template (no claim generated yet)."""
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
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": TEMPLATE_NAME}],
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
