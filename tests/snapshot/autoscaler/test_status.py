"""The cluster-autoscaler's NotTriggerScaleUp text (ReasonsMessage), compared with upstream's
own test (``processors/status/eventing_scale_up_processor_test.go``, TestReasonsMessage, at
kubernetes/autoscaler a16f0ae8) and with its wording."""

from __future__ import annotations

from drasnap.snapshot.autoscaler.status import (
    MAX_SIZE_REACHED,
    MAX_TOTAL_NODES_REACHED,
    NOT_READY,
    not_trigger_scale_up,
    reasons_message,
)


def test_reasons_message_as_upstreams_test() -> None:
    # TestReasonsMessage's considered groups that exist (its "tmp group"s, which do not exist,
    # are left out by ReasonsMessage; drasnap's groups always exist).
    rejected = {
        "group 1": ["not schedulable"],
        "group 2": ["not schedulable"],
        "group 3": ["also not schedulable"],
    }
    skipped = {
        "group 4": ["max limit reached"],
        "group 5": ["not ready"],
        "group 6": ["max limit reached"],
    }
    found = reasons_message(rejected, skipped)
    for part in (
        "2 not schedulable",
        "1 also not schedulable",
        "2 max limit reached",
        "1 not ready",
    ):
        assert part in found
    # CA's order is Go map order (random); drasnap's: most frequent first, then by text.
    assert found == "2 max limit reached, 2 not schedulable, 1 also not schedulable, 1 not ready"


def test_max_total_nodes_replaces_the_reasons() -> None:
    # TestReasonsMessageWhenScaleUpLimitedByMaxNodesTotal.
    assert reasons_message({"a": ["x"]}, max_nodes_total=True) == MAX_TOTAL_NODES_REACHED
    assert MAX_TOTAL_NODES_REACHED == "max total nodes in cluster reached"


def test_cas_wording() -> None:
    # skippedreasons.go and the event's prefix, word for word; each failing predicate reason of
    # a group counts (a group short of cpu and memory gives both).
    assert MAX_SIZE_REACHED == "max node group size reached"
    assert NOT_READY == "not ready for scale-up"
    assert (
        not_trigger_scale_up(
            {"a": ["cannot allocate all claims"], "b": ["cannot allocate all claims"]},
            {"c": [MAX_SIZE_REACHED]},
        )
        == "pod didn't trigger scale-up: 2 cannot allocate all claims, "
        "1 max node group size reached"
    )
    assert not_trigger_scale_up({"a": ["Insufficient cpu", "Insufficient memory"]}) == (
        "pod didn't trigger scale-up: 1 Insufficient cpu, 1 Insufficient memory"
    )
