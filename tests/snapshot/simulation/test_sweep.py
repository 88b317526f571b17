"""What-if sweeps (``snapshot.simulation.sweep``): the sweep file and its errors, points as
autoscale runs, local workers giving what the points run one by one give, on SQLite and
PostgreSQL, and a worker killed mid-point.

The sweep is ``tests/fixtures/sweep/gpu-shapes.yaml`` (24 points on a three-node cluster).
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from drasnap.snapshot import ArgumentError, ScenarioError
from drasnap.snapshot.simulation import (
    SweepFileError,
    compare_rows,
    generated,
    list_runs,
    load_sweep,
    run_point,
    run_sweep,
    with_index,
)

from tests.paths import FIXTURES

SWEEP = FIXTURES / "sweep" / "gpu-shapes.yaml"


def _write(tmp_path: Path, text: str, **changes: Any) -> Path:
    """A copy of the fixture sweep in ``tmp_path`` (with its files), fields replaced."""
    data = yaml.safe_load(SWEEP.read_text())
    data["from"] = str(SWEEP.parent / "cluster")
    for variant in data["axes"]["workloads"]:
        variant["add"] = [str(SWEEP.parent / f) for f in variant.get("add") or ()]
    data.update(changes)
    path = tmp_path / text
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _digests(db: str) -> dict[str, str]:
    return {r.name: r.state_digest for r in list_runs(db) if r.status == "finished"}


def _rows(db: str, sweep: str = "gpu-shapes") -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in compare_rows(db, sweep=sweep)}


# -- the file ---------------------------------------------------------------------------------


def test_the_cross_product_has_stable_indices_and_names() -> None:
    sweep = load_sweep(SWEEP)
    assert len(sweep) == 24  # 3 node-group variants x 2 workloads x 2 expanders x 2 thresholds
    point = sweep.point(13)  # the last axis varies fastest
    assert point.name == "gpu-shapes-13"
    assert point.variants == {
        "nodeGroups": "gpu-max3",
        "workloads": "training",
        "expander": "least-waste",
        "scaleDownUtilizationThreshold": "0.8",
    }
    assert point.settings.scenario == "autoscale"
    assert point.settings.scale_down_utilization_threshold == 0.8
    assert point.settings.extra_manifests == (str(SWEEP.parent / "training.yaml"),)
    assert point.costs == {"cpu": 1.0, "gpu": 3.0}
    assert load_sweep(SWEEP).point(13) == point  # the same file, the same point


def test_an_index_outside_the_points_is_an_argument_error() -> None:
    """A Job's completion index picks the point; one out of range names the range."""
    sweep = load_sweep(SWEEP)
    assert with_index(sweep, 23) == sweep.point(23)
    for index in (-1, 24):
        with pytest.raises(ArgumentError, match=r"outside the sweep's points 0\.\.23"):
            with_index(sweep, index)


def test_a_sweep_file_error_is_a_scenario_error() -> None:
    """Its place in snapshot.errors' tree: whatever catches a scenario's errors catches it."""
    assert issubclass(SweepFileError, ScenarioError)


def test_explicit_points_take_the_first_variant_of_an_axis_left_out(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "two.yaml",
        sweep="two",
        points=[{"nodeGroups": "gpu8", "expander": "most-pods"}, {"workloads": "training"}],
    )
    sweep = load_sweep(path)
    assert len(sweep) == 2
    assert sweep.point(0).variants["nodeGroups"] == "gpu8"
    assert sweep.point(0).variants["workloads"] == "none"
    assert sweep.point(0).costs == {"cpu": 1.0, "gpu": 3.0, "gpu8": 5.0}
    assert sweep.point(1).variants == {
        "nodeGroups": "base",
        "workloads": "training",
        "expander": "least-waste",
        "scaleDownUtilizationThreshold": "0.5",
    }


