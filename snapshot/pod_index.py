"""Which pods are on which node, and what they request there: a follower of the ``Pod`` kind.

Derived from the store (:mod:`store.followers`): built from the pods it holds when a
:class:`snapshot.cluster.ClusterSnapshot` is created, then told of every change of a pod's
effective value, so it is right at every depth whoever forked, committed or reverted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from snapshot.objects import KubeObject
from snapshot.pods import Resources, node_name_of, pod_requests

__all__ = ["NOTHING", "PodIndex"]

NOTHING = Resources()


class PodIndex:
    """Pods per node (``by_node``), the node and requests of each pod (``node_of``), and the
    requests summed per node (``used``)."""

    __slots__ = ("by_node", "listener", "node_of", "used")

    def __init__(self) -> None:
        # Told the name of each node whose pods changed (the placement index).
        self.listener: Callable[[str], None] | None = None
        self.by_node: dict[str, dict[str, None]] = {}
        self.node_of: dict[str, tuple[str, Resources]] = {}
        self.used: dict[str, Resources] = {}

    def rebuild(self, pods: Mapping[str, KubeObject]) -> None:
        """Start over from every pod (key -> pod). O(pods)."""
        self.by_node.clear()
        self.node_of.clear()
        self.used.clear()
        for key in sorted(pods):
            self.changed("Pod", key, pods[key])

    def changed(self, kind: str, key: str, value: Any) -> None:
        """The follower's call: pod ``key`` is now ``value`` (ABSENT: gone)."""
        # Anything but a pod bound to a node (written to the store directly) is on no node.
        node = node_name_of(value) if isinstance(value, dict) else None
        old = self.node_of.pop(key, None)
        if old is not None:
            self.by_node[old[0]].pop(key, None)
            self.used[old[0]] = self.used[old[0]] - old[1]
        if node is not None:
            requests = pod_requests(value)
            self.node_of[key] = (node, requests)
            self.by_node.setdefault(node, {})[key] = None
            self.used[node] = self.used.get(node, NOTHING) + requests
        listener = self.listener
        if listener is not None:
            if old is not None:
                listener(old[0])
            if node is not None and (old is None or old[0] != node):
                listener(node)
