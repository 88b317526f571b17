"""``drasnap sweep`` and ``drasnap compare`` at the command line: the Kubernetes Job it emits
(read by the kubernetes client's models, and its container command run as the Job controller
would run it), the comparison table, CSV, JSON and the ``sweep_results`` view, and usage
errors."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from drasnap.snapshot.simulation import compare_rows, load_sweep, run_point
from drasnap.tools.cli import cli
from kubernetes import client

from tests.paths import FIXTURES

SWEEP = FIXTURES / "sweep" / "gpu-shapes.yaml"


def _invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, list(args), env=env)


def _emit(*extra: str) -> list[dict[str, Any]]:
    result = _invoke("sweep", str(SWEEP), "--emit-job", "--image", "reg/drasnap:1", *extra)
    assert result.exit_code == 0, result.output
    return list(yaml.safe_load_all(result.stdout))


def test_the_emitted_job_parses_as_a_v1job() -> None:
    configmap, job_doc = _emit("--parallelism", "3")
    job = client.ApiClient().deserialize(json.dumps(job_doc), "V1Job", "application/json")
    assert isinstance(job, client.V1Job)
    # The models type every field as optional: each one read below must be present.
    spec = job.spec
    assert spec is not None
    assert spec.completion_mode == "Indexed"
    assert spec.completions == 24
    assert spec.parallelism == 3
    assert spec.backoff_limit_per_index == 2
    assert spec.pod_failure_policy is not None
    (usage, _disruption) = spec.pod_failure_policy.rules
    assert usage.action == "FailIndex"
    assert usage.on_exit_codes is not None
    assert usage.on_exit_codes.operator == "In" and usage.on_exit_codes.values == [2]
    pod = spec.template.spec
    assert pod is not None
    assert pod.restart_policy == "Never"  # podFailurePolicy needs it
    (container,) = pod.containers
    assert container.image == "reg/drasnap:1"
    assert container.env is not None and container.command is not None
    (env,) = container.env
    assert env.value_from is not None and env.value_from.secret_key_ref is not None
    assert env.value_from.secret_key_ref.name == "drasnap-db"
    assert "$(DRASNAP_DB)" in container.command
    cm = client.ApiClient().deserialize(json.dumps(configmap), "V1ConfigMap", "application/json")
    assert isinstance(cm, client.V1ConfigMap)
    assert cm.metadata is not None and cm.data is not None and pod.volumes is not None
    volume = pod.volumes[0].config_map
    assert volume is not None and volume.items is not None
    assert volume.name == cm.metadata.name
    paths = {item.path for item in volume.items}
    assert paths == {"gpu-shapes.yaml", "cluster/cluster.yaml", "training.yaml"}
    assert all(item.key in cm.data for item in volume.items)


def _materialize(configmap: dict[str, Any], job: dict[str, Any], root: Path) -> None:
    """Write the ConfigMap's files as the kubelet mounts them (each item at its path)."""
    for volume in job["spec"]["template"]["spec"]["volumes"]:
        for item in volume["configMap"]["items"]:
            target = root / item["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(configmap["data"][item["key"]])


@pytest.mark.slow
@pytest.mark.postgres
def test_the_job_command_runs_three_indices_against_postgres(
    tmp_path: Path, fresh_postgres_url: str
) -> None:
    configmap, job = _emit()
    container = job["spec"]["template"]["spec"]["containers"][0]
    mount = container["volumeMounts"][0]["mountPath"]
    _materialize(configmap, job, tmp_path / "mount")
    command = [
        word.replace("$(DRASNAP_DB)", fresh_postgres_url).replace(mount, str(tmp_path / "mount"))
        for word in container["command"]
    ]
    assert command[:2] == ["drasnap", "sweep"]
    program = [sys.executable, "-m", "drasnap.tools", *command[1:]]
    for index in (0, 7, 23):
        env = {**os.environ, "JOB_COMPLETION_INDEX": str(index)}
        done = subprocess.run(program, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"gpu-shapes-{index}: added ")
    rows = compare_rows(fresh_postgres_url, sweep="gpu-shapes")
    assert [row["name"] for row in rows] == ["gpu-shapes-0", "gpu-shapes-7", "gpu-shapes-23"]
    view = _invoke(
        "query",
        fresh_postgres_url,
        "SELECT name, point_index, nodes_added, cost_per_hour FROM sweep_results "
        "ORDER BY point_index",
        "--json",
    )
    assert view.exit_code == 0, view.output
    assert json.loads(view.stdout) == [
        {k: row[k] for k in ("name", "nodes_added", "cost_per_hour")}
        | {"point_index": row["index"]}
        for row in rows
    ]
    # The same as those points run here from the original files (a SQLite file).
    sweep = load_sweep(SWEEP)
    for row in rows:
        point = sweep.point(row["index"])
        assert row["variants"] == point.variants
        summary = run_point(str(tmp_path / "here.db"), point).summary
        assert row["scenario"] == "autoscale"  # (compare's rows say their scenario)
        assert {k: v for k, v in row.items() if k not in ("name", "scenario")} == summary


def _two_points(tmp_path: Path) -> tuple[str, Path]:
    data = yaml.safe_load(SWEEP.read_text())
    data["from"] = str(SWEEP.parent / "cluster")
    data["sweep"] = "pair"
    data["axes"]["workloads"][1]["add"] = [str(SWEEP.parent / "training.yaml")]
    data["points"] = [
        {"scaleDownUtilizationThreshold": 0.8},
        {"nodeGroups": "gpu8", "workloads": "training"},
    ]
    path = tmp_path / "pair.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    db = str(tmp_path / "sweep.db")
    result = _invoke("sweep", str(path), db, "--workers", "1")
    assert result.exit_code == 0, result.output
    assert "[2/2] pair-1 done" in result.stderr
    return db, path


def test_compare_table_json_csv_and_the_view_agree(tmp_path: Path) -> None:
    db, _ = _two_points(tmp_path)
    table = _invoke("compare", db, "--sweep", "pair", "--sort", "cost_per_hour")
    assert table.exit_code == 0, table.output
    header, _rule, first, second = table.stdout.splitlines()
    # Only the settings that differ are columns; the cheaper point first.
    assert header.split()[:3] == ["nodeGroups", "workloads", "scaleDownUtilizationThreshold"]
    assert "expander" not in header
    assert first.split()[:4] == ["base", "none", "0.8", "pair-0"]
    assert "gpu +1" in first and "9.00" in first
    assert second.split()[:4] == ["gpu8", "training", "0.5", "pair-1"]
    assert "gpu8 +1" in second and "12.00" in second  # gpu 2 x 3.0, cpu 1 x 1.0, gpu8 1 x 5.0
    data = json.loads(_invoke("compare", db, "--sweep", "pair", "--json").stdout)
    assert data["settings"] == ["nodeGroups", "workloads", "scaleDownUtilizationThreshold"]
    by_name = {row["name"]: row for row in data["rows"]}
    assert by_name["pair-1"]["added"] == {"gpu8": 1}
    assert by_name["pair-0"]["nodes_removed"] == 1
    rows = list(csv.DictReader(io.StringIO(_invoke("compare", db, "--csv").stdout)))
    assert [r["name"] for r in rows] == ["pair-0", "pair-1"]
    assert rows[1]["added"] == '{"gpu8": 1}'
    view = _invoke(
        "query",
        db,
        "SELECT name, nodes_added, pods_pending, nodes_removed, device_utilization, "
        "cost_per_hour FROM sweep_results ORDER BY point_index",
        "--json",
    )
    assert view.exit_code == 0, view.output
    got = json.loads(view.stdout)
    want = [
        {
            k: by_name[n][k]
            for k in (
                "name",
                "nodes_added",
                "pods_pending",
                "nodes_removed",
                "device_utilization",
                "cost_per_hour",
            )
        }
        for n in ("pair-0", "pair-1")
    ]
    assert got == want
    named = _invoke("compare", db, "--name", "pair-1", "--name", "pair-0", "--json")
    assert [r["name"] for r in json.loads(named.stdout)["rows"]] == ["pair-0", "pair-1"]


def test_one_index_from_the_environment_and_a_rerun_reports_it(tmp_path: Path) -> None:
    db = str(tmp_path / "sweep.db")
    env = {"JOB_COMPLETION_INDEX": "1"}
    first = _invoke("sweep", str(SWEEP), db, "--json", env=env)
    assert first.exit_code == 0, first.output
    (point,) = json.loads(first.stdout)
    assert (point["name"], point["status"], point["nodes_removed"]) == ("gpu-shapes-1", "ran", 1)
    again = _invoke("sweep", str(SWEEP), db, "--json", env=env)
    (reported,) = json.loads(again.stdout)
    assert reported["status"] == "finished"
    runs = json.loads(_invoke("runs", db, "--json").stdout)["runs"]
    assert [r["name"] for r in runs] == ["gpu-shapes-1"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--index", "24"], "index 24 is outside the sweep's points 0..23"),
        (["--emit-job", "--index", "1"], "--emit-job takes no DB, --index or --workers"),
        (["--workers", "0"], "between 1 and 256"),
        (["--index", "1", "--workers", "2"], "--index runs one point"),
        (["--image", "x"], "--image and --parallelism go with --emit-job"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], fragment: str) -> None:
    db = [] if "--emit-job" in args else [str(tmp_path / "sweep.db")]
    result = _invoke("sweep", str(SWEEP), *db, *args)
    assert result.exit_code == 2, result.output
    assert fragment in result.output
    assert not (tmp_path / "sweep.db").exists()


def test_a_wrong_sweep_file_is_a_usage_error_naming_the_field(tmp_path: Path) -> None:
    shutil.copytree(SWEEP.parent, tmp_path / "sweep")
    path = tmp_path / "sweep" / "bad.yaml"
    path.write_text(SWEEP.read_text().replace("most-pods", "fewest-pods"))
    result = _invoke("sweep", str(path), str(tmp_path / "sweep.db"))
    assert result.exit_code == 2  # a Job's podFailurePolicy fails the index, no retry
    assert "axes.expander[1]: unknown expander 'fewest-pods'" in result.output
    assert "Traceback" not in result.output


def test_compare_refuses_what_it_cannot_compare(tmp_path: Path) -> None:
    db, _ = _two_points(tmp_path)
    missing = _invoke("compare", db, "--name", "nope")
    assert missing.exit_code == 1
    assert "Error: no run 'nope'" in missing.output
    none = _invoke("compare", db, "--sweep", "other")
    assert none.exit_code == 1 and "no finished point of a sweep 'other'" in none.output
    sort = _invoke("compare", db, "--sort", "colour")
    assert sort.exit_code == 2 and "choose from" in sort.output
