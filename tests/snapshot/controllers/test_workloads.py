"""snapshot.controllers.workloads: the pending pods of Deployments, ReplicaSets, StatefulSets and
Jobs.

Expected names, counts and labels follow the controllers in ``pkg/controller/deployment``,
``replicaset``, ``statefulset`` and ``job`` (``podGenerateNameWithIndex`` for Indexed Jobs).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from drasnap.snapshot.controllers.workloads import Workload, pending_pods, validate_workload
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.k8s.kinds import generated_uid

SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def template(app: str = "web") -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}, "annotations": {"team": "ml"}},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]
        },
    }


def workload(kind: str, name: str = "w", **spec: Any) -> dict[str, Any]:
    api_version = "batch/v1" if kind == "Job" else "apps/v1"
    body: dict[str, Any] = {"template": template()}
    if kind != "Job":
        body["selector"] = {"matchLabels": {"app": "web"}}
    body.update(spec)
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns"},
        "spec": body,
    }


def pods_of(
    *objs: dict[str, Any], existing: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    workloads = [Workload(validate_workload(o), f"w.yaml doc {i + 1}") for i, o in enumerate(objs)]
    return [pod for pod, _ in pending_pods(workloads, existing or [])]


def names(pods: list[dict[str, Any]]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


def test_replica_set_pods() -> None:
    pods = pods_of(workload("ReplicaSet", "web-abc", replicas=3))
    assert len(pods) == 3
    for pod in pods:
        assert re.fullmatch(f"web-abc-{SUFFIX}", pod["metadata"]["name"])
        assert pod["metadata"]["labels"] == {"app": "web"}
        assert pod["metadata"]["annotations"] == {"team": "ml"}
        assert pod["metadata"]["namespace"] == "ns"
        assert pod["metadata"]["uid"] == generated_uid("Pod", "ns", pod["metadata"]["name"])
        assert pod["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web-abc",
                "uid": generated_uid("ReplicaSet", "ns", "web-abc"),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        assert pod["spec"] == template()["spec"]
    assert len(set(names(pods))) == 3
    assert names(pods) == names(pods_of(workload("ReplicaSet", "web-abc", replicas=3)))


@pytest.mark.parametrize(
    ("spec", "count"),
    [({}, 1), ({"replicas": 0}, 0), ({"replicas": 2}, 2)],
    ids=["default-one", "zero", "two"],
)
def test_replicas_from_the_spec(spec: dict[str, Any], count: int) -> None:
    assert len(pods_of(workload("Deployment", **spec))) == count
    assert len(pods_of(workload("ReplicaSet", **spec))) == count
    assert len(pods_of(workload("StatefulSet", **spec))) == count


def test_deployment_hash_follows_the_template() -> None:
    (pod,) = pods_of(workload("Deployment", "web"))
    template_hash = pod["metadata"]["labels"]["pod-template-hash"]
    assert re.fullmatch(f"web-{template_hash}-{SUFFIX}", pod["metadata"]["name"])
    changed = workload("Deployment", "web")
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "i2"
    (other,) = pods_of(changed)
    assert other["metadata"]["labels"]["pod-template-hash"] != template_hash
    collided = workload("Deployment", "web")
    collided["status"] = {"collisionCount": 1}
    (third,) = pods_of(collided)
    assert third["metadata"]["labels"]["pod-template-hash"] != template_hash


def test_paused_deployment_creates_nothing() -> None:
    notes: list[str] = []
    obj = workload("Deployment", "web", paused=True)
    assert pending_pods([Workload(validate_workload(obj), "d.yaml doc 1")], [], notes) == []
    assert notes == [
        "d.yaml doc 1: Deployment ns/web: no pods (paused: the controller creates no ReplicaSet)"
    ]


def test_long_names_are_cut_as_generateName_is() -> None:
    name = "a" * 70
    (pod,) = pods_of(workload("ReplicaSet", name))
    assert len(pod["metadata"]["name"]) == 63
    assert pod["metadata"]["name"].startswith("a" * 58)


def test_stateful_set_pods() -> None:
    pods = pods_of(
        workload("StatefulSet", "db", replicas=3, serviceName="db-svc", ordinals={"start": 5})
    )
    assert names(pods) == ["db-5", "db-6", "db-7"]
    revision = pods[0]["metadata"]["labels"]["controller-revision-hash"]
    assert re.fullmatch(r"db-[bcdfghjklmnpqrstvwxz2456789]+", revision)
    assert pods[1]["metadata"]["labels"] == {
        "app": "web",
        "controller-revision-hash": revision,
        "statefulset.kubernetes.io/pod-name": "db-6",
        "apps.kubernetes.io/pod-index": "6",
    }
    assert (pods[1]["spec"]["hostname"], pods[1]["spec"]["subdomain"]) == ("db-6", "db-svc")
    assert pods[1]["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"


def test_stateful_set_skips_ordinals_in_the_input() -> None:
    existing = [
        {
            "metadata": {
                "name": "db-1",
                "namespace": "ns",
                "ownerReferences": [{"kind": "StatefulSet", "name": "db", "controller": True}],
            },
            "status": {"phase": "Running"},
        }
    ]
    assert names(pods_of(workload("StatefulSet", "db", replicas=3), existing=existing)) == [
        "db-0",
        "db-2",
    ]


@pytest.mark.parametrize(
    ("spec", "status", "count"),
    [
        ({}, {}, 1),
        ({"parallelism": 3}, {}, 3),
        ({"parallelism": 3, "completions": 2}, {}, 2),
        ({"parallelism": 2, "completions": 5}, {"succeeded": 4}, 1),
        ({"parallelism": 2}, {"succeeded": 1}, 0),
        ({"parallelism": 0}, {}, 0),
        ({"parallelism": 2, "suspend": True}, {}, 0),
        ({"parallelism": 2, "managedBy": "kueue.x-k8s.io/multikueue"}, {}, 0),
        ({"parallelism": 2}, {"conditions": [{"type": "Complete", "status": "True"}]}, 0),
    ],
    ids=[
        "default",
        "parallelism",
        "completions-below-parallelism",
        "remaining-completions",
        "work-queue-after-success",
        "zero-parallelism",
        "suspended",
        "managed-elsewhere",
        "complete",
    ],
)
def test_job_pod_count(spec: dict[str, Any], status: dict[str, Any], count: int) -> None:
    obj = workload("Job", "train", **spec)
    obj["status"] = status
    pods = pods_of(obj)
    assert len(pods) == count
    for pod in pods:
        assert re.fullmatch(f"train-{SUFFIX}", pod["metadata"]["name"])
        uid = generated_uid("Job", "ns", "train")
        assert pod["metadata"]["labels"] == {
            "app": "web",
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": "train",
            "controller-uid": uid,
            "job-name": "train",
        }
        assert pod["metadata"]["ownerReferences"][0]["apiVersion"] == "batch/v1"


def test_indexed_job() -> None:
    obj = workload("Job", "train", parallelism=2, completions=4, completionMode="Indexed")
    obj["status"] = {"succeeded": 1}
    pods = pods_of(obj)
    # index 0 succeeded (counted from the lowest); the next two indexes run
    assert [
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods
    ] == [
        "1",
        "2",
    ]
    assert re.fullmatch(f"train-1-{SUFFIX}", pods[0]["metadata"]["name"])
    assert pods[0]["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "1"
    assert pods[0]["spec"]["hostname"] == "train-1"


def test_pods_already_created_count() -> None:
    owner = {"kind": "ReplicaSet", "name": "web-abc", "controller": True}
    existing: list[dict[str, Any]] = [
        {
            "metadata": {"name": "web-abc-x", "namespace": "ns", "ownerReferences": [owner]},
            "status": {},
        },
        {
            "metadata": {"name": "web-abc-y", "namespace": "ns", "ownerReferences": [owner]},
            "status": {"phase": "Failed"},  # does not count: the controller replaces it
        },
        {"metadata": {"name": "web-abc-z", "namespace": "other", "ownerReferences": [owner]}},
    ]
    pods = pods_of(workload("ReplicaSet", "web-abc", replicas=3), existing=existing)
    assert len(pods) == 2


def test_owner_matched_by_uid_when_both_have_one() -> None:
    obj = workload("ReplicaSet", "web-abc", replicas=1)
    obj["metadata"]["uid"] = "11111111-1111-4111-8111-111111111111"
    stale = {
        "metadata": {
            "name": "web-abc-x",
            "namespace": "ns",
            "ownerReferences": [
                {"kind": "ReplicaSet", "name": "web-abc", "controller": True, "uid": "other"}
            ],
        }
    }
    assert len(pods_of(obj, existing=[stale])) == 1


# --------------------------------------------------------------------------------------------
# Validation of the workload objects.


def test_template_is_validated_with_wire_paths() -> None:
    obj = workload("Deployment", "web")
    obj["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    with pytest.raises(ObjectValidationError) as info:
        validate_workload(obj, source="d.yaml doc 1")
    assert str(info.value) == (
        "d.yaml doc 1: Deployment ns/web: spec.template.spec.containers[0].resources.requests.cpu: "
        '"lots" is not a valid quantity (expected a number with an optional suffix, such as '
        '"80Gi", "500m", "100" or "1e3")'
    )


def test_template_names_are_checked() -> None:
    obj = workload("Deployment", "Web")
    with pytest.raises(
        ObjectValidationError, match=r'^Deployment ns/Web: metadata\.name: Invalid value: "Web"'
    ):
        validate_workload(obj)


def test_generated_pods_are_validated() -> None:
    obj = workload("StatefulSet", "db", replicas=1)
    obj["spec"]["template"]["spec"]["resourceClaims"] = [{"name": "GPU", "resourceClaimName": "c"}]
    with pytest.raises(ObjectValidationError) as info:
        pods_of(obj)
    assert str(info.value).startswith(
        "w.yaml doc 1 (StatefulSet ns/db, pod 1 of 1): Pod ns/db-0: spec.resourceClaims[0].name: "
        'Invalid value: "GPU"'
    )


def test_selector_must_match_the_template() -> None:
    obj = workload("ReplicaSet", "web")
    obj["spec"]["selector"] = {"matchLabels": {"app": "api"}}
    with pytest.raises(ObjectValidationError) as info:
        validate_workload(obj, source="r.yaml doc 2")
    assert str(info.value) == (
        "r.yaml doc 2: ReplicaSet ns/web: spec.template.metadata.labels: Invalid value: "
        '{"app":"web"}: `selector` does not match template `labels`'
    )


def test_inputs_are_not_mutated() -> None:
    obj = workload("Job", "j", parallelism=2, completions=2, completionMode="Indexed")
    before = copy.deepcopy(obj)
    pods_of(obj)
    assert obj == before
