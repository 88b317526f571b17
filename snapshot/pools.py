"""Resource pools as one node sees them: which ResourceSlices count, and which devices are usable.

Mirrors ``GatherPools`` of ``k8s.io/dynamic-resource-allocation/structured`` (incubating
variant: pools sorted by (driver, pool), slices by name). See the allocator's docstring for
what is out of scope.

Caching assumption: ResourceSlice dicts are immutable values in this project (never mutated
after creation). Per-slice data (parsed pool fields, device records with their CEL activation
and selector results) is therefore cached by the slice's identity; the cache keeps a reference
to the slice so that its ``id()`` cannot be reused while the entry lives.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from snapshot.cel import DeviceActivation, device_activation
from snapshot.claims import DeviceID
from snapshot.errors import AllocationError

__all__ = ["Device", "Pool", "SliceInfo", "gather_pools", "node_selector_matches", "slice_info"]

_SLICE_CACHE_LIMIT = 200_000
_slice_cache: dict[int, SliceInfo] = {}


@dataclass(slots=True, eq=False)
class Device:
    """One device of a ResourceSlice, with what the allocator caches about it."""

    id: DeviceID  # (driver, pool, device name)
    spec: Mapping[str, Any]  # the device's wire dict
    slice: SliceInfo
    # Never allocatable: a NoSchedule/NoExecute taint, or consumes counters (partitionable).
    blocked: bool
    # Never selectable: binding conditions (upstream with the feature off).
    unselectable: bool
    # Selector expression -> result; valid across calls because the slice never changes.
    matches: dict[str, bool] = field(default_factory=dict)
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
    # sharedCounters / perDeviceNodeSelection: skipped, as upstream does with the feature off.
    unsupported: bool
    devices: list[Device] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class Pool:
    """A resource pool of the node: usable devices in search order, or why there are none."""

    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    slices: list[SliceInfo] = field(default_factory=list)
    devices: list[Device] = field(default_factory=list)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _blocked(device: Mapping[str, Any]) -> bool:
    if device.get("consumesCounters"):
        return True
    taints = device.get("taints") or ()
    return any(t.get("effect") in ("NoSchedule", "NoExecute") for t in taints)


def slice_info(raw: Mapping[str, Any]) -> SliceInfo:
    """Parsed view of one ResourceSlice, cached by identity (see the module docstring)."""
    info = _slice_cache.get(id(raw))
    if info is not None and info.raw is raw:
        return info
    spec = raw.get("spec") or {}
    pool = spec.get("pool") or {}
    driver = str(spec.get("driver", ""))
    pool_name = str(pool.get("name", ""))
    info = SliceInfo(
        raw=raw,
        name=str((raw.get("metadata") or {}).get("name", "")),
        driver=driver,
        pool=pool_name,
        generation=int(pool.get("generation", 0) or 0),
        count=int(pool.get("resourceSliceCount", 0) or 0),
        node_name=spec.get("nodeName") or None,
        all_nodes=bool(spec.get("allNodes", False)),
        node_selector=spec.get("nodeSelector"),
        unsupported=bool(spec.get("sharedCounters") or spec.get("perDeviceNodeSelection")),
    )
    info.devices = [
        Device(
            id=(driver, pool_name, str(d.get("name", ""))),
            spec=d,
            slice=info,
            blocked=_blocked(d),
            unselectable=bool(d.get("bindingConditions")),
        )
        for d in spec.get("devices") or ()
    ]
    if len(_slice_cache) >= _SLICE_CACHE_LIMIT:
        _slice_cache.clear()
    _slice_cache[id(raw)] = info
    return info


# --- node selection -------------------------------------------------------------------------

_INT_RE = re.compile(r"[+-]?[0-9]+")
_LABEL_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})


def _int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``, or None when it would fail."""
    if not _INT_RE.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _label_requirement(req: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op = str(req.get("key", "")), str(req.get("operator", ""))
    values = [str(v) for v in req.get("values") or ()]
    if op not in _LABEL_OPERATORS:
        raise AllocationError(f"operator {op!r} is not supported in matchExpressions")
    if op in ("In", "NotIn") and not values:
        raise AllocationError(f"key {key}: values must be non-empty for operator {op}")
    if op in ("Exists", "DoesNotExist") and values:
        raise AllocationError(f"key {key}: values must be empty for operator {op}")
    if op in ("Gt", "Lt") and (len(values) != 1 or _int64(values[0]) is None):
        raise AllocationError(f"key {key}: operator {op} needs exactly one integer value")
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    have = _int64(labels[key]) if present else None
    if have is None:
        return False
    want = _int64(values[0])
    assert want is not None
    return have > want if op == "Gt" else have < want


def _field_requirement(req: Mapping[str, Any], node_name: str) -> bool:
    key, op = str(req.get("key", "")), str(req.get("operator", ""))
    values = [str(v) for v in req.get("values") or ()]
    if op not in ("In", "NotIn"):
        raise AllocationError(f"operator {op!r} is not supported in matchFields")
    if len(values) != 1:
        raise AllocationError(f"matchFields key {key}: values must have one element")
    # Nodes only have the field metadata.name; any other key reads as "".
    actual = node_name if key == "metadata.name" else ""
    return (actual == values[0]) == (op == "In")


def node_selector_matches(
    selector: Mapping[str, Any], node_name: str, labels: Mapping[str, str]
) -> bool:
    """Whether a core/v1 NodeSelector matches the node (terms ORed, requirements ANDed).

    >>> node_selector_matches({"nodeSelectorTerms": [{"matchExpressions": [
    ...     {"key": "zone", "operator": "In", "values": ["a"]}]}]}, "n1", {"zone": "a"})
    True

    Raises:
        AllocationError: a requirement is malformed (unknown operator, wrong number of values).
    """
    matched = False
    for term in selector.get("nodeSelectorTerms") or ():
        expressions = term.get("matchExpressions") or ()
        fields = term.get("matchFields") or ()
        if not expressions and not fields:
            continue  # an empty term selects nothing
        # Evaluate every requirement so that a malformed one is reported even after a match.
        ok = all([_label_requirement(r, labels) for r in expressions])
        ok = all([_field_requirement(r, node_name) for r in fields]) and ok
        matched = matched or ok
    return matched


def _relevant(info: SliceInfo, node_name: str, labels: Mapping[str, str]) -> bool:
    if info.node_name:
        return info.node_name == node_name
    if info.all_nodes:
        return True
    if info.node_selector is not None:
        try:
            return node_selector_matches(info.node_selector, node_name, labels)
        except AllocationError as exc:
            raise AllocationError(
                f"gather pool information: failed to perform node selection for slice "
                f"{info.name}: {exc}"
            ) from exc
    return False  # none of the three set: some future extension, ignored


# --- gathering ------------------------------------------------------------------------------


def gather_pools(
    slices: Iterable[Mapping[str, Any]], node_name: str, labels: Mapping[str, str]
) -> list[Pool]:
    """The pools with devices reachable from the node, sorted by (driver, pool name).

    Only the newest generation of a pool counts. A pool whose slices are not all published is
    ``incomplete`` (or dropped as obsolete when another node already sees a newer generation);
    a pool with a device name listed twice is ``invalid``. Neither yields devices.

    Raises:
        AllocationError: a slice's node selector is malformed.
    """
    cache = _slice_cache
    infos = []
    by_pool: dict[tuple[str, str], list[SliceInfo]] = {}
    for raw in slices:
        # Hot loop (every node of every scheduling attempt): inline the cache hit and the
        # common "local to another node" case.
        info = cache.get(id(raw))
        if info is None or info.raw is not raw:
            info = slice_info(raw)
        infos.append(info)
        if info.node_name is not None:
            if info.node_name != node_name or info.unsupported:
                continue
        elif info.unsupported or not _relevant(info, node_name, labels):
            continue
        key = (info.driver, info.pool)
        current = by_pool.get(key)
        if current is None or info.generation > current[0].generation:
            by_pool[key] = [info]
        elif info.generation == current[0].generation:
            current.append(info)
    pools = []
    for (driver, name), found in sorted(by_pool.items(), key=lambda item: item[0]):
        pool = _build_pool(driver, name, found, infos)
        if pool is not None:
            pools.append(pool)
    return pools


def _build_pool(
    driver: str, name: str, found: list[SliceInfo], infos: Sequence[SliceInfo]
) -> Pool | None:
    generation, count = found[0].generation, found[0].count
    if len(found) != count:
        # The node's view is short: some slices may target other nodes. Count all of them.
        same = 0
        for info in infos:
            if info.driver != driver or info.pool != name:
                continue
            if info.generation > generation:
                return None  # obsolete: a newer generation is being published elsewhere
            same += info.generation == generation
        if same != count:
            return Pool(driver, name, incomplete=True)
    ordered = sorted(found, key=lambda info: info.name)
    devices = [device for info in ordered for device in info.devices]
    names = {device.name for device in devices}
    if len(names) != len(devices):
        return Pool(driver, name, invalid=True)
    return Pool(driver, name, slices=ordered, devices=devices)
