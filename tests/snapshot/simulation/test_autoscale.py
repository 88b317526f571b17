"""The ``autoscale`` scenario: one cluster-autoscaler loop on small clusters whose answer is
worked out by hand from upstream's algorithm (each test names the upstream code it follows).

Clusters are written as manifests (``--from``) in a temporary folder: nodes labelled
``drasnap.io/node-group`` (each group's template is its first node by name), pods with and
without ``spec.nodeName``. CPU is the binding resource unless a test says otherwise; memory
requests are small (1Gi per pod, 64Gi per node) so that cpu decides utilization.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from drasnap.snapshot.autoscaler.utilization import pool_utilization
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.history.pod_failures import POD_FAILURE_KIND, PodFailure
from drasnap.snapshot.simulation import generated
from drasnap.snapshot.simulation.autoscale_config import files_digest
from drasnap.snapshot.simulation.inputs import source_digest
from drasnap.snapshot.simulation.record import Outcome
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.settings import Settings
from drasnap.store import MemoryStore, Store
from drasnap.tools.cli import cli

from tests.snapshot.simulation.test_scenarios import comparable, interrupted_run, never_start

GROUP = generated.GROUP_LABEL


def node(name: str, group: str | None, cpu: int, **spec: Any) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if group is not None:
        labels[GROUP] = group
    resources = {"cpu": str(cpu), "memory": "64Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"capacity": resources, "allocatable": resources},
    }


REPLICA_SET = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "name": "web",
    "uid": "00000000-0000-4000-8000-000000000001",
    "controller": True,
}


def pod(name: str, cpu: str, node_name: str | None = None, **spec: Any) -> dict[str, Any]:
    """A pod asking for ``cpu``; bound to ``node_name`` (then owned by a ReplicaSet, so that
    the drain rules let it move), else pending without a controller."""
    body: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
        ],
        **spec,
    }
    metadata: dict[str, Any] = {"name": name}
    if node_name is not None:
        body["nodeName"] = node_name
        metadata["ownerReferences"] = [REPLICA_SET]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": body}


def write(directory: Path, *objs: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "cluster.yaml").write_text(yaml.safe_dump_all(list(objs), sort_keys=False))
    return directory


def settings(directory: Path, **extra: Any) -> Settings:
    files = [extra.get("node_groups_file"), extra.get("expander_priorities")]
    digest = files_digest(source_digest(directory), *files)
    return Settings("autoscale", source=str(directory), source_digest=digest, **extra).resolved()


def run(s: Settings) -> tuple[Outcome, ClusterSnapshot]:
    cs = ClusterSnapshot(MemoryStore())
    return simulate(cs, s, lambda: prepare(s)), cs


def test_existing_free_room_is_used_first(tmp_path: Path) -> None:
    # core/static_autoscaler.go RunOnce: the FilterOutSchedulable pod-list processor places
    # pending pods on existing nodes before any estimate. a-0 (4 cpu) runs 1 cpu: p1 (2 cpu)
    # goes there (3 of 4 used); p2 (2 cpu) fits nowhere, so the binpacking estimator
    # (estimator/binpacking_estimator.go) adds one node of group a (template a-0, 4 cpu).
    # Scale-down (simulator/utilization/info.go): a-0 is at 3/4 cpu, memory 2/64: 0.75 is not
    # under 0.5, kept; the new node is not a candidate.
    directory = write(
        tmp_path / "dump",
        node("a-0", "a", 4),
        pod("running", "1", "a-0"),
        pod("p1", "2"),
        pod("p2", "2"),
    )
    outcome, cs = run(settings(directory))
    result = outcome.result
    assert result["placed_on_existing"] == {"default/p1": "a-0"}
    assert result["added"] == {"a": 1}
    assert result["placed_on_new"] == {"default/p2": "a-new-0"}
    assert result["removed"] == []
    assert result["kept"] == {
        "a-0": "not underutilized: cpu utilization 0.75 is above the threshold 0.5"
    }
    assert result["unschedulable"] == {}
    assert cs.node_names() == ["a-0", "a-new-0"]
    assert outcome.pods_placed == 2


def test_the_estimator_packs_over_all_new_nodes_largest_first(tmp_path: Path) -> None:
    # estimator/binpacking_estimator.go with the DecreasingPodOrderer: pods (no controller, a
    # group each) sorted by cpu/allocatable + memory/allocatable, largest first: 3, 3, 1, 1 cpu
    # on 4-cpu nodes. 3 -> e0; 3 -> fits no new node, e0 has pods: add e1; each 1-cpu pod tries
    # every new node first: 1 -> e0 (full), 1 -> e1 (full). Two nodes. Packing in file order
    # onto the newest node only (the scale-up preset) would take three.
    directory = write(
        tmp_path / "dump",
        node("a-0", "a", 4),
        pod("full", "4", "a-0"),
        pod("small-1", "1"),
        pod("small-2", "1"),
        pod("big-1", "3"),
        pod("big-2", "3"),
    )
    outcome, _ = run(settings(directory))
    assert outcome.result["added"] == {"a": 2}
    assert outcome.result["placed_on_new"] == {
        "default/big-1": "a-new-0",
        "default/big-2": "a-new-1",
        "default/small-1": "a-new-0",
        "default/small-2": "a-new-1",
    }


def _two_groups(tmp_path: Path, *pending: dict[str, Any], taint_small: bool = False) -> Path:
    """Groups small (4 cpu) and large (16 cpu), each with one full node; ``pending`` pods."""
    taints = [{"key": "dedicated", "value": "small", "effect": "NoSchedule"}]
    toleration = [{"key": "dedicated", "operator": "Exists"}]
    small = node("small-0", "small", 4, **({"taints": taints} if taint_small else {}))
    return write(
        tmp_path / "dump",
        node("large-0", "large", 16),
        small,
        pod("large-full", "16", "large-0"),
        pod("small-full", "4", "small-0", **({"tolerations": toleration} if taint_small else {})),
        *pending,
    )


def test_least_waste_picks_the_group_that_wastes_less(tmp_path: Path) -> None:
    # expander/waste: three pending 3-cpu pods (1Gi each). small (4 cpu, 64Gi): one pod per
    # node, 3 nodes: cpu waste (12-9)/12 = 0.25, memory (192-3)/192 = 0.984: 1.234.
    # large (16 cpu): all three on one node: cpu (16-9)/16 = 0.4375, memory (64-3)/64 = 0.953:
    # 1.391. small wastes less and is chosen, though it needs more nodes (the scale-up preset,
    # upstream's benchmark, would take the fewest nodes).
    directory = _two_groups(tmp_path, pod("p1", "3"), pod("p2", "3"), pod("p3", "3"))
    outcome, _ = run(settings(directory))
    result = outcome.result
    assert result["estimates"] == {
        "large": {"nodes": 1, "pods": 3},
        "small": {"nodes": 3, "pods": 3},
    }
    assert result["node_group"] == "small"
    assert result["added"] == {"small": 3}
    # Both existing nodes are full (utilization 1): kept.
    assert set(result["kept"]) == {"large-0", "small-0"}


def test_priority_expander_prefers_the_higher_priority(tmp_path: Path) -> None:
    # expander/priority: the highest priority whose regular expression matches a group wins:
    # large (10) over small (1), whatever the waste.
    directory = _two_groups(tmp_path, pod("p1", "3"), pod("p2", "3"), pod("p3", "3"))
    config = tmp_path / "priorities.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "cluster-autoscaler-priority-expander"},
                "data": {"priorities": yaml.safe_dump({10: ["^lar"], 1: [".*"]})},
            }
        )
    )
    s = settings(directory, expander="priority", expander_priorities=str(config))
    outcome, _ = run(s)
    assert outcome.result["added"] == {"large": 1}
    assert outcome.result["warnings"] == []


def test_constraints_the_filters_do_not_check_are_warned_about(tmp_path: Path) -> None:
    # snapshot.scheduling.pod_warnings, for pending and bound pods alike.
    gated = pod("gated", "1", schedulingGates=[{"name": "wait"}])
    directory = write(tmp_path / "dump", node("a-0", "a", 4), gated)
    outcome, _ = run(settings(directory))
    assert [w for w in outcome.result["warnings"] if "schedulingGates" in w] == [
        "pod default/gated: spec.schedulingGates: kube-scheduler does not try a pod with "
        "scheduling gates (SchedulingGates); it is simulated as if they were removed"
    ]


def test_scale_down_disabled_annotation_keeps_a_node(tmp_path: Path) -> None:
    # core/scaledown/eligibility: a node annotated scale-down-disabled is never a candidate,
    # though empty here (utilization 0).
    empty = node("a-1", "a", 4)
    empty["metadata"]["annotations"] = {
        "cluster-autoscaler.kubernetes.io/scale-down-disabled": "true"
    }
    directory = write(tmp_path / "dump", node("a-0", "a", 4), empty, pod("busy", "3", "a-0"))
    outcome, _ = run(settings(directory))
    assert outcome.result["kept"]["a-1"] == (
        "scale-down disabled by annotation cluster-autoscaler.kubernetes.io/scale-down-disabled"
    )
    assert outcome.result["removed"] == []


def test_a_tainted_group_is_skipped_for_pods_without_tolerations(tmp_path: Path) -> None:
    # The estimator checks the template with the scheduler's filters (TaintToleration): a
    # 3-cpu pod without tolerations fits no node of small (tainted dedicated=small:NoSchedule),
    # so small's estimate is empty and large, the only option, is chosen (least-waste alone
    # would have picked small, as in the test above).
    directory = _two_groups(tmp_path, pod("p1", "3"), taint_small=True)
    outcome, _ = run(settings(directory))
    assert outcome.result["estimates"]["small"] == {"nodes": 0, "pods": 0}
    assert outcome.result["added"] == {"large": 1}


def test_a_node_selector_picks_one_group(tmp_path: Path) -> None:
    # NodeAffinity filter on the template: the pod selects drasnap.io/node-group=large, so only
    # large's template fits it; least-waste would otherwise pick small (1 pod, 3 of 4 cpu).
    selected = pod("p1", "3", nodeSelector={GROUP: "large"})
    outcome, _ = run(settings(_two_groups(tmp_path, selected)))
    assert outcome.result["estimates"]["small"] == {"nodes": 0, "pods": 0}
    assert outcome.result["added"] == {"large": 1}


def test_a_pod_that_fits_nowhere_says_why(tmp_path: Path) -> None:
    # A 32-cpu pod: the scheduler's answer on the existing node (FitError: "0/1 nodes are
    # available: 1 Insufficient cpu."), then the cluster-autoscaler's NotTriggerScaleUp reason
    # per group (the template, 4 cpu, is too small: counted as "1 Insufficient cpu").
    # Scale-down: a-0 runs 1 of 4 cpu (0.25 < 0.5), but its pod has no other node to go to:
    # the removal simulation (simulator/cluster.go) finds no node at all.
    directory = write(
        tmp_path / "dump", node("a-0", "a", 4), pod("running", "1", "a-0"), pod("huge", "32")
    )
    outcome, cs = run(settings(directory))
    result = outcome.result
    assert result["unschedulable"] == {
        "default/huge": "0/1 nodes are available: 1 Insufficient cpu. "
        "pod didn't trigger scale-up: 1 Insufficient cpu"
    }
    assert result["added"] == {}
    assert result["kept"] == {
        "a-0": "pod default/running cannot move to another node: "
        "no nodes available to schedule pods"
    }
    assert cs.node_names() == ["a-0"]
    # Recorded for `drasnap explain` and the pod_failures view, group reason included.
    record = PodFailure.from_json("default/huge", cs.store.get(POD_FAILURE_KIND, "default/huge"))
    assert (record.message, record.context) == (
        "0/1 nodes are available: 1 Insufficient cpu.",
        "autoscale",
    )
    group = record.node_groups["a"]
    assert group is not None and group.reasons == ("Insufficient cpu",)


def test_max_size_limits_the_group(tmp_path: Path) -> None:
    # The node-group file: a has maxSize 2 and one node, so the estimator may add one node
    # (binpacking_estimator.go's limiter): p1 and p2 (3 cpu each, one per 4-cpu node) need two;
    # one is added and p2 reports "max node group size reached".
    directory = write(
        tmp_path / "dump",
        node("a-0", "a", 4),
        pod("full", "4", "a-0"),
        pod("p1", "3"),
        pod("p2", "3"),
    )
    groups = tmp_path / "groups.yaml"
    groups.write_text(
        yaml.safe_dump({"nodeGroups": [{"name": "a", "minSize": 1, "maxSize": 2, "node": "a-0"}]})
    )
    outcome, _ = run(settings(directory, node_groups_file=str(groups)))
    result = outcome.result
    assert result["added"] == {"a": 1}
    assert result["unschedulable"] == {
        "default/p2": "0/1 nodes are available: 1 Insufficient cpu. "
        "pod didn't trigger scale-up: 1 max node group size reached"
    }
    # a has 2 nodes now (minSize 1), so a-0 is a candidate; it is full (4 of 4 cpu): kept.
    assert result["kept"] == {
        "a-0": "not underutilized: cpu utilization 1 is above the threshold 0.5"
    }


def _gpu_cluster(directory: Path, held: dict[str, int]) -> Path:
    """Nodes with 4-GPU slices (group gpu); ``held[node]`` one-GPU pods run on each."""
    rng = random.Random(0)
    docs: list[dict[str, Any]] = [generated.device_class()]
    for name, count in held.items():
        docs += [generated.node(name, group="gpu"), generated.gpu_slice(name, 4)]
        for i in range(count):
            p = generated.pod(f"{name}-pod-{i}", rng)
            claim_name = f"{name}-pod-{i}-gpu"
            p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim_name}]
            p["spec"]["nodeName"] = name
            p["metadata"]["ownerReferences"] = [REPLICA_SET]
            claim = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": claim_name, "namespace": "default"},
                "spec": generated.claim_template()["spec"]["spec"],
                "status": {
                    "allocation": generated.allocation(name, f"gpu-{i}"),
                    "reservedFor": [
                        {
                            "resource": "pods",
                            "name": p["metadata"]["name"],
                            "uid": p["metadata"]["uid"],
                        }
                    ],
                },
            }
            docs += [claim, p]
    return write(directory, *docs)


def test_dra_utilization_under_and_over_the_threshold(tmp_path: Path) -> None:
    # simulator/utilization/info.go: a node with local slices is measured by its devices
    # (dynamicresources/utils/utilization.go: allocated/total of its pool). g-0 holds 1 of 4
    # GPUs (0.25 < 0.5): its pod moves to g-1 (2 of 4 held, one free after it), and g-0 goes.
    # Utilization is measured once, before any removal is simulated (planner.go,
    # categorizeNodes): g-1 is at 2 of 4, exactly the threshold, so a candidate too
    # (eligibility.go refuses only above it); its pods, g-0's among them, have nowhere to go.
    directory = _gpu_cluster(tmp_path / "dump", {"g-0": 1, "g-1": 2})
    outcome, cs = run(settings(directory))
    result = outcome.result
    assert result["removed"] == ["g-0"]
    assert result["removed_by_group"] == {"gpu": ["g-0"]}
    assert result["kept"]["g-1"].startswith(
        "pod default/g-0-pod-0 cannot move to another node: no nodes available"
    )
    assert cs.node_names() == ["g-1"]
    assert len(cs.pods_on_node("g-1")) == 3


def test_a_higher_threshold_removes_more(tmp_path: Path) -> None:
    # The same cluster with --scale-down-utilization-threshold 0.8: g-0 goes as before, and g-1
    # (0.75 < 0.8) is tried too but its three pods have no other node: kept, with the first.
    directory = _gpu_cluster(tmp_path / "dump", {"g-0": 1, "g-1": 2})
    outcome, _ = run(settings(directory, scale_down_utilization_threshold=0.8))
    assert outcome.result["removed"] == ["g-0"]
    assert outcome.result["kept"]["g-1"].startswith(
        "pod default/g-0-pod-0 cannot move to another node: no nodes available"
    )


def _counter_slice(devices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
            "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}],
            "devices": devices,
        }
    }


def _part(name: str, memory: str) -> dict[str, Any]:
    return {
        "name": name,
        "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": memory}}}],
    }


def test_partitionable_devices_count_by_their_counters() -> None:
    # dynamicresources/utils/utilization.go calculatePoolUtil: one counter set (gpu-0, 40Gi),
    # partitions of 10Gi and 40Gi, and one atomic device.
    devices = [
        _part("mig-a", "10Gi"),
        _part("mig-b", "10Gi"),
        _part("whole", "40Gi"),
        {"name": "x"},
    ]
    slices = [_counter_slice(devices)]
    # Only a partition allocated: the most used counter, 10/40, over one counter set.
    assert pool_utilization(slices, {"mig-a"}) == 0.25
    assert pool_utilization(slices, {"mig-a", "mig-b"}) == 0.5
    # Only the atomic device: 1 of 1 atomic devices.
    assert pool_utilization(slices, {"x"}) == 1.0
    # Both kinds: weighted by count, 1 counter set and 1 atomic device: 0.25/2 + 1/2.
    assert pool_utilization(slices, {"mig-a", "x"}) == 0.625
    assert pool_utilization(slices, set()) == 0.0


def test_resumed_run_gives_the_same_digest(tmp_path: Path) -> None:
    # Stopped after step 2 (the first group's estimate), continued with --resume: the same
    # result and state digest as a run never stopped.
    directory = _two_groups(tmp_path, pod("p1", "3"), pod("p2", "3"), pod("p3", "3"))
    s = settings(directory)
    reference, _ = run(s)
    db = tmp_path / "sim.db"
    interrupted_run(db, s, at_step=2)
    with ClusterSnapshot(Store.open(db)) as cs:
        resumed = simulate(cs, s, never_start, resume=True)
    assert resumed.resumed is True
    assert comparable(resumed) == comparable(reference)


def test_cli_json_human_output_and_runs(tmp_path: Path) -> None:
    directory = write(
        tmp_path / "dump",
        node("a-0", "a", 4),
        pod("running", "1", "a-0"),
        pod("p1", "2"),
        pod("p2", "2"),
    )
    db = str(tmp_path / "sim.db")
    runner = CliRunner()
    result = runner.invoke(cli, ["simulate", "autoscale", db, "--from", str(directory), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("placed_on_existing", "added", "removed", "kept", "unschedulable", "warnings"):
        assert key in data
    assert data["added"] == {"a": 1}
    assert data["name"] == "autoscale-1"
    human = runner.invoke(cli, ["simulate", "autoscale", db, "--from", str(directory)])
    assert human.exit_code == 0, human.output
    assert "node group a: add 1 node(s)" in human.stdout
    runs = runner.invoke(cli, ["runs", db, "--json"])
    assert runs.exit_code == 0, runs.output
    listed = json.loads(runs.stdout)
    names = [r["name"] for r in (listed if isinstance(listed, list) else listed["runs"])]
    assert names == ["autoscale-1", "autoscale-2"]
    inspected = runner.invoke(cli, ["inspect", db, "--name", "autoscale-1", "--json"])
    assert inspected.exit_code == 0, inspected.output
    decisions = json.loads(inspected.stdout)["autoscale"]
    assert decisions["pending"] == []
    assert decisions["placed_on_existing"] == {"default/p1": "a-0"}
    assert decisions["added"] == {"a": 1}
    text = runner.invoke(cli, ["inspect", db, "--name", "autoscale-1"]).stdout
    assert "node group a: add 1 node(s)" in text


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "autoscale needs a cluster: give --from DIR"),
        (["--expander", "cheapest"], "unknown expander 'cheapest'"),
        (["--expander", "priority"], "--expander priority needs --expander-priorities FILE"),
        (["--pods", "5"], "--pods does not apply to autoscale"),
        (["--node-groups", "3"], "--node-groups does not apply to autoscale"),
        (["--max-scale-down-parallelism", "0"], "--max-scale-down-parallelism must be at least 1"),
        (["--skip-nodes-with-system-pods", "maybe"], "'maybe' is not a valid boolean"),
    ],
)
def test_cli_refuses_wrong_settings(tmp_path: Path, args: list[str], fragment: str) -> None:
    directory = write(tmp_path / "dump", node("a-0", "a", 4))
    source = [] if not args else ["--from", str(directory)]
    db = tmp_path / "sim.db"
    result = CliRunner().invoke(cli, ["simulate", "autoscale", str(db), *source, *args])
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr
    assert not db.exists()


def test_node_group_file_errors_are_one_line(tmp_path: Path) -> None:
    directory = write(tmp_path / "dump", node("a-0", "a", 4))
    groups = tmp_path / "groups.yaml"
    groups.write_text(yaml.safe_dump({"nodeGroups": [{"name": "a", "node": "missing"}]}))
    with pytest.raises(ScenarioError, match="node group 'a': no node 'missing' in --from"):
        prepare(settings(directory, node_groups_file=str(groups)))


def _limited_small(tmp_path: Path) -> tuple[Path, Path]:
    """_two_groups with three 3-cpu pods, and a node-group file capping small at 2 nodes."""
    directory = _two_groups(tmp_path, pod("p1", "3"), pod("p2", "3"), pod("p3", "3"))
    groups = tmp_path / "groups.yaml"
    groups.write_text(
        yaml.safe_dump(
            {
                "nodeGroups": [
                    {"name": "small", "maxSize": 2, "node": "small-0"},
                    {"name": "large", "node": "large-0"},
                ]
            }
        )
    )
    return directory, groups


@pytest.mark.parametrize(
    ("expander", "chosen"), [("least-waste", {"small": 1}), ("most-pods", {"large": 1})]
)
def test_most_pods_and_least_waste_differ(tmp_path: Path, expander: str, chosen: Any) -> None:
    # small may grow by one node (maxSize 2, one node): it places one 3-cpu pod, wasting
    # (4-3)/4 + (64-1)/64 = 1.234; large places all three on one node, wasting
    # (16-9)/16 + (64-3)/64 = 1.391. expander/waste takes small, expander/mostpods large.
    directory, groups = _limited_small(tmp_path)
    outcome, _ = run(settings(directory, node_groups_file=str(groups), expander=expander))
    assert outcome.result["estimates"] == {
        "small": {"nodes": 1, "pods": 1},
        "large": {"nodes": 1, "pods": 3},
    }
    assert outcome.result["added"] == chosen


def test_a_node_group_file_with_a_template_written_out(tmp_path: Path) -> None:
    # A group with no node yet (big: its template written out in the file, 16 cpu) and a
    # group by node name (a, 4 cpu). Two 6-cpu pods fit no a node ("Insufficient cpu"), and
    # one big node holds both (binpacking_estimator.go): big grows by one.
    directory = write(
        tmp_path / "dump",
        node("a-0", "a", 4),
        pod("full", "4", "a-0"),
        pod("p1", "6"),
        pod("p2", "6"),
    )
    template = node("big-template", "big", 16)
    del template["apiVersion"], template["kind"]  # optional in the file
    groups = tmp_path / "groups.yaml"
    groups.write_text(
        yaml.safe_dump(
            {
                "nodeGroups": [
                    {"name": "a", "node": "a-0", "maxSize": 5},
                    {"name": "big", "node": template, "maxSize": 3},
                ]
            }
        )
    )
    outcome, cs = run(settings(directory, node_groups_file=str(groups)))
    assert outcome.result["estimates"] == {
        "a": {"nodes": 0, "pods": 0},
        "big": {"nodes": 1, "pods": 2},
    }
    assert outcome.result["added"] == {"big": 1}
    assert cs.node_names() == ["a-0", "big-new-0"]


def test_random_expander_follows_the_seed(tmp_path: Path) -> None:
    # expander/random draws among the options; here from the run's seed, so a seed gives one
    # answer, whichever it is, and a run resumed or repeated gives it again.
    directory = _two_groups(tmp_path, pod("p1", "3"), pod("p2", "3"), pod("p3", "3"))
    chosen = {
        seed: run(settings(directory, expander="random", seed=seed))[0].result["node_group"]
        for seed in range(8)
    }
    assert set(chosen.values()) == {"small", "large"}  # both options drawn over eight seeds
    again = run(settings(directory, expander="random", seed=3))[0].result["node_group"]
    assert again == chosen[3]


@pytest.mark.parametrize(
    ("metadata", "spec", "reason"),
    [
        ({"ownerReferences": []}, {}, "default/lone is not replicated"),
        (
            {"namespace": "kube-system"},
            {},
            "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: lone",
        ),
        (
            {"annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}},
            {},
            "pod annotated as not safe to evict present: lone",
        ),
        (
            {},
            {"volumes": [{"name": "scratch", "emptyDir": {}}]},
            "pod with local storage present: lone",
        ),
        (
            {
                "ownerReferences": [],
                "annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"},
            },
            {},
            None,
        ),
        (
            {"annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes": "s"}},
            {"volumes": [{"name": "s", "hostPath": {"path": "/tmp"}}]},
            None,
        ),
    ],
    ids=["no-controller", "kube-system", "not-safe", "local-storage", "safe", "safe-volume"],
)
def test_drain_rules_keep_a_node(
    tmp_path: Path, metadata: dict[str, Any], spec: dict[str, Any], reason: str | None
) -> None:
    # simulator/drainability/rules (default rules and flags): a-0 runs one 1-cpu pod (0.25 of
    # its cpu, under 0.5) that would fit on a-1; whether it may be evicted decides.
    lone = pod("lone", "1", "a-0", **spec)
    lone["metadata"] = {**lone["metadata"], **metadata}
    directory = write(
        tmp_path / "dump", node("a-0", "a", 4), node("a-1", "a", 4), lone, pod("busy", "3", "a-1")
    )
    outcome, _ = run(settings(directory))
    result = outcome.result
    if reason is None:
        assert result["removed"] == ["a-0"]
    else:
        namespace = metadata.get("namespace", "default")
        assert result["kept"]["a-0"] == f"pod {namespace}/lone blocks its removal: {reason}"


def test_cli_resume_with_files_sees_the_same_settings(tmp_path: Path) -> None:
    # A run interrupted after its first step, continued by the command line with the same
    # files: the settings (paths, file digests) match, and it ends as an uninterrupted run.
    directory, groups = _limited_small(tmp_path)
    config = tmp_path / "priorities.yaml"
    config.write_text(yaml.safe_dump({5: ["small"]}))
    s = settings(
        directory,
        node_groups_file=str(groups.resolve()),
        expander="priority,least-waste",
        expander_priorities=str(config.resolve()),
    )
    reference, _ = run(s)
    db = tmp_path / "sim.db"
    interrupted_run(db, s, at_step=1)
    args = ["simulate", "autoscale", str(db), "--name", "default", "--from", str(directory)]
    args += ["--node-groups", str(groups), "--expander", "priority,least-waste"]
    args += ["--expander-priorities", str(config), "--resume", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["state_digest"] == reference.state_digest
    assert data["added"] == {"small": 1}
    changed = tmp_path / "other.yaml"
    changed.write_text(yaml.safe_dump({5: ["large"]}))
    args[args.index(str(config))] = str(changed)
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 1
    assert "other settings" in refused.stderr


def test_pending_pods_are_packed_round_robin(tmp_path: Path) -> None:
    # filterOutSchedulableByPacking -> RunFiltersUntilPassingNode with lastIndexOrderMapping
    # (offset 1, lastIndex 0): the first search starts at the second node (a-1), each next one
    # past the node that took the previous pod: a-1, a-2, a-0, a-1. First fit would put all
    # four 1-cpu pods on a-0 (4 cpu).
    directory = write(
        tmp_path / "dump",
        *(node(f"a-{i}", "a", 4) for i in range(3)),
        *(pod(f"p{i}", "1") for i in range(4)),
    )
    outcome, _ = run(settings(directory))
    assert outcome.result["placed_on_existing"] == {
        "default/p0": "a-1",
        "default/p1": "a-2",
        "default/p2": "a-0",
        "default/p3": "a-1",
    }


def test_scale_down_budgets_and_the_exact_threshold(tmp_path: Path) -> None:
    # Four 4-cpu nodes: a-0 and a-1 run a 1-cpu pod each, a-2 a 2-cpu pod (0.5: exactly the
    # threshold, a candidate: eligibility.go refuses only above it), a-3 none. Empty a-3 is
    # simulated first (emptycandidates), then a-0: r0 goes one past the cursor, to a-1; a-1's
    # two pods go to a-2 (utilization was measured once, before: planner.go); a-2's four have
    # nowhere to go. Unneeded: a-3, a-0, a-1; the empty node first, then one to drain
    # (--max-drain-parallelism 1, budgets.go CropNodes).
    directory = write(
        tmp_path / "dump",
        *(node(f"a-{i}", "a", 4) for i in range(4)),
        pod("r0", "1", "a-0"),
        pod("r1", "1", "a-1"),
        pod("r2", "2", "a-2"),
    )
    outcome, cs = run(settings(directory))
    result = outcome.result
    assert result["unneeded"] == ["a-3", "a-0", "a-1"]
    assert result["removed"] == ["a-0", "a-3"]
    assert result["kept"]["a-1"] == "unneeded, but --max-drain-parallelism (1) is used up"
    assert result["kept"]["a-2"].startswith("pod default/r0 cannot move to another node")
    assert cs.node_names() == ["a-1", "a-2"]
    assert sorted(p["metadata"]["name"] for p in cs.pods_on_node("a-1")) == ["r0", "r1"]
    # --max-scale-down-parallelism 1: only the empty node; --max-drain-parallelism 2: both
    outcome, _ = run(settings(directory, max_scale_down_parallelism=1))
    assert outcome.result["removed"] == ["a-3"]
    outcome, _ = run(settings(directory, max_drain_parallelism=2))
    assert outcome.result["removed"] == ["a-0", "a-1", "a-3"]


def test_expendable_pods_are_ignored(tmp_path: Path) -> None:
    # core/utils FilterOutExpendablePods: priority under --expendable-pods-priority-cutoff
    # (-10) is neither packed nor scaled up for.
    directory = write(
        tmp_path / "dump",
        node("a-0", "a", 4),
        pod("running", "4", "a-0"),
        pod("low", "1", priority=-11),
    )
    outcome, _ = run(settings(directory))
    assert outcome.result["added"] == {}
    assert outcome.result["ignored"] == {
        "default/low": "expendable: priority -11 is under --expendable-pods-priority-cutoff -10"
    }
    outcome, _ = run(settings(directory, expendable_pods_priority_cutoff=-20))
    assert outcome.result["added"] == {"a": 1}


def test_ca_flags_are_options_and_refused_by_other_scenarios(tmp_path: Path) -> None:
    # CA's own spelling of a boolean flag works; scale-up takes none of CA's autoscale flags.
    directory = write(
        tmp_path / "dump",
        node("a-0", "a", 4),
        pod("lone", "1", "a-0", volumes=[{"name": "v", "emptyDir": {}}]),
    )
    db = tmp_path / "sim.db"
    base = ["simulate", "autoscale", str(db), "--from", str(directory), "--json"]
    kept = json.loads(CliRunner().invoke(cli, base).stdout)["kept"]
    assert "blocks its removal" in kept["a-0"]
    result = CliRunner().invoke(cli, [*base, "--skip-nodes-with-local-storage=false"])
    assert result.exit_code == 0, result.output
    assert "blocks its removal" not in json.loads(result.stdout)["kept"].get("a-0", "")
    refused = CliRunner().invoke(
        cli, ["simulate", "scale-up", str(tmp_path / "u.db"), "--max-drain-parallelism", "2"]
    )
    assert refused.exit_code == 2
    assert "--max-drain-parallelism does not apply to scale-up" in refused.stderr
