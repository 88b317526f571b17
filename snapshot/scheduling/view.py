"""The read-only view of a cluster the filters use, and what they derive from nodes and pods.

`ClusterView` is the protocol a cluster implements for the filters (``ClusterSnapshot`` from
its indexes; `StaticCluster` here from plain lists, for tests and as the reference of what
each method returns). Per-node filter work reads only the node (`node_facts`), the requests
summed over the node's pods (``requested``) and, for pods asking for host ports, the node's
pods; the whole-cluster reads (every node's pods, the pods with required anti-affinity) are
made once per pod in PreFilter, and only by the plugins whose constraints the pod uses.

`NodeFacts` and `PodFacts` are parsed once per object and remembered by identity: objects read
from the store are never mutated (the store's contract), so the object identifies what is
derived from it. Each cache keeps the object alive with its entry, so an id is never reused
while the entry lives, and is cleared when it grows past a bound.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeVar

from drasnap.snapshot.k8s.kinds import namespace_or_default, namespaced_key
from drasnap.snapshot.k8s.objects import KubeObject, name_of, raw_name
from drasnap.snapshot.scheduling.matchers import (
    NO_SCHEDULE_EFFECTS,
    PREFER_NO_SCHEDULE,
    Taint,
)
from drasnap.snapshot.scheduling.pod_requests import compute_pod_requests, status_counts
from drasnap.snapshot.scheduling.resources import Requests, node_allocatable_requests

__all__ = [
    "NAMESPACE_NAME_LABEL",
    "ClusterView",
    "NodeFacts",
    "PodFacts",
    "StaticCluster",
    "node_facts",
    "off_node",
    "pod_facts",
    "remember",
    "share_pod_facts",
]

NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"
"""The label the API server puts on every Namespace: its name."""

_T = TypeVar("_T")
_CACHE_LIMIT = 100_000


class ClusterView(Protocol):
    """What the filters read from a cluster. Every method is a read; none may change state.

    ``requested(name)`` is the sum of ``PodFacts.placed_requests`` over the node's pods
    (``pods`` = their number), what the scheduler's ``NodeInfo.Requested`` holds; keep it
    incrementally (it is read for every node a pod is tried on).
    ``non_zero_requested(name)`` is the sum of ``PodFacts.placed_non_zero_requests``
    (``NodeInfo.NonZeroRequested``), read by scoring only (``scheduling.scoring``).
    ``pods_with_required_anti_affinity`` yields ``(pod, node name)`` for every placed pod with
    required pod anti-affinity terms (``PodFacts.has_required_anti_affinity``); keep an index:
    InterPodAffinity's PreFilter reads it for every pod, and it is usually empty.
    ``namespace_labels`` returns a namespace's labels; without Namespace objects, return
    ``{NAMESPACE_NAME_LABEL: namespace}``, the label the API server always sets.
    """

    def node(self, name: str) -> KubeObject | None: ...

    def node_names(self) -> Sequence[str]: ...

    def pods_on_node(self, name: str) -> Sequence[KubeObject]: ...

    def requested(self, name: str) -> Requests: ...

    def non_zero_requested(self, name: str) -> Requests: ...

    def pods_with_required_anti_affinity(self) -> Iterable[tuple[KubeObject, str]]: ...

    def namespace_labels(self, namespace: str) -> Mapping[str, str]: ...


def remember(cache: dict[int, tuple[Any, Any]], obj: Any, derive: Callable[[Any], _T]) -> _T:
    """``derive(obj)``, remembered per object in ``cache`` (see the module docstring)."""
    hit = cache.get(id(obj))
    if hit is not None and hit[0] is obj:
        value: _T = hit[1]
        return value
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    value = derive(obj)
    cache[id(obj)] = (obj, value)
    return value


@dataclass(slots=True, eq=False)
class NodeFacts:
    """What the filters read from a Node, parsed once."""

    name: str
    node: KubeObject
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]  # NoSchedule and NoExecute only, in the node's order
    unschedulable: bool
    allocatable: Requests
    preferred_taints: tuple[Taint, ...] = ()  # PreferNoSchedule: only scoring reads them


def _parse_node(node: KubeObject) -> NodeFacts:
    metadata = node.get("metadata") or {}
    spec = node.get("spec") or {}
    every = tuple(
        Taint(str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or ""))
        for t in spec.get("taints") or ()
    )
    taints = tuple(t for t in every if t.effect in NO_SCHEDULE_EFFECTS)
    return NodeFacts(
        name=str(metadata.get("name", "")),
        node=node,
        labels=metadata.get("labels") or {},
        taints=taints,
        unschedulable=bool(spec.get("unschedulable")),
        allocatable=_allocatable(node),
        preferred_taints=tuple(t for t in every if t.effect == PREFER_NO_SCHEDULE),
    )


_STATUSES: dict[int, tuple[Any, Any]] = {}


def _allocatable(node: KubeObject) -> Requests:
    # Copies of a template node (a scale-up's new nodes) share its status: parsed once.
    status = node.get("status")
    if not status:
        return node_allocatable_requests(node)
    return remember(_STATUSES, status, lambda s: node_allocatable_requests({"status": s}))


_NODES: dict[int, tuple[Any, Any]] = {}
_PODS: dict[int, tuple[Any, Any]] = {}


def node_facts(node: KubeObject) -> NodeFacts:
    """The parsed node, remembered by identity."""
    return remember(_NODES, node, _parse_node)


@dataclass(slots=True, eq=False)
class PodFacts:
    """A pod's identity and labels, with what plugins derive from it remembered per function."""

    pod: KubeObject
    key: str
    namespace: str
    labels: Mapping[str, str]
    spec: Mapping[str, Any]
    terminating: bool
    _derived: dict[Callable[[PodFacts], Any], Any] = field(default_factory=dict)

    def derived(self, derive: Callable[[PodFacts], _T]) -> _T:
        """``derive(self)``, computed once per pod object."""
        if derive not in self._derived:
            self._derived[derive] = derive(self)
        value: _T = self._derived[derive]
        return value

    @property
    def requests(self) -> Requests:
        """What the pod asks of a node it is placed on (``compute_pod_requests``)."""
        return self.derived(_spec_requests)

    @property
    def placed_requests(self) -> Requests:
        """What the pod counts for on the node it is on (its status included)."""
        return self.derived(_status_requests)

    @property
    def non_zero_requests(self) -> Requests:
        """`requests` with a container's missing cpu or memory request counted at the
        scheduler's defaults (100m, 200Mi): what the scoring plugins add for the pod."""
        return self.derived(_non_zero_spec_requests)

    @property
    def placed_non_zero_requests(self) -> Requests:
        """`placed_requests` with the same defaults: what the pod counts for in a node's
        ``NodeInfo.NonZeroRequested``."""
        return self.derived(_non_zero_status_requests)

    @property
    def has_required_anti_affinity(self) -> bool:
        return self.derived(_has_required_anti_affinity)


