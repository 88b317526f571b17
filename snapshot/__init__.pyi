"""The public names of drasnap.snapshot (loaded lazily by __init__.py; mypy reads this)."""

from .allocation.allocator import allocate
from .allocation.fields import check_supported, unsupported_fields
from .allocation.ignored import ignored_fields
from .allocation.taint_rules import apply_device_taint_rules
from .cluster.snapshot import ClusterSnapshot
from .controllers.claim_templates import claims_from_templates
from .dra.listers import DeviceClassLister, ResourceClaimTracker, ResourceSliceLister
from .dra.snapshot import DraSnapshot
from .errors import (
    AllocationError,
    AlreadyTrackedError,
    ApiError,
    ArgumentError,
    CaptureError,
    FeatureGateError,
    ForbiddenError,
    ManifestError,
    NotFoundError,
    ObjectValidationError,
    ReservationError,
    RunFailedError,
    RunInterrupted,
    ScenarioError,
    SchedulingError,
    SnapshotError,
    SweepFileError,
    UtilizationError,
)
from .history.allocations import (
    FATES,
    AllocatedDevice,
    AllocationEvent,
    ClaimSummary,
    allocation_history,
    parse_device,
    summarize_claims,
)
from .history.pod_failures import POD_FAILURE_KIND, PodFailure
from .history.views import ALLOCATION_EVENTS, POD_FAILURES_VIEW
from .ingest.conversion import convert_to_v1
from .ingest.manifests import Manifests, load_manifests, parse_manifests
from .k8s.features import (
    FEATURE_GATES,
    KUBERNETES_VERSION,
    FeatureGate,
    parse_feature_gates,
    resolve_feature_gates,
)
from .k8s.kinds import (
    CLAIM_KIND,
    CLASS_KIND,
    NON_LOCAL_SLICES_KEY,
    POD_KIND,
    SLICE_KIND,
    key_of,
    object_key,
)
from .k8s.objects import KubeObject
from .live.capture import (
    CAPTURED_KINDS,
    Capture,
    RawClient,
    capture,
    cluster_role,
)
from .live.connect import connect
from .live.files import MANIFEST_NAME, PRIORITY_FILE, manifest_of, write_capture, write_lists
from .live.record import RECORD_KIND, Recorder, RecordSummary
from .live.redact import Redactor
from .scheduling import FitError, NodeResult
from .validation import as_model, validate

__all__ = [
    "ALLOCATION_EVENTS",
    "CAPTURED_KINDS",
    "CLAIM_KIND",
    "CLASS_KIND",
    "FATES",
    "FEATURE_GATES",
    "KUBERNETES_VERSION",
    "MANIFEST_NAME",
    "NON_LOCAL_SLICES_KEY",
    "POD_FAILURES_VIEW",
    "POD_FAILURE_KIND",
    "POD_KIND",
    "PRIORITY_FILE",
    "RECORD_KIND",
    "SLICE_KIND",
    "AllocatedDevice",
    "AllocationError",
    "AllocationEvent",
    "AlreadyTrackedError",
    "ApiError",
    "ArgumentError",
    "Capture",
    "CaptureError",
    "ClaimSummary",
    "ClusterSnapshot",
    "DeviceClassLister",
    "DraSnapshot",
    "FeatureGate",
    "FeatureGateError",
    "FitError",
    "ForbiddenError",
    "KubeObject",
    "ManifestError",
    "Manifests",
    "NodeResult",
    "NotFoundError",
    "ObjectValidationError",
    "PodFailure",
    "RawClient",
    "RecordSummary",
    "Recorder",
    "Redactor",
    "ReservationError",
    "ResourceClaimTracker",
    "ResourceSliceLister",
    "RunFailedError",
    "RunInterrupted",
    "ScenarioError",
    "SchedulingError",
    "SnapshotError",
    "SweepFileError",
    "UtilizationError",
    "allocate",
    "allocation_history",
    "apply_device_taint_rules",
    "as_model",
    "capture",
    "check_supported",
    "claims_from_templates",
    "cluster_role",
    "connect",
    "convert_to_v1",
    "ignored_fields",
    "key_of",
    "load_manifests",
    "manifest_of",
    "object_key",
    "parse_device",
    "parse_feature_gates",
    "parse_manifests",
    "resolve_feature_gates",
    "summarize_claims",
    "unsupported_fields",
    "validate",
    "write_capture",
    "write_lists",
]
