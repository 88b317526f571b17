"""Why a pod was left unschedulable, as a run records it: the ``PodFailure`` kind (its SQL view,
``pod_failures``, is in :mod:`drasnap.snapshot.history.views`).

A run that leaves a pod unplaced writes ``PodFailure/<namespace>/<name>`` through the store, so
it is journaled, replays, is read ``--at`` a seq and shows in SQL. The value:

- ``message``: kube-scheduler's FailedScheduling text, ``0/N nodes are available: ...``
  (``snapshot.scheduling.FitError``), over the cluster's nodes when it was recorded;
- ``fit_error``: the same answer with every node's reason (``FitError.to_json``: nodes that
  gave one reason are grouped);
- ``node_groups``: for a scale-up, why a new node of each group would not take the pod either
  (a NodeResult's JSON; ``null`` when a new node would, but the run placed the pod nowhere,
  e.g. that group was not the one chosen);
- ``context``: what the run was doing (``scale-up``, ``autoscale``);
- ``autoscaler`` (autoscale only): the cluster-autoscaler's NotTriggerScaleUp text,
  ``pod didn't trigger scale-up: 2 cannot allocate all claims, 1 max node group size reached``
  (`snapshot.autoscaler.status`).

The view is the snapshot's, as ``allocation_events`` is (registered with the store on import):
one row per recorded failure in each store's current state. Columns: ``store_id``, ``store``,
``pod`` (``namespace/name``), ``pod_namespace``, ``pod_name``, ``message``, ``nodes`` (how
many nodes the message counts), ``context``, ``autoscaler``, ``value`` (the whole record as
JSON text).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.scheduling import FitError, NodeResult

__all__ = ["POD_FAILURE_KIND", "PodFailure"]

POD_FAILURE_KIND: Final = "PodFailure"


@dataclass(frozen=True)
class PodFailure:
    """A recorded answer for one pod: the scheduler's, and per node group for a scale-up."""

    pod: str
    fit_error: FitError
    node_groups: Mapping[str, NodeResult | None] = field(default_factory=dict)
    context: str = ""
    autoscaler: str = ""  # the cluster-autoscaler's NotTriggerScaleUp text, when a loop ran

    @property
    def message(self) -> str:
        return self.fit_error.message()

    def node_reason(self, node: str) -> NodeResult | None:
        """Why node ``node`` was refused (None: the answer does not cover that node)."""
        return self.fit_error.node_result(node)

    def to_json(self) -> dict[str, Any]:
        """The stored value (the module docstring)."""
        return {
            "message": self.message,
            "fit_error": self.fit_error.to_json(),
            "node_groups": {
                g: (r.to_json() if r is not None else None)
                for g, r in sorted(self.node_groups.items())
            },
            "context": self.context,
            # Only when set: the records of runs that have none keep their digests.
            **({"autoscaler": self.autoscaler} if self.autoscaler else {}),
        }

    @classmethod
    def from_json(cls, pod: str, data: Mapping[str, Any]) -> PodFailure:
        """Raises: ObjectValidationError: ``data`` is not a PodFailure's value."""
        if not isinstance(data, Mapping) or "fit_error" not in data:
            raise ObjectValidationError(f"{POD_FAILURE_KIND} {pod}: not a pod failure: {data!r}")
        try:
            groups = data.get("node_groups") or {}
            return cls(
                pod,
                FitError.from_json(data["fit_error"]),
                {g: NodeResult.from_json(r) if r is not None else None for g, r in groups.items()},
                str(data.get("context") or ""),
                str(data.get("autoscaler") or ""),
            )
        except (ObjectValidationError, AttributeError, TypeError) as exc:
            raise ObjectValidationError(f"{POD_FAILURE_KIND} {pod}: {exc}") from exc
