"""Generated traces (``--trace gen:SPEC``): reproducible from the seed, the objects as the
module documents them, arrival counts and run times whose means match the SPEC within bounds
derived from the Poisson and exponential variances, and bad SPECs refused in one line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.simulation.traces import TraceEvent, read_jsonl
from drasnap.snapshot.simulation.traces.generator import JOB_LABEL, MAX_PODS, generate

SPEC = "rate=2/m,until=1h,shape=cpu:500m/mem:1Gi/gpu:2,runs=10m"


def test_the_same_spec_and_seed_give_the_same_trace() -> None:
    assert generate(SPEC, 7) == generate(SPEC, 7)
    assert generate(SPEC, 7) != generate(SPEC, 8)


def test_objects_names_and_order_are_as_documented() -> None:
    events = generate(SPEC, 3)
    template, pods = events[0], events[1:]
    assert template == TraceEvent(
        0,
        "create",
        "ResourceClaimTemplate",
        "default/gen-gpu.example.com-x2",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gen-gpu.example.com-x2", "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {
                                    "deviceClassName": "gpu.example.com",
                                    "allocationMode": "ExactCount",
                                    "count": 2,
                                },
                            }
                        ]
                    }
                }
            },
        },
        None,
        1,
    )
    assert pods, "2/m over an hour: some 120 pods"
    assert [e.key for e in pods] == [f"default/gen-{n}" for n in range(1, len(pods) + 1)]
    assert [e.line for e in pods] == list(range(2, len(pods) + 2))
    times = [e.t_ms for e in pods]
    assert times == sorted(times)
    assert all(0 <= t < 3_600_000 for t in times)
    assert all(e.op == "create" and e.kind == "Pod" for e in pods)
    assert all(e.runs_ms is not None and e.runs_ms >= 0 for e in pods)
    assert pods[0].object == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gen-1", "namespace": "default", "labels": {JOB_LABEL: "1"}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "registry.example/job:1",
                    "resources": {
                        "requests": {"cpu": "500m", "memory": "1Gi"},
                        "claims": [{"name": "gpu"}],
                    },
                }
            ],
            "resourceClaims": [
                {"name": "gpu", "resourceClaimTemplateName": "gen-gpu.example.com-x2"}
            ],
        },
    }


def test_a_shape_without_gpus_has_no_template_and_no_claim() -> None:
    events = generate("rate=1/m,until=1h,shape=cpu:1", 1)
    assert all(e.kind == "Pod" for e in events)
    assert events[0].object["spec"] == {
        "containers": [
            {
                "name": "main",
                "image": "registry.example/job:1",
                "resources": {"requests": {"cpu": "1"}},
            }
        ]
    }
    # without runs, pods run to the end
    assert all(e.runs_ms is None for e in events)


def within_four_sigma(observed: float, mean: float, sigma: float) -> bool:
    return abs(observed - mean) <= 4 * sigma


def test_arrival_counts_match_each_jobs_rate() -> None:
    """Over 100h, a job of rate 2/m has a Poisson count of mean and variance 12000 (sigma
    109.5); one of 3/10m (0.3/m) mean and variance 1800 (sigma 42.4). Each within 4 sigma."""
    events = generate(
        "rate=2/m,until=100h,shape=cpu:100m;rate=3/10m,until=100h,shape=cpu:1/gpu:1,class=a.b",
        11,
    )
    counts = {"1": 0, "2": 0}
    for e in events:
        if e.kind == "Pod":
            counts[e.object["metadata"]["labels"][JOB_LABEL]] += 1
    assert within_four_sigma(counts["1"], 12_000, math.sqrt(12_000))
    assert within_four_sigma(counts["2"], 1_800, math.sqrt(1_800))
    # both jobs interleave in time order, one template for the GPU job
    assert [e.key for e in events if e.kind != "Pod"] == ["default/gen-a.b-x1"]
    times = [e.t_ms for e in events]
    assert times == sorted(times)


def test_run_times_are_exponential_of_the_mean_given() -> None:
    """Run times of mean 10m: the sample mean of n of them has standard deviation 10m/sqrt(n);
    an exponential's median is mean x ln 2, so about half fall below 6m 15.9s."""
    events = generate("rate=2/m,until=50h,shape=cpu:100m,runs=10m", 5)
    runs = [e.runs_ms for e in events if e.runs_ms is not None]
    n = len(runs)
    assert within_four_sigma(n, 6_000, math.sqrt(6_000))
    assert within_four_sigma(sum(runs) / n, 600_000, 600_000 / math.sqrt(n))
    below_median = sum(r < 600_000 * math.log(2) for r in runs)
    assert within_four_sigma(below_median, n / 2, math.sqrt(n) / 2)  # binomial(n, 1/2)


