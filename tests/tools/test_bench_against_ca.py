"""``drasnap bench --against-ca``: parsing ``go test -bench`` output, and the comparison with a
fake upstream binary (a script written here: the real one is a development tool, never a
test's), drasnap's side at its tiny size. Never timing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from drasnap.tools.bench import against_ca
from drasnap.tools.bench.names import CA_CASES
from drasnap.tools.cli import cli

# The output of the real binary for one benchmark (ca-runonce-bench -test.run XXX -test.bench
# 'BenchmarkRunOnceScaleDownDRA$' -test.benchtime 1x -test.benchmem), in its shape.
GO_OUTPUT = """goos: linux
goarch: amd64
pkg: k8s.io/autoscaler/cluster-autoscaler/core/bench
cpu: Intel(R) Xeon(R) Processor
BenchmarkRunOnceScaleDownDRA-2   	       1	4912345678 ns/op	3212345678 B/op	"""
GO_OUTPUT += """11612345 allocs/op
PASS
"""

FAKE_CA = """#!{python}
import sys
name = sys.argv[sys.argv.index("-test.bench") + 1].strip("^$")
if name == "BenchmarkRunOnceScaleDown" and "{fail}":
    print("--- FAIL: " + name + "\\n    verify failed: invalid number of deleted nodes")
    print("FAIL")
    sys.exit(1)
