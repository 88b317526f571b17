"""The allocated state an allocation starts from: upstream's ``AllocatedState``.

Three parts, as in ``k8s.io/dynamic-resource-allocation/structured/schedulerapi/types.go``:

- ``dedicated``: (driver, pool, device) of devices other claims hold exclusively
  (``AllocatedDevices``);
- ``shared``: the devices other claims hold shares of (``AllocatedSharedDeviceIDs``; the share
  IDs themselves do not matter to the allocator);
- ``capacity``: per device, the capacity other claims already consume on a device that allows
  multiple allocations (``AggregatedCapacity``).

A device is *allocated* when it is in any of the three; only allocated devices consume the
counters of their counter set (``IsDeviceAllocated`` in ``structured/internal/allocatedstate.go``).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from fractions import Fraction
from typing import Any

from drasnap.snapshot.allocation.pools import parse_quantity
from drasnap.snapshot.errors import ArgumentError
from drasnap.snapshot.k8s.claims import DeviceID

__all__ = ["AllocatedState", "allocated_state"]

_EMPTY: frozenset[Any] = frozenset()
_SET_TYPES: tuple[type, ...] = (set, frozenset, type({}.keys()))
_NO_CAPACITY: Mapping[tuple[str, ...], Mapping[str, Fraction]] = {}


class AllocatedState:
    """What other claims already hold (see the module docstring). Read-only by convention."""

    __slots__ = ("capacity", "dedicated", "shared")

    def __init__(
        self,
        dedicated: Container[tuple[str, ...]],
        shared: AbstractSet[tuple[str, ...]],
        capacity: Mapping[tuple[str, ...], Mapping[str, Fraction]],
    ) -> None:
        self.dedicated = dedicated
        self.shared = shared
        self.capacity = capacity

    def is_allocated(self, device: DeviceID) -> bool:
        return device in self.dedicated or device in self.shared or device in self.capacity


def _device_id(entry: Sequence[str] | Mapping[str, Any], what: str) -> DeviceID:
    if isinstance(entry, Mapping):
        return (str(entry["driver"]), str(entry["pool"]), str(entry["device"]))
    if len(entry) < 3:
        raise ArgumentError(f"{what}: expected (driver, pool, device, ...), got {entry!r}")
    return (str(entry[0]), str(entry[1]), str(entry[2]))


def allocated_state(
    allocated_devices: Iterable[Sequence[str]],
    allocated_shared_devices: Iterable[Sequence[str] | Mapping[str, Any]],
    allocated_capacity: Iterable[Sequence[Any] | Mapping[str, Any]]
    | Mapping[Sequence[str], Mapping[str, Any]],
) -> AllocatedState:
    """Normalise `allocate`'s three keyword arguments (see its docstring for their shapes).

    Raises:
        AllocationError: a consumed capacity is not a quantity.
        ArgumentError: an entry does not have the expected shape.
    """
    if (
        not allocated_shared_devices
        and not allocated_capacity
        and type(allocated_devices) in _SET_TYPES
    ):
        return AllocatedState(allocated_devices, _EMPTY, _NO_CAPACITY)  # type: ignore[arg-type]
    dedicated: Container[tuple[str, ...]]
    if type(allocated_devices) in _SET_TYPES or isinstance(allocated_devices, AbstractSet):
        # Already a set of tuples: no copy on the hot path.
        dedicated = allocated_devices  # type: ignore[assignment]
    else:
        dedicated = {tuple(d) for d in allocated_devices}
    shared: AbstractSet[tuple[str, ...]] = _EMPTY
    if allocated_shared_devices:
        shared = {_device_id(e, "allocated_shared_devices") for e in allocated_shared_devices}
    capacity: dict[tuple[str, ...], dict[str, Fraction]] = {}
    if not allocated_capacity:
        return AllocatedState(dedicated, shared, capacity)
    if isinstance(allocated_capacity, Mapping):
        entries: Iterable[tuple[DeviceID, Mapping[str, Any]]] = (
            (_device_id(k, "allocated_capacity"), v) for k, v in allocated_capacity.items()
        )
    else:
        entries = (_capacity_entry(e) for e in allocated_capacity)
    for device, consumed in entries:
        # Upstream's ConsumedCapacityCollection.Insert: entries of one device add up.
        total = capacity.setdefault(device, {})
        where = f"allocated capacity of device {'/'.join(device)}"
        for name, value in consumed.items():
            amount = value if isinstance(value, Fraction) else parse_quantity(value, where)
            total[str(name)] = total.get(str(name), Fraction(0)) + amount
    return AllocatedState(dedicated, shared, capacity)


def _capacity_entry(entry: Sequence[Any] | Mapping[str, Any]) -> tuple[DeviceID, Mapping[str, Any]]:
    if isinstance(entry, Mapping):
        return _device_id(entry, "allocated_capacity"), entry.get("consumedCapacity") or {}
    if len(entry) != 4:
        raise ArgumentError(
            f"allocated_capacity: expected (driver, pool, device, consumedCapacity), got {entry!r}"
        )
    return _device_id(entry, "allocated_capacity"), entry[3] or {}
