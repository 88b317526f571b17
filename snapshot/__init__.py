"""DRA objects with cluster-autoscaler semantics on drasnap's versioned store.

Objects are wire-format dicts (camelCase, as ``kubectl get -o json`` prints them), validated
with the official kubernetes client models on the way in. This package knows no SQL: it uses
only what ``store`` exports (its SQL texts, the ``allocation_events`` and ``pod_failures``
views, are handed to the store to create).

The package, module by module.

Objects from outside: ``kinds`` (kind names, API versions, the one ``namespace/name`` key),
``objects`` (accessors of wire dicts), ``validation`` (the client models, quantities, names the
API server refuses), ``conversion`` (older ``resource.k8s.io`` versions to v1), ``workloads``
(Deployments, ReplicaSets, StatefulSets, Jobs to their pods), ``manifests`` and
``manifest_reader`` (files and kubectl dumps in), ``references`` (what a set of DRA objects must
satisfy together before a run writes them), ``quantity`` and ``semver`` (values as CEL sees
them), and ``claims`` and ``pods`` (pure helpers for ResourceClaims and for pods and nodes).

Allocation: ``features`` (Kubernetes 1.36's feature gates), ``cel`` and ``cel_library`` (DRA
device selectors), ``node_selectors`` (core/v1 NodeSelectors against a node), ``taint_rules``
(DeviceTaintRules applied to slices), ``allocator`` (the structured-parameters allocator) and
its parts in ``allocation`` (pools, requests, search, constraints, capacity, the allocated
state, results, and which fields are implemented, ignored or refused).

Autoscaling: ``autoscaler`` holds one cluster-autoscaler loop's algorithms on a cluster
snapshot: the binpacking estimator, the expanders, the drain rules and node utilization.

Snapshots: ``dra`` is the DRA snapshot (claims, slices and classes on a store), served to the
scheduler through ``dra_listers`` and kept fast by the store followers of ``dra_index``
(allocated devices, slice and class lists); ``cluster`` is the cluster snapshot (nodes and pods
beside it, scheduling), with the pods-per-node follower of ``pod_index``, the follower of
``node_index`` (what the cheap pre-checks read per node), the ``placement`` index (which nodes
could hold a pod, found without visiting the full ones) and the scheduler's claim for
DRA-backed extended resources in ``extended_claims``; ``scheduling`` holds
kube-scheduler's Filter plugins and its "why not here" message. ``allocation_history`` derives
allocation events and claim summaries from a journal, and ``allocation_view`` says the same as an
SQL view; ``pod_failures`` is the record a run keeps of a pod it could not place, with its SQL
view; ``errors`` is the error tree.
"""

from snapshot.allocation.fields import check_supported, unsupported_fields
from snapshot.allocation.ignored import ignored_fields
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
from snapshot.conversion import convert_to_v1
from snapshot.dra import DraSnapshot
from snapshot.dra_listers import (
    DeviceClassLister,
    ResourceClaimTracker,
    ResourceSliceLister,
)
from snapshot.errors import (
    AllocationError,
    AlreadyTrackedError,
    FeatureGateError,
    ManifestError,
    NotFoundError,
    ObjectValidationError,
    ReservationError,
    SchedulingError,
    SnapshotError,
)
from snapshot.features import (
    FEATURE_GATES,
    KUBERNETES_VERSION,
    FeatureGate,
    parse_feature_gates,
    resolve_feature_gates,
)
from snapshot.kinds import (
    CLAIM_KIND,
    CLASS_KIND,
    NON_LOCAL_SLICES_KEY,
    SLICE_KIND,
    key_of,
    object_key,
)
from snapshot.manifests import Manifests, load_manifests, parse_manifests
from snapshot.pod_failures import POD_FAILURE_KIND, POD_FAILURES_VIEW, PodFailure
from snapshot.taint_rules import apply_device_taint_rules
from snapshot.validation import as_model, validate
from store import register_view

# Every store a process using the snapshot opens for writing holds the allocation_events view.
register_view(ALLOCATION_EVENTS)
register_view(POD_FAILURES_VIEW)  # (after it: a view may read only those registered before)

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
    "FEATURE_GATES",
    "FeatureGate",
    "KUBERNETES_VERSION",
    "Manifests",
    "POD_FAILURE_KIND",
    "PodFailure",
    "ResourceClaimTracker",
    "ResourceSliceLister",
    "allocate",
    "allocation_history",
    "apply_device_taint_rules",
    "convert_to_v1",
    "key_of",
    "object_key",
    "as_model",
    "check_supported",
    "ignored_fields",
    "load_manifests",
    "parse_manifests",
    "parse_device",
    "parse_feature_gates",
    "resolve_feature_gates",
    "summarize_claims",
    "unsupported_fields",
    "validate",
    "AllocationError",
    "AlreadyTrackedError",
    "FeatureGateError",
    "ManifestError",
    "NotFoundError",
    "ObjectValidationError",
    "ReservationError",
    "SchedulingError",
    "SnapshotError",
]