def test_feature_gates_and_thresholds_are_a_points_settings(tmp_path: Path) -> None:
    axes = {"featureGates": ["", {"DRAPrioritizedList": False}]}
    sweep = load_sweep(_write(tmp_path, "gates.yaml", sweep="gates", axes=axes))
    on, off = sweep.points()
    assert on.settings.feature_gates["DRAPrioritizedList"] is True  # 1.36's default
    assert off.settings.feature_gates["DRAPrioritizedList"] is False
    assert (on.variants, off.variants) == (
        {"featureGates": "defaults"},
        {"featureGates": "DRAPrioritizedList=false"},
    )


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"sweep": "Bad Name"}, "sweep: 'Bad Name': letters, digits"),
        ({"from": "nowhere"}, "from: 'nowhere' is not a folder"),
        ({"colour": 1}, "unknown field(s) colour"),
        ({"axes": {"expander": []}}, "axes.expander: expected a list of variants"),
        ({"axes": {"expander": ["least-waste", "fastest"]}}, "axes.expander[1]: unknown expander"),
        ({"axes": {"speed": [1]}}, "axes.speed: unknown axis"),
        (
            {"axes": {"scaleDownUtilizationThreshold": [0.5, 1.5]}},
            "axes.scaleDownUtilizationThreshold[1]: must be between 0 and 1, got 1.5",
        ),
        ({"axes": {"featureGates": ["NoSuchGate=true"]}}, "axes.featureGates[0]:"),
        (
            {"axes": {"nodeGroups": [{"name": "x", "add": [{"name": "g", "size": 3}]}]}},
            "axes.nodeGroups[0].add[0]: unknown field(s) size",
        ),
        (
            {"axes": {"nodeGroups": [{"name": "x", "add": [{"name": "g"}]}]}},
            "axes.nodeGroups[0].add[0]: node: required",
        ),
        (
            {"axes": {"nodeGroups": [{"name": "x", "change": [{"name": "g", "cost": -1}]}]}},
            "axes.nodeGroups[0].change[0].cost: expected a cost",
        ),
        (
            {"axes": {"workloads": [{"name": "w", "add": ["missing.yaml"]}]}},
            "axes.workloads[0].add[0]: 'missing.yaml' is not a file",
        ),
        ({"points": [{"expander": "random"}]}, "points[0].expander: no variant 'random'"),
        ({"cost": {"gpu": "cheap"}}, "cost.gpu: expected a cost per node per hour"),
    ],
)
def test_file_errors_name_the_field(tmp_path: Path, changes: dict[str, Any], fragment: str) -> None:
    path = _write(tmp_path, "bad.yaml", **changes)
    with pytest.raises(SweepFileError) as caught:
        load_sweep(path)
    assert fragment in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_variant_that_does_not_fit_the_cluster_is_refused_before_any_run(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path,
        "wrong.yaml",
        sweep="wrong",
        axes={"nodeGroups": [{"name": "x", "remove": ["tpu"]}]},
    )
    db = str(tmp_path / "sweep.db")
    with pytest.raises(SweepFileError, match="remove: no node group 'tpu' in the base cluster"):
        run_sweep(db, load_sweep(path), workers=1)
    assert not Path(db).exists()  # nothing written


def test_a_point_is_an_autoscale_run_that_runs_lists(tmp_path: Path) -> None:
    db = str(tmp_path / "sweep.db")
    sweep = load_sweep(SWEEP)
    result = run_point(db, sweep.point(1))  # base, no workload, threshold 0.8
    assert result.status == "ran"
    assert result.summary is not None
    assert result.summary["added"] == {"gpu": 1}
    assert result.summary["nodes_removed"] == 1  # cpu-0 (0.59 < 0.8): its pod moves
    assert result.summary["cost_per_hour"] == 9.0  # gpu 3 nodes x 3.0, cpu none left
    (run,) = list_runs(db)
    assert (run.name, run.scenario, run.status) == ("gpu-shapes-1", "autoscale", "finished")
    assert run.settings is not None
    assert run.settings["sweep"]["variants"] == sweep.point(1).variants
    assert run.settings_text().startswith("sweep gpu-shapes point 1 (")
    assert "--scale-down-utilization-threshold 0.8" in run.settings_text()
    again = run_point(db, sweep.point(1))  # finished: reported, not run again
    assert again.status == "finished"
    assert again.summary == result.summary
    assert _digests(db) == {"gpu-shapes-1": run.state_digest}


# -- local workers ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def one_by_one(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, str]]:
    """The 24 points run one by one, in this process, into a SQLite file: rows and digests."""
    db = str(tmp_path_factory.mktemp("one-by-one") / "sweep.db")
    sweep = load_sweep(SWEEP)
    for point in sweep.points():
        run_point(db, point)
    return _rows(db), _digests(db)


