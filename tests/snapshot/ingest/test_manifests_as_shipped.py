"""Manifests as people have them load as shipped (issue 14 item 1).

The fixtures under tests/fixtures/manifests/ are written in the shape of the DRA example
driver's demo manifests, the NVIDIA GPU driver's v1beta1 quickstart and a kubectl List dump
(origins in tests/fixtures/README.md).
"""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path

import pytest
from drasnap.snapshot.controllers.claim_templates import claims_from_templates
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.ingest.manifests import load_manifests, parse_manifests
from drasnap.snapshot.k8s.kinds import object_key
from drasnap.snapshot.k8s.objects import name_of

from tests.paths import FIXTURES

FIXTURES = FIXTURES / "manifests"
DEMO = FIXTURES / "dra-example-demo"
QUICKSTART = FIXTURES / "nvidia-quickstart-v1beta1"
DUMP = FIXTURES / "kubectl-dump" / "cluster.json"


def rel(note: str) -> str:
    return note.replace(f"{FIXTURES}/", "")


# --------------------------------------------------------------------------------------------
# The DRA example driver's demos: a Namespace each, hand-written pods without UID.


def test_dra_example_demos_load_with_a_note_per_skipped_object() -> None:
    manifests = load_manifests(DEMO)
    skipped = [rel(n) for n in manifests.notes if ": skipped " in n]
    assert skipped == [
        "dra-example-demo/extended-resources.yaml doc 1: skipped Namespace extended (v1): not "
        "used by the simulation",
        "dra-example-demo/gang-deployments.yaml doc 1: skipped Namespace gang (v1): not used by "
        "the simulation",
        "dra-example-demo/gang-deployments.yaml doc 3: skipped PodGroup gang/group-a "
        "(scheduling.k8s.io/v1alpha2): not used by the simulation (gang scheduling is not "
        "simulated)",
        "dra-example-demo/shared-claim-two-pods.yaml doc 1: skipped Namespace shared-claim (v1): "
        "not used by the simulation",
        "dra-example-demo/two-partitions.yaml doc 1: skipped Namespace partitions (v1): not used "
        "by the simulation",
        "dra-example-demo/two-pods-one-gpu-each.yaml doc 1: skipped Namespace two-pods (v1): not "
        "used by the simulation",
    ]
    assert [object_key(t) for t in manifests.claim_templates] == [
        "gang/one-gpu",
        "partitions/two-partitions",
        "two-pods/one-gpu",
    ]
    assert [object_key(c) for c in manifests.claims] == ["shared-claim/one-gpu"]
    assert [name_of(r) for r in manifests.taint_rules] == ["all-broken"]
    assert manifests.taint_rules[0]["apiVersion"] == "resource.k8s.io/v1"
    written = ["extended/implicit", "extended/explicit", "shared-claim/pod0", "shared-claim/pod1"]
    written += ["partitions/pod0", "two-pods/pod0", "two-pods/pod1"]
    assert [object_key(p) for p in manifests.pods][:7] == written
    assert len(manifests.pods) == 11  # and the 2 x 2 replicas of the two Deployments


def test_pods_without_uid_get_a_deterministic_one() -> None:
    first = load_manifests(DEMO)
    second = load_manifests(DEMO)
    uids = [p["metadata"]["uid"] for p in first.pods]
    assert uids == [p["metadata"]["uid"] for p in second.pods]
    assert len(set(uids)) == len(uids)
    for value in uids:
        assert str(uuid.UUID(value)) == value  # RFC 4122 form, as the API server writes UIDs
    # derived from namespace and name: another file with the same pod gives the same UID
    pod = parse_manifests(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: pod0, namespace: two-pods}\n"
        "spec: {containers: [{name: c, image: i}]}\n"
    ).pods[0]
    assert pod["metadata"]["uid"] == next(
        p["metadata"]["uid"] for p in first.pods if object_key(p) == "two-pods/pod0"
    )
    # a UID written in the manifest is kept
    pod = parse_manifests(
        "apiVersion: v1\nkind: Pod\n"
        "metadata: {name: p, uid: 0e7b8b9a-0000-4000-8000-000000000001}\n"
        "spec: {containers: [{name: c, image: i}]}\n"
    ).pods[0]
    assert pod["metadata"]["uid"] == "0e7b8b9a-0000-4000-8000-000000000001"


def test_claims_from_templates_work_on_loaded_pods() -> None:
    """The pods now have what generated claims need (a UID to own them)."""
    manifests = load_manifests(DEMO)
    templates = {object_key(t): t for t in manifests.claim_templates}
    pod = next(p for p in manifests.pods if object_key(p) == "two-pods/pod0")
    new_pod, claims = claims_from_templates(pod, templates)
    assert len(claims) == 1
    owner = claims[0]["metadata"]["ownerReferences"][0]
    assert owner["uid"] == pod["metadata"]["uid"]
    assert new_pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"] == name_of(claims[0])


