"""InterPodAffinity: required pod affinity and anti-affinity, the pod's and the placed pods'.

``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go``. PreFilter counts, per
topology pair ``(topologyKey, value)`` of the nodes pods run on:

- placed pods whose required anti-affinity terms match the incoming pod (read from
  ``ClusterView.pods_with_required_anti_affinity``: no scan when there are none);
- placed pods matching *all* the incoming pod's required affinity terms, and those matching
  each of its anti-affinity terms (a scan of every pod, done only for a pod with such terms).

A term matches a pod in one of its namespaces (``namespaces``; the term owner's namespace
when neither ``namespaces`` nor ``namespaceSelector`` is set; ``namespaceSelector`` against the
namespace's labels, ``{}`` meaning all) whose labels match ``labelSelector``.
``matchLabelKeys``/``mismatchLabelKeys`` add ``key in``/``key notin`` the owner's value, as
the API server merges them into the selector when the pod is created.

Filter, in this order: every affinity term's topology key must be on the node and the node's
pair must hold a matching pod, except for the first pod of a group (no pod matches any
affinity term anywhere, and the pod matches all its own terms: it may go anywhere the keys
exist); no anti-affinity term may have a matching pod in the node's pair; no placed pod's
anti-affinity may match in any of the node's pairs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from drasnap.snapshot.scheduling.framework import SKIP, Proceed, Skip
from drasnap.snapshot.scheduling.matchers import NOTHING, LabelSelector
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts, node_facts, pod_facts

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "AffinityTerm",
    "InterPodAffinity",
    "preferred_affinity_terms",
    "preferred_anti_affinity_terms",
    "required_affinity_terms",
    "required_anti_affinity_terms",
]

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Final = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"

Pair = tuple[str, str]
_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A parsed ``PodAffinityTerm`` of one pod."""

    namespaces: frozenset[str]
    namespace_selector: LabelSelector
    selector: LabelSelector
    topology_key: str

    def matches(self, pod: PodFacts, cluster: ClusterView) -> bool:
        if pod.namespace not in self.namespaces and (
            self.namespace_selector.nothing
            or not self.namespace_selector.matches(cluster.namespace_labels(pod.namespace))
        ):
            return False
        return self.selector.matches(pod.labels)


_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"


def _term(pod: PodFacts, term: Mapping[str, Any], where: str) -> AffinityTerm:
    """One ``PodAffinityTerm`` of ``pod``, its selectors compiled (``where`` names it)."""
    selector = LabelSelector.parse(term.get("labelSelector"), where=where + "labelSelector.")
    keys = term.get("matchLabelKeys") or ()
    selector = selector.with_labels({k: pod.labels[k] for k in keys if k in pod.labels})
    keys = term.get("mismatchLabelKeys") or ()
    selector = selector.with_labels({k: pod.labels[k] for k in keys if k in pod.labels}, "NotIn")
    raw_ns_selector = term.get("namespaceSelector")
    names = frozenset(str(n) for n in term.get("namespaces") or ())
    if not names and raw_ns_selector is None:
        names = frozenset((pod.namespace,))
    ns_selector = (
        NOTHING
        if raw_ns_selector is None
        else LabelSelector.parse(raw_ns_selector, where=where + "namespaceSelector.")
    )
    return AffinityTerm(names, ns_selector, selector, str(term.get("topologyKey", "")))


def _terms(pod: PodFacts, kind: str) -> tuple[AffinityTerm, ...]:
    section = (pod.spec.get("affinity") or {}).get(kind) or {}
    return tuple(
        _term(pod, term, f"pod {pod.key}: spec.affinity.{kind}.{_REQUIRED}[{i}].")
        for i, term in enumerate(section.get(_REQUIRED) or ())
    )


def _weighted_terms(pod: PodFacts, kind: str) -> tuple[tuple[int, AffinityTerm], ...]:
    section = (pod.spec.get("affinity") or {}).get(kind) or {}
    return tuple(
        (
            int(term.get("weight") or 0),
            _term(
                pod,
                term.get("podAffinityTerm") or {},
                f"pod {pod.key}: spec.affinity.{kind}.{_PREFERRED}[{i}].podAffinityTerm.",
            ),
        )
        for i, term in enumerate(section.get(_PREFERRED) or ())
    )


def required_affinity_terms(pod: PodFacts) -> tuple[AffinityTerm, ...]:
    """The pod's required pod affinity terms (remembered per pod through ``derived``).

    Raises:
        ObjectValidationError: a selector is malformed.
    """
    return _terms(pod, "podAffinity")


