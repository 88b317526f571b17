"""``drasnap simulate`` through click's CliRunner: JSON and table output, help, and bad input
(exit 1, one ``Error: ...`` line on stderr, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from drasnap.snapshot.simulation.settings import Settings
from drasnap.store import Store
from drasnap.tools.cli import cli
from drasnap.tools.options import DEFAULT_DB

from tests.snapshot.simulation.test_scenarios import interrupted_run, write_manifests

SUMMARY_KEYS = {"scenario", "pods_placed", "forks", "commits", "reverts", "seconds", "state_digest"}


def simulate(*args: str) -> Result:
    return CliRunner().invoke(cli, ["simulate", *args])


def ok_json(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def assert_error(result: Result, fragment: str) -> None:
    """Exit 1, nothing on stdout, exactly one line on stderr: ``Error: ...``."""
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert fragment in lines[0]


# -- output -------------------------------------------------------------------------------------


def test_scale_up_json(tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    data = ok_json(simulate("scale-up", "--db", str(db), "--pods", "40", "--json"))
    assert SUMMARY_KEYS | {"nodes_added"} <= data.keys()
    assert data["scenario"] == "scale-up"
    assert (data["nodes_added"], data["pods_placed"]) == (5, 40)  # ceil(40 / 8)
    assert (data["forks"], data["commits"], data["reverts"]) == (2, 1, 1)
    assert isinstance(data["seconds"], float) and data["seconds"] >= 0
    assert data["resumed"] is False
    assert data["name"] == "scale-up-1"
    with Store.open(db, name=data["name"], readonly=True) as store:
        assert store.state_digest() == data["state_digest"]


def test_scale_down_json(tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    data = ok_json(simulate("scale-down", "--db", str(db), "--nodes", "20", "--json"))
    assert SUMMARY_KEYS | {"nodes_removed"} <= data.keys()
    # 20 nodes x 10 GPUs x 4 pods: see test_scenarios.test_scale_down_removes_what_first_fit...
    assert (data["nodes_removed"], data["pods_placed"]) == (12, 112)


def test_table_output(tmp_path: Path) -> None:
    result = simulate("scale-up", "--db", str(tmp_path / "sim.db"), "--pods", "16")
    assert result.exit_code == 0, result.output
    rows = dict(line.split(None, 1) for line in result.stdout.splitlines())
    assert rows["scenario"] == "scale-up"
    assert rows["nodes_added"] == "2"
    assert rows["pods_placed"] == "16"
    assert json.loads(rows["estimates"]) == {"group-0": 2}
    assert len(rows["state_digest"]) == 32
    assert not result.stdout.lstrip().startswith("{")


def test_same_command_same_digest(tmp_path: Path) -> None:
    args = ["scale-down", "--nodes", "6", "--seed", "5", "--json"]
    first = ok_json(simulate(*args, "--db", str(tmp_path / "a.db")))
    second = ok_json(simulate(*args, "--db", str(tmp_path / "b.db")))
    assert first["state_digest"] == second["state_digest"]


def test_help_lists_the_options() -> None:
    result = simulate("--help")
    assert result.exit_code == 0
    for option in (
        "--pods",
        "--nodes",
        "--gpus-per-node",
        "--pods-per-node",
        "--node-groups",
        "--from",
        "--resume",
        "--db",
        "--seed",
        "--json",
    ):
        assert option in result.stdout, option


def test_without_db_uses_the_default_file_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # (CliRunner.isolated_filesystem is deprecated in click 8.5)
    result = simulate("scale-up", "--pods", "8", "--json")
    data = ok_json(result)
    default = tmp_path / DEFAULT_DB
    assert default.is_file()
    assert f"Using {default.resolve()}" in result.stderr
    with Store.open(default, name=data["name"], readonly=True) as store:
        assert store.state_digest() == data["state_digest"]


def test_from_manifests(tmp_path: Path) -> None:
    directory = write_manifests(tmp_path / "dump")
    up = ok_json(
        simulate("scale-up", "--db", str(tmp_path / "up.db"), "--from", str(directory), "--json")
    )
    assert (up["node_group"], up["nodes_added"], up["pods_placed"]) == ("gpu-a", 2, 6)
    down = ok_json(
        simulate(
            "scale-down", "--db", str(tmp_path / "down.db"), "--from", str(directory), "--json"
        )
    )
    assert (down["nodes_removed"], down["pods_placed"]) == (2, 1)


def test_the_table_names_each_pod_left_unplaced(tmp_path: Path) -> None:
    directory = write_manifests(tmp_path / "dump")  # pending-big asks for 5 GPUs: fits nowhere
    result = simulate("scale-up", str(tmp_path / "up.db"), "--from", str(directory))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert (
        "unschedulable default/pending-big: 0/5 nodes are available: 5 cannot allocate all "
        "claims." in lines
    )
    assert any(line.split() == ["unschedulable", "1"] for line in lines)


@pytest.mark.parametrize("named", [True, False], ids=["by-name", "newest-unfinished"])
def test_resume_an_interrupted_run(tmp_path: Path, named: bool) -> None:
    args = ["scale-down", "--nodes", "12", "--json"]
    reference = ok_json(simulate(*args, "--db", str(tmp_path / "reference.db")))
    db = tmp_path / "sim.db"
    interrupted_run(db, Settings("scale-down", nodes=12), at_step=4)  # store "default"
    resumed = ok_json(
        simulate(*args, "--db", str(db), "--resume", *(["--name", "default"] * named))
    )
    assert resumed["resumed"] is True
    assert resumed["name"] == "default"
    for key in ("nodes_removed", "pods_placed", "forks", "commits", "reverts", "state_digest"):
        assert resumed[key] == reference[key], key


# -- bad option values: usage errors (exit 2), nothing written -----------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["scale-sideways"],
            "unknown scenario 'scale-sideways': choose scale-up, scale-down, autoscale or timeline",
        ),
        (["scale-up", "--pods", "0"], "--pods must be at least 1"),
        (["scale-down", "--nodes", "0"], "--nodes must be at least 1"),
        (
            ["scale-down", "--gpus-per-node", "4", "--pods-per-node", "5"],
            "--pods-per-node 5 cannot exceed --gpus-per-node 4",
        ),
        (["scale-up", "--gpus-per-node", "2", "--node-groups", "3"], "below one GPU"),
        (["scale-sideways", "--resume"], "unknown scenario"),
    ],
    ids=["scenario", "pods-0", "nodes-0", "pods-per-node", "node-groups", "scenario-resume"],
)
def test_impossible_settings_are_usage_errors_and_write_nothing(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    db = tmp_path / "sim.db"
    result = simulate(*args, "--db", str(db))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith("Error: ")
    assert fragment in result.stderr.splitlines()[-1]
    assert list(tmp_path.iterdir()) == []


def test_broken_manifest_writes_nothing(tmp_path: Path) -> None:
    directory = write_manifests(tmp_path / "dump")
    (directory / "04-broken.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: broken, namespace: default}\n"
        "spec:\n  containers: oops\n"
    )
    db = tmp_path / "sim.db"
    result = simulate("scale-up", "--db", str(db), "--from", str(directory))
    assert_error(
        result, "04-broken.yaml doc 1: Pod default/broken: spec.containers: expected a list"
    )
    assert not db.exists()


@pytest.mark.parametrize("scenario", ["scale-up", "scale-down"])
def test_manifests_that_do_not_fit_together_write_nothing(tmp_path: Path, scenario: str) -> None:
    """Each object valid, but the bound pods' claims missing: refused before the database is
    opened, so a corrected run can use the same --db."""
    directory = write_manifests(tmp_path / "dump")
    (directory / "02-claims.yaml").unlink()
    db = tmp_path / "sim.db"
    result = simulate(scenario, "--db", str(db), "--from", str(directory))
    assert_error(result, "for pod default/running-0: couldn't find ResourceClaim in the snapshot")
    assert not db.exists()


@pytest.fixture
def finished_db(tmp_path: Path) -> Path:
    db = tmp_path / "sim.db"
    ok_json(simulate("scale-up", "--db", str(db), "--name", "run-1", "--pods", "16", "--json"))
    return db


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["scale-down", "--nodes", "4"], "holds a scale-up run with other settings (scenario: "),
        (["scale-up", "--pods", "17"], "other settings (pods: 16 there, 17 asked)"),
        (["scale-up", "--pods", "16"], "holds a finished scale-up run; start a new run without"),
        (["scale-up", "--pods", "17", "--resume"], "other settings (pods: 16 there, 17 asked)"),
    ],
    ids=["other-scenario", "other-settings", "finished", "other-settings-resume"],
)
def test_refused_database_is_unchanged(finished_db: Path, args: list[str], fragment: str) -> None:
    before = finished_db.read_bytes()
    assert_error(simulate(*args, "--db", str(finished_db), "--name", "run-1"), fragment)
    assert finished_db.read_bytes() == before


def test_resume_of_a_finished_run_prints_its_result(finished_db: Path) -> None:
    before = finished_db.read_bytes()
    with Store.open(finished_db, name="run-1", readonly=True) as store:
        digest = store.state_digest()
    data = ok_json(
        simulate("scale-up", "--pods", "16", "--db", str(finished_db), "--name", "run-1",
                 "--resume", "--json")
    )  # fmt: skip
    assert data["resumed"] is True
    assert (data["nodes_added"], data["pods_placed"], data["state_digest"]) == (2, 16, digest)
    assert (data["forks"], data["commits"], data["reverts"]) == (2, 1, 1)
    assert finished_db.read_bytes() == before


def test_the_same_command_twice_makes_two_runs(tmp_path: Path) -> None:
    db = str(tmp_path / "sim.db")
    first = ok_json(simulate("scale-down", db, "--nodes", "6", "--json"))
    second = ok_json(simulate("scale-down", "--db", db, "--nodes", "6", "--json"))
    up = ok_json(simulate("scale-up", db, "--pods", "8", "--json"))
    assert (first["name"], second["name"], up["name"]) == (
        "scale-down-1",
        "scale-down-2",
        "scale-up-1",
    )
    assert first["state_digest"] == second["state_digest"]


def test_two_databases_given_differently_is_a_usage_error(tmp_path: Path) -> None:
    result = simulate("scale-up", str(tmp_path / "a.db"), "--db", str(tmp_path / "b.db"))
    assert result.exit_code == 2
    assert "two databases given" in result.stderr


def test_unfinished_run_needs_resume(tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    interrupted_run(db, Settings("scale-down", nodes=8), at_step=3)
    before = db.read_bytes()
    result = simulate("scale-down", "--nodes", "8", "--db", str(db), "--name", "default")
    assert_error(result, "holds an unfinished scale-down run: add --resume to continue it")
    assert db.read_bytes() == before


def test_resume_without_a_name_and_nothing_unfinished(tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    Store.open(db, name="other").close()  # the database exists, with no run in it
    result = simulate("scale-up", "--pods", "8", "--db", str(db), "--resume")
    assert_error(result, f"nothing to resume: {db} holds no unfinished run")


def test_resume_without_a_name_creates_no_database(tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    result = simulate("scale-up", "--pods", "8", "--db", str(db), "--resume")
    assert_error(result, "nothing to resume: ")
    assert not db.exists()


def test_resume_with_a_name_starts_what_was_never_saved(tmp_path: Path) -> None:
    """The supervisor's one command line: the first start, on a database that does not exist
    yet, and on a store created by a start-up killed before its first checkpoint."""
    reference = ok_json(simulate("scale-up", str(tmp_path / "ref.db"), "--pods", "8", "--json"))
    fresh = tmp_path / "fresh.db"
    started = ok_json(
        simulate("scale-up", str(fresh), "--pods", "8", "--name", "n", "--resume", "--json")
    )
    assert started["resumed"] is False
    assert started["state_digest"] == reference["state_digest"]
    killed_early = tmp_path / "empty.db"
    Store.open(killed_early, name="n").close()  # what a kill before the first checkpoint leaves
    again = ok_json(
        simulate("scale-up", str(killed_early), "--pods", "8", "--name", "n", "--resume", "--json")
    )
    assert again["state_digest"] == reference["state_digest"]


def test_database_holding_other_data(tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    with Store.open(db) as store:
        store.put("Note", "hello", {"text": "not a simulation"})
    before = db.read_bytes()
    assert_error(
        simulate("scale-up", "--pods", "8", "--db", str(db), "--name", "default"),
        "already holds data that is not a drasnap simulation",
    )
    assert db.read_bytes() == before


def test_kinds_the_simulation_does_not_use_are_skipped_with_a_note_or_refused(
    tmp_path: Path,
) -> None:
    directory = write_manifests(tmp_path / "dump")
    (directory / "00-namespace.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: gpu-test}\n"
    )
    db = tmp_path / "sim.db"
    result = simulate("scale-up", str(db), "--from", str(directory), "--json")
    data = ok_json(result)
    assert data["nodes_added"] == 2
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: {directory / '00-namespace.yaml'} doc 1: skipped Namespace gpu-test (v1): "
        "not used by the simulation"
    ]
    strict = simulate("scale-up", str(tmp_path / "strict.db"), "--from", str(directory), "--strict")
    assert_error(strict, "Namespace gpu-test: kind Namespace (v1) is not used by the simulation")
    assert not (tmp_path / "strict.db").exists()


def test_a_run_records_its_feature_gates_and_resume_refuses_others(tmp_path: Path) -> None:
    db = str(tmp_path / "sim.db")
    args = ["scale-down", db, "--nodes", "6", "--name", "r", "--json"]
    ok_json(simulate(*args, "--feature-gates", "DRAPrioritizedList=false"))
    with Store.open(db, name="r", readonly=True) as store:
        gates = store.get("Simulation", "plan")["settings"]["feature_gates"]
    assert gates["DRAPrioritizedList"] is False
    assert gates["DRAPartitionableDevices"] is True  # Kubernetes 1.36's default
    refused = simulate(*args, "--resume")
    assert_error(refused, "other settings (feature_gates.DRAPrioritizedList: False there, True")
    again = ok_json(simulate(*args, "--resume", "--feature-gates", "DRAPrioritizedList=false"))
    assert again["resumed"] is True


def test_partitionable_devices_are_recorded_and_resume_refuses_flat(tmp_path: Path) -> None:
    db = str(tmp_path / "sim.db")
    args = ["scale-up", db, "--pods", "12", "--name", "p", "--json"]
    data = ok_json(simulate(*args, "--devices", "partitionable"))
    assert (data["nodes_added"], data["pods_placed"]) == (2, 12)  # 8 full GPUs a node
    assert_error(
        simulate(*args, "--resume"), "other settings (devices: 'partitionable' there, None asked)"
    )
    again = ok_json(simulate(*args, "--resume", "--devices", "partitionable"))
    assert again["resumed"] is True
    runs = CliRunner().invoke(cli, ["runs", db])
    assert "--devices partitionable" in runs.output
    refused = simulate("scale-down", db, "--nodes", "2", "--devices", "partitionable")
    assert refused.exit_code == 2
    assert "--devices does not apply to scale-down: it is taken by scale-up" in refused.stderr


@pytest.mark.parametrize(
    ("gates", "fragment"),
    [
        ("Bogus=true", "unrecognized feature gate: Bogus"),
        ("DRAPrioritizedList", "DRAPrioritizedList"),
        ("DRAAdminAccess=false", "locked to true"),
    ],
    ids=["unknown", "syntax", "locked"],
)
def test_bad_feature_gates_are_usage_errors(tmp_path: Path, gates: str, fragment: str) -> None:
    result = simulate("scale-up", str(tmp_path / "sim.db"), "--feature-gates", gates)
    assert result.exit_code == 2
    assert fragment in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_claim_using_a_gated_off_feature_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    directory = write_manifests(tmp_path / "dump")
    path = directory / "01-cluster.yaml"
    documents = list(yaml.safe_load_all(path.read_text()))
    for doc in documents:
        if doc["kind"] == "ResourceClaimTemplate" and doc["metadata"]["name"] == "one-gpu":
            request = doc["spec"]["spec"]["devices"]["requests"][0]
            exactly = request.pop("exactly")
            request["firstAvailable"] = [{"name": "whole", **exactly}]
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    db = tmp_path / "sim.db"
    result = simulate(
        "scale-up", str(db), "--from", str(directory), "--feature-gates", "DRAPrioritizedList=false"
    )
    assert_error(result, "ResourceClaimTemplate default/one-gpu: ")
    assert "DRAPrioritizedList" in result.stderr
    assert not db.exists()


def test_autoscales_own_warnings_reach_the_json_and_the_table(tmp_path: Path) -> None:
    # A NotReady node: autoscale's setup warns that CA counts it as unready and drasnap does
    # not. The pod-spec warnings used to replace that list in --json (issue 38, item 6).
    from tests.snapshot.simulation.ca_cases import case_inputs, given_cases

    (entry,) = [e for e in given_cases() if e["case"]["name"] == "s0007-bdra"]
    case = entry["case"]
    node = next(n for n in case["nodes"] if n["metadata"]["name"] == "ng1-gpu-0")
    node.setdefault("status", {})["conditions"] = [{"type": "Ready", "status": "False"}]
    source, groups = case_inputs(case, tmp_path / "in")
    args = ["autoscale", str(tmp_path / "sim.db"), "--from", str(source), "--node-groups",
            str(groups)]  # fmt: skip
    warnings = ok_json(simulate(*args, "--json"))["warnings"]
    assert any(w.startswith("node ng1-gpu-0 is not Ready") for w in warnings), warnings
    assert len(warnings) == len(set(warnings))  # each once
    table = simulate(*args)
    assert table.exit_code == 0, table.output
    assert "warning: node ng1-gpu-0 is not Ready" in table.stderr
    (count,) = [line for line in table.stdout.splitlines() if line.startswith("warnings ")]
    assert int(count.split()[-1]) == len(warnings)
