"""drasnap export: a run's objects at a seq as List files --from reads, optionally redacted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from drasnap.tools.cli import cli

from tests.paths import FIXTURES
from tests.snapshot.simulation.ca_cases import case_inputs, given_cases

DEMO = FIXTURES / "demos" / "prioritized-alternatives"


def test_export_at_a_seq_and_redacted(tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "sim.db")
    ran = runner.invoke(cli, ["simulate", "autoscale", db, "--from", str(DEMO), "--json"])
    assert ran.exit_code == 0, ran.output
    out = runner.invoke(cli, ["export", db, "-o", str(tmp_path / "end"), "--json"])
    assert out.exit_code == 0, out.output
    kinds = json.loads(out.stdout)["kinds"]
    assert kinds["ResourceSlice"] == 1 and kinds["Pod"] == 2 and kinds["ResourceClaim"] == 2
    pods = json.loads((tmp_path / "end" / "pods.json").read_text())["items"]
    assert all(p["spec"].get("nodeName") == "gpu-node-0" for p in pods)  # the run's placements
    # What was exported is read back by --from: the pods are already placed.
    again = runner.invoke(cli, ["simulate", "autoscale", db, "--from", str(tmp_path / "end"),
                                "--json"])  # fmt: skip
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["unschedulable"] == {}

    red = runner.invoke(cli, ["export", db, "--at", "3", "-o", str(tmp_path / "r"), "--redact"])
    assert red.exit_code == 0, red.output
    text = "".join(p.read_text() for p in (tmp_path / "r").iterdir())
    table = json.loads((tmp_path / "r.redaction.json").read_text())
    assert "prioritized-alternatives" not in text and "prioritized-alternatives" in table.values()
    refused = runner.invoke(cli, ["export", db, "-o", str(tmp_path / "r")])
    assert refused.exit_code == 1 and "exists and is not an empty folder" in refused.stderr


# Given cases with pending pods: DRA scale-up, steering, a chained expander, CPU only.
DECIDING = ("s0007-bdra", "s0011-fexpander", "s0026-cdown", "s0033-dsteer", "s0060-acpu")


@pytest.mark.parametrize("name", DECIDING)
def test_a_run_from_the_export_of_its_start_decides_what_the_run_decided(
    tmp_path: Path, name: str
) -> None:
    # The export at the run's first step holds the pending pods (the run keeps them as
    # PendingPod): --from the export is the cluster the run started from.
    (entry,) = [e for e in given_cases() if e["case"]["name"] == name]
    case = entry["case"]
    source, groups = case_inputs(case, tmp_path / "in")
    runner = CliRunner()
    options = ["--node-groups", str(groups), "--expander", case["expander"],
               "--scale-down-utilization-threshold", str(case["threshold"]), "--json"]  # fmt: skip

    def decided(db: Path, source: Path) -> dict[str, Any]:
        ran = runner.invoke(
            cli, ["simulate", "autoscale", str(db), "--from", str(source), *options]
        )
        assert ran.exit_code == 0, ran.output
        found: dict[str, Any] = json.loads(ran.stdout)
        return {k: v for k, v in found.items() if k not in ("seconds", "name", "state_digest")}

    first = decided(tmp_path / "sim.db", source)
    assert first["added"] or first["placed_on_existing"] or first["unschedulable"]
    start = runner.invoke(cli, ["query", str(tmp_path / "sim.db"), "--json",
                                "SELECT min(seq) AS seq FROM journal WHERE kind = 'Simulation'"
                                " AND key = 'run'"])  # fmt: skip
    assert start.exit_code == 0, start.output
    seq = json.loads(start.stdout)[0]["seq"]
    out = tmp_path / "start"
    exported = runner.invoke(cli, ["export", str(tmp_path / "sim.db"), "--at", str(seq), "-o",
                                   str(out), "--json"])  # fmt: skip
    assert exported.exit_code == 0, exported.output
    pending = [p for p in case["pods"] if not p["spec"].get("nodeName")]
    pods = json.loads((out / "pods.json").read_text())["items"]
    assert sum(not p["spec"].get("nodeName") for p in pods) == len(pending)
    assert decided(tmp_path / "again.db", out) == first
