"""Each timer and rule of the cluster-autoscaler over time, on clusters small enough to work
out by hand (docs/timelines.md, Part 3: the derivations, with upstream's code for each rule).

CPU stands in for the scarce resource: a pod of 8 CPUs fits no 4-CPU node, only a node of the
8-CPU group ``big``. Unless a test says otherwise: --scan-interval 10s (ticks at 0, 10s, 20s,
...), CA's defaults, --node-provision-time 2m, and every node group has minSize 0.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from drasnap.snapshot.simulation import generated

from tests.snapshot.simulation.timeline.helpers import (
    create,
    delete,
    deleted_at,
    group_entry,
    life,
    loops,
    minutes,
    node,
    owned,
    pod,
    run_timeline,
    scale_up_times,
)

CPU4 = group_entry("cpu", 4)
BIG = group_entry("big", 8)


def test_a_node_unneeded_from_30s_goes_in_the_first_loop_strictly_after_its_10m(
    tmp_path: Path,
) -> None:
    # n's pod (3 of 4 CPUs: over the 0.5 threshold, so n is needed) is deleted at 30s. Loop
    # 30s finds n unneeded, since = 30s. RemovableAt keeps it while since + 10m is not strictly
    # before now: kept at 10m30s, deleted at 10m40s, gone 5s after its taint.
    outcome, store = run_timeline(
        tmp_path,
        [node("n", "cpu", 4), pod("p", "3", "n")],
        [CPU4],
        [delete(30, "p")],
        until="12m",
    )
    assert deleted_at(store, "n") == minutes("10m45s")
    (only,) = [loop for loop in loops(store) if loop["deleted"]]
    assert only["t"] == minutes("10m40s")
    assert only["deleted"] == ["n"]
    assert outcome.result["scale_downs"] == 1


def test_a_node_whose_pods_cannot_move_is_not_tried_again_for_5m(tmp_path: Path) -> None:
    # n alone, its pod (1 of 4 CPUs: under the threshold) has nowhere to go: loop 0 caches n
    # as unremovable until 5m0s (categorizeNodes: AddTimeout). The pod goes at 30s, but n is
    # RecentlyUnremovable until loop 5m0s, which finds it unneeded (since 5m0s): deleted at
    # the first loop strictly after 15m0s, 15m10s.
    _outcome, store = run_timeline(
        tmp_path,
        [node("n", "cpu", 4), pod("p", "1", "n")],
        [CPU4],
        [delete(30, "p")],
        until="16m",
    )
    assert deleted_at(store, "n") == minutes("15m15s")


def test_scale_down_waits_for_the_delay_after_a_scale_up(tmp_path: Path) -> None:
    # e (empty, group cpu) is unneeded from loop 0. An 8-CPU pod at 1s makes loop 10s scale
    # up big (lastScaleUpTime 10s). e's 10m pass at 10m10s (0 + 10m < 10m10s) and the cooldown
    # (10s + 10m is not after 10m10s) ends then: deleted at 10m10s.
    big_pod = pod("big-pod", "8")
    _o, store = run_timeline(
        tmp_path / "a", [node("e", "cpu", 4)], [CPU4, BIG], [create(1, big_pod)], until="16m"
    )
    assert scale_up_times(store)[0] == (minutes("10s"), {"big": 1})
    assert deleted_at(store, "e") == minutes("10m15s")
    # With a 15m delay: deleted at 15m10s, its since still 0 (a cooldown does not reset it).
    _o, store = run_timeline(
        tmp_path / "b",
        [node("e", "cpu", 4)],
        [CPU4, BIG],
        [create(1, big_pod)],
        until="16m",
        scale_down_delay_after_add="15m",
    )
    assert deleted_at(store, "e") == minutes("15m15s")


def test_scale_down_waits_for_the_delay_after_a_deletion(tmp_path: Path) -> None:
    # Two empty nodes unneeded from 0, one deletion a loop: the first at 10m10s, the second
    # once lastScaleDownDeleteTime + 5m is no longer after now: 15m10s.
    _o, store = run_timeline(
        tmp_path,
        [node("e1", "cpu", 4), node("e2", "cpu", 4)],
        [CPU4],
        [],
        until="16m",
        max_scale_down_parallelism=1,
        scale_down_delay_after_delete="5m",
    )
    assert deleted_at(store, "e1") == minutes("10m15s")
    assert deleted_at(store, "e2") == minutes("15m15s")


def test_nodes_already_coming_take_their_pods_no_second_scale_up(tmp_path: Path) -> None:
    # Three 8-CPU pods at 1s: loop 10s adds 3 big nodes in one scale-up. Until they register
    # at 2m10s, each loop counts 3 upcoming nodes and packs the pods on their placeholders.
    pods = [create(1, pod(f"p{i}", "8")) for i in range(3)]
    outcome, store = run_timeline(tmp_path, [], [BIG], pods, until="3m")
    assert scale_up_times(store) == [(minutes("10s"), {"big": 3})]
    for i in range(3):
        found = life(store, f"default/p{i}")
        assert found["bound"] == minutes("2m10s")
        assert found["node"].startswith("big-")
    assert outcome.result["pod_wait_s"]["max"] == 129.0  # 2m10s - 1s


def test_young_pods_wait_for_the_new_pod_delay_and_the_2s_buffer(tmp_path: Path) -> None:
    # A pod created exactly at loop 10s is not older than the delay (0): loop 20s scales up.
    _o, store = run_timeline(tmp_path / "a", [], [BIG], [create(10, pod("p", "8"))], until="1m")
    assert scale_up_times(store)[0][0] == minutes("20s")
    # At 9s: loop 10s sees it, but every pod to help is under 2s old: it waits a loop.
    _o, store = run_timeline(tmp_path / "b", [], [BIG], [create(9, pod("p", "8"))], until="1m")
    assert scale_up_times(store)[0][0] == minutes("20s")
    # --new-pod-scale-up-delay 30s, pod at 1s: aged 29s at 30s, 39s at 40s.
    _o, store = run_timeline(
        tmp_path / "c",
        [],
        [BIG],
        [create(1, pod("p", "8"))],
        until="1m",
        new_pod_scale_up_delay="30s",
    )
    assert scale_up_times(store)[0][0] == minutes("40s")


def test_a_scale_up_that_never_registers_times_out_and_backs_off(tmp_path: Path) -> None:
    # Nodes take 20m, the window is 15m: each scale-up times out in the first loop strictly
    # after its expected time, lowering the target (the instance is cancelled) and backing
    # the group off 5m, then 10m, 20m, 30m (a failure after the last backoff ended doubles).
    # Scale-ups at 10s; 20m30s (timeout 15m20s, backoff until 20m20s, strict); 45m50s
    # (timeout 35m40s, 10m); 1h21m10s (timeout 1h01m00s, 20m); 2h06m30s (timeout 1h36m20s,
    # 30m: the cap).
    _o, store = run_timeline(
        tmp_path,
        [],
        [BIG],
        [create(1, pod("p", "8"))],
        until="2h10m",
        node_provision_time="20m",
    )
    assert [t for t, _g in scale_up_times(store)] == [
        minutes(x) for x in ("10s", "20m30s", "45m50s", "1h21m10s", "2h6m30s")
    ]
    timed_out = [loop["t"] for loop in loops(store) if loop["timed_out"]]
    assert timed_out == [minutes(x) for x in ("15m20s", "35m40s", "1h1m0s", "1h36m20s")]
    assert life(store, "default/p")["bound"] is None


def test_an_evicted_replicaset_pod_comes_back_and_a_bare_pod_is_lost(tmp_path: Path) -> None:
    # a holds r (a ReplicaSet's) and b (bare, safe to evict), 0.2 of its 4 CPUs: unneeded from
    # 0, deleted at 1m10s with --scale-down-unneeded-time 1m. c is busy (3 of 4 CPUs, over
    # the threshold) and takes r's new incarnation r-e1 at once; b is gone for good.
    safe = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
    bare = pod("b", "100m", "a")
    bare["metadata"] = {"name": "b", "annotations": safe}
    outcome, store = run_timeline(
        tmp_path,
        [
            node("a", "cpu", 4),
            node("c", "cpu", 4),
            pod("r", "100m", "a"),
            bare,
            pod("busy", "3", "c"),
        ],
        [CPU4],
        [],
        until="2m",
        scale_down_unneeded_time="1m",
    )
    assert deleted_at(store, "a") == minutes("1m15s")
    again = life(store, "default/r-e1")
    assert again["arrived"] == minutes("1m10s")
    assert again["bound"] == minutes("1m10s")
    assert again["node"] == "c"
    assert again["incarnation_of"] == "default/r"
    assert outcome.result["lost"] == 1


def test_a_bare_pod_without_the_annotation_keeps_its_node(tmp_path: Path) -> None:
    bare = pod("b", "100m", "a")
    bare["metadata"] = {"name": "b"}
    _o, store = run_timeline(
        tmp_path,
        [node("a", "cpu", 4), node("c", "cpu", 4), bare, pod("busy", "3", "c")],
        [CPU4],
        [],
        until="5m",
        scale_down_unneeded_time="1m",
    )
    assert deleted_at(store, "a") is None


def test_skipping_idle_loops_ends_on_the_digest_of_running_every_loop(tmp_path: Path) -> None:
    trace = [
        create(5 * i + 1, owned(pod(f"p{i}", "8" if i % 3 == 0 else "1")), runs=600 + 97 * i)
        for i in range(12)
    ]
    objects = [node("n1", "cpu", 4), node("n2", "cpu", 4)]
    # (the same folder: the run records its input's path)
    ran: list[float] = []
    skipped, _s = run_timeline(tmp_path, objects, [CPU4, BIG], trace, until="1h", ticks=ran)
    every, _e = run_timeline(tmp_path, objects, [CPU4, BIG], trace, until="1h", no_skip=True)
    assert skipped.state_digest == every.state_digest
    assert skipped.result == every.result
    assert skipped.counters == every.counters
    assert len(ran) < 361 / 2  # of the ticks 0, 10s, ..., 1h: most were idle


def test_a_failed_removal_rechecked_while_nothing_changes_is_not_run(tmp_path: Path) -> None:
    # n's pod cannot move (n is alone): its removal fails at loop 0 and at each recheck, every
    # 5m, for the 3 hours the pod runs; then it ends and n goes. Nothing else happens: the
    # rechecks are predicted, not run, and the run ends where running every loop ends.
    objects = [node("n", "cpu", 4), pod("p", "1", "n")]
    trace = [delete(3 * 3600, "p")]
    ran: list[float] = []
    skipped, store = run_timeline(tmp_path, objects, [CPU4], trace, until="4h", ticks=ran)
    every, _e = run_timeline(tmp_path, objects, [CPU4], trace, until="4h", no_skip=True)
    assert skipped.state_digest == every.state_digest
    assert skipped.counters == every.counters
    # The pod goes at 3h, a recheck time (loop 0 + 36 x 5m): n is unneeded from 3h and goes
    # at 3h10m10s.
    assert deleted_at(store, "n") == minutes("3h10m15s")
    assert len(ran) < 20  # of 1,441 ticks


def test_a_group_that_never_delivers_is_backed_off_and_the_next_group_scales_up(
    tmp_path: Path,
) -> None:
    # g (preferred by the priority expander) never delivers: its scale-up at 10s times out in
    # the first loop strictly after 15m10s, 15m20s; g is backed off, so that same loop the
    # expander takes h.
    priorities = tmp_path / "priorities.yaml"
    priorities.write_text("10: [g]\n1: [h]\n")
    g = {**group_entry("g", 8), "provisioning": "fail"}
    _o, store = run_timeline(
        tmp_path,
        [],
        [g, group_entry("h", 8)],
        [create(1, pod("p", "8"))],
        until="18m",
        expander="priority",
        expander_priorities=str(priorities),
    )
    assert scale_up_times(store) == [(minutes("10s"), {"g": 1}), (minutes("15m20s"), {"h": 1})]
    assert life(store, "default/p")["bound"] == minutes("17m20s")  # h's node, 2m later


def test_node_hours_and_cost_run_from_the_request_to_the_deletion(tmp_path: Path) -> None:
    # The empty starting node e (cost 3 per node-hour) is deleted at 10m15s: 10m15s of 1h,
    # 0.1708333 node-hours, costing 0.5125.
    outcome, _store = run_timeline(
        tmp_path, [node("e", "cpu", 4)], [{**CPU4, "cost": 3}], [], until="1h"
    )
    assert outcome.result["node_hours"] == {"cpu": round(615 / 3600, 6)}
    assert outcome.result["cluster_cost"] == round(615 / 3600 * 3, 6)


def test_max_nodes_total_caps_the_scale_up_and_then_stops_it(tmp_path: Path) -> None:
    # One node (n, 4 CPUs) and --max-nodes-total 3: five 8-CPU pods at 1s get 2 nodes at 10s
    # (3 - 1, GetCappedNewNodeCount); the next loops count n and 2 placeholders (3 - 3 = 0),
    # and once the 2 nodes are ready, 3 ready nodes stop any scale-up (shouldScaleUp). Three
    # pods never run.
    trace = [create(1, pod(f"p{i}", "8")) for i in range(5)]
    outcome, store = run_timeline(
        tmp_path, [node("n", "cpu", 4)], [CPU4, BIG], trace, until="5m", max_nodes_total=3
    )
    assert scale_up_times(store) == [(minutes("10s"), {"big": 2})]
    assert outcome.result["never_scheduled"] == 3
    waiting = life(store, "default/p4")["reason"]
    assert waiting == "max total nodes in cluster reached"


def test_resource_limits_cut_the_scale_up_to_the_headroom(tmp_path: Path) -> None:
    # n (4 cores, 64Gi) is busy; three 3-CPU pods need three 4-core nodes of g4.
    g4 = group_entry("g4", 4)
    busy = [node("n", "cpu", 4), pod("busy", "3", "n")]
    trace = [create(1, pod(f"p{i}", "3")) for i in range(3)]
    # --cores-total 0:8: 8 - 4 = 4 cores of headroom, floor(4 / 4) = 1 node.
    _o, store = run_timeline(tmp_path / "a", busy, [CPU4, g4], trace, until="1m", cores_total="0:8")
    assert scale_up_times(store) == [(minutes("10s"), {"g4": 1})]
    # --memory-total 0:200 (GiB): 200 - 64 = 136 of headroom, floor(136 / 64) = 2 nodes.
    _o, store = run_timeline(
        tmp_path / "b", busy, [CPU4, g4], trace, until="1m", memory_total="0:200"
    )
    assert scale_up_times(store) == [(minutes("10s"), {"g4": 2})]
    # --cores-total 0:6: the template's 4 cores alone pass the 2 left: g4 is skipped.
    _o, store = run_timeline(tmp_path / "c", busy, [CPU4, g4], trace, until="1m", cores_total="0:6")
    assert scale_up_times(store) == []
    assert "max cluster cpu limit reached" in life(store, "default/p0")["reason"]


def test_the_minimum_cores_keep_empty_nodes(tmp_path: Path) -> None:
    # Two empty 4-core nodes, --cores-total 8:320000: removing either leaves 4 < 8 cores.
    _o, store = run_timeline(
        tmp_path,
        [node("e1", "cpu", 4), node("e2", "cpu", 4)],
        [CPU4],
        [],
        until="20m",
        cores_total="8:320000",
    )
    assert deleted_at(store, "e1") is None and deleted_at(store, "e2") is None


def gpu_cluster() -> list[dict[str, Any]]:
    """The DeviceClass and the one-GPU claim template pods ask through."""
    return [generated.device_class(), generated.claim_template()]


def gpu_group(name: str, **options: Any) -> dict[str, Any]:
    """A group of 4-CPU nodes with one GPU each (a DRA device in a node-local slice)."""
    template = node(f"{name}-template", name, 4)
    return {
        "name": name,
        "minSize": 0,
        "maxSize": 10,
        "node": template,
        "slices": [generated.gpu_slice(f"{name}-template", 1)],
        **options,
    }


def gpu_pod(name: str) -> dict[str, Any]:
    return generated.pod(name, random.Random(name))


def test_a_node_without_its_slices_is_still_coming_for_the_cluster_autoscaler(
    tmp_path: Path,
) -> None:
    # --slice-publish-lag 5m: the GPU pod at 1s makes loop 10s add a node, Ready at 2m10s,
    # its slices at 7m10s. Meanwhile CA counts it NotStarted: a placeholder with the
    # template's slices stands for it, the pod packs there, no second scale-up. The pod binds
    # once the slices come; a CPU pod at 3m binds to the real node at once (the scheduler sees
    # it as it is).
    outcome, store = run_timeline(
        tmp_path,
        gpu_cluster(),
        [gpu_group("gpu")],
        [create(1, gpu_pod("p")), create(180, pod("q", "1"))],
        until="8m",
        slice_publish_lag="5m",
    )
    assert scale_up_times(store) == [(minutes("10s"), {"gpu": 1})]
    # Billed from the scale-up (7m50s), its one GPU from its publication (50s).
    assert outcome.result["node_hours"] == {"gpu": round(470 / 3600, 6)}
    assert outcome.result["device_hours"] == {"gpu": round(50 / 3600, 6)}
    assert life(store, "default/p")["bound"] == minutes("7m10s")
    assert (life(store, "default/q")["bound"], life(store, "default/q")["node"]) == (
        minutes("3m"),
        "gpu-0",
    )


def test_slices_later_than_the_scale_up_window_make_a_second_scale_up(tmp_path: Path) -> None:
    # g's slices come 14m after Ready (2m10s + 14m = 16m10s); its request expires at 15m10s
    # and times out at 15m20s: g is backed off (its target stays: the node is registered),
    # the NotStarted node is no longer replaced by a placeholder, the pod fits nothing, and h
    # is scaled up in that loop (kubernetes/autoscaler#7530's double scale-up). The pod binds
    # on g's node at 16m10s; h's node registers at 17m20s, empty: unneeded from 17m20s and
    # deleted at 27m30s (the cooldown after the scale-up ended at 25m20s).
    priorities = tmp_path / "priorities.yaml"
    priorities.write_text("10: [g]\n1: [h]\n")
    _o, store = run_timeline(
        tmp_path,
        gpu_cluster(),
        [gpu_group("g", slicePublishLag="14m"), gpu_group("h")],
        [create(1, gpu_pod("p"))],
        until="28m",
        expander="priority",
        expander_priorities=str(priorities),
    )
    assert scale_up_times(store) == [(minutes("10s"), {"g": 1}), (minutes("15m20s"), {"h": 1})]
    found = life(store, "default/p")
    assert (found["bound"], found["node"]) == (minutes("16m10s"), "g-0")
    assert deleted_at(store, "h-0") == minutes("27m35s")
    assert deleted_at(store, "g-0") is None


def test_pods_pending_in_the_starting_cluster_are_scheduled_at_the_start(tmp_path: Path) -> None:
    # The scheduler's first pass is at t=0, before the first loop: q fits n at once, big
    # fits nothing and waits for loop 0's scale-up (pending since before the start: old).
    _o, store = run_timeline(
        tmp_path, [node("n", "cpu", 4), pod("q", "1"), pod("big", "8")], [CPU4, BIG], [], until="3m"
    )
    assert (life(store, "default/q")["bound"], life(store, "default/q")["node"]) == (0, "n")
    assert scale_up_times(store) == [(0, {"big": 1})]
    assert life(store, "default/big")["bound"] == minutes("2m")


def failed_attempts(store: Any) -> list[int]:
    return [loop["t"] for loop in loops(store) if loop.get("deletion_failed")]


def test_scale_down_waits_for_the_delay_after_a_failed_one(tmp_path: Path) -> None:
    # e's group cannot taint its nodes: each StartDeletion fails (lastScaleDownFailTime), and
    # the next try waits --scale-down-delay-after-failure: 10m10s, 13m10s, 16m10s (3m).
    failing = {**CPU4, "scaleDown": "taint-fails"}
    _o, store = run_timeline(tmp_path / "a", [node("e", "cpu", 4)], [failing], [], until="17m")
    assert failed_attempts(store) == [minutes(x) for x in ("10m10s", "13m10s", "16m10s")]
    assert deleted_at(store, "e") is None
    # With 1m: every minute after the first try.
    _o, store = run_timeline(
        tmp_path / "b",
        [node("e", "cpu", 4)],
        [failing],
        [],
        until="12m30s",
        scale_down_delay_after_failure="1m",
    )
    assert failed_attempts(store) == [minutes(x) for x in ("10m10s", "11m10s", "12m10s")]


def test_a_pod_of_the_trace_evicted_comes_back_with_its_run_time(tmp_path: Path) -> None:
    # r arrives at 1s (a ReplicaSet's, 100m) and binds to a (the emptier: LeastAllocated);
    # c is busy (3 of 4 CPUs). a, empty at loop 0, stays unneeded with r on it (r fits c) and
    # goes at 1m10s (0 + 1m, strictly after): r is evicted and its next incarnation r-e1 binds
    # to c at once, for the whole of its run again (10m: the pod starts over).
    _o, store = run_timeline(
        tmp_path,
        [node("a", "cpu", 4), node("c", "cpu", 4), pod("busy", "3", "c")],
        [CPU4],
        [create(1, owned(pod("r", "100m")), runs=600)],
        until="12m",
        scale_down_unneeded_time="1m",
    )
    first = life(store, "default/r")
    assert (first["node"], first["ended"], first["fate"]) == ("a", minutes("1m10s"), "evicted")
    again = life(store, "default/r-e1")
    assert (again["bound"], again["node"]) == (minutes("1m10s"), "c")
    assert (again["ended"], again["fate"]) == (minutes("11m10s"), "completed")


def test_utilization_is_the_time_weighted_share_of_what_nodes_offer(tmp_path: Path) -> None:
    # n (4 CPUs, 64Gi) holds p (1 CPU, 1Gi) from 0 to 30m, then nothing until it goes at
    # 40m15s (unneeded from loop 30m, deleted at 40m10s, gone 5s later); after that no node
    # offers anything, which the mean leaves out: cpu (0.25 x 30m + 0 x 10m15s) / 40m15s.
    outcome, _store = run_timeline(
        tmp_path, [node("n", "cpu", 4)], [CPU4], [create(0, pod("p", "1"), runs=1800)], until="1h"
    )
    found = outcome.result["utilization"]
    assert found["mean"]["cpu"] == round(0.25 * 1800 / 2415, 6)
    assert found["mean"]["memory"] == round(1 / 64 * 1800 / 2415, 6)
    assert found["mean"]["devices"] is None  # no node has devices
    assert found["final"] == {"cpu": None, "memory": None, "devices": None}


def test_the_scheduler_places_as_its_scoring_says(tmp_path: Path) -> None:
    # docs/timelines.md test 13 on a timeline: n1 runs 1 of its 4 CPUs, n2 none (64Gi each,
    # 1Gi asked a pod). NodeResourcesFit, LeastAllocated: n1 cpu (4000-2000)x100/4000 = 50,
    # memory 62x100/64 = 96, (50+96)/2 = 73; n2 75, 98: 86. BalancedAllocation: n1 |.5-.03125|/2
    # -> 76, n2 |.25-.015625|/2 -> 88. TaintToleration 100 x3 both. n2: 86+88 > 73+76.
    # MostAllocated: n1 (50+3)/2 = 26, n2 (25+1)/2 = 13: 26+76 = 102 > 13+88 = 101: n1.
    objects = [node("n1", "cpu", 4), node("n2", "cpu", 4), pod("busy", "1", "n1")]
    trace = [create(5, pod("p", "1"))]
    for scoring, where in (("LeastAllocated", "n2"), ("MostAllocated", "n1")):
        _o, store = run_timeline(
            tmp_path / scoring, objects, [CPU4], trace, until="10s", scheduler_scoring=scoring
        )
        assert life(store, "default/p")["node"] == where, scoring


def test_what_the_scores_leave_out_is_in_the_result(tmp_path: Path) -> None:
    # A ReplicaSet's pod without spread constraints: kube-scheduler spreads it by the system
    # defaults, which drasnap cannot build (it holds no ReplicaSet): said in the result, by name.
    outcome, _store = run_timeline(
        tmp_path, [node("n", "cpu", 4)], [CPU4], [create(1, owned(pod("r", "1")))], until="1m"
    )
    (said,) = [w for w in outcome.result["warnings"] if "PodTopologySpread" in w]
    assert said.startswith("pod default/r: PodTopologySpread")
