"""When a filter matters: what each plugin declares, and the shortcut built from the list.

Running every Filter on every node is what deciding a pod costs; most pods of a simulation ask
for nothing but CPU, memory and a pod slot, and most nodes carry no taint. A `FilterPlugin`
may say when its Filter can refuse, with up to three optional methods:

- ``relevant_for_pod(pod) -> bool``: False promises that the plugin (PreFilter and Filter)
  accepts this pod on every node where the pod has room (`Requests.fits_on` of its requests,
  what every placement checks first), whatever else the node and the cluster hold, unless
  ``relevant_for_cluster`` says otherwise. It reads the pod alone: the answer is remembered
  per pod (see `Relevance.pod_is_plain`).
- ``relevant_for_node(node) -> bool``: False promises that the plugin accepts every pod on
  this node. A plugin that declares it is asked per node only (`Relevance.restricted`), its
  pod side is not read.
- ``relevant_for_cluster(cluster) -> bool``: True while the cluster's own state (its placed
  pods) can make the plugin refuse a pod that ``relevant_for_pod`` calls irrelevant.

A plugin that declares neither ``relevant_for_pod`` nor ``relevant_for_node`` matters for every
pod on every node: a new filter needs no declaration to be obeyed, it only keeps every pod off
the shortcut until it declares one. `Relevance` is built once from the ordered plugin list
(``plugins.default_plugins``); the cluster snapshot asks it, never a list of its own, which
pods and nodes its shortcuts may skip the filters for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from typing import Protocol, runtime_checkable

from drasnap.snapshot.scheduling.framework import FilterPlugin
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts, off_node

__all__ = ["ClusterSide", "NodeSide", "PodSide", "Relevance"]


@runtime_checkable
class PodSide(Protocol):
    """A plugin that declares which pods it can refuse (see the module docstring)."""

    def relevant_for_pod(self, pod: PodFacts) -> bool: ...


@runtime_checkable
class NodeSide(Protocol):
    """A plugin that declares on which nodes it can refuse a pod."""

    def relevant_for_node(self, node: NodeFacts) -> bool: ...


@runtime_checkable
class ClusterSide(Protocol):
    """A plugin whose refusals may also come from the pods placed in the cluster."""

    def relevant_for_cluster(self, cluster: ClusterView) -> bool: ...


class Relevance:
    """Which plugins of a list can refuse which pods on which nodes, from their declarations.

    A pod that `pod_is_plain` and `cluster_is_quiet` call plain fits a node that is not
    `restricted` as soon as it has room there (`Requests.fits_on`) and the plugins named in
    ``run_by_caller`` (whose Filter the caller runs itself) accept it.
    """

    def __init__(
        self, plugins: Iterable[FilterPlugin], run_by_caller: AbstractSet[str] = frozenset()
    ) -> None:
        kept = [p for p in plugins if p.name not in run_by_caller]
        self._node_checks = tuple(p.relevant_for_node for p in kept if isinstance(p, NodeSide))
        per_pod = [p for p in kept if not isinstance(p, NodeSide)]
        self._always = any(not isinstance(p, PodSide) for p in per_pod)
        self._pod_checks = tuple(p.relevant_for_pod for p in per_pod if isinstance(p, PodSide))
        self._cluster_checks = tuple(
            p.relevant_for_cluster for p in per_pod if isinstance(p, ClusterSide)
        )
        # One callable per list and case (bound methods made once): the keys under which each
        # pod remembers its answer off its node, asked of it there or on a node.
        self._remembered: Callable[[PodFacts], bool] = self._plain_off_node
        self._remembered_off: Callable[[PodFacts], bool] = self._quiet

    def restricted(self, node: NodeFacts) -> bool:
        """Whether a plugin declared per node may refuse a pod on ``node`` (a taint, a
        cordon): the shortcut runs the filters there."""
        for check in self._node_checks:  # noqa: SIM110 (a loop: see cluster_is_quiet)
            if check(node):
                return True
        return False

    def pod_is_plain(self, pod: PodFacts, *, off_node: bool = False) -> bool:
        """Whether no plugin declared per pod can refuse ``pod`` where it has room (the
        cluster's part aside: `cluster_is_quiet`). ``off_node``: asked of the pod as it will
        be once taken off its node (``spec.nodeName`` unset).

        The answer is remembered for the pod off its node, which is what its bound and
        unbound copies share (``view.share_pod_facts``); a pod that names its node is asked
        afresh.
        """
        if not pod.spec.get("nodeName"):
            return pod.derived(self._remembered_off)  # off its node already
        if off_node:
            return pod.derived(self._remembered)
        return self._quiet(pod)

    def cluster_is_quiet(self, cluster: ClusterView) -> bool:
        """Whether nothing placed in ``cluster`` makes a plugin matter for every pod."""
        # Loops, not any() or all() over a generator: asked for every pod placed.
        for check in self._cluster_checks:  # noqa: SIM110
            if check(cluster):
                return False
        return True

    def _plain_off_node(self, pod: PodFacts) -> bool:
        return self._quiet(off_node(pod) if pod.spec.get("nodeName") else pod)

    def _quiet(self, pod: PodFacts) -> bool:
        if self._always:
            return False
        for check in self._pod_checks:  # noqa: SIM110 (as above)
            if check(pod):
                return False
        return True
