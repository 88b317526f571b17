"""``--no-dra``: upstream's ``BenchmarkRunOnceScaleUp`` and ``BenchmarkRunOnceScaleDown``
(cluster-autoscaler ``core/bench/benchmark_runonce_test.go``), scaled down, with the outcome
upstream's ``verify`` expects at its size scaled alike."""

from __future__ import annotations

import pytest
from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.simulation import generated
from drasnap.snapshot.simulation.runner import prepare
from drasnap.snapshot.simulation.settings import Settings, settings_options

from tests.snapshot.simulation.test_scenarios import run


def test_no_dra_presets_have_upstreams_sizes() -> None:
    up = Settings.preset("scale-up", dra=False)
    down = Settings.preset("scale-down", dra=False)
    assert (up.pods, up.gpus_per_node) == (50_000, None)
    assert (down.nodes, down.pods_per_node) == (2_000, 40)
    # Given sizes win over the preset's; the DRA presets keep theirs.
    assert Settings.preset("scale-up", dra=False, pods=7).pods == 7
    assert Settings.preset("scale-up") == Settings("scale-up").resolved()


def test_no_dra_scale_up_packs_fifty_pods_a_node() -> None:
    # Upstream: 1,000 nodes' worth of pods (50 a node, each a fiftieth of a node's CPU and
    # memory) give a target size of 1,000. Scaled down: 500 pods, 10 nodes, each full.
    outcome, cs = run(Settings.preset("scale-up", dra=False, pods=500))
    assert outcome.result == {
        "nodes_added": 10,
        "node_group": "group-0",
        "estimates": {"group-0": 10},
    }
    assert outcome.pods_placed == 500
    assert [len(cs.pods_on_node(n)) for n in cs.node_names()] == [50] * 10
    assert cs.store.count("DeviceClass") == 0
    assert cs.dra.node_resource_slices("group-0-00000") in (None, [])
    pod = cs.pods_on_node("group-0-00000")[0]
    assert "resourceClaims" not in pod["spec"]
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "200m", "memory": "200"}


def test_no_dra_scale_up_node_groups_halve_cpu_and_memory() -> None:
    # 50, 25 and 12 pods a node: 500 pods need 10, 20 and 42 nodes.
    outcome, _ = run(Settings.preset("scale-up", dra=False, pods=500, node_groups=3))
    assert outcome.result["estimates"] == {"group-0": 10, "group-1": 20, "group-2": 42}
    assert outcome.result["nodes_added"] == 10


def test_no_dra_scale_down_removes_sixty_percent() -> None:
    # Upstream: 2,000 nodes of 40 pods (each a hundredth of a node) -> 1,200 marked for
    # deletion. Scaled down: 20 nodes, 800 pods, 100 a node at most: 8 stay, 12 go.
    outcome, cs = run(Settings.preset("scale-down", dra=False, nodes=20))
    assert outcome.result == {"nodes_removed": 12}
    assert cs.node_names() == [f"node-{i:04d}" for i in range(12, 20)]
    assert [len(cs.pods_on_node(n)) for n in cs.node_names()] == [100] * 8
    assert cs.pod_count() == 800
    pod = cs.pods_on_node("node-0019")[0]
    assert pod["metadata"]["annotations"] == {generated.SAFE_TO_EVICT: "true"}


def test_no_dra_is_recorded_and_given_back_as_an_option() -> None:
    record = Settings.preset("scale-down", dra=False).record()
    assert record["dra"] is False
    assert "dra" not in Settings.preset("scale-down").record()
    assert settings_options(record) == ["--no-dra"]
    assert settings_options(Settings.preset("scale-up", dra=False, pods=9).record()) == [
        "--pods",
        "9",
        "--no-dra",
    ]


@pytest.mark.characterization
@pytest.mark.parametrize(
    ("settings", "digest"),
    [
        (
            Settings.preset("scale-up", pods=24, node_groups=2, seed=3),
            "5a313ab3bc0ffedd4136f035217f28ec",
        ),
        (
            Settings.preset("scale-down", nodes=6, pods_per_node=3, seed=3),
            "107387ea1eec54dde4eb85d8dccc7942",
        ),
    ],
    ids=["scale-up", "scale-down"],
)
def test_dra_presets_keep_their_digests(settings: Settings, digest: str) -> None:
    outcome, _ = run(settings)
    assert outcome.state_digest == digest


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (Settings("scale-up", dra=False, gpus_per_node=4), "--gpus-per-node does not apply"),
        (Settings("scale-up", dra=False, devices="partitionable"), "does not apply with --no-dra"),
        (Settings("scale-down", dra=False, source="dump"), "--no-dra is for generated runs"),
        (Settings("scale-down", dra=False, pods_per_node=101), "cannot exceed 100"),
        (Settings("scale-up", dra=False, pods=0), "--pods must be at least 1"),
        (Settings("autoscale", dra=False, source="dump"), "--no-dra does not apply to autoscale"),
    ],
    ids=["gpus", "devices", "from", "pods-per-node", "pods", "autoscale"],
)
def test_refused_no_dra_settings(settings: Settings, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        prepare(settings.resolved())
