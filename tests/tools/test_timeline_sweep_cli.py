"""``drasnap sweep`` and ``drasnap compare`` over timelines: a 2x2 sweep (unneeded time x
scheduler scoring) on README's timeline example, whose compare rows are each point's own
``drasnap simulate timeline --json`` result, and a comparison mixing scenarios refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from drasnap.snapshot.simulation import load_sweep, run_point
from drasnap.tools.cli import cli

from tests.paths import FIXTURES, ROOT

EXAMPLE = ROOT / "docs" / "examples" / "timeline"
TRACE = (
    "gen:rate=12/h,until=1h,shape=cpu:2/mem:8Gi/gpu:1,runs=30m;"
    "rate=1/m,until=1h,shape=cpu:1/mem:2Gi,runs=10m"
)
UNNEEDED = ["10m", "2m"]
SCORING = ["LeastAllocated", "MostAllocated"]


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def _sweep(tmp_path: Path) -> Path:
    path = tmp_path / "tl.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "sweep": "tl",
                "scenario": "timeline",
                "from": str(EXAMPLE / "cluster"),
                "nodeGroups": str(EXAMPLE / "node-groups.yaml"),
                "trace": TRACE,
                "until": "2h",
                "cost": {"gpu": 2.0},  # the node-groups file says 3.2: the sweep's wins
                "axes": {"scaleDownUnneededTime": UNNEEDED, "schedulerScoring": SCORING},
            }
        )
    )
    return path


def test_compare_rows_are_each_points_own_timeline_result(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    ran = _invoke("sweep", str(_sweep(tmp_path)), db, "--workers", "1")
    assert ran.exit_code == 0, ran.output
    shown = _invoke("compare", db, "--sweep", "tl", "--json")
    assert shown.exit_code == 0, shown.output
    table = json.loads(shown.stdout)
    assert table["settings"] == ["scaleDownUnneededTime", "schedulerScoring"]
    rows = {row["name"]: row for row in table["rows"]}
    # The same cluster and trace run by hand, the sweep's cost in its node-groups file.
    groups = tmp_path / "groups.yaml"
    groups.write_text((EXAMPLE / "node-groups.yaml").read_text().replace("cost: 3.2", "cost: 2.0"))
    for index, (unneeded, scoring) in enumerate(
        (u, s) for u in UNNEEDED for s in SCORING
    ):  # the last axis fastest
        alone = _invoke(
            "simulate",
            "timeline",
            str(tmp_path / "alone.db"),
            "--name",
            f"alone-{index}",
            "--from",
            str(EXAMPLE / "cluster"),
            "--node-groups",
            str(groups),
            "--trace",
            TRACE,
            "--until",
            "2h",
            "--scale-down-unneeded-time",
            unneeded,
            "--scheduler-scoring",
            scoring,
            "--json",
        )
        assert alone.exit_code == 0, alone.output
        result = json.loads(alone.stdout)
        row = rows[f"tl-{index}"]
        assert (row["scaleDownUnneededTime"], row["schedulerScoring"]) == (unneeded, scoring)
        assert row["cluster_cost"] == result["cluster_cost"] is not None
        assert row["group_node_hours"] == result["node_hours"]
        assert row["node_hours"] == round(sum(result["node_hours"].values()), 6)
        assert row["wait_p50_s"] == result["pod_wait_s"]["p50"]
        assert row["wait_p99_s"] == result["pod_wait_s"]["p99"]
        for key in ("never_scheduled", "lost", "scale_ups", "scale_downs"):
            assert row[key] == result[key], key
    # The table: the varied settings, then the timeline's columns.
    text = _invoke("compare", db, "--sweep", "tl")
    assert text.exit_code == 0, text.output
    header = text.stdout.splitlines()[0].split()
    assert header == [
        "scaleDownUnneededTime",
        "schedulerScoring",
        "name",
        "cluster_cost",
        "node_hours",
        "group_node_hours",
        "device_hours",
        "wait_p50_s",
        "wait_p99_s",
        "never_scheduled",
        "lost",
        "scale_ups",
        "scale_downs",
    ]
    # The sweep's page: the same columns, and charts of what a timeline costs.
    page = tmp_path / "tl.html"
    wrote = _invoke("report", db, "--sweep", "tl", "-o", str(page))
    assert wrote.exit_code == 0, wrote.output
    html = page.read_text()
    assert "<th>cluster_cost</th>" in html or ">cluster_cost<" in html
    assert "scaleDownUnneededTime chart: cost, node-hours and pod wait p99 by variant" in html
    # Named timeline runs compare too, and sort by any column.
    named = _invoke(
        "compare", str(tmp_path / "alone.db"), "--name", "alone-0", "--name", "alone-3",
        "--sort", "cluster_cost", "--json",
    )  # fmt: skip
    assert named.exit_code == 0, named.output
    costs = [r["cluster_cost"] for r in json.loads(named.stdout)["rows"]]
    assert costs == sorted([rows["tl-0"]["cluster_cost"], rows["tl-3"]["cluster_cost"]])


def test_autoscale_and_timeline_runs_are_not_compared_together(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    path = tmp_path / "tl.yaml"
    data = yaml.safe_load(_sweep(tmp_path).read_text())
    data["trace"] = "gen:rate=2/h,until=10m,shape=cpu:1/mem:1Gi,runs=5m"
    data["until"] = "20m"
    data["axes"] = {"scaleDownUnneededTime": ["10m"]}
    path.write_text(yaml.safe_dump(data))
    run_point(db, load_sweep(path).point(0))
    shapes = yaml.safe_load((FIXTURES / "sweep" / "gpu-shapes.yaml").read_text())
    shapes["from"] = str(FIXTURES / "sweep" / "cluster")
    shapes["axes"] = {"expander": ["least-waste"]}
    other = tmp_path / "shapes.yaml"
    other.write_text(yaml.safe_dump(shapes))
    run_point(db, load_sweep(other).point(0))
    for args in (["compare", db], ["compare", db, "--name", "tl-0", "--name", "gpu-shapes-0"]):
        refused = _invoke(*args)
        assert refused.exit_code == 1
        (line,) = refused.output.strip().splitlines()
        assert line.startswith("Error: cannot compare autoscale and timeline runs in one table")
    # Each scenario alone is compared.
    assert _invoke("compare", db, "--sweep", "tl").exit_code == 0
    assert _invoke("compare", db, "--sweep", "gpu-shapes").exit_code == 0
