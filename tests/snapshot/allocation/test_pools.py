"""Pool completeness, read in one place (`pools.newest_generation`): only the newest generation
of a pool counts, and it is whole when it has as many slices as its ``resourceSliceCount``.

A slice that does not say its count reads as Go's zero value, 0, as upstream's ``GatherPools``
and the cluster-autoscaler's utilization read ``Spec.Pool.ResourceSliceCount``: its pool is
incomplete. (A default of 1 would call the same pool whole.)"""

from __future__ import annotations

from typing import Any

import pytest
from drasnap.snapshot.allocation.pools import gather_pools, newest_generation, pool_fields
from drasnap.snapshot.autoscaler.utilization import UtilizationError, highest_dra_utilization
from drasnap.snapshot.cluster.placement import slice_list_devices


def _slice(name: str, generation: int | None, count: int | None) -> dict[str, Any]:
    pool: dict[str, Any] = {"name": "pool-a"}
    if generation is not None:
        pool["generation"] = generation
    if count is not None:
        pool["resourceSliceCount"] = count
    return {
        "metadata": {"name": name},
        "spec": {
            "driver": "gpu.example.com",
            "pool": pool,
            "nodeName": "node-1",
            "devices": [{"name": f"{name}-gpu"}],
        },
    }


def test_only_the_newest_generation_counts() -> None:
    old, new_a, new_b = _slice("s0", 1, 1), _slice("s1", 2, 2), _slice("s2", 2, 2)
    assert newest_generation([old, new_a, new_b]) == {
        ("gpu.example.com", "pool-a"): ([new_a, new_b], 2)
    }
    (pool,) = gather_pools([old, new_a, new_b], "node-1", {})
    assert not pool.incomplete
    assert [info.name for info in pool.slices] == ["s1", "s2"]


def test_a_slice_without_its_count_makes_its_pool_incomplete() -> None:
    lone = _slice("s0", None, None)  # one slice, no generation, no resourceSliceCount
    assert pool_fields(lone) == (("gpu.example.com", "pool-a"), 0, 0)
    # The allocator: the pool is incomplete, it offers no device.
    (pool,) = gather_pools([lone], "node-1", {})
    assert pool.incomplete
    # The placement index: the pool is not whole within the node's slices.
    spread, _ = slice_list_devices([lone])
    assert spread
    # Utilization: upstream's error, with the count it read.
    with pytest.raises(UtilizationError, match="slice count: 0 - found only 1 slices"):
        highest_dra_utilization([lone], [])


def test_a_slice_that_says_its_count_is_whole() -> None:
    lone = _slice("s0", None, 1)
    (pool,) = gather_pools([lone], "node-1", {})
    assert not pool.incomplete
    assert slice_list_devices([lone])[0] is False
    assert highest_dra_utilization([lone], []) == ("gpu.example.com/pool-a", 0.0)
