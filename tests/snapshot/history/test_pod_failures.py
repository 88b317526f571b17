"""The PodFailure record (``snapshot.history.pod_failures``): what a run stores for an unplaced pod
reads back as it was written, and a value of another shape is refused by name."""

from __future__ import annotations

import pytest
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.history.pod_failures import PodFailure
from drasnap.snapshot.scheduling import FitError, NodeResult

TAINT = NodeResult("TaintToleration", ("node(s) had untolerated taint {gpu: a100}",))
CPU = NodeResult("NodeResourcesFit", ("Insufficient cpu",))


def test_a_record_reads_back_as_written() -> None:
    error = FitError(3, nodes={"a": TAINT, "b": CPU, "c": CPU})
    failure = PodFailure("ml/train", error, {"gpu": CPU, "cpu": None}, "scale-up")
    value = failure.to_json()
    assert value["message"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {gpu: a100}, 2 Insufficient cpu."
    )
    again = PodFailure.from_json("ml/train", value)
    assert again == failure
    assert again.node_reason("a") == TAINT
    assert again.node_reason("zzz") is None


def test_a_prefilter_answer_covers_every_node() -> None:
    reject = NodeResult("NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",))
    failure = PodFailure("ml/p", FitError(2, prefilter=reject))
    assert PodFailure.from_json("ml/p", failure.to_json()).node_reason("any") == reject


@pytest.mark.parametrize("value", [{}, {"fit_error": {"nodes": "x"}}, []])
def test_other_values_are_refused(value: object) -> None:
    with pytest.raises(ObjectValidationError, match="ml/p"):
        PodFailure.from_json("ml/p", value)  # type: ignore[arg-type]
