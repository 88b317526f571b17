"""Why a pod fits no node: per-node reasons and the scheduler's one-line summary.

`NodeResult` is one node's answer (the plugin that refused it and its reasons); `FitError`
holds them all and prints them as kube-scheduler's ``FitError.Error()`` does
(``pkg/scheduler/framework/types.go``)::

    0/<all nodes> nodes are available: <PreFilter message>.
    0/<all nodes> nodes are available: <n> <reason>, <n> <reason>, ... .

Every reason of every node is counted (a node refused for cpu and memory counts under both);
nodes left out by a PreFilter's node list count under that status; the ``<n> <reason>`` strings
are sorted as strings (Go's ``sort.Strings``: ``"10 x"`` sorts before ``"9 y"``). When a
PreFilter refused the pod, its message stands alone. With no node at all the scheduler says
``no nodes available to schedule pods``. kube-scheduler then appends what preemption found
(``preemption: 0/N nodes are available: ...``); the cluster-autoscaler does not preempt and
neither does this simulation, so that part is never added.

Both serialise to JSON (`to_json`/`from_json`) for the journal: nodes sharing a result are
grouped, so a refusal repeated on thousands of nodes is stored once with their names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from drasnap.snapshot.errors import ObjectValidationError

__all__ = ["NO_NODES_MESSAGE", "FitError", "NodeResult"]

NO_NODES_MESSAGE: Final = "no nodes available to schedule pods"


@dataclass(frozen=True, slots=True)
class NodeResult:
    """A refusal: the plugin (``""`` for the framework itself) and its reason strings."""

    plugin: str
    reasons: tuple[str, ...]

    @property
    def message(self) -> str:
        """The reasons joined as ``Status.Message()`` joins them."""
        return ", ".join(self.reasons)

    def to_json(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "reasons": list(self.reasons)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NodeResult:
        """Raises: ObjectValidationError: ``data`` is not a NodeResult's JSON."""
        plugin, reasons = data.get("plugin"), data.get("reasons")
        if not isinstance(plugin, str) or not isinstance(reasons, list):
            raise ObjectValidationError(
                f"not a node result: {data!r} (expected plugin string and reasons list)"
            )
        return cls(plugin, tuple(str(r) for r in reasons))


@dataclass(frozen=True)
class FitError:
    """The scheduler's answer for a pod that fits none of ``num_all_nodes`` nodes.

    ``prefilter`` is set when a PreFilter refused the pod outright (then it is every node's
    answer); otherwise ``nodes`` holds each filtered node's refusal and ``absent`` the answer
    for the nodes a PreFilter's node list left out (every node not in ``nodes``).

    >>> err = FitError(3, nodes={"a": NodeResult("NodeResourcesFit", ("Insufficient cpu",)),
    ...     "b": NodeResult("TaintToleration", ("node(s) had untolerated taint {gpu: a100}",)),
    ...     "c": NodeResult("NodeResourcesFit", ("Insufficient cpu",))})
    >>> err.message()
    '0/3 nodes are available: 1 node(s) had untolerated taint {gpu: a100}, 2 Insufficient cpu.'
    """

    num_all_nodes: int
    prefilter: NodeResult | None = None
    nodes: Mapping[str, NodeResult] = field(default_factory=dict)
    absent: NodeResult | None = None

    def node_result(self, name: str) -> NodeResult | None:
        """Why node ``name`` was refused (None for a name the error does not cover)."""
        if self.prefilter is not None:
            return self.prefilter
        return self.nodes.get(name, self.absent)

    def histogram(self) -> Counter[str]:
        """How many nodes gave each reason."""
        counts: Counter[str] = Counter()
        if self.prefilter is not None:
            return counts
        for result in self.nodes.values():
            counts.update(result.reasons)
        missing = self.num_all_nodes - len(self.nodes)
        if self.absent is not None and missing > 0:
            for reason in self.absent.reasons:
                counts[reason] += missing
        return counts

    def message(self) -> str:
        """kube-scheduler's FailedScheduling message, without the preemption part."""
        if self.num_all_nodes == 0:
            return NO_NODES_MESSAGE
        text = f"0/{self.num_all_nodes} nodes are available:"
        if self.prefilter is not None:
            return f"{text} {self.prefilter.message}."
        parts = sorted(f"{count} {reason}" for reason, count in self.histogram().items())
        return f"{text} {', '.join(parts)}." if parts else text

    def __str__(self) -> str:
        return self.message()

    def to_json(self) -> dict[str, Any]:
        """``{"nodes": N, "prefilter": ..., "absent": ..., "filtered": [groups]}``; each group
        is a NodeResult's JSON with the sorted ``nodes`` that gave it."""
        groups: dict[NodeResult, list[str]] = {}
        for name, result in self.nodes.items():
            groups.setdefault(result, []).append(name)
        filtered = sorted(
            ({**r.to_json(), "nodes": sorted(names)} for r, names in groups.items()),
            key=lambda g: (g["plugin"], g["reasons"]),
        )
        return {
            "nodes": self.num_all_nodes,
            "prefilter": self.prefilter.to_json() if self.prefilter else None,
            "absent": self.absent.to_json() if self.absent else None,
            "filtered": filtered,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FitError:
        """Raises: ObjectValidationError: ``data`` is not a FitError's JSON."""
        try:
            nodes: dict[str, NodeResult] = {}
            for group in data["filtered"]:
                result = NodeResult.from_json(group)
                for name in group["nodes"]:
                    nodes[str(name)] = result
            prefilter, absent = data.get("prefilter"), data.get("absent")
            return cls(
                int(data["nodes"]),
                NodeResult.from_json(prefilter) if prefilter else None,
                nodes,
                NodeResult.from_json(absent) if absent else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ObjectValidationError):
                raise
            raise ObjectValidationError(f"not a fit error: {exc!r} in {data!r}") from exc
