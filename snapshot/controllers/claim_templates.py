"""Pods and nodes for the cluster snapshot: resource fit, and claims generated from templates.

Resource fit is the scheduler's NodeResourcesFit in its simplest form: the sum of a pod's
container requests (the larger of that and any single init container's), plus pod overhead,
against the node's ``status.allocatable`` minus what the pods already on it request; and the
node's ``pods`` count. CPU is counted in millicores and memory in bytes, both exact integers.

A pod that asks for a claim through ``resourceClaimTemplateName`` gets a pod-owned claim the way
the resource claim controller makes one: named ``<pod>-<claim>-<5 characters>`` (deterministic
here: derived from the pod's UID and the claim name, so runs are reproducible), owned by the pod
through a controller owner reference, annotated with the pod's claim name, its spec copied from
the template, and recorded in the pod's ``status.resourceClaimStatuses``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from drasnap.snapshot.errors import NotFoundError, ObjectValidationError
from drasnap.snapshot.k8s.claims import pod_owner_reference
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    DRA_API_VERSION,
    POD_KIND,
    key_of,
    name_suffix,
    namespace_or_default,
    namespaced_key,
)
from drasnap.snapshot.k8s.objects import KubeObject, deep_copy, name_of, object_label
from drasnap.snapshot.k8s.quantity import Quantity

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"


@dataclass(frozen=True)
class Resources:
    """CPU in millicores, memory in bytes, and a pod count."""

    cpu: int = 0
    memory: int = 0
    pods: int = 0

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory, self.pods + other.pods)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory, self.pods - other.pods)

    def fits_beside(self, used: Resources, allocatable: Resources) -> bool:
        """Whether these requests fit where ``used`` of ``allocatable`` is taken.

        Field by field, without building the free Resources: this runs for every node a pod
        tries, and a frozen dataclass costs more to build than the comparison.
        """
        return (
            self.cpu + used.cpu <= allocatable.cpu
            and self.memory + used.memory <= allocatable.memory
            and self.pods + used.pods <= allocatable.pods
        )


@lru_cache(maxsize=4096)
def _quantity(text: str, milli: bool) -> int:
    quantity = Quantity.parse(text)
    return quantity.milli_value() if milli else quantity.rounded_up()


def _requests(resources: Mapping[str, Any] | None) -> Resources:
    requests = (resources or {}).get("requests") or {}
    cpu = requests.get("cpu")
    memory = requests.get("memory")
    return Resources(
        cpu=_quantity(str(cpu), True) if cpu is not None else 0,
        memory=_quantity(str(memory), False) if memory is not None else 0,
    )


def pod_requests(pod: KubeObject) -> Resources:
    """What the pod asks of a node (one pod slot included)."""
    spec = pod.get("spec") or {}
    total = Resources()
    for container in spec.get("containers") or ():
        total = total + _requests(container.get("resources"))
    for container in spec.get("initContainers") or ():
        r = _requests(container.get("resources"))
        total = Resources(max(total.cpu, r.cpu), max(total.memory, r.memory))
    overhead = spec.get("overhead") or {}
    if overhead:
        total = total + _requests({"requests": overhead})
    return Resources(total.cpu, total.memory, 1)


def node_allocatable(node: KubeObject) -> Resources:
    """The node's ``status.allocatable`` (``capacity`` when allocatable is absent)."""
    status = node.get("status") or {}
    alloc = status.get("allocatable") or status.get("capacity") or {}
    cpu, memory, pods = alloc.get("cpu"), alloc.get("memory"), alloc.get("pods")
    return Resources(
        cpu=_quantity(str(cpu), True) if cpu is not None else 0,
        memory=_quantity(str(memory), False) if memory is not None else 0,
        pods=_quantity(str(pods), False) if pods is not None else 110,
    )


def node_name_of(pod: KubeObject) -> str | None:
    """The node a pod is bound to, or None for a pending pod."""
    name = (pod.get("spec") or {}).get("nodeName")
    return name if isinstance(name, str) and name else None


def generated_claim_name(pod: KubeObject, claim_name: str) -> str:
    """``<pod>-<claim>-<suffix>``: the controller's naming, with a reproducible suffix."""
    uid = (pod.get("metadata") or {}).get("uid") or key_of(pod)
    suffix = name_suffix(f"{uid}/{claim_name}")
    prefix = f"{name_of(pod)}-{claim_name}"[:57]  # names stay within 63 characters
    return f"{prefix}-{suffix}"


def claims_from_templates(
    pod: KubeObject, templates: Mapping[str, KubeObject]
) -> tuple[KubeObject, list[KubeObject]]:
    """Generate the pod-owned claims of ``pod``'s template references.

    ``templates`` maps ``namespace/name`` to ResourceClaimTemplate. Returns the pod with
    ``status.resourceClaimStatuses`` filled in (a new dict; the input is not changed) and the
    new claims. References whose status already names a claim are left as they are.

    Raises:
        NotFoundError: a referenced template does not exist.
        ObjectValidationError: the pod has no UID (ownership needs one).
    """
    spec = pod.get("spec") or {}
    refs = spec.get("resourceClaims") or []
    namespace = namespace_or_default(pod)
    status = pod.get("status") or {}
    statuses = list(status.get("resourceClaimStatuses") or [])
    known = {s.get("name") for s in statuses if s.get("resourceClaimName")}
    claims: list[KubeObject] = []
    for ref in refs:
        template_name = ref.get("resourceClaimTemplateName")
        if not template_name or ref.get("name") in known:
            continue
        template = templates.get(namespaced_key(namespace, template_name))
        if template is None:
            raise NotFoundError(
                f"pod {namespace}/{name_of(pod)}: ResourceClaimTemplate "
                f"{namespace}/{template_name} not found (spec.resourceClaims {ref.get('name')!r})"
            )
        if not (pod.get("metadata") or {}).get("uid"):
            raise ObjectValidationError(
                f"{object_label(pod)}: metadata.uid is required to own generated claims",
                kind=POD_KIND,
                namespace=namespace,
                name=name_of(pod),
                field="metadata.uid",
            )
        name = generated_claim_name(pod, ref["name"])
        tmpl_spec = template.get("spec") or {}
        tmpl_meta = tmpl_spec.get("metadata") or {}
        metadata: dict[str, Any] = {
            "name": name,
            "namespace": namespace,
            "annotations": {
                **(tmpl_meta.get("annotations") or {}),
                POD_CLAIM_NAME_ANNOTATION: ref["name"],
            },
            "ownerReferences": [pod_owner_reference(pod)],
        }
        if tmpl_meta.get("labels"):
            metadata["labels"] = dict(tmpl_meta["labels"])
        metadata["uid"] = f"{(pod.get('metadata') or {}).get('uid')}-{ref['name']}"
        claims.append(
            {
                "apiVersion": DRA_API_VERSION,
                "kind": CLAIM_KIND,
                "metadata": metadata,
                "spec": deep_copy(tmpl_spec.get("spec") or {}),
            }
        )
        statuses.append({"name": ref["name"], "resourceClaimName": name})
    if not claims:
        return pod, []
    new_pod = dict(pod)
    new_pod["status"] = {**status, "resourceClaimStatuses": statuses}
    return new_pod, claims
