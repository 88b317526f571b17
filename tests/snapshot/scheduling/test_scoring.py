"""kube-scheduler's default profile scoring (``scheduling.scoring``), on hand-derived cases.

Each expected score is worked out in the comments from upstream's formulas (the module
docstring names the files): per plugin 0..100, totals weighted TaintToleration 3,
NodeAffinity 2, NodeResourcesFit 1, PodTopologySpread 2, InterPodAffinity 2,
NodeResourcesBalancedAllocation 1, ImageLocality 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from drasnap.snapshot.errors import ArgumentError, NotFoundError, SchedulingError
from drasnap.snapshot.scheduling import StaticCluster
from drasnap.snapshot.scheduling.scoring import (
    STRATEGIES,
    best_node,
    node_scoring_warnings,
    plugin_scores,
    scores,
    unsupported_scoring,
)

from tests.snapshot.scheduling.builders import node, pod

Obj = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"


def _placed(name: str, where: str, **kwargs: Any) -> Obj:
    return pod(name, node_name=where, **kwargs)


# -- docs/timelines.md, test 13 ---------------------------------------------------------------


def _test13() -> tuple[StaticCluster, Obj]:
    # n1, n2: 4 CPU / 8Gi each; n1 runs 1 CPU / 2Gi; the new pod asks 1 CPU / 2Gi.
    cluster = StaticCluster(
        [node("n1"), node("n2")],
        [_placed("run", "n1", requests={"cpu": "1", "memory": "2Gi"})],
    )
    return cluster, pod("new", requests={"cpu": "1", "memory": "2Gi"})


def test_least_allocated_prefers_the_emptier_node() -> None:
    cluster, new = _test13()
    by_plugin = plugin_scores(cluster, new, ["n1", "n2"], "LeastAllocated")
    # Fit: n1 cpu (4000-2000)*100//4000 = 50, memory (8Gi-4Gi)*100//8Gi = 50 -> 50;
    #      n2 (4000-1000)*100//4000 = 75 for both -> 75.
    assert by_plugin["NodeResourcesFit"] == {"n1": 50, "n2": 75}
    # Balanced: n1 .5/.5, n2 .25/.25: std 0 -> 100 both.
    assert by_plugin["NodeResourcesBalancedAllocation"] == {"n1": 100, "n2": 100}
    # No PreferNoSchedule taint anywhere: all raw 0, reversed -> 100.
    assert by_plugin["TaintToleration"] == {"n1": 100, "n2": 100}
    for plugin in ("NodeAffinity", "PodTopologySpread", "InterPodAffinity", "ImageLocality"):
        assert by_plugin[plugin] == {"n1": 0, "n2": 0}
    # Totals: n1 50 + 100 + 3*100 = 450; n2 75 + 100 + 300 = 475.
    assert scores(cluster, new, ["n1", "n2"], "LeastAllocated") == {"n1": 450, "n2": 475}
    assert best_node(cluster, new, ["n1", "n2"], "LeastAllocated", "seed") == "n2"


def test_most_allocated_packs_onto_the_busier_node() -> None:
    cluster, new = _test13()
    # Fit: n1 2000*100//4000 = 50, n2 1000*100//4000 = 25; the rest as above:
    # n1 50 + 100 + 300 = 450, n2 25 + 100 + 300 = 425.
    assert scores(cluster, new, ["n1", "n2"], "MostAllocated") == {"n1": 450, "n2": 425}
    assert best_node(cluster, new, ["n1", "n2"], "MostAllocated", "seed") == "n1"


# -- non-zero requests ------------------------------------------------------------------------

SMALL = {"cpu": "1", "memory": "1000Mi", "pods": "110"}


def test_a_pod_without_requests_counts_the_defaults_and_skips_balance() -> None:
    # n1 (1 CPU / 1000Mi) runs a pod without requests, n2 is empty; the new pod asks nothing.
    cluster = StaticCluster(
        [node("n1", allocatable=SMALL), node("n2", allocatable=SMALL)],
        [_placed("idle", "n1")],
    )
    new = pod("new")
    least = plugin_scores(cluster, new, ["n1", "n2"], "LeastAllocated")
    # Each pod counts 100m / 200Mi. n1: cpu 200m -> (1000-200)*100//1000 = 80,
    # memory 400Mi -> 600*100//1000 = 60 -> (80+60)//2 = 70.
    # n2: cpu 100m -> 90, memory 200Mi -> 80 -> 85.
    assert least["NodeResourcesFit"] == {"n1": 70, "n2": 85}
    # A best-effort pod (no cpu, no memory request): BalancedAllocation's PreScore skips.
    assert least["NodeResourcesBalancedAllocation"] == {"n1": 0, "n2": 0}
    # Totals: n1 70 + 300 = 370, n2 85 + 300 = 385.
    assert scores(cluster, new, ["n1", "n2"], "LeastAllocated") == {"n1": 370, "n2": 385}
    # MostAllocated: n1 cpu 200*100//1000 = 20, memory 40 -> 30; n2 10, 20 -> 15.
    most = plugin_scores(cluster, new, ["n1", "n2"], "MostAllocated")
    assert most["NodeResourcesFit"] == {"n1": 30, "n2": 15}


def test_defaults_fill_each_container_but_not_an_explicit_zero() -> None:
    cluster = StaticCluster([node("n2", allocatable=SMALL)])
    # Two containers: 300m / 100Mi, and one without requests (100m / 200Mi by default):
    # cpu 400m -> (1000-400)*100//1000 = 60, memory 300Mi -> 700*100//1000 = 70 -> 65.
    two = pod("two")
    two["spec"]["containers"] = [
        {"name": "a", "resources": {"requests": {"cpu": "300m", "memory": "100Mi"}}},
        {"name": "b"},
    ]
    assert plugin_scores(cluster, two, ["n2"], "LeastAllocated")["NodeResourcesFit"] == {"n2": 65}
    # cpu set to 0 stays 0 (-> 100), memory missing counts 200Mi (-> 80): (100+80)//2 = 90.
    zero = pod("zero", requests={"cpu": "0"})
    assert plugin_scores(cluster, zero, ["n2"], "LeastAllocated")["NodeResourcesFit"] == {"n2": 90}


def test_least_allocated_gives_0_for_an_overcommitted_resource() -> None:
    # A 1 CPU / 1000Mi node running a 2 CPU pod (placed without checks) that asks no memory
    # (so counts 200Mi); the new pod asks 100m / 500Mi. Least: cpu 2100 > 1000 -> 0, memory
    # 700Mi -> (1000-700)*100//1000 = 30 -> (0+30)//2 = 15. Most: cpu capped at 1000 -> 100,
    # memory 700*100//1000 = 70 -> (100+70)//2 = 85.
    cluster = StaticCluster(
        [node("n1", allocatable=SMALL)], [_placed("big", "n1", requests={"cpu": "2"})]
    )
    new = pod("new", requests={"cpu": "100m", "memory": "500Mi"})
    assert plugin_scores(cluster, new, ["n1"], "LeastAllocated")["NodeResourcesFit"] == {"n1": 15}
    assert plugin_scores(cluster, new, ["n1"], "MostAllocated")["NodeResourcesFit"] == {"n1": 85}


# -- BalancedAllocation -----------------------------------------------------------------------


def test_balanced_allocation_scores_unequal_fractions() -> None:
    cluster = StaticCluster(
        [node("n1"), node("tight", allocatable={"cpu": "1", "memory": "8Gi"})],
        [_placed("run", "n1", requests={"cpu": "1", "memory": "1Gi"})],
    )
    new = pod("new", requests={"cpu": "1", "memory": "1Gi"})
    by_plugin = plugin_scores(cluster, new, ["n1", "tight"], "LeastAllocated")
    # n1: cpu 2000/4000 = .5, memory 2Gi/8Gi = .25: std |.5-.25|/2 = .125 -> int(87.5) = 87.
    # tight: cpu 1000/1000 = 1, memory 1Gi/8Gi = .125: std .4375 -> int(56.25) = 56.
    assert by_plugin["NodeResourcesBalancedAllocation"] == {"n1": 87, "tight": 56}


def test_balanced_allocation_caps_a_fraction_at_1() -> None:
    # A pod asking 2 CPU of a 1 CPU node (scored as asked; the filters would refuse it):
    # cpu 2000/1000 capped to 1, memory 2Gi/8Gi = .25: std .375 -> int(62.5) = 62.
    cluster = StaticCluster([node("n1", allocatable={"cpu": "1", "memory": "8Gi"})])
    new = pod("new", requests={"cpu": "2", "memory": "2Gi"})
    by_plugin = plugin_scores(cluster, new, ["n1"], "LeastAllocated")
    assert by_plugin["NodeResourcesBalancedAllocation"] == {"n1": 62}


# -- TaintToleration --------------------------------------------------------------------------

SOFT = {"key": "soft", "value": "", "effect": "PreferNoSchedule"}
SOFTER = {"key": "softer", "value": "x", "effect": "PreferNoSchedule"}
HARD = {"key": "hard", "value": "", "effect": "NoSchedule"}


def test_a_prefer_no_schedule_taint_steers_the_pod_away() -> None:
    cluster = StaticCluster([node("n1", taints=[SOFT]), node("n2")])
    new = pod("new", requests={"cpu": "1", "memory": "2Gi"})
    by_plugin = plugin_scores(cluster, new, ["n1", "n2"], "LeastAllocated")
    # raw n1 1, n2 0; max 1: n1 100 - 100*1//1 = 0, n2 100 - 0 = 100.
    assert by_plugin["TaintToleration"] == {"n1": 0, "n2": 100}
    # Everything else equal (fit (4000-1000)*100//4000 = 75, balanced .25/.25 -> 100):
    # n1 75 + 100 + 3*0 = 175, n2 75 + 100 + 3*100 = 475. MostAllocated (fit 25) packs
    # nothing here: n1 125, n2 425.
    assert scores(cluster, new, ["n1", "n2"], "LeastAllocated") == {"n1": 175, "n2": 475}
    assert scores(cluster, new, ["n1", "n2"], "MostAllocated") == {"n1": 125, "n2": 425}
    assert best_node(cluster, new, ["n1", "n2"], "MostAllocated", "any") == "n2"


def test_taint_counts_are_normalized_reversed_and_tolerations_apply() -> None:
    cluster = StaticCluster(
        [node("n1", taints=[SOFT, SOFTER, HARD]), node("n2", taints=[SOFTER]), node("n3")]
    )
    names = ["n1", "n2", "n3"]
    # raw (PreferNoSchedule only): n1 2, n2 1, n3 0; max 2:
    # n1 100 - 100*2//2 = 0, n2 100 - 100*1//2 = 50, n3 100.
    new = pod("new")
    assert plugin_scores(cluster, new, names, "LeastAllocated")["TaintToleration"] == {
        "n1": 0,
        "n2": 50,
        "n3": 100,
    }
    # Tolerating "soft" (any effect) and "softer" only for NoSchedule (not this effect):
    # raw n1 1, n2 1, n3 0 -> 0, 0, 100.
    tolerant = pod(
        "tolerant",
        tolerations=[
            {"key": "soft", "operator": "Exists"},
            {"key": "softer", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
        ],
    )
    assert plugin_scores(cluster, tolerant, names, "LeastAllocated")["TaintToleration"] == {
        "n1": 0,
        "n2": 0,
        "n3": 100,
    }


# -- NodeAffinity -----------------------------------------------------------------------------


def _preference(weight: int, key: str, op: str, *values: str) -> Obj:
    expr: Obj = {"key": key, "operator": op}
    if values:
        expr["values"] = list(values)
    return {"weight": weight, "preference": {"matchExpressions": [expr]}}


def test_preferred_node_affinity_sums_matching_weights() -> None:
    cluster = StaticCluster(
        [
            node("n1", labels={"zone": "a", "disk": "ssd"}),
            node("n2", labels={"zone": "b", "disk": "ssd"}),
            node("n3", labels={"zone": "b"}),
        ]
    )
    new = pod(
        "new",
        affinity={
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    _preference(20, "zone", "In", "a"),
                    _preference(30, "disk", "In", "ssd"),
                    _preference(0, "zone", "Exists"),  # weight 0: dropped
                    {"weight": 40, "preference": {}},  # no requirement: dropped
                ]
            }
        },
    )
    names = ["n1", "n2", "n3"]
    # raw n1 20+30 = 50, n2 30, n3 0; max 50: n1 100, n2 100*30//50 = 60, n3 0.
    by_plugin = plugin_scores(cluster, new, names, "LeastAllocated")
    assert by_plugin["NodeAffinity"] == {"n1": 100, "n2": 60, "n3": 0}
    # Totals on these empty 4 CPU / 8Gi nodes, the pod asking nothing (so counting 100m /
    # 200Mi, and best-effort: balanced 0): fit cpu (4000-100)*100//4000 = 97, memory
    # (8192-200)*100//8192 = 97 (Mi) -> 97. n1 97 + 3*100 + 2*100 = 597,
    # n2 97 + 300 + 2*60 = 517, n3 97 + 300 = 397.
    assert scores(cluster, new, names, "LeastAllocated") == {"n1": 597, "n2": 517, "n3": 397}
    assert unsupported_scoring(new) == []


def test_a_malformed_preferred_term_is_warned_about_and_matches_nothing() -> None:
    cluster = StaticCluster([node("n1", labels={"zone": "a"})])
    new = pod(
        "new",
        affinity={
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    _preference(20, "zone", "Near", "a")
                ]
            }
        },
    )
    assert plugin_scores(cluster, new, ["n1"], "LeastAllocated")["NodeAffinity"] == {"n1": 0}
    (warning,) = unsupported_scoring(new)
    assert "NodeAffinity" in warning and "[0] is malformed" in warning


# -- PodTopologySpread ------------------------------------------------------------------------

WEB = {"app": "web"}


def _spread(key: str, max_skew: int = 1, selector: Obj | None = None) -> Obj:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": WEB} if selector is None else selector,
    }


def _zones() -> StaticCluster:
    nodes = [
        node("n1", labels={HOSTNAME: "n1", "zone": "a"}),
        node("n2", labels={HOSTNAME: "n2", "zone": "a"}),
        node("n3", labels={HOSTNAME: "n3", "zone": "b"}),
        node("n4", labels={HOSTNAME: "n4"}),  # no zone
        node("n5", labels={HOSTNAME: "n5", "zone": "c"}),  # not scored below
    ]
    pods = [
        _placed("w1", "n1", labels=WEB),
        _placed("w2", "n1", labels=WEB),
        _placed("w3", "n3", labels=WEB),
        _placed("other", "n2", labels={"app": "db"}),
        *(_placed(f"c{i}", "n5", labels=WEB) for i in range(5)),
    ]
    return StaticCluster(nodes, pods)


def test_spread_by_zone_favours_the_emptier_domain() -> None:
    new = pod("new", labels=WEB, topologySpreadConstraints=[_spread("zone")])
    names = ["n1", "n2", "n3", "n4"]
    by_plugin = plugin_scores(_zones(), new, names, "LeastAllocated")
    # n4 lacks "zone": ignored (0). Domains = zones of the scored nodes n1..n3: {a, b}, so
    # weight ln(2 + 2) = 1.386; zone c (n5, not scored) is no domain: its pods do not count.
    # Counts: a = 2 (n1) + 0 (n2) = 2, b = 1.
    # raw: n1 round(2*1.386 + 0) = round(2.77) = 3, n2 3, n3 round(1.386) = 1.
    # min 1, max 3: n1 100*(3+1-3)//3 = 33, n2 33, n3 100*(3+1-1)//3 = 100.
    assert by_plugin["PodTopologySpread"] == {"n1": 33, "n2": 33, "n3": 100, "n4": 0}
    # Totals, every pod counting 100m / 200Mi: fit n1 (3 pods) cpu 3700*100//4000 = 92,
    # memory (8192-600)*100//8192 = 92 -> 92; n2, n3 (2 pods) 95 and 95 -> 95; n4 97.
    # n1 92 + 300 + 2*33 = 458, n2 95 + 300 + 66 = 461, n3 95 + 300 + 200 = 595, n4 397.
    assert scores(_zones(), new, names, "LeastAllocated") == {
        "n1": 458,
        "n2": 461,
        "n3": 595,
        "n4": 397,
    }
    assert best_node(_zones(), new, names, "LeastAllocated", "k") == "n3"


def test_spread_by_hostname_counts_each_nodes_own_pods() -> None:
    new = pod("new", labels=WEB, topologySpreadConstraints=[_spread(HOSTNAME, max_skew=2)])
    names = ["n1", "n2", "n3"]
    # 3 scored nodes: weight ln(3 + 2) = 1.609. Counts n1 2, n2 0 (a db pod), n3 1.
    # raw: n1 round(2*1.609 + 1) = round(4.22) = 4, n2 round(0 + 1) = 1,
    # n3 round(1.609 + 1) = round(2.61) = 3. min 1, max 4:
    # n1 100*(4+1-4)//4 = 25, n2 100*(4+1-1)//4 = 100, n3 100*(4+1-3)//4 = 50.
    by_plugin = plugin_scores(_zones(), new, names, "LeastAllocated")
    assert by_plugin["PodTopologySpread"] == {"n1": 25, "n2": 100, "n3": 50}


def test_spread_with_an_empty_selector_counts_no_pod() -> None:
    # countPodsMatchSelector counts nothing for a selector with no requirement: every raw
    # score is maxSkew - 1 = 0, max 0 -> 100 on every node holding the key.
    new = pod("new", labels=WEB, topologySpreadConstraints=[_spread("zone", selector={})])
    by_plugin = plugin_scores(_zones(), new, ["n1", "n3", "n4"], "LeastAllocated")
    assert by_plugin["PodTopologySpread"] == {"n1": 100, "n3": 100, "n4": 0}


def test_only_do_not_schedule_constraints_score_nothing() -> None:
    hard = {**_spread("zone"), "whenUnsatisfiable": "DoNotSchedule"}
    new = pod("new", labels=WEB, topologySpreadConstraints=[hard])
    by_plugin = plugin_scores(_zones(), new, ["n1", "n3"], "LeastAllocated")
    assert by_plugin["PodTopologySpread"] == {"n1": 0, "n3": 0}


def test_default_spreading_of_a_controlled_pod_is_warned_about_and_scored_0() -> None:
    new = pod("new", labels=WEB)
    new["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "web-1"}]
    (warning,) = unsupported_scoring(new)
    assert "PodTopologySpread" in warning and "ReplicaSet" in warning
    assert plugin_scores(_zones(), new, ["n1", "n3"], "LeastAllocated")["PodTopologySpread"] == {
        "n1": 0,
        "n3": 0,
    }
    # With constraints of its own, the defaults do not apply: nothing to warn about.
    new["spec"]["topologySpreadConstraints"] = [_spread("zone")]
    assert unsupported_scoring(new) == []


# -- InterPodAffinity -------------------------------------------------------------------------


def _weighted(weight: int, app: str, key: str) -> Obj:
    return {
        "weight": weight,
        "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key},
    }


def test_preferred_inter_pod_affinity_both_directions() -> None:
    nodes = [
        node("n1", labels={HOSTNAME: "n1", "zone": "a"}),
        node("n2", labels={HOSTNAME: "n2", "zone": "a"}),
        node("n3", labels={HOSTNAME: "n3", "zone": "b"}),
        node("n4", labels={HOSTNAME: "n4", "zone": "c"}),
    ]
    cache_anti = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [_weighted(10, "web", "zone")]
        }
    }
    follower = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": WEB}, "topologyKey": "zone"}
            ]
        }
    }
    pods = [
        _placed("db", "n1", labels={"app": "db"}),
        _placed("cache", "n3", labels={"app": "cache"}, affinity=cache_anti),
        _placed("follower", "n4", labels={"app": "f"}, affinity=follower),
    ]
    new = pod(
        "new",
        labels=WEB,
        affinity={
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [_weighted(50, "db", "zone")]
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    _weighted(20, "cache", HOSTNAME)
                ]
            },
        },
    )
    # The pod's affinity to db (on n1): zone a += 50. Its anti-affinity to cache (on n3):
    # hostname n3 -= 20. cache's anti-affinity to web: zone b -= 10. follower's required
    # affinity to web (hardPodAffinityWeight 1): zone c += 1.
    # raw: n1 50, n2 50, n3 -10 - 20 = -30, n4 1. min -30, max 50, diff 80:
    # n1 int(100 * 80/80) = 100, n2 100, n3 0, n4 int(100 * 31/80) = int(38.75) = 38.
    by_plugin = plugin_scores(
        StaticCluster(nodes, pods), new, ["n1", "n2", "n3", "n4"], "LeastAllocated"
    )
    assert by_plugin["InterPodAffinity"] == {"n1": 100, "n2": 100, "n3": 0, "n4": 38}


def test_equal_inter_pod_affinity_scores_are_all_0() -> None:
    # The pod prefers app=db in its zone, but no db pod exists: all raw 0 -> 0.
    cluster = StaticCluster([node("n1", labels={"zone": "a"}), node("n2", labels={"zone": "b"})])
    new = pod(
        "new",
        affinity={
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [_weighted(50, "db", "zone")]
            }
        },
    )
    by_plugin = plugin_scores(cluster, new, ["n1", "n2"], "LeastAllocated")
    assert by_plugin["InterPodAffinity"] == {"n1": 0, "n2": 0}


# -- ties and errors --------------------------------------------------------------------------


def _twins() -> tuple[StaticCluster, Obj]:
    return StaticCluster([node("b-node"), node("a-node")]), pod("new", requests={"cpu": "1"})


def test_a_tie_is_broken_by_the_key_alone() -> None:
    cluster, new = _twins()
    names = ["b-node", "a-node"]
    totals = scores(cluster, new, names, "LeastAllocated")
    assert totals["a-node"] == totals["b-node"]
    picks = {
        key: best_node(cluster, new, names, "LeastAllocated", key) for key in map(str, range(16))
    }
    # Same key, same pick (and the nodes' order given does not matter: ties are sorted).
    for key, picked in picks.items():
        assert best_node(cluster, new, names[::-1], "LeastAllocated", key) == picked
    # Over keys, both nodes are picked.
    assert set(picks.values()) == {"a-node", "b-node"}


def test_a_tie_pick_does_not_depend_on_pythonhashseed() -> None:
    cluster, new = _twins()
    keys = [f"seed/{i}/default/p" for i in range(8)]
    here = [best_node(cluster, new, ["a-node", "b-node"], "MostAllocated", k) for k in keys]
    script = (
        "import sys, json, random\n"
        "keys = json.loads(sys.argv[1])\n"
        "print(json.dumps([['a-node', 'b-node'][random.Random(k).randrange(2)] for k in keys]))\n"
    )
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script, json.dumps(keys)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(done.stdout) == here


def test_bad_calls_are_refused_by_name() -> None:
    cluster, new = _twins()
    with pytest.raises(ArgumentError, match=r"'Balanced'.*LeastAllocated, MostAllocated"):
        scores(cluster, new, ["a-node"], "Balanced")
    with pytest.raises(NotFoundError, match="'ghost'"):
        scores(cluster, new, ["ghost"], "LeastAllocated")
    with pytest.raises(SchedulingError, match="default/new: no feasible node"):
        best_node(cluster, new, [], "LeastAllocated", "k")
    assert STRATEGIES == ("LeastAllocated", "MostAllocated")


def test_a_node_listing_images_is_warned_about() -> None:
    with_images = node("n1")
    with_images["status"]["images"] = [{"names": ["nginx:1"], "sizeBytes": 1}]
    (warning,) = node_scoring_warnings(with_images)
    assert "node n1: ImageLocality" in warning
    assert node_scoring_warnings(node("n2")) == []
