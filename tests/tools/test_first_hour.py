"""A newcomer's first hour, through the real ``drasnap`` entry point in a subprocess: runs that
can be repeated, listed and dropped; mistakes in the input that leave nothing behind; and bad
input or faults that end in one ``Error: ...`` line, exit 1, no traceback, nothing changed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from drasnap.store import Store

from tests.snapshot.simulation.test_scenarios import write_manifests

ROOT = Path(__file__).resolve().parents[2]


def drasnap(
    *args: str | Path, cwd: Path = ROOT, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "drasnap.tools", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    return result


def ok_json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(ok(result).stdout)


def usage_error(result: subprocess.CompletedProcess[str], fragment: str) -> str:
    """Exit 2, nothing on stdout, click's usage text then one ``Error: ...`` line."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ") and fragment in last, result.stderr
    assert "Traceback" not in result.stderr
    return last


def error(result: subprocess.CompletedProcess[str], fragment: str) -> str:
    """Exit 1, nothing on stdout, one line on stderr: ``Error: ...`` holding ``fragment``."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert fragment in lines[0], lines[0]
    return lines[0]


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


# -- runs: repeat, list, drop (point 3) ---------------------------------------------------------


def test_runs_can_be_repeated_listed_and_dropped(tmp_path: Path) -> None:
    first = ok_json(drasnap("simulate", "scale-up", "--pods", "16", "--json", cwd=tmp_path))
    second = ok_json(drasnap("simulate", "scale-up", "--pods", "16", "--json", cwd=tmp_path))
    down = ok_json(drasnap("simulate", "scale-down", "--nodes", "6", "--json", cwd=tmp_path))
    assert [first["name"], second["name"], down["name"]] == [
        "scale-up-1",
        "scale-up-2",
        "scale-down-1",
    ]
    listed = ok_json(drasnap("runs", "--json", cwd=tmp_path))["runs"]
    assert [(r["name"], r["scenario"], r["status"]) for r in listed] == [
        ("scale-up-1", "scale-up", "finished"),
        ("scale-up-2", "scale-up", "finished"),
        ("scale-down-1", "scale-down", "finished"),
    ]
    assert listed[0]["settings"]["pods"] == 16
    assert listed[0]["results"]["nodes_added"] == 2
    assert listed[2]["state_digest"] == down["state_digest"]
    table = ok(drasnap("runs", cwd=tmp_path)).stdout
    assert "scale-up-2" in table and "--pods 16" in table and "nodes_added 2" in table
    # drop asks; "n" keeps the run, --yes does not ask
    kept = drasnap("drop", "--name", "scale-up-1", cwd=tmp_path, input="n\n")
    assert kept.returncode == 1
    assert kept.stderr.startswith("Remove the finished scale-up run 'scale-up-1' from ")
    assert kept.stderr.rstrip().endswith("Error: run 'scale-up-1' kept (nothing was removed)")
    ok(drasnap("drop", "--name", "scale-up-1", cwd=tmp_path, input="y\n"))
    ok(drasnap("drop", "drasnap-sim.db", "--name", "scale-up-2", "--yes", cwd=tmp_path))
    names = [r["name"] for r in ok_json(drasnap("runs", "--json", cwd=tmp_path))["runs"]]
    assert names == ["scale-down-1"]
    error(drasnap("drop", "--name", "scale-up-1", "--yes", cwd=tmp_path), "no run named")


# -- a typo in the input never poisons the database (point 4) ----------------------------------


def _template_with(directory: Path, edit: Any) -> None:
    path = directory / "01-cluster.yaml"
    documents = list(yaml.safe_load_all(path.read_text()))
    for doc in documents:
        if doc["kind"] == "ResourceClaimTemplate" and doc["metadata"]["name"] == "one-gpu":
            edit(doc["spec"]["spec"]["devices"]["requests"][0]["exactly"])
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (
            lambda r: r.update(deviceClassName="gpu.exampel.com"),
            "ResourceClaimTemplate default/one-gpu: spec.spec.devices.requests[0].exactly."
            "deviceClassName: DeviceClass 'gpu.exampel.com' not found",
        ),
        (
            lambda r: r.update(selectors=[{"cel": {"expression": "device.driver =="}}]),
            "ResourceClaimTemplate default/one-gpu: spec.spec.devices.requests[0].exactly."
            'selectors[0].cel.expression: Invalid value: "device.driver ==": compilation failed',
        ),
    ],
    ids=["missing-device-class", "cel-syntax"],
)
def test_a_typo_is_found_before_anything_is_written(
    tmp_path: Path, edit: Any, fragment: str
) -> None:
    dump = write_manifests(tmp_path / "dump")
    _template_with(dump, edit)
    db = tmp_path / "sim.db"
    args: list[str | Path] = ["simulate", "scale-up", db, "--from", dump, "--name", "r", "--json"]
    error(drasnap(*args), fragment)
    assert not db.exists()
    error(drasnap(*args, "--resume"), fragment)
    assert not db.exists()
    shutil.rmtree(dump)
    write_manifests(dump)  # fixed: the same commands now work
    ok_json(drasnap(*args))


def test_an_error_found_during_the_run_marks_it_failed_and_blocks_nothing(tmp_path: Path) -> None:
    dump = write_manifests(tmp_path / "dump")
    # Compiles, but fails on every device (no attribute "nosuch"): only the run can find it.
    _template_with(
        dump,
        lambda r: r.update(
            selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].nosuch'}}]
        ),
    )
    failed = drasnap("simulate", "scale-up", "--from", dump, cwd=tmp_path)
    assert failed.returncode == 1
    line = failed.stderr.strip().splitlines()[-1]
    assert line.startswith("Error: run 'scale-up-1' in drasnap-sim.db failed: ")
    assert "CEL runtime error" in line and "Traceback" not in failed.stderr
    (run,) = ok_json(drasnap("runs", "--json", cwd=tmp_path))["runs"]
    assert (run["name"], run["status"]) == ("scale-up-1", "failed")
    assert "CEL runtime error" in run["error"]
    shutil.rmtree(dump)
    write_manifests(dump)
    fixed = ok_json(drasnap("simulate", "scale-up", "--from", dump, "--json", cwd=tmp_path))
    assert (fixed["name"], fixed["nodes_added"]) == ("scale-up-2", 2)
    # The failed run keeps what it was started with: resuming it with other input is refused.
    resumed = drasnap(
        "simulate", "scale-up", "--from", dump, "--name", "scale-up-1", "--resume", cwd=tmp_path
    )
    assert resumed.returncode == 1 and "Traceback" not in resumed.stderr


# -- faults and bad input (points 5-18) ---------------------------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A finished scale-down run: (database, run name)."""
    folder = tmp_path_factory.mktemp("recorded")
    data = ok_json(drasnap("simulate", "scale-down", "--nodes", "6", "--json", cwd=folder))
    return folder / "drasnap-sim.db", data["name"]


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv, to read as another user",
)
@pytest.mark.parametrize(
    "command",
    [
        ["inspect"],
        ["history"],
        ["replay", "--verify"],
        ["diff", "--from", "1"],
        ["query", "SELECT count(*) FROM journal"],
        ["runs"],
    ],
    ids=["inspect", "history", "replay", "diff", "query", "runs"],
)
def test_read_commands_read_a_database_in_a_folder_they_cannot_write(
    tmp_path: Path, recorded: tuple[Path, str], command: list[str]
) -> None:
    # (pytest's own folders are private to root: the archive goes where anyone may look.)
    archive = Path(tempfile.mkdtemp(prefix="drasnap-archive-"))
    shutil.copy(recorded[0], archive / "sim.db")
    os.chmod(archive, 0o755)  # owned by root: another user may read it, not write beside it
    os.chmod(archive / "sim.db", 0o644)
    before = files_of(archive)
    result = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         sys.executable, "-m", "drasnap.tools", command[0], archive / "sim.db", *command[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": "/tmp"},
    )  # fmt: skip
    try:
        assert result.returncode == 0, result.stderr
        assert files_of(archive) == before
    finally:
        shutil.rmtree(archive)


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ("postgres://::::", "is neither a file path nor a database URL"),
        ("postgresql://u:secret@:99999/db", 'invalid port number: "99999"'),
        ("postgresql+psycopg://", "names no database"),
        ("postgresql+psycopg://u:secret@127.0.0.1:5432", "names no database"),
    ],
    ids=["colons", "port", "no-database", "no-database-with-host"],
)
def test_a_malformed_url_is_one_line(target: str, fragment: str) -> None:
    """Found from the URL alone, before any driver is needed (psycopg may be missing)."""
    line = error(drasnap("inspect", target), fragment)
    assert "secret" not in line


