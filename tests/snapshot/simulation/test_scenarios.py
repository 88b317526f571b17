"""The simulation scenarios (snapshot.simulation) at small sizes, with outcomes worked out by hand:
generated scale-up and scale-down, node groups, a pod no template can hold, determinism across
seeds and store backends, starting from manifests (``--from DIR``), and resuming a run.

``write_manifests`` and ``interrupted_run`` are shared with ``test_simulate_cli.py``.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.controllers.claim_templates import claims_from_templates, node_name_of
from drasnap.snapshot.errors import (
    ObjectValidationError,
    RunInterrupted,
    ScenarioError,
    SchedulingError,
)
from drasnap.snapshot.history.pod_failures import POD_FAILURE_KIND, PodFailure
from drasnap.snapshot.k8s.kinds import key_of
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.simulation import generated
from drasnap.snapshot.simulation.inputs import source_digest
from drasnap.snapshot.simulation.plan import SIM_KIND
from drasnap.snapshot.simulation.record import Outcome
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.scale_up import PENDING_KIND
from drasnap.snapshot.simulation.settings import Settings
from drasnap.store import MemoryStore, Store, VersionedStore, replay


def run(settings: Settings, store: VersionedStore | None = None) -> tuple[Outcome, ClusterSnapshot]:
    """Run ``settings`` from scratch on ``store`` (a new MemoryStore by default)."""
    resolved = settings.resolved()
    cs = ClusterSnapshot(MemoryStore() if store is None else store, features=resolved.feature_gates)
    return simulate(cs, resolved, lambda: prepare(resolved)), cs


def comparable(outcome: Outcome) -> dict[str, Any]:
    return {k: v for k, v in outcome.as_json().items() if k not in ("seconds", "resumed")}


def never_start() -> Any:
    raise AssertionError("a run that exists must not be started again")


def interrupted_run(db: Path, settings: Settings, at_step: int) -> None:
    """Start ``settings`` on the SQLite file ``db`` and stop it, as a signal would, once step
    ``at_step`` is saved (a step boundary, at depth 0), leaving an unfinished run behind."""
    resolved = settings.resolved()
    start = prepare(resolved)
    boundaries = iter(range(1, 1 << 30))

    def stop() -> int | None:
        return signal.SIGTERM if next(boundaries) == at_step else None

    with ClusterSnapshot(Store.open(db)) as cs, pytest.raises(RunInterrupted):
        simulate(cs, resolved, lambda: start, stop=stop)


def gpus_of(cs: ClusterSnapshot, node_name: str) -> list[str]:
    """The devices the claims of the pods on ``node_name`` hold, all in that node's pool."""
    (pool,) = [s["spec"]["pool"]["name"] for s in cs.dra.node_resource_slices(node_name) or []]
    devices = []
    for pod in cs.pods_on_node(node_name):
        for claim in cs.dra.pod_claims(pod):
            for r in claim["status"]["allocation"]["devices"]["results"]:
                assert r["pool"] == pool
                devices.append(r["device"])
    return sorted(devices)


# -- generated scale-up -------------------------------------------------------------------------


def test_scale_up_packs_one_gpu_pods_onto_eight_gpu_nodes() -> None:
    # 40 pending pods ask for one GPU each; a template node has 8 GPUs and ample CPU and
    # memory, so GPUs bind: ceil(40 / 8) = 5 nodes, every pod placed. One node group: one
    # estimate (fork, revert), then the expansion (fork, commit).
    outcome, cs = run(Settings("scale-up", pods=40))
    assert outcome.as_json() | {"seconds": 0} == {
        "scenario": "scale-up",
        "nodes_added": 5,
        "node_group": "group-0",
        "estimates": {"group-0": 5},
        "pods_placed": 40,
        "forks": 2,
        "commits": 1,
        "reverts": 1,
        "seconds": 0,
        "state_digest": cs.store.state_digest(),
        "resumed": False,
        "unschedulable": {},
        "warnings": [],
    }
    assert cs.depth == 0
    assert cs.node_names() == [f"group-0-{i:05d}" for i in range(5)]
    for name in cs.node_names():
        assert gpus_of(cs, name) == [f"gpu-{i}" for i in range(8)]  # each node full
    assert cs.pod_count() == 40
    assert cs.store.count(PENDING_KIND) == 0
    assert cs.store.get(SIM_KIND, "run")["done"] is True


