"""``drasnap explain`` and the ``pod_failures`` view on a recorded scale-up from manifests
(``write_manifests``): pending-big asks for 5 GPUs, more than any node or template has, so it
is left unplaced with DynamicResources' reason on every node; the record replays (``--at``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from drasnap.store import Journal
from drasnap.store.queries.readonly import query
from drasnap.tools.cli import cli

from tests.conftest import Database
from tests.paths import FIXTURES
from tests.snapshot.simulation.test_scenarios import write_manifests

MESSAGE = "0/5 nodes are available: 5 cannot allocate all claims."


def drasnap(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("explain")
    directory = write_manifests(tmp / "dump")
    db = tmp / "sim.db"
    result = drasnap("simulate", "scale-up", str(db), "--from", str(directory), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["unschedulable"] == {"default/pending-big": MESSAGE}
    return db


def test_explain_prints_the_schedulers_message_and_each_groups_answer(recorded: Path) -> None:
    result = drasnap("explain", str(recorded), "--pod", "default/pending-big")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"pod default/pending-big: {MESSAGE}",
        "  5 node(s): DynamicResources: cannot allocate all claims",
        "node group gpu-a, a new node: DynamicResources: cannot allocate all claims",
        "node group gpu-b, a new node: DynamicResources: cannot allocate all claims",
    ]


def test_explain_one_node_as_json(recorded: Path) -> None:
    result = drasnap(
        "explain", str(recorded), "--pod", "default/pending-big", "--node", "gpu-b-0", "--json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["message"] == MESSAGE
    assert data["node"] == {
        "name": "gpu-b-0",
        "plugin": "DynamicResources",
        "reasons": ["cannot allocate all claims"],
    }


def test_explain_at_a_seq_before_the_record_and_after(recorded: Path) -> None:
    with Journal.open(recorded, name="scale-up-1") as journal:
        writes = journal.key_writes("PodFailure", ["default/pending-big"])
    (seq,) = [w.seq for w in writes]
    before = drasnap("explain", str(recorded), "--pod", "default/pending-big", "--at", str(seq - 1))
    assert before.exit_code == 1
    assert "holds no record of pod default/pending-big left unplaced at seq" in before.output
    after = drasnap("explain", str(recorded), "--pod", "default/pending-big", "--at", str(seq))
    assert after.exit_code == 0, after.output
    assert MESSAGE in after.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pod", "pending-big"], "Error: --pod takes namespace/name, got 'pending-big'"),
        (["--pod", "default/pending-0"], "Error: pod default/pending-0 is on node gpu-a-00000"),
        (["--pod", "default/nope"], "Error: run 'scale-up-1' holds no record of pod default/nope"),
        (
            ["--pod", "default/pending-big", "--node", "nope"],
            "Error: the run has no node 'nope' (see its node names with drasnap inspect",
        ),
    ],
    ids=["no-namespace", "placed", "unknown", "unknown-node"],
)
def test_explain_user_errors_are_one_line(recorded: Path, args: list[str], message: str) -> None:
    result = drasnap("explain", str(recorded), *args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1].startswith(message), result.output
    assert "Traceback" not in result.output


def test_pod_failures_view(recorded: Path) -> None:
    result = query(
        recorded,
        "SELECT store, pod, pod_namespace, pod_name, message, nodes, context FROM pod_failures",
    )
    assert [tuple(r) for r in result.rows] == [
        ("scale-up-1", "default/pending-big", "default", "pending-big", MESSAGE, 5, "scale-up")
    ]


def test_the_docs_queries_on_pod_failures_answer(recorded: Path) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "sql.md").read_text()
    section = docs.split("## `pod_failures`")[1].split("\n## ")[0]
    listed, per_node = [block.split("```")[0] for block in section.split("```sql")[1:]]
    assert [tuple(r) for r in query(recorded, listed).rows] == [
        ("scale-up-1", "default/pending-big", MESSAGE)
    ]
    rows = query(recorded, per_node).rows
    assert [r[1] for r in rows] == ["gpu-a-0", "gpu-a-00000", "gpu-a-00001", "gpu-a-1", "gpu-b-0"]
    assert {(r[0], r[2]) for r in rows} == {("DynamicResources", '["cannot allocate all claims"]')}


def test_simulate_prints_each_warning_on_its_own_line(tmp_path: Path) -> None:
    directory = write_manifests(tmp_path / "dump")
    pods = directory / "03-pods.yaml"
    # the first pod of the file gets another scheduler's name
    pods.write_text(
        pods.read_text().replace("spec:\n", "spec:\n  schedulerName: my-scheduler\n", 1)
    )
    result = drasnap("simulate", "scale-up", str(tmp_path / "s.db"), "--from", str(directory))
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1
    assert warnings[0].endswith(
        "spec.schedulerName: 'my-scheduler' is simulated with the default scheduler's filters"
    )
    assert "warnings       1" in result.stdout


def test_pod_failures_view_on_every_backend(database: Database, tmp_path: Path) -> None:
    directory = write_manifests(tmp_path / "dump")
    result = drasnap("simulate", "scale-up", database.target, "--from", str(directory))
    assert result.exit_code == 0, result.output
    rows = database.sql(
        "SELECT store, pod, pod_namespace, pod_name, message, nodes, context FROM pod_failures"
    )
    assert rows == [
        ("scale-up-1", "default/pending-big", "default", "pending-big", MESSAGE, 5, "scale-up")
    ]


def test_explain_node_device_by_device(recorded: Path) -> None:
    # gpu-b-0 publishes 2 GPUs, none allocated: both usable, 5 needed.
    result = drasnap("explain", str(recorded), "--pod", "default/pending-big", "--node", "gpu-b-0")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        f"pod default/pending-big: {MESSAGE}",
        "node gpu-b-0: DynamicResources: cannot allocate all claims",
        "node gpu-b-0: cannot allocate all claims",
    ]
    assert lines[3].startswith("claim default/pending-big-gpu-")
    assert lines[3].endswith(", request gpu (5 of class gpu.example.com): 2 device(s) on the node")
    assert lines[4:] == [
        "  2 pass class selector #0 (device.driver == 'gpu.example.com')",
        "  2 usable, 5 needed",
    ]


def test_explain_group_template_as_json(recorded: Path) -> None:
    # A new node of gpu-a has 4 GPUs: still one short of 5.
    result = drasnap(
        "explain", str(recorded), "--pod", "default/pending-big", "--group", "gpu-a", "--json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["node_group"]["result"]["reasons"] == ["cannot allocate all claims"]
    devices = data["devices"]
    assert devices["fits"] is False and not devices["combination"]
    (request,) = devices["requests"]
    assert (request["devices"], request["matching"], request["usable"], request["count"]) == (
        4,
        4,
        4,
        5,
    )
    assert request["allocated"] == {} and request["refused"] == {}


def test_explain_node_and_group_are_exclusive(recorded: Path) -> None:
    result = drasnap(
        "explain", str(recorded), "--pod", "default/pending-big", "--node", "a", "--group", "b"
    )
    assert result.exit_code == 2
    assert "--node and --group are exclusive" in result.output


WHOLE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {namespace: partitionable-devices, name: two-full-gpus}
spec:
  spec:
    devices:
      requests:
      - name: full
        exactly:
          deviceClassName: gpu.example.com
          count: 2
          selectors:
          - cel: {expression: "'full' in device.attributes['gpu.example.com']"}
---
apiVersion: v1
kind: Pod
metadata: {namespace: partitionable-devices, name: whole}
spec:
  containers:
  - {name: ctr0, image: ubuntu:22.04, resources: {claims: [{name: gpus}]}}
  resourceClaims:
  - {name: gpus, resourceClaimTemplateName: two-full-gpus}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {namespace: partitionable-devices, name: eight-partitions}
spec:
  spec:
    devices:
      requests:
      - name: parts
        exactly:
          deviceClassName: gpu.example.com
          count: 8
          selectors:
          - cel: {expression: "'partition' in device.attributes['gpu.example.com']"}
---
apiVersion: v1
kind: Pod
metadata: {namespace: partitionable-devices, name: parts}
spec:
  containers:
  - {name: ctr0, image: ubuntu:22.04, resources: {claims: [{name: gpus}]}}
  resourceClaims:
  - {name: gpus, resourceClaimTemplateName: eight-partitions}
"""