def test_a_run_into_a_url_without_a_database_writes_nowhere() -> None:
    error(
        drasnap("simulate", "scale-up", "postgresql+psycopg://", "--pods", "5"), "names no database"
    )


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda url: url.set(password="wrong-secret"), "password authentication failed"),
        (lambda url: url.set(database="no_such_database"), "no_such_database"),
    ],
    ids=["password", "database"],
)
def test_a_server_that_refuses_is_one_line_without_the_password(
    postgres_url: str, change: Any, fragment: str
) -> None:
    from sqlalchemy.engine import make_url

    url = change(make_url(postgres_url))
    if fragment.startswith("password") and url.username in ("root", "postgres"):
        url = url.set(username="drasnap_nobody")  # trust auth: any password works for these
        fragment = "drasnap_nobody"
    line = error(drasnap("inspect", url.render_as_string(hide_password=False)), fragment)
    assert "wrong-secret" not in line
    assert url.host in line


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--pods", "1000000000000"], "--pods must be at most 200,000, got 1,000,000,000,000"),
        (["--gpus-per-node", "1000000000"], "--gpus-per-node must be at most 128"),
        (["--gpus-per-node", "0"], "--gpus-per-node must be at least 1, got 0"),
        (["--node-groups", "9"], "--node-groups must be at most 8"),
        (["--seed", "-1"], "--seed must be at least 0"),
    ],
    ids=["pods", "gpus", "gpus-0", "groups", "seed"],
)
def test_sizes_have_limits_checked_up_front(tmp_path: Path, args: list[str], fragment: str) -> None:
    """A value out of range is a usage error (exit 2), as click's own, and writes nothing."""
    usage_error(drasnap("simulate", "scale-up", *args, cwd=tmp_path), fragment)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["scale-down", "--pods", "5"],
            "--pods does not apply to scale-down: it is taken by scale-up",
        ),
        (
            ["scale-up", "--nodes", "5"],
            "--nodes does not apply to scale-up: it is taken by scale-down",
        ),
        (["scale-up", "--expander", "random"], "--expander does not apply to scale-up"),
        (["scale-up", "--scale-down-utilization-threshold", "0.4"], "taken by autoscale"),
        (["autoscale", "--pods-per-node", "2"], "--pods-per-node does not apply to autoscale"),
    ],
    ids=["pods-scale-down", "nodes-scale-up", "expander", "threshold", "autoscale-sizes"],
)
def test_an_option_the_scenario_does_not_take_is_a_usage_error(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    usage_error(drasnap("simulate", *args, cwd=tmp_path), fragment)
    assert list(tmp_path.iterdir()) == []


def test_sizes_do_not_apply_to_a_cluster_from_manifests(tmp_path: Path) -> None:
    dump = write_manifests(tmp_path / "dump")
    usage_error(
        drasnap("simulate", "scale-up", tmp_path / "s.db", "--from", dump, "--pods", "9"),
        "--pods does not apply to scale-up: with --from the manifests give the cluster",
    )
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize("scenario", ["autoscale", "scale-up", "scale-down"])
def test_a_folder_without_nodes_is_refused(tmp_path: Path, scenario: str) -> None:
    (tmp_path / "empty").mkdir()
    error(
        drasnap("simulate", scenario, tmp_path / "s.db", "--from", tmp_path / "empty"),
        "holds no Node objects",
    )
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_checkpoint_every_is_checked_as_the_option_it_is(tmp_path: Path, value: str) -> None:
    result = drasnap("simulate", "scale-up", "--checkpoint-every", value, cwd=tmp_path)
    assert result.returncode == 2
    assert "--checkpoint-every" in result.stderr
    assert "checkpoint_interval" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_lock_error_speaks_to_the_command_line(tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    with Store.open(db, name="busy"):
        line = error(
            drasnap("simulate", "scale-up", db, "--name", "busy", "--resume"),
            f"run 'busy' in {db} is being written by process {os.getpid()} on this host",
        )
    assert "readonly" not in line
    assert f"kill {os.getpid()}" in line and "inspect" in line


@pytest.mark.parametrize("kind", ["empty", "dev-null"])
def test_an_empty_file_is_not_a_drasnap_database(tmp_path: Path, kind: str) -> None:
    target = Path("/dev/null")
    if kind == "empty":
        target = tmp_path / "empty.db"
        target.touch()
    for command in (["inspect"], ["runs"], ["query", "SELECT 1"], ["history"]):
        error(drasnap(command[0], target, *command[1:]), "is not a drasnap database")
    if kind == "empty":
        assert target.read_bytes() == b""


def test_a_typo_in_sql_is_a_syntax_error(recorded: tuple[Path, str]) -> None:
    error(drasnap("query", recorded[0], "SELEC 1"), 'near "SELEC": syntax error')
    error(drasnap("query", recorded[0], "DELETE FROM journal"), "DELETE statements are refused")


def test_simulate_ends_with_the_commands_that_look_at_the_run(tmp_path: Path) -> None:
    result = ok(drasnap("simulate", "scale-down", tmp_path / "k.db", "--nodes", "4"))
    db = str(tmp_path / "k.db")
    for command in ("inspect", "history", "replay"):
        assert f"-m drasnap.tools {command} {db} --name scale-down-1" in result.stderr
    assert result.stdout.splitlines()[0].split() == ["scenario", "scale-down"]
    helped = ok(drasnap("simulate", "--help")).stdout
    for word in ("pods_placed", "estimates", "-1", "Limits:"):
        assert word in helped, word


def test_inspect_lists_at_most_limit_claims(recorded: tuple[Path, str]) -> None:
    db, name = recorded
    full = ok_json(drasnap("inspect", db, "--name", name, "--json", "--limit", "0"))
    assert full["claims_total"] == len(full["claims"]) > 5
    table = ok(drasnap("inspect", db, "--name", name, "--limit", "5")).stdout
    assert f"… and {full['claims_total'] - 5:,} more claims" in table
    limited = ok_json(drasnap("inspect", db, "--name", name, "--json", "--limit", "5"))
    assert len(limited["claims"]) == 5


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["inspect", "--key", "default/nobody"], "holds no object with key 'default/nobody'"),
        (
            ["inspect", "--kind", "Gadget"],
            "holds no Gadget as stored (its kinds: DeviceClass, Node, Pod, ResourceClaim",
        ),
        (["history", "--claim", "default/nobody"], "never held a claim 'default/nobody'"),
        (["inspect", "--name", "nobody"], "no store named 'nobody'"),
    ],
    ids=["key", "kind", "claim", "name"],
)
def test_asking_for_what_does_not_exist_is_an_error(
    recorded: tuple[Path, str], args: list[str], fragment: str
) -> None:
    error(drasnap(args[0], recorded[0], *args[1:]), fragment)


