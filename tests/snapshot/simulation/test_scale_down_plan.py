"""A scale-down that plans its moves on the indexes ends where one trying them through the
store ends (``scale_down.try_remove``'s ``plan``): the same nodes removed, the same pods on the
same nodes, step by step, on random clusters with the constraints that make the plan give up
(taints, cordons, node selectors, anti-affinity) mixed in."""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.simulation import scale_down
from drasnap.store import MemoryStore
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.snapshot.cluster_builders import bound, node, plain_pod


class _Sim:
    """What try_remove uses of a simulation: the cluster and its fork, commit and revert."""

    def __init__(self, cluster: ClusterSnapshot) -> None:
        self.cluster = cluster

    def fork(self, _label: str) -> None:
        self.cluster.fork()

    def commit(self) -> None:
        self.cluster.commit()

    def revert(self) -> None:
        self.cluster.revert()


_NODE = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(["1", "2", "4"]),
        "pods": st.sampled_from(["2", "4", "8"]),
        "mark": st.sampled_from([None, None, None, "taint", "cordon", "zone"]),
    }
)
_POD = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(["100m", "250m", "500m", "1"]),
        "memory": st.sampled_from(["0", "128Mi", "1Gi"]),
        "mark": st.sampled_from([None, None, None, None, "selector", "anti", "tolerates"]),
    }
)


def _node(i: int, spec: dict[str, Any]) -> dict[str, Any]:
    n = node(f"n{i:02d}", cpu=spec["cpu"], memory="4Gi", pods=spec["pods"])
    if spec["mark"] == "taint":
        n["spec"] = {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}
    elif spec["mark"] == "cordon":
        n["spec"] = {"unschedulable": True}
    elif spec["mark"] == "zone":
        n["metadata"]["labels"]["zone"] = "a"
    return n


def _pod(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    p = plain_pod(name, cpu=spec["cpu"], memory=spec["memory"])
    if spec["mark"] == "selector":
        p["spec"]["nodeSelector"] = {"zone": "a"}
    elif spec["mark"] == "anti":
        p["metadata"]["labels"] = {"app": name}
        term = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "zone"}
        p["spec"]["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    elif spec["mark"] == "tolerates":
        p["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    return p


def _cluster(
    nodes: list[dict[str, Any]], pods: list[tuple[int, dict[str, Any]]]
) -> ClusterSnapshot:
    cs = ClusterSnapshot(MemoryStore())
    placed: dict[int, list[dict[str, Any]]] = {}
    for j, (where, spec) in enumerate(pods):
        placed.setdefault(where % len(nodes), []).append(_pod(f"p{j:03d}", spec))
    for i, spec in enumerate(nodes):
        n = _node(i, spec)
        # More pods than the node's slots: the rest are dropped, a cluster stays possible.
        on = placed.get(i, [])[: int(spec["pods"])]
        cs.add_node(n, pods=[bound(p, n["metadata"]["name"]) for p in on])
    return cs


def _state(cs: ClusterSnapshot) -> dict[str, Any]:
    return {
        name: sorted(p["metadata"]["name"] for p in cs.pods_on_node(name))
        for name in cs.node_names()
    }


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.lists(_NODE, min_size=2, max_size=9),
    pods=st.lists(st.tuples(st.integers(0, 20), _POD), max_size=40),
)
def test_planned_removals_end_where_tried_removals_end(
    nodes: list[dict[str, Any]], pods: list[tuple[int, dict[str, Any]]]
) -> None:
    planned, tried = _cluster(nodes, pods), _cluster(nodes, pods)
    for name in planned.node_names():
        moved = scale_down.try_remove(_Sim(planned), name)  # type: ignore[arg-type]
        assert moved == scale_down.try_remove(_Sim(tried), name, plan=False)  # type: ignore[arg-type]
        assert _state(planned) == _state(tried)
    assert {k: dict(planned.store.items(k)) for k in planned.store.kinds()} == {
        k: dict(tried.store.items(k)) for k in tried.store.kinds()
    }


def test_the_plan_is_arithmetic_on_plain_pods_and_gives_up_on_the_rest() -> None:
    cs = _cluster(
        [{"cpu": "1", "pods": "8", "mark": None}] * 3,
        [(0, {"cpu": "500m", "memory": "0", "mark": None})] * 2
        + [(1, {"cpu": "500m", "memory": "0", "mark": None})],
    )
    on_n00 = cs.pods_on_node("n00")
    # n01 has room for one of the two, n02 for the other: first fit in name order.
    assert cs.plan_moves(on_n00, "n00") == (True, ["n01", "n02"])
    assert cs.plan_moves(on_n00, "n00") == (True, ["n01", "n02"])  # nothing was written
    assert cs.plan_moves([*on_n00, *on_n00], "n00") == (True, None)  # a third fits nowhere
    selective = _pod("s", {"cpu": "1m", "memory": "0", "mark": "selector"})
    assert cs.plan_moves([selective], "n00") == (False, None)
