"""snapshot.ingest.manifests: loading YAML/JSON manifests into validated wire-format dicts."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from drasnap.snapshot.errors import ManifestError, ObjectValidationError
from drasnap.snapshot.ingest.manifests import Manifests, load_manifests, parse_manifests
from drasnap.snapshot.k8s.kinds import object_key
from drasnap.snapshot.k8s.objects import KubeObject, kind_of, name_of

# --------------------------------------------------------------------------------------------
# A small cluster written the ways users and kubectl write it.

NODES_YAML = """\
# three nodes, multi-document YAML
apiVersion: v1
kind: Node
metadata:
  name: node-a
  uid: 6f0c1a52-0000-4000-8000-00000000000a
  creationTimestamp: 2025-06-01T12:00:00Z
  labels: {kubernetes.io/hostname: node-a, topology.kubernetes.io/zone: z1, gpu: "true"}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: 7500m, memory: 30Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: node-b
  labels: {kubernetes.io/hostname: node-b, topology.kubernetes.io/zone: z2, gpu: "true"}
status:
  capacity: {cpu: 16, memory: 64Gi, pods: 110}
  allocatable: {cpu: 15, memory: 60Gi, pods: 110}
---
---
# an empty document above and a comment-only one here
---
apiVersion: v1
kind: Node
metadata:
  name: node-c
  labels: {kubernetes.io/hostname: node-c}
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
"""

CLAIMS_YAML = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
---
# shared claim, allocated on node-a and used by two pods
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu, namespace: ml, uid: 1b5a0000-0000-4000-8000-000000000001}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com, count: 1}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-0}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [node-a]}]
  reservedFor:
  - {resource: pods, name: user-0, uid: 2c000000-0000-4000-8000-000000000000}
  - {resource: pods, name: user-1, uid: 2c000000-0000-4000-8000-000000000001}
---
# pod-owned claim generated from a template, allocated
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: trainer-0-gpus-b7x2q
  namespace: ml
  annotations: {resource.kubernetes.io/pod-claim-name: gpus}
  ownerReferences:
  - apiVersion: v1
    kind: Pod
    name: trainer-0
    uid: 3d000000-0000-4000-8000-000000000000
    controller: true
    blockOwnerDeletion: true
spec:
  devices:
    requests:
    - name: gpus
      exactly: {deviceClassName: gpu.example.com, allocationMode: ExactCount, count: 2}
    constraints:
    - {requests: [gpus], matchAttribute: resource.kubernetes.io/pcieRoot}
status:
  allocation:
    devices:
      results:
      - {request: gpus, driver: gpu.example.com, pool: node-b, device: gpu-0}
      - {request: gpus, driver: gpu.example.com, pool: node-b, device: gpu-1}
  reservedFor:
  - {resource: pods, name: trainer-0, uid: 3d000000-0000-4000-8000-000000000000}
---
# not allocated yet
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: pending-gpu, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel:
            expression: device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.example.com, count: 2}
"""

PODS_YAML = """\
apiVersion: v1
kind: Pod
metadata: {name: user-0, namespace: ml, uid: 2c000000-0000-4000-8000-000000000000}
spec:
  nodeName: node-a
  containers:
  - name: main
    image: busybox
    resources:
      requests: {cpu: 500m, memory: 1Gi}
      claims: [{name: gpu}]
  resourceClaims:
  - {name: gpu, resourceClaimName: shared-gpu}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer-0, namespace: ml, uid: 3d000000-0000-4000-8000-000000000000}
spec:
  containers:
  - name: main
    image: trainer
    resources: {claims: [{name: gpus}]}
  resourceClaims:
  - {name: gpus, resourceClaimTemplateName: two-gpus}
status:
  phase: Pending
  resourceClaimStatuses:
  - {name: gpus, resourceClaimName: trainer-0-gpus-b7x2q}
"""


def _source(manifests: Manifests, obj: KubeObject) -> str:
    """Where ``manifests`` read ``obj`` (its ``sources`` entry)."""
    return manifests.sources[(kind_of(obj), object_key(obj))]


