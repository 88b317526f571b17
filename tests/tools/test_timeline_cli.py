"""``drasnap simulate timeline`` as a user runs it: killed at any moment and resumed with the
same command line, it ends on the result of a run never interrupted; bad input is one line
and leaves no database behind (issue 35's Done-when)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from drasnap.tools.cli import cli

from tests.snapshot.simulation.test_autoscale import write
from tests.snapshot.simulation.timeline.helpers import create, delete, group_entry, node, owned, pod
from tests.tools.test_simulate_crash import comparable, drasnap, finish, rerun_until_it_succeeds

KILLS = 5


def inputs(folder: Path, trace: list[dict[str, Any]] | None = None) -> list[str]:
    """A cluster of two 4-CPU nodes, groups cpu and big, and a trace of 60 pods over 5 minutes
    (a third of 8 CPUs, so big scales up and down); the options that read them."""
    write(folder / "cluster", node("n1", "cpu", 4), node("n2", "cpu", 4))
    groups = {"nodeGroups": [group_entry("cpu", 4), group_entry("big", 8)]}
    (folder / "groups.yaml").write_text(yaml.safe_dump(groups))
    if trace is None:
        trace = [
            create(5 * i + 1, owned(pod(f"p{i}", "8" if i % 3 == 0 else "1")), runs=600 + 37 * i)
            for i in range(60)
        ]
    (folder / "trace.jsonl").write_text("".join(json.dumps(line) + "\n" for line in trace))
    return [
        "--from",
        str(folder / "cluster"),
        "--node-groups",
        str(folder / "groups.yaml"),
        "--trace",
        str(folder / "trace.jsonl"),
    ]


def timeline(db: Path, given: list[str], *extra: str) -> list[str]:
    return ["timeline", str(db), *given, "--name", "run", "--resume", "--json", *extra]


@pytest.mark.slow
def test_sigkill_at_any_moment_then_the_same_command_line(tmp_path: Path) -> None:
    given = inputs(tmp_path)
    began = time.monotonic()
    reference = finish(drasnap(*timeline(tmp_path / "reference.db", given)))
    took = time.monotonic() - began
    assert reference["scale_ups"] > 0 and reference["scale_downs"] > 0
    for i in range(KILLS):
        db = tmp_path / f"sim-{i}.db"
        victim = drasnap(*timeline(db, given, "--checkpoint-every", "0"))
        time.sleep(0.2 + i * took / KILLS)  # (the kill's moment: start-up to the end)
        victim.send_signal(signal.SIGKILL)
        victim.communicate(timeout=300)
        result = rerun_until_it_succeeds(timeline(db, given, "--checkpoint-every", "0"))
        assert comparable(result) == comparable(reference), i


def refused(tmp_path: Path, *args: str) -> str:
    """Run ``drasnap simulate`` expecting a refusal: its message, one line; no database."""
    db = tmp_path / "sim.db"
    result = CliRunner().invoke(cli, ["simulate", "timeline", str(db), *args])
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(lines) == 1, result.output
    assert not db.exists()
    return lines[0]


def test_a_negative_or_malformed_duration_is_refused_by_name(tmp_path: Path) -> None:
    given = inputs(tmp_path)
    assert "--until" in refused(tmp_path, *given, "--until", "-5m")
    assert "--scan-interval" in refused(tmp_path, *given, "--scan-interval", "10q")


def test_an_option_drasnap_does_not_take_is_refused_by_name(tmp_path: Path) -> None:
    given = inputs(tmp_path)
    assert "--balance-similar-node-groups" in refused(
        tmp_path, *given, "--balance-similar-node-groups"
    )
    # A timeline option given to another scenario is refused there too.
    result = CliRunner().invoke(
        cli, ["simulate", "scale-up", str(tmp_path / "x.db"), "--scan-interval", "5s"]
    )
    assert result.exit_code != 0 and "--scan-interval does not apply to scale-up" in result.output


def test_bad_traces_are_refused_with_their_line(tmp_path: Path) -> None:
    out_of_order = [create(20, pod("a", "1")), create(10, pod("b", "1"))]
    message = refused(tmp_path / "a", *inputs(tmp_path / "a", out_of_order))
    assert "line 2" in message
    unknown = [delete(5, "nobody")]
    message = refused(tmp_path / "b", *inputs(tmp_path / "b", unknown))
    assert "line 1" in message and "nobody" in message
    claim_pod = pod("c", "1", resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}])
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "gpu-claim"},
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "nope"}}]}},
    }
    message = refused(
        tmp_path / "c", *inputs(tmp_path / "c", [create(1, claim), create(2, claim_pod)])
    )
    assert "nope" in message and "line 1" in message


def test_a_trace_deleting_a_claim_is_refused_before_the_run(tmp_path: Path) -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": []}},
    }
    trace = [create(1, claim), delete(5, "c", kind="ResourceClaim")]
    message = refused(tmp_path, *inputs(tmp_path, trace))
    assert "line 2" in message and "ResourceClaim" in message and "not modelled" in message
