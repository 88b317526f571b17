"""TaintToleration: a node's NoSchedule and NoExecute taints must all be tolerated.

``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go``: the first
untolerated taint, in the node's order, is named as ``{key: value}``.
"""

from __future__ import annotations

from typing import Final

from drasnap.snapshot.scheduling.framework import Proceed
from drasnap.snapshot.scheduling.matchers import Toleration, first_untolerated, parse_tolerations
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts

__all__ = ["TaintToleration", "untolerated_taint_reason"]


def untolerated_taint_reason(key: str, value: str) -> str:
    """``node(s) had untolerated taint {key: value}``."""
    return f"node(s) had untolerated taint {{{key}: {value}}}"


def _tolerations(pod: PodFacts) -> tuple[Toleration, ...]:
    return parse_tolerations(pod.spec)


def _proceed(pod: PodFacts) -> Proceed:
    return Proceed(pod.derived(_tolerations))


class TaintToleration:
    """Refuses nodes with a NoSchedule/NoExecute taint the pod does not tolerate."""

    name: Final = "TaintToleration"

    def relevant_for_node(self, node: NodeFacts) -> bool:
        """Only a node with a NoSchedule/NoExecute taint refuses anyone."""
        return bool(node.taints)

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Proceed:
        return pod.derived(_proceed)

    def filter(
        self, state: tuple[Toleration, ...], pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        if not node.taints:
            return None
        taint = first_untolerated(node.taints, state)
        return None if taint is None else (untolerated_taint_reason(taint.key, taint.value),)