def slice_for(node: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "name": f"{node}-gpu.example.com-x1",
            "creationTimestamp": "2025-06-01T12:00:00Z",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node, "uid": f"uid-{node}"}
            ],
        },
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {
                        "index": {"int": i},
                        "driverVersion": {"version": "1.0.0"},
                        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}, "compute": {"value": "100"}},
                }
                for i in range(2)
            ],
        },
    }


def kubectl_list(*items: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": list(items),
    }


@pytest.fixture
def cluster_dir(tmp_path: Path) -> Path:
    root = tmp_path / "cluster"
    (root / "nodes").mkdir(parents=True)
    (root / "nodes" / "nodes.yaml").write_text(NODES_YAML)
    # what `kubectl get resourceslices -o json` writes
    (root / "nodes" / "slices.json").write_text(
        json.dumps(kubectl_list(*(slice_for(n) for n in ("node-a", "node-b", "node-c"))), indent=4)
    )
    (root / "workloads").mkdir()
    (root / "workloads" / "claims.yml").write_text(CLAIMS_YAML)
    (root / "workloads" / "pods.yaml").write_text(PODS_YAML)
    # not manifests: skipped when walking
    (root / "README.md").write_text("# not a manifest\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "broken.yaml").write_text("{{{")
    return root


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def load_error(path: Path, **kwargs: Any) -> ObjectValidationError:
    with pytest.raises(ObjectValidationError) as info:
        load_manifests(path, **kwargs)
    return info.value


# --------------------------------------------------------------------------------------------
# Loading.


def test_example_fixtures(dra_example_dir: Path) -> None:
    warnings: list[str] = []
    manifests = load_manifests(dra_example_dir, warnings=warnings)
    assert warnings == []
    assert [name_of(o) for o in manifests.classes] == ["gpu.example.com"]
    assert [name_of(o) for o in manifests.slices] == ["node-a-gpu.example.com-4xk9t"]
    assert [object_key(o) for o in manifests.claim_templates] == ["ml/two-gpus-same-root"]
    assert [object_key(o) for o in manifests.claims] == ["ml/trainer-0-gpus-b7x2q"]
    assert manifests.pods == []
    assert manifests.nodes == []
    assert len(manifests) == 4
    source = _source(manifests, manifests.slices[0])
    assert source == str(dra_example_dir / "01-deviceclass-and-slice.yaml") + " doc 2"
    assert manifests.slices[0]["spec"]["devices"][0]["capacity"]["compute"] == {"value": "100"}


def test_cluster_directory(cluster_dir: Path) -> None:
    warnings: list[str] = []
    manifests = load_manifests(cluster_dir, warnings=warnings)

    assert [name_of(o) for o in manifests.nodes] == ["node-a", "node-b", "node-c"]
    assert [name_of(o) for o in manifests.slices] == [
        "node-a-gpu.example.com-x1",
        "node-b-gpu.example.com-x1",
        "node-c-gpu.example.com-x1",
    ]
    assert [object_key(o) for o in manifests.claims] == [
        "ml/shared-gpu",
        "ml/trainer-0-gpus-b7x2q",
        "ml/pending-gpu",
    ]
    assert [object_key(o) for o in manifests.claim_templates] == ["ml/two-gpus"]
    assert [object_key(o) for o in manifests.pods] == ["ml/user-0", "ml/trainer-0"]
    assert [name_of(o) for o in manifests.classes] == ["gpu.example.com"]
    assert len(manifests) == 13

    # iteration and by_kind are in dependency order
    kinds = [o["kind"] for o in manifests]
    assert (
        kinds
        == ["DeviceClass"]
        + ["ResourceSlice"] * 3
        + ["Node"] * 3
        + ["ResourceClaimTemplate"]
        + ["ResourceClaim"] * 3
        + ["Pod"] * 2
    )
    assert list(manifests.by_kind()) == [
        "DeviceClass",
        "ResourceSlice",
        "DeviceTaintRule",
        "Node",
        "ResourceClaimTemplate",
        "ResourceClaim",
        "Pod",
    ]
    assert manifests.by_kind()["Pod"] is manifests.pods

    # node-b was written with bare numbers: normalised, with warnings naming file and doc
    node_b = manifests.nodes[1]
    assert node_b["status"]["capacity"] == {"cpu": "16", "memory": "64Gi", "pods": "110"}
    nodes_file = cluster_dir / "nodes" / "nodes.yaml"
    assert (
        f'{nodes_file} doc 2: Node node-b: status.capacity.cpu: number 16 taken as quantity "16"'
        in warnings
    )
    assert len(warnings) == 4
    # unquoted timestamps stay the strings they were written as
    assert manifests.nodes[0]["metadata"]["creationTimestamp"] == "2025-06-01T12:00:00Z"
    assert manifests.nodes[0]["metadata"]["labels"]["gpu"] == "true"

    # List items are named by index; documents after empty ones keep their real index
    slices_file = cluster_dir / "nodes" / "slices.json"
    assert _source(manifests, manifests.slices[2]) == f"{slices_file} items[2]"
    assert _source(manifests, manifests.nodes[2]) == f"{nodes_file} doc 5"

    trainer = manifests.pods[1]
    assert trainer["status"]["resourceClaimStatuses"] == [
        {"name": "gpus", "resourceClaimName": "trainer-0-gpus-b7x2q"}
    ]
    owned = manifests.claims[1]
    assert owned["metadata"]["ownerReferences"][0]["uid"] == trainer["metadata"]["uid"]


def test_several_paths_and_single_files(cluster_dir: Path) -> None:
    pods = cluster_dir / "workloads" / "pods.yaml"
    nodes = cluster_dir / "nodes"
    manifests = load_manifests([str(pods), nodes])
    assert len(manifests.pods) == 2
    assert len(manifests.nodes) == 3
    assert len(manifests.slices) == 3
    assert len(load_manifests(pods).pods) == 2


def test_yaml_list_and_typed_list(tmp_path: Path) -> None:
    # kubectl get resourceslices,resourceclaims -o yaml: one List with mixed kinds
    path = write(
        tmp_path,
        "mixed.yaml",
        """\
        apiVersion: v1
        kind: List
        metadata: {resourceVersion: ""}
        items:
        - apiVersion: resource.k8s.io/v1
          kind: ResourceSlice
          metadata: {name: s1}
          spec: {driver: d, allNodes: true, pool: {name: p, generation: 0, resourceSliceCount: 1}}
        - apiVersion: resource.k8s.io/v1
          kind: DeviceClass
          metadata: {name: c1}
        ---
        # what the API returns: items carry no apiVersion/kind
        apiVersion: resource.k8s.io/v1
        kind: ResourceSliceList
        metadata: {resourceVersion: "42"}
        items:
        - metadata: {name: s2}
          spec: {driver: d, allNodes: true, pool: {name: p2, generation: 0, resourceSliceCount: 1}}
        ---
        apiVersion: v1
        kind: List
        items: []
        """,
    )
    manifests = load_manifests(path)
    assert [name_of(o) for o in manifests.slices] == ["s1", "s2"]
    assert [name_of(o) for o in manifests.classes] == ["c1"]
    s2 = manifests.slices[1]
    assert (s2["apiVersion"], s2["kind"]) == ("resource.k8s.io/v1", "ResourceSlice")
    assert _source(manifests, s2) == f"{path} doc 2 items[0]"


def test_v1beta2_items_are_converted(tmp_path: Path) -> None:
    item = slice_for("node-a")
    item["apiVersion"] = "resource.k8s.io/v1beta2"
    path = tmp_path / "beta.json"
    path.write_text(json.dumps(kubectl_list(item)))
    warnings: list[str] = []
    manifests = load_manifests(path, warnings=warnings)
    assert manifests.slices[0]["apiVersion"] == "resource.k8s.io/v1"
    assert warnings == [
        f"{path} items[0]: ResourceSlice node-a-gpu.example.com-x1: "
        "resource.k8s.io/v1beta2 converted to resource.k8s.io/v1"
    ]


def test_parse_manifests_text() -> None:
    text = json.dumps(slice_for("node-a"))
    manifests = parse_manifests(text, source="stdin")
    assert _source(manifests, manifests.slices[0]) == "stdin"
    manifests = parse_manifests("{apiVersion: v1, kind: Node, metadata: {name: n}}")
    assert _source(manifests, manifests.nodes[0]) == "<string> doc 1"
    assert len(parse_manifests("")) == 0


def test_empty_directory_warns(tmp_path: Path) -> None:
    warnings: list[str] = []
    assert len(load_manifests(tmp_path, warnings=warnings)) == 0
    assert warnings == [f"{tmp_path}: no .yaml/.yml/.json files in directory"]


def test_inputs_are_not_mutated_by_manifests_add() -> None:
    manifests = Manifests()
    obj = parse_manifests("{apiVersion: v1, kind: Node, metadata: {name: n}}").nodes[0]
    manifests.add(obj, "here")
    assert manifests.nodes == [obj]
    with pytest.raises(ManifestError, match=r"^there: Node n is defined twice \(first in here\)$"):
        manifests.add(obj, "there")


# --------------------------------------------------------------------------------------------
# Errors name the file, the document, the object and the field.


def test_bad_yaml(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bad.yaml",
        """\
        apiVersion: v1
        kind: Node
        metadata: {name: ok}
        ---
        apiVersion: v1
        kind: Node
          metadata: {name: broken}
        """,
    )
    err = load_error(path)
    assert isinstance(err, ManifestError)
    # libyaml says "... not allowed in this context", pure-Python PyYAML "... not allowed here"
    assert str(err).startswith(
        f"{path} line 7 column 11: invalid YAML in document 2: mapping values are not allowed"
    )
    assert err.source == str(path)
    assert isinstance(err.__cause__, Exception)


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "dup.yaml",
        """\
        apiVersion: v1
        kind: Node
        metadata:
          name: a
          labels: {zone: z1}
          labels: {zone: z2}
        """,
    )
    err = load_error(path)
    assert isinstance(err, ManifestError)
    assert str(err) == (
        f"{path} line 6 column 3: invalid YAML in document 1: found duplicate key 'labels' "
        "(while constructing a mapping)"
    )


def test_yaml_anchors_and_merge_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "merge.yaml",
        """\
        apiVersion: v1
        kind: Node
        metadata:
          name: a
          labels: &common {zone: z1, gpu: "true"}
        status:
          capacity: &cap {cpu: "8", memory: 32Gi}
          allocatable:
            <<: *cap
            cpu: 7500m
        """,
    )
    node = load_manifests(path).nodes[0]
    assert node["metadata"]["labels"] == {"zone": "z1", "gpu": "true"}
    assert node["status"]["allocatable"] == {"cpu": "7500m", "memory": "32Gi"}


def test_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"apiVersion": "v1",\n "kind": "Node",,}')
    err = load_error(path)
    assert isinstance(err, ManifestError)
    assert str(err).startswith(f"{path} line 2 column 17: invalid JSON: ")


def test_missing_path(tmp_path: Path) -> None:
    err = load_error(tmp_path / "nope.yaml")
    assert isinstance(err, ManifestError)
    assert str(err) == f"{tmp_path / 'nope.yaml'}: no such file or directory"


def test_unknown_kind(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "mixed.yaml",
        """\
        apiVersion: v1
        kind: Node
        metadata: {name: a}
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: settings, namespace: ml}
        """,
    )
    # Kinds the simulation does not use are skipped with a note (issue 14), refused if strict.
    err = load_error(path, strict=True)
    assert str(err) == (
        f"{path} doc 2: ConfigMap ml/settings: kind ConfigMap (v1) is not used by the "
        "simulation; strict mode refuses it (without strict it is skipped with a note)"
    )
    assert (err.source, err.kind) == (f"{path} doc 2", "ConfigMap")

    warnings: list[str] = []
    manifests = load_manifests(path, warnings=warnings)
    assert [name_of(o) for o in manifests.nodes] == ["a"]
    note = f"{path} doc 2: skipped ConfigMap ml/settings (v1): not used by the simulation"
    assert warnings == manifests.notes == [note]


def test_missing_field_in_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "slices.yaml",
        """\
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: c}
        ---
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
        metadata: {name: node-a-gpus}
        spec:
          nodeName: node-a
          pool: {name: node-a, generation: 0, resourceSliceCount: 1}
        """,
    )
    err = load_error(path)
    assert not isinstance(err, ManifestError)
    assert str(err) == (
        f"{path} doc 2: ResourceSlice node-a-gpus: spec.driver: required field is missing"
    )
    assert (err.source, err.kind, err.name, err.field) == (
        f"{path} doc 2",
        "ResourceSlice",
        "node-a-gpus",
        "spec.driver",
    )


