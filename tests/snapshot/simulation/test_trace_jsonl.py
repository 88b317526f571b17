"""drasnap's JSON Lines trace (``docs/timelines.md`` 2.10): a good trace read into the events
written out by hand, and each refusal a user meets, one line naming the file and line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.simulation.traces import Trace, TraceEvent, read_jsonl

GPU = "gpu.example.com"
CLASSES = {GPU}
# The starting cluster: a pod and a claim template in namespace "team"
EXISTING = {("Pod", "default/old"), ("ResourceClaimTemplate", "team/shared-gpu")}

TEMPLATE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu"},
    "spec": {
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU}}]}}
    },
}
CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "c1", "namespace": "team"},
    "spec": {
        "devices": {
            "requests": [
                {"name": "gpu", "firstAvailable": [{"name": "any", "deviceClassName": GPU}]}
            ]
        }
    },
}


def pod(
    name: str,
    *,
    namespace: str | None = None,
    template: str | None = None,
    claim: str | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    refs = []
    if template:
        refs.append({"name": "gpu", "resourceClaimTemplateName": template})
    if claim:
        refs.append({"name": "shared", "resourceClaimName": claim})
    if refs:
        spec["resourceClaims"] = refs
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def deleting(kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    metadata = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {"kind": kind, "metadata": metadata}


def with_namespace(obj: dict[str, Any], namespace: str = "default") -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}


def write(tmp_path: Path, *lines: dict[str, Any] | str, name: str = "trace.jsonl") -> Path:
    path = tmp_path / name
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def read(path: Path) -> Trace:
    return read_jsonl(path, classes=CLASSES, existing=EXISTING)


# --- a good trace ---------------------------------------------------------------------------


def test_a_good_trace_reads_into_its_events(tmp_path: Path) -> None:
    p2 = pod("p2", namespace="team", template="shared-gpu", claim="c1")
    path = write(
        tmp_path,
        {"t": 0, "op": "create", "object": TEMPLATE},
        "",  # blank lines are skipped, and counted
        {"t": 0.5, "op": "create", "object": CLAIM},
        {"t": 1.5, "op": "create", "runs": 600, "object": pod("p1", template="one-gpu")},
        {"t": 1.5, "op": "create", "runs": 0.25, "object": p2},
        "   ",
        {"t": 60, "op": "delete", "object": deleting("Pod", "old")},
        {"t": 3600, "op": "delete", "object": deleting("Pod", "p1", "default")},
        # the same name again once deleted: a new pod
        {"t": 3600, "op": "create", "object": pod("p1")},
    )
    trace = read(path)
    p1 = with_namespace(pod("p1", template="one-gpu"))
    template, old = with_namespace(TEMPLATE), with_namespace(deleting("Pod", "old"))
    gone, again = deleting("Pod", "p1", "default"), with_namespace(pod("p1"))
    assert trace.events == (
        TraceEvent(0, "create", "ResourceClaimTemplate", "default/one-gpu", template, None, 1),
        TraceEvent(500, "create", "ResourceClaim", "team/c1", CLAIM, None, 3),
        TraceEvent(1500, "create", "Pod", "default/p1", p1, 600_000, 4),
        TraceEvent(1500, "create", "Pod", "team/p2", p2, 250, 5),
        TraceEvent(60_000, "delete", "Pod", "default/old", old, None, 7),
        TraceEvent(3_600_000, "delete", "Pod", "default/p1", gone, None, 8),
        TraceEvent(3_600_000, "create", "Pod", "default/p1", again, None, 9),
    )  # fmt: skip
    assert trace.path == str(path)
    assert trace.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert trace.notes == ()


def test_the_digest_is_the_files_bytes(tmp_path: Path) -> None:
    """Two traces with the same events but other bytes (spacing) have other digests: a
    resumed run is checked against the file it started from, byte for byte."""
    event = {"t": 0, "op": "create", "object": pod("a")}
    one = write(tmp_path, event, name="one.jsonl")
    two = write(tmp_path, json.dumps(event, indent=None, separators=(",", ":")), name="two.jsonl")
    assert read(one).events == read(two).events
    assert read(one).digest != read(two).digest
    assert len(read(one).digest) == 64


def test_crlf_line_ends_and_a_byte_order_mark_are_taken(tmp_path: Path) -> None:
    path = tmp_path / "windows.jsonl"
    lines = [
        json.dumps({"t": 0, "op": "create", "object": pod("a")}),
        json.dumps({"t": 2, "op": "delete", "object": deleting("Pod", "a")}),
    ]
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    trace = read(path)
    assert [(e.t_ms, e.op, e.key, e.line) for e in trace.events] == [
        (0, "create", "default/a", 1),
        (2000, "delete", "default/a", 2),
    ]


def test_times_are_read_exactly_in_milliseconds(tmp_path: Path) -> None:
    times = [0, 0.001, 0.1, 0.3, 1.5, 2.675, 1e3, 86400]
    path = write(
        tmp_path,
        *({"t": t, "op": "create", "object": pod(f"p{i}")} for i, t in enumerate(times)),
    )
    # 0.1 and 0.3 are not exact doubles, but their shortest decimals are what was written
    assert [e.t_ms for e in read(path).events] == [
        0,
        1,
        100,
        300,
        1500,
        2675,
        1_000_000,
        86_400_000,
    ]


def test_normalisations_are_noted_as_from_notes_them(tmp_path: Path) -> None:
    """A v1beta1 claim comes out in v1's shape, and a bare number as a quantity string, each
    with a note naming the line (as ``--from`` notes a manifest's)."""
    beta = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": "d"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "deviceClassName": GPU,
                        "allocationMode": "ExactCount",
                        "count": 2,
                    }
                ]
            }
        },
    }
    cpu_pod = pod("a")
    cpu_pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": 1}}
    path = write(
        tmp_path,
        {"t": 0, "op": "create", "object": beta},
        {"t": 0, "op": "create", "object": cpu_pod},
    )
    trace = read(path)
    assert trace.events[0].object == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "d", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": GPU,
                            "allocationMode": "ExactCount",
                            "count": 2,
                        },
                    }
                ]
            }
        },
    }
    assert trace.events[1].object["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "1"}
    }
    assert trace.notes == (
        f"{path} line 1: ResourceClaim default/d: resource.k8s.io/v1beta1 converted to "
        "resource.k8s.io/v1",
        f"{path} line 2: Pod default/a: spec.containers[0].resources.requests.cpu: number 1 "
        'taken as quantity "1"',
    )


