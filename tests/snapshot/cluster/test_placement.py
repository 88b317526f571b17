"""The placement index against a scan of every node: random clusters, random changes, random
layers (tiny blocks, so blocks split, empty and merge away all the time)."""

from __future__ import annotations

import pytest
from drasnap.snapshot.cluster import placement
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.store import MemoryStore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.snapshot.cluster_builders import (
    FOO_DRIVER,
    assert_placement_consistent,
    device_class,
    node,
    node_slice,
    plain_pod,
)

NAMES = [f"n{i:02d}" for i in range(24)]

ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(NAMES), st.integers(0, 3)),
        st.tuples(st.just("remove"), st.sampled_from(NAMES), st.just(0)),
        st.tuples(st.just("pod"), st.sampled_from(["small", "big", "gpu"]), st.integers(0, 99)),
        st.tuples(st.just("pod"), st.sampled_from(["small", "gpu"]), st.integers(0, 99)),
        st.tuples(st.just("unschedule"), st.just(""), st.integers(0, 99)),
        st.tuples(st.sampled_from(["fork", "commit", "revert"]), st.just(""), st.just(0)),
    ),
    max_size=60,
)


def _gpu_pod(cs: ClusterSnapshot, name: str) -> dict[str, object]:
    pod = plain_pod(name, cpu="100m", memory="1Mi")
    pod["spec"]["resourceClaims"] = [{"name": "g", "resourceClaimName": f"{name}-c"}]
    cs.dra.add_claims(
        [
            {
                "metadata": {"name": f"{name}-c", "namespace": "default", "uid": f"{name}-c"},
                "spec": {
                    "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "a"}}]}
                },
            }
        ]
    )  # fmt: skip
    return pod


@pytest.fixture(autouse=True)
def _tiny_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(placement, "BLOCK", 2)  # the same for every example


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops)
def test_placement_index_matches_a_scan(steps: list[tuple[str, str, int]]) -> None:
    cs = ClusterSnapshot(MemoryStore())
    cs.dra.add_device_classes([device_class("a", FOO_DRIVER)])
    placed: list[tuple[str, str]] = []
    for n, (op, arg, number) in enumerate(steps):
        if op == "add" and cs.node(arg) is None:
            slices = [node_slice(arg, FOO_DRIVER, arg, number)] if number else []
            cs.add_node(node(arg, cpu="2", memory="1Gi", pods="2"), slices=slices)
        elif op == "remove" and cs.node(arg) is not None:
            cs.remove_node(arg)
        elif op == "pod":
            name = f"p{n}"
            if arg == "gpu":
                pod = _gpu_pod(cs, name)
            else:
                pod = plain_pod(name, cpu="1500m" if arg == "big" else "300m")
            if cs.schedule_pod_anywhere(pod) is not None:
                placed.append(("default", name))
        elif op == "unschedule" and placed:
            namespace, name = placed.pop(number % len(placed))
            if cs.pod(namespace, name) is not None:
                cs.unschedule_pod(namespace, name)
        elif op == "fork":
            cs.fork()
        elif op == "commit":
            cs.commit()
        elif op == "revert":
            cs.revert()
        assert_placement_consistent(cs)


def test_first_fit_in_name_order_skips_full_nodes() -> None:
    # Three one-pod nodes: the first two filled, the third is where the next pod goes, as a
    # scan in name order would place it.
    cs = ClusterSnapshot(MemoryStore())
    for name in ("a", "b", "c"):
        cs.add_node(node(name, cpu="1", memory="1Gi", pods="1"))
    assert [cs.schedule_pod_anywhere(plain_pod(f"p{i}")) for i in range(4)] == ["a", "b", "c", None]
    cs.unschedule_pod("default", "p1")  # after a query that found every node full
    assert cs.schedule_pod_anywhere(plain_pod("again")) == "b"
    cs.fork()
    assert cs.schedule_pod_anywhere(plain_pod("more")) is None
    cs.revert()  # nothing to undo: still full
    cs.fork()
    cs.remove_node("b")
    cs.add_node(node("b", cpu="1", memory="1Gi", pods="1"))  # an empty node again
    assert cs.schedule_pod_anywhere(plain_pod("more")) == "b"
    cs.revert()
    assert cs.schedule_pod_anywhere(plain_pod("more")) is None


def test_a_claim_allocated_or_dropped_on_its_own_moves_the_node_in_or_out() -> None:
    # A claim allocated without any pod change (one from a dump, added in a fork) takes the
    # node's only device; reverting the fork frees it again.
    cs = ClusterSnapshot(MemoryStore())
    cs.dra.add_device_classes([device_class("a", FOO_DRIVER)])
    cs.add_node(node("n1"), slices=[node_slice("n1", FOO_DRIVER, "n1", 1)])
    pod = _gpu_pod(cs, "p")
    cs.fork()
    holder = {
        "metadata": {"name": "holder", "namespace": "default", "uid": "holder"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "a"}}]}},
        "status": {"allocation": {"devices": {"results": [
            {"request": "r", "driver": FOO_DRIVER, "pool": "n1", "device": "dev1"}]}}},
    }  # fmt: skip
    cs.dra.add_claims([holder])
    assert cs.schedule_pod_anywhere(pod) is None
    assert_placement_consistent(cs)
    cs.revert()
    assert_placement_consistent(cs)
    assert cs.schedule_pod_anywhere(pod) == "n1"
