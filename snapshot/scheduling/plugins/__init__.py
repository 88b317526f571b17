"""The scheduler's Filter plugins, one module each, and the order kube-scheduler runs them in.

`default_plugins` is the Filter part of kube-scheduler 1.36's default profile
(``pkg/scheduler/apis/config/v1/default_plugins.go``, DynamicResources inserted before
DefaultPreemption): NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
NodeResourcesFit, (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone: not
simulated, see ``unsupported``), PodTopologySpread, InterPodAffinity, DynamicResources. The
order decides which reason a node that fails several filters reports: the first. A plugin
never imports another, nor the cluster snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet

from drasnap.snapshot.scheduling.framework import FilterPlugin
from drasnap.snapshot.scheduling.plugins.dynamic_resources import DraBackend, DynamicResources
from drasnap.snapshot.scheduling.plugins.inter_pod_affinity import InterPodAffinity
from drasnap.snapshot.scheduling.plugins.node_affinity import NodeAffinity
from drasnap.snapshot.scheduling.plugins.node_name import NodeName
from drasnap.snapshot.scheduling.plugins.node_ports import NodePorts
from drasnap.snapshot.scheduling.plugins.node_resources_fit import NodeResourcesFit
from drasnap.snapshot.scheduling.plugins.node_unschedulable import NodeUnschedulable
from drasnap.snapshot.scheduling.plugins.pod_topology_spread import PodTopologySpread
from drasnap.snapshot.scheduling.plugins.taint_toleration import TaintToleration

__all__ = [
    "DynamicResources",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeName",
    "NodePorts",
    "NodeResourcesFit",
    "NodeUnschedulable",
    "PodTopologySpread",
    "TaintToleration",
    "default_plugins",
]


def default_plugins(
    dra: DraBackend | None = None,
    dra_resource_names: Callable[[], AbstractSet[str]] = frozenset,
) -> list[FilterPlugin]:
    """The filters in kube-scheduler's order; DynamicResources only with a ``dra`` backend.

    ``dra_resource_names`` returns the extended resource names DeviceClasses provide
    (``dra_extended_resource_classes``), which NodeResourcesFit leaves to DRA.
    """
    fit = NodeResourcesFit(dra_resource_names)
    plugins: list[FilterPlugin] = [
        NodeUnschedulable(),
        NodeName(),
        TaintToleration(),
        NodeAffinity(),
        NodePorts(),
        fit,
        PodTopologySpread(),
        InterPodAffinity(),
    ]
    if dra is not None:
        plugins.append(DynamicResources(dra, fit))
    return plugins