def test_strict_refuses_kinds_the_simulation_does_not_use(tmp_path: Path) -> None:
    shutil.copy(DEMO / "two-pods-one-gpu-each.yaml", tmp_path)
    with pytest.raises(ObjectValidationError) as info:
        load_manifests(tmp_path, strict=True)
    path = tmp_path / "two-pods-one-gpu-each.yaml"
    assert str(info.value) == (
        f"{path} doc 1: Namespace two-pods: kind Namespace (v1) is not used by the simulation; "
        "strict mode refuses it (without strict it is skipped with a note)"
    )
    assert (info.value.source, info.value.kind) == (f"{path} doc 1", "Namespace")


def test_deployment_pods_are_named_and_labelled_as_the_controllers_do() -> None:
    manifests = load_manifests(DEMO / "gang-deployments.yaml")
    pods = [p for p in manifests.pods if p["metadata"]["labels"]["app"] == "group-a"]
    assert len(pods) == 2
    template_hash = pods[0]["metadata"]["labels"]["pod-template-hash"]
    assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{1,10}", template_hash)
    replica_set = f"group-a-{template_hash}"
    for pod in pods:
        assert re.fullmatch(rf"{replica_set}-[bcdfghjklmnpqrstvwxz2456789]{{5}}", name_of(pod))
        assert pod["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": replica_set,
                "uid": pod["metadata"]["ownerReferences"][0]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        assert pod["spec"]["resourceClaims"] == [
            {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}
        ]
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": "group-a"}
        assert "nodeName" not in pod["spec"]
        assert pod["status"] == {"phase": "Pending"}
    note = next(n for n in manifests.notes if "Deployment gang/group-a" in n)
    assert rel(note) == (
        "dra-example-demo/gang-deployments.yaml doc 4: Deployment gang/group-a: 2 pending pods, "
        f"as its controller would create them: {name_of(pods[0])}, {name_of(pods[1])}"
    )
    # the same input gives the same names
    again = load_manifests(DEMO / "gang-deployments.yaml")
    assert [name_of(p) for p in again.pods] == [name_of(p) for p in manifests.pods]


# --------------------------------------------------------------------------------------------
# The NVIDIA GPU driver's quickstart in resource.k8s.io/v1beta1.


def test_nvidia_quickstart_v1beta1_converts() -> None:
    manifests = load_manifests(QUICKSTART)
    converted = [rel(n) for n in manifests.notes if "converted to" in n]
    assert len(converted) == 9  # 2 claims, 4 templates, 2 classes, 1 slice
    assert all(
        n.endswith(": resource.k8s.io/v1beta1 converted to resource.k8s.io/v1") for n in converted
    )
    for obj in [
        *manifests.claims,
        *manifests.claim_templates,
        *manifests.classes,
        *manifests.slices,
    ]:
        assert obj["apiVersion"] == "resource.k8s.io/v1"
    mig = next(t for t in manifests.claim_templates if object_key(t) == "gpu-mig/mig-devices")
    devices = mig["spec"]["spec"]["devices"]
    assert [r["exactly"]["deviceClassName"] for r in devices["requests"]] == ["mig.nvidia.com"] * 4
    assert devices["constraints"] == [
        {"requests": [], "matchAttribute": "gpu.nvidia.com/parentUUID"}
    ]
    node_gpus = next(t for t in manifests.claim_templates if object_key(t) == "imex/node-gpus")
    assert node_gpus["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}}
    ]
    gpu = manifests.slices[0]["spec"]["devices"][0]
    assert "basic" not in gpu
    assert gpu["attributes"]["productName"] == {"string": "NVIDIA A100-SXM4-40GB"}
    assert gpu["capacity"] == {"memory": {"value": "40Gi"}}
    # the Deployments' pods: 4 + 2 + 2, beside the 3 pods written out
    assert len(manifests.pods) == 11
    assert len(manifests.workloads) == 3


# --------------------------------------------------------------------------------------------
# A kubectl List dump of a running cluster: controllers and the pods they made are both there.


def test_kubectl_dump_adds_only_the_missing_pods() -> None:
    manifests = load_manifests(DUMP)
    notes = [rel(n) for n in manifests.notes]
    assert notes[:6] == [
        "kubectl-dump/cluster.json items[0]: skipped Namespace ml (v1): not used by the simulation",
        "kubectl-dump/cluster.json items[12]: skipped ControllerRevision ml/db-5c7d9f6b8 "
        "(apps/v1): not used by the simulation",
        "kubectl-dump/cluster.json items[14]: skipped ConfigMap ml/trainer-config (v1): not used "
        "by the simulation",
        "kubectl-dump/cluster.json items[15]: skipped Service ml/db (v1): not used by the "
        "simulation",
        "kubectl-dump/cluster.json items[16]: skipped ServiceAccount ml/default (v1): not used by "
        "the simulation",
        "kubectl-dump/cluster.json items[17]: skipped LimitRange ml/defaults (v1): not used by "
        "the simulation (its default requests and limits are not applied to pods)",
    ]
    # The Deployment's ReplicaSet is in the dump: it stands for the Deployment, which adds none;
    # the ReplicaSet wants 3 and has 2 (one running, one pending): it adds 1.
    assert notes[6] == (
        "kubectl-dump/cluster.json items[5]: Deployment ml/trainer: no pods (its ReplicaSets in "
        "the input, trainer-6f9c8d7b5, stand for it)"
    )
    added: dict[str, list[str]] = {
        p["metadata"]["ownerReferences"][0]["name"]: [] for p in manifests.pods
    }
    for pod in manifests.pods:
        added[pod["metadata"]["ownerReferences"][0]["name"]].append(name_of(pod))
    assert len(added["trainer-6f9c8d7b5"]) == 3
    # StatefulSet: db-0 runs, db-1 is added, with the controller's labels and hostname
    assert added["db"] == ["db-0", "db-1"]
    db1 = next(p for p in manifests.pods if name_of(p) == "db-1")
    assert db1["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert db1["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"
    assert (db1["spec"]["hostname"], db1["spec"]["subdomain"]) == ("db-1", "db")
    # Job: completions 4, 1 succeeded, parallelism 2: two pods run at once
    assert len(added["eval"]) == 2
    assert [object_key(n) for n in manifests.nodes] == ["node-a"]
    assert len(manifests.claims) == 1


def test_strict_dump_names_the_item() -> None:
    with pytest.raises(ObjectValidationError, match=r"cluster\.json items\[0\]: Namespace ml: "):
        load_manifests(DUMP, strict=True)


# --------------------------------------------------------------------------------------------
# What is still refused.


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClame\nmetadata: {name: c}\n",
            'x doc 1: ResourceClame c: unknown kind "ResourceClame" (resource.k8s.io/v1); did you '
            'mean "ResourceClaim"?',
        ),
        (
            "apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: d}\n",
            'x doc 1: Deploymnet d: unknown kind "Deploymnet" (apps/v1); did you mean '
            '"Deployment"?',
        ),
        (
            "apiVersion: resource.k8s.io/v1alpha3\nkind: ResourceClaimTemplate\n"
            "metadata: {name: t, namespace: ns}\n",
            "x doc 1: ResourceClaimTemplate ns/t: apiVersion: Kubernetes 1.36 does not serve "
            'ResourceClaimTemplate in "resource.k8s.io/v1alpha3"; it serves resource.k8s.io/v1, '
            "resource.k8s.io/v1beta2, resource.k8s.io/v1beta1",
        ),
        (
            "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: d}\n",
            "x doc 1: Deployment d: apiVersion: Kubernetes 1.36 serves Deployment in apps/v1, not "
            '"extensions/v1beta1"',
        ),
        (
            "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n",
            "x doc 1: Pod p: apiVersion: required field is missing",
        ),
    ],
    ids=["misspelt-dra-kind", "misspelt-workload", "unserved-version", "old-group", "no-version"],
)
def test_refused_even_without_strict(text: str, message: str) -> None:
    with pytest.raises(ObjectValidationError) as info:
        parse_manifests(text, source="x")
    assert str(info.value) == message


