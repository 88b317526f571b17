"""``drasnap bench timeline``, ``timeline-sizes`` and ``alibaba`` at tiny sizes: the generated
cluster and trace are the ones documented, the rows carry the figures BENCHMARKS.md quotes, and
the Alibaba workload runs a trace the test writes (never the real one). Never timing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from drasnap.tools.bench import alibaba_bench, timeline_bench
from drasnap.tools.bench.suite import Row
from drasnap.tools.cli import cli

from tests.snapshot.simulation.test_trace_alibaba import HEADER, NODE_HEADER


def bench(*args: str) -> Any:
    return CliRunner().invoke(cli, ["bench", *args])


def test_the_trace_keeps_a_third_of_the_starting_cpus_and_gpus_busy() -> None:
    # 1,000 nodes: 600 cpu (8 CPUs), 300 gpu4 (16 CPUs, 4 GPUs), 100 gpu8 (32 CPUs, 8 GPUs):
    # 12,800 CPUs and 2,000 GPUs. Busy = rate x run: 12,800/3 CPUs of 4-CPU pods of 2 h is
    # 1,066.67 pods, 533.333 an hour; 1,000/3 GPUs of one-GPU pods of 2 h, 166.667 an hour;
    # 1,000/3 GPUs of four-GPU pods of 4 h: 83.33 pods, 20.833 an hour.
    assert timeline_bench.group_sizes(1000) == [600, 300, 100]
    assert timeline_bench.trace_spec(1000, "24h") == (
        "gen:rate=533.333/h,until=24h,shape=cpu:4/mem:16Gi,runs=120m;"
        "rate=166.667/h,until=24h,shape=cpu:2/mem:8Gi/gpu:1,runs=120m;"
        "rate=20.833/h,until=24h,shape=cpu:8/mem:32Gi/gpu:4,runs=240m"
    )
    doubled = timeline_bench.trace_spec(1000, "1h", arrivals=2)
    assert doubled.startswith("gen:rate=1066.667/h,until=1h,")


def test_the_inputs_are_a_cluster_folder_and_node_groups_file(tmp_path: Path) -> None:
    cluster, groups = timeline_bench.write_inputs(tmp_path, 10)
    items = json.loads((cluster / "cluster.json").read_text())["items"]
    kinds = [item["kind"] for item in items]
    assert kinds.count("Node") == 10 and kinds.count("DeviceClass") == 1
    # One slice per GPU node: 3 gpu4 nodes of 4 devices, 1 gpu8 node of 8.
    slices = {
        s["spec"]["nodeName"]: len(s["spec"]["devices"])
        for s in items
        if "spec" in s and s["kind"] == "ResourceSlice"
    }
    assert slices == {"gpu4-00000": 4, "gpu4-00001": 4, "gpu4-00002": 4, "gpu8-00000": 8}
    entries = yaml.safe_load(groups.read_text())["nodeGroups"]
    assert [(e["name"], e["minSize"], e["maxSize"], e["node"]) for e in entries] == [
        ("cpu", 0, 12, "cpu-00000"),
        ("gpu4", 0, 6, "gpu4-00000"),
        ("gpu8", 0, 2, "gpu8-00000"),
    ]


@pytest.fixture(scope="module")
def timeline_report() -> dict[str, Any]:
    result = bench(
        "timeline",
        "timeline-sizes",
        "--size",
        "tiny",
        "--repeat",
        "1",
        "--backends",
        "memory",
        "--json",
    )
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_the_timeline_row_gives_loops_per_loop_per_day_and_bindings(
    timeline_report: dict[str, Any],
) -> None:
    (row,) = [r for r in timeline_report["results"] if r["workload"].startswith("timeline @")]
    assert row["workload"] == "timeline @ 10 nodes, 30m" and row["backend"] == "memory"
    # The run ends an hour after the trace's last event (30 min of arrivals, then runs end).
    assert row["simulated_s"] > 3600
    # At most one loop per 10 s scan tick of the simulated time, and some run.
    assert 0 < row["loops"] <= row["simulated_s"] / 10 + 1
    assert row["s_per_loop"] == pytest.approx(row["median_s"] / row["loops"])
    assert row["s_per_simulated_day"] == pytest.approx(
        row["median_s"] * 86_400 / row["simulated_s"]
    )
    assert row["bindings_per_s"] == pytest.approx(row["bindings"] / row["median_s"])
    assert row["peak_bytes"] > 0  # (tracemalloc, as the other workloads)


def test_timeline_sizes_grows_nodes_and_arrivals_and_fits_both_exponents(
    timeline_report: dict[str, Any],
) -> None:
    rows = [r for r in timeline_report["results"] if r["workload"].startswith("timeline-sizes")]
    labels = [r["workload"] for r in rows]
    assert labels[:3] == [f"timeline-sizes @ {n} nodes, 30m, arrivals x1" for n in (5, 10, 20)]
    assert labels[3].startswith("timeline-sizes: growth exponent with nodes ")
    assert labels[4:7] == [f"timeline-sizes @ 10 nodes, 30m, arrivals x{a}" for a in (1, 2, 4)]
    assert labels[7].startswith("timeline-sizes: growth exponent with arrivals ")
    for exponent_row, points in ((rows[3], rows[:3]), (rows[7], rows[4:7])):
        # The exponent is fitted on the medians of the rows before it.
        assert exponent_row["samples_s"] == [r["median_s"] for r in points]
    # The same seed, the same 10-node day: x1 on both axes is the same run (its inputs are
    # written to another folder: the recorded settings, and so the digest, name it).
    assert (rows[1]["loops"], rows[1]["bindings"]) == (rows[4]["loops"], rows[4]["bindings"])
    # More arrivals, more pods bound (the x4 trace holds four times the rate).
    assert rows[4]["bindings"] < rows[6]["bindings"]


def test_the_timeline_workloads_default_to_the_store_simulate_opens() -> None:
    result = bench("timeline", "--size", "tiny", "--repeat", "1", "--no-memory", "--json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["results"]
    assert row["backend"] == "sqlite-behind"


# -- alibaba ---------------------------------------------------------------------------------

# Eight one-GPU pods of 500 milli, 100 s each, arriving 10 s apart, on a list of two 2-GPU
# nodes: every pod binds (two share a GPU through consumable capacity).
PODS = [f"p{i},1000,1024,1,500,,BE,Running,{10 * i},{10 * i + 100},{10 * i}" for i in range(8)]
NODES = ["n0,16000,65536,2,V100M16", "n1,16000,65536,2,V100M16"]


def alibaba_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "alibaba"
    folder.mkdir()
    (folder / "openb_pod_list_default.csv").write_text("\n".join([HEADER, *PODS]) + "\n")
    (folder / "openb_node_list_all_node.csv").write_text("\n".join([NODE_HEADER, *NODES]) + "\n")
    return folder


def test_alibaba_runs_the_first_eighth_quarter_half_and_all_of_the_rows(tmp_path: Path) -> None:
    result = bench(
        "alibaba", "--alibaba-dir", str(alibaba_dir(tmp_path)), "--repeat", "1", "--json"
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["results"]
    assert [r["workload"] for r in rows[:4]] == [
        "alibaba @ 1 pod rows (1/8)",
        "alibaba @ 2 pod rows (1/4)",
        "alibaba @ 4 pod rows (1/2)",
        "alibaba @ 8 pod rows (all)",
    ]
    # A prefix of n rows binds its n pods; a process tree's resident set is measured.
    assert [(r["pod_rows"], r["bindings"]) for r in rows[:4]] == [(1, 1), (2, 2), (4, 4), (8, 8)]
    assert all(r["backend"] == "sqlite-behind" and r["peak_bytes"] > 0 for r in rows[:4])
    assert rows[4]["workload"].startswith("alibaba: growth exponent ")
    assert rows[4]["workload"].endswith("(1-8 pod rows)")
    assert rows[4]["samples_s"] == [r["median_s"] for r in rows[:4]]


def test_alibaba_table_gives_time_memory_and_the_targets() -> None:
    rows = [
        Row(
            "alibaba @ 4 pod rows (1/2)",
            "sqlite-behind",
            2.0,
            [2.0],
            150_000_000,
            figures={"pod_rows": 4, "bindings": 4},
        ),
        Row(
            "alibaba @ 8 pod rows (all)",
            "sqlite-behind",
            4.0,
            [4.0],
            160_000_000,
            figures={"pod_rows": 8, "bindings": 8},
        ),
        Row(
            "alibaba: growth exponent 1.00 (4-8 pod rows)",
            "sqlite-behind",
            6.0,
            [2.0, 4.0],
            growth_exponent=1.0,
        ),
    ]
    lines = alibaba_bench.table(rows)
    assert lines[1].split() == ["alibaba", "@", "4", "pod", "rows", "(1/2)", "2.0", "150", "4"]
    assert lines[2].split()[-3:] == ["4.0", "160", "8"]
    assert lines[3] == "alibaba: growth exponent 1.00 (4-8 pod rows)"
    assert lines[4] == (
        "issue 36's targets, the whole default list: <= 300 s, <= 2 GB, exponent <= 1.1"
    )


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["alibaba"], "the alibaba workload needs --alibaba-dir DIR"),
        (["timeline", "--alibaba-dir", "."], "--alibaba-dir goes with the alibaba workload"),
    ],
)
def test_alibaba_usage_errors(args: list[str], fragment: str) -> None:
    result = bench(*args)
    assert result.exit_code == 2 and fragment in result.output


def test_a_folder_without_the_trace_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "openb_node_list_all_node.csv").write_text(NODE_HEADER + "\n")
    result = bench("alibaba", "--alibaba-dir", str(folder))
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        f"Error: --alibaba-dir {folder}: no openb_pod_list_default.csv there (download "
        "cluster-trace-gpu-v2023 from github.com/alibaba/clusterdata and give its folder)"
    )