def test_wrong_type_and_unknown_field_in_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "claim.yaml",
        """\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: c, namespace: ml}
        spec:
          devices:
            requests:
            - name: gpu
              exactly: {deviceClassName: gpu.example.com, count: two}
        """,
    )
    assert str(load_error(path)) == (
        f"{path} doc 1: ResourceClaim ml/c: spec.devices.requests[0].exactly.count: "
        'expected an integer, got string "two"'
    )
    path = write(
        tmp_path,
        "pod.yaml",
        """\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          nodeNmae: node-a
          containers: [{name: c, image: busybox}]
        """,
    )
    assert str(load_error(path)) == (
        f'{path} doc 1: Pod p: spec.nodeNmae: unknown field "nodeNmae" (did you mean "nodeName"?)'
    )


def test_yaml_float_version(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "slice.yaml",
        """\
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
        metadata: {name: s}
        spec:
          driver: d
          allNodes: true
          pool: {name: p, generation: 0, resourceSliceCount: 1}
          devices:
          - name: dev
            attributes:
              driverVersion: {version: 1.10}
        """,
    )
    assert str(load_error(path)) == (
        f"{path} doc 1: ResourceSlice s: spec.devices[0].attributes.driverVersion.version: "
        "expected a string, got number 1.1 (YAML reads unquoted 1.10 as the number 1.1: "
        "quote it)"
    )


