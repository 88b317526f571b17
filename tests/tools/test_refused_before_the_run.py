"""Objects the API server (or Kubernetes' allocator, on every node) would refuse stop the real
``drasnap simulate autoscale --from DIR`` before it starts: exit 1, one ``Error:`` line naming
the object and the field, the database as it was, no failed run left behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.tools.test_first_hour import drasnap, error, files_of, ok, ok_json

GPU_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}


def node() -> dict[str, Any]:
    resources = {"cpu": "8", "memory": "64Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "g-0",
            "labels": {"kubernetes.io/hostname": "g-0", "drasnap.io/node-group": "gpu"},
        },
        "status": {"capacity": resources, "allocatable": resources},
    }


def gpu_slice(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "g-0-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "g-0",
            "pool": {"name": "g-0", "generation": 0, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}],
            **spec,
        },
    }


def template(count: int) -> dict[str, Any]:
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": count}}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpus", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


PENDING_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {
        "containers": [{"name": "main", "image": "x"}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpus"}],
    },
}


def dump(directory: Path, *objs: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "cluster.yaml").write_text(yaml.safe_dump_all(list(objs), sort_keys=False))
    return directory


def a_finished_run(tmp_path: Path) -> Path:
    """``sim.db`` holding one finished run on a valid cluster; returns the database path."""
    good = dump(tmp_path / "good", node(), GPU_CLASS, gpu_slice(), template(1), PENDING_POD)
    ok(drasnap("simulate", "autoscale", "sim.db", "--from", good, cwd=tmp_path))
    return tmp_path / "sim.db"


def runs_in(tmp_path: Path) -> list[tuple[str, str]]:
    listed = ok_json(drasnap("runs", "sim.db", "--json", cwd=tmp_path))["runs"]
    return [(r["name"], r["status"]) for r in listed]


def test_a_slice_with_counters_and_devices_stops_the_run(tmp_path: Path) -> None:
    # The bug of issue 20: the slice was taken and its devices never allocated. Kubernetes
    # 1.36 refuses it (validateResourceSliceSpec): counter sets go in slices of their own.
    db = a_finished_run(tmp_path)
    counters = [{"name": "gpu-0-set", "counters": {"memory": {"value": "40Gi"}}}]
    bad = dump(
        tmp_path / "bad",
        node(),
        GPU_CLASS,
        gpu_slice(sharedCounters=counters),
        template(1),
        PENDING_POD,
    )
    before = files_of(tmp_path)
    line = error(
        drasnap("simulate", "autoscale", "sim.db", "--from", bad, cwd=tmp_path),
        "ResourceSlice g-0-gpu: spec: Invalid value",
    )
    assert line == (
        f"Error: {bad / 'cluster.yaml'} doc 3: ResourceSlice g-0-gpu: spec: "
        'Invalid value: "": only one of `sharedCounters` or `devices` is allowed'
    )
    assert files_of(tmp_path) == before  # the database untouched
    assert db.exists()
    assert runs_in(tmp_path) == [("autoscale-1", "finished")]


def test_a_claim_over_the_allocator_limit_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    # count: 1000000000 is accepted by the API server; Kubernetes' allocator refuses it on
    # every node ("exceeds the claim limit of 32"). Before, the run started and failed.
    a_finished_run(tmp_path)
    bad = dump(
        tmp_path / "bad", node(), GPU_CLASS, gpu_slice(), template(1_000_000_000), PENDING_POD
    )
    before = files_of(tmp_path)
    line = error(
        drasnap("simulate", "autoscale", "sim.db", "--from", bad, cwd=tmp_path),
        "exceeds the claim limit of 32",
    )
    assert line.startswith(
        f"Error: {bad / 'cluster.yaml'} doc 4: ResourceClaimTemplate default/gpus: "
        "spec.spec.devices.requests[0].exactly.count: Invalid value: 1000000000: number of "
        "requested devices 1000000000 exceeds the claim limit of 32"
    )
    assert files_of(tmp_path) == before
    assert runs_in(tmp_path) == [("autoscale-1", "finished")]  # no failed run left
