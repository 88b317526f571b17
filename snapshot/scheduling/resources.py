"""Resource names and exact resource arithmetic, as kube-scheduler's ``framework.Resource``.

`Requests` is what a pod asks of a node, what the pods on a node use together, or what a node
offers (its ``status.allocatable``): CPU in millicores, memory and ephemeral storage in bytes,
a pod count, and every other resource the scheduler checks (the *scalar* resources:
hugepages, extended resources such as ``example.com/gpu``, ``kubernetes.io/``-prefixed native
resources, attachable volumes) by name. Quantities are converted once, rounded up like Go's
``Quantity.MilliValue``/``Value``; the arithmetic is on exact integers.

Which names count follows ``k8s.io/kubernetes/pkg/scheduler/util.IsScalarResourceName`` and
``pkg/apis/core/v1/helper.IsExtendedResourceName``; a name that is none of them (an unqualified
name such as ``gpu``, refused by API validation) is not checked by the scheduler and is dropped
here too (``unsupported.pod_warnings`` names it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from math import ceil
from types import MappingProxyType
from typing import Any, Final

from drasnap.snapshot.k8s.quantity import quantity_value

__all__ = [
    "CPU",
    "DEFAULT_MAX_PODS",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "Requests",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "node_allocatable_requests",
    "requests_from_list",
]

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
PODS: Final = "pods"
DEFAULT_MAX_PODS: Final = 110
"""The kubelet's default ``maxPods``: the pod count of a node that reports none."""

_NO_SCALARS: Mapping[str, int] = MappingProxyType({})
# k8s.io/apimachinery/pkg/util/validation.IsQualifiedName: an optional DNS-1123 subdomain
# prefix, then a name of at most 63 characters.
_NAME_RE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_PREFIX_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _is_qualified_name(text: str) -> bool:
    prefix, slash, name = text.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _PREFIX_RE.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and _NAME_RE.fullmatch(name) is not None


@lru_cache(maxsize=1024)
def is_extended_resource_name(name: str) -> bool:
    """A fully-qualified name outside ``kubernetes.io`` (``IsExtendedResourceName``).

    >>> is_extended_resource_name("example.com/gpu"), is_extended_resource_name("gpu")
    (True, False)
    """
    native = "/" not in name or "kubernetes.io/" in name
    if native or name.startswith("requests."):
        return False
    return _is_qualified_name("requests." + name)


