"""Running the filters for one pod: PreFilter once, then Filter node by node.

A plugin (`FilterPlugin`) has a ``name``, a ``prefilter(pod, cluster)`` run once per pod per
scheduling attempt, and a ``filter(state, pod, node, cluster)`` run per node with the state
its PreFilter returned. PreFilter answers one of:

- `SKIP`: the pod uses nothing this plugin checks; its Filter is not run (``fwk.Skip``);
- `Reject(reasons)`: the pod fits no node; no Filter runs and the reasons are the whole answer
  (every rejecting PreFilter upstream in this set returns UnschedulableAndUnresolvable, which
  stops the PreFilters that follow);
- `Proceed(state, node_names)`: run Filter with ``state``; ``node_names``, when set, are the
  only nodes worth trying (``PreFilterResult.NodeNames``).

Filter returns None (the node fits) or the reasons it does not. `PodCycle` follows
``frameworkImpl.RunPreFilterPlugins`` and ``RunFilterPlugins`` (``pkg/scheduler/framework/
runtime/framework.go``): PreFilters in plugin order, node lists intersected (an empty
intersection refuses the pod: ``node(s) didn't satisfy plugin X`` or ``plugin(s) [A B]
simultaneously``), nodes outside the list answered ``node(s) didn't satisfy plugin(s) [A B]``
(``findNodesThatFitPod`` in ``pkg/scheduler/schedule_one.go``), and on each node the Filters in
plugin order up to the first refusal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from drasnap.snapshot.errors import NotFoundError, SchedulingError
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.scheduling.fit_error import FitError, NodeResult
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts, node_facts, pod_facts

__all__ = ["SKIP", "FilterPlugin", "PodCycle", "Proceed", "Reject", "Skip"]


class Skip:
    """PreFilter's answer for a pod the plugin has nothing to check for."""

    def __repr__(self) -> str:
        return "SKIP"


SKIP: Final = Skip()


@dataclass(frozen=True, slots=True)
class Reject:
    """PreFilter's answer for a pod that fits no node."""

    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Proceed:
    """PreFilter's answer: run Filter with ``state``, on ``node_names`` only when set."""

    state: Any = None
    node_names: frozenset[str] | None = None


class FilterPlugin(Protocol):
    """A scheduler filter: PreFilter once per pod, Filter once per node.

    It may also declare which pods, nodes or cluster states it can refuse for
    (``relevant_for_pod``, ``relevant_for_node``, ``relevant_for_cluster``: see
    ``scheduling.relevance``); without a declaration it matters for every pod on every node.
    """

    @property
    def name(self) -> str: ...

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Skip | Reject | Proceed: ...

    def filter(
        self, state: Any, pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None: ...


def _plugin_list(names: Iterable[str]) -> str:
    return "[" + " ".join(sorted(names)) + "]"  # Go's %v of a sorted []string


class PodCycle:
    """One scheduling attempt of one pod: its PreFilter states and the refusals seen so far.

    Build it again when the cluster changes (a pod placed or removed): the PreFilter states
    (affinity and spread counts) describe the cluster as it was.
    """

    def __init__(
        self, plugins: Sequence[FilterPlugin], pod: KubeObject | PodFacts, cluster: ClusterView
    ) -> None:
        self.pod = pod if isinstance(pod, PodFacts) else pod_facts(pod)
        self.cluster = cluster
        self.rejected: NodeResult | None = None
        self.allowed: frozenset[str] | None = None
        self.absent: NodeResult | None = None
        self.failures: dict[str, NodeResult] = {}
        # Refusals repeat across nodes: one NodeResult per (plugin, reasons) is kept and shared.
        self._results: dict[tuple[str, tuple[str, ...]], NodeResult] = {}
        self._active: list[tuple[FilterPlugin, Any]] = []
        narrowing: list[str] = []
        for plugin in plugins:
            outcome = plugin.prefilter(self.pod, cluster)
            if isinstance(outcome, Skip):
                continue
            if isinstance(outcome, Reject):
                self.rejected = NodeResult(plugin.name, outcome.reasons)
                return
            self._active.append((plugin, outcome.state))
            if outcome.node_names is not None:
                narrowing.append(plugin.name)
                names = outcome.node_names
                self.allowed = names if self.allowed is None else self.allowed & names
                if not self.allowed:
                    if len(narrowing) == 1:
                        reason = f"node(s) didn't satisfy plugin {narrowing[0]}"
                    else:
                        listed = _plugin_list(narrowing)
                        reason = f"node(s) didn't satisfy plugin(s) {listed} simultaneously"
                    self.rejected = NodeResult("", (reason,))
                    return
        if narrowing:
            self.absent = NodeResult(
                "", (f"node(s) didn't satisfy plugin(s) {_plugin_list(narrowing)}",)
            )

    def filter(self, node_name: str) -> NodeResult | None:
        """None when the pod fits the node, else why not (remembered for `fit_error`).

        Raises:
            NotFoundError: the cluster has no node of that name.
        """
        if self.rejected is not None:
            return self.rejected
        if self.allowed is not None and node_name not in self.allowed:
            return self.absent
        node = self.cluster.node(node_name)
        if node is None:
            raise NotFoundError(f"node {node_name!r} not found in the cluster")
        facts = node_facts(node)
        pod, cluster = self.pod, self.cluster
        for plugin, state in self._active:
            reasons = plugin.filter(state, pod, facts, cluster)
            if reasons is not None:
                key = (plugin.name, reasons)
                result = self._results.get(key)
                if result is None:
                    result = self._results[key] = NodeResult(plugin.name, reasons)
                self.failures[node_name] = result
                return result
        self.failures.pop(node_name, None)
        return None

    def fit_error(self, node_names: Sequence[str] | None = None) -> FitError:
        """Why the pod fits none of ``node_names`` (the cluster's nodes by default).

        Nodes not tried yet are filtered now, so the answer covers every node as the
        scheduler's does.

        Raises:
            SchedulingError: the pod fits one of the nodes.
        """
        names = list(self.cluster.node_names() if node_names is None else node_names)
        if self.rejected is not None:
            return FitError(len(names), prefilter=self.rejected)
        nodes: dict[str, NodeResult] = {}
        for name in names:
            if self.allowed is not None and name not in self.allowed:
                continue
            result = self.failures.get(name) or self.filter(name)
            if result is None:
                raise SchedulingError(f"pod {self.pod.key} fits node {name}: no fit error")
            nodes[name] = result
        return FitError(len(names), nodes=nodes, absent=self.absent)
