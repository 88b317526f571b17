"""What the cheap pre-checks of ``ClusterSnapshot.schedule_pod_anywhere`` read per node: a
follower of the ``Node`` and ``ResourceSlice`` kinds.

``schedule_pod_anywhere`` runs over every node of the cluster, and most nodes of a busy cluster
are refused for CPU, memory, pod count or want of a free device before any filter runs. This
index keeps, per node name, its allocatable (``NodeFacts.allocatable``) and the devices of its
local slices (whether a pool spreads over several slices, and each slice's (driver, pool) and
device names), so that each refusal costs two dictionary reads instead of two store reads and
two parses. Like the pod index it is derived from the store (:mod:`store.followers`), so it is
right at every depth whoever forked, committed or reverted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from drasnap.snapshot.cluster.placement import PoolDevices, slice_list_devices
from drasnap.snapshot.k8s.kinds import NODE_KIND, SLICE_KIND
from drasnap.snapshot.scheduling import NodeFacts, Requests, node_facts

__all__ = ["NodeIndex"]

SliceDevices = tuple[bool, tuple[PoolDevices, ...]]


class NodeIndex:
    """Per node name: its allocatable (``allocatable``), its local slices' devices
    (``slices``; the global slice list is under its own key), and the nodes where a filter
    may refuse a pod by what the node is (``restricted``: those ``restricts`` names, the
    filters' own declarations, `scheduling.Relevance.restricted`: a taint, a cordon)."""

    __slots__ = ("allocatable", "restricted", "restricts", "slices")

    def __init__(self, restricts: Callable[[NodeFacts], bool]) -> None:
        self.restricts = restricts
        self.allocatable: dict[str, Requests] = {}
        self.slices: dict[str, SliceDevices] = {}
        self.restricted: set[str] = set()

    def rebuild(self, nodes: Mapping[str, Any], slices: Mapping[str, Any]) -> None:
        """Start over from every node and slice list (key -> value)."""
        self.allocatable.clear()
        self.slices.clear()
        self.restricted.clear()
        for key, value in nodes.items():
            self.changed(NODE_KIND, key, value)
        for key, value in slices.items():
            self.changed(SLICE_KIND, key, value)

    def changed(self, kind: str, key: str, value: Any) -> None:
        """The follower's call: ``kind/key`` is now ``value`` (ABSENT: gone)."""
        if kind == NODE_KIND:
            self.restricted.discard(key)
            if isinstance(value, dict):
                facts = node_facts(value)
                self.allocatable[key] = facts.allocatable
                if self.restricts(facts):
                    self.restricted.add(key)
            else:
                self.allocatable.pop(key, None)
        elif kind == SLICE_KIND:
            if isinstance(value, list):
                self.slices[key] = slice_list_devices(value)
            else:
                self.slices.pop(key, None)
