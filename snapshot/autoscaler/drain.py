"""Which pods of a node must move for it to be removed, and which pod blocks its removal.

Upstream: ``cluster-autoscaler/simulator/drainability/rules`` (the default rule list, in its
order, with the default flags ``--skip-nodes-with-system-pods`` and
``--skip-nodes-with-local-storage`` on) and ``utils/drain``. Per pod, the first rule that
decides wins:

- mirror pods (annotation ``kubernetes.io/config.mirror``) are skipped: they go with the node;
- DaemonSet pods (a DaemonSet controller, or annotation
  ``cluster-autoscaler.kubernetes.io/daemonset-pod: "true"``) go with the node too;
- ``cluster-autoscaler.kubernetes.io/safe-to-evict: "true"`` and terminal pods (failed, or
  succeeded and never restarted) may move;
- blocking: a pod without a controller (``<ns>/<name> is not replicated``); a ``kube-system``
  pod (upstream unblocks it when a PodDisruptionBudget covers it; the simulation reads no
  PodDisruptionBudgets, so it always blocks); ``safe-to-evict: "false"``; local storage (a
  ``hostPath`` or a non-memory ``emptyDir`` volume not listed in
  ``cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes``);
- any other pod must move.

Not modelled: long-terminating pods (upstream needs the current time; such pods count as
running), PodDisruptionBudgets, whether a pod's controller exists.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from drasnap.snapshot.k8s.kinds import key_of, namespace_or_default
from drasnap.snapshot.k8s.objects import KubeObject, name_of

__all__ = ["Drain", "drain"]

MIRROR = "kubernetes.io/config.mirror"
DAEMONSET_POD = "cluster-autoscaler.kubernetes.io/daemonset-pod"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"


@dataclass
class Drain:
    """``move``: pods to place elsewhere; ``stay``: pods that go with the node; ``blocked``:
    the first blocking pod's key and upstream's message, when one blocks."""

    move: list[KubeObject] = field(default_factory=list)
    stay: list[KubeObject] = field(default_factory=list)
    blocked: tuple[str, str] | None = None


def _annotations(pod: KubeObject) -> dict[str, str]:
    return (pod.get("metadata") or {}).get("annotations") or {}


def _controller(pod: KubeObject) -> dict[str, str] | None:
    for owner in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if owner.get("controller") is True:
            controller: dict[str, str] = owner
            return controller
    return None


def is_daemonset_pod(pod: KubeObject) -> bool:
    controller = _controller(pod)
    if controller is not None and controller.get("kind") == "DaemonSet":
        return True
    return _annotations(pod).get(DAEMONSET_POD) == "true"


def _terminal(pod: KubeObject) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    restart = (pod.get("spec") or {}).get("restartPolicy")
    if restart == "Never" and phase in ("Succeeded", "Failed"):
        return True
    if restart == "OnFailure" and phase == "Succeeded":
        return True
    return phase == "Failed"


def _local_storage(pod: KubeObject) -> bool:
    safe = set(filter(None, _annotations(pod).get(SAFE_LOCAL_VOLUMES, "").split(",")))
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        local = "hostPath" in volume or (
            "emptyDir" in volume and (volume.get("emptyDir") or {}).get("medium") != "Memory"
        )
        if local and volume.get("name") not in safe:
            return True
    return False


#: The controllers CA's replicated rule knows (``simulator/drainability/rules/replicated``).
KNOWN_CONTROLLERS = frozenset(
    {"ReplicationController", "DaemonSet", "Job", "ReplicaSet", "StatefulSet"}
)


def _blocking(
    pod: KubeObject, system_pods: bool, local_storage: bool, custom_controllers: bool
) -> str | None:
    """Upstream's blocking rules, in order: the message of the first that blocks."""
    namespace, name = namespace_or_default(pod), name_of(pod)
    controller = _controller(pod)
    if controller is None:
        return f"{namespace}/{name} is not replicated"
    if custom_controllers and controller.get("kind") not in KNOWN_CONTROLLERS:
        return f"{namespace}/{name} is not replicated (controller kind {controller.get('kind')})"
    if system_pods and namespace == "kube-system":
        return f"non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {name}"
    if _annotations(pod).get(SAFE_TO_EVICT) == "false":
        return f"pod annotated as not safe to evict present: {name}"
    if local_storage and _local_storage(pod):
        return f"pod with local storage present: {name}"
    return None


def drain(
    pods: Iterable[KubeObject],
    *,
    skip_nodes_with_system_pods: bool = True,
    skip_nodes_with_local_storage: bool = True,
    skip_nodes_with_custom_controller_pods: bool = True,
) -> Drain:
    """Sort the pods of a node (module docstring); stops at the first blocking pod. The
    flags are CA's (``--skip-nodes-with-system-pods``, ``--skip-nodes-with-local-storage``,
    ``--skip-nodes-with-custom-controller-pods``): false, such pods move instead of blocking.
    A controller of a kind CA knows is taken to exist (CA looks it up; drasnap reads no
    controllers)."""
    result = Drain()
    for pod in pods:
        annotations = _annotations(pod)
        if MIRROR in annotations or is_daemonset_pod(pod):
            result.stay.append(pod)
            continue
        if annotations.get(SAFE_TO_EVICT) == "true" or _terminal(pod):
            result.move.append(pod)
            continue
        message = _blocking(
            pod,
            skip_nodes_with_system_pods,
            skip_nodes_with_local_storage,
            skip_nodes_with_custom_controller_pods,
        )
        if message is not None:
            result.blocked = (key_of(pod), message)
            return result
        result.move.append(pod)
    return result
