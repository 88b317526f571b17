"""Label selectors, node selectors and taint tolerations, compiled once per pod.

- `LabelSelector` is ``metav1.LabelSelectorAsSelector``: ``matchLabels`` and
  ``matchExpressions`` (In, NotIn, Exists, DoesNotExist) ANDed; a missing selector selects
  nothing, an empty one everything.
- `RequiredNodeAffinity` is ``component-helpers/scheduling/corev1/nodeaffinity
  .GetRequiredNodeAffinity``: ``spec.nodeSelector`` (every label equal) AND the required node
  affinity's terms (ORed; an empty term selects nothing; a malformed term, e.g. an unknown
  operator, never matches, as the scheduler ignores parse errors there). Terms are matched by
  ``snapshot.allocation.pools.node_selector_matches``, the allocator's own node selection.
- `PreferredNodeAffinity` is ``nodeaffinity.PreferredSchedulingTerms``: the weights of the
  preferred node affinity terms that match a node, summed; a term of weight 0 or with no
  requirement is dropped, a malformed one matches nothing (kube-scheduler fails the pod's
  scoring then: ``scheduling.scoring.unsupported_scoring`` names it).
- `Toleration.tolerates` is ``v1.Toleration.ToleratesTaint`` with TaintTolerationComparison
  Operators off (alpha in 1.36): ``Lt``/``Gt`` tolerate nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from drasnap.snapshot.errors import AllocationError, ObjectValidationError
from drasnap.snapshot.k8s.node_selectors import node_selector_matches

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "PREFER_NO_SCHEDULE",
    "LabelSelector",
    "PreferredNodeAffinity",
    "RequiredNodeAffinity",
    "Taint",
    "Toleration",
    "first_untolerated",
    "parse_tolerations",
]

_SELECTOR_OPERATORS: Final = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})
NO_SCHEDULE_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute"})
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A compiled ``metav1.LabelSelector``: requirements ``(key, operator, values)`` ANDed."""

    requirements: tuple[tuple[str, str, frozenset[str]], ...]
    nothing: bool = False

    @classmethod
    def parse(cls, selector: Mapping[str, Any] | None, *, where: str = "") -> LabelSelector:
        """Compile a selector; None selects nothing.

        Raises:
            ObjectValidationError: an operator is unknown or values do not fit it (the message
                starts with ``where``).
        """
        if selector is None:
            return NOTHING
        reqs: list[tuple[str, str, frozenset[str]]] = [
            (str(k), "In", frozenset((str(v),)))
            for k, v in sorted((selector.get("matchLabels") or {}).items())
        ]
        for i, expr in enumerate(selector.get("matchExpressions") or ()):
            key, op = str(expr.get("key", "")), str(expr.get("operator", ""))
            values = frozenset(str(v) for v in expr.get("values") or ())
            bad = None
            if op not in _SELECTOR_OPERATORS:
                bad = f"{op!r} is not a valid label selector operator"
            elif op in ("In", "NotIn") and not values:
                bad = f"values must be non-empty for operator {op}"
            elif op in ("Exists", "DoesNotExist") and values:
                bad = f"values must be empty for operator {op}"
            if bad:
                raise ObjectValidationError(f"{where}matchExpressions[{i}] (key {key!r}): {bad}")
            reqs.append((key, op, values))
        return cls(tuple(reqs)) if reqs else EVERYTHING

    def with_labels(self, labels: Mapping[str, str], operator: str = "In") -> LabelSelector:
        """This selector AND ``key operator [value]`` for each label (``matchLabelKeys``)."""
        if not labels:
            return self
        extra = tuple((k, operator, frozenset((v,))) for k, v in sorted(labels.items()))
        return LabelSelector(extra if self.nothing else (*extra, *self.requirements))

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for key, op, values in self.requirements:
            present = key in labels
            if op == "In":
                if not present or labels[key] not in values:
                    return False
            elif op == "NotIn":
                if present and labels[key] in values:
                    return False
            elif op == "Exists":
                if not present:
                    return False
            elif present:  # DoesNotExist
                return False
        return True


NOTHING: Final = LabelSelector((), nothing=True)
EVERYTHING: Final = LabelSelector(())


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """``spec.nodeSelector`` AND the required node affinity of a pod."""

    node_selector: tuple[tuple[str, str], ...]
    terms: tuple[Mapping[str, Any], ...] | None  # None: no required node affinity

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> RequiredNodeAffinity:
        selector = tuple(
            sorted((str(k), str(v)) for k, v in (spec.get("nodeSelector") or {}).items())
        )
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        terms = None if required is None else tuple(required.get("nodeSelectorTerms") or ())
        return cls(selector, terms)

    @property
    def empty(self) -> bool:
        return not self.node_selector and self.terms is None

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        for key, value in self.node_selector:
            if labels.get(key) != value:
                return False
        if self.terms is None:
            return True
        return any(_term_matches(term, node_name, labels) for term in self.terms)


def _term_matches(term: Mapping[str, Any], node_name: str, labels: Mapping[str, str]) -> bool:
    try:
        return node_selector_matches({"nodeSelectorTerms": [term]}, node_name, labels)
    except AllocationError:
        return False  # a malformed term selects nothing; unsupported.pod_warnings names it


@dataclass(frozen=True, slots=True)
class PreferredNodeAffinity:
    """A pod's ``preferredDuringSchedulingIgnoredDuringExecution`` node affinity terms."""

    terms: tuple[tuple[int, Mapping[str, Any]], ...]  # (weight, preference)

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> PreferredNodeAffinity:
        preferred = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "preferredDuringSchedulingIgnoredDuringExecution"
        )
        terms = []
        for term in preferred or ():
            weight = int(term.get("weight") or 0)
            preference = term.get("preference") or {}
            if weight == 0 or not (
                preference.get("matchExpressions") or preference.get("matchFields")
            ):
                continue
            terms.append((weight, preference))
        return cls(tuple(terms))

    def score(self, node_name: str, labels: Mapping[str, str]) -> int:
        """The summed weights of the terms matching the node."""
        return sum(w for w, term in self.terms if _term_matches(term, node_name, labels))


def term_error(term: Mapping[str, Any]) -> str | None:
    """Why a node selector term is malformed, or None."""
    try:
        node_selector_matches({"nodeSelectorTerms": [term]}, "", {})
    except AllocationError as exc:
        return str(exc)
    return None


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


def parse_tolerations(spec: Mapping[str, Any]) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(
            str(t.get("key") or ""),
            str(t.get("operator") or ""),
            str(t.get("value") or ""),
            str(t.get("effect") or ""),
        )
        for t in spec.get("tolerations") or ()
    )


def first_untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    """The first taint no toleration tolerates (``FindMatchingUntoleratedTaint``); the caller
    passes only the taints it filters on."""
    for taint in taints:
        if not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None
