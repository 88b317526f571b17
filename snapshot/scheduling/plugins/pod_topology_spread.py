"""PodTopologySpread: ``whenUnsatisfiable: DoNotSchedule`` constraints, the skew they allow.

``pkg/scheduler/framework/plugins/podtopologyspread/filtering.go`` and ``common.go``.
PreFilter counts, per constraint and topology value, the pods in the pod's namespace that
match the constraint's selector (terminating pods excluded; a selector with no requirement,
``{}``, counts none: `count_matching`) on the nodes that carry every
constraint's topology key and that the constraint's node inclusion policies admit
(``nodeAffinityPolicy`` defaults to Honor: the pod's node selector and required node affinity
must match; ``nodeTaintsPolicy`` defaults to Ignore; Honor: the node's NoSchedule/NoExecute
taints must be tolerated). ``matchLabelKeys`` adds ``key in (the pod's value)`` to the
selector for each key the pod carries (MatchLabelKeysInPodTopologySpread, on in 1.36).

Filter, for each constraint: a node without the topology key is refused (``... (missing
required label)``); otherwise the pods matched in the node's domain, plus one if the pod
matches its own selector, minus the smallest count over the domains (taken as 0 while fewer
than ``minDomains`` domains exist) must not exceed ``maxSkew``. ``ScheduleAnyway`` constraints
only score, and are ignored here as a filter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from drasnap.snapshot.scheduling.framework import SKIP, Proceed, Skip
from drasnap.snapshot.scheduling.matchers import (
    LabelSelector,
    RequiredNodeAffinity,
    Toleration,
    first_untolerated,
    parse_tolerations,
)
from drasnap.snapshot.scheduling.plugins.node_affinity import required_node_affinity
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts, node_facts, pod_facts

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "PodTopologySpread",
    "SpreadConstraint",
    "count_matching",
    "soft_spread_constraints",
    "spread_constraints",
]

ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = (
    ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
)
_MAX_INT32: Final = 2**31 - 1


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """A parsed DoNotSchedule constraint."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int
    honor_affinity: bool
    honor_taints: bool

    def includes(
        self, node: NodeFacts, affinity: RequiredNodeAffinity, tolerations: Sequence[Toleration]
    ) -> bool:
        """Whether the node's pods count (``matchNodeInclusionPolicies``): ``affinity`` and
        ``tolerations`` are the incoming pod's."""
        if self.honor_affinity and not affinity.matches(node.name, node.labels):
            return False
        return not (self.honor_taints and first_untolerated(node.taints, tolerations) is not None)


def count_matching(pods: Iterable[PodFacts], selector: LabelSelector, namespace: str) -> int:
    """``countPodsMatchSelector``: the pods of ``namespace``, not terminating, that
    ``selector`` matches; a selector with no requirement (``labelSelector: {}``) counts none,
    as upstream's ``selector.Empty()`` check does (the incoming pod still matches it itself).
    """
    if not selector.requirements:
        return 0  # EVERYTHING counts none; NOTHING matches none anyway
    return sum(
        1
        for other in pods
        if not other.terminating and other.namespace == namespace and selector.matches(other.labels)
    )


def _constraints(pod: PodFacts, when: str) -> tuple[SpreadConstraint, ...]:
    out: list[SpreadConstraint] = []
    for i, c in enumerate(pod.spec.get("topologySpreadConstraints") or ()):
        if c.get("whenUnsatisfiable") != when:
            continue
        where = f"pod {pod.key}: spec.topologySpreadConstraints[{i}].labelSelector."
        selector = LabelSelector.parse(c.get("labelSelector"), where=where)
        keyed = {k: pod.labels[k] for k in c.get("matchLabelKeys") or () if k in pod.labels}
        out.append(
            SpreadConstraint(
                max_skew=int(c.get("maxSkew", 1)),
                topology_key=str(c.get("topologyKey", "")),
                selector=selector.with_labels(keyed),
                min_domains=int(c.get("minDomains") or 1),
                honor_affinity=c.get("nodeAffinityPolicy", "Honor") == "Honor",
                honor_taints=c.get("nodeTaintsPolicy", "Ignore") == "Honor",
            )
        )
    return tuple(out)


def spread_constraints(pod: PodFacts) -> tuple[SpreadConstraint, ...]:
    """The pod's DoNotSchedule constraints (``filterTopologySpreadConstraints``).

    Raises:
        ObjectValidationError: a label selector is malformed.
    """
    return _constraints(pod, "DoNotSchedule")


def soft_spread_constraints(pod: PodFacts) -> tuple[SpreadConstraint, ...]:
    """The pod's ScheduleAnyway constraints, which only scoring reads.

    Raises:
        ObjectValidationError: a label selector is malformed.
    """
    return _constraints(pod, "ScheduleAnyway")


@dataclass(frozen=True, slots=True)
class SpreadState:
    """Per constraint: matching pods per topology value, and their smallest count."""

    constraints: tuple[SpreadConstraint, ...]
    counts: tuple[Mapping[str, int], ...]
    minimum: tuple[int, ...]


def _count(
    pod: PodFacts, constraints: tuple[SpreadConstraint, ...], cluster: ClusterView
) -> SpreadState:
    counts: list[dict[str, int]] = [{} for _ in constraints]
    affinity = pod.derived(required_node_affinity)
    tolerations = parse_tolerations(pod.spec)
    for name in cluster.node_names():
        raw = cluster.node(name)
        if raw is None:
            continue
        node = node_facts(raw)
        if any(c.topology_key not in node.labels for c in constraints):
            continue
        pods = [pod_facts(p) for p in cluster.pods_on_node(name)]
        for i, c in enumerate(constraints):
            if not c.includes(node, affinity, tolerations):
                continue
            matched = count_matching(pods, c.selector, pod.namespace)
            value = node.labels[c.topology_key]
            counts[i][value] = counts[i].get(value, 0) + matched
    minimum = tuple(min(c.values(), default=_MAX_INT32) for c in counts)
    return SpreadState(constraints, tuple(counts), minimum)


class PodTopologySpread:
    """Refuses nodes where the pod would break a DoNotSchedule spread constraint."""

    name: Final = "PodTopologySpread"

    def relevant_for_pod(self, pod: PodFacts) -> bool:
        """A pod with a DoNotSchedule constraint (PreFilter skips the rest)."""
        # Most pods have no constraint at all: answered without parsing.
        return bool(pod.spec.get("topologySpreadConstraints")) and bool(
            pod.derived(spread_constraints)
        )

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Skip | Proceed:
        constraints = pod.derived(spread_constraints)
        if not constraints:
            return SKIP
        return Proceed(_count(pod, constraints, cluster))

    def filter(
        self, state: SpreadState, pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        for i, c in enumerate(state.constraints):
            value = node.labels.get(c.topology_key)
            if value is None:
                return (ERR_REASON_NODE_LABEL_NOT_MATCH,)
            domains = state.counts[i]
            minimum = 0 if len(domains) < c.min_domains else state.minimum[i]
            own = 1 if c.selector.matches(pod.labels) else 0
            if domains.get(value, 0) + own - minimum > c.max_skew:
                return (ERR_REASON_CONSTRAINTS_NOT_MATCH,)
        return None
