"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) take only pods that tolerate
``node.kubernetes.io/unschedulable:NoSchedule``.

``pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go``.
"""

from __future__ import annotations

from typing import Any, Final

from drasnap.snapshot.scheduling.framework import Proceed
from drasnap.snapshot.scheduling.matchers import Taint, parse_tolerations
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT: Final = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


def _tolerates_unschedulable(pod: PodFacts) -> bool:
    return any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in parse_tolerations(pod.spec))


_TOLERATED: Final = Proceed(True)
_NOT_TOLERATED: Final = Proceed(False)


class NodeUnschedulable:
    """Refuses cordoned nodes to pods without the unschedulable toleration."""

    name: Final = "NodeUnschedulable"

    def relevant_for_node(self, node: NodeFacts) -> bool:
        """Only a cordoned node refuses anyone (`scheduling.relevance`)."""
        return node.unschedulable

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Proceed:
        return _TOLERATED if pod.derived(_tolerates_unschedulable) else _NOT_TOLERATED

    def filter(
        self, state: Any, pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        if node.unschedulable and not state:
            return (ERR_REASON_UNSCHEDULABLE,)
        return None