def test_generated_events_are_a_valid_trace(tmp_path: Path) -> None:
    """Written as JSON Lines and read back with drasnap's validation, the events come back
    equal: the generated objects are ones ``--from`` would accept."""
    events = generate(SPEC + ";rate=1/m,until=20m,shape=mem:2Gi,runs=1m", 2)
    lines = []
    for e in events:
        t = f"{e.t_ms // 1000}.{e.t_ms % 1000:03d}"
        runs = "" if e.runs_ms is None else f', "runs": {e.runs_ms // 1000}.{e.runs_ms % 1000:03d}'
        lines.append(f'{{"t": {t}, "op": "create", "object": {json.dumps(e.object)}{runs}}}')
    path = tmp_path / "gen.jsonl"
    path.write_text("\n".join(lines) + "\n")
    trace = read_jsonl(path, classes={"gpu.example.com"}, existing=set())
    assert list(trace.events) == events
    assert trace.notes == ()


def test_a_class_the_cluster_lacks_is_refused() -> None:
    with pytest.raises(ScenarioError) as caught:
        generate(SPEC, 1, classes={"other.example.com"})
    assert str(caught.value) == (
        f"--trace gen:{SPEC}: job 1: class: DeviceClass 'gpu.example.com' is not in the "
        "cluster (its DeviceClasses: other.example.com)"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "--trace gen:: no job given: write one such as "
         "gen:rate=2/m,until=1h,shape=cpu:500m/mem:1Gi/gpu:1,runs=10m"),
        ("rate=2/m", "job 1: until is missing (when arrivals stop, such as until=1h)"),
        ("until=1h,shape=cpu:1", "job 1: rate is missing (mean arrivals per unit of time, "
         "such as rate=2/m)"),
        ("rate=2/m,until=1h", "job 1: shape is missing (what each pod asks for, such as "
         "shape=cpu:500m/mem:1Gi/gpu:1)"),
        ("rate=2/m,until=1h,shape=cpu:1,foo=1",
         "job 1: unknown key 'foo' (keys: rate, until, shape, runs, class)"),
        ("rate=2/m,until=1h,shape=cpu:1,rate=3/m", "job 1: rate is given twice"),
        ("rate=2/m,until=1h,shape=cpu:1,runs", "job 1: 'runs' is not key=value "
         "(keys: rate, until, shape, runs, class)"),
        ("rate=2/m,until=1h,shape=cpu:1;", "job 2: is empty (jobs are separated by ';', one "
         "too many?)"),
        ("rate=2,until=1h,shape=cpu:1",
         "job 1: rate '2' is not N/UNIT (such as 2/m, 0.5/s, 30/h or 3/10m)"),
        ("rate=0/m,until=1h,shape=cpu:1", "job 1: rate '0/m' is 0: give arrivals above 0"),
        ("rate=2/x,until=1h,shape=cpu:1", 'job 1: rate: "x" is not a duration: give a duration '
         "such as 10m or 1h30m"),
        ("rate=2/m,until=-1h,shape=cpu:1", 'job 1: until: "-1h" is negative: give a duration '
         "such as 10m or 1h30m"),
        ("rate=2/m,until=0,shape=cpu:1", "job 1: until is 0: no pod would arrive"),
        ("rate=2/m,until=1h,shape=cpu:1,runs=0",
         "job 1: runs is 0: give a mean run time above 0, or leave runs out"),
        ("rate=2/m,until=1h,shape=cpu:1,runs=1.5ms", 'job 1: runs: "1.5ms" is not a whole '
         "number of milliseconds: drasnap's clock counts milliseconds"),
        ("rate=2/m,until=1h,shape=tpu:1", "job 1: shape part 'tpu:1' is not cpu:QUANTITY, "
         "mem:QUANTITY or gpu:N (such as cpu:500m/mem:1Gi/gpu:1)"),
        ("rate=2/m,until=1h,shape=cpu:1/cpu:2", "job 1: shape names cpu twice"),
        ("rate=2/m,until=1h,shape=gpu:33", "job 1: gpu:33 is not a whole number of devices "
         "from 0 to 32 (a claim's most)"),
        ("rate=2/m,until=1h,shape=gpu:1.5", "job 1: gpu:1.5 is not a whole number of devices "
         "from 0 to 32 (a claim's most)"),
        ("rate=2/m,until=1h,shape=cpu:-1", "job 1: cpu:-1 is negative"),
        ("rate=2/m,until=1h,shape=gpu:1,class=Bad_Class", "job 1: class 'Bad_Class' is not a "
         "DeviceClass name: a lowercase RFC 1123 subdomain must consist of lower case "
         "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
         "character (e.g. 'example.com', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        ("rate=1000/s,until=10000h,shape=cpu:1", "would give about 36,000,000,000 pods, more "
         f"than {MAX_PODS:,}: lower a rate or an until"),
    ],
)  # fmt: skip
def test_a_bad_spec_is_refused_in_one_line(spec: str, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        generate(spec, 1)
    expected = message if message.startswith("--trace") else f"--trace gen:{spec}: {message}"
    assert str(caught.value) == expected
    assert len(str(caught.value).splitlines()) == 1


def test_a_bad_quantity_is_refused_naming_it() -> None:
    with pytest.raises(ScenarioError) as caught:
        generate("rate=2/m,until=1h,shape=cpu:abc", 1)
    assert str(caught.value).startswith(
        "--trace gen:rate=2/m,until=1h,shape=cpu:abc: job 1: cpu:abc is not a quantity: "
    )