def test_same_kind_name_in_another_group_is_another_kind() -> None:
    """A CRD called Job is not a batch/v1 Job."""
    manifests = parse_manifests(
        "apiVersion: example.com/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\n", source="x"
    )
    assert manifests.notes == [
        "x doc 1: skipped Job ns/j (example.com/v1): not used by the simulation"
    ]
    assert manifests.pods == []


def test_a_workload_defined_twice_is_an_error(tmp_path: Path) -> None:
    shutil.copy(DEMO / "gang-deployments.yaml", tmp_path / "a.yaml")
    shutil.copy(DEMO / "gang-deployments.yaml", tmp_path / "b.yaml")
    with pytest.raises(ObjectValidationError) as info:
        load_manifests(tmp_path)
    # the claim template comes first in the file, and is the first duplicate found
    assert str(info.value) == (
        f"{tmp_path / 'b.yaml'} doc 2: ResourceClaimTemplate gang/one-gpu is defined twice "
        f"(first in {tmp_path / 'a.yaml'} doc 2)"
    )
    (tmp_path / "b.yaml").write_text(
        "\n---\n".join((DEMO / "gang-deployments.yaml").read_text().split("\n---\n")[4:5])
    )
    with pytest.raises(ObjectValidationError) as info:
        load_manifests(tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'b.yaml'} doc 1: Deployment gang/group-a is defined twice "
        f"(first in {tmp_path / 'a.yaml'} doc 4)"
    )
