"""``drasnap simulate ... --no-dra``: upstream's RunOnce benchmarks without DRA, from the
command line (small sizes; the full ones are in BENCHMARKS.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from drasnap.tools.cli import cli

from tests.tools.test_simulate_cli import ok_json, simulate


def test_no_dra_scale_down_runs_records_and_lists_its_option(tmp_path: Path) -> None:
    db = str(tmp_path / "sim.db")
    data = ok_json(simulate("scale-down", db, "--no-dra", "--nodes", "20", "--json"))
    assert data["nodes_removed"] == 12  # 800 pods, 100 a node: 8 of 20 nodes stay
    runs = CliRunner().invoke(cli, ["runs", db])
    assert "--no-dra --nodes 20" in runs.output  # (the record's keys, sorted)
    again = ok_json(simulate("scale-down", db, "--no-dra", "--nodes", "20", "--json"))
    assert again["state_digest"] == data["state_digest"]


def test_no_dra_scale_up(tmp_path: Path) -> None:
    db = str(tmp_path / "sim.db")
    data = ok_json(simulate("scale-up", db, "--no-dra", "--pods", "120", "--json"))
    assert (data["nodes_added"], data["pods_placed"]) == (3, 120)  # 50 a node


def test_resume_with_dra_of_a_no_dra_run_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "sim.db")
    ok_json(simulate("scale-up", db, "--no-dra", "--pods", "20", "--name", "p", "--json"))
    refused = simulate("scale-up", db, "--pods", "20", "--name", "p", "--resume")
    assert refused.exit_code == 1
    assert "dra: False there, None asked" in refused.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["scale-up", "--no-dra", "--gpus-per-node", "4"], "--gpus-per-node does not apply"),
        (["scale-up", "--no-dra", "--devices", "partitionable"], "does not apply with --no-dra"),
        (["scale-down", "--no-dra", "--pods-per-node", "101"], "cannot exceed 100"),
        (
            ["autoscale", "--no-dra", "--from", "."],
            "--dra/--no-dra does not apply to autoscale: it is taken by scale-up and scale-down",
        ),
    ],
    ids=["gpus", "devices", "pods-per-node", "autoscale"],
)
def test_refused_combinations_are_usage_errors_and_write_nothing(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    result = simulate(*args, "--db", str(tmp_path / "sim.db"))
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr.splitlines()[-1]
    assert not (tmp_path / "sim.db").exists()


def test_help_names_the_no_dra_presets() -> None:
    result = CliRunner().invoke(cli, ["simulate", "--help"])
    assert "--no-dra" in result.output
    assert "BenchmarkRunOnceScaleDown" in result.output
