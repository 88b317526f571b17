"""The bench workloads in the shape of upstream benchmarks the compiled binary does not hold
(``tools/bench/upstream_workloads.py``): their configurations, and that each ends in
upstream's outcome, at the tiny size. Never timing."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from drasnap.snapshot import ClusterSnapshot
from drasnap.store import MemoryStore
from drasnap.tools.bench import upstream_workloads as up
from drasnap.tools.cli import cli


def test_schedule_revert_has_upstreams_sixty_configurations() -> None:
    configs = up.configurations("full")
    assert len(configs) == len({c.name for c in configs}) == 60
    by_name = {c.name: c for c in configs}
    assert by_name["100x32x50/MixedClaims/ForkForkCommitRevert"] == up.Config(
        "100x32x50/MixedClaims/ForkForkCommitRevert", 100, 32, 50, 2, 1, 1
    )
    assert by_name["10x100/OwnedClaims/Fork5Revert5"] == up.Config(
        "10x100/OwnedClaims/Fork5Revert5", 10, 0, 100, 5, 0, 5
    )
    assert by_name["100x1/SharedClaims/Fork"] == up.Config(
        "100x1/SharedClaims/Fork", 100, 1, 0, 1, 0, 0
    )
    assert [c.name for c in up.configurations("quick")] == [
        c.name for c in configs if c.nodes == 10
    ]
    assert len(up.configurations("tiny")) == 60


def test_schedule_revert_configurations_end_as_upstreams_operations_leave_them() -> None:
    store = MemoryStore()
    run = up.schedule_revert_configs(store, "tiny")
    assert store.depth == 0  # each configuration reverted after its check
    assert run.forks >= 60


def test_a_configuration_left_otherwise_is_refused() -> None:
    config = up.Config("x", 2, 1, 0, 1, 0, 1)
    with pytest.raises(AssertionError, match=r"\(nodes, pods, depth\) \(0, 0, 0\), .* \(0, 0, 1\)"):
        up._check_configuration(ClusterSnapshot(MemoryStore()), config, 1)


@pytest.mark.parametrize("name", ["binpacking-dra-1000", "binpacking-dra-5000"])
def test_binpacking_estimate_places_every_pod_where_devices_bind(name: str) -> None:
    store = MemoryStore()
    run = up.binpacking_estimate(store, name, "tiny")  # raises on another outcome
    assert (run.forks, run.reverts) == (1, 1)
    nodes, _ = up.BINPACK_SIZES[name]["tiny"]
    assert store.count("Node") == nodes  # the estimate's nodes are reverted
    assert (
        up.BINPACK_SIZES[name]["full"]
        == {
            "binpacking-dra-1000": (1000, 200),
            "binpacking-dra-5000": (5000, 500),
        }[name]
    )


def test_the_bench_runs_them_only_when_named_and_says_they_are_not_in_the_binary() -> None:
    args = ["bench", "schedule-revert-configs", "binpacking-dra-1000", "--size", "tiny"]
    result = CliRunner().invoke(
        cli, [*args, "--repeat", "1", "--backends", "memory", "--no-memory"]
    )
    assert result.exit_code == 0, result.output
    assert "not in the compiled ca-runonce-bench" in result.stdout
    rows = [w[0] for w in map(str.split, result.stdout.splitlines()) if w[1:2] == ["memory"]]
    assert rows == ["schedule-revert-configs", "binpacking-dra-1000"]
    data = CliRunner().invoke(
        cli, [*args[:2], "--size", "tiny", "--repeat", "1", "--backends", "memory,sqlite",
              "--no-memory", "--json"],
    )  # fmt: skip
    rows = json.loads(data.stdout)["results"]
    assert len({r["state_digest"] for r in rows}) == 1  # the same state on every backend
    for row in rows:  # each configuration's seconds, as upstream reports each
        assert len(row["parts_s"]) == 60
        assert all(len(s) == 1 and s[0] > 0 for s in row["parts_s"].values())
