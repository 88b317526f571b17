"""A trace as the timeline consumes it: events in time order, whatever file they came from.

Every reader (:mod:`.jsonl`, and the Alibaba, recorded-cluster and generated traces of
``docs/timelines.md`` 2.10) produces these, checked: a timeline never meets a malformed event
midway, after it has written its starting state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["CREATE", "DELETE", "OPS", "TRACE_KINDS", "Trace", "TraceEvent"]

CREATE: Final = "create"
DELETE: Final = "delete"
OPS: Final = (CREATE, DELETE)

TRACE_KINDS: Final = ("Pod", "ResourceClaim", "ResourceClaimTemplate")
"""The kinds a trace creates and deletes: the workload's side of the cluster. Nodes, slices
and classes belong to the starting cluster and the simulated cloud."""


@dataclass(frozen=True)
class TraceEvent:
    """One create or delete at ``t_ms`` milliseconds from the start.

    ``key`` is ``"namespace/name"`` (the namespace defaults to ``default``); ``object`` is the
    object created (validated, in its ``resource.k8s.io/v1`` form, namespace filled in), or,
    for a delete, the object as the trace names it (namespace filled in). ``runs_ms``: a pod
    completes that long after it is bound (None: it runs until deleted). ``line``: where the
    event was read (the file's line; a generated trace counts its events from 1).
    """

    t_ms: int
    op: str
    kind: str
    key: str
    object: dict[str, Any]
    runs_ms: int | None
    line: int


@dataclass(frozen=True)
class Trace:
    """A checked trace: its events in time order (ties in file order), the SHA-256 of the
    file's bytes (a resumed run must read the same trace), the file's path, and one note per
    normalisation of an object (a ``v1beta1`` claim converted to ``v1``, a number taken as a
    quantity), as ``--from`` notes them."""

    events: tuple[TraceEvent, ...]
    digest: str
    path: str
    notes: tuple[str, ...] = field(default=())