@lru_cache(maxsize=1024)
def is_scalar_resource_name(name: str) -> bool:
    """Whether the scheduler checks ``name`` beyond cpu, memory and ephemeral storage."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


def _value(name: str, value: Fraction) -> int:
    # Go's MilliValue/Value round up (k8s.quantity.milli_value/int_value).
    return ceil(value * 1000) if name == CPU else ceil(value)


@dataclass(frozen=True, slots=True)
class Requests:
    """Exact resource amounts: cpu (millicores), memory and ephemeral storage (bytes), pods,
    and the scalar resources by name (never mutated; zero amounts may be absent).

    >>> a = Requests(cpu=500, scalars={"example.com/gpu": 1})
    >>> (a + a).scalars["example.com/gpu"], (a + a).cpu
    (2, 1000)
    """

    cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    pods: int = 0
    scalars: Mapping[str, int] = field(default_factory=lambda: _NO_SCALARS)

    @property
    def only_cpu_memory(self) -> bool:
        """True when nothing but cpu, memory and the pod count is asked (the fast path)."""
        return not self.scalars and not self.ephemeral_storage

    def scalar(self, name: str) -> int:
        return self.scalars.get(name, 0)

    def fits_on(
        self, have: Requests, used: Requests, left_to_dra: AbstractSet[str] = frozenset()
    ) -> bool:
        """Whether a pod asking these requests fits a node that offers ``have`` and whose pods
        request ``used`` together (``fitsRequest`` in ``pkg/scheduler/framework/plugins/
        noderesources/fit.go``): a free pod slot, and each resource it asks for.

        A resource asked at 0 is not checked, so a pod asking no cpu fits a node whose pods
        already ask more cpu than it has. ``left_to_dra``: scalar resources DRA provides on a
        node that does not advertise them (not checked there). The one home of this rule:
        NodeResourcesFit and the cluster snapshot's shortcuts all ask here.

        >>> have = Requests(cpu=1000, pods=2)
        >>> Requests(cpu=0).fits_on(have, Requests(cpu=1500, pods=1))
        True
        >>> Requests(cpu=1).fits_on(have, Requests(cpu=1500, pods=1))
        False
        >>> Requests().fits_on(have, Requests(pods=2))
        False
        """
        if self.scalars or self.ephemeral_storage:
            return not self._shortfalls(have, used, left_to_dra)
        return self.room_on(have, used)  # most pods: `_shortfalls` without building its list

    def room_on(self, have: Requests, used: Requests) -> bool:
        """`fits_on` of the pod slot, cpu and memory alone: what a node check that does not
        know which scalar resources DRA provides asks (the filters check the rest).

        `_shortfalls`' first three tests (tests/snapshot/scheduling/test_resources.py keeps
        them one rule), as statements: CPython specialises a comparison a jump follows, and
        this runs for every node a pod is tried on.
        """
        if used.pods + 1 > have.pods:
            return False
        cpu = self.cpu
        if cpu > 0 and cpu > have.cpu - used.cpu:
            return False
        memory = self.memory
        if memory > 0 and memory > have.memory - used.memory:  # noqa: SIM103
            return False
        return True

    def shortfalls(
        self, have: Requests, used: Requests, left_to_dra: AbstractSet[str] = frozenset()
    ) -> tuple[str, ...]:
        """The resources `fits_on` finds short, in ``fitsRequest``'s order: ``pods`` (the pod
        slot), cpu, memory, ephemeral storage, then the scalar resources by name (upstream
        walks a Go map: its order is random)."""
        return tuple(self._shortfalls(have, used, left_to_dra))

    def _shortfalls(
        self, have: Requests, used: Requests, left_to_dra: AbstractSet[str]
    ) -> list[str]:
        # A list, not a generator: `fits_on` asks this for every node a pod asking more than
        # cpu and memory is tried on, and the list is empty then. Its first three tests are
        # `room_on`'s.
        short = []
        if used.pods + 1 > have.pods:
            short.append(PODS)
        if self.cpu > 0 and self.cpu > have.cpu - used.cpu:
            short.append(CPU)
        if self.memory > 0 and self.memory > have.memory - used.memory:
            short.append(MEMORY)
        storage = self.ephemeral_storage
        if storage > 0 and storage > have.ephemeral_storage - used.ephemeral_storage:
            short.append(EPHEMERAL_STORAGE)
        if self.scalars:
            for name in sorted(self.scalars):
                amount = self.scalars[name]
                if amount == 0 or (name in left_to_dra and have.scalar(name) <= 0):
                    continue
                if amount > have.scalar(name) - used.scalar(name):
                    short.append(name)
        return short

    def _combine(self, other: Requests, sign: int) -> Requests:
        scalars = self.scalars
        if other.scalars:
            merged = dict(scalars)
            for name, amount in other.scalars.items():
                total = merged.get(name, 0) + sign * amount
                if total:
                    merged[name] = total
                else:
                    merged.pop(name, None)  # zero amounts absent: equal sums compare equal
            scalars = MappingProxyType(merged) if merged else _NO_SCALARS
        return Requests(
            self.cpu + sign * other.cpu,
            self.memory + sign * other.memory,
            self.ephemeral_storage + sign * other.ephemeral_storage,
            self.pods + sign * other.pods,
            scalars,
        )

    def __add__(self, other: Requests) -> Requests:
        return self._combine(other, 1)

    def __sub__(self, other: Requests) -> Requests:
        return self._combine(other, -1)

    def to_json(self) -> dict[str, Any]:
        """The non-zero amounts by resource name (cpu in millicores)."""
        out: dict[str, Any] = {}
        for name, amount in (
            (CPU, self.cpu),
            (MEMORY, self.memory),
            (EPHEMERAL_STORAGE, self.ephemeral_storage),
            (PODS, self.pods),
            *sorted(self.scalars.items()),
        ):
            if amount:
                out[name] = amount
        return out


def requests_from_list(values: Mapping[str, Fraction], *, pods: int = 0) -> Requests:
    """`Requests` from exact values by resource name (``framework.Resource.Add``).

    ``pods`` in ``values`` is ignored (a pod asks for one slot, given as ``pods``); names the
    scheduler does not check are dropped.
    """
    cpu = memory = storage = 0
    scalars: dict[str, int] = {}
    for name, value in values.items():
        if name == CPU:
            cpu = _value(name, value)
        elif name == MEMORY:
            memory = _value(name, value)
        elif name == EPHEMERAL_STORAGE:
            storage = _value(name, value)
        elif name != PODS and is_scalar_resource_name(name):
            scalars[name] = _value(name, value)
    return Requests(
        cpu, memory, storage, pods, MappingProxyType(scalars) if scalars else _NO_SCALARS
    )


def node_allocatable_requests(node: Mapping[str, Any]) -> Requests:
    """What a node offers: ``status.allocatable`` (``status.capacity`` when absent).

    ``pods`` is the allowed pod count (`DEFAULT_MAX_PODS` when the node reports none).
    """
    status = node.get("status") or {}
    alloc = status.get("allocatable") or status.get("capacity") or {}
    values = {str(name): quantity_value(str(text)) for name, text in alloc.items()}
    pods = ceil(values[PODS]) if PODS in values else DEFAULT_MAX_PODS
    return requests_from_list(values, pods=pods)