def test_document_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "list.yaml", "- apiVersion: v1\n  kind: Node\n")
    err = load_error(path)
    assert isinstance(err, ManifestError)
    assert str(err) == (
        f"{path} doc 1: expected a Kubernetes object or List (a mapping), got a list"
    )


def test_bad_list_items(tmp_path: Path) -> None:
    path = write(tmp_path, "l.yaml", "apiVersion: v1\nkind: List\nitems: {a: b}\n")
    assert (
        str(load_error(path)) == f"{path} doc 1: items: expected a list of objects, got a mapping"
    )
    path = write(
        tmp_path,
        "t.yaml",
        """\
        apiVersion: resource.k8s.io/v1
        kind: ResourceSliceList
        items:
        - kind: ResourceClaim
          metadata: {name: x}
        """,
    )
    assert str(load_error(path)) == (
        f"{path} doc 1 items[0]: a ResourceSliceList holds ResourceSlice objects, "
        "got kind 'ResourceClaim'"
    )


def test_duplicate_objects_across_files(tmp_path: Path) -> None:
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n"
    first = write(tmp_path, "a.yaml", node)
    write(tmp_path, "b.yaml", node)
    err = load_error(tmp_path)
    assert isinstance(err, ManifestError)
    assert (
        str(err) == f"{tmp_path / 'b.yaml'} doc 1: Node a is defined twice (first in {first} doc 1)"
    )
