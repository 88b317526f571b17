"""The derived state a :class:`snapshot.dra.DraSnapshot` keeps in memory: store followers.

Nothing here is stored: each piece is built from the store when a snapshot is created, then
follows the store (:mod:`store.followers`): it is told every change of the effective value of
a key of its kind — writes, and the values a revert restores — so it is right at every depth
whoever forked, committed or reverted. Each answers a list the scheduler reads on every
attempt without a scan of the store:

- :class:`DeviceIndex`: the allocated devices of each claim and a reference count per device
  (two claims may name the same device), served as a cached ``frozenset``;
- :class:`FlatList`: the values of one kind as one flat list (every node's slices, every
  class), extended in place when a key is added and cut back when the last one added goes.

A new kind of derived state (allocated shared devices, consumed capacity) is one more follower
registered in ``DraSnapshot.__init__``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from drasnap.snapshot.k8s.claims import ConsumedCapacity, DeviceID, SharedDevice, allocated_shares
from drasnap.store import ABSENT, VersionedStore

__all__ = ["DeviceIndex", "FlatList"]

Devices: TypeAlias = tuple[DeviceID, ...]


class DeviceIndex:
    """Allocated devices per claim key, with a reference count per device: follows the
    ``ResourceClaim`` kind.

    ``by_pool`` holds the allocated device names of each (driver, pool): "is every device of
    this slice taken?" is then one C-level subset test instead of a Python loop of lookups.

    Shares of devices that allow multiple allocations (results with a ``shareID``, consumable
    capacity) are kept apart, per claim, as upstream's ``GatherAllocatedState`` keeps them:
    ``shares`` (driver, pool, device, shareID) and ``consumed`` (driver, pool, device,
    consumedCapacity); such a device is not held exclusively, so it is not in ``refs``.
    """

    __slots__ = (
        "_shared",
        "allocations",
        "by_claim",
        "by_pool",
        "consumed",
        "frozen",
        "refs",
        "shares",
    )

    def __init__(self) -> None:
        # The status.allocation object each claim's devices were read from: a write that keeps
        # it (a reservation) changes nothing here, and values are never mutated.
        self.allocations: dict[str, Any] = {}
        self.by_claim: dict[str, Devices] = {}
        self.refs: dict[DeviceID, int] = {}
        self.by_pool: dict[tuple[str, str], set[str]] = {}
        self.frozen: frozenset[DeviceID] | None = frozenset()
        self.shares: dict[str, tuple[SharedDevice, ...]] = {}
        self.consumed: dict[str, tuple[ConsumedCapacity, ...]] = {}
        self._shared: tuple[tuple[SharedDevice, ...], tuple[ConsumedCapacity, ...]] | None = (
            (),
            (),
        )

    def shared(self) -> tuple[tuple[SharedDevice, ...], tuple[ConsumedCapacity, ...]]:
        """Every share and every consumed capacity, flattened; ``((), ())`` when none (the
        usual case, O(1)); the same tuples until a share changes."""
        flat = self._shared
        if flat is None:
            flat = self._shared = (
                tuple(x for v in self.shares.values() for x in v),
                tuple(x for v in self.consumed.values() for x in v),
            )
        return flat

    def devices(self) -> frozenset[DeviceID]:
        """Every allocated device; the same object until the set changes. O(1) or O(devices)."""
        frozen = self.frozen
        if frozen is None:
            frozen = self.frozen = frozenset(self.refs)  # reuses the dict's stored hashes
        return frozen

    def changed(self, kind: str, key: str, value: Any) -> None:
        """The follower's call: claim ``key`` is now ``value`` (ABSENT: gone)."""
        # Anything but a claim (written to the store directly) allocates nothing.
        status = value.get("status") if isinstance(value, dict) else None
        allocation = status.get("allocation") if isinstance(status, dict) else None
        if allocation is self.allocations.get(key):
            return
        if allocation is None:
            del self.allocations[key]
            self.replace(key, ())
            dedicated: tuple[DeviceID, ...] = ()
            shares: tuple[SharedDevice, ...] = ()
            consumed: tuple[ConsumedCapacity, ...] = ()
        else:
            self.allocations[key] = allocation
            dedicated, shares, consumed = allocated_shares(value)
            self.replace(key, dedicated)
        if shares or key in self.shares:
            self._set_shares(key, shares, consumed)

    def _set_shares(
        self, key: str, shares: tuple[SharedDevice, ...], consumed: tuple[ConsumedCapacity, ...]
    ) -> None:
        self._shared = None
        if shares:
            self.shares[key] = shares
        else:
            self.shares.pop(key, None)
        if consumed:
            self.consumed[key] = consumed
        else:
            self.consumed.pop(key, None)

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
        self.allocations.clear()
        self.by_claim.clear()
        self.refs.clear()
        self.by_pool.clear()
        self.frozen = None
        self.shares.clear()
        self.consumed.clear()
        self._shared = None
        for key, claim in claims.items():
            self.changed("", key, claim)


class FlatList:
    """The values of one kind as one flat list, built on the first read: follows that kind.

    With ``spread`` each value is itself a list (a node's slices) whose items go into the flat
    list; else each value is one item (a class). ``groups`` says how many items each key
    contributes, in list order, so a key added last can be cut back off the end (a revert of an
    addition); any other change drops the list, which the next read rebuilds from the store.
    """

    __slots__ = ("_kind", "_spread", "_store", "groups", "items")

    def __init__(self, store: VersionedStore, kind: str, *, spread: bool) -> None:
        self._store = store
        self._kind = kind
        self._spread = spread
        self.items: list[Any] | None = None
        self.groups: dict[str, int] = {}

    def get(self) -> list[Any]:
        """The flat list (shared: copy it before handing it out)."""
        items = self.items
        if items is None:
            items = self.items = []
            self.groups = {}
            for key, value in self._store.items(self._kind).items():
                self._append(key, value)
        return items

    def _append(self, key: str, value: Any) -> None:
        assert self.items is not None
        group = value if self._spread and isinstance(value, list) else (value,)
        self.items.extend(group)
        self.groups[key] = len(group)

    def invalidate(self) -> None:
        self.items = None
        self.groups = {}

    def changed(self, kind: str, key: str, value: Any) -> None:
        """The follower's call: ``key`` is now ``value`` (ABSENT: gone)."""
        items = self.items
        if items is None:
            return
        groups = self.groups
        size = groups.get(key)
        if size is not None:
            if value is not ABSENT or next(reversed(groups)) != key:
                # The order must stay the store's, as a rebuild would give it: only the
                # group at the end can go without one.
                self.invalidate()
                return
            del items[len(items) - size :]
            del groups[key]
        elif value is not ABSENT:
            self._append(key, value)
