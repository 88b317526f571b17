"""The derived state a :class:`snapshot.dra.DraSnapshot` keeps in memory, and its undo logs.

Nothing here is stored: it is rebuilt from the store when a snapshot is created. Each piece
answers a list the scheduler reads on every attempt without a scan of the store:

- :class:`DeviceIndex`: the allocated devices of each claim and a reference count per device
  (two claims may name the same device), served as a cached ``frozenset``;
- :class:`ListCache`: a flattened list of values (every node's slices, every class) that can
  be extended in place and cut back on Revert;
- :class:`LayerLog`: what one fork layer changed, so Revert restores the above in
  O(changes) and Commit merges it into the parent layer's log (sigs PR #55's idea).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from snapshot.claims import DeviceId, allocated_device_ids

__all__ = ["DeviceIndex", "LayerLog", "ListCache", "Mark"]

Devices: TypeAlias = tuple[DeviceId, ...]
Mark: TypeAlias = tuple[int, int] | None
"""A list cache's (generation, length) before a layer changed it; None: it was not built."""


class DeviceIndex:
    """Allocated devices per claim key, with a reference count per device.

    ``by_pool`` holds the allocated device names of each (driver, pool): "is every device of
    this slice taken?" is then one C-level subset test instead of a Python loop of lookups.
    """

    __slots__ = ("by_claim", "by_pool", "frozen", "refs")

    def __init__(self) -> None:
        self.by_claim: dict[str, Devices] = {}
        self.refs: dict[DeviceId, int] = {}
        self.by_pool: dict[tuple[str, str], set[str]] = {}
        self.frozen: frozenset[DeviceId] | None = frozenset()

    def devices(self) -> frozenset[DeviceId]:
        """Every allocated device; the same object until the set changes. O(1) or O(devices)."""
        frozen = self.frozen
        if frozen is None:
            frozen = self.frozen = frozenset(self.refs)  # reuses the dict's stored hashes
        return frozen

    def replace(self, key: str, devices: Devices) -> Devices:
        """Make ``devices`` the contribution of claim ``key``; returns the previous one."""
        old = self.by_claim.get(key, ())
        if old == devices:
            return old
        refs = self.refs
        by_pool = self.by_pool
        for device in old:
            count = refs[device] - 1
            if count:
                refs[device] = count
            else:
                del refs[device]
                self.frozen = None
                names = by_pool[device[0], device[1]]
                names.discard(device[2])
                if not names:
                    del by_pool[device[0], device[1]]
        for device in devices:
            count = refs.get(device, 0)
            refs[device] = count + 1
            if not count:
                self.frozen = None
                taken = by_pool.get((device[0], device[1]))
                if taken is None:
                    by_pool[device[0], device[1]] = {device[2]}
                else:
                    taken.add(device[2])
        if devices:
            self.by_claim[key] = devices
        else:
            del self.by_claim[key]
        return old

    def rebuild(self, claims: Mapping[str, Any]) -> None:
        """Start over from every claim (key -> claim). O(claims)."""
        self.by_claim.clear()
        self.refs.clear()
        self.by_pool.clear()
        self.frozen = None
        for key, claim in claims.items():
            devices = allocated_device_ids(claim)
            if devices:
                self.replace(key, devices)


class ListCache:
    """A lazily built flat list of values, extended in place and cut back on Revert.

    ``generation`` changes whenever the list is dropped or rebuilt, so a :data:`Mark` taken
    before a layer's first change tells on Revert whether the list still starts with exactly
    what it held then (only appends since): cut it back to that length, else drop it.
    """

    __slots__ = ("generation", "items")

    def __init__(self) -> None:
        self.items: list[Any] | None = None
        self.generation = 0

    def get(self, load: Callable[[], list[Any]]) -> list[Any]:
        items = self.items
        if items is None:
            items = self.items = load()
            self.generation += 1
        return items

    def mark(self) -> Mark:
        return None if self.items is None else (self.generation, len(self.items))

    def extend(self, values: list[Any]) -> None:
        """Values of a key that was absent were added: append them (if the list is built)."""
        if self.items is not None:
            self.items.extend(values)

    def invalidate(self) -> None:
        self.items = None
        self.generation += 1

    def restore(self, mark: Mark) -> None:
        """Undo the changes made since ``mark`` was taken."""
        if mark is not None and self.items is not None and mark[0] == self.generation:
            del self.items[mark[1] :]
        else:
            self.invalidate()


class LayerLog:
    """What one fork layer changed: enough to undo the derived state on Revert."""

    __slots__ = ("claims", "classes", "slices")

    def __init__(self) -> None:
        self.claims: dict[str, Devices] = {}  # claim key -> its devices before the layer
        # Set on the layer's first change of that kind: the list cache's mark before it.
        self.slices: list[Mark] = []
        self.classes: list[Mark] = []

    def merge_into(self, parent: LayerLog) -> None:
        """Commit: the parent's log now also covers this layer's changes."""
        pclaims = parent.claims
        for key, devices in self.claims.items():
            pclaims.setdefault(key, devices)
        if not parent.slices:
            parent.slices = self.slices
        if not parent.classes:
            parent.classes = self.classes
