"""``drasnap bench`` at tiny sizes: it runs, every backend ends in the same state, and the JSON
has the documented fields. Never timing: timing lives in BENCHMARKS.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from drasnap.tools.cli import cli

ROW_FIELDS = {"workload", "backend", "median_s", "peak_bytes", "vs_deepcopy", "vs_memory"}
BACKENDS = ["deepcopy", "memory", "sqlite", "sqlite-behind", "sqlite-nojournal"]


def bench(*args: str) -> Any:
    return CliRunner().invoke(cli, ["bench", *args], catch_exceptions=False)


@pytest.fixture(scope="module")
def scenario_report() -> dict[str, Any]:
    result = bench(
        "schedule-revert", "scale-up", "scale-down", "--size", "tiny", "--repeat", "2", "--json"
    )
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_json_has_the_documented_fields(scenario_report: dict[str, Any]) -> None:
    assert {"cpu", "cores", "python"} <= set(scenario_report["machine"])
    rows = scenario_report["results"]
    assert {(r["workload"], r["backend"]) for r in rows} == {
        (w, b) for w in ("schedule-revert", "scale-up", "scale-down") for b in BACKENDS
    }
    for row in rows:
        assert set(row) >= ROW_FIELDS
        assert row["median_s"] > 0
        assert len(row["samples_s"]) == 2
        assert row["peak_bytes"] > 0
        if row["backend"] == "deepcopy":
            assert row["vs_deepcopy"] == 1.0
        if row["backend"] == "memory":
            assert row["vs_memory"] == 1.0


def test_every_backend_ends_in_the_same_state(scenario_report: dict[str, Any]) -> None:
    by_workload: dict[str, set[str]] = {}
    counts: dict[str, set[tuple[int, int, int]]] = {}
    for row in scenario_report["results"]:
        by_workload.setdefault(row["workload"], set()).add(row["state_digest"])
        counts.setdefault(row["workload"], set()).add(
            (row["forks"], row["commits"], row["reverts"])
        )
    assert all(len(digests) == 1 for digests in by_workload.values()), by_workload
    assert all(len(c) == 1 for c in counts.values()), counts
    assert counts["scale-down"] == {(8, 6, 2)}  # 8 candidates, 2 pods each: 6 can go


def test_the_same_seed_gives_the_same_state_and_another_seed_another(
    scenario_report: dict[str, Any],
) -> None:
    common = ["scale-up", "--size", "tiny", "--repeat", "1", "--no-memory", "--json"]
    again = json.loads(bench(*common, "--backends", "memory").stdout)
    other = json.loads(bench(*common, "--backends", "memory", "--seed", "5").stdout)
    first = {r["state_digest"] for r in scenario_report["results"] if r["workload"] == "scale-up"}
    assert {r["state_digest"] for r in again["results"]} == first
    assert {r["state_digest"] for r in other["results"]} != first


def test_partitionable_scale_up_workload_ends_alike_on_every_backend() -> None:
    result = bench(
        "scale-up-partitionable", "--size", "tiny", "--repeat", "1", "--no-memory", "--json",
        "--backends", "memory,sqlite",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["results"]
    assert [(r["workload"], r["backend"]) for r in rows] == [
        ("scale-up-partitionable", "memory"),
        ("scale-up-partitionable", "sqlite"),
    ]
    assert len({r["state_digest"] for r in rows}) == 1
    # 24 pods, two node groups: two estimates and the expansion, as on flat devices.
    assert {(r["forks"], r["commits"], r["reverts"]) for r in rows} == {(3, 1, 2)}


def test_scaling_micro_tables_and_plot(tmp_path: Path) -> None:
    chart = tmp_path / "bench.png"
    result = bench(
        "scaling", "store", "snapshot", "--size", "tiny", "--repeat", "1",
        "--backends", "memory,sqlite", "--plot", str(chart),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "fork+revert @ 1,000 keys" in result.stdout
    assert "store operations" in result.stdout
    assert "DRA snapshot operations" in result.stdout
    assert "peak memory holding 1,000 keys" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["scale-sideways"], "unknown workload 'scale-sideways'"),
        (["--backends", "memory,oracle"], "unknown backend 'oracle'"),
        (["--backends", "postgres"], "the postgres backend needs --postgres-url"),
        (["--repeat", "0"], "Invalid value for '--repeat': 0 is not in the range x>=1"),
    ],
)
def test_a_bad_option_value_is_a_usage_error(args: list[str], message: str) -> None:
    """Exit 2, as click's usage errors (the README's convention), with the value named."""
    result = bench(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines()[-1].startswith("Error: ")
    assert message in result.stderr


def test_scale_down_sizes_reports_each_size_and_a_growth_exponent() -> None:
    result = bench(
        "scale-down-sizes", "--size", "tiny", "--repeat", "1", "--backends", "memory,sqlite",
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["results"]
    sized = [r for r in rows if "@" in r["workload"]]
    assert [r["workload"] for r in sized if r["backend"] == "memory"] == [
        f"scale-down-sizes @ {n} nodes" for n in (8, 16, 32)
    ]
    for n in (8, 16, 32):  # the same decisions on every backend
        assert len({r["state_digest"] for r in sized if f"@ {n} nodes" in r["workload"]}) == 1
    fitted = [r for r in rows if "growth_exponent" in r]
    assert {r["backend"] for r in fitted} == {"memory", "sqlite"}
    for row in fitted:
        shown = float(row["workload"].split("growth exponent ")[1].split()[0])
        # Shown to two places, the JSON's to three: they differ by at most half a hundredth
        # (0.955 may print as 0.95 or 0.96, by its binary value), plus float error.
        assert abs(shown - row["growth_exponent"]) <= 0.005 + 1e-9


def test_the_fitted_exponent_is_the_slope_on_a_log_log_scale() -> None:
    from drasnap.tools.bench.sizes import growth_exponent

    assert growth_exponent([800, 1600, 3200], [3.0, 6.0, 12.0]) == pytest.approx(1.0)
    assert growth_exponent([800, 1600, 3200], [3.0, 12.0, 48.0]) == pytest.approx(2.0)
    assert growth_exponent([1, 10], [5.0, 5.0]) == pytest.approx(0.0)