def test_scale_up_leftover_pods_open_one_more_node() -> None:
    # 41 pods: 5 full nodes and a sixth holding the last pod alone.
    outcome, cs = run(Settings("scale-up", pods=41))
    assert outcome.result["nodes_added"] == 6
    assert outcome.pods_placed == 41
    assert [len(cs.pods_on_node(n)) for n in cs.node_names()] == [8, 8, 8, 8, 8, 1]


def test_scale_up_node_groups_estimate_each_and_pick_the_fewest_nodes() -> None:
    # Three groups; each has half the GPUs per node of the one before: 8, 4 and 2. Estimates
    # for 40 one-GPU pods: 40/8 = 5, 40/4 = 10, 40/2 = 20 nodes; group-0 needs the fewest.
    # Three estimates (fork, revert each) and one expansion (fork, commit).
    outcome, cs = run(Settings("scale-up", pods=40, node_groups=3))
    assert outcome.result == {
        "nodes_added": 5,
        "node_group": "group-0",
        "estimates": {"group-0": 5, "group-1": 10, "group-2": 20},
    }
    assert (outcome.counters.forks, outcome.counters.commits, outcome.counters.reverts) == (4, 1, 3)
    assert outcome.pods_placed == 40
    assert cs.node_names() == [f"group-0-{i:05d}" for i in range(5)]


# -- generated scale-up on partitionable GPUs ---------------------------------------------------


def results_of(cs: ClusterSnapshot, node_name: str) -> list[tuple[str, str]]:
    """(request, device) of every result of the claims of the pods on ``node_name``."""
    return sorted(
        (r["request"], r["device"])
        for pod in cs.pods_on_node(node_name)
        for claim in cs.dra.pod_claims(pod)
        for r in claim["status"]["allocation"]["devices"]["results"]
    )


def test_scale_up_on_partitionable_gpus_gives_each_pod_a_full_gpu_first() -> None:
    # 20 pods, each "a full GPU, else two slices of one GPU"; a template node has 8 GPUs, each
    # offered whole and as 4 slices through one counter set. A full GPU is free on the newest
    # node for 8 pods, then its counters are all taken (no slice either): ceil(20 / 8) = 3
    # nodes, every pod on a full GPU, as on flat devices.
    outcome, cs = run(Settings("scale-up", pods=20, devices="partitionable"))
    assert outcome.result == {
        "nodes_added": 3,
        "node_group": "group-0",
        "estimates": {"group-0": 3},
    }
    assert outcome.pods_placed == 20
    full = [("gpu/full-gpu", f"gpu-{i}-full") for i in range(8)]
    assert [results_of(cs, n) for n in cs.node_names()] == [full, full, full[:4]]
    # The node's pool: a counter-set slice and a device slice (a slice holds one or the other).
    slices = cs.dra.node_resource_slices("group-0-00000") or []
    assert [sorted(s["spec"]) for s in slices] == [
        ["driver", "nodeName", "pool", "sharedCounters"],
        ["devices", "driver", "nodeName", "pool"],
    ]
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in slices} == {2}
    assert len(slices[1]["spec"]["devices"]) == 8 * (generated.PARTITIONS + 1)


def test_partitionable_slices_keep_to_the_api_limits() -> None:
    # 20 GPUs: 20 counter sets (8 a slice: 3 slices), 100 devices (64 a slice: 2 slices).
    slices = generated.partitionable_gpu_slices("n", 20)
    assert [len(s["spec"].get("sharedCounters", ())) for s in slices] == [8, 8, 4, 0, 0]
    assert [len(s["spec"].get("devices", ())) for s in slices] == [0, 0, 0, 64, 36]
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in slices} == {5}
    assert len({s["metadata"]["name"] for s in slices}) == 5