def test_history_of_a_claim_with_eight_devices_fits_120_columns(tmp_path: Path) -> None:
    dump = write_manifests(tmp_path / "dump")
    path = dump / "01-cluster.yaml"
    documents = list(yaml.safe_load_all(path.read_text()))
    for doc in documents:
        if doc["kind"] == "ResourceSlice":
            doc["spec"]["devices"] = [
                {**doc["spec"]["devices"][0], "name": f"gpu-{i}"} for i in range(12)
            ]
        if doc["kind"] == "ResourceClaimTemplate" and doc["metadata"]["name"] == "one-gpu":
            doc["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 8
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    db = tmp_path / "sim.db"
    ok(drasnap("simulate", "scale-up", db, "--from", dump))
    events = ok_json(drasnap("history", db, "--json"))["events"]
    event = next(e for e in events if len(e["devices"]) == 8)
    shown = ok(drasnap("history", db, "--claim", event["claim"]))
    lines = shown.stdout.splitlines()
    assert max(len(line) for line in lines) <= 120
    # Names are never cut: the claim and node whole on the event's first line, each device
    # whole on a line of its own (its pool is the node's name here: the note says so).
    first = next(line for line in lines if line.startswith(str(event["seq"])))
    assert event["claim"] in first and event["node"] in first
    for device in event["devices"]:
        assert re.search(rf"(?<![\w/-]){re.escape(device['device'])}(?![\w-])", shown.stdout)
    assert "as POOL/DEVICE, or DEVICE where the pool is the node's name" in shown.stderr


def test_the_printed_commands_run_as_printed_after_the_quick_start(tmp_path: Path) -> None:
    """Run as the quick start does (the venv's script by a relative path, not on PATH): each
    command printed at the end runs, as printed, in the same shell and folder."""
    script = Path(sys.executable).parent / "drasnap"
    if not script.exists():
        pytest.skip(f"no drasnap script beside {sys.executable} (not installed in a venv)")
    here = tmp_path / "work"
    here.mkdir()
    called = os.path.relpath(script, here)
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != script.parent
    )
    env = {**os.environ, "PATH": path}
    run = subprocess.run(
        [called, "simulate", "scale-down", "--nodes", "4"],
        cwd=here, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    printed = run.stderr.split("Look at run 'scale-down-1':\n")[1].splitlines()
    assert printed and all(line.startswith(f"  {called} ") for line in printed), printed
    for line in printed:
        again = subprocess.run(
            line.strip(), shell=True, cwd=here, env=env, capture_output=True, text=True
        )
        assert again.returncode == 0, (line, again.stderr)


def test_no_lock_file_is_left_after_a_clean_exit(tmp_path: Path) -> None:
    ok(drasnap("simulate", "scale-down", tmp_path / "sim.db", "--nodes", "4"))
    ok(drasnap("inspect", tmp_path / "sim.db"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sim.db"]
