"""Timeline sweeps (``scenario: timeline`` in a sweep file): the points' settings, the file's
errors naming the field, the sweep's costs reaching the node groups (cluster_cost), and a
trace that brings its cluster (Alibaba's, no ``from:``).

The cluster is README's timeline example (``docs/examples/timeline/``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from drasnap.snapshot.simulation import (
    SweepFileError,
    compare_rows,
    load_sweep,
    run_sweep,
)

from tests.paths import ROOT

EXAMPLE = ROOT / "docs" / "examples" / "timeline"
TRACE = "gen:rate=6/h,until=30m,shape=cpu:2/mem:8Gi/gpu:1,runs=20m"


def _write(tmp_path: Path, **fields: Any) -> Path:
    """A timeline sweep of README's example cluster with ``fields`` (None: left out)."""
    data: dict[str, Any] = {
        "sweep": "tl",
        "scenario": "timeline",
        "from": str(EXAMPLE / "cluster"),
        "nodeGroups": str(EXAMPLE / "node-groups.yaml"),
        "trace": TRACE,
        "until": "1h",
        "axes": {
            "scaleDownUnneededTime": ["10m", "2m"],
            "schedulerScoring": ["LeastAllocated", "MostAllocated"],
        },
    }
    data.update(fields)
    path = tmp_path / "tl.yaml"
    path.write_text(yaml.safe_dump({k: v for k, v in data.items() if v is not None}))
    return path


def test_each_point_is_a_timeline_with_its_variants(tmp_path: Path) -> None:
    sweep = load_sweep(_write(tmp_path, scanInterval="30s"))
    assert len(sweep) == 4
    # The last axis varies fastest: point 2 is (2m, LeastAllocated).
    point = sweep.point(2)
    assert point.name == "tl-2"
    assert point.variants == {"scaleDownUnneededTime": "2m", "schedulerScoring": "LeastAllocated"}
    s = point.settings
    assert (s.scenario, s.trace, s.until, s.scan_interval) == ("timeline", TRACE, "1h", "30s")
    assert (s.scale_down_unneeded_time, s.scheduler_scoring) == ("2m", "LeastAllocated")
    assert s.source == str(EXAMPLE / "cluster")
    # Every point reads the same inputs: one digest (a gen: trace is no file).
    assert len({p.settings.source_digest for p in sweep.points()}) == 1
    # An existing file's meaning is kept: no scenario is autoscale.
    assert load_sweep(ROOT / "tests" / "fixtures" / "sweep" / "gpu-shapes.yaml").scenario == (
        "autoscale"
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"axes": {"scaleDownUnneededTime": ["10m", "-5m"]}},
            'axes.scaleDownUnneededTime[1]: "-5m" is negative',
        ),
        (
            {"axes": {"scaleDownUnneededTime": ["10m", 5]}},
            "axes.scaleDownUnneededTime[1]: expected a duration such as 30s",
        ),
        (
            {"axes": {"schedulerScoring": ["LeastAllocated", "Packed"]}},
            "axes.schedulerScoring[1]: unknown --scheduler-scoring 'Packed': choose "
            "LeastAllocated or MostAllocated",
        ),
        (
            {"axes": {"gpuSharing": ["consumable", "partitionable"]}},
            "axes.gpuSharing[1]: --gpu-sharing goes with --trace alibaba-gpu-v2023:PODS.csv",
        ),
        (
            {"axes": {"scanInterval": ["10s", "0s"]}},
            "axes.scanInterval[1]: --scan-interval must be more than 0",
        ),
        ({"axes": {"maxNodesTotal": [0, "5"]}}, "axes.maxNodesTotal[1]: expected a whole number"),
        ({"axes": {"trace": [TRACE]}}, "axes.trace: the trace is the sweep's"),
        ({"until": "-1h"}, 'until: "-1h" is negative'),
        ({"scanInterval": 10}, "scanInterval: expected a duration"),
        ({"trace": None}, "trace: required with scenario: timeline"),
        ({"trace": "missing.jsonl"}, "trace: 'missing.jsonl' is not a file"),
        ({"traceNodes": "nodes.csv"}, "traceNodes: goes with trace: alibaba-gpu-v2023:PODS.csv"),
        ({"scenario": "replay"}, "scenario: 'replay': choose autoscale or timeline"),
        # An autoscale sweep takes no timeline setting.
        ({"scenario": None, "trace": None}, "until: goes with scenario: timeline"),
        (
            {"scenario": None, "trace": None, "until": None},
            "axes.scaleDownUnneededTime: goes with scenario: timeline",
        ),
    ],
)
def test_a_wrong_timeline_field_is_named(
    tmp_path: Path, fields: dict[str, Any], message: str
) -> None:
    (tmp_path / "nodes.csv").write_text("sn\n")
    with pytest.raises(SweepFileError) as caught:
        load_sweep(_write(tmp_path, **fields))
    assert f"tl.yaml: {message}" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_sweeps_costs_reach_the_groups_and_make_cluster_cost(tmp_path: Path) -> None:
    # The node-groups file prices cpu at 0.4 and gpu at 3.2; the sweep's cost: prices gpu at 2.
    path = _write(tmp_path, cost={"gpu": 2.0}, axes={"scaleDownUnneededTime": ["10m"]})
    db = str(tmp_path / "s.db")
    run_sweep(db, load_sweep(path), workers=1)
    (row,) = compare_rows(db, sweep="tl")
    assert row["scenario"] == "timeline"
    hours = row["node_hours"]
    assert set(hours) == {"cpu", "gpu"} and hours["gpu"] > 0  # a GPU node was bought
    # cluster_cost: each group's node-hours (rounded to 6 places) times its cost.
    assert row["cluster_cost"] == pytest.approx(0.4 * hours["cpu"] + 2.0 * hours["gpu"], abs=1e-5)


