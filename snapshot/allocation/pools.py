"""Resource pools as one node sees them: which ResourceSlices count, and which devices are usable.

Mirrors ``GatherPools`` of ``k8s.io/dynamic-resource-allocation/structured`` (experimental
variant, ``internal/experimental/pools_experimental.go``): pools sorted by (driver, pool), with
the pools that hold a device with binding conditions last; slices sorted by name.

With ``DRAPartitionableDevices`` on, slices that publish ``sharedCounters`` hold counter sets
(not devices), devices of a ``perDeviceNodeSelection`` slice each say which nodes they serve,
and a pool whose counter sets are duplicated or referenced wrongly is invalid. With it off,
such slices are skipped, as upstream does.

Caching assumption: ResourceSlice dicts are immutable values in this project (never mutated
after creation). Per-slice data (parsed pool fields, device records with their CEL activation
and selector results) is therefore cached by the slice's identity; the cache keeps a reference
to the slice so that its ``id()`` cannot be reused while the entry lives.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeAlias, TypeVar

from drasnap.snapshot.allocation.fields import check_object
from drasnap.snapshot.cel.engine import DeviceActivation, device_activation
from drasnap.snapshot.errors import AllocationError, ObjectValidationError
from drasnap.snapshot.k8s.claims import DeviceID
from drasnap.snapshot.k8s.node_selectors import node_selector_matches
from drasnap.snapshot.k8s.objects import raw_name
from drasnap.snapshot.k8s.quantity import quantity_value

__all__ = [
    "Device",
    "Pool",
    "PoolKey",
    "SliceInfo",
    "device_node_matches",
    "gather_pools",
    "newest_generation",
    "node_selector_matches",
    "parse_quantity",
    "pool_fields",
    "slice_info",
]

#: (driver, pool name)
PoolKey: TypeAlias = tuple[str, str]
_Slice = TypeVar("_Slice", bound=Mapping[str, Any])

#: counter set name -> counter name -> value
CounterSets = dict[str, dict[str, Fraction]]

_SLICE_CACHE_LIMIT = 200_000
_slice_cache: dict[int, SliceInfo] = {}
# Pools complete from the node's view depend only on their slices: built once per slice set.
_POOL_CACHE_LIMIT = 100_000
_pool_cache: dict[tuple[bool, tuple[int, ...]], tuple[list[SliceInfo], Pool]] = {}
_BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def parse_quantity(text: object, where: str) -> Fraction:
    """The exact value of a quantity field, or an `AllocationError` naming ``where``."""
    try:
        return quantity_value(str(text))
    except ObjectValidationError as exc:
        raise AllocationError(f"{where}: {exc}") from exc


@dataclass(slots=True, eq=False)
class Device:
    """One device of a ResourceSlice, with what the allocator caches about it."""

    id: DeviceID  # (driver, pool, device name)
    spec: Mapping[str, Any]  # the device's wire dict
    slice: SliceInfo
    # The NoSchedule/NoExecute taints (other effects never prevent an allocation).
    taints: tuple[Mapping[str, Any], ...]
    # consumesCounters entries (a partitionable device), empty otherwise.
    consumes: Sequence[Mapping[str, Any]]
    multi: bool  # allowMultipleAllocations
    binding: bool  # has binding conditions
    # Selector expression -> result; valid across calls because the slice never changes.
    matches: dict[str, bool] = field(default_factory=dict)
    # Parsed capacity and counters, filled on first use by the allocator.
    parsed_capacity: Any = None
    capacity_policy: bool | None = None
    parsed_consumes: Any = None
    _activation: DeviceActivation | None = None

    @property
    def name(self) -> str:
        return self.id[2]

    def activation(self) -> DeviceActivation:
        """The CEL ``device`` variable, built on first use."""
        if self._activation is None:
            spec = self.spec
            self._activation = device_activation(
                self.id[0],
                spec.get("attributes") or {},
                spec.get("capacity") or {},
                bool(spec.get("allowMultipleAllocations", False)),
            )
        return self._activation

    def counters(self) -> tuple[tuple[str, dict[str, Fraction]], ...]:
        """``consumesCounters`` as (counter set, {counter: value}), parsed once."""
        if self.parsed_consumes is None:
            where = f"device {'/'.join(self.id)}"
            self.parsed_consumes = tuple(
                (
                    str(entry.get("counterSet", "")),
                    {
                        str(name): parse_quantity(
                            (counter or {}).get("value"), f"{where}: counter {name}"
                        )
                        for name, counter in (entry.get("counters") or {}).items()
                    },
                )
                for entry in self.consumes
            )
        return self.parsed_consumes  # type: ignore[no-any-return]


@dataclass(slots=True, eq=False)
class SliceInfo:
    """The fields of a ResourceSlice that pool gathering needs, parsed once."""

    raw: Mapping[str, Any]
    name: str
    driver: str
    pool: str
    generation: int
    count: int
    node_name: str | None
    all_nodes: bool
    node_selector: Mapping[str, Any] | None
    per_device: bool  # perDeviceNodeSelection: true
    shared_counters: tuple[Mapping[str, Any], ...]
    # Uses DRAPartitionableDevices (perDeviceNodeSelection set, or sharedCounters): skipped
    # when that gate is off, as upstream does.
    partitionable: bool
    devices: list[Device] = field(default_factory=list)
    binding: bool = False  # some device has bindingConditions (even empty)
    consumes: bool = False  # some device consumes counters
    parsed_counters: list[tuple[str, dict[str, Fraction]]] | None = None

    def counter_sets(self) -> list[tuple[str, dict[str, Fraction]]]:
        """``sharedCounters`` as (counter set, {counter: value}), parsed once."""
        if self.parsed_counters is None:
            self.parsed_counters = [
                (
                    str(entry.get("name", "")),
                    {
                        str(counter): parse_quantity(
                            (value or {}).get("value"),
                            f"ResourceSlice {self.name}: counter set {entry.get('name')}, "
                            f"counter {counter}",
                        )
                        for counter, value in (entry.get("counters") or {}).items()
                    },
                )
                for entry in self.shared_counters
            ]
        return self.parsed_counters


_NO_SLICES: tuple[SliceInfo, ...] = ()
_NO_COUNTERS: CounterSets = {}


class Pool:
    """A resource pool of the node: usable devices in search order, or why there are none.

    Built once per set of slices and shared between allocations: never mutated once built.
    """

    __slots__ = (
        "binding",
        "candidates",
        "counter_sets",
        "counter_slices",
        "devices",
        "driver",
        "incomplete",
        "invalid",
        "name",
        "other_slices",
        "slices",
    )

    def __init__(
        self,
        driver: str,
        name: str,
        *,
        incomplete: bool = False,
        invalid: bool = False,
        slices: Sequence[SliceInfo] = _NO_SLICES,
        other_slices: Sequence[SliceInfo] = _NO_SLICES,
    ) -> None:
        self.driver = driver
        self.name = name
        self.incomplete = incomplete
        self.invalid = invalid
        self.slices = slices
        # DRAPartitionableDevices: the pool's counter sets, and its device slices that do not
        # target this node (their allocated devices consume counters too).
        self.other_slices = other_slices
        self.counter_sets = _NO_COUNTERS
        self.counter_slices: Sequence[SliceInfo] = _NO_SLICES
        self.devices: list[Device] = []
        # (device, pool) for each device: the search's candidates, built once.
        self.candidates: list[tuple[Device, Pool]] = []
        self.binding = False  # some device has bindingConditions: tried after the other pools

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _blocking(taints: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple(t for t in taints if t.get("effect") in _BLOCKING_EFFECTS)


def pool_fields(raw: Mapping[str, Any]) -> tuple[PoolKey, int, int]:
    """A ResourceSlice's pool: (driver, pool name), its generation and its resourceSliceCount.

    An absent number reads as Go's zero value, 0, as upstream reads ``Spec.Pool`` (the
    allocator's ``GatherPools`` and the cluster-autoscaler's utilization both compare the
    slices found with ``ResourceSliceCount`` as it is): a slice that does not say how many
    slices its pool has makes the pool incomplete.
    """
    spec = raw.get("spec") or {}
    pool = spec.get("pool") or {}
    key = (str(spec.get("driver", "")), str(pool.get("name", "")))
    return key, int(pool.get("generation", 0) or 0), int(pool.get("resourceSliceCount", 0) or 0)


def newest_generation(slices: Iterable[_Slice]) -> dict[PoolKey, tuple[list[_Slice], int]]:
    """Per pool of ``slices``: the slices of its newest generation, and the resourceSliceCount
    the first of them declares (`pool_fields`). The pool is complete within ``slices`` when
    that count is their number."""
    newest: dict[PoolKey, tuple[int, list[_Slice], int]] = {}
    for raw in slices:
        key, generation, count = pool_fields(raw)
        seen = newest.get(key)
        if seen is None or generation > seen[0]:
            newest[key] = (generation, [raw], count)
        elif generation == seen[0]:
            seen[1].append(raw)
    return {key: (found, count) for key, (_, found, count) in newest.items()}


def slice_info(raw: Mapping[str, Any]) -> SliceInfo:
    """Parsed view of one ResourceSlice, cached by identity (see the module docstring)."""
    info = _slice_cache.get(id(raw))
    if info is not None and info.raw is raw:
        return info
    spec = raw.get("spec") or {}
    (driver, pool_name), generation, count = pool_fields(raw)
    shared = tuple(spec.get("sharedCounters") or ())
    info = SliceInfo(
        raw=raw,
        name=raw_name(raw),
        driver=driver,
        pool=pool_name,
        generation=generation,
        count=count,
        node_name=spec.get("nodeName") or None,
        all_nodes=bool(spec.get("allNodes", False)),
        node_selector=spec.get("nodeSelector"),
        per_device=bool(spec.get("perDeviceNodeSelection")),
        shared_counters=shared,
        partitionable=spec.get("perDeviceNodeSelection") is not None or bool(shared),
    )
    devices = []
    for d in spec.get("devices") or ():
        taints = d.get("taints")
        consumes = d.get("consumesCounters") or ()
        conditions = d.get("bindingConditions")
        devices.append(
            Device(
                (driver, pool_name, str(d.get("name", ""))),
                d,
                info,
                _blocking(taints) if taints else (),
                consumes,
                bool(d.get("allowMultipleAllocations")),
                bool(conditions),
            )
        )
        if consumes:
            info.consumes = True
        if conditions is not None:
            info.binding = True
    info.devices = devices
    if len(_slice_cache) >= _SLICE_CACHE_LIMIT:
        _slice_cache.clear()
    _slice_cache[id(raw)] = info
    return info


def _matches_node(
    node_name_to_match: str | None,
    all_nodes: bool,
    selector: Mapping[str, Any] | None,
    node_name: str,
    labels: Mapping[str, str],
) -> bool:
    """Upstream's ``NodeMatches``: a node name, all nodes, or a node selector."""
    if node_name_to_match:
        return node_name_to_match == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node_selector_matches(selector, node_name, labels)
    return False