def _has_required_anti_affinity(pod: PodFacts) -> bool:
    anti = (pod.spec.get("affinity") or {}).get("podAntiAffinity") or {}
    return bool(anti.get("requiredDuringSchedulingIgnoredDuringExecution"))


def _spec_requests(pod: PodFacts) -> Requests:
    return compute_pod_requests(pod.pod)


def _status_requests(pod: PodFacts) -> Requests:
    if not status_counts(pod.pod):
        return pod.requests  # the same, derived once
    return compute_pod_requests(pod.pod, use_status=True)


def _non_zero_spec_requests(pod: PodFacts) -> Requests:
    return compute_pod_requests(pod.pod, non_zero=True)


def _non_zero_status_requests(pod: PodFacts) -> Requests:
    if not status_counts(pod.pod):
        return pod.non_zero_requests
    return compute_pod_requests(pod.pod, use_status=True, non_zero=True)


def _parse_pod(pod: KubeObject) -> PodFacts:
    metadata = pod.get("metadata") or {}
    namespace = namespace_or_default(pod)
    return PodFacts(
        pod=pod,
        key=namespaced_key(namespace, raw_name(pod)),
        namespace=namespace,
        labels=metadata.get("labels") or {},
        spec=pod.get("spec") or {},
        terminating=metadata.get("deletionTimestamp") is not None,
    )