@pytest.mark.slow
def test_two_workers_on_sqlite_give_what_one_by_one_gives(
    tmp_path: Path, one_by_one: tuple[dict[str, Any], dict[str, str]]
) -> None:
    db = str(tmp_path / "sweep.db")
    seen: list[tuple[str, int]] = []
    results = run_sweep(
        db, load_sweep(SWEEP), workers=2, report=lambda r, done, _t: seen.append((r.name, done))
    )
    assert [r.status for r in results] == ["ran"] * 24
    assert sorted(done for _name, done in seen) == list(range(1, 25))
    rows, digests = one_by_one
    assert _rows(db) == rows
    assert _digests(db) == digests
    # Differing results, so the comparison says something: cost, removals, pending pods.
    assert {r["cost_per_hour"] for r in rows.values()} == {9.0, 10.0, 11.0, 12.0, 13.0}
    assert {r["nodes_removed"] for r in rows.values()} == {0, 1}
    assert max(r["pods_pending"] for r in rows.values()) == 3
    # A second run of the sweep skips every point.
    again = run_sweep(db, load_sweep(SWEEP), workers=2)
    assert [r.status for r in again] == ["finished"] * 24


@pytest.mark.slow
@pytest.mark.postgres
def test_two_workers_on_postgres_give_what_one_by_one_gives(
    fresh_postgres_url: str, one_by_one: tuple[dict[str, Any], dict[str, str]]
) -> None:
    run_sweep(fresh_postgres_url, load_sweep(SWEEP), workers=2)
    rows, digests = one_by_one
    assert _rows(fresh_postgres_url) == rows
    assert _digests(fresh_postgres_url) == digests


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and b"resource_tracker" not in cmdline:
            found.append(int(entry.name))
    return found


def _done_puts(db: Path) -> dict[str, int]:
    """Per run: how many times its journal recorded the run record as done."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT s.name, count(*) FROM journal AS j JOIN stores AS s ON s.id = j.store_id "
            "WHERE j.op = 'put' AND j.kind = 'Simulation' AND j.key = 'run' "
            "AND j.value LIKE '%\"done\":true%' GROUP BY s.name"
        ).fetchall()
    finally:
        conn.close()
    return dict(rows)


@pytest.mark.slow
def test_a_worker_killed_mid_point_and_the_sweep_rerun_finish_each_point_once(
    tmp_path: Path,
) -> None:
    # Points long enough to be killed in (120 more pending pods), run one by one for reference.
    rng = random.Random(1)
    big = tmp_path / "big.yaml"
    big.write_text(yaml.safe_dump_all([generated.pod(f"big-{i}", rng) for i in range(120)]))
    axes = {
        "workloads": [{"name": "none"}, {"name": "big", "add": [str(big)]}],
        "scaleDownUtilizationThreshold": [0.5, 0.8],
    }
    path = _write(tmp_path, "kill.yaml", sweep="kill", axes=axes, cost={"gpu": 3.0})
    reference = str(tmp_path / "one-by-one.db")
    for point in load_sweep(path).points():
        run_point(reference, point)
    db = tmp_path / "sweep.db"
    command = [sys.executable, "-m", "drasnap.tools", "sweep", str(path), str(db), "--workers", "2"]
    sweep = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    killed = None
    deadline = time.monotonic() + 60
    while killed is None and time.monotonic() < deadline and sweep.poll() is None:
        if db.exists() and _unfinished(db):
            workers = _children(sweep.pid)
            if workers:
                killed = workers[0]
                os.kill(killed, signal.SIGKILL)
                break
        time.sleep(0.005)
    _, stderr = sweep.communicate(timeout=120)
    assert killed is not None, stderr
    assert sweep.returncode == 1, stderr
    assert "a worker process died" in stderr
    assert "run the same command again" in stderr
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert _rows(str(db), "kill") == _rows(reference, "kill")
    assert _digests(str(db)) == _digests(reference)
    assert _done_puts(db) == {f"kill-{i}": 1 for i in range(4)}


def _unfinished(db: Path) -> bool:
    """Whether a run of ``db`` has checkpointed its start and not its end (read cheaply)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1)
        try:
            row = conn.execute(
                "SELECT 1 FROM entries WHERE kind = 'Simulation' AND key = 'run' "
                "AND value LIKE '%\"done\":false%' LIMIT 1"
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:  # the database is being created
        return False
    return row is not None
