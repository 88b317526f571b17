"""Warnings for what a pod asks that the simulated filters do not check.

`pod_warnings` names the pod and the field, so that a run records every constraint it
ignored instead of giving a silently different answer. Warned about:

- ``spec.schedulingGates``: kube-scheduler does not try a gated pod (SchedulingGates);
  the simulation places it as if the gates were removed.
- ``spec.volumes[i]`` of any kind but emptyDir, configMap, secret, downwardAPI, projected,
  hostPath and image: VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone are
  not simulated (PersistentVolumeClaims, ephemeral and CSI volumes, in-tree cloud disks).
- ``spec.runtimeClassName`` without ``spec.overhead``: the RuntimeClass admission plugin would
  have copied its overhead and scheduling constraints into the pod; they are not looked up.
- ``spec.schedulerName`` other than ``default-scheduler``: filtered as the default scheduler.
- ``spec.tolerations[i].operator`` Lt/Gt: TaintTolerationComparisonOperators is off in 1.36;
  such a toleration tolerates nothing, as in the scheduler.
- ``restartPolicyRules`` on a container, ``hostUsers: false`` with ``hostNetwork``: features a
  node must declare (NodeDeclaredFeatures, beta in 1.36), not checked.
- a resource name the scheduler does not check (neither cpu, memory, ephemeral-storage nor a
  hugepages, extended, ``kubernetes.io/`` or attachable-volumes name): ignored, as upstream.
- a malformed required node affinity term: it matches no node, as in the scheduler.
- a ``namespaceSelector`` on a label other than ``kubernetes.io/metadata.name`` when the
  cluster's Namespace objects (their labels) are not known.

Not warned about, because they are not filters: preferred (anti-)affinity and node affinity,
``ScheduleAnyway`` spread constraints (scores); priority and preemption.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from drasnap.snapshot.k8s.kinds import namespace_or_default, namespaced_key
from drasnap.snapshot.k8s.objects import raw_name
from drasnap.snapshot.scheduling.matchers import term_error
from drasnap.snapshot.scheduling.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    is_scalar_resource_name,
)
from drasnap.snapshot.scheduling.view import NAMESPACE_NAME_LABEL

__all__ = ["pod_warnings", "spec_warnings"]

_LOCAL_VOLUMES: Final = frozenset(
    {"emptyDir", "configMap", "secret", "downwardAPI", "projected", "hostPath", "image"}
)
_NOT_SOURCES: Final = frozenset({"name"})


def _resource_names(prefix: str, resources: Mapping[str, Any] | None) -> Iterable[tuple[str, str]]:
    for key in ("requests", "limits"):
        for name in (resources or {}).get(key) or {}:
            yield f"{prefix}.{key}.{name}", str(name)


def _unchecked(name: str) -> bool:
    return name not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) and not is_scalar_resource_name(name)


def pod_warnings(pod: Mapping[str, Any], *, namespace_labels_known: bool = False) -> list[str]:
    """One sentence per scheduling constraint of ``pod`` that the filters do not check.

    >>> pod_warnings({"metadata": {"name": "p"}, "spec": {"schedulingGates": [{"name": "g"}]}})
    ... # doctest: +NORMALIZE_WHITESPACE
    ['pod default/p: spec.schedulingGates: kube-scheduler does not try a pod with scheduling
      gates (SchedulingGates); it is simulated as if they were removed']
    """
    spec = pod.get("spec") or {}
    return warning_lines(pod, spec_warnings(spec, namespace_labels_known=namespace_labels_known))


def warning_lines(pod: Mapping[str, Any], found: Iterable[tuple[str, str]]) -> list[str]:
    """:func:`spec_warnings`' findings as :func:`pod_warnings` says them, naming ``pod``."""
    key = namespaced_key(namespace_or_default(pod), raw_name(pod))
    return [f"pod {key}: {field}: {what}" for field, what in found]


def spec_warnings(
    spec: Mapping[str, Any], *, namespace_labels_known: bool = False
) -> list[tuple[str, str]]:
    """What :func:`pod_warnings` finds, as (field, sentence) pairs: it depends on the pod's
    spec alone, so pods of one spec can share it."""
    out: list[tuple[str, str]] = []

    def warn(field: str, what: str) -> None:
        out.append((field, what))

    if spec.get("schedulingGates"):
        warn(
            "spec.schedulingGates",
            "kube-scheduler does not try a pod with scheduling gates (SchedulingGates); "
            "it is simulated as if they were removed",
        )
    for i, volume in enumerate(spec.get("volumes") or ()):
        for source in sorted(set(volume) - _NOT_SOURCES - _LOCAL_VOLUMES):
            warn(
                f"spec.volumes[{i}].{source}",
                "volume scheduling (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, "
                "VolumeZone) is not simulated; the pod may fit nodes its volumes exclude",
            )
    if spec.get("runtimeClassName") and not spec.get("overhead"):
        warn(
            "spec.runtimeClassName",
            "the RuntimeClass's overhead and scheduling constraints are not looked up "
            "(admission copies them into spec.overhead, nodeSelector and tolerations)",
        )
    scheduler = spec.get("schedulerName")
    if scheduler and scheduler != "default-scheduler":
        warn(
            "spec.schedulerName", f"{scheduler!r} is simulated with the default scheduler's filters"
        )
    for i, toleration in enumerate(spec.get("tolerations") or ()):
        if toleration.get("operator") in ("Lt", "Gt"):
            warn(
                f"spec.tolerations[{i}].operator",
                f"{toleration['operator']} needs TaintTolerationComparisonOperators (off in "
                "1.36); the toleration tolerates no taint",
            )
    groups = (
        ("initContainers", spec.get("initContainers")),
        ("containers", spec.get("containers")),
    )
    for group, containers in groups:
        for i, container in enumerate(containers or ()):
            if container.get("restartPolicyRules"):
                warn(
                    f"spec.{group}[{i}].restartPolicyRules",
                    "node declared features (NodeDeclaredFeatures) are not checked",
                )
            for field, name in _resource_names(
                f"spec.{group}[{i}].resources", container.get("resources")
            ):
                if _unchecked(name):
                    warn(field, "not a resource the scheduler checks; ignored")
    if spec.get("hostNetwork") and spec.get("hostUsers") is False:
        warn("spec.hostUsers", "node declared features (NodeDeclaredFeatures) are not checked")
    for field, name in _resource_names("spec.resources", spec.get("resources")):
        if _unchecked(name):
            warn(field, "not a resource the scheduler checks; ignored")
    for name in spec.get("overhead") or {}:
        if _unchecked(str(name)):
            warn(f"spec.overhead.{name}", "not a resource the scheduler checks; ignored")
    affinity = spec.get("affinity") or {}
    required = (affinity.get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    for i, term in enumerate((required or {}).get("nodeSelectorTerms") or ()):
        error = term_error(term)
        if error:
            warn(
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                f".nodeSelectorTerms[{i}]",
                f"{error}; the term matches no node",
            )
    if not namespace_labels_known:
        for kind in ("podAffinity", "podAntiAffinity"):
            terms = (affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
            for i, term in enumerate(terms or ()):
                selector = term.get("namespaceSelector") or {}
                keys = set(selector.get("matchLabels") or {})
                keys |= {e.get("key") for e in selector.get("matchExpressions") or ()}
                if keys - {NAMESPACE_NAME_LABEL}:
                    warn(
                        f"spec.affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution"
                        f"[{i}].namespaceSelector",
                        "namespace labels other than kubernetes.io/metadata.name are not "
                        "known; only that label is matched",
                    )
    return out
