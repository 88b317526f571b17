"""Which pods are on which node, and what they request there: a follower of the ``Pod`` kind.

Derived from the store (:mod:`store.followers`): built from the pods it holds when a
:class:`snapshot.cluster.ClusterSnapshot` is created, then told of every change of a pod's
effective value, so it is right at every depth whoever forked, committed or reverted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from snapshot.objects import KubeObject
from snapshot.pods import Resources, node_name_of, pod_requests
from store import ABSENT

__all__ = ["NOTHING", "PodIndex", "remembered"]

NOTHING = Resources()

_Derived = TypeVar("_Derived")
Memo = dict[int, tuple[Any, Any]]


def remembered(cache: Memo, obj: Any, derive: Callable[[Any], _Derived]) -> _Derived:
    """``derive(obj)``, remembered per object: store values are never mutated (the store's
    contract), so the object identifies what is derived from it. Each cache is bounded."""
    hit = cache.get(id(obj))
    if hit is not None and hit[0] is obj:
        value: _Derived = hit[1]
        return value
    if len(cache) > 100_000:
        cache.clear()
    value = derive(obj)
    cache[id(obj)] = (obj, value)
    return value


_REQUESTS: Memo = {}


class PodIndex:
    """Pods per node (``by_node``), the node and requests of each pod (``node_of``), and the
    requests summed per node (``used``)."""

    __slots__ = ("by_node", "node_of", "used")

    def __init__(self) -> None:
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
        node = None if value is ABSENT else node_name_of(value)
        old = self.node_of.pop(key, None)
        if old is not None:
            self.by_node[old[0]].pop(key, None)
            self.used[old[0]] = self.used[old[0]] - old[1]
        if node is not None:
            requests = remembered(_REQUESTS, value, pod_requests)
            self.node_of[key] = (node, requests)
            self.by_node.setdefault(node, {})[key] = None
            self.used[node] = self.used.get(node, NOTHING) + requests