def required_anti_affinity_terms(pod: PodFacts) -> tuple[AffinityTerm, ...]:
    """The pod's required pod anti-affinity terms.

    Raises:
        ObjectValidationError: a selector is malformed.
    """
    return _terms(pod, "podAntiAffinity")


def preferred_affinity_terms(pod: PodFacts) -> tuple[tuple[int, AffinityTerm], ...]:
    """The pod's preferred pod affinity terms with their weights (only scoring reads them).

    Raises:
        ObjectValidationError: a selector is malformed.
    """
    return _weighted_terms(pod, "podAffinity")


def preferred_anti_affinity_terms(pod: PodFacts) -> tuple[tuple[int, AffinityTerm], ...]:
    """The pod's preferred pod anti-affinity terms with their weights.

    Raises:
        ObjectValidationError: a selector is malformed.
    """
    return _weighted_terms(pod, "podAntiAffinity")


@dataclass(frozen=True, slots=True)
class AffinityState:
    affinity: tuple[AffinityTerm, ...]
    anti_affinity: tuple[AffinityTerm, ...]
    affinity_counts: Mapping[Pair, int]
    anti_affinity_counts: Mapping[Pair, int]
    existing_anti_affinity_counts: Mapping[Pair, int]
    matches_own_terms: bool


def _pair(node: NodeFacts, key: str) -> Pair | None:
    value = node.labels.get(key)
    return None if value is None else (key, value)


class InterPodAffinity:
    """Refuses nodes that break required pod affinity or anti-affinity."""

    name: Final = "InterPodAffinity"

    def relevant_for_pod(self, pod: PodFacts) -> bool:
        """A pod with required pod affinity or anti-affinity terms."""
        if not pod.spec.get("affinity"):
            return False  # most pods: answered without parsing
        return bool(
            pod.derived(required_affinity_terms) or pod.derived(required_anti_affinity_terms)
        )

    def relevant_for_cluster(self, cluster: ClusterView) -> bool:
        """Any pod, while a placed pod has required anti-affinity (it may match the pod)."""
        for _ in cluster.pods_with_required_anti_affinity():
            return True  # (a loop, no generator: asked for every pod placed)
        return False

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Skip | Proceed:
        affinity = pod.derived(required_affinity_terms)
        anti = pod.derived(required_anti_affinity_terms)
        existing: Counter[Pair] = Counter()
        for placed_pod, node_name in cluster.pods_with_required_anti_affinity():
            raw = cluster.node(node_name)
            if raw is None:
                continue
            node = node_facts(raw)
            for term in pod_facts(placed_pod).derived(required_anti_affinity_terms):
                pair = _pair(node, term.topology_key)
                if pair is not None and term.matches(pod, cluster):
                    existing[pair] += 1
        if not existing and not affinity and not anti:
            return SKIP
        affinity_counts: Counter[Pair] = Counter()
        anti_counts: Counter[Pair] = Counter()
        if affinity or anti:
            for node_name in cluster.node_names():
                raw = cluster.node(node_name)
                if raw is None:
                    continue
                node = node_facts(raw)
                for placed in cluster.pods_on_node(node_name):
                    facts = pod_facts(placed)
                    if affinity and all(t.matches(facts, cluster) for t in affinity):
                        for term in affinity:
                            pair = _pair(node, term.topology_key)
                            if pair is not None:
                                affinity_counts[pair] += 1
                    for term in anti:
                        pair = _pair(node, term.topology_key)
                        if pair is not None and term.matches(facts, cluster):
                            anti_counts[pair] += 1
        own = bool(affinity) and all(t.matches(pod, cluster) for t in affinity)
        return Proceed(AffinityState(affinity, anti, affinity_counts, anti_counts, existing, own))

    def filter(
        self, state: AffinityState, pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        if not _satisfies_affinity(state, node):
            return (ERR_REASON_AFFINITY_RULES_NOT_MATCH,)
        if state.anti_affinity_counts:
            for term in state.anti_affinity:
                pair = _pair(node, term.topology_key)
                if pair is not None and state.anti_affinity_counts.get(pair, 0) > 0:
                    return (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,)
        counts = state.existing_anti_affinity_counts
        if counts and any(counts.get(pair, 0) > 0 for pair in node.labels.items()):
            return (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,)
        return None


def _satisfies_affinity(state: AffinityState, node: NodeFacts) -> bool:
    pods_exist = True
    for term in state.affinity:
        pair = _pair(node, term.topology_key)
        if pair is None:
            return False  # every topology key must be on the node
        if state.affinity_counts.get(pair, 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself may go wherever the keys exist.
    return not state.affinity_counts and state.matches_own_terms
