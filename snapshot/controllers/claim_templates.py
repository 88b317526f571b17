"""Claims generated from templates, as the resource claim controller makes them.

(What a pod asks of a node and what a node offers are ``snapshot.scheduling``'s `Requests`.)

A pod that asks for a claim through ``resourceClaimTemplateName`` gets a pod-owned claim the way
the resource claim controller makes one: named ``<pod>-<claim>-<5 characters>`` (deterministic
here: derived from the pod's UID and the claim name, so runs are reproducible), owned by the pod
through a controller owner reference, annotated with the pod's claim name, its spec copied from
the template, and recorded in the pod's ``status.resourceClaimStatuses``.
"""

from __future__ import annotations

from collections.abc import Mapping
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

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"


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