def test_partitionable_template_falls_back_to_two_slices_of_one_gpu() -> None:
    # One partitionable GPU whose first slice is held by another claim: its counters no longer
    # cover the full GPU, so a pod gets two slices of it ("gpu/two-slices"); the next pod finds
    # one slice left, which is not enough, and fits nowhere.
    cs = ClusterSnapshot(MemoryStore())
    cs.dra.add_device_classes([generated.device_class()])
    template = generated.partitionable_claim_template()
    templates = {f"{generated.NAMESPACE}/{generated.PARTITIONABLE_TEMPLATE_NAME}": template}
    held = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "held", "namespace": generated.NAMESPACE, "uid": "held-uid"},
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": generated.DRIVER}}]
            }
        },
        "status": {"allocation": generated.allocation("n1", "gpu-0-partition-0")},
    }
    cs.dra.add_claims([held])
    cs.add_node(generated.node("n1"), slices=generated.partitionable_gpu_slices("n1", 1))
    rng = random.Random(0)
    pods = []
    for name in ("p0", "p1"):
        pod, claims = claims_from_templates(
            generated.pod(name, rng, generated.PARTITIONABLE_TEMPLATE_NAME), templates
        )
        cs.dra.add_claims(claims)
        pods.append(pod)
    assert cs.schedule_pod_anywhere(pods[0]) == "n1"
    assert results_of(cs, "n1") == [
        ("gpu/two-slices", "gpu-0-partition-1"),
        ("gpu/two-slices", "gpu-0-partition-2"),
    ]
    assert cs.schedule_pod_anywhere(pods[1]) is None


def test_a_flat_run_records_no_devices_setting() -> None:
    # Runs recorded before --devices existed keep their settings and digests: "flat" is not
    # recorded; a partitionable run records it, and its resume with flat devices is refused.
    assert "devices" not in Settings("scale-up").resolved().record()
    assert Settings("scale-up", devices="partitionable").record()["devices"] == "partitionable"
    _, cs = run(Settings("scale-up", pods=4, devices="partitionable"))
    with pytest.raises(ScenarioError, match="devices: 'partitionable' there, None asked"):
        simulate(cs, Settings("scale-up", pods=4).resolved(), never_start, resume=True)


@pytest.mark.characterization
@pytest.mark.parametrize(
    ("settings", "digest"),
    [
        (Settings("scale-up", pods=24, node_groups=2, seed=3), "5a313ab3bc0ffedd4136f035217f28ec"),
        (
            Settings("scale-down", nodes=6, pods_per_node=3, seed=3),
            "107387ea1eec54dde4eb85d8dccc7942",
        ),
    ],
    ids=["scale-up", "scale-down"],
)
def test_flat_presets_keep_their_digests(settings: Settings, digest: str) -> None:
    # The digests of these runs before partitionable devices were added: the flat objects,
    # the plan record and the run are unchanged.
    outcome, _ = run(settings)
    assert outcome.state_digest == digest


# -- generated scale-down -----------------------------------------------------------------------


