"""``drasnap explain --pod`` on a timeline's pod: when it arrived, was bound and ended, and why
it waited, loop by loop (the scheduler's reason, then the cluster-autoscaler's)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from drasnap.store import Store
from drasnap.tools.cli import cli

from tests.snapshot.simulation.timeline.helpers import create, run_timeline
from tests.snapshot.simulation.timeline.test_timers import gpu_cluster, gpu_group, gpu_pod


def test_a_pods_wait_told_loop_by_loop(tmp_path: Path) -> None:
    # The GPU pod at 1s: no node (the scheduler); loop 10s scales up; loops 20s..: the node is
    # coming (a placeholder takes the pod); Ready at 2m10s without its slices (lag 1m): the
    # scheduler cannot allocate its claim there, CA still counts the node as coming; the
    # slices at 3m10s, bound then.
    db = tmp_path / "sim.db"
    with Store.open(db, name="t") as store:
        run_timeline(
            tmp_path,
            gpu_cluster(),
            [gpu_group("gpu")],
            [create(1, gpu_pod("p"))],
            store=store,
            until="4m",
            slice_publish_lag="1m",
        )
    result = CliRunner().invoke(cli, ["explain", str(db), "--name", "t", "--pod", "default/p"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "pod default/p: arrived at 1s, bound at 190s to node gpu-0 (waited 189s)",
        "  at        1s  scheduler: no nodes available to schedule pods",
        "  at       10s  cluster-autoscaler: triggered a scale-up of node group gpu",
        "  at       20s  cluster-autoscaler: scale-up in flight: a node of node group gpu is "
        "coming",
        "  at      130s  scheduler: 0/1 nodes are available: 1 cannot allocate all claims.",
        "  at      130s  cluster-autoscaler: scale-up in flight: a node of node group gpu is "
        "coming",
    ]
    as_json = CliRunner().invoke(
        cli, ["explain", str(db), "--name", "t", "--pod", "default/p", "--json"]
    )
    found = json.loads(as_json.output)
    assert found["life"]["bound"] == 190_000
    assert [r["t"] for r in found["reasons"]] == [1000, 10_000, 20_000, 130_000, 130_000]
