"""Errors raised by the snapshot package.

The tree::

    SnapshotError                      base of everything raised by snapshot/
    ├── ObjectValidationError          an object from outside fails validation (also ValueError)
    │   └── ManifestError              a manifest file cannot be read or parsed
    ├── NotFoundError                  a claim, class, node or pod is not tracked (also KeyError)
    ├── AlreadyTrackedError            adding something that is already there
    ├── ReservationError               a claim cannot take one more reservation
    ├── AllocationError                the allocator hit what upstream treats as an error
    ├── FeatureGateError               an unknown feature gate or a bad --feature-gates value
    ├── ArgumentError                  an argument of the wrong shape or value (a device
    │                                  written wrong, an unknown fate, a malformed allocated
    │                                  state, an index outside a sweep's points; also
    │                                  ValueError)
    ├── SchedulingError                a pod cannot be placed (cluster snapshot)
    ├── UtilizationError               a node's utilization cannot be computed (as upstream:
    │                                  the caller skips the node)
    ├── CaptureError                   a live cluster could not be captured or recorded (no
    │   │                              kubeconfig, no answer, an answer that is not JSON)
    │   ├── ApiError                   the API server answered with an error status
    │   └── ForbiddenError             403: the credentials may not list or watch a kind
    │                                  (names the ClusterRole that would allow the capture)
    ├── ScenarioError                  a simulation cannot start or go on (bad settings, sizes,
    │   │                              manifests without what the scenario needs, a run that
    │   │                              cannot be resumed)
    │   └── SweepFileError             a what-if sweep's file is wrong (names file and field)
    └── RunFailedError                 a run stopped on an error found while it ran; it is
                                       recorded as failed and blocks no other run

``RunInterrupted`` is not an error: a signal asked the run to stop, and it stopped at a step
boundary with everything saved (the command line exits 128 + the signal's number).

Messages follow cluster-autoscaler's wording where it has one
(``cluster-autoscaler/simulator/dynamicresources/snapshot/``), and name the
object (kind, namespace/name) and the field. A message that quotes another library's
(YAML's, the kubernetes client's) puts it on one line first (:func:`one_line`).
"""

from __future__ import annotations

__all__ = [
    "AllocationError",
    "AlreadyTrackedError",
    "ApiError",
    "ArgumentError",
    "CaptureError",
    "FeatureGateError",
    "ForbiddenError",
    "ManifestError",
    "NotFoundError",
    "ObjectValidationError",
    "ReservationError",
    "RunFailedError",
    "RunInterrupted",
    "ScenarioError",
    "SchedulingError",
    "SnapshotError",
    "SweepFileError",
    "UtilizationError",
    "one_line",
]


def one_line(text: object) -> str:
    """``text`` (an exception, say) as one line: every run of whitespace, newlines included,
    becomes one space, and the ends are trimmed.

    >>> one_line("while parsing\\n  in '<unicode string>', line 2")
    "while parsing in '<unicode string>', line 2"
    """
    return " ".join(str(text).split())


class SnapshotError(Exception):
    """Base class of every error raised by ``snapshot``."""


class ObjectValidationError(SnapshotError, ValueError):
    """An object that entered from outside is not a valid Kubernetes object.

    Attributes name where it came from (``source``: file and document index, or ``None``),
    the object (``kind``, ``namespace``, ``name``) and the field path (``field``).
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        kind: str | None = None,
        namespace: str | None = None,
        name: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.source = source
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.field = field


class ManifestError(ObjectValidationError):
    """A manifest file cannot be read, or is not YAML/JSON of Kubernetes objects."""


class NotFoundError(SnapshotError, KeyError):
    """A claim, device class, node or pod is not tracked in the snapshot."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want the sentence as is
        return str(self.args[0]) if self.args else ""


class AlreadyTrackedError(SnapshotError):
    """Adding a claim, node or node's slices that the snapshot already holds."""


class ReservationError(SnapshotError):
    """A claim already has the maximum number of reservations."""


class AllocationError(SnapshotError):
    """The allocator hit what upstream treats as an error (bad CEL, unknown class, ...), or an
    input uses a field drasnap does not implement.

    For the latter, ``kind``, ``name`` and ``field`` (a wire path such as
    ``spec.devices[0].nodeAllocatableResources``) say which object and field; otherwise they
    are None.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str | None = None,
        name: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name
        self.field = field


class FeatureGateError(SnapshotError, ValueError):
    """An unknown feature gate, a value that is not a bool, or bad ``--feature-gates`` syntax.

    ``gate`` names the gate concerned (as written by the user).
    """

    def __init__(self, message: str, *, gate: str | None = None) -> None:
        super().__init__(message)
        self.gate = gate


class ArgumentError(SnapshotError, ValueError):
    """An argument of the wrong shape or value: a device not written ``DRIVER/POOL/DEVICE``,
    an unknown fate, an allocated-state entry or a kind the allocator does not read, an index
    outside a sweep's points."""


class SchedulingError(SnapshotError):
    """A pod cannot be scheduled on a node (cluster snapshot)."""


class UtilizationError(SnapshotError):
    """A node's utilization cannot be computed (upstream returns an error: the node is
    skipped)."""


class CaptureError(SnapshotError):
    """The cluster could not be captured (the message says what was asked and why)."""


class ApiError(CaptureError):
    """The API server answered a request with an error status."""

    def __init__(self, message: str, status: int, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class ForbiddenError(CaptureError):
    """403: the credentials may not ``verb`` the ``resource``; :attr:`cluster_role` would."""

    def __init__(self, message: str, verb: str, resource: str, cluster_role: str) -> None:
        super().__init__(message)
        self.verb = verb
        self.resource = resource
        self.cluster_role = cluster_role


class ScenarioError(SnapshotError):
    """A simulation cannot start or go on (bad settings, wrong database, nothing to resume)."""


class SweepFileError(ScenarioError):
    """The sweep file is wrong; the message names the file and the field."""


class RunFailedError(SnapshotError):
    """A run stopped on an error found while it ran; it is recorded as failed."""


class RunInterrupted(Exception):
    """A signal asked the run to stop; it stopped at a step boundary, saved."""

    def __init__(self, signal_number: int, step: int, total: int) -> None:
        super().__init__(f"stopped by signal {signal_number} after step {step} of {total}")
        self.signal_number = signal_number
        self.step = step
        self.total = total