def test_scale_down_removes_what_first_fit_can_empty() -> None:
    # 20 nodes x 10 GPUs, 4 one-GPU pods each: 80 pods. 80 pods need 8 full nodes, so at most
    # 20 - 8 = 12 nodes can go. Candidates are tried in name order and their pods moved first
    # fit (name order), which packs the pods into the lowest-named survivors:
    #   node-0000: its 4 pods go to node-0001 (now 8 pods)                 -> removed, 4 moved
    #   node-0001: 8 pods: 6 fill node-0002, 2 go to node-0003 (6)         -> removed, 8 moved
    #   node-0002 .. node-0011: each is full (10 pods) when its turn comes,
    #     the wave of moved pods having filled it; 10 moves each           -> removed, 100 moved
    #   node-0012: 10 pods, but the 7 other nodes left are full (70 pods)  -> stays (revert)
    #   node-0013 .. node-0019: full, nowhere to go                        -> stay (revert)
    # So 12 removed, 4 + 8 + 100 = 112 pods placed, 20 forks, 12 commits, 8 reverts, and the 8
    # last nodes hold 10 pods each.
    outcome, cs = run(Settings("scale-down", nodes=20, pods_per_node=4))
    assert outcome.result == {"nodes_removed": 12}
    assert outcome.pods_placed == 112
    assert (outcome.counters.forks, outcome.counters.commits, outcome.counters.reverts) == (
        20,
        12,
        8,
    )
    assert cs.node_names() == [f"node-{i:04d}" for i in range(12, 20)]
    for name in cs.node_names():
        assert gpus_of(cs, name) == sorted(f"gpu-{i}" for i in range(10))
    assert cs.pod_count() == 80


def test_scale_down_with_no_spare_room_removes_nothing() -> None:
    # Every node full (pods per node = GPUs per node): no pod can move anywhere.
    outcome, cs = run(Settings("scale-down", nodes=3, gpus_per_node=2, pods_per_node=2))
    assert outcome.result == {"nodes_removed": 0}
    assert outcome.pods_placed == 0
    assert (outcome.counters.commits, outcome.counters.reverts) == (0, 3)
    assert len(cs.node_names()) == 3


# -- determinism --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [
        Settings("scale-up", pods=24, node_groups=2, seed=3),
        Settings("scale-down", nodes=6, pods_per_node=3, seed=3),
    ],
    ids=["scale-up", "scale-down"],
)
def test_same_settings_same_digest_on_every_backend(settings: Settings, tmp_path: Path) -> None:
    first, _ = run(settings)
    again, _ = run(settings)
    assert comparable(again) == comparable(first)
    with Store.open(tmp_path / "sim.db") as store:
        durable, _ = run(settings, store)
        assert comparable(durable) == comparable(first)
    with Store.open(tmp_path / "sim.db", readonly=True) as reader:  # what the file holds
        assert reader.state_digest() == first.state_digest
    other, _ = run(Settings(**{**settings.record(), "seed": 4}))
    assert other.state_digest != first.state_digest  # the seed decides the pods' UIDs
    assert other.result == first.result


