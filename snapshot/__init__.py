"""DRA objects with cluster-autoscaler semantics on drasnap's versioned store.

Objects are wire-format dicts (camelCase, as ``kubectl get -o json`` prints them), validated
with the official kubernetes client models on the way in. This package knows no SQL: it uses
only what ``store`` exports.
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
