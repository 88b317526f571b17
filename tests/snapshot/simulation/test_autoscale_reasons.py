"""What an autoscale run says about what it did not do, in the cluster-autoscaler's words:
the NotTriggerScaleUp text of a pod left pending (``processors/status/
eventing_scale_up_processor.go``, ReasonsMessage) and the UnremovableReason of each node kept
(``simulator/cluster.go``), in the result, the PodFailure records and SQL."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from drasnap.snapshot.autoscaler.status import UnremovableReason as Reason
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.history.pod_failures import POD_FAILURE_KIND, PodFailure
from drasnap.snapshot.simulation import generated
from drasnap.snapshot.simulation.autoscale.scale_down import SCALE_DOWN_DISABLED, TO_BE_DELETED
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.store import Store
from drasnap.store.queries.readonly import query

from tests.conftest import Database
from tests.snapshot.simulation.test_autoscale import node, pod, run, settings, write


def _big_gpu_pod() -> list[dict[str, Any]]:
    """A pending pod whose claim asks for 8 GPUs (a template of its own), more than any
    node or template here has (4)."""
    template = copy.deepcopy(generated.claim_template())
    template["metadata"]["name"] = "eight-gpus"
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 8
    p = generated.pod("big", random.Random(1), template="eight-gpus")
    return [template, p]


def _three_groups(tmp_path: Path) -> tuple[Path, Path]:
    docs: list[dict[str, Any]] = [generated.device_class(), generated.claim_template()]
    for name, group in (("g-0", "g"), ("h-0", "h"), ("m-0", "m")):
        docs += [generated.node(name, group=group), generated.gpu_slice(name, 4)]
    docs += _big_gpu_pod()
    directory = write(tmp_path / "dump", *docs)
    groups = tmp_path / "groups.yaml"
    groups.write_text(
        yaml.safe_dump(
            {
                "nodeGroups": [
                    {"name": "g", "minSize": 0, "maxSize": 5, "node": "g-0"},
                    {"name": "h", "minSize": 0, "maxSize": 5, "node": "h-0"},
                    {"name": "m", "minSize": 1, "maxSize": 1, "node": "m-0"},
                ]
            }
        )
    )
    return directory, groups


TEXT = "pod didn't trigger scale-up: 2 cannot allocate all claims, 1 max node group size reached"


def test_two_groups_reject_and_one_is_at_its_maximum(tmp_path: Path) -> None:
    # Groups g and h: a new node of either has 4 GPUs, the pod asks for 8: each rejects it
    # with DynamicResources' "cannot allocate all claims". Group m is at its maxSize (1 of 1):
    # CA skips it for every pod (MaxLimitReachedReason). ReasonsMessage counts per group:
    # "2 cannot allocate all claims, 1 max node group size reached". Scale-down: g-0 and h-0
    # are empty (0 of 4 GPUs) and go; m-0 is kept, its group at its minimum size
    # (NodeGroupMinSizeReached).
    directory, groups = _three_groups(tmp_path)
    outcome, cs = run(settings(directory, node_groups_file=str(groups)))
    result = outcome.result
    text = (
        "pod didn't trigger scale-up: 2 cannot allocate all claims, 1 max node group size reached"
    )
    assert result["unschedulable"] == {
        "default/big": "0/3 nodes are available: 3 cannot allocate all claims. " + text
    }
    # The run's outcome (--json) keeps autoscale's text, not the scheduler's alone.
    assert outcome.as_json()["unschedulable"] == result["unschedulable"]
    record = PodFailure.from_json("default/big", cs.store.get(POD_FAILURE_KIND, "default/big"))
    assert record.autoscaler == text and record.context == "autoscale"
    assert result["unremovable"] == {"m-0": "NodeGroupMinSizeReached"}
    assert result["removed"] == ["g-0", "h-0"]
    assert result["kept"]["m-0"] == "node group m is at its minimum size (1)"


def _kept_for(reason: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A cluster whose node z-0 scale-down keeps for ``reason`` (a case id below), and the
    settings that make it so. a-1 runs 3 of its 4 cpu (0.75: not underutilized, kept too);
    a-0 and a-2, when there, are empty. Nodes are simulated empty ones first, by name."""
    busy = [node("a-1", "a", 4), pod("busy", "3", "a-1")]
    if reason == "not-autoscaled":
        return [node("z-0", None, 4), *busy], {}
    if reason == "annotation":
        annotated = node("z-0", "a", 4)
        annotated["metadata"]["annotations"] = {SCALE_DOWN_DISABLED: "true"}
        return [annotated, *busy], {}
    if reason == "being-deleted":
        taint = {"key": TO_BE_DELETED, "effect": "NoSchedule"}
        return [node("z-0", "a", 4, taints=[taint]), *busy], {}
    if reason == "utilization-unknown":
        return [node("z-0", "a", 0), *busy], {}
    if reason == "not-underutilized":
        return [node("z-0", "a", 4), pod("full", "4", "z-0"), *busy], {}
    if reason == "blocked":  # a pod without a controller
        lone = pod("lone", "1", "z-0")
        del lone["metadata"]["ownerReferences"]
        return [node("z-0", "a", 4), lone, *busy], {}
    if reason == "no-place":  # 2 cpu, a-1 has 1 free
        return [node("z-0", "a", 4), pod("running", "2", "z-0"), *busy], {}
    if reason == "budget":  # a-0 and z-0 are unneeded; one node may go in a loop: a-0
        empty = [node("a-0", "a", 4), node("z-0", "a", 4)]
        return [*empty, *busy], {"max_scale_down_parallelism": 1}
    if reason == "not-simulated":  # the planner's unneededNodesLimit, 2 x 1: a-0 and a-2
        empty = [node("a-0", "a", 4), node("a-2", "a", 4), node("z-0", "a", 4)]
        return [*empty, *busy], {"max_scale_down_parallelism": 1}
    raise AssertionError(reason)