def test_resume_ends_like_an_uninterrupted_run(tmp_path: Path) -> None:
    settings = Settings("scale-down", nodes=12, pods_per_node=4).resolved()
    reference, _ = run(settings)
    db = tmp_path / "sim.db"
    interrupted_run(db, settings, at_step=5)
    with ClusterSnapshot(Store.open(db)) as cs:
        with pytest.raises(ScenarioError, match="unfinished scale-down run: add --resume"):
            simulate(cs, settings, never_start)
        resumed = simulate(cs, settings, never_start, resume=True)
    assert resumed.resumed is True
    assert comparable(resumed) == comparable(reference)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (Settings("scale-sideways"), "unknown scenario 'scale-sideways'"),
        (Settings("scale-up", pods=0), "--pods must be at least 1"),
        (Settings("scale-down", nodes=0), "--nodes must be at least 1"),
        (Settings("scale-down", pods_per_node=11), "--pods-per-node 11 cannot exceed"),
        (Settings("scale-up", gpus_per_node=4, node_groups=4), "below one GPU"),
        (Settings("scale-up", devices="mig"), "unknown --devices 'mig'"),
        (Settings("scale-down", devices="partitionable"), "is for generated scale-up runs"),
        (
            Settings("autoscale", source="dump", devices="partitionable"),
            "--devices does not apply to autoscale",
        ),
    ],
    ids=[
        "scenario",
        "pods",
        "nodes",
        "pods-per-node",
        "node-groups",
        "devices",
        "scale-down",
        "autoscale",
    ],
)
def test_impossible_settings(settings: Settings, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        prepare(settings.resolved())


# -- starting from manifests --------------------------------------------------------------------

#: The cluster ``write_manifests`` writes. Nodes (64 CPUs each; the group label decides the
#: node groups, the first node by name is each group's template):
#:   gpu-a-0 (group gpu-a, 4 GPUs): running-0 on gpu-0
#:   gpu-a-1 (group gpu-a, 4 GPUs): running-1 on gpu-0, running-2 on gpu-1
#:   gpu-b-0 (group gpu-b, 2 GPUs): no pods
#: Pending, in this order: pending-0, pending-1, pending-big (5 GPUs: more than any template
#: has), pending-2 .. pending-5 (one GPU each, through the "one-gpu" template).
GROUP_GPUS = {"gpu-a-0": 4, "gpu-a-1": 4, "gpu-b-0": 2}
RUNNING = {"gpu-a-0": ["running-0"], "gpu-a-1": ["running-1", "running-2"], "gpu-b-0": []}
PENDING = [
    "pending-0",
    "pending-1",
    "pending-big",
    "pending-2",
    "pending-3",
    "pending-4",
    "pending-5",
]


def _five_gpu_template() -> KubeObject:
    template = copy.deepcopy(generated.claim_template())
    template["metadata"]["name"] = "five-gpus"
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 5
    return template


def write_manifests(directory: Path, *, pool_suffix: str = "") -> Path:
    """A kubectl-style dump of a small GPU cluster (see the table above); returns the folder.

    Each node's pool is named after the node, plus ``pool_suffix``.
    """
    rng = random.Random(11)
    template, big_template = generated.claim_template(), _five_gpu_template()
    templates = {"default/one-gpu": template}
    nodes, slices, pods, claims = [], [], [], []
    for node_name, gpus in GROUP_GPUS.items():
        nodes.append(generated.node(node_name, group=node_name.rsplit("-", 1)[0]))
        slices.append(generated.gpu_slice(node_name, gpus))
        slices[-1]["spec"]["pool"]["name"] += pool_suffix
        for j, pod_name in enumerate(RUNNING[node_name]):
            pod, (claim,) = claims_from_templates(generated.pod(pod_name, rng), templates)
            pod["spec"] = {**pod["spec"], "nodeName": node_name}
            allocation = generated.allocation(node_name, f"gpu-{j}")
            allocation["devices"]["results"][0]["pool"] += pool_suffix
            claim["status"] = {
                "allocation": allocation,
                "reservedFor": [
                    {"resource": "pods", "name": pod_name, "uid": pod["metadata"]["uid"]}
                ],
            }
            pods.append(pod)
            claims.append(claim)
    for pod_name in PENDING:
        pod = generated.pod(pod_name, rng)
        if pod_name == "pending-big":
            pod["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "five-gpus"
        pods.append(pod)
    directory.mkdir(parents=True, exist_ok=True)
    dump = [generated.device_class(), template, big_template, *nodes, *slices]
    (directory / "01-cluster.yaml").write_text(yaml.safe_dump_all(dump, sort_keys=False))
    (directory / "02-claims.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": claims}, sort_keys=False)
    )
    (directory / "03-pods.yaml").write_text(yaml.safe_dump_all(pods, sort_keys=False))
    return directory


def from_dir(scenario: str, directory: Path) -> Settings:
    return Settings(scenario, source=str(directory), source_digest=source_digest(directory))