def test_a_cost_for_a_group_the_cluster_lacks_is_refused_before_any_point(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    with pytest.raises(SweepFileError) as caught:
        run_sweep(str(db), load_sweep(_write(tmp_path, cost={"tpu": 1.0})), workers=1)
    assert "cost: no node group 'tpu' (its groups: cpu, gpu)" in str(caught.value)
    assert not db.exists()


def test_an_alibaba_trace_brings_the_cluster(tmp_path: Path) -> None:
    # Two pods, each one whole GPU, arriving at 0 s and 5 s; one 8-GPU node shape.
    (tmp_path / "pods.csv").write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
        "deletion_time,scheduled_time\n"
        "a,6000,12288,1,1000,,LS,Running,0,100,10\n"
        "b,4000,15258,1,1000,,BE,Running,5,60,5\n"
    )
    (tmp_path / "nodes.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,V100M32\n"
    )
    group = "v100m32-8gpu-96c-768gi"
    path = _write(
        tmp_path,
        **{"from": None, "nodeGroups": None, "until": None},
        trace="alibaba-gpu-v2023:pods.csv",
        traceNodes="nodes.csv",
        cost={group: 2.5},
        axes={"gpuSharing": ["consumable", "partitionable", "whole"]},
    )
    sweep = load_sweep(path)
    assert sweep.source is None
    point = sweep.point(1)
    assert point.settings.trace == f"alibaba-gpu-v2023:{tmp_path / 'pods.csv'}"
    assert point.settings.gpu_sharing == "partitionable"
    # The trace's files are what a Job's ConfigMap carries.
    assert sweep.files == [tmp_path / "pods.csv", tmp_path / "nodes.csv"]
    db = str(tmp_path / "a.db")
    run_sweep(db, sweep, workers=1)
    rows = compare_rows(db, sweep="tl")
    assert [r["variants"]["gpuSharing"] for r in rows] == ["consumable", "partitionable", "whole"]
    for row in rows:
        assert row["never_scheduled"] == 0 and row["pods_bound"] == 2
        assert row["cluster_cost"] == pytest.approx(2.5 * row["node_hours"][group], abs=1e-5)


def test_readmes_timeline_sweep_reads() -> None:
    sweep = load_sweep(EXAMPLE / "sweep.yaml")
    assert (sweep.scenario, len(sweep)) == ("timeline", 4)
    assert [p.variants["scaleDownUnneededTime"] for p in sweep.points()] == [
        "10m",
        "10m",
        "2m",
        "2m",
    ]


def test_a_node_group_variant_keeps_the_groups_timeline_fields(tmp_path: Path) -> None:
    from drasnap.snapshot.simulation import prepare

    path = _write(
        tmp_path,
        cost={"cpu": 0.5},
        axes={
            "nodeGroups": [
                {"name": "base"},
                # A timeline field in a variant; the file's gpu cost (3.2) and slice lag stay.
                {"name": "slow", "change": [{"name": "gpu", "nodeProvisionTime": "5m"}]},
                {"name": "cheap", "change": [{"name": "gpu", "cost": 1.0, "maxSize": 2}]},
            ]
        },
    )
    sweep = load_sweep(path)
    options = [
        {g.name: (g.max_size, g.options) for g in prepare(p.settings).groups}
        for p in sweep.points()
    ]
    assert options == [
        {"cpu": (10, {"cost": 0.5}), "gpu": (8, {"cost": 3.2, "slicePublishLag": "45s"})},
        {
            "cpu": (10, {"cost": 0.5}),
            "gpu": (8, {"cost": 3.2, "slicePublishLag": "45s", "nodeProvisionTime": "5m0s"}),
        },
        {"cpu": (10, {"cost": 0.5}), "gpu": (2, {"cost": 1.0, "slicePublishLag": "45s"})},
    ]
