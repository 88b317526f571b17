"""DRA objects with cluster-autoscaler semantics on drasnap's versioned store.

Objects are wire-format dicts (camelCase, as ``kubectl get -o json`` prints them), validated
with the official kubernetes client models on the way in. This package knows no SQL: it uses
only what ``store`` exports (its one SQL text, the ``allocation_events`` view, is handed to the
store to create).

The package, module by module: ``objects`` validates Kubernetes objects and reads their fields,
``manifests`` loads them from YAML and JSON files, ``quantity`` parses quantities and semantic
versions, and ``claims`` and ``pods`` are pure helpers for ResourceClaims (references,
ownership, reservations, allocations) and for pods and nodes (resource fit, claims generated
from templates). ``cel`` evaluates DRA device selectors, ``pools`` gathers the resource pools a
node sees, and ``allocator`` is the structured-parameters allocator. ``dra`` is the DRA snapshot
(claims, slices and classes on a store), served to the scheduler through ``dra_listers`` and
kept fast by the store followers of ``dra_index`` (allocated devices, slice and class lists);
``cluster`` is the cluster snapshot (nodes and pods beside it, scheduling), with the pods-per-node
follower of ``pod_index``. ``allocation_history`` derives allocation events and claim summaries
from a journal, and ``allocation_view`` says the same as an SQL view; ``errors`` is the error
tree.
"""

from snapshot.allocation_history import (
    AllocatedDevice,
    AllocationEvent,
    ClaimSummary,
    allocation_history,
    parse_device,
    summarize_claims,
)
from snapshot.allocation_view import ALLOCATION_EVENTS
from snapshot.allocator import allocate
from snapshot.cluster import ClusterSnapshot
from snapshot.dra import DraSnapshot
from snapshot.dra_listers import (
    CLAIM_KIND,
    CLASS_KIND,
    NON_LOCAL_SLICES_KEY,
    SLICE_KIND,
    DeviceClassLister,
    ResourceClaimTracker,
    ResourceSliceLister,
)
from snapshot.errors import (
    AllocationError,
    AlreadyTrackedError,
    ManifestError,
    NotFoundError,
    ObjectValidationError,
    ReservationError,
    SchedulingError,
    SnapshotError,
)
from snapshot.manifests import Manifests, load_manifests
from snapshot.objects import as_model, validate
from store import register_view

# Every store a process using the snapshot opens for writing holds the allocation_events view.
register_view(ALLOCATION_EVENTS)

__all__ = [
    "AllocatedDevice",
    "AllocationEvent",
    "CLAIM_KIND",
    "ClaimSummary",
    "CLASS_KIND",
    "ClusterSnapshot",
    "NON_LOCAL_SLICES_KEY",
    "SLICE_KIND",
    "DeviceClassLister",
    "DraSnapshot",
    "Manifests",
    "ResourceClaimTracker",
    "ResourceSliceLister",
    "allocate",
    "allocation_history",
    "as_model",
    "load_manifests",
    "parse_device",
    "summarize_claims",
    "validate",
    "AllocationError",
    "AlreadyTrackedError",
    "ManifestError",
    "NotFoundError",
    "ObjectValidationError",
    "ReservationError",
    "SchedulingError",
    "SnapshotError",
]