@pytest.mark.parametrize("pool_suffix", ["", "-pool"], ids=["pool-is-node", "pool-named-apart"])
def test_scale_up_from_manifests(tmp_path: Path, pool_suffix: str) -> None:
    # Bin-packing in pending order, each pod trying the newest node, then a new one:
    #   gpu-a (4 GPUs): p0 p1 -> A0; big fits no new node (removed again, stays pending);
    #                   p2 p3 -> A0 (full); p4 p5 -> A1                        = 2 nodes
    #   gpu-b (2 GPUs): p0 p1 -> B0; big: no; p2 p3 -> B1; p4 p5 -> B2        = 3 nodes
    # gpu-a wins with 2 nodes; 6 pods placed; pending-big stays pending.
    # Whatever the template's pool is called, each new node gets a pool of its own (pool names
    # are unique per driver; upstream's SanitizedNodeResourceSlices suffixes them).
    directory = write_manifests(tmp_path / "dump", pool_suffix=pool_suffix)
    outcome, cs = run(from_dir("scale-up", directory))
    assert outcome.result == {
        "nodes_added": 2,
        "node_group": "gpu-a",
        "estimates": {"gpu-a": 2, "gpu-b": 3},
    }
    assert outcome.pods_placed == 6
    assert (outcome.counters.forks, outcome.counters.commits, outcome.counters.reverts) == (3, 1, 2)
    assert cs.node_names() == ["gpu-a-0", "gpu-a-00000", "gpu-a-00001", "gpu-a-1", "gpu-b-0"]
    names = {n: [p["metadata"]["name"] for p in cs.pods_on_node(n)] for n in cs.node_names()}
    assert names == {
        "gpu-a-0": ["running-0"],
        "gpu-a-00000": ["pending-0", "pending-1", "pending-2", "pending-3"],
        "gpu-a-00001": ["pending-4", "pending-5"],
        "gpu-a-1": ["running-1", "running-2"],
        "gpu-b-0": [],
    }
    pools = {
        n: [s["spec"]["pool"]["name"] for s in cs.dra.node_resource_slices(n) or []]
        for n in cs.node_names()
    }
    assert len({p for ps in pools.values() for p in ps}) == 5, pools
    assert gpus_of(cs, "gpu-a-00000") == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
    assert gpus_of(cs, "gpu-a-0") == ["gpu-0"]  # the template's own pods stay as they were
    assert cs.store.keys(PENDING_KIND) == ["default/pending-big"]
    assert cs.pod("default", "pending-big") is None
    big_claims = [
        c for c in cs.dra.resource_claims.list() if c["metadata"]["name"].startswith("pending-big-")
    ]
    assert len(big_claims) == 1 and "status" not in big_claims[0]  # tracked, never allocated


def test_scale_up_pod_no_template_can_hold_stays_pending(tmp_path: Path) -> None:
    """Only the 5-GPU pod pending: no group can place it, so no group is usable."""
    directory = write_manifests(tmp_path / "dump")
    pods = list(yaml.safe_load_all((directory / "03-pods.yaml").read_text()))
    kept = [p for p in pods if node_name_of(p) or p["metadata"]["name"] == "pending-big"]
    (directory / "03-pods.yaml").write_text(yaml.safe_dump_all(kept, sort_keys=False))
    outcome, cs = run(from_dir("scale-up", directory))
    assert outcome.result == {
        "nodes_added": 0,
        "node_group": None,
        "estimates": {"gpu-a": -1, "gpu-b": -1},
    }
    assert outcome.pods_placed == 0
    assert cs.node_names() == ["gpu-a-0", "gpu-a-1", "gpu-b-0"]
    assert cs.store.keys(PENDING_KIND) == ["default/pending-big"]


def test_scale_down_from_manifests(tmp_path: Path) -> None:
    # Candidates by name:
    #   gpu-a-0: running-0 moves to gpu-a-1 (2 GPUs free there, gpu-2 first) -> removed, 1 moved
    #   gpu-a-1: 3 pods, but gpu-b-0 has only 2 GPUs                         -> stays (revert)
    #   gpu-b-0: no pods                                                     -> removed, 0 moved
    # Pending pods play no part in a scale-down.
    outcome, cs = run(from_dir("scale-down", write_manifests(tmp_path / "dump")))
    assert outcome.result == {"nodes_removed": 2}
    assert outcome.pods_placed == 1
    assert (outcome.counters.forks, outcome.counters.commits, outcome.counters.reverts) == (3, 2, 1)
    assert cs.node_names() == ["gpu-a-1"]
    assert [p["metadata"]["name"] for p in cs.pods_on_node("gpu-a-1")] == [
        "running-0",
        "running-1",
        "running-2",
    ]
    assert gpus_of(cs, "gpu-a-1") == ["gpu-0", "gpu-1", "gpu-2"]
    (running0,) = [p for p in cs.pods_on_node("gpu-a-1") if p["metadata"]["name"] == "running-0"]
    (claim,) = cs.dra.pod_claims(running0)
    assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-2"
    assert cs.pod_count() == 3