def device_node_matches(device: Device, node_name: str, labels: Mapping[str, str]) -> bool:
    """Whether a device of a ``perDeviceNodeSelection`` slice serves the node.

    Raises:
        AllocationError: the device's node selector is malformed.
    """
    spec = device.spec
    try:
        return _matches_node(
            spec.get("nodeName"),
            bool(spec.get("allNodes")),
            spec.get("nodeSelector"),
            node_name,
            labels,
        )
    except AllocationError as exc:
        raise AllocationError(
            f"failed to perform node selection for device {device.name} in slice "
            f"{device.slice.name}: {exc}"
        ) from exc


def _relevant(info: SliceInfo, node_name: str, labels: Mapping[str, str]) -> bool:
    if info.node_name or info.all_nodes or info.node_selector is not None:
        try:
            return _matches_node(
                info.node_name, info.all_nodes, info.node_selector, node_name, labels
            )
        except AllocationError as exc:
            raise AllocationError(
                f"failed to perform node selection for slice {info.name}: {exc}"
            ) from exc
    if info.per_device:
        return any(device_node_matches(d, node_name, labels) for d in info.devices)
    return False  # none of them set: some future extension, ignored


# --- gathering ------------------------------------------------------------------------------


def gather_pools(
    slices: Iterable[Mapping[str, Any]],
    node_name: str,
    labels: Mapping[str, str],
    *,
    partitionable: bool = True,
) -> list[Pool]:
    """The pools with devices reachable from the node, sorted by (driver, pool name), the pools
    holding devices with binding conditions last.

    Only the newest generation of a pool counts. A pool whose slices are not all published is
    ``incomplete`` (or dropped as obsolete when another node already sees a newer generation);
    a pool with a device name listed twice, a duplicated counter set, or a device consuming a
    counter its pool does not declare is ``invalid``. Neither yields devices.
    ``partitionable`` is the DRAPartitionableDevices gate.

    Raises:
        AllocationError: a slice's or device's node selector is malformed (message prefixed
            ``gather pool information:`` as upstream's).
    """
    cache = _slice_cache
    infos = []
    by_pool: dict[tuple[str, str], list[SliceInfo]] = {}
    try:
        for raw in slices:
            # Hot loop (every node of every scheduling attempt): inline the cache hit and the
            # common "local to another node" case.
            info = cache.get(id(raw))
            if info is None or info.raw is not raw:
                info = slice_info(raw)
            infos.append(info)
            if info.partitionable and not partitionable:
                continue
            if info.node_name is not None:
                if info.node_name != node_name:
                    continue
            elif not _relevant(info, node_name, labels):
                continue
            key = (info.driver, info.pool)
            current = by_pool.get(key)
            if current is None or info.generation > current[0].generation:
                by_pool[key] = [info]
            elif info.generation == current[0].generation:
                current.append(info)
    except AllocationError as exc:
        raise AllocationError(f"gather pool information: {exc}") from exc
    pools = []
    for (driver, name), found in sorted(by_pool.items(), key=lambda item: item[0]):
        if len(found) == found[0].count:
            cached = _pool_cache.get((partitionable, tuple(map(id, found))))
            if cached is not None and all(map(operator.is_, cached[0], found)):
                pools.append(cached[1])
                continue
        pool = _build_pool(driver, name, found, infos, partitionable)
        if pool is None:
            continue
        if len(found) == found[0].count:
            if len(_pool_cache) >= _POOL_CACHE_LIMIT:
                _pool_cache.clear()
            _pool_cache[partitionable, tuple(map(id, found))] = (found, pool)
        pools.append(pool)
    for pool in pools:
        if pool.binding:
            pools.sort(key=lambda pool: pool.binding)  # stable: (driver, pool) order in each
            break
    return pools


