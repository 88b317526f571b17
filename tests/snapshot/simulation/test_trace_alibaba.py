"""Alibaba's GPU trace v2023 (``docs/traces.md``): small pod and node lists written here in
upstream's schema become the objects the mapping table gives, derived by hand; each refusal is
one line naming the file, row and column; and the objects pass drasnap's validation and place
a fractional-GPU pod and a whole-GPU pod on one template node as consumable capacity says.

No test reads the real trace: the repository does not ship it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.controllers.claim_templates import claims_from_templates
from drasnap.snapshot.errors import ScenarioError, SchedulingError
from drasnap.snapshot.ingest.references import check_dra_objects
from drasnap.snapshot.k8s.kinds import generated_uid
from drasnap.snapshot.simulation.traces import Trace
from drasnap.snapshot.simulation.traces.alibaba import (
    SKIP_MULTI_SHARE,
    SKIP_NO_MILLI,
    SKIP_PENDING,
    AlibabaTrace,
    read_alibaba,
)
from drasnap.snapshot.validation import validate
from drasnap.store import MemoryStore

Obj = dict[str, Any]
HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
    "creation_time,deletion_time,scheduled_time"
)
NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"

# The five row shapes (whole GPU, share, several GPUs of given models, no GPU, pending) and
# two the mapping cannot take. Row b arrives after c and d: the events come in time order.
PODS = [
    "a,6000,12288,1,1000,,LS,Running,0,100,10",
    "b,4000,15258,1,460,,BE,Succeeded,5,60,5",
    "c,88000,327680,8,1000,V100M32|V100M16,Burstable,Failed,3,50,4",
    "d,2000,1024,0,0,,Guaranteed,Running,3,20,3",
    "e,1000,2048,1,1000,,BE,Pending,7,9,",
    "f,1000,1024,2,500,,BE,Running,1,2,1",
    "g,1000,1024,4,0,,BE,Running,1,2,1",
]
NODES = [
    "n0,96000,786432,8,V100M32",
    "n1,96000,786432,8,V100M32",
    "n2,32000,262144,0,",
    "n3,8000,61440,1,P100",
    "n4,16000,65536,2,V100M16",
]


def _write(tmp_path: Path, name: str, header: str, rows: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def _read(tmp_path: Path, pods: list[str], nodes: list[str] | None = None) -> AlibabaTrace:
    pods_csv = _write(tmp_path, "pods.csv", HEADER, pods)
    nodes_csv = None if nodes is None else _write(tmp_path, "nodes.csv", NODE_HEADER, nodes)
    return read_alibaba(pods_csv, nodes_csv)


def _template(name: str, exactly: Obj) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
    }


def _pod(name: str, cpu: str, memory: str, qos: str, priority: int, template: str | None) -> Obj:
    container: Obj = {
        "name": "main",
        "image": "alibaba-gpu-v2023",
        "resources": {"requests": {"cpu": cpu, "memory": memory}},
    }
    spec: Obj = {
        "containers": [container],
        "restartPolicy": "Never",
        "priorityClassName": qos,
        "priority": priority,
    }
    if template is not None:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
        container["resources"]["claims"] = [{"name": "gpu"}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": generated_uid("Pod", "default", name),
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": name,
                    "uid": generated_uid("Job", "default", name),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }


GPU_1 = _template(
    "gpu-1", {"deviceClassName": "gpu.alibaba", "allocationMode": "ExactCount", "count": 1}
)
SHARE_460 = _template(
    "gpu-share-460",
    {
        "deviceClassName": "gpu.alibaba",
        "allocationMode": "ExactCount",
        "count": 1,
        "capacity": {"requests": {"milli": "460"}},
    },
)
GPU_8_V100 = _template(
    "gpu-8-v100m16-v100m32",
    {
        "deviceClassName": "gpu.alibaba",
        "allocationMode": "ExactCount",
        "count": 8,
        "selectors": [
            {
                "cel": {
                    "expression": 'device.attributes["gpu.alibaba"].model in ["V100M16","V100M32"]'
                }
            }
        ],
    },
)


def test_each_row_shape_becomes_the_objects_of_the_mapping_table(tmp_path: Path) -> None:
    trace = _read(tmp_path, PODS, NODES)
    # (t_ms, op, kind, key, runs_ms, line): row n is line n + 1.
    assert [(e.t_ms, e.op, e.kind, e.key, e.runs_ms, e.line) for e in trace.events] == [
        (0, "create", "ResourceClaimTemplate", "default/gpu-1", None, 2),
        (0, "create", "Pod", "default/a", 90_000, 2),  # deletion 100 - scheduled 10
        (3000, "create", "ResourceClaimTemplate", "default/gpu-8-v100m16-v100m32", None, 4),
        (3000, "create", "Pod", "default/c", 46_000, 4),  # 50 - 4 (Failed: same rule)
        (3000, "create", "Pod", "default/d", 17_000, 5),  # row order at one instant
        (5000, "create", "ResourceClaimTemplate", "default/gpu-share-460", None, 3),
        (5000, "create", "Pod", "default/b", 55_000, 3),
        (7000, "create", "Pod", "default/e", None, 6),  # pending: no run time, gpu-1 exists
        (9000, "delete", "Pod", "default/e", None, 6),  # withdrawn at deletion_time
    ]
    objects = {(e.op, e.kind, e.key): e.object for e in trace.events}
    assert objects["create", "ResourceClaimTemplate", "default/gpu-1"] == GPU_1
    assert objects["create", "ResourceClaimTemplate", "default/gpu-share-460"] == SHARE_460
    assert objects["create", "ResourceClaimTemplate", "default/gpu-8-v100m16-v100m32"] == GPU_8_V100
    assert objects["create", "Pod", "default/a"] == _pod(
        "a", "6000m", "12288Mi", "alibaba-ls", 1000, "gpu-1"
    )
    assert objects["create", "Pod", "default/b"] == _pod(
        "b", "4000m", "15258Mi", "alibaba-be", 0, "gpu-share-460"
    )
    assert objects["create", "Pod", "default/c"] == _pod(
        "c", "88000m", "327680Mi", "alibaba-burstable", 500, "gpu-8-v100m16-v100m32"
    )
    assert objects["create", "Pod", "default/d"] == _pod(
        "d", "2000m", "1024Mi", "alibaba-guaranteed", 1000, None
    )
    assert objects["delete", "Pod", "default/e"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "e", "namespace": "default"},
    }
    assert trace.skipped == {SKIP_MULTI_SHARE: 1, SKIP_NO_MILLI: 1}
    assert trace.notes == (
        f"{tmp_path / 'pods.csv'}: 1 row(s) skipped: {SKIP_MULTI_SHARE} (first: row 6, f)",
        f"{tmp_path / 'pods.csv'}: 1 row(s) skipped: {SKIP_NO_MILLI} (first: row 7, g)",
    )
    assert trace.classes == (
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.alibaba"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.alibaba"'}}]},
        },
    )
    as_trace = trace.trace()
    assert isinstance(as_trace, Trace) and as_trace.events == trace.events
    assert as_trace.digest == trace.digest and as_trace.path == str(tmp_path / "pods.csv")


def test_pending_rows_skip_leaves_them_out_counted(tmp_path: Path) -> None:
    pods_csv = _write(tmp_path, "pods.csv", HEADER, PODS)
    trace = read_alibaba(pods_csv, None, pending="skip")
    assert "default/e" not in {e.key for e in trace.events}
    assert trace.skipped == {SKIP_PENDING: 1, SKIP_MULTI_SHARE: 1, SKIP_NO_MILLI: 1}
    assert trace.digest != read_alibaba(pods_csv, None).digest


def test_arrivals_at_start_reads_a_list_without_time_columns(tmp_path: Path) -> None:
    # upstream's multigpu* lists: name,cpu_milli,memory_mib,num_gpu,gpu_milli only. Every pod
    # arrives at 0 and runs until the end; without qos, no priority.
    path = tmp_path / "multigpu.csv"
    path.write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1024,2,1000\nq,500,512,1,250\n"
    )
    trace = read_alibaba(path, None, arrivals="at-start")
    assert [(e.t_ms, e.op, e.key, e.runs_ms) for e in trace.events] == [
        (0, "create", "default/gpu-2", None),
        (0, "create", "default/p", None),
        (0, "create", "default/gpu-share-250", None),
        (0, "create", "default/q", None),
    ]
    q = trace.events[3].object
    assert "priority" not in q["spec"] and "priorityClassName" not in q["spec"]
    assert q["spec"]["resourceClaims"] == [
        {"name": "gpu", "resourceClaimTemplateName": "gpu-share-250"}
    ]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            {"sharing": "mig"},
            '--gpu-sharing "mig": expected one of consumable, partitionable, whole',
        ),
        ({"pending": "keep"}, '--pending-rows "keep": expected one of withdraw, skip'),
        ({"arrivals": "now"}, '--arrivals "now": expected one of trace, at-start'),
        (
            {"features": {"DRAConsumableCapacity": False}},
            "--gpu-sharing consumable needs the DRAConsumableCapacity feature gate, which is off "
            "in this run (--feature-gates DRAConsumableCapacity=true, or the other --gpu-sharing)",
        ),
        (
            {"sharing": "partitionable", "features": {"DRAPartitionableDevices": False}},
            "--gpu-sharing partitionable needs the DRAPartitionableDevices feature gate, which is "
            "off in this run (--feature-gates DRAPartitionableDevices=true, or the other "
            "--gpu-sharing)",
        ),
    ],
)
def test_unknown_options_and_gates_off_are_refused(
    tmp_path: Path, option: dict[str, Any], message: str
) -> None:
    pods = _write(tmp_path, "pods.csv", HEADER, PODS[:1])
    with pytest.raises(ScenarioError) as caught:
        read_alibaba(pods, None, **option)
    assert str(caught.value) == message


def test_one_node_group_per_shape_starting_empty(tmp_path: Path) -> None:
    trace = _read(tmp_path, PODS[:1], NODES)
    assert [(g.name, g.min_size, g.max_size) for g in trace.groups] == [
        ("cpu-32c-256gi", 0, 1),
        ("p100-1gpu-8c-60gi", 0, 1),
        ("v100m16-2gpu-16c-64gi", 0, 1),
        ("v100m32-8gpu-96c-768gi", 0, 2),  # n0 and n1
    ]
    cpu, p100, v100m16, v100m32 = trace.groups
    assert cpu.slices == ()
    assert p100.node == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "p100-1gpu-8c-60gi-template",
            "labels": {
                "kubernetes.io/hostname": "p100-1gpu-8c-60gi-template",
                "drasnap.io/node-group": "p100-1gpu-8c-60gi",
            },
        },
        "status": {
            "capacity": {"cpu": "8000m", "memory": "61440Mi", "pods": "110"},
            "allocatable": {"cpu": "8000m", "memory": "61440Mi", "pods": "110"},
        },
    }
    # P100's memory is not in its name: no memory attribute.
    assert p100.slices == (
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "p100-1gpu-8c-60gi-template-gpu.alibaba"},
            "spec": {
                "driver": "gpu.alibaba",
                "nodeName": "p100-1gpu-8c-60gi-template",
                "pool": {
                    "name": "p100-1gpu-8c-60gi-template",
                    "generation": 1,
                    "resourceSliceCount": 1,
                },
                "devices": [
                    {
                        "name": "gpu-0",
                        "attributes": {"model": {"string": "P100"}, "index": {"int": 0}},
                        "capacity": {"milli": {"value": "1000"}},
                        "allowMultipleAllocations": True,
                    }
                ],
            },
        },
    )
    (slice_,) = v100m32.slices
    devices = slice_["spec"]["devices"]
    assert [d["name"] for d in devices] == [f"gpu-{i}" for i in range(8)]
    assert devices[7]["attributes"] == {
        "model": {"string": "V100M32"},
        "memory": {"string": "32Gi"},
        "index": {"int": 7},
    }
    assert v100m16.slices[0]["spec"]["devices"][1]["attributes"]["memory"] == {"string": "16Gi"}


def test_without_a_node_list_there_are_no_groups_and_published_models_are_known(
    tmp_path: Path,
) -> None:
    trace = _read(tmp_path, ["x,1000,1024,1,1000,G3|T4,LS,Running,0,10,0"])
    assert trace.groups == ()
    (template, _pod_event) = trace.events
    assert template.key == "default/gpu-1-g3-t4"


def test_digest_follows_the_files(tmp_path: Path) -> None:
    first = _read(tmp_path, PODS, NODES).digest
    assert _read(tmp_path, PODS, NODES).digest == first
    assert _read(tmp_path, PODS, NODES[1:]).digest != first
    assert _read(tmp_path, PODS[:-1], NODES).digest != first


ROW = {
    "name": "p",
    "cpu_milli": "1000",
    "memory_mib": "1024",
    "num_gpu": "1",
    "gpu_milli": "500",
    "gpu_spec": "",
    "qos": "LS",
    "pod_phase": "Running",
    "creation_time": "10",
    "deletion_time": "20",
    "scheduled_time": "10",
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"creation_time": "-5"},
            "column creation_time: negative time -5: times are seconds from 0",
        ),
        ({"deletion_time": "5"}, "column deletion_time: 5 is before creation_time 10"),
        ({"gpu_milli": "1200"}, "column gpu_milli: 1200 is over 1000 (a whole GPU)"),
        (
            {"gpu_spec": "V100M32|H100"},
            'column gpu_spec: unknown GPU model "H100": the node list\'s models are P100, '
            "V100M16, V100M32",
        ),
        ({"cpu_milli": "4cores"}, 'column cpu_milli: "4cores" is not a whole number'),
        (
            {"scheduled_time": "1.5"},
            'column scheduled_time: "1.5" is not a whole number of seconds',
        ),
        ({"qos": "Gold"}, 'column qos: "Gold": expected one of LS, Guaranteed, Burstable, BE'),
    ],
)
def test_bad_rows_are_refused_naming_file_row_and_column(
    tmp_path: Path, change: dict[str, str], message: str
) -> None:
    row = ",".join({**ROW, **change}.values())
    with pytest.raises(ScenarioError) as caught:
        _read(tmp_path, [PODS[0], row], NODES)
    assert str(caught.value) == f"{tmp_path / 'pods.csv'} row 2 (line 3), {message}"


def test_a_missing_column_is_refused_naming_it(tmp_path: Path) -> None:
    # upstream's multigpu50 list has no time columns
    path = tmp_path / "pods.csv"
    path.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1024,1,1000\n")
    with pytest.raises(ScenarioError) as caught:
        read_alibaba(path, None)
    assert str(caught.value) == (
        f"{path} row 0 (line 1, the header), column gpu_spec: missing (the columns are "
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
        "deletion_time,scheduled_time)"
    )


def test_bad_node_rows_are_refused(tmp_path: Path) -> None:
    pods = _write(tmp_path, "pods.csv", HEADER, PODS[:1])
    nodes = _write(tmp_path, "nodes.csv", NODE_HEADER, ["n0,8000,x,1,P100"])
    with pytest.raises(ScenarioError) as caught:
        read_alibaba(pods, nodes)
    assert str(caught.value) == (
        f'{nodes} row 1 (line 2), column memory_mib: "x" is not a whole number'
    )
    nodes.write_text(f"{NODE_HEADER}\nn0,8000,1024,2,\n")
    with pytest.raises(
        ScenarioError, match=r"row 1 \(line 2\), column model: empty for a node with 2"
    ):
        read_alibaba(pods, nodes)


def test_partitionable_sharing_partitions_each_gpu_into_the_share_sizes_asked(
    tmp_path: Path,
) -> None:
    # Shares of 250 and 500 milli: each GPU is a counter set of 1000 milli, with the whole
    # GPU (1000), 1000 // 250 = 4 partitions of 250 and 1000 // 500 = 2 of 500.
    pods = _write(
        tmp_path,
        "pods.csv",
        HEADER,
        [
            "q,1000,1024,1,250,,BE,Running,0,10,0",
            "h,1000,1024,1,500,P100,BE,Running,1,10,1",
            "w,1000,1024,1,1000,,LS,Running,2,10,2",
        ],
    )
    nodes = _write(tmp_path, "nodes.csv", NODE_HEADER, ["n,8000,61440,1,P100"])
    trace = read_alibaba(pods, nodes, sharing="partitionable")
    (group,) = trace.groups
    node = "p100-1gpu-8c-60gi-template"
    pool = {"name": node, "generation": 1, "resourceSliceCount": 2}

    def device(name: str, size: int) -> Obj:
        return {
            "name": name,
            "attributes": {
                "model": {"string": "P100"},
                "index": {"int": 0},
                "milli": {"int": size},
            },
            "consumesCounters": [
                {"counterSet": "gpu-0", "counters": {"milli": {"value": str(size)}}}
            ],
        }

    assert group.slices == (
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-gpu.alibaba-counters-0"},
            "spec": {
                "driver": "gpu.alibaba",
                "nodeName": node,
                "pool": pool,
                "sharedCounters": [{"name": "gpu-0", "counters": {"milli": {"value": "1000"}}}],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-gpu.alibaba-devices-1"},
            "spec": {
                "driver": "gpu.alibaba",
                "nodeName": node,
                "pool": pool,
                "devices": [
                    device("gpu-0", 1000),
                    *(device(f"gpu-0-share250-{j}", 250) for j in range(4)),
                    *(device(f"gpu-0-share500-{j}", 500) for j in range(2)),
                ],
            },
        },
    )
    templates = {e.key: e.object for e in trace.events if e.kind == "ResourceClaimTemplate"}
    size = 'device.attributes["gpu.alibaba"].milli == '
    assert templates == {
        "default/gpu-share-250": _template(
            "gpu-share-250",
            {
                "deviceClassName": "gpu.alibaba",
                "allocationMode": "ExactCount",
                "count": 1,
                "selectors": [{"cel": {"expression": size + "250"}}],
            },
        ),
        "default/gpu-share-500-p100": _template(
            "gpu-share-500-p100",
            {
                "deviceClassName": "gpu.alibaba",
                "allocationMode": "ExactCount",
                "count": 1,
                "selectors": [
                    {"cel": {"expression": size + "500"}},
                    {"cel": {"expression": 'device.attributes["gpu.alibaba"].model in ["P100"]'}},
                ],
            },
        ),
        "default/gpu-1": _template(
            "gpu-1",
            {
                "deviceClassName": "gpu.alibaba",
                "allocationMode": "ExactCount",
                "count": 1,
                "selectors": [{"cel": {"expression": size + "1000"}}],
            },
        ),
    }
    assert trace.digest != read_alibaba(pods, nodes).digest  # the mode is part of the run


def test_partitions_split_into_slices_within_the_api_servers_limits(tmp_path: Path) -> None:
    # 9 GPUs with shares of 100: 9 counter sets (8 + 1 slices) and 9 * (1 + 10) = 99 devices
    # (64 + 35), one pool of 4 slices.
    pods = _write(tmp_path, "pods.csv", HEADER, ["s,1000,1024,1,100,,BE,Running,0,10,0"])
    nodes = _write(tmp_path, "nodes.csv", NODE_HEADER, ["n,8000,61440,9,T4"])
    (group,) = read_alibaba(pods, nodes, sharing="partitionable").groups
    assert [
        (len(s["spec"].get("sharedCounters", ())), len(s["spec"].get("devices", ())))
        for s in group.slices
    ] == [(8, 0), (1, 0), (0, 64), (0, 35)]
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in group.slices} == {4}
    for obj in group.slices:
        assert validate(obj) == obj


# -- end to end: the objects pass validation and the allocator places them as expected ------


def _created(trace: AlibabaTrace) -> dict[str, Obj]:
    return {e.key: e.object for e in trace.events if e.op == "create"}


@pytest.mark.parametrize(
    ("sharing", "s1_device", "w_device", "s2_device"),
    [
        ("consumable", "gpu-0", "gpu-1", "gpu-0"),
        ("partitionable", "gpu-0-share460-0", "gpu-1", "gpu-0-share540-0"),
    ],
)
def test_objects_pass_validation_and_share_one_template_node(
    tmp_path: Path, sharing: str, s1_device: str, w_device: str, s2_device: str
) -> None:
    # One node of shape V100M16 x 2. s1 takes 460 milli of gpu-0 (the first device); w, a
    # whole GPU, takes all 1000 of a GPU: gpu-0 has 540 left, w gets gpu-1; s2 (540) fills
    # gpu-0 exactly; then s3 (100) fits nowhere, nor a V100M32 pod.
    # Consumable: w asks no capacity, so it takes the whole capacity. Partitionable: the
    # share460 partition of gpu-0 consumes 460 of its counter set, so gpu-0 (1000) no longer
    # fits; s2's share540 partition does; s3's share100 partitions of either GPU do not.
    pods = [
        "s1,1000,1024,1,460,,BE,Running,0,100,0",
        "w,1000,1024,1,1000,V100M16,LS,Running,1,100,1",
        "s2,1000,1024,1,540,,BE,Running,2,100,2",
        "s3,1000,1024,1,100,,BE,Running,3,100,3",
        "m32,1000,1024,1,1000,V100M32,LS,Running,4,100,4",
    ]
    pods_csv = _write(tmp_path, "pods.csv", HEADER, pods)
    nodes = ["n,16000,65536,2,V100M16", "o,16000,65536,2,V100M32"]
    nodes_csv = _write(tmp_path, "nodes.csv", NODE_HEADER, nodes)
    trace = read_alibaba(pods_csv, nodes_csv, sharing=sharing)
    created = _created(trace)
    templates = [o for o in created.values() if o["kind"] == "ResourceClaimTemplate"]
    group = next(g for g in trace.groups if g.name == "v100m16-2gpu-16c-64gi")
    for obj in [*trace.classes, *templates, group.node, *group.slices]:
        assert validate(obj) == obj  # valid as written, nothing normalised
    check_dra_objects(trace.classes, templates=templates, slices=group.slices)
    for obj in created.values():
        if obj["kind"] == "Pod":
            assert validate(obj) == obj

    cs = ClusterSnapshot(MemoryStore())
    cs.dra.add_device_classes(list(trace.classes))
    cs.add_node(group.node, slices=group.slices)
    node = group.node["metadata"]["name"]
    by_key = {f"default/{t['metadata']['name']}": t for t in templates}

    def schedule(name: str) -> Obj:
        pod, claims = claims_from_templates(created[f"default/{name}"], by_key)
        cs.dra.add_claims(claims)
        cs.schedule_pod(pod, node)
        (claim,) = claims
        stored = cs.dra.resource_claims.get("default", claim["metadata"]["name"])
        (result,) = stored["status"]["allocation"]["devices"]["results"]
        return dict(result)

    # Consumable capacity reports what each share consumed; a partition is a device of its own.
    consumed = sharing == "consumable"
    s1 = schedule("s1")
    assert (s1["device"], s1.get("consumedCapacity")) == (
        s1_device,
        {"milli": "460"} if consumed else None,
    )
    w = schedule("w")
    assert (w["device"], w.get("consumedCapacity")) == (
        w_device,
        {"milli": "1000"} if consumed else None,
    )
    s2 = schedule("s2")
    assert (s2["device"], s2.get("consumedCapacity")) == (
        s2_device,
        {"milli": "540"} if consumed else None,
    )
    for name in ("s3", "m32"):
        with pytest.raises(SchedulingError):
            schedule(name)


def test_whole_gpus_ask_a_whole_gpu_for_each_share(tmp_path: Path) -> None:
    # --gpu-sharing whole: b's 460 milli become one whole GPU (template gpu-1, no capacity
    # asked), the baseline against which sharing is measured; whole-GPU rows are unchanged.
    found = read_alibaba(
        _write(tmp_path, "pods.csv", HEADER, PODS[:2]),
        _write(tmp_path, "nodes.csv", NODE_HEADER, NODES),
        sharing="whole",
    )
    pods = {e.key: e.object for e in found.events if e.kind == "Pod"}
    templates = {e.key: e.object for e in found.events if e.kind == "ResourceClaimTemplate"}
    assert set(templates) == {"default/gpu-1"}
    (request,) = templates["default/gpu-1"]["spec"]["spec"]["devices"]["requests"]
    assert "capacity" not in request["exactly"] and request["exactly"]["count"] == 1
    claims = pods["default/b"]["spec"]["resourceClaims"]
    assert claims == [{"name": "gpu", "resourceClaimTemplateName": "gpu-1"}]
