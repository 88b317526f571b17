"""kube-scheduler's Filter plugins as a library: which nodes a pod fits, and why not.

It never imports the cluster snapshot (it sees nodes and pods through ``view``'s protocol) or
``store``.

Implemented (1.36 semantics, each in ``plugins/``; exact upstream reason texts):
NodeUnschedulable (``spec.unschedulable``, the unschedulable-taint toleration), NodeName
(``spec.nodeName``), TaintToleration (NoSchedule/NoExecute taints; ``Equal``/``Exists``
tolerations with key, value and effect), NodeAffinity (``spec.nodeSelector``; required node
affinity: matchExpressions with In, NotIn, Exists, DoesNotExist, Gt, Lt; matchFields
``metadata.name``, which also narrows the nodes tried), NodePorts (host ports of containers
and sidecars, protocol and host IP rules), NodeResourcesFit (requests as ``PodRequests``:
containers summed, init containers max'd, sidecars, pod overhead, pod-level resources;
cpu, memory, ephemeral-storage, hugepages, extended and other scalar resources, pod count;
DRA-backed extended resources left to DRA), PodTopologySpread (DoNotSchedule: maxSkew,
topologyKey, labelSelector, matchLabelKeys, minDomains, nodeAffinityPolicy,
nodeTaintsPolicy), InterPodAffinity (required affinity and anti-affinity: labelSelector,
namespaces, namespaceSelector, matchLabelKeys, mismatchLabelKeys, topologyKey; placed pods'
anti-affinity; the first pod of a group), and DynamicResources whole (PreFilter, Filter and
the placement Reserve writes, with upstream's reasons; the cluster snapshot gives it the
claims, slices and classes and runs the allocator for it, as upstream's ``SharedDRAManager``:
``plugins.dynamic_resources.DraManager``).

Scoring (module ``scoring``, not re-exported here): the default profile's Score plugins and
weights, ``scores``/``best_node`` over a pod's feasible nodes, ``unsupported_scoring`` for
what it does not model (PodTopologySpread's system default constraints).

Warned about by ``pod_warnings`` (see ``unsupported``): scheduling gates, volumes needing the
volume plugins, RuntimeClass lookups, other scheduler names, comparison tolerations, node
declared features, resource names the scheduler ignores, malformed node affinity terms,
namespace selectors on unknown namespace labels.

Differences from kube-scheduler, on purpose: a node without ``status.allocatable`` offers its
``status.capacity`` (and 110 pods when it states none); scalar resources are checked in name
order, not Go's random map order; the ``preemption: ...`` part of the FailedScheduling
message is never added (the cluster-autoscaler does not preempt).

Use: ``cycle = PodCycle(default_plugins(...), pod, cluster)`` once per pod and cluster state;
``cycle.filter(name)`` per node tried; ``cycle.fit_error()`` for the
``0/N nodes are available: ...`` answer, whose ``to_json`` goes to the journal. Each plugin
declares which pods and nodes it can refuse (``relevance``); `Relevance`, built from the same
list, tells a caller's shortcut which pods and nodes need no filter run.
"""

from drasnap.snapshot.scheduling.fit_error import NO_NODES_MESSAGE, FitError, NodeResult
from drasnap.snapshot.scheduling.framework import (
    SKIP,
    FilterPlugin,
    PodCycle,
    Proceed,
    Reject,
    Skip,
)
from drasnap.snapshot.scheduling.plugins import (
    DynamicResources,
    InterPodAffinity,
    NodeAffinity,
    NodeName,
    NodePorts,
    NodeResourcesFit,
    NodeUnschedulable,
    PodTopologySpread,
    TaintToleration,
    default_plugins,
)
from drasnap.snapshot.scheduling.plugins.dynamic_resources import (
    CANNOT_ALLOCATE_ALL_CLAIMS,
    CLAIM_IN_USE,
    CLAIM_NOT_AVAILABLE_ON_NODE,
    DraBackend,
    DraFilter,
    DraManager,
    DraState,
    Placement,
    PreparedPod,
    available_on,
)
from drasnap.snapshot.scheduling.plugins.node_resources_fit import (
    Fit,
    dra_extended_resource_classes,
)
from drasnap.snapshot.scheduling.pod_requests import (
    ExtendedResourceRequest,
    compute_pod_requests,
    extended_resource_requests,
)
from drasnap.snapshot.scheduling.relevance import Relevance
from drasnap.snapshot.scheduling.resources import Requests, node_allocatable_requests
from drasnap.snapshot.scheduling.unsupported import pod_warnings, spec_warnings, warning_lines
from drasnap.snapshot.scheduling.view import (
    NAMESPACE_NAME_LABEL,
    ClusterView,
    NodeFacts,
    PodFacts,
    StaticCluster,
    node_facts,
    pod_facts,
    share_pod_facts,
)

__all__ = [
    "CANNOT_ALLOCATE_ALL_CLAIMS",
    "CLAIM_IN_USE",
    "CLAIM_NOT_AVAILABLE_ON_NODE",
    "NAMESPACE_NAME_LABEL",
    "NO_NODES_MESSAGE",
    "SKIP",
    "ClusterView",
    "DraBackend",
    "DraFilter",
    "DraManager",
    "DraState",
    "DynamicResources",
    "ExtendedResourceRequest",
    "FilterPlugin",
    "Fit",
    "FitError",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeFacts",
    "NodeName",
    "NodePorts",
    "NodeResourcesFit",
    "NodeResult",
    "NodeUnschedulable",
    "Placement",
    "PodCycle",
    "PodFacts",
    "PodTopologySpread",
    "PreparedPod",
    "Proceed",
    "Reject",
    "Relevance",
    "Requests",
    "Skip",
    "StaticCluster",
    "TaintToleration",
    "available_on",
    "compute_pod_requests",
    "default_plugins",
    "dra_extended_resource_classes",
    "extended_resource_requests",
    "node_allocatable_requests",
    "node_facts",
    "pod_facts",
    "pod_warnings",
    "share_pod_facts",
    "spec_warnings",
    "warning_lines",
]
