"""``ClusterSnapshot.feasible_nodes``: the nodes the scheduler would score, and scoring on a
snapshot (``scheduling.scoring`` reads it as its ClusterView).

The differential test reuses ``test_fast_path``'s random clusters and pods: the nodes
``feasible_nodes`` returns are exactly those where ``schedule_pod`` (every filter) takes the
pod, in the order asked; none means ``fit_error`` explains the pod, some means it refuses.
"""

from __future__ import annotations

from typing import Any

import pytest
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import NotFoundError, SchedulingError
from drasnap.snapshot.scheduling.scoring import STRATEGIES, best_node, plugin_scores, scores
from drasnap.store import MemoryStore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.snapshot.cluster.test_fast_path import (
    CONSTRAINTS,
    _build,
    _claim,
    clusters,
    pending_pods,
)
from tests.snapshot.scheduling.builders import node, pod

Obj = dict[str, Any]


def _takes(cs: ClusterSnapshot, body: Obj, name: str) -> bool:
    cs.fork()
    try:
        cs.schedule_pod(body, name)
    except SchedulingError:
        return False
    finally:
        cs.revert()
    return True


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_feasible_nodes_are_the_nodes_every_filter_passes(
    cluster: list[tuple[Obj, int, list[Obj]]], data: st.DataObject
) -> None:
    cs = _build(cluster)
    theme = data.draw(st.sampled_from(CONSTRAINTS))
    for index in range(data.draw(st.integers(1, 5))):
        body, claimed = data.draw(pending_pods(index, theme))
        if claimed:
            cs.dra.add_claims([_claim(f"p{index}-gpu")])
        order = data.draw(st.none() | st.permutations(cs.node_names()))
        digest = cs.store.state_digest()
        feasible = cs.feasible_nodes(body, order)
        assert cs.store.state_digest() == digest  # nothing written
        assert feasible == [n for n in order or cs.node_names() if _takes(cs, body, n)]
        if feasible:
            with pytest.raises(SchedulingError):
                cs.fit_error(body)
            cs.schedule_pod(body, feasible[0])  # the next pods meet this one
        else:
            cs.fit_error(body)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_the_best_feasible_node_has_the_highest_total(
    cluster: list[tuple[Obj, int, list[Obj]]], data: st.DataObject
) -> None:
    # Random clusters and pods (preferred node and pod affinity, ScheduleAnyway spread and
    # PreferNoSchedule taints among them): every plugin scores 0..100 on every feasible node,
    # the pick is a feasible node of the highest total, and scheduling there succeeds.
    cs = _build(cluster)
    theme = data.draw(st.sampled_from(CONSTRAINTS))
    for index in range(data.draw(st.integers(1, 5))):
        body, claimed = data.draw(pending_pods(index, theme))
        if claimed:
            cs.dra.add_claims([_claim(f"p{index}-gpu")])
        feasible = cs.feasible_nodes(body)
        if not feasible:
            continue
        strategy = data.draw(st.sampled_from(STRATEGIES))
        for plugin, by_node in plugin_scores(cs, body, feasible, strategy).items():
            assert set(by_node) == set(feasible), plugin
            assert all(0 <= s <= 100 for s in by_node.values()), (plugin, by_node)
        totals = scores(cs, body, feasible, strategy)
        best = best_node(cs, body, feasible, strategy, f"key/{index}")
        assert totals[best] == max(totals.values())
        cs.schedule_pod(body, best)


def test_scoring_reads_the_snapshot_as_it_reads_any_view() -> None:
    # docs/timelines.md test 13 on a ClusterSnapshot: n1 runs 1 CPU / 2Gi, the new pod asks
    # the same; LeastAllocated n1 450, n2 475 -> n2; MostAllocated 450, 425 -> n1.
    cs = ClusterSnapshot(MemoryStore())
    cs.add_node(
        node("n1"), pods=[pod("run", node_name="n1", requests={"cpu": "1", "memory": "2Gi"})]
    )
    cs.add_node(node("n2"))
    new = pod("new", requests={"cpu": "1", "memory": "2Gi"})
    feasible = cs.feasible_nodes(new)
    assert feasible == ["n1", "n2"]
    assert scores(cs, new, feasible, "LeastAllocated") == {"n1": 450, "n2": 475}
    assert best_node(cs, new, feasible, "LeastAllocated", "k") == "n2"
    assert best_node(cs, new, feasible, "MostAllocated", "k") == "n1"


def test_feasible_nodes_refuses_a_placed_pod_and_an_unknown_node() -> None:
    cs = ClusterSnapshot(MemoryStore())
    placed = pod("run", node_name="n1")
    cs.add_node(node("n1"), pods=[placed])
    with pytest.raises(SchedulingError, match="already on node n1"):
        cs.feasible_nodes(placed)
    with pytest.raises(NotFoundError, match="'ghost'"):
        cs.feasible_nodes(pod("new"), ["ghost"])


def test_non_zero_requests_follow_placements_forks_and_reverts() -> None:
    # n1 runs a pod without requests: 100m / 200Mi counted for scoring (0 / 0 for the filters).
    mi = 1024**2
    cs = ClusterSnapshot(MemoryStore())
    cs.add_node(node("n1"), pods=[pod("idle", node_name="n1")])
    assert (cs.non_zero_requested("n1").cpu, cs.non_zero_requested("n1").memory) == (100, 200 * mi)
    assert (cs.requested("n1").cpu, cs.requested("n1").memory) == (0, 0)
    cs.fork()
    cs.schedule_pod(pod("busy", requests={"cpu": "1"}), "n1")
    # + 1000m and a defaulted 200Mi: 1100m / 400Mi.
    assert (cs.non_zero_requested("n1").cpu, cs.non_zero_requested("n1").memory) == (1100, 400 * mi)
    cs.revert()
    assert (cs.non_zero_requested("n1").cpu, cs.non_zero_requested("n1").memory) == (100, 200 * mi)
    cs.unschedule_pod("default", "idle")
    assert cs.non_zero_requested("n1").cpu == 0
