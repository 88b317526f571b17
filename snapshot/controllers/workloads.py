"""Workload objects become the pending pods their controllers would create.

"What if I apply this Deployment" needs the pods, which Kubernetes' controllers make; this
module makes them the same way, deterministically (the same input gives the same pods):

==================  ============================================================================
workload            pods (``pkg/controller/...``)
==================  ============================================================================
``Deployment``      one ReplicaSet ``<deployment>-<pod-template-hash>`` with ``spec.replicas``
                    (default 1); its pods as below, labelled ``pod-template-hash``. A paused
                    Deployment creates none. When the input holds ReplicaSets that the
                    Deployment controls, they stand for it and it adds nothing.
``ReplicaSet``      ``spec.replicas`` (default 1) pods ``<replicaset>-<5 characters>``
``StatefulSet``     pods ``<statefulset>-<ordinal>``, ordinals from ``spec.ordinals.start``
                    (default 0); labelled ``controller-revision-hash``,
                    ``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index``;
                    ``hostname`` the pod name, ``subdomain`` the ``serviceName``
``Job``             ``min(parallelism, completions - succeeded)`` pods (parallelism default 1;
                    without completions, ``parallelism`` pods), ``<job>-<5 characters>``, or
                    ``<job>-<index>-<5 characters>`` for an Indexed Job (with the completion
                    index annotation and label and hostname ``<job>-<index>``); labelled
                    ``batch.kubernetes.io/job-name`` and ``controller-uid`` as the API server
                    labels the template. Suspended Jobs, Jobs managed by another controller
                    (``managedBy``) and finished Jobs create none.
==================  ============================================================================

Every pod gets the template's labels, annotations and spec (``resourceClaims`` included: claims
from templates are made later, by
:func:`snapshot.controllers.claim_templates.claims_from_templates`), the workload's
namespace, a controller ``ownerReference`` (``controller`` and ``blockOwnerDeletion`` true), a
UID derived from its namespace and name, and ``status.phase: Pending``. Pods in the input that
a workload controls (by owner UID, or kind and name) count as already created: only the missing
ones are added (StatefulSet ordinals and Job indexes already present are skipped).

Not reproduced: the random parts are derived from the input instead (the 5-character suffixes
and UIDs); ``pod-template-hash`` and ``controller-revision-hash`` have upstream's form but hash
the template's JSON, where Go hashes its own dump of the struct; StatefulSets'
``volumeClaimTemplates`` get no PersistentVolumeClaims (the simulation has no volumes), and
``OrderedReady`` StatefulSets get all their pods at once (the controller creates them one by
one, each after the previous is Ready).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import orjson
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.k8s.kinds import (
    CORE_API_VERSION,
    POD_KIND,
    generated_name,
    generated_uid,
    namespaced_key,
    safe_encode,
)
from drasnap.snapshot.k8s.objects import KubeObject, format_label, identity_of, name_of
from drasnap.snapshot.validation import validate
from drasnap.snapshot.validation.engine import check
from drasnap.snapshot.validation.models import client_model

__all__ = ["WORKLOAD_KINDS", "Workload", "pending_pods", "validate_workload"]

DEPLOYMENT: Final = "Deployment"
REPLICA_SET: Final = "ReplicaSet"
STATEFUL_SET: Final = "StatefulSet"
JOB: Final = "Job"

WORKLOAD_KINDS: Final[dict[str, tuple[str, str]]] = {
    DEPLOYMENT: ("apps/v1", "V1Deployment"),
    REPLICA_SET: ("apps/v1", "V1ReplicaSet"),
    STATEFUL_SET: ("apps/v1", "V1StatefulSet"),
    JOB: ("batch/v1", "V1Job"),
}
"""Workload kind -> (the apiVersion Kubernetes 1.36 serves it in, its client model)."""

_JOB_CONTROLLER: Final = "kubernetes.io/job-controller"
_JOB_INDEX: Final = "batch.kubernetes.io/job-completion-index"
_FNV_OFFSET: Final = 0x811C9DC5
_FNV_PRIME: Final = 0x01000193


@dataclass
class Workload:
    """A validated workload object and where it was read."""

    obj: KubeObject
    source: str | None = None
    uid: str = field(init=False)

    def __post_init__(self) -> None:
        metadata = self.obj["metadata"]
        self.uid = metadata.get("uid") or generated_uid(
            self.kind, metadata.get("namespace"), metadata["name"]
        )

    @property
    def kind(self) -> str:
        kind: str = self.obj["kind"]
        return kind

    @property
    def name(self) -> str:
        name: str = self.obj["metadata"]["name"]
        return name

    @property
    def namespace(self) -> str:
        namespace: str = self.obj["metadata"]["namespace"]
        return namespace

    @property
    def label(self) -> str:
        return format_label(self.kind, self.namespace, self.name)

    def owner_reference(self) -> KubeObject:
        return _owner(WORKLOAD_KINDS[self.kind][0], self.kind, self.name, self.uid)


def validate_workload(
    obj: Mapping[str, Any], *, source: str | None = None, warnings: list[str] | None = None
) -> KubeObject:
    """Validate a Deployment, ReplicaSet, StatefulSet or Job with its client model.

    The pod template is checked by the same model as a pod's spec (``V1PodSpec``), with wire
    paths such as ``spec.template.spec.containers[0].resources.requests.cpu``; a selector must
    match the template's labels, as the API server requires.

    Raises:
        ObjectValidationError: the object is invalid, or of an apiVersion Kubernetes 1.36
            does not serve for its kind.
    """
    kind, namespace, name = identity_of(obj)
    api_version, model = WORKLOAD_KINDS[str(kind)]
    if obj.get("apiVersion") != api_version:
        label = format_label(str(kind), namespace, name)
        prefix = f"{source}: {label}" if source else label
        raise ObjectValidationError(
            f"{prefix}: apiVersion: Kubernetes 1.36 serves {kind} in {api_version}, not "
            f"{orjson.dumps(obj.get('apiVersion')).decode()}",
            source=source,
            kind=kind,
            namespace=namespace,
            name=name,
            field="apiVersion",
        )
    checked = check(obj, source, warnings, build_model=False, model=client_model(model)).obj
    spec = checked.get("spec") or {}
    match_labels = (spec.get("selector") or {}).get("matchLabels") or {}
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if kind != JOB and any(labels.get(k) != v for k, v in match_labels.items()):
        label = format_label(str(kind), checked["metadata"]["namespace"], str(name))
        prefix = f"{source}: {label}" if source else label
        raise ObjectValidationError(
            f"{prefix}: spec.template.metadata.labels: Invalid value: "
            f"{orjson.dumps(labels).decode()}: `selector` does not match template `labels`",
            source=source,
            kind=kind,
            namespace=checked["metadata"]["namespace"],
            name=name,
            field="spec.template.metadata.labels",
        )
    return checked


def pending_pods(
    workloads: Iterable[Workload],
    existing_pods: Iterable[KubeObject],
    notes: list[str] | None = None,
) -> list[tuple[KubeObject, str]]:
    """The pods the workloads' controllers would add to ``existing_pods``, with their source.

    Returns validated pods (``snapshot.validation.validate``) and, for each, where it comes
    from (``"<workload source> (Deployment ns/name, pod 2 of 4)"``). One line per workload is
    appended to ``notes`` saying how many pods it adds and their names, or why none.

    Raises:
        ObjectValidationError: a generated pod is invalid (its message names the workload).
    """
    workloads = list(workloads)
    existing = list(existing_pods)
    taken = {namespaced_key(_pod_namespace(p), name_of(p)) for p in existing}
    out: list[tuple[KubeObject, str]] = []
    controlled = {id(w): [p for p in existing if _controls(w, p)] for w in workloads}
    replica_sets = [w for w in workloads if w.kind == REPLICA_SET]
    for workload in workloads:
        pods, why = _expand(workload, controlled[id(workload)], replica_sets, taken)
        for index, pod in enumerate(pods):
            where = (
                f"{workload.source + ' ' if workload.source else ''}({workload.label}, pod "
                f"{index + 1} of {len(pods)})"
            )
            checked = validate(pod, source=where)
            taken.add(namespaced_key(workload.namespace, name_of(pod)))
            out.append((checked, where))
        if notes is not None:
            prefix = f"{workload.source}: " if workload.source else ""
            if pods:
                names = ", ".join(name_of(p) for p in pods[:3])
                names += ", ..." if len(pods) > 3 else ""
                many = len(pods) > 1
                notes.append(
                    f"{prefix}{workload.label}: {len(pods)} pending pod{'s' if many else ''}, as "
                    f"its controller would create {'them' if many else 'it'}{why}: {names}"
                )
            else:
                notes.append(f"{prefix}{workload.label}: no pods{why}")
    return out


# -- per kind ---------------------------------------------------------------------------------


def _expand(
    w: Workload, controlled: list[KubeObject], replica_sets: list[Workload], taken: set[str]
) -> tuple[list[KubeObject], str]:
    """The pods ``w`` adds, and a reason when that is fewer than its replicas."""
    spec = w.obj.get("spec") or {}
    if w.kind == DEPLOYMENT:
        own = [rs for rs in replica_sets if _controls(w, rs.obj)]
        if own:
            names = ", ".join(rs.name for rs in own)
            return [], f" (its ReplicaSets in the input, {names}, stand for it)"
        if spec.get("paused"):
            return [], " (paused: the controller creates no ReplicaSet)"
        return _deployment_pods(w, spec, taken), _counted(controlled)
    if w.kind == REPLICA_SET:
        wanted = _replicas(spec) - len(_active(controlled))
        return _replica_pods(w, w, spec, wanted, taken, {}), _counted(controlled)
    if w.kind == STATEFUL_SET:
        return _stateful_pods(w, spec, controlled, taken), _counted(controlled)
    return _job_pods(w, spec, controlled, taken)


def _deployment_pods(w: Workload, spec: Mapping[str, Any], taken: set[str]) -> list[KubeObject]:
    template = spec.get("template") or {}
    collision = (w.obj.get("status") or {}).get("collisionCount")
    template_hash = _template_hash(template, collision)
    rs_name = f"{w.name}-{template_hash}"
    replica_set = Workload(
        {
            "apiVersion": "apps/v1",
            "kind": REPLICA_SET,
            "metadata": {
                "name": rs_name,
                "namespace": w.namespace,
                "ownerReferences": [w.owner_reference()],
            },
            "spec": spec,
        },
        w.source,
    )
    extra = {"pod-template-hash": template_hash}
    return _replica_pods(w, replica_set, spec, _replicas(spec), taken, extra)


def _replica_pods(
    w: Workload,
    owner: Workload,
    spec: Mapping[str, Any],
    wanted: int,
    taken: set[str],
    extra_labels: Mapping[str, str],
) -> list[KubeObject]:
    pods: list[KubeObject] = []
    index = 0
    while len(pods) < wanted:
        name = generated_name(f"{owner.name}-", f"{owner.uid}/{index}")
        index += 1
        if namespaced_key(w.namespace, name) in taken:
            continue
        pods.append(_pod(w, owner.owner_reference(), spec, name, extra_labels, {}))
    return pods


def _stateful_pods(
    w: Workload, spec: Mapping[str, Any], controlled: list[KubeObject], taken: set[str]
) -> list[KubeObject]:
    start = int((spec.get("ordinals") or {}).get("start") or 0)
    revision = f"{w.name}-{_template_hash(spec.get('template') or {}, None)}"
    present = {name_of(p) for p in controlled}
    pods = []
    for ordinal in range(start, start + _replicas(spec)):
        name = f"{w.name}-{ordinal}"
        if name in present or namespaced_key(w.namespace, name) in taken:
            continue
        labels = {
            "controller-revision-hash": revision,
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(ordinal),
        }
        pod_spec: dict[str, Any] = {"hostname": name}
        if spec.get("serviceName"):
            pod_spec["subdomain"] = spec["serviceName"]
        pods.append(_pod(w, w.owner_reference(), spec, name, labels, {}, pod_spec))
    return pods


def _job_pods(
    w: Workload, spec: Mapping[str, Any], controlled: list[KubeObject], taken: set[str]
) -> tuple[list[KubeObject], str]:
    status = w.obj.get("status") or {}
    managed_by = spec.get("managedBy")
    if managed_by and managed_by != _JOB_CONTROLLER:
        return [], f" (managed by {managed_by}, not the Job controller)"
    if spec.get("suspend"):
        return [], " (suspended)"
    finished = {c.get("type") for c in status.get("conditions") or () if c.get("status") == "True"}
    if finished & {"Complete", "Failed"}:
        return [], " (finished)"
    parallelism = spec.get("parallelism")
    parallelism = 1 if parallelism is None else int(parallelism)
    completions = spec.get("completions")
    succeeded = int(status.get("succeeded") or 0)
    active = _active(controlled)
    if completions is None:
        wanted = parallelism if succeeded == 0 else 0
    else:
        wanted = min(parallelism, max(int(completions) - succeeded, 0))
    wanted -= len(active)
    job_labels = {
        "batch.kubernetes.io/controller-uid": w.uid,
        "batch.kubernetes.io/job-name": w.name,
        "controller-uid": w.uid,
        "job-name": w.name,
    }
    pods: list[KubeObject] = []
    if spec.get("completionMode") == "Indexed":
        busy = {str((p["metadata"].get("annotations") or {}).get(_JOB_INDEX)) for p in active} | {
            str(i) for i in range(succeeded)
        }
        for index in range(int(completions or 0)):
            if len(pods) >= wanted:
                break
            if str(index) in busy:
                continue
            prefix = f"{w.name}-{index}-"
            name = generated_name(prefix, f"{w.uid}/{index}")
            labels = {**job_labels, _JOB_INDEX: str(index)}
            annotations = {_JOB_INDEX: str(index)}
            hostname = {"hostname": f"{w.name}-{index}"}
            pods.append(_pod(w, w.owner_reference(), spec, name, labels, annotations, hostname))
    else:
        index = 0
        while len(pods) < wanted:
            name = generated_name(f"{w.name}-", f"{w.uid}/{index}")
            index += 1
            if namespaced_key(w.namespace, name) in taken:
                continue
            pods.append(_pod(w, w.owner_reference(), spec, name, job_labels, {}))
    return pods, _counted(controlled)


# -- helpers ---------------------------------------------------------------------------------


def _pod(
    w: Workload,
    owner: KubeObject,
    spec: Mapping[str, Any],
    name: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    spec_defaults: Mapping[str, Any] | None = None,
) -> KubeObject:
    template = spec.get("template") or {}
    template_meta = template.get("metadata") or {}
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": w.namespace,
        "uid": generated_uid(POD_KIND, w.namespace, name),
        "labels": {**(template_meta.get("labels") or {}), **labels},
        "ownerReferences": [owner],
    }
    all_annotations = {**(template_meta.get("annotations") or {}), **annotations}
    if all_annotations:
        metadata["annotations"] = all_annotations
    if template_meta.get("finalizers"):
        metadata["finalizers"] = list(template_meta["finalizers"])
    pod_spec = copy.deepcopy(template.get("spec") or {})
    for key, value in (spec_defaults or {}).items():
        pod_spec.setdefault(key, value)
    return {
        "apiVersion": CORE_API_VERSION,
        "kind": POD_KIND,
        "metadata": metadata,
        "spec": pod_spec,
        "status": {"phase": "Pending"},
    }


def _owner(api_version: str, kind: str, name: str, uid: str) -> KubeObject:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _replicas(spec: Mapping[str, Any]) -> int:
    replicas = spec.get("replicas")
    return 1 if replicas is None else max(int(replicas), 0)


def _controls(w: Workload, obj: Mapping[str, Any]) -> bool:
    """Is ``w`` the controller of ``obj`` (owner reference by UID, else by kind and name)?"""
    metadata = obj.get("metadata") or {}
    if (metadata.get("namespace") or "default") != w.namespace:
        return False
    for ref in metadata.get("ownerReferences") or ():
        if ref.get("controller") is not True or ref.get("kind") != w.kind:
            continue
        if ref.get("uid") and w.obj["metadata"].get("uid"):
            return bool(ref["uid"] == w.obj["metadata"]["uid"])
        return bool(ref.get("name") == w.name)
    return False


def _active(pods: list[KubeObject]) -> list[KubeObject]:
    return [p for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]


def _counted(controlled: list[KubeObject]) -> str:
    n = len(_active(controlled))
    return f" ({n} of its pods are in the input already)" if n else ""


def _pod_namespace(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("namespace") or "default")


def _template_hash(template: Mapping[str, Any], collision_count: Any) -> str:
    """``controller.ComputeHash``'s form: FNV-32a, its decimal digits mapped to
    ``rand.SafeEncodeString``'s alphabet (of the template's JSON, not Go's struct dump)."""
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        data += int(collision_count).to_bytes(4, "little")
    value = _FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return safe_encode(str(value))