def pod_facts(pod: KubeObject) -> PodFacts:
    """The parsed pod, remembered by identity."""
    hit = _PODS.get(id(pod))  # `remember`'s hit, without its call: asked often per pod
    if hit is not None and hit[0] is pod:
        facts: PodFacts = hit[1]
        return facts
    return remember(_PODS, pod, _parse_pod)


class StaticCluster:
    """A `ClusterView` over plain lists: nodes, pods (placed by ``spec.nodeName``) and
    optional Namespace objects. Built once; the reference for what each method returns.

    >>> cluster = StaticCluster(
    ...     [{"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "2"}}}],
    ...     [{"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "containers": [
    ...         {"resources": {"requests": {"cpu": "500m"}}}]}}])
    >>> cluster.requested("n1").cpu, cluster.requested("n1").pods
    (500, 1)
    """

    def __init__(
        self,
        nodes: Iterable[KubeObject],
        pods: Iterable[KubeObject] = (),
        namespaces: Iterable[KubeObject] | None = None,
    ) -> None:
        self._nodes = {name_of(n): n for n in nodes}
        self._pods: dict[str, list[KubeObject]] = {name: [] for name in self._nodes}
        for pod in pods:
            name = (pod.get("spec") or {}).get("nodeName")
            if name in self._pods:
                self._pods[name].append(pod)
        self._namespaces = None
        if namespaces is not None:
            self._namespaces = {
                name_of(ns): dict(ns["metadata"].get("labels") or {}) for ns in namespaces
            }

    def node(self, name: str) -> KubeObject | None:
        return self._nodes.get(name)

    def node_names(self) -> Sequence[str]:
        return sorted(self._nodes)

    def pods_on_node(self, name: str) -> Sequence[KubeObject]:
        return self._pods.get(name, [])

    def requested(self, name: str) -> Requests:
        total = Requests()
        for pod in self._pods.get(name, ()):
            total = total + pod_facts(pod).placed_requests
        return total

    def non_zero_requested(self, name: str) -> Requests:
        total = Requests()
        for pod in self._pods.get(name, ()):
            total = total + pod_facts(pod).placed_non_zero_requests
        return total

    def pods_with_required_anti_affinity(self) -> Iterable[tuple[KubeObject, str]]:
        for name in self.node_names():
            for pod in self._pods[name]:
                if pod_facts(pod).has_required_anti_affinity:
                    yield pod, name

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        if self._namespaces is None:
            return {NAMESPACE_NAME_LABEL: namespace}
        labels = self._namespaces.get(namespace, {})
        return {NAMESPACE_NAME_LABEL: namespace, **labels}


def share_pod_facts(original: KubeObject, copy: KubeObject) -> None:
    """Give ``copy``, the same pod bound to a node or taken off one (nothing but
    ``spec.nodeName`` differs), what was derived from ``original``: requests, terms and
    ports do not depend on the node name, and a placement then costs no new derivation.
    """
    facts = pod_facts(original)
    facts.placed_requests  # noqa: B018  # derived now, so the copy shares it
    shared = PodFacts(
        pod=copy,
        key=facts.key,
        namespace=facts.namespace,
        labels=facts.labels,
        spec=copy.get("spec") or {},
        terminating=facts.terminating,
        _derived=dict(facts._derived),
    )
    if len(_PODS) > _CACHE_LIMIT:
        _PODS.clear()
    _PODS[id(copy)] = (copy, shared)


def off_node(pod: PodFacts) -> PodFacts:
    """``pod`` as it will be once taken off its node: no ``spec.nodeName``, and what was
    derived from it shared (it does not depend on the node name, see `share_pod_facts`).

    Not remembered as the pod's facts: nothing but the caller holds the copy made."""
    spec = dict(pod.spec)  # a copy in C, not a comprehension: asked of every pod moved
    spec.pop("nodeName", None)
    return PodFacts(
        pod={**pod.pod, "spec": spec},
        key=pod.key,
        namespace=pod.namespace,
        labels=pod.labels,
        spec=spec,
        terminating=pod.terminating,
        _derived=pod._derived,
    )