ballast = bytearray(30 << 20)  # some resident memory to measure
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
print("goos: linux")
print(name + "-2   \\t       1\\t{ns} ns/op\\t100 B/op\\t7 allocs/op")
print("PASS")
"""


def fake_ca(folder: Path, *, ns: int = 1_500_000_000, fail: bool = False) -> Path:
    path = folder / "fake-ca"
    path.write_text(FAKE_CA.format(python=sys.executable, ns=ns, fail="yes" if fail else ""))
    path.chmod(0o755)
    return path


def bench(*args: str) -> Any:
    return CliRunner().invoke(cli, ["bench", *args])


def test_go_bench_lines_are_parsed() -> None:
    found = against_ca.parse_go_bench(GO_OUTPUT)
    assert list(found) == ["BenchmarkRunOnceScaleDownDRA"]
    result = found["BenchmarkRunOnceScaleDownDRA"]
    assert (result.iterations, result.ns_per_op) == (1, 4912345678.0)
    assert result.metrics == {"B/op": 3212345678.0, "allocs/op": 11612345.0}
    # GOMAXPROCS=1 prints no -N suffix; other lines are not results.
    plain = against_ca.parse_go_bench("BenchmarkRunOnceScaleUp \t 1\t 2.5e+10 ns/op\nok  x 3s\n")
    assert plain["BenchmarkRunOnceScaleUp"].ns_per_op == 2.5e10
    assert against_ca.parse_go_bench("PASS\n") == {}


def test_cases_are_upstreams_four_with_its_outcomes() -> None:
    assert tuple(against_ca.CASES) == CA_CASES
    expected = {c.benchmark: (c.words("full"), c.result) for c in against_ca.CASES.values()}
    assert expected == {
        "BenchmarkRunOnceScaleUp": ((("scale-up", "--no-dra"), 1000), "nodes_added"),
        "BenchmarkRunOnceScaleUpDRA": ((("scale-up",), 500), "nodes_added"),
        "BenchmarkRunOnceScaleDown": ((("scale-down", "--no-dra"), 1200), "nodes_removed"),
        "BenchmarkRunOnceScaleDownDRA": ((("scale-down",), 480), "nodes_removed"),
    }
    names = [c.name for c in against_ca.choose("ScaleDownDRA, BenchmarkRunOnceScaleUp")]
    assert names == ["ScaleDownDRA", "ScaleUp"]
    with pytest.raises(ValueError, match="unknown upstream benchmark 'ScaleSideways'"):
        against_ca.choose("ScaleSideways")


def test_the_comparison_runs_both_sides_alternately(tmp_path: Path) -> None:
    binary = fake_ca(tmp_path)
    result = bench(
        "--against-ca", str(binary), "--ca-bench", "ScaleUpDRA,ScaleDown",
        "--size", "tiny", "--repeat", "2", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["results"] == []  # no workload named: only the comparison
    rows = {r["benchmark"]: r for r in report["against_ca"]}
    assert list(rows) == ["BenchmarkRunOnceScaleUpDRA", "BenchmarkRunOnceScaleDown"]
    up, down = rows.values()
    assert up["drasnap_command"] == ["simulate", "scale-up", "--pods", "24"]
    assert (up["expected"], up["outcomes"], up["matches"]) == (3, [3, 3], True)
    assert down["drasnap_command"] == ["simulate", "scale-down", "--no-dra", "--nodes", "10"]
    assert (down["expected"], down["outcomes"], down["matches"]) == (6, [6, 6], True)
    for row in rows.values():
        assert row["ca_samples_s"] == [1.5, 1.5]
        assert row["ca_metrics"] == {"B/op": 100.0, "allocs/op": 7.0}
        assert len(row["drasnap_samples_s"]) == 2
        assert row["ratio_ca_over_drasnap"] == pytest.approx(1.5 / row["drasnap_wall_s"])
        assert row["ca_peak_rss_bytes"] > 30 << 20  # the fake's ballast
        assert row["drasnap_peak_rss_bytes"] > row["ca_peak_rss_bytes"] / 4
        assert len(row["state_digests"]) == 1  # the same command, the same state
    order = [line for line in result.stderr.splitlines() if "run " in line]
    assert order[:2] == [
        "... BenchmarkRunOnceScaleUpDRA: run 1/2, ca",
        "... BenchmarkRunOnceScaleUpDRA: run 1/2, drasnap",
    ]
    assert order[4:6] == [
        "... BenchmarkRunOnceScaleUpDRA: run 2/2, drasnap",
        "... BenchmarkRunOnceScaleUpDRA: run 2/2, ca",
    ]


def test_the_table_names_each_benchmark_and_says_the_size_is_not_upstreams(
    tmp_path: Path,
) -> None:
    binary = fake_ca(tmp_path, ns=2_000_000_000)
    result = bench(
        "--against-ca", str(binary), "--ca-bench", "ScaleDownDRA", "--size", "tiny",
        "--repeat", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("upstream RunOnce benchmarks")
    assert lines[1].split()[:3] == ["upstream", "drasnap", "command"]
    row = lines[2]
    assert row.startswith("BenchmarkRunOnceScaleDownDRA  simulate scale-down --nodes 10")
    assert "2.00 s" in row
    assert row.endswith("6 nodes removed, as upstream")
    assert any("size tiny: drasnap's side is smaller than upstream's" in x for x in lines)


def test_a_failing_upstream_benchmark_is_reported_and_fails_the_command(tmp_path: Path) -> None:
    # Upstream's verify can fail (its binpacking stops at 60 s on a loaded machine): the other
    # runs go on, the table says which failed and why, and the command exits 1.
    binary = fake_ca(tmp_path, fail=True)
    result = bench(
        "--against-ca", str(binary), "--ca-bench", "ScaleDown,ScaleUpDRA", "--size", "tiny",
        "--repeat", "1",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "BenchmarkRunOnceScaleDown failed (exit 1)" in result.stderr
    (down,) = [line for line in result.stdout.splitlines() if "ScaleDown " in line]
    assert "FAILED: ca: " in down
    assert "verify failed" in down
    (up,) = [line for line in result.stdout.splitlines() if "ScaleUpDRA " in line]
    assert up.endswith("3 nodes added, as upstream")
    assert "runs failed for BenchmarkRunOnceScaleDown" in result.stderr


def test_a_different_outcome_fails_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = against_ca.Case("ScaleDownDRA", ("scale-down",), "nodes_removed", 480, {
        "tiny": (("--nodes", "10"), 7),
    })  # fmt: skip
    monkeypatch.setitem(against_ca.CASES, "ScaleDownDRA", wrong)
    binary = fake_ca(tmp_path)
    result = bench(
        "--against-ca", str(binary), "--ca-bench", "ScaleDownDRA", "--size", "tiny",
        "--repeat", "1",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "MISMATCH: 6 nodes removed, upstream 7" in result.stdout
    assert "drasnap's outcome is not upstream's for BenchmarkRunOnceScaleDownDRA" in result.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--ca-bench", "ScaleUp"], "--ca-bench goes with --against-ca"),
        (["--against-ca", "{binary}", "--ca-bench", "Nope"], "unknown upstream benchmark"),
        (["--against-ca", "{folder}/missing"], "does not exist"),
    ],
    ids=["without-binary", "unknown", "missing"],
)
def test_usage_errors(tmp_path: Path, args: list[str], fragment: str) -> None:
    binary = fake_ca(tmp_path)
    words = [a.format(binary=binary, folder=tmp_path) for a in args]
    result = bench(*words)
    assert result.exit_code == 2
    assert fragment in result.stderr


@pytest.mark.parametrize("name", CA_CASES)
def test_each_cases_tiny_preset_gives_the_outcome_the_table_expects(
    tmp_path: Path, name: str
) -> None:
    case = against_ca.CASES[name]
    words, expected = case.words("tiny")
    result = CliRunner().invoke(cli, ["simulate", *words, str(tmp_path / "sim.db"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[case.result] == expected


HOLD = """
import sys, time
ballast = bytearray(60 << 20)  # 60 MB, touched so that it is resident
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
"""
CHILD = HOLD + "time.sleep(1.0)\n"
PARENT = (
    "import subprocess\n" + HOLD + "subprocess.Popen([sys.executable, '-c', sys.argv[1]]).wait()\n"
)


def test_peak_rss_sums_the_process_and_its_child_as_drasnap_and_its_writer() -> None:
    # wait4's ru_maxrss is the largest single process of the tree (one 60 MB process here);
    # the sampled sum sees both at once, as drasnap's writer process runs beside it.
    measured = against_ca.run_measured([sys.executable, "-c", PARENT, CHILD])
    assert measured.returncode == 0, measured.stderr
    assert measured.peak_rss > 120 << 20
