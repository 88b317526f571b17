"""ClusterSnapshot Fork / Commit / Revert: upstream's ``TestForking`` (``clustersnapshot_test.go``)
— each of a representative subset of the cluster cases in 8 variants, with the state checked after
each step that has an expected state.

On ``sqlite-reopen`` the store is closed and reopened after the operation and before every
check, mostly mid-fork, so layers are reverted and committed after a reopen (the in-memory
indexes rebuilt from the store).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot

from tests.conftest import Backend
from tests.snapshot.cluster.test_snapshot import CASES_BY_ID, Case, run_op
from tests.snapshot.cluster_builders import (
    FIXTURE_OBJECTS,
    ClusterHarness,
    add_extra_node,
    assert_state,
)


@pytest.fixture
def harness(backend: Backend) -> ClusterHarness:
    return ClusterHarness(backend)


@pytest.fixture(autouse=True)
def _fixture_objects_unchanged() -> Any:
    before = copy.deepcopy(FIXTURE_OBJECTS)
    yield
    assert before == FIXTURE_OBJECTS


#: Steps: fork, commit, revert, op (the case's operation), add (a node with a slice and a pod),
#: caches (list everything first); "=I", "=M", "=M+" check the initial state, the modified
#: state, and the modified state plus the added node.
VARIANTS: dict[str, list[str]] = {
    name: steps.split()
    for name, steps in {
        "op": "op =M",
        "fork-op": "fork op =M",
        "fork-op-revert": "fork op =M revert =I",
        "fork-op-fork-add-revert-revert": "fork op fork add =M+ revert =M revert =I",
        "fork-op-commit": "fork op commit =M",
        "fork-fork-op-commit-revert": "fork fork op commit =M revert =I",
        "fork-op-fork-add-revert-commit": "fork op fork add =M+ revert commit =M",
        "caches-fork-op-commit": "caches fork op commit =M",
    }.items()
}

FORKED_CASES = [
    "add-node-pod-with-allocated-owned-and-shared-claims",
    "add-node-pod-owned-claim-unallocated",  # an error leaving a partial state
    "remove-node",
    "schedule-pod-both-claims-unallocated",
    "schedule-pod-shared-claim-fully-reserved",  # an error leaving a partial state
    "unschedule-pod",
    "unschedule-pod-shared-claim-reserved-by-another-pod",
]


def build_caches(cs: ClusterSnapshot) -> None:
    """Read everything once, so that the listing caches are warm before the fork."""
    cs.dra.resource_claims.list()
    cs.dra.resource_claims.list_all_allocated_devices()
    cs.dra.resource_slices.list()
    cs.dra.device_classes.list()
    for name in cs.node_names():
        cs.node(name)
        for pod in cs.pods_on_node(name):
            cs.dra.pod_claims(pod)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("case_id", FORKED_CASES)
def test_forking(harness: ClusterHarness, case_id: str, variant: str) -> None:
    case: Case = CASES_BY_ID[case_id]
    states = {
        "=I": case.initial,
        "=M": case.modified,
        "=M+": case.modified.plus_extra_node(),
    }
    cs = harness.build(case.initial)
    depth = 0
    for step in VARIANTS[variant]:
        if step in states:
            cs = harness.reopen(cs)
            assert cs.depth == depth
            assert_state(cs, states[step])
            continue
        if step == "fork":
            assert cs.fork(f"step {depth + 1}") == depth + 1
            depth += 1
        elif step == "commit":
            depth = max(depth - 1, 0)
            assert cs.commit() == depth
        elif step == "revert":
            depth = max(depth - 1, 0)
            assert cs.revert() == depth
        elif step == "op":
            run_op(cs, case)
        elif step == "add":
            add_extra_node(cs)
        else:
            assert step == "caches"
            build_caches(cs)
        if step == "op":
            cs = harness.reopen(cs)


@pytest.mark.parametrize("case_id", ["remove-node", "schedule-pod-both-claims-unallocated"])
def test_commit_and_revert_at_the_base_are_no_ops(harness: ClusterHarness, case_id: str) -> None:
    """With no fork the operation lands in the base layer, which cannot be reverted."""
    case = CASES_BY_ID[case_id]
    cs = harness.build(case.initial)
    assert cs.commit() == 0
    assert cs.revert() == 0
    assert_state(cs, case.initial)
    run_op(cs, case)
    assert cs.revert() == 0
    cs = harness.reopen(cs)
    assert cs.commit() == 0
    assert_state(cs, case.modified)


def test_nested_forks_revert_one_level_at_a_time(harness: ClusterHarness) -> None:
    """schedule in layer 1, unschedule in layer 2, remove the node in layer 3: each revert
    steps back exactly one of them."""
    schedule = CASES_BY_ID["schedule-pod-both-claims-unallocated"]
    unschedule = CASES_BY_ID["unschedule-pod"]
    cs = harness.build(schedule.initial)
    cs.fork()
    run_op(cs, schedule)
    cs.fork()
    run_op(cs, unschedule)
    cs = harness.reopen(cs)
    cs.fork()
    cs.remove_node("specialNode")
    cs = harness.reopen(cs)
    assert cs.depth == 3
    # the pod was already off the node: both (unallocated) claims stay, node and slices go
    assert_state(cs, unschedule.modified.but(nodes=[], slices=[]))
    cs.revert()
    cs = harness.reopen(cs)
    assert_state(cs, unschedule.modified)
    cs.revert()
    assert_state(cs, schedule.modified)
    cs = harness.reopen(cs)
    cs.revert()
    assert_state(cs, schedule.initial)
    assert cs.depth == 0