def test_manifests_without_what_the_scenario_needs(tmp_path: Path) -> None:
    directory = write_manifests(tmp_path / "dump")
    no_groups = (directory / "01-cluster.yaml").read_text().replace("drasnap.io/node-group", "x")
    (directory / "01-cluster.yaml").write_text(no_groups)
    with pytest.raises(ScenarioError, match="no node groups"):
        prepare(from_dir("scale-up", directory).resolved())
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ScenarioError, match="holds no Node objects"):
        prepare(from_dir("scale-down", empty).resolved())


def test_manifests_that_do_not_fit_together_fail_in_prepare(tmp_path: Path) -> None:
    """Each object is valid, but running-0's claim is allocated on another node than its pod's:
    found by ``prepare``, before any database is opened."""
    directory = write_manifests(tmp_path / "dump")
    claims_file = directory / "02-claims.yaml"
    claims = yaml.safe_load(claims_file.read_text())
    claims["items"][0]["status"]["allocation"] = generated.allocation("gpu-b-0", "gpu-0")
    claims_file.write_text(yaml.safe_dump(claims, sort_keys=False))
    with pytest.raises(SchedulingError, match="isn't available on node gpu-a-0"):
        prepare(from_dir("scale-down", directory).resolved())


@pytest.mark.parametrize(
    "settings",
    [
        Settings("scale-up", seed=3, pods=60, node_groups=2),
        Settings("scale-down", seed=1, nodes=12),
    ],
    ids=["scale-up-2-groups", "scale-down"],
)
def test_a_checkpoint_at_every_step_records_the_true_digests(
    tmp_path: Path, settings: Settings
) -> None:
    """Values the scenario stored are never changed afterwards: with a checkpoint after every
    step, each recorded digest is the state's (a replay verifies them all) and the last is
    the run on MemoryStore's."""
    path = tmp_path / "every-step.db"
    store = Store.open(path, auto_checkpoint=False, checkpoint_interval=0)
    outcome, cs = run(settings, store)
    cs.close()
    reference, _ = run(settings)
    assert outcome.state_digest == reference.state_digest
    report = replay(path, verify=True)
    assert report.divergence is None and report.checkpoints_verified > 2


def _gpu_taint_rule(device: str) -> KubeObject:
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": f"drain-{device}"},
        "spec": {
            "deviceSelector": {"driver": generated.DRIVER, "device": device},
            "taint": {"key": "maintenance", "effect": "NoSchedule"},
        },
    }


def test_device_taint_rules_in_the_manifests_apply_to_new_nodes(tmp_path: Path) -> None:
    # The scheduler's slice tracker taints every "gpu-3" (any pool): a gpu-a node offers 3
    # GPUs, so the bin-packing of test_scale_up_from_manifests becomes
    #   gpu-a: p0 p1 p2 -> A0; big: no; p3 p4 p5 -> A1 = 2 nodes; gpu-b (gpu-0, gpu-1): 3 nodes.
    directory = write_manifests(tmp_path / "dump")
    (directory / "04-rules.yaml").write_text(yaml.safe_dump(_gpu_taint_rule("gpu-3")))
    settings = from_dir("scale-up", directory)
    with pytest.raises(ObjectValidationError, match="DRADeviceTaintRules feature gate"):
        prepare(settings.resolved())  # off by default in 1.36: an error, not ignored
    gates = {**settings.feature_gates, "DRADeviceTaintRules": True}
    outcome, cs = run(dataclasses.replace(settings, feature_gates=gates))
    assert outcome.result["estimates"] == {"gpu-a": 2, "gpu-b": 3}
    names = {n: [p["metadata"]["name"] for p in cs.pods_on_node(n)] for n in cs.node_names()}
    assert names["gpu-a-00000"] == ["pending-0", "pending-1", "pending-2"]
    assert names["gpu-a-00001"] == ["pending-3", "pending-4", "pending-5"]
    assert gpus_of(cs, "gpu-a-00000") == ["gpu-0", "gpu-1", "gpu-2"]


