"""Which nodes could hold a pod, found without visiting the full ones: the placement index.

``ClusterSnapshot.schedule_pod_anywhere`` tries the nodes in name order and places the pod on
the first that fits. Before the allocator runs, cheap checks skip a node whose free CPU,
memory or pod count is short, or (for a pod whose claims need a device nobody holds) a node
without a free local device. In a scale-down most nodes are soon full, so a scan from the first
node visits ever more of them: O(nodes) per pod, O(nodes²) per run.

The index keeps the node names sorted, cut into blocks of about ``block`` names, and for each
block the best any of its nodes offers: the largest free CPU, free memory and free pod count,
and whether some node has a free local device. A block whose best cannot satisfy a pod is
skipped whole: a query costs O(nodes / block + block) instead of O(nodes). The skipping is
exact for the cheap checks (each bound is a maximum over the block), so the nodes it yields,
in order, are exactly those the plain scan's cheap checks would let through: the same
decisions, the same ``state_digest``.

A block's summary is worked out lazily: any change that may touch one of its nodes drops it,
and the next query that reaches the block recomputes it (O(block)). The index follows the store
(:mod:`store.followers`) for ``Node`` (names in and out), ``ResourceSlice`` (a node's devices,
and which node each pool is on) and ``ResourceClaim`` (an allocation frees or takes devices of
the pools it names), and is told by the pod index when the pods of a node change. So it is
right whoever forks, commits or reverts, like every other index of the snapshot.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final, Protocol, TypeAlias

from drasnap.snapshot.allocation.pools import PoolKey, newest_generation
from drasnap.snapshot.k8s.kinds import CLAIM_KIND, NODE_KIND, NON_LOCAL_SLICES_KEY, SLICE_KIND
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.scheduling.view import remember
from drasnap.store import ABSENT, VersionedStore

__all__ = [
    "PlacementIndex",
    "PoolDevices",
    "PoolKey",
    "device_names",
    "free_in",
    "shares_a_pool",
    "slice_list_devices",
]

PoolDevices: TypeAlias = tuple[PoolKey, frozenset[str]]
_Cache = dict[int, tuple[Any, Any]]
_IMPOSSIBLE: Final = -(2**63)


class _Amounts(Protocol):
    """What the index reads of a node's allocatable and of its pods' summed requests
    (``snapshot.scheduling.Requests``)."""

    @property
    def cpu(self) -> int: ...
    @property
    def memory(self) -> int: ...
    @property
    def pods(self) -> int: ...


class _Zero:
    cpu = memory = pods = 0


_NOTHING: Final = _Zero()
# (largest free cpu, memory, pods, some node with a free local device)
_Summary: TypeAlias = tuple[int, int, int, bool]

#: Names per block: a query visits every block's summary and then the nodes of the blocks that
#: may hold the pod, so about the square root of the largest cluster kept in mind (50,000
#: nodes: ~800 summaries, ~64 names) keeps both parts small.
BLOCK = 64


_DEVICE_NAMES: _Cache = {}
_SLICE_LISTS: _Cache = {}


def _names_of_devices(slice_: KubeObject) -> PoolDevices:
    spec = slice_.get("spec") or {}
    pool = (str(spec.get("driver")), str((spec.get("pool") or {}).get("name")))
    return pool, frozenset(str(d.get("name")) for d in spec.get("devices") or ())


def _device_names(slice_: KubeObject) -> PoolDevices:
    """(driver, pool) and the names of the devices of a slice."""
    return remember(_DEVICE_NAMES, slice_, _names_of_devices)


def _devices_of_list(slices: list[KubeObject]) -> tuple[bool, tuple[PoolDevices, ...]]:
    # A pool is whole within the list when its newest generation there has all its slices
    # (a node's pool of counter sets and devices, say). Then the allocator, which ignores
    # other nodes' slices, finds it complete without looking further; otherwise the pool may
    # spread over nodes and completeness needs every slice.
    spread = any(len(found) != count for found, count in newest_generation(slices).values())
    return spread, tuple(_device_names(s) for s in slices)


def slice_list_devices(slices: list[KubeObject]) -> tuple[bool, tuple[PoolDevices, ...]]:
    """Of a stored slice list (one node's, or the global one): whether a pool of it lacks
    slices there (it may spread over nodes: then every slice counts), and the devices of each
    slice."""
    return remember(_SLICE_LISTS, slices, _devices_of_list)


def shares_a_pool(some: Iterable[PoolDevices], others: Iterable[PoolDevices]) -> bool:
    """Whether two slice lists' devices have a pool in common."""
    return not {pool for pool, _ in some}.isdisjoint(pool for pool, _ in others)


def device_names(slice_: KubeObject) -> PoolDevices:
    """(driver, pool) and the names of the devices of a slice (remembered per slice)."""
    return _device_names(slice_)


def free_in(pools: Iterable[PoolDevices], allocated: Mapping[PoolKey, AbstractSet[str]]) -> bool:
    """Whether some device is not allocated: one C-level subset test per slice."""
    for pool, names in pools:
        taken = allocated.get(pool)
        if taken is None or not names <= taken:
            return True
    return False


class PlacementIndex:
    """Node names in sorted blocks with a lazily kept summary per block (see the module).

    ``requested`` is the pod index's requests per node, ``allocatable`` and ``slices`` the node
    index's allocatable and local slice devices per node, ``allocated`` the allocated device
    names per pool: live views, read at query time.
    """

    def __init__(
        self,
        store: VersionedStore,
        requested: Mapping[str, _Amounts],
        allocatable: Mapping[str, _Amounts],
        slices: Mapping[str, tuple[bool, tuple[PoolDevices, ...]]],
        allocated: Callable[[], Mapping[PoolKey, AbstractSet[str]]],
        *,
        block: int | None = None,
    ) -> None:
        self._store = store
        self._used = requested
        self._allocatable = allocatable
        self._slices = slices
        self._allocated = allocated
        self._block = BLOCK if block is None else block
        self._blocks: list[list[str]] = []
        self._firsts: list[str] = []  # the first name of each block, for bisection
        self._summaries: list[_Summary | None] = []
        # Per block, its nodes' facts in name order (None: to work out whole), and which of
        # them changed since (by position): a summary is redone from the few that changed.
        self._columns: list[list[_Summary] | None] = []
        self._stale: list[list[int]] = []
        # What each node offers, as a summary of one: dropped when the node changes.
        self._facts: dict[str, _Summary] = {}
        self._pool_nodes: dict[PoolKey, set[str]] = {}  # node-local pools: on which nodes
        self._node_pools: dict[str, tuple[PoolKey, ...]] = {}  # and the other way round
        # Per allocated claim: its status.allocation object (a reservation keeps it: nothing
        # to do) and the pools it names.
        self._claim_pools: dict[str, tuple[Any, frozenset[PoolKey]]] = {}
        self.rebuild()
        store.follow([NODE_KIND, SLICE_KIND, CLAIM_KIND], self)

    def rebuild(self) -> None:
        """Start over from the store. O(nodes + slices + claims)."""
        names = sorted(self._store.keys(NODE_KIND))
        size = self._block
        self._blocks = [names[i : i + size] for i in range(0, len(names), size)]
        self._firsts = [b[0] for b in self._blocks]
        self._summaries = [None] * len(self._blocks)
        self._columns = [None] * len(self._blocks)
        self._stale = [[] for _ in self._blocks]
        self._facts = {}
        self._pool_nodes = {}
        self._node_pools = {}
        for node_name, slices in self._store.items(SLICE_KIND).items():
            self._slices_changed(node_name, slices)
        self._claim_pools = {}
        for key, claim in self._store.items(CLAIM_KIND).items():
            self.changed(CLAIM_KIND, key, claim)

    # -- following the store ----------------------------------------------------------------------

    def changed(self, kind: str, key: str, value: Any) -> None:
        """The follower's call: ``key`` of ``kind`` is now ``value`` (ABSENT: gone)."""
        if kind == NODE_KIND:
            if value is ABSENT:
                self._remove(key)
            elif not self._touch(key):
                self._insert(key)
        elif kind == SLICE_KIND:
            self._slices_changed(key, value if isinstance(value, list) else ())
            self._touch(key)
        else:
            status = value.get("status") if isinstance(value, dict) else None
            allocation = status.get("allocation") if isinstance(status, dict) else None
            old = self._claim_pools.get(key)
            if (old[0] if old is not None else None) is allocation:
                return
            pools = _pools_of(allocation) if allocation else frozenset()
            if allocation:
                self._claim_pools[key] = (allocation, pools)
            else:
                del self._claim_pools[key]
            for pool in pools | old[1] if old is not None else pools:
                for node_name in self._pool_nodes.get(pool, ()):
                    self._touch(node_name)

    def node_changed(self, node_name: str) -> None:
        """The pods of ``node_name`` changed (the pod index's call)."""
        self._touch(node_name)

    def _slices_changed(self, node_name: str, slices: Iterable[KubeObject]) -> None:
        if node_name == NON_LOCAL_SLICES_KEY:
            return  # global devices are checked once per pod, not per node
        for pool in self._node_pools.pop(node_name, ()):
            nodes = self._pool_nodes.get(pool)
            if nodes is not None:
                nodes.discard(node_name)
                if not nodes:
                    del self._pool_nodes[pool]
        pools = tuple(_device_names(slice_)[0] for slice_ in slices)
        if pools:
            self._node_pools[node_name] = pools
        for pool in pools:
            self._pool_nodes.setdefault(pool, set()).add(node_name)

    # -- blocks -----------------------------------------------------------------------------------

    def _find(self, name: str) -> int:
        """The block that holds (or would hold) ``name``; -1 when there is none."""
        if not self._blocks:
            return -1
        return max(bisect_right(self._firsts, name) - 1, 0)

    def _touch(self, name: str) -> bool:
        """Drop the summary of the block holding ``name``; whether it holds it."""
        i = self._find(name)
        if i < 0:
            return False
        block = self._blocks[i]
        j = bisect_right(block, name) - 1
        if j < 0 or block[j] != name:
            return False
        self._summaries[i] = None
        self._facts.pop(name, None)
        if self._columns[i] is not None:
            self._stale[i].append(j)
        return True

    def _insert(self, name: str) -> None:
        i = self._find(name)
        if i < 0:
            self._blocks, self._firsts, self._summaries = [[name]], [name], [None]
            self._columns, self._stale = [None], [[]]
            return
        block = self._blocks[i]
        insort(block, name)
        self._firsts[i] = block[0]
        self._summaries[i] = None
        self._columns[i] = None
        self._facts.pop(name, None)
        if len(block) > 2 * self._block:
            half = len(block) // 2
            self._blocks[i : i + 1] = [block[:half], block[half:]]
            self._firsts[i : i + 1] = [block[0], block[half]]
            self._summaries[i : i + 1] = [None, None]
            self._columns[i : i + 1] = [None, None]
            self._stale[i : i + 1] = [[], []]

    def _remove(self, name: str) -> None:
        i = self._find(name)
        if i < 0:
            return
        block = self._blocks[i]
        j = bisect_right(block, name) - 1
        if j < 0 or block[j] != name:
            return
        del block[j]
        self._facts.pop(name, None)
        if block:
            self._firsts[i] = block[0]
            self._summaries[i] = None
            self._columns[i] = None
        else:
            del self._blocks[i], self._firsts[i], self._summaries[i]
            del self._columns[i], self._stale[i]

    def names(self) -> list[str]:
        """Every node name, sorted. O(nodes)."""
        return [name for block in self._blocks for name in block]

    # -- queries ----------------------------------------------------------------------------------

    def _node_facts(self, name: str) -> _Summary:
        """What the node offers: free CPU, memory and pod slots, and whether it has a free
        local device; remembered until the node, its pods, slices or their claims change."""
        facts = self._facts.get(name)
        if facts is not None:
            return facts
        have = self._allocatable.get(name)
        if have is None:  # (a node written to the store without its index: offers nothing)
            facts = (_IMPOSSIBLE, _IMPOSSIBLE, _IMPOSSIBLE, False)
        else:
            used = self._used.get(name, _NOTHING)
            local = self._slices.get(name)
            facts = (
                have.cpu - used.cpu,
                have.memory - used.memory,
                have.pods - used.pods,
                local is not None and (local[0] or free_in(local[1], self._allocated())),
            )
        self._facts[name] = facts
        return facts

    def _summary(self, i: int) -> _Summary:
        summary = self._summaries[i]
        if summary is not None:
            return summary
        # A block is summarised again after every placement on one of its nodes: only the
        # nodes that changed are worked out again, and the maxima are taken in C.
        names = self._blocks[i]
        node_facts = self._node_facts
        columns = self._columns[i]
        if columns is None:
            facts_of = self._facts.get
            columns = self._columns[i] = [facts_of(name) or node_facts(name) for name in names]
        else:
            for j in self._stale[i]:
                columns[j] = node_facts(names[j])
        self._stale[i].clear()
        cpu, memory, pods, device = zip(*columns, strict=True)
        summary = self._summaries[i] = (max(cpu), max(memory), max(pods), any(device))
        return summary

    def candidates(self, cpu: int, memory: int, needs_device: bool) -> Iterator[str]:
        """In name order, the nodes that pass ``schedule_pod_anywhere``'s cheap checks for a
        pod asking ``cpu`` millicores and ``memory`` bytes: a free pod slot, the CPU and memory
        asked for (an amount of 0 is not checked, as NodeResourcesFit does not) and, with
        ``needs_device``, a free local device (or a pool that may spread over nodes).

        Reads the indexes as they are when each block is reached: stop iterating once you
        write.
        """
        summaries = self._summaries
        blocks = self._blocks
        facts_of = self._facts.get
        for i in range(len(blocks)):
            summary = summaries[i]
            if summary is None:
                summary = self._summary(i)
            if (
                summary[2] < 1
                or (cpu > 0 and cpu > summary[0])
                or (memory > 0 and memory > summary[1])
                or (needs_device and not summary[3])
            ):
                continue
            for name in blocks[i]:
                facts = facts_of(name) or self._node_facts(name)
                if (
                    facts[2] < 1
                    or (cpu > 0 and cpu > facts[0])
                    or (memory > 0 and memory > facts[1])
                    or (needs_device and not facts[3])
                ):
                    continue
                yield name


def _pools_of(allocation: Mapping[str, Any]) -> frozenset[PoolKey]:
    results = (allocation.get("devices") or {}).get("results") or ()
    return frozenset((str(r.get("driver", "")), str(r.get("pool", ""))) for r in results)
