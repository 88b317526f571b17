"""What an autoscale run says about what it did not do, in the cluster-autoscaler's words:
the NotTriggerScaleUp text of a pod left pending (``processors/status/
eventing_scale_up_processor.go``, ReasonsMessage) and the UnremovableReason of each node kept
(``simulator/cluster.go``), in the result, the PodFailure records and SQL."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import yaml
from drasnap.snapshot.history.pod_failures import POD_FAILURE_KIND, PodFailure
from drasnap.snapshot.simulation import generated
from drasnap.snapshot.simulation.autoscale import unremovable_reason

from tests.snapshot.simulation.test_autoscale import run, settings, write


def _big_gpu_pod() -> list[dict[str, Any]]:
    """A pending pod whose claim asks for 8 GPUs (a template of its own), more than any
    node or template here has (4)."""
    template = copy.deepcopy(generated.claim_template())
    template["metadata"]["name"] = "eight-gpus"
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 8
    p = generated.pod("big", random.Random(1), template="eight-gpus")
    return [template, p]


def test_two_groups_reject_and_one_is_at_its_maximum(tmp_path: Path) -> None:
    # Groups g and h: a new node of either has 4 GPUs, the pod asks for 8: each rejects it
    # with DynamicResources' "cannot allocate all claims". Group m is at its maxSize (1 of 1):
    # CA skips it for every pod (MaxLimitReachedReason). ReasonsMessage counts per group:
    # "2 cannot allocate all claims, 1 max node group size reached". Scale-down: g-0 and h-0
    # are empty (0 of 4 GPUs) and go; m-0 is kept, its group at its minimum size
    # (NodeGroupMinSizeReached).
    docs: list[dict[str, Any]] = [generated.device_class(), generated.claim_template()]
    for name, group in (("g-0", "g"), ("h-0", "h"), ("m-0", "m")):
        docs += [generated.node(name, group=group), generated.gpu_slice(name, 4)]
    docs += _big_gpu_pod()
    directory = write(tmp_path / "dump", *docs)
    groups = tmp_path / "groups.yaml"
    groups.write_text(
        yaml.safe_dump(
            {
                "nodeGroups": [
                    {"name": "g", "minSize": 0, "maxSize": 5, "node": "g-0"},
                    {"name": "h", "minSize": 0, "maxSize": 5, "node": "h-0"},
                    {"name": "m", "minSize": 1, "maxSize": 1, "node": "m-0"},
                ]
            }
        )
    )
    outcome, cs = run(settings(directory, node_groups_file=str(groups)))
    result = outcome.result
    text = (
        "pod didn't trigger scale-up: 2 cannot allocate all claims, 1 max node group size reached"
    )
    assert result["unschedulable"] == {
        "default/big": "0/3 nodes are available: 3 cannot allocate all claims. " + text
    }
    # The run's outcome (--json) keeps autoscale's text, not the scheduler's alone.
    assert outcome.as_json()["unschedulable"] == result["unschedulable"]
    record = PodFailure.from_json("default/big", cs.store.get(POD_FAILURE_KIND, "default/big"))
    assert record.autoscaler == text and record.context == "autoscale"
    assert result["unremovable"] == {"m-0": "NodeGroupMinSizeReached"}
    assert result["removed"] == ["g-0", "h-0"]
    assert result["kept"]["m-0"] == "node group m is at its minimum size (1)"


def test_every_kept_reason_has_cas_name() -> None:
    # Each reason text autoscale gives a kept node, with CA's UnremovableReason for it.
    cases = {
        "not in an autoscaled node group": "NotAutoscaled",
        "scale-down disabled by annotation cluster-autoscaler.kubernetes.io/scale-down-disabled": (
            "ScaleDownDisabledAnnotation"
        ),
        "node group a is at its minimum size (1)": "NodeGroupMinSizeReached",
        "utilization not known: no allocatable cpu": "UnexpectedError",
        "not underutilized: cpu utilization 0.75 is not under the threshold 0.5": (
            "NotUnderutilized"
        ),
        "pod default/lone blocks its removal: not replicated": "BlockedByPod",
        "pod default/running cannot move to another node: no nodes available to schedule pods": (
            "NoPlaceToMovePods"
        ),
    }
    for text, name in cases.items():
        assert unremovable_reason(text) == name, text
    assert unremovable_reason(None) is None
