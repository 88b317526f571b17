"""NodeName: a pod with ``spec.nodeName`` fits only the node of that name.

``pkg/scheduler/framework/plugins/nodename/node_name.go`` (1.36: Filter only; the PreFilter
that narrows the node list came later). A pod without ``spec.nodeName`` passes everywhere, so
its Filter is skipped.
"""

from __future__ import annotations

from typing import Any, Final

from drasnap.snapshot.scheduling.framework import SKIP, Proceed, Skip
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts

__all__ = ["ERR_REASON_NODE_NAME", "NodeName"]

ERR_REASON_NODE_NAME: Final = "node(s) didn't match the requested node name"


class NodeName:
    """Refuses every node but ``spec.nodeName``."""

    name: Final = "NodeName"

    def relevant_for_pod(self, pod: PodFacts) -> bool:
        """Only a pod that names its node is refused anywhere."""
        return bool(pod.spec.get("nodeName"))

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Skip | Proceed:
        wanted = pod.spec.get("nodeName")
        return Proceed(wanted) if wanted else SKIP

    def filter(
        self, state: Any, pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        return None if node.name == state else (ERR_REASON_NODE_NAME,)
