"""The ResourceClaim the scheduler makes for extended resources that DRA provides.

With DRAExtendedResource (beta and on in 1.36), a container may ask for ``example.com/gpu: 1``
(or ``deviceclass.resource.kubernetes.io/<class>: 1``) where no node advertises that resource
but a DeviceClass provides it. kube-scheduler's DynamicResources plugin then allocates devices
of that class on the node, as if the pod had a claim: one device request per container
resource (``container-<i>-request-<j>``, exactly ``count`` devices of the class), only for the
resources the node does not advertise itself (those come from its device plugin). At PreBind it
creates the claim, named after the pod (``<pod>-extended-resources-<suffix>``), owned by the
pod, annotated ``resource.kubernetes.io/extended-resource-claim: "true"``, allocated and
reserved for the pod, and records it in the pod's ``status.extendedResourceClaimStatus``
(claim name, and which container's resource maps to which request). Upstream:
``pkg/scheduler/framework/plugins/dynamicresources/extended_resources.go`` and
``dynamicresources.go`` (``createDeviceRequests``, ``bindClaim``).

Here the claim is built per node being tried (`extended_claim`), allocated with the pod's
other claims, and stored when the pod is placed (`with_extended_claim_status` for the pod); the
suffix is derived from the pod's UID, so runs repeat. Taking the pod off its node deletes the
claim, as the scheduler makes a new one at the next binding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from drasnap.snapshot.k8s.claims import pod_owner_reference
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    DRA_API_VERSION,
    key_of,
    name_suffix,
    namespace_or_default,
    namespaced_key,
)
from drasnap.snapshot.k8s.objects import KubeObject, name_of
from drasnap.snapshot.scheduling.pod_requests import ExtendedResourceRequest

__all__ = [
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "extended_claim",
    "extended_claim_key",
    "with_extended_claim_status",
    "without_extended_claim_status",
]

EXTENDED_RESOURCE_CLAIM_ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"


def _claim_name(pod: KubeObject) -> str:
    uid = (pod.get("metadata") or {}).get("uid") or key_of(pod)
    prefix = f"{name_of(pod)}-extended-resources"[:57]
    return f"{prefix}-{name_suffix(f'{uid}/extended-resources')}"


def extended_claim(pod: KubeObject, requests: Sequence[ExtendedResourceRequest]) -> KubeObject:
    """The claim for ``requests`` (those a node must serve through DRA), unallocated."""
    name = _claim_name(pod)
    uid = (pod.get("metadata") or {}).get("uid") or key_of(pod)
    return {
        "apiVersion": DRA_API_VERSION,
        "kind": CLAIM_KIND,
        "metadata": {
            "name": name,
            "namespace": namespace_or_default(pod),
            "uid": f"{uid}-extended-resources",
            "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
            "ownerReferences": [pod_owner_reference(pod)],
        },
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": r.name,
                        "exactly": {
                            "deviceClassName": r.device_class,
                            "allocationMode": "ExactCount",
                            "count": r.count,
                        },
                    }
                    for r in requests
                ]
            }
        },
    }


def _container_names(pod: KubeObject) -> list[str]:
    spec = pod.get("spec") or {}
    containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
    return [str(c.get("name", "")) for c in containers]


def with_extended_claim_status(
    pod: KubeObject, claim: KubeObject, requests: Sequence[ExtendedResourceRequest]
) -> KubeObject:
    """``pod`` with ``status.extendedResourceClaimStatus`` naming ``claim`` (a new dict)."""
    names = _container_names(pod)
    mappings = []
    for r in requests:
        index = int(r.name.split("-")[1])  # container-<i>-request-<j>
        mappings.append(
            {"containerName": names[index], "resourceName": r.resource, "requestName": r.name}
        )
    status = {
        **(pod.get("status") or {}),
        "extendedResourceClaimStatus": {
            "resourceClaimName": name_of(claim),
            "requestMappings": mappings,
        },
    }
    return {**pod, "status": status}


def extended_claim_key(pod: Mapping[str, Any]) -> str | None:
    """The ``namespace/name`` of the pod's extended-resource claim, if it has one."""
    status = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    name = status.get("resourceClaimName")
    return namespaced_key(namespace_or_default(pod), name) if name else None


def without_extended_claim_status(pod: KubeObject) -> KubeObject:
    """``pod`` without ``status.extendedResourceClaimStatus`` (a new dict when it had one)."""
    status = pod.get("status") or {}
    if "extendedResourceClaimStatus" not in status:
        return pod
    rest = {k: v for k, v in status.items() if k != "extendedResourceClaimStatus"}
    return {**pod, "status": rest} if rest else {k: v for k, v in pod.items() if k != "status"}
