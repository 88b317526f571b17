"""NodeAffinity: ``spec.nodeSelector`` and required node affinity must match the node.

``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go``. PreFilter skips a pod with
neither; when every required term names nodes through ``matchFields`` ``metadata.name In``,
only those nodes are tried (names ANDed within a term, ORed across terms), and terms whose
names exclude each other refuse the pod (``pod affinity terms conflict``).
"""

from __future__ import annotations

from typing import Final

from drasnap.snapshot.scheduling.framework import SKIP, Proceed, Reject, Skip
from drasnap.snapshot.scheduling.matchers import RequiredNodeAffinity
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts

__all__ = ["ERR_REASON_CONFLICT", "ERR_REASON_POD", "NodeAffinity"]

ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"


def _named_nodes(affinity: RequiredNodeAffinity) -> frozenset[str] | None:
    """The nodes the required terms name, or None when some term allows any node."""
    if not affinity.terms:
        return None
    names: set[str] = set()
    for term in affinity.terms:
        term_names: set[str] | None = None
        for req in term.get("matchFields") or ():
            if req.get("key") == "metadata.name" and req.get("operator") == "In":
                values = {str(v) for v in req.get("values") or ()}
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


class NodeAffinity:
    """Refuses nodes that the pod's node selector or required node affinity exclude."""

    name: Final = "NodeAffinity"

    def relevant_for_pod(self, pod: PodFacts) -> bool:
        """A pod with a node selector or required node affinity (PreFilter skips the rest)."""
        spec = pod.spec
        if not spec.get("nodeSelector") and not spec.get("affinity"):
            return False  # most pods: answered without parsing
        return not pod.derived(required_node_affinity).empty

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Skip | Reject | Proceed:
        affinity = pod.derived(required_node_affinity)
        if affinity.empty:
            return SKIP
        names = _named_nodes(affinity)
        if names is not None and not names:
            return Reject((ERR_REASON_CONFLICT,))
        return Proceed(affinity, names)

    def filter(
        self, state: RequiredNodeAffinity, pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        return None if state.matches(node.name, node.labels) else (ERR_REASON_POD,)


def required_node_affinity(pod: PodFacts) -> RequiredNodeAffinity:
    """The pod's node selector and required node affinity, parsed once per pod."""
    return RequiredNodeAffinity.of(pod.spec)
