"""Which pods are on which node, and what they request there: a follower of the ``Pod`` kind.

Derived from the store (:mod:`store.followers`): built from the pods it holds when a
:class:`snapshot.cluster.ClusterSnapshot` is created, then told of every change of a pod's
effective value, so it is right at every depth whoever forked, committed or reverted.

It keeps what the scheduler's filters read per node (``snapshot.scheduling.ClusterView``):
the requests summed over the node's pods as ``NodeInfo.Requested`` counts them (each pod's
``PodFacts.placed_requests``, status included), and the placed pods with required pod
anti-affinity, which InterPodAffinity reads for every pod it places (usually none). The
scoring plugins' sums (``NodeInfo.NonZeroRequested``) are cached per node in ``non_zero`` by
the snapshot, which reads them only when it scores: a change of a node's pods drops its
entry here, so placing pods costs no more than before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from drasnap.snapshot.controllers.claim_templates import node_name_of
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.scheduling import Requests, pod_facts

__all__ = ["NOTHING", "PodIndex"]

NOTHING = Requests()


class PodIndex:
    """Pods per node (``by_node``), the node and requests of each pod (``node_of``), the
    requests summed per node (``requested``) and the placed pods with required anti-affinity
    (``anti_affinity``: key -> node); ``non_zero``: the snapshot's cache of the non-zero
    requests per node, dropped here when the node's pods change."""

    __slots__ = ("anti_affinity", "by_node", "listener", "node_of", "non_zero", "requested")

    def __init__(self) -> None:
        # Told the name of each node whose pods changed (the placement index).
        self.listener: Callable[[str], None] | None = None
        self.by_node: dict[str, dict[str, None]] = {}
        self.node_of: dict[str, tuple[str, Requests]] = {}
        self.requested: dict[str, Requests] = {}
        self.anti_affinity: dict[str, str] = {}
        self.non_zero: dict[str, Requests] = {}

    def rebuild(self, pods: Mapping[str, KubeObject]) -> None:
        """Start over from every pod (key -> pod). O(pods)."""
        self.by_node.clear()
        self.node_of.clear()
        self.requested.clear()
        self.anti_affinity.clear()
        self.non_zero.clear()
        for key in sorted(pods):
            self.changed("Pod", key, pods[key])

    def changed(self, kind: str, key: str, value: Any) -> None:
        """The follower's call: pod ``key`` is now ``value`` (ABSENT: gone)."""
        # Anything but a pod bound to a node (written to the store directly) is on no node.
        node = node_name_of(value) if isinstance(value, dict) else None
        old = self.node_of.pop(key, None)
        if old is not None:
            self.by_node[old[0]].pop(key, None)
            self.requested[old[0]] = self.requested[old[0]] - old[1]
            self.anti_affinity.pop(key, None)
            self.non_zero.pop(old[0], None)
        if node is not None:
            facts = pod_facts(value)
            requests = facts.placed_requests
            self.node_of[key] = (node, requests)
            self.by_node.setdefault(node, {})[key] = None
            self.requested[node] = self.requested.get(node, NOTHING) + requests
            self.non_zero.pop(node, None)
            if facts.has_required_anti_affinity:
                self.anti_affinity[key] = node
        listener = self.listener
        if listener is not None:
            if old is not None:
                listener(old[0])
            if node is not None and (old is None or old[0] != node):
                listener(node)
