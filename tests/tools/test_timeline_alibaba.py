"""``drasnap simulate timeline --trace alibaba-gpu-v2023:PODS.csv --trace-nodes NODES.csv``: a
small trace in Alibaba's schema, written here (the real one is never in the repository), run
end to end from an empty cluster: the node list's shapes are the node groups."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from drasnap.store import Store
from drasnap.tools.cli import cli

from tests.snapshot.simulation.test_trace_alibaba import HEADER, NODE_HEADER

# Two 2-GPU V100M16 nodes in the list. a: a whole GPU for 100 s from t=10; b, c: 600 and 500
# milli of one GPU (consumable capacity: both fit one GPU); d: no GPU.
PODS = [
    "a,4000,8192,1,1000,,LS,Running,10,140,40",
    "b,2000,4096,1,600,,BE,Running,20,320,20",
    "c,2000,4096,1,500,,BE,Running,30,330,30",
    "d,1000,1024,0,0,,Burstable,Running,40,100,40",
]
NODES = ["n0,16000,65536,2,V100M16", "n1,16000,65536,2,V100M16"]


def test_an_alibaba_trace_runs_from_an_empty_cluster(tmp_path: Path) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text("\n".join([HEADER, *PODS]) + "\n")
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("\n".join([NODE_HEADER, *NODES]) + "\n")
    result = CliRunner().invoke(
        cli,
        [
            "simulate",
            "timeline",
            str(tmp_path / "sim.db"),
            "--trace",
            f"alibaba-gpu-v2023:{pods}",
            "--trace-nodes",
            str(nodes),
            "--until",
            "30m",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    (group,) = found["node_hours"]  # one node shape, one group, starting empty
    assert group.startswith("v100m16-2gpu")
    assert found["pods_bound"] >= 4 and found["never_scheduled"] == 0
    with Store.open(tmp_path / "sim.db", name="timeline-1", readonly=True) as store:
        loops = [store.get("TimelineLoop", k) for k in sorted(store.keys("TimelineLoop"))]
        lives = store.items("PodLife")
    # Loop 10s skips a (created at 10s: not older than the delay); loop 20s scales up for a.
    # Loop 30s packs a (whole GPU) and b (600 milli) on the upcoming node's placeholder;
    # loop 40s finds no GPU with 500 milli left for c: a second node.
    ups = [(loop["t"], loop["scaled_up"]) for loop in loops if loop["scaled_up"]]
    assert ups[:2] == [(20_000, {group: 1}), (40_000, {group: 1})]
    # The first node is Ready at 2m20s: a (LS, first in the queue), b and d bind; c's 500
    # milli fit neither GPU left there (a's whole, b's 600): it binds on the second at 2m40s.
    assert [lives[f"default/{p}"]["bound"] for p in "abcd"] == [140_000, 140_000, 160_000, 140_000]
    assert lives["default/a"]["node"] == lives["default/b"]["node"] != lives["default/c"]["node"]


def test_rows_the_mapping_cannot_take_are_counted_in_the_result(tmp_path: Path) -> None:
    # f asks 500 milli of each of 2 GPUs: no share of several GPUs in the mapping (counted).
    pods = tmp_path / "pods.csv"
    pods.write_text("\n".join([HEADER, PODS[0], "f,1000,1024,2,500,,BE,Running,1,2,1"]) + "\n")
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("\n".join([NODE_HEADER, *NODES]) + "\n")
    result = CliRunner().invoke(
        cli,
        [
            "simulate",
            "timeline",
            str(tmp_path / "sim.db"),
            "--trace",
            f"alibaba-gpu-v2023:{pods}",
            "--trace-nodes",
            str(nodes),
            "--until",
            "5m",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    warnings = json.loads(result.stdout)["warnings"]
    assert any("row 2" in w for w in warnings), warnings