@pytest.fixture(scope="module")
def partitioned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # The partitionable-devices demo (tests/fixtures/demos/): gpu-node-0 has 2 GPUs, each
    # 4 partitions (20Gi, compute 25) or 1 full device (80Gi, 100) over one counter set. pod0
    # (2 partitions) goes first and gets gpu-0-partition-0 and -1 (pool order): gpu-0 has 40Gi
    # and compute 50 left. "whole" asks for 2 full GPUs: gpu-0-full is refused by counters,
    # gpu-1-full is usable: 1 of 2. "parts" asks for 8 partitions: 2 are pod0's, 6 are free.
    # The group (maxSize 1) cannot grow.
    tmp = tmp_path_factory.mktemp("partitioned")
    dump = tmp / "dump"
    dump.mkdir()
    demo = FIXTURES / "demos" / "partitionable-devices"
    for name in ("node-dump.yaml", "partitionable-devices.yaml"):
        (dump / name).write_text((demo / name).read_text())
    (dump / "whole.yaml").write_text(WHOLE)
    groups = tmp / "groups.yaml"
    groups.write_text("nodeGroups: [{name: gpu-2x, minSize: 1, maxSize: 1, node: gpu-node-0}]\n")
    db = tmp / "sim.db"
    args = ["simulate", "autoscale", str(db), "--from", str(dump), "--node-groups", str(groups)]
    result = drasnap(*args, "--json")
    assert result.exit_code == 0, result.output
    said = "0/1 nodes are available: 1 cannot allocate all claims. pod didn't trigger scale-up: "
    assert json.loads(result.stdout)["unschedulable"] == {
        "partitionable-devices/parts": said + "1 max node group size reached",
        "partitionable-devices/whole": said + "1 max node group size reached",
    }
    return db