@pytest.mark.parametrize(
    ("case", "text", "name"),
    [
        ("not-autoscaled", "not in an autoscaled node group", Reason.NotAutoscaled),
        (
            "annotation",
            f"scale-down disabled by annotation {SCALE_DOWN_DISABLED}",
            Reason.ScaleDownDisabledAnnotation,
        ),
        ("being-deleted", "being deleted", Reason.CurrentlyBeingDeleted),
        ("utilization-unknown", "utilization not known: cpu is 0 at z-0", Reason.UnexpectedError),
        (
            "not-underutilized",
            "not underutilized: cpu utilization 1 is above the threshold 0.5",
            Reason.NotUnderutilized,
        ),
        (
            "blocked",
            "pod default/lone blocks its removal: default/lone is not replicated",
            Reason.BlockedByPod,
        ),
        (
            "no-place",
            "pod default/running cannot move to another node: 0/1 nodes are available: "
            "1 Insufficient cpu.",
            Reason.NoPlaceToMovePods,
        ),
        ("budget", "unneeded, but --max-scale-down-parallelism (1) is used up", None),
        (
            "not-simulated",
            "not simulated: 2 nodes already found unneeded in this loop "
            "(the planner's unneededNodesLimit)",
            None,
        ),
    ],
)
def test_every_kept_reason_has_cas_name(
    tmp_path: Path, case: str, text: str, name: Reason | None
) -> None:
    # Each reason autoscale gives a kept node, with CA's UnremovableReason for it
    # (simulator/cluster.go) as the run records it; None for a node unneeded but left for a
    # later loop, which CA's status does not count as unremovable. The node group at its
    # minimum size (NodeGroupMinSizeReached) is test_two_groups_reject_... above.
    objects, extra = _kept_for(case)
    outcome, _ = run(settings(write(tmp_path / "dump", *objects), **extra))
    result = outcome.result
    assert result["kept"]["z-0"] == text
    assert result["unremovable"]["z-0"] == name


def test_sql_views_hold_the_reasons(tmp_path: Path, database: Database) -> None:
    # pod_failures.autoscaler has CA's text; autoscale_nodes one row per scale-down decision.
    directory, groups = _three_groups(tmp_path)
    s = settings(directory, node_groups_file=str(groups))
    with ClusterSnapshot(Store.open(database.target, name="auto")) as cs:
        simulate(cs, s, lambda: prepare(s))
    assert database.sql("SELECT pod, context, autoscaler FROM pod_failures") == [
        ("default/big", "autoscale", TEXT)
    ]
    rows = database.sql(
        "SELECT store, node, removed, reason, unremovable FROM autoscale_nodes ORDER BY node"
    )
    assert [(r[0], r[1], bool(r[2]), r[3], r[4]) for r in rows] == [
        ("auto", "g-0", True, None, None),
        ("auto", "h-0", True, None, None),
        (
            "auto",
            "m-0",
            False,
            "node group m is at its minimum size (1)",
            "NodeGroupMinSizeReached",
        ),
    ]


def test_the_docs_query_on_autoscale_nodes(tmp_path: Path) -> None:
    docs = (Path(__file__).resolve().parents[3] / "docs" / "sql.md").read_text()
    section = docs.split("## `autoscale_nodes`")[1].split("\n## ")[0]
    (example,) = [block.split("```")[0] for block in section.split("```sql")[1:]]
    directory, groups = _three_groups(tmp_path)
    s = settings(directory, node_groups_file=str(groups))
    db = tmp_path / "sim.db"
    with ClusterSnapshot(Store.open(db, name="autoscale-1")) as cs:
        simulate(cs, s, lambda: prepare(s))
    assert [tuple(r) for r in query(db, example).rows] == [
        ("m-0", "node group m is at its minimum size (1)", "NodeGroupMinSizeReached")
    ]
