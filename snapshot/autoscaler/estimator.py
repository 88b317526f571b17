"""The binpacking estimator: how many new nodes of a group the pending pods need.

Upstream: ``cluster-autoscaler/estimator/binpacking_estimator.go`` (``Estimate``), with the
default ``DecreasingPodOrderer`` (``decreasing_pod_orderer.go``) and the equivalence groups of
``core/scaleup/equivalence``. First-fit decreasing:

- pods are grouped into equivalence groups (same controller, same labels and spec); a pod
  without a controller is a group of its own;
- groups are sorted by the score of their first pod, decreasing: its cpu request (the pod's,
  init containers and overhead counted, as ``PodRequests``) over the template's allocatable
  cpu plus its memory request over the template's allocatable memory (a stable
  sort here; upstream's ``sort.Slice`` leaves equal scores in no set order);
- for each group, its pods try every new node added so far (in the order added), until one
  fits none; the rest try only the newest node, and when that fails a new node is added
  (while the limit allows) and the pod tried on it. A pod that fits no fresh node ends its
  group; so does the newest node staying empty (a pod that fits no empty node fits no new one).

Only nodes that received a pod count. The caller forks before and reverts (or commits) after:
the estimator writes nodes and pods into the snapshot it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import orjson
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.k8s.objects import KubeObject, name_of
from drasnap.snapshot.scheduling import compute_pod_requests, node_allocatable_requests

__all__ = [
    "Estimate",
    "equivalence_groups",
    "estimate",
    "order_groups",
    "pod_signature",
]

NewNode = Callable[[int], tuple[KubeObject, list[KubeObject]]]
"""Makes the i-th new node of the group (counted from 0): the node and its local slices."""


@dataclass
class Estimate:
    nodes: list[str] = field(default_factory=list)  # new nodes that got a pod, in order added
    added: list[str] = field(default_factory=list)  # every new node added, empty ones too
    pods: list[str] = field(default_factory=list)  # keys of the pods placed, in order
    limited: bool = False  # stopped because the limit allowed no further node


def _controller_uid(pod: KubeObject) -> str | None:
    for owner in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if owner.get("controller") is True:
            return str(owner.get("uid"))
    return None


def pod_signature(pod: KubeObject) -> bytes:
    """What decides where a pod fits, the same for pods alike: its namespace, labels and spec
    (``nodeName`` aside), as ``core/scaleup/equivalence`` compares them."""
    meta = pod.get("metadata") or {}
    spec = dict(pod.get("spec") or {})
    spec.pop("nodeName", None)
    return orjson.dumps(
        [meta.get("namespace"), meta.get("labels") or {}, spec], option=orjson.OPT_SORT_KEYS
    )


def equivalence_groups(pods: Sequence[KubeObject]) -> list[list[KubeObject]]:
    """Pods of one controller with the same :func:`pod_signature` form a group; groups keep
    the order of their first pod."""
    groups: dict[object, list[KubeObject]] = {}
    for i, pod in enumerate(pods):
        uid = _controller_uid(pod)
        key = ("single", i) if uid is None else (uid, pod_signature(pod))
        groups.setdefault(key, []).append(pod)
    return list(groups.values())


def order_groups(groups: list[list[KubeObject]], template: KubeObject) -> list[list[KubeObject]]:
    """The groups by decreasing score on ``template`` (module docstring)."""
    alloc = node_allocatable_requests(template)

    def score(group: list[KubeObject]) -> float:
        requested = compute_pod_requests(group[0])
        value = requested.cpu / alloc.cpu if alloc.cpu > 0 else 0.0
        return value + (requested.memory / alloc.memory if alloc.memory > 0 else 0.0)

    return sorted(groups, key=score, reverse=True)


def estimate(
    cs: ClusterSnapshot, groups: Sequence[Sequence[KubeObject]], new_node: NewNode, limit: int
) -> Estimate:
    """Bin-pack ``groups`` (already ordered) onto new nodes, adding at most ``limit``."""
    result = Estimate()
    with_pods: set[str] = set()
    last: str | None = None

    def placed(pod: KubeObject, node: str) -> None:
        with_pods.add(node)
        if node not in result.nodes:
            result.nodes.append(node)
        result.pods.append(key_of(pod))

    for group in groups:
        index = 0
        if result.added:
            while index < len(group):
                where = cs.schedule_pod_anywhere(group[index], result.added)
                if where is None:
                    break
                placed(group[index], where)
                index += 1
        for pod in group[index:]:
            if last is not None and cs.schedule_pod_anywhere(pod, [last]) is not None:
                placed(pod, last)
                continue
            if last is not None and last not in with_pods:
                break
            if len(result.added) >= limit:
                result.limited = True
                break
            node, slices = new_node(len(result.added))
            cs.add_node(node, slices=slices)
            last = name_of(node)
            result.added.append(last)
            if cs.schedule_pod_anywhere(pod, [last]) is None:
                break
            placed(pod, last)
    # Nodes in the order they were added, as upstream counts newNodesWithPods.
    result.nodes = [n for n in result.added if n in with_pods]
    return result