def _build_pool(
    driver: str,
    name: str,
    found: list[SliceInfo],
    infos: Sequence[SliceInfo],
    partitionable: bool,
) -> Pool | None:
    generation, count = found[0].generation, found[0].count
    whole: list[SliceInfo] | None = None
    if len(found) != count:
        # The node's view is short: some slices may target other nodes. Count all of them.
        whole = []
        for info in infos:
            if info.driver != driver or info.pool != name:
                continue
            if info.generation > generation:
                return None  # obsolete: a newer generation is being published elsewhere
            if info.generation == generation:
                whole.append(info)
        if len(whole) != count:
            return Pool(driver, name, incomplete=True)
    ordered = sorted(found, key=lambda info: info.name)
    if not partitionable:
        return _checked_pool(Pool(driver, name, slices=ordered))
    device_slices = [info for info in ordered if not info.shared_counters]
    counter_slices = [info for info in ordered if info.shared_counters]
    others: list[SliceInfo] = []
    if whole is not None and len(found) < len(whole):
        targeting = {info.name for info in found}
        for info in whole:
            if info.name in targeting:
                continue
            (counter_slices if info.shared_counters else others).append(info)
    pool = _checked_pool(Pool(driver, name, slices=device_slices, other_slices=others))
    if pool.invalid:
        return pool
    if not counter_slices and not any(info.consumes for info in (*device_slices, *others)):
        return pool
    counter_sets: CounterSets = {}
    for info in counter_slices:
        check_object(info.raw, "ResourceSlice")
        for set_name, counters in info.counter_sets():
            if set_name in counter_sets:
                return Pool(driver, name, invalid=True)  # duplicate counter set name
            counter_sets[set_name] = counters
    for info in (*device_slices, *others):
        for device in info.devices:
            for entry in device.consumes:
                declared = counter_sets.get(str(entry.get("counterSet", "")))
                if declared is None or any(c not in declared for c in entry.get("counters") or ()):
                    return Pool(driver, name, invalid=True)  # unknown counter set or counter
    pool.counter_sets = counter_sets
    pool.counter_slices = counter_slices
    return pool


def _checked_pool(pool: Pool) -> Pool:
    """Fill in the pool's devices, or mark it invalid when a device name repeats.

    Raises:
        AllocationError: a slice uses a field drasnap does not implement.
    """
    devices = [device for info in pool.slices for device in info.devices]
    names = {device.name for device in devices}
    if len(names) != len(devices):
        return Pool(pool.driver, pool.name, invalid=True)
    for info in (*pool.slices, *pool.other_slices):
        check_object(info.raw, "ResourceSlice")
    pool.devices = devices
    pool.candidates = [(device, pool) for device in devices]
    pool.binding = any(info.binding for info in pool.slices)
    return pool
