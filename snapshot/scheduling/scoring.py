"""kube-scheduler's default profile scoring: which of a pod's feasible nodes it picks.

The Score plugins of ``getDefaultPlugins`` (``pkg/scheduler/apis/config/v1/
default_plugins.go``) with their weights, each giving every scored node 0..100
(``MaxNodeScore``) after its NormalizeScore; a node's total is the weighted sum
(``RunScorePlugins`` in ``pkg/scheduler/framework/runtime/framework.go``). A plugin whose
PreScore skips the pod adds nothing. Scored nodes are the ones given (the caller passes the
pod's feasible nodes, all of them: ``percentageOfNodesToScore: 100``); whole-cluster counts
(spread, inter-pod affinity) read every node of the view.

- **NodeResourcesFit** (weight 1, ``noderesources/resource_allocation.go``,
  ``least_allocated.go``, ``most_allocated.go``): cpu and memory, weight 1 each; requested =
  the node's non-zero requests (``NodeInfo.NonZeroRequested``) + the pod's, a container
  without a cpu/memory request counting 100m/200Mi (``PodFacts.non_zero_requests``).
  LeastAllocated per resource ``(alloc - req) * 100 // alloc`` (0 when req > alloc);
  MostAllocated ``min(req, alloc) * 100 // alloc``; a resource the node has none of is left
  out; node score ``sum // number of resources counted``.
- **NodeResourcesBalancedAllocation** (weight 1, ``balanced_allocation.go``): the fractions
  requested/allocatable of cpu and memory with the *actual* requests (``NodeInfo.Requested``
  + the pod's), each capped at 1; ``std = |f_cpu - f_mem| / 2`` (0 with one resource);
  ``int((1 - std) * 100)``. PreScore skips a pod requesting neither cpu nor memory.
- **TaintToleration** (weight 3, ``tainttoleration/taint_toleration.go``): the node's
  PreferNoSchedule taints the pod does not tolerate, counted; ``DefaultNormalizeScore``
  reversed (``helper/normalize_score.go``).
- **NodeAffinity** (weight 2, ``nodeaffinity/node_affinity.go``): the weights of the matching
  preferred terms (`PreferredNodeAffinity`), ``DefaultNormalizeScore``.
- **PodTopologySpread** (weight 2, ``podtopologyspread/scoring.go``, ``common.go``): the pod's
  ScheduleAnyway constraints. Scored nodes lacking a constraint's key score 0; the domains
  are the key's values on the other scored nodes (hostname: one per node); the matching pods
  of a domain are counted on every node holding all the keys that the constraint's node
  inclusion policies admit (hostname: the node's own pods, no policy); a selector with no
  requirement counts no pod (``countPodsMatchSelector``). Raw =
  ``round(sum of count * ln(domains + 2) + maxSkew - 1)``, normalized
  ``100 * (max + min - raw) // max`` (all 100 when max is 0).
- **InterPodAffinity** (weight 2, ``interpodaffinity/scoring.go``): per topology pair, the
  weights of the pod's preferred affinity terms (minus its anti-affinity terms) matched by
  the pods in it, plus, for each pod there, its preferred affinity terms (minus anti-affinity)
  and its required affinity terms (``hardPodAffinityWeight`` 1) that the incoming pod
  matches; a node sums its pairs; min-max normalized, ``int(100 * (s - min) / (max - min))``,
  all 0 when equal. Pods on unlabelled nodes count nowhere.
- **ImageLocality** (weight 1): drasnap's nodes carry no image list: 0 everywhere
  (`node_scoring_warnings` names a node that has one).

Not modelled, warned about by `unsupported_scoring` and scored 0 (so it never changes a
choice silently): PodTopologySpread's *system default* constraints (hostname maxSkew 3, zone
maxSkew 5) that kube-scheduler applies to a pod without constraints that a Service,
ReplicaSet, StatefulSet or ReplicationController selects: drasnap holds none of these
objects. A pod owned by one of the three controllers is warned about; a bare pod that only a
Service selects cannot be recognized. Malformed preferred node affinity terms (upstream
fails the pod's scoring) are warned about and match nothing.

Floating point: Go's ``math.Log``/``float64`` and Python's agree to the last bit or so; the
spread score is rounded to an integer, so only an exact ``.5`` could differ.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from drasnap.snapshot.errors import ArgumentError, NotFoundError, SchedulingError
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.scheduling.matchers import (
    PreferredNodeAffinity,
    parse_tolerations,
    term_error,
)
from drasnap.snapshot.scheduling.plugins.inter_pod_affinity import (
    preferred_affinity_terms,
    preferred_anti_affinity_terms,
    required_affinity_terms,
)
from drasnap.snapshot.scheduling.plugins.node_affinity import required_node_affinity
from drasnap.snapshot.scheduling.plugins.pod_topology_spread import (
    count_matching,
    soft_spread_constraints,
)
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts, node_facts, pod_facts

__all__ = [
    "MAX_NODE_SCORE",
    "STRATEGIES",
    "WEIGHTS",
    "best_node",
    "node_scoring_warnings",
    "plugin_scores",
    "scores",
    "unsupported_scoring",
]

STRATEGIES: Final = ("LeastAllocated", "MostAllocated")
MAX_NODE_SCORE: Final = 100
HARD_POD_AFFINITY_WEIGHT: Final = 1  # InterPodAffinityArgs.hardPodAffinityWeight default
HOSTNAME: Final = "kubernetes.io/hostname"

WEIGHTS: Final[Mapping[str, int]] = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}
"""The default profile's score plugins and weights, in upstream's order."""

_DEFAULT_SPREAD_OWNERS: Final = frozenset({"ReplicaSet", "StatefulSet", "ReplicationController"})

Scores = dict[str, int]


def _facts(pod: KubeObject | PodFacts) -> PodFacts:
    return pod if isinstance(pod, PodFacts) else pod_facts(pod)


def _nodes(view: ClusterView, names: Sequence[str]) -> list[NodeFacts]:
    out = []
    for name in names:
        raw = view.node(name)
        if raw is None:
            raise NotFoundError(f"node {name!r} not found in the cluster")
        out.append(node_facts(raw))
    return out


# -- NodeResourcesFit and BalancedAllocation --------------------------------------------------


def _least(requested: int, allocatable: int) -> int:
    if requested > allocatable:
        return 0
    return (allocatable - requested) * MAX_NODE_SCORE // allocatable


def _most(requested: int, allocatable: int) -> int:
    # requested may pass allocatable: pods without requests count the defaults.
    return min(requested, allocatable) * MAX_NODE_SCORE // allocatable


_SCORERS: Final[Mapping[str, Callable[[int, int], int]]] = {
    "LeastAllocated": _least,
    "MostAllocated": _most,
}


def _resource_fit(
    view: ClusterView, pod: PodFacts, nodes: list[NodeFacts], strategy: str
) -> Scores:
    scorer = _SCORERS[strategy]
    want = pod.non_zero_requests
    out: Scores = {}
    for node in nodes:
        have = node.allocatable
        used = view.non_zero_requested(node.name)
        total = counted = 0
        for allocatable, requested in (
            (have.cpu, used.cpu + want.cpu),
            (have.memory, used.memory + want.memory),
        ):
            if allocatable == 0:
                continue  # a resource the node lacks is left out, with its weight
            total += scorer(requested, allocatable)  # weight 1 each
            counted += 1
        out[node.name] = total // counted if counted else 0
    return out


def _balanced(view: ClusterView, pod: PodFacts, nodes: list[NodeFacts]) -> Scores:
    want = pod.requests
    if want.cpu == 0 and want.memory == 0:
        return dict.fromkeys((n.name for n in nodes), 0)  # best-effort pod: PreScore skips
    out: Scores = {}
    for node in nodes:
        have = node.allocatable
        used = view.requested(node.name)
        fractions = [
            min(float(requested) / float(allocatable), 1.0)
            for allocatable, requested in (
                (have.cpu, used.cpu + want.cpu),
                (have.memory, used.memory + want.memory),
            )
            if allocatable != 0
        ]
        std = abs((fractions[0] - fractions[1]) / 2) if len(fractions) == 2 else 0.0
        out[node.name] = int((1 - std) * float(MAX_NODE_SCORE))
    return out


# -- normalization helpers --------------------------------------------------------------------


def _default_normalize(raw: Scores, reverse: bool) -> Scores:
    """``helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)``."""
    top = max((s for s in raw.values() if s > 0), default=0)
    if top == 0:
        return {name: MAX_NODE_SCORE if reverse else s for name, s in raw.items()}
    out: Scores = {}
    for name, s in raw.items():
        scaled = MAX_NODE_SCORE * s // top
        out[name] = MAX_NODE_SCORE - scaled if reverse else scaled
    return out


# -- TaintToleration and NodeAffinity ---------------------------------------------------------


def _taint_toleration(pod: PodFacts, nodes: list[NodeFacts]) -> Scores:
    tolerations = parse_tolerations(pod.spec)
    raw = {
        node.name: sum(
            1 for taint in node.preferred_taints if not any(t.tolerates(taint) for t in tolerations)
        )
        for node in nodes
    }
    return _default_normalize(raw, reverse=True)


def _preferred_node_affinity(pod: PodFacts) -> PreferredNodeAffinity:
    return PreferredNodeAffinity.of(pod.spec)


def _node_affinity(pod: PodFacts, nodes: list[NodeFacts]) -> Scores:
    preferred = pod.derived(_preferred_node_affinity)
    raw = {node.name: preferred.score(node.name, node.labels) for node in nodes}
    return _default_normalize(raw, reverse=False)


# -- PodTopologySpread ------------------------------------------------------------------------


def _go_round(value: float) -> int:
    """Go's ``math.Round`` for a value >= 0: halves away from zero (Python's rounds to even).
    ``value - floor(value)`` is exact in floating point, so the halfway test is too."""
    whole = math.floor(value)
    return int(whole) + (1 if value - whole >= 0.5 else 0)


def _topology_spread(view: ClusterView, pod: PodFacts, nodes: list[NodeFacts]) -> Scores:
    zero = dict.fromkeys((n.name for n in nodes), 0)
    if not pod.spec.get("topologySpreadConstraints"):
        return zero  # system defaults: not modelled (unsupported_scoring warns)
    constraints = pod.derived(soft_spread_constraints)
    if not constraints or not view.node_names():
        return zero  # PreScore skips
    keys = [c.topology_key for c in constraints]
    ignored = {n.name for n in nodes if any(k not in n.labels for k in keys)}
    kept = [n for n in nodes if n.name not in ignored]
    # The domains: each key's values on the scored nodes that hold every key.
    domains: list[dict[str, int]] = [
        {} if c.topology_key == HOSTNAME else {n.labels[c.topology_key]: 0 for n in kept}
        for c in constraints
    ]
    weights = [
        math.log(float((len(kept) if c.topology_key == HOSTNAME else len(d)) + 2))
        for c, d in zip(constraints, domains, strict=True)
    ]
    affinity = pod.derived(required_node_affinity)
    tolerations = parse_tolerations(pod.spec)
    for name in view.node_names():
        raw_node = view.node(name)
        if raw_node is None:
            continue
        node = node_facts(raw_node)
        if any(k not in node.labels for k in keys):
            continue
        pods: list[PodFacts] | None = None
        for c, counts in zip(constraints, domains, strict=True):
            if not c.includes(node, affinity, tolerations):
                continue
            value = node.labels[c.topology_key]
            if value not in counts:
                continue  # not a domain of a scored node (hostname: counted per node below)
            if pods is None:
                pods = [pod_facts(p) for p in view.pods_on_node(name)]
            counts[value] += count_matching(pods, c.selector, pod.namespace)
    raw: Scores = {}
    for node in kept:
        total = 0.0
        for c, counts, weight in zip(constraints, domains, weights, strict=True):
            if c.topology_key == HOSTNAME:
                placed = (pod_facts(p) for p in view.pods_on_node(node.name))
                count = count_matching(placed, c.selector, pod.namespace)
            else:
                count = counts[node.labels[c.topology_key]]
            total += float(count) * weight + float(c.max_skew - 1)
        raw[node.name] = _go_round(total)
    out = dict(zero)
    if not raw:
        return out
    low, high = min(raw.values()), max(0, *raw.values())
    for name, s in raw.items():
        out[name] = MAX_NODE_SCORE if high == 0 else MAX_NODE_SCORE * (high + low - s) // high
    return out


# -- InterPodAffinity -------------------------------------------------------------------------


def _inter_pod_affinity(view: ClusterView, pod: PodFacts, nodes: list[NodeFacts]) -> Scores:
    affinity = pod.derived(preferred_affinity_terms)
    anti = pod.derived(preferred_anti_affinity_terms)
    incoming = [(w, t) for w, t in affinity] + [(-w, t) for w, t in anti]
    topology: dict[str, dict[str, int]] = {}

    def add(key: str, labels: Mapping[str, str], weight: int) -> None:
        value = labels.get(key)
        if value is not None:
            by_value = topology.setdefault(key, {})
            by_value[value] = by_value.get(value, 0) + weight

    for name in view.node_names():
        raw_node = view.node(name)
        if raw_node is None:
            continue
        labels = node_facts(raw_node).labels
        if not labels:
            continue
        for placed in view.pods_on_node(name):
            other = pod_facts(placed)
            for weight, term in incoming:
                if term.matches(other, view):
                    add(term.topology_key, labels, weight)
            if not (other.spec.get("affinity") or {}):
                continue  # most pods: nothing of their own to match
            for term in other.derived(required_affinity_terms):
                if term.matches(pod, view):
                    add(term.topology_key, labels, HARD_POD_AFFINITY_WEIGHT)
            for weight, term in other.derived(preferred_affinity_terms):
                if term.matches(pod, view):
                    add(term.topology_key, labels, weight)
            for weight, term in other.derived(preferred_anti_affinity_terms):
                if term.matches(pod, view):
                    add(term.topology_key, labels, -weight)
    raw = {
        node.name: sum(
            by_value.get(node.labels[key], 0)
            for key, by_value in topology.items()
            if key in node.labels
        )
        for node in nodes
    }
    if not raw:
        return raw
    low, high = min(raw.values()), max(raw.values())
    if high == low:
        return dict.fromkeys(raw, 0)
    spread = float(high - low)
    return {name: int(float(MAX_NODE_SCORE) * (float(s - low) / spread)) for name, s in raw.items()}


# -- the profile ------------------------------------------------------------------------------


def plugin_scores(
    view: ClusterView, pod: KubeObject | PodFacts, nodes: Sequence[str], strategy: str
) -> dict[str, Scores]:
    """Each plugin's normalized score (0..100) of each node, by plugin name (`WEIGHTS`).

    Raises:
        ArgumentError: ``strategy`` is not one of `STRATEGIES`.
        NotFoundError: a node is not in the view.
        ObjectValidationError: one of the pod's (or a placed pod's) selectors is malformed.
    """
    if strategy not in _SCORERS:
        raise ArgumentError(
            f"scoring strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}"
        )
    facts = _facts(pod)
    listed = _nodes(view, nodes)
    return {
        "TaintToleration": _taint_toleration(facts, listed),
        "NodeAffinity": _node_affinity(facts, listed),
        "NodeResourcesFit": _resource_fit(view, facts, listed, strategy),
        "PodTopologySpread": _topology_spread(view, facts, listed),
        "InterPodAffinity": _inter_pod_affinity(view, facts, listed),
        "NodeResourcesBalancedAllocation": _balanced(view, facts, listed),
        "ImageLocality": dict.fromkeys((n.name for n in listed), 0),
    }


def scores(
    view: ClusterView, pod: KubeObject | PodFacts, nodes: Sequence[str], strategy: str
) -> dict[str, int]:
    """Each node's total: the sum over the plugins of weight x normalized score.

    Raises:
        ArgumentError: ``strategy`` is not one of `STRATEGIES`.
        NotFoundError: a node is not in the view.
    """
    by_plugin = plugin_scores(view, pod, nodes, strategy)
    return {
        name: sum(WEIGHTS[plugin] * by_plugin[plugin][name] for plugin in WEIGHTS) for name in nodes
    }


def best_node(
    view: ClusterView,
    pod: KubeObject | PodFacts,
    nodes: Sequence[str],
    strategy: str,
    tie_key: str,
) -> str:
    """The node with the highest total; among equal totals, the tied nodes sorted by name,
    index ``random.Random(tie_key).randrange(k)``.

    kube-scheduler picks among ties uniformly at random (``selectHost``); a string seed makes
    the pick reproducible (``random.seed`` hashes a ``str`` with SHA-512, whatever
    PYTHONHASHSEED says).

    Raises:
        SchedulingError: ``nodes`` is empty.
        ArgumentError: ``strategy`` is not one of `STRATEGIES`.
        NotFoundError: a node is not in the view.
    """
    if not nodes:
        raise SchedulingError(f"pod {_facts(pod).key}: no feasible node to choose from")
    totals = scores(view, pod, nodes, strategy)
    top = max(totals.values())
    tied = sorted(name for name, total in totals.items() if total == top)
    return tied[random.Random(tie_key).randrange(len(tied))]


def unsupported_scoring(pod: KubeObject | PodFacts) -> list[str]:
    """What scoring this pod upstream depends on that drasnap does not model (each such
    plugin scores 0 everywhere), one line each; empty when the scores are upstream's."""
    facts = _facts(pod)
    out: list[str] = []
    if not facts.spec.get("topologySpreadConstraints"):
        owners = (facts.pod.get("metadata") or {}).get("ownerReferences") or ()
        kinds = sorted({str(o.get("kind")) for o in owners} & _DEFAULT_SPREAD_OWNERS)
        if kinds:
            out.append(
                f"pod {facts.key}: PodTopologySpread: kube-scheduler spreads a pod its "
                f"{'/'.join(kinds)} selects by the system default constraints (hostname "
                "maxSkew 3, zone maxSkew 5, ScheduleAnyway), built from the selectors of "
                "the Services, ReplicaSets, StatefulSets and ReplicationControllers that "
                "select it; drasnap holds none of these objects: scored 0 on every node"
            )
    preferred = ((facts.spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "preferredDuringSchedulingIgnoredDuringExecution"
    ) or ()
    for i, term in enumerate(preferred):
        error = term_error(term.get("preference") or {})
        if error is not None:
            out.append(
                f"pod {facts.key}: NodeAffinity: spec.affinity.nodeAffinity."
                f"preferredDuringSchedulingIgnoredDuringExecution[{i}] is malformed ({error}): "
                "kube-scheduler fails the pod's scoring; drasnap lets it match no node"
            )
    return out


def node_scoring_warnings(node: KubeObject) -> list[str]:
    """What scoring on this node upstream depends on that drasnap does not model."""
    images = (node.get("status") or {}).get("images")
    if not images:
        return []
    name = (node.get("metadata") or {}).get("name", "")
    return [
        f"node {name}: ImageLocality: the node lists {len(images)} image(s) in status.images; "
        "drasnap does not score image locality: 0 on every node"
    ]