# --- refusals ---------------------------------------------------------------------------------


def bad_template(class_name: str) -> dict[str, Any]:
    request = {"name": "gpu", "exactly": {"deviceClassName": class_name}}
    return {**TEMPLATE, "spec": {"spec": {"devices": {"requests": [request]}}}}


A = {"t": 0, "op": "create", "object": pod("a")}
REFUSALS: list[tuple[str, list[dict[str, Any] | str], int, str]] = [
    ("not JSON", ['{"t": 0, "op": "create"'], 1, "not JSON: unexpected end of data (column 24)"),
    (
        "NaN",
        ['{"t": NaN, "op": "create", "object": {}}'],
        1,
        "not JSON: unexpected character, expected a JSON value (column 7)",
    ),
    (
        "infinity",
        ['{"t": 1e400, "op": "create", "object": {}}'],
        1,
        "not JSON: number is infinity when parsed as double (column 7)",
    ),
    (
        "not an object",
        [A, "[1, 2]"],
        2,
        'a list where an event {"t": seconds, "op": "create" or "delete", "object": {...}} was '
        "expected",
    ),
    (
        "unknown field",
        [{**A, "run": 5}],
        1,
        'unknown field "run": an event has t, op, object and runs',
    ),
    (
        "unknown op",
        [{**A, "op": "update"}],
        1,
        '"op" must be "create" or "delete" (not string "update")',
    ),
    (
        "missing op",
        [{"t": 0, "object": pod("a")}],
        1,
        '"op" must be "create" or "delete" (missing)',
    ),
    (
        "missing object",
        [{"t": 0, "op": "create"}],
        1,
        '"object" must be a Kubernetes object, a JSON object (missing)',
    ),
    (
        "missing kind",
        [{"t": 0, "op": "create", "object": {"metadata": {"name": "x"}}}],
        1,
        "object.kind is missing: a trace holds Pod, ResourceClaim, ResourceClaimTemplate",
    ),
    (
        "unknown kind",
        [{"t": 0, "op": "create", "object": {"apiVersion": "apps/v1", "kind": "Deployment"}}],
        1,
        'object.kind "Deployment" is not one a trace holds: Pod, ResourceClaim, '
        "ResourceClaimTemplate",
    ),
    (
        "missing t",
        [A, {"op": "create", "object": pod("b")}],
        2,
        '"t" is missing: the event\'s time in seconds from the start',
    ),
    ("t a string", [{**A, "t": "5"}], 1, '"t" must be a number of seconds, not string "5"'),
    ("t a boolean", [{**A, "t": True}], 1, '"t" must be a number of seconds, not boolean true'),
    ("t null", [{**A, "t": None}], 1, '"t" must be a number of seconds, not null'),
    (
        "t negative",
        [{**A, "t": -1}],
        1,
        '"t" is negative (-1): a time from the start is 0 or more seconds',
    ),
    (
        "t under a millisecond",
        [{**A, "t": 1.0005}],
        1,
        '"t" 1.0005 is not a whole number of milliseconds: drasnap\'s clock counts milliseconds',
    ),
    (
        "t past Go's limit",
        [{**A, "t": 10**13}],
        1,
        '"t" 10000000000000 is too large: the longest time is 2562047h47m16.854s (Go\'s limit)',
    ),
    (
        "out of time order",
        [
            {"t": 7, "op": "create", "object": pod("a")},
            "",
            {"t": 5, "op": "create", "object": pod("b")},
        ],
        3,
        "\"t\" 5 is before line 1's 7: a trace's times never decrease (sort the lines by t)",
    ),
    (
        "runs on a claim template",
        [{"t": 0, "op": "create", "runs": 5, "object": TEMPLATE}],
        1,
        '"runs" is for pods: a ResourceClaimTemplate does not run',
    ),
    (
        "runs on a delete",
        [A, {"t": 1, "op": "delete", "runs": 5, "object": deleting("Pod", "a")}],
        2,
        '"runs" goes with a pod\'s create, not with a delete',
    ),
    (
        "runs negative",
        [{**A, "runs": -5}],
        1,
        '"runs" is negative (-5): a run time is 0 or more seconds',
    ),
    (
        "runs under a millisecond",
        [{**A, "runs": 0.0001}],
        1,
        '"runs" 0.0001 is not a whole number of milliseconds: drasnap\'s clock counts milliseconds',
    ),
    (
        "a template naming a missing DeviceClass",
        [{"t": 0, "op": "create", "object": bad_template("tpu.example.com")}],
        1,
        "ResourceClaimTemplate default/one-gpu: spec.spec.devices.requests[0].exactly."
        "deviceClassName: DeviceClass 'tpu.example.com' not found (the DeviceClasses given: "
        "gpu.example.com)",
    ),
    (
        "a claim naming a missing DeviceClass in firstAvailable",
        [
            {
                "t": 0,
                "op": "create",
                "object": {
                    **CLAIM,
                    "spec": {
                        "devices": {
                            "requests": [
                                {
                                    "name": "gpu",
                                    "firstAvailable": [
                                        {"name": "big", "deviceClassName": GPU},
                                        {"name": "small", "deviceClassName": "small.example.com"},
                                    ],
                                }
                            ]
                        }
                    },
                },
            }
        ],
        1,
        "ResourceClaim team/c1: spec.devices.requests[0].firstAvailable[1].deviceClassName: "
        "DeviceClass 'small.example.com' not found (the DeviceClasses given: gpu.example.com)",
    ),
    (
        "a pod naming a missing claim template",
        [A, {"t": 1, "op": "create", "object": pod("b", template="nope")}],
        2,
        "Pod default/b: spec.resourceClaims[0].resourceClaimTemplateName: ResourceClaimTemplate "
        "default/nope is neither in the starting cluster nor created earlier in the trace",
    ),
    (
        # the starting cluster's template is in namespace "team": a pod in default cannot use it
        "a pod naming a template of another namespace",
        [{"t": 0, "op": "create", "object": pod("b", template="shared-gpu")}],
        1,
        "Pod default/b: spec.resourceClaims[0].resourceClaimTemplateName: ResourceClaimTemplate "
        "default/shared-gpu is neither in the starting cluster nor created earlier in the trace",
    ),
    (
        "a pod naming a claim created later",
        [
            {"t": 0, "op": "create", "object": pod("b", namespace="team", claim="c1")},
            {"t": 0, "op": "create", "object": CLAIM},
        ],
        1,
        "Pod team/b: spec.resourceClaims[0].resourceClaimName: ResourceClaim team/c1 is "
        "neither in the starting cluster nor created earlier in the trace",
    ),
    (
        "a pod naming a deleted claim",
        [
            {"t": 0, "op": "create", "object": CLAIM},
            {"t": 1, "op": "delete", "object": deleting("ResourceClaim", "c1", "team")},
            {"t": 2, "op": "create", "object": pod("b", namespace="team", claim="c1")},
        ],
        3,
        "Pod team/b: spec.resourceClaims[0].resourceClaimName: ResourceClaim team/c1 was "
        "deleted at line 2 (and not created again since)",
    ),
    (
        "a delete of an unknown pod",
        [A, {"t": 1, "op": "delete", "object": deleting("Pod", "ghost")}],
        2,
        "delete of Pod default/ghost, which is neither in the starting cluster nor created "
        "earlier in the trace",
    ),
    (
        "a delete of a pod deleted before",
        [
            {"t": 0, "op": "delete", "object": deleting("Pod", "old")},
            {"t": 1, "op": "delete", "object": deleting("Pod", "old")},
        ],
        2,
        "delete of Pod default/old, which was deleted at line 1 (and not created again since)",
    ),
    (
        "a delete naming no object",
        [{"t": 0, "op": "delete", "object": {"kind": "Pod"}}],
        1,
        "object.metadata.name must name the object deleted (a delete names it by kind, "
        "metadata.namespace and metadata.name)",
    ),
    (
        "a duplicate create",
        [A, {"t": 1, "op": "create", "object": pod("a", namespace="default")}],
        2,
        "Pod default/a already exists (created at line 1): delete it first",
    ),
    (
        "a create of a pod the starting cluster has",
        [{"t": 0, "op": "create", "object": pod("old")}],
        1,
        "Pod default/old already exists (in the starting cluster): delete it first",
    ),
    (
        "an invalid pod, refused as --from refuses it",
        [
            {
                "t": 0,
                "op": "create",
                "object": {
                    **pod("a"),
                    "spec": {"containers": [{"name": "c", "image": "x", "nodeNmae": "n"}]},
                },
            }
        ],
        1,
        'Pod default/a: spec.containers[0].nodeNmae: unknown field "nodeNmae"',
    ),
    (
        "a bound pod",
        [
            {
                "t": 0,
                "op": "create",
                "object": {**pod("a"), "spec": {"nodeName": "n1", "containers": []}},
            }
        ],
        1,
        'Pod default/a: spec.nodeName is set ("n1"): a trace\'s pods arrive unscheduled, the '
        "simulated scheduler binds them",
    ),
]


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [case[1:] for case in REFUSALS],
    ids=[case[0] for case in REFUSALS],
)
def test_each_mistake_is_refused_in_one_line_naming_file_and_line(
    tmp_path: Path, lines: list[dict[str, Any] | str], line: int, message: str
) -> None:
    path = write(tmp_path, *lines)
    before = sorted(tmp_path.iterdir())
    with pytest.raises(ScenarioError) as caught:
        read(path)
    assert str(caught.value) == f"{path} line {line}: {message}"
    assert len(str(caught.value).splitlines()) == 1
    assert sorted(tmp_path.iterdir()) == before  # nothing written


def test_a_selector_that_does_not_compile_is_refused_at_its_line(tmp_path: Path) -> None:
    template = bad_template(GPU)
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": 'device.attributes["x"].y >'}}
    ]
    path = write(tmp_path, A, {"t": 0, "op": "create", "object": template})
    with pytest.raises(ScenarioError) as caught:
        read(path)
    message = str(caught.value)
    assert message.startswith(
        f"{path} line 2: ResourceClaimTemplate default/one-gpu: "
        "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression: "
    )
    assert "compilation failed" in message
    assert len(message.splitlines()) == 1


def test_a_missing_file_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "absent.jsonl"
    with pytest.raises(ScenarioError) as caught:
        read(path)
    assert str(caught.value) == f"{path}: cannot read: No such file or directory"


def test_a_value_holding_a_line_break_keeps_the_message_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, {**A, "op": "up\u2028date\u0085"})
    with pytest.raises(ScenarioError) as caught:
        read(path)
    assert len(str(caught.value).splitlines()) == 1
    assert str(caught.value).startswith(f"{path} line 1: ")