def test_explain_partitionable_gpus_on_the_node(partitioned: Path) -> None:
    pod = "partitionable-devices/whole"
    result = drasnap("explain", str(partitioned), "--pod", pod, "--node", "gpu-node-0")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    refusal = (
        "gpu.example.com/gpu-node-0/gpu-0-full (needs gpu-0-counters compute 100 of 50 left, "
        "memory 80Gi of 40Gi left)"
    )
    assert lines[2] == "node gpu-node-0: cannot allocate all claims"
    assert lines[3].endswith("request full (2 of class gpu.example.com): 10 device(s) on the node")
    assert lines[4:] == [
        "  10 pass class selector #0 (device.driver == 'gpu.example.com')",
        "  2 pass request selector #0 ('full' in device.attributes['gpu.example.com'])",
        f"  1 refused by counters: {refusal}",
        "  1 usable, 2 needed",
        "  closest: gpu.example.com/gpu-node-0/gpu-0-full, stopped by counters: needs "
        "gpu-0-counters compute 100 of 50 left, memory 80Gi of 40Gi left",
    ]


def test_explain_partitionable_gpus_on_the_groups_template(partitioned: Path) -> None:
    # A new node of gpu-2x has nothing allocated: both full GPUs are usable, and the pod's
    # claims fit, as the allocator says (the group is at its maximum: no such node is added).
    pod = "partitionable-devices/whole"
    result = drasnap("explain", str(partitioned), "--pod", pod, "--group", "gpu-2x", "--json")
    assert result.exit_code == 0, result.output
    devices = json.loads(result.stdout)["devices"]
    assert devices["fits"] is True
    assert devices["node"] == "gpu-2x-template (a new node of node group gpu-2x)"
    (request,) = devices["requests"]
    assert (request["matching"], request["usable"], request["refused"]) == (2, 2, {})


def test_the_readme_example_is_what_explain_prints(partitioned: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = readme.split("### Why, device by device")[1].split("```console\n")[1].split("```")[0]
    commands = block.split("$ drasnap ")[1:]
    assert len(commands) == 2
    for command in commands:
        line, *shown = command.splitlines()
        args = line.split()
        args[1] = str(partitioned)
        result = drasnap(*args)
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines() == shown


def test_explain_names_the_claims_holding_devices(partitioned: Path) -> None:
    pod = "partitionable-devices/parts"
    result = drasnap("explain", str(partitioned), "--pod", pod, "--node", "gpu-node-0", "--json")
    assert result.exit_code == 0, result.output
    (request,) = json.loads(result.stdout)["devices"]["requests"]
    assert (request["matching"], request["usable"], request["count"]) == (8, 6, 8)
    held = request["allocated"]
    assert sorted(held) == [
        "gpu.example.com/gpu-node-0/gpu-0-partition-0",
        "gpu.example.com/gpu-node-0/gpu-0-partition-1",
    ]
    for owners in held.values():
        (owner,) = owners
        assert owner.startswith("partitionable-devices/pod0-gpu-partitions-")