def test_feature_gates_of_the_run_decide_what_the_manifests_may_use(tmp_path: Path) -> None:
    directory = write_manifests(tmp_path / "dump")
    path = directory / "01-cluster.yaml"
    docs = list(yaml.safe_load_all(path.read_text()))
    template = next(d for d in docs if d["metadata"].get("name") == "one-gpu")
    template["spec"]["spec"]["devices"]["requests"] = [
        {
            "name": "gpu",
            "firstAvailable": [
                {"name": "two", "deviceClassName": generated.DRIVER, "count": 2},
                {"name": "one", "deviceClassName": generated.DRIVER},
            ],
        }
    ]
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    settings = from_dir("scale-up", directory)
    gates = {**settings.feature_gates, "DRAPrioritizedList": False}
    with pytest.raises(ObjectValidationError, match="DRAPrioritizedList"):
        prepare(dataclasses.replace(settings, feature_gates=gates).resolved())
    # On (GA in 1.36): two GPUs a pod where they are free, as the first choice says.
    outcome, cs = run(settings)
    assert outcome.pods_placed == 6
    results = [
        r["request"]
        for c in cs.dra.resource_claims.list()
        if c["metadata"]["name"].startswith("pending-0-")
        for r in c["status"]["allocation"]["devices"]["results"]
    ]
    assert results == ["gpu/two", "gpu/two"]


def test_a_pod_that_fits_nowhere_is_recorded_with_the_schedulers_reason(tmp_path: Path) -> None:
    """pending-big asks for 5 GPUs: the 3 existing nodes (4, 4 and 2 GPUs, some in use) and a
    new node of either group (4 or 2 GPUs) all fail DynamicResources' allocation, whose
    reason is ``cannot allocate all claims``. The record is written through the store: it is
    in the journal and replays."""
    directory = write_manifests(tmp_path / "dump")
    outcome, cs = run(from_dir("scale-up", directory))
    message = "0/5 nodes are available: 5 cannot allocate all claims."
    assert outcome.extra["unschedulable"] == {"default/pending-big": message}
    assert outcome.as_json()["unschedulable"] == {"default/pending-big": message}
    record = PodFailure.from_json(
        "default/pending-big", cs.store.get(POD_FAILURE_KIND, "default/pending-big")
    )
    assert record.message == message and record.context == "scale-up"
    reason = record.node_reason("gpu-a-0")
    assert reason is not None
    assert (reason.plugin, reason.reasons) == ("DynamicResources", ("cannot allocate all claims",))
    assert {g: r and r.reasons for g, r in record.node_groups.items()} == {
        "gpu-a": ("cannot allocate all claims",),
        "gpu-b": ("cannot allocate all claims",),
    }
    assert cs.node_names() == ["gpu-a-0", "gpu-a-00000", "gpu-a-00001", "gpu-a-1", "gpu-b-0"]
    assert cs.depth == 0


def test_warnings_name_each_pod_and_field_the_filters_do_not_check() -> None:
    settings = Settings("scale-up", pods=2).resolved()
    start = prepare(settings)
    start.pending[0]["spec"]["schedulingGates"] = [{"name": "wait"}]
    cs = ClusterSnapshot(MemoryStore())
    outcome = simulate(cs, settings, lambda: start)
    key = key_of(start.pending[0])
    assert outcome.as_json()["warnings"] == [
        f"pod {key}: spec.schedulingGates: kube-scheduler does not try a pod with scheduling "
        "gates (SchedulingGates); it is simulated as if they were removed"
    ]
