"""drasnap export: a run's objects at a seq as List files --from reads, optionally redacted."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from drasnap.tools.cli import cli

from tests.paths import FIXTURES

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
