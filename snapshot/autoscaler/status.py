"""The cluster-autoscaler's own words for what one loop did not do: the NotTriggerScaleUp event
of a pod left pending, and the UnremovableReason of a node kept.

Paths are in kubernetes/autoscaler's ``cluster-autoscaler/`` (master a16f0ae8):

- ``processors/status/eventing_scale_up_processor.go``: ``NotTriggerScaleUp`` says
  ``pod didn't trigger scale-up: `` then ``ReasonsMessage``: every reason of every considered
  node group counted (``aggregated[reason]++``, once per group that gave it): the groups that
  rejected the pod, with the failing predicate's reasons
  (``simulator/clustersnapshot/scheduling_error.go``, ``Reasons()``), then the groups skipped
  for all pods (``core/scaleup/orchestrator/skippedreasons.go``); each as
  ``"<count> <reason>"``, joined with ``", "``; or ``max total nodes in cluster reached`` when
  the loop was limited by ``--max-nodes-total``. CA joins them in Go map order, which changes
  from run to run; drasnap sorts them, the most frequent first, then by text, so that an answer
  is reproducible.
- ``simulator/cluster.go``: ``UnremovableReason`` and its names (``NotUnderutilized``,
  ``BlockedByPod``, ...), which CA's status and metrics report for a node it keeps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Final

__all__ = [
    "MAX_SIZE_REACHED",
    "MAX_TOTAL_NODES_REACHED",
    "NOT_READY",
    "NOT_TRIGGER_SCALE_UP",
    "UnremovableReason",
    "not_trigger_scale_up",
    "reasons_message",
]

NOT_TRIGGER_SCALE_UP: Final = "pod didn't trigger scale-up: "
# skippedreasons.go
MAX_SIZE_REACHED: Final = "max node group size reached"
NOT_READY: Final = "not ready for scale-up"
# eventing_scale_up_processor.go, ReasonsMessage with ScaleUpLimitedByMaxNodesTotal
MAX_TOTAL_NODES_REACHED: Final = "max total nodes in cluster reached"


class UnremovableReason(StrEnum):
    """Why the cluster-autoscaler keeps a node (``simulator/cluster.go``, ``UnremovableReason``):
    its constants in their declaration order, each equal to its name as ``String()`` gives it,
    which CA's status and metrics report."""

    NoReason = "NoReason"
    ScaleDownDisabledAnnotation = "ScaleDownDisabledAnnotation"
    ScaleDownUnreadyDisabled = "ScaleDownUnreadyDisabled"
    NotAutoscaled = "NotAutoscaled"
    NotUnneededLongEnough = "NotUnneededLongEnough"
    NotUnreadyLongEnough = "NotUnreadyLongEnough"
    NodeGroupMinSizeReached = "NodeGroupMinSizeReached"
    NodeGroupMaxDeletionCountReached = "NodeGroupMaxDeletionCountReached"
    AtomicScaleDownFailed = "AtomicScaleDownFailed"
    MinimalResourceLimitExceeded = "MinimalResourceLimitExceeded"
    CurrentlyBeingDeleted = "CurrentlyBeingDeleted"
    NotUnderutilized = "NotUnderutilized"
    NotUnneededOtherReason = "NotUnneededOtherReason"
    RecentlyUnremovable = "RecentlyUnremovable"
    NoPlaceToMovePods = "NoPlaceToMovePods"
    BlockedByPod = "BlockedByPod"
    UnexpectedError = "UnexpectedError"
    NoNodeInfo = "NoNodeInfo"
    BlockedByOnCompletionPod = "BlockedByOnCompletionPod"


def reasons_message(
    rejected: Mapping[str, Iterable[str]],
    skipped: Mapping[str, Iterable[str]] | None = None,
    *,
    max_nodes_total: bool = False,
) -> str:
    """CA's ``ReasonsMessage``: ``rejected`` maps each node group that rejected the pod to the
    reasons (a new node's failing predicate reasons), ``skipped`` each group skipped for every
    pod to its reasons.

    >>> reasons_message({"a": ["cannot allocate all claims"], "b": ["cannot allocate all claims"]},
    ...                 {"c": [MAX_SIZE_REACHED]})
    '2 cannot allocate all claims, 1 max node group size reached'
    >>> reasons_message({"a": ["Insufficient cpu", "Insufficient memory"]})
    '1 Insufficient cpu, 1 Insufficient memory'
    """
    if max_nodes_total:
        return MAX_TOTAL_NODES_REACHED
    counts: Counter[str] = Counter()
    for groups in (rejected, skipped or {}):
        for reasons in groups.values():
            counts.update(reasons)  # CA: aggregated[reason]++ for each of a group's Reasons()
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{n} {reason}" for reason, n in ordered)


def not_trigger_scale_up(
    rejected: Mapping[str, Iterable[str]],
    skipped: Mapping[str, Iterable[str]] | None = None,
    *,
    max_nodes_total: bool = False,
) -> str:
    """The NotTriggerScaleUp event's text (``pod didn't trigger scale-up: ...``).

    >>> not_trigger_scale_up({"a": ["Insufficient cpu"]})
    "pod didn't trigger scale-up: 1 Insufficient cpu"
    """
    return NOT_TRIGGER_SCALE_UP + reasons_message(
        rejected, skipped, max_nodes_total=max_nodes_total
    )
