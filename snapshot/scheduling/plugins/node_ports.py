"""NodePorts: the host ports a pod asks for must be free on the node.

``pkg/scheduler/framework/plugins/nodeports/node_ports.go`` with ``util.GetHostPorts`` and
``framework.HostPortInfo``: ports with ``hostPort > 0`` of the containers and of the sidecars
(restartable init containers) count; an empty ``hostIP`` means ``0.0.0.0`` and an empty
protocol TCP; a port conflicts with the same protocol and port on the same IP, and ``0.0.0.0``
conflicts with every IP. With ``hostNetwork``, a port's ``hostPort`` defaults to its
``containerPort`` as API defaulting sets it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from drasnap.snapshot.scheduling.framework import SKIP, Proceed, Skip
from drasnap.snapshot.scheduling.pod_requests import restartable
from drasnap.snapshot.scheduling.view import ClusterView, NodeFacts, PodFacts, pod_facts

__all__ = ["ERR_REASON_NODE_PORTS", "HostPort", "NodePorts", "host_ports"]

ERR_REASON_NODE_PORTS: Final = "node(s) didn't have free ports for the requested pod ports"
_ALL_IPS: Final = "0.0.0.0"

HostPort = tuple[str, str, int]
"""``(host IP, protocol, port)``, IP and protocol defaulted."""


def host_ports(pod: PodFacts) -> tuple[HostPort, ...]:
    """The host ports the pod holds on its node (remembered per pod through ``derived``)."""
    spec = pod.spec
    host_network = bool(spec.get("hostNetwork"))
    containers = [c for c in spec.get("initContainers") or () if restartable(c)]
    containers += list(spec.get("containers") or ())
    out: list[HostPort] = []
    for container in containers:
        for port in container.get("ports") or ():
            number = port.get("hostPort") or (port.get("containerPort") if host_network else 0)
            if number and int(number) > 0:
                out.append(
                    (
                        str(port.get("hostIP") or _ALL_IPS),
                        str(port.get("protocol") or "TCP"),
                        int(number),
                    )
                )
    return tuple(out)


def _conflicts(wanted: Iterable[HostPort], used: set[HostPort]) -> bool:
    for ip, protocol, port in wanted:
        if ip == _ALL_IPS:
            if any(p == protocol and n == port for _, p, n in used):
                return True
        elif (ip, protocol, port) in used or (_ALL_IPS, protocol, port) in used:
            return True
    return False


class NodePorts:
    """Refuses nodes where a pod already holds one of the pod's host ports."""

    name: Final = "NodePorts"

    def relevant_for_pod(self, pod: PodFacts) -> bool:
        """A pod asking for host ports (PreFilter skips the rest)."""
        return bool(pod.derived(host_ports))

    def prefilter(self, pod: PodFacts, cluster: ClusterView) -> Skip | Proceed:
        wanted = pod.derived(host_ports)
        return Proceed(wanted) if wanted else SKIP

    def filter(
        self, state: tuple[HostPort, ...], pod: PodFacts, node: NodeFacts, cluster: ClusterView
    ) -> tuple[str, ...] | None:
        used: set[HostPort] = set()
        for other in cluster.pods_on_node(node.name):
            used.update(pod_facts(other).derived(host_ports))
        return (ERR_REASON_NODE_PORTS,) if _conflicts(state, used) else None
