"""Generated traces (``--trace gen:SPEC``, issue 36): Poisson arrivals of pods of given shapes.

SPEC is one or more jobs separated by ``;``, each a comma-separated list of ``key=value``::

    rate=2/m,until=1h,shape=cpu:500m/mem:1Gi/gpu:1,runs=10m
    rate=30/h,until=8h,shape=cpu:4/mem:16Gi/gpu:4,runs=2h;rate=1/s,until=8h,shape=cpu:100m

========  ========  ==================================================================
key       needed    meaning
========  ========  ==================================================================
rate      yes       mean arrivals per unit of time: ``N/s``, ``N/m``, ``N/h``, or
                    ``N/DURATION`` (``3/10m``); N a decimal number above 0
until     yes       arrivals happen in ``[0, until)`` (a Go duration: ``1h``, ``90m``)
shape     yes       what each pod asks for, ``/``-separated: ``cpu:QUANTITY``,
                    ``mem:QUANTITY`` (or ``memory:``), ``gpu:N`` (0 to 32 devices)
runs      no        mean run time (a Go duration above 0): each pod completes after an
                    exponentially distributed time of that mean from its binding;
                    without it, pods run to the end of the simulation
class     no        the DeviceClass of the GPUs (default ``gpu.example.com``)
========  ========  ==================================================================

Each job is a Poisson process: the gaps between its arrivals are exponential with mean
``1/rate`` (times floored to the millisecond, so never out of order). Events, in order: one
ResourceClaimTemplate at t=0 per GPU shape (``gen-<class>-x<N>``: one request ``gpu``,
``ExactCount`` N of the class), then the pods in arrival order (ties: job order), named
``gen-1``, ``gen-2``, ... in namespace ``default``, labelled ``drasnap.io/trace-job: "<j>"`` (the
job's number from 1), one container ``main`` with the cpu and memory requests and, for a GPU
shape, the claim ``gpu`` from the template.

Reproducible: one ``random.Random(seed)`` draws, job after job, each arrival's gap and then its
run time; the same SPEC and seed give the same events. A SPEC that would give more than
:data:`MAX_PODS` pods on average is refused (a trace is held in memory).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from typing import Any, Final

from drasnap.snapshot.errors import ObjectValidationError, ScenarioError, one_line
from drasnap.snapshot.k8s.kinds import CLAIM_TEMPLATE_KIND, DEFAULT_NAMESPACE, POD_KIND
from drasnap.snapshot.k8s.quantity import quantity_value
from drasnap.snapshot.simulation.durations import parse_duration
from drasnap.snapshot.simulation.traces.events import CREATE, TraceEvent
from drasnap.snapshot.validation.formats import dns_subdomain
from drasnap.snapshot.validation.limits import ALLOCATION_RESULTS_MAX_SIZE

__all__ = ["DEFAULT_CLASS", "JOB_LABEL", "MAX_PODS", "Job", "generate", "parse_spec"]

DEFAULT_CLASS: Final = "gpu.example.com"
JOB_LABEL: Final = "drasnap.io/trace-job"
MAX_PODS: Final = 10_000_000
"""The most pods a SPEC may give on average (sum over jobs of rate x until)."""

_KEYS: Final = ("rate", "until", "shape", "runs", "class")
_REQUIRED: Final = ("rate", "until", "shape")
_RATE_UNITS_MS: Final = {"s": 1_000, "m": 60_000, "h": 3_600_000}
_NUMBER: Final = re.compile(r"[0-9]+(\.[0-9]+)?|\.[0-9]+")
_RESOURCES: Final = {"cpu": "cpu", "mem": "memory", "memory": "memory", "gpu": "gpu"}
_IMAGE: Final = "registry.example/job:1"


@dataclass(frozen=True)
class Job:
    """One job of a SPEC: ``rate_per_ms`` mean arrivals per millisecond, arrivals before
    ``until_ms``, each pod asking for ``cpu`` and ``memory`` (quantity strings, None: no
    request) and ``gpus`` devices of ``device_class``, running ``runs_ms`` on average (None:
    to the end)."""

    rate_per_ms: float
    until_ms: int
    cpu: str | None
    memory: str | None
    gpus: int
    runs_ms: int | None
    device_class: str

    @property
    def template_name(self) -> str | None:
        """The claim template of its GPU shape (None without GPUs)."""
        return f"gen-{self.device_class}-x{self.gpus}" if self.gpus else None


def generate(spec: str, seed: int, *, classes: set[str] | None = None) -> list[TraceEvent]:
    """The events of ``--trace gen:SPEC`` for ``seed`` (module docstring). ``line`` counts the
    events from 1.

    ``classes``: the DeviceClass names of the starting cluster; when given, a GPU class the
    cluster lacks is refused.

    Raises:
        ScenarioError: one line naming the SPEC and the job: a malformed or missing key, a
            class not in ``classes``, or too many pods.
    """
    jobs = parse_spec(spec)
    if classes is not None:
        for number, job in enumerate(jobs, start=1):
            if job.gpus and job.device_class not in classes:
                choices = ", ".join(sorted(classes)) or "none"
                raise _refuse(
                    spec,
                    number,
                    f"class: DeviceClass {job.device_class!r} is not in the cluster (its "
                    f"DeviceClasses: {choices})",
                )
    rng = random.Random(seed)
    arrivals: list[tuple[int, int, int, int | None]] = []  # (t_ms, job, seq, runs_ms)
    for index, job in enumerate(jobs):
        t = 0.0
        seq = 0
        while True:
            t += rng.expovariate(job.rate_per_ms)
            t_ms = math.floor(t)
            if t_ms >= job.until_ms:
                break
            runs = None
            if job.runs_ms is not None:
                runs = round(rng.expovariate(1 / job.runs_ms))
            arrivals.append((t_ms, index, seq, runs))
            seq += 1
    arrivals.sort(key=lambda a: (a[0], a[1], a[2]))
    events: list[TraceEvent] = []
    templates: dict[str, dict[str, Any]] = {}
    for job in jobs:
        name = job.template_name
        if name is not None and name not in templates:
            templates[name] = _template(name, job)
    for name, template in templates.items():
        key = f"{DEFAULT_NAMESPACE}/{name}"
        events.append(
            TraceEvent(0, CREATE, CLAIM_TEMPLATE_KIND, key, template, None, len(events) + 1)
        )
    for number, (t_ms, index, _, runs_ms) in enumerate(arrivals, start=1):
        name = f"gen-{number}"
        pod = _pod(name, index + 1, jobs[index])
        key = f"{DEFAULT_NAMESPACE}/{name}"
        events.append(TraceEvent(t_ms, CREATE, POD_KIND, key, pod, runs_ms, len(events) + 1))
    return events


def parse_spec(spec: str) -> list[Job]:
    """The jobs of a SPEC (module docstring), checked.

    Raises:
        ScenarioError: one line naming the SPEC, the job and the key.
    """
    if not spec.strip():
        raise ScenarioError(
            "--trace gen:: no job given: write one such as "
            "gen:rate=2/m,until=1h,shape=cpu:500m/mem:1Gi/gpu:1,runs=10m"
        )
    jobs = [_job(spec, number, text) for number, text in enumerate(spec.split(";"), start=1)]
    expected = sum(job.rate_per_ms * job.until_ms for job in jobs)
    if expected > MAX_PODS:
        raise ScenarioError(
            one_line(
                f"--trace gen:{spec}: would give about {expected:,.0f} pods, more than "
                f"{MAX_PODS:,}: lower a rate or an until"
            )
        )
    return jobs


def _job(spec: str, number: int, text: str) -> Job:
    if not text.strip():
        raise _refuse(spec, number, "is empty (jobs are separated by ';', one too many?)")
    values: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key:
            raise _refuse(
                spec, number, f"{item.strip()!r} is not key=value (keys: {', '.join(_KEYS)})"
            )
        if key not in _KEYS:
            raise _refuse(spec, number, f"unknown key {key!r} (keys: {', '.join(_KEYS)})")
        if key in values:
            raise _refuse(spec, number, f"{key} is given twice")
        values[key] = value
    for key in _REQUIRED:
        if key not in values:
            raise _refuse(spec, number, f"{key} is missing ({_REQUIRED_HINT[key]})")
    until_ms = parse_duration(values["until"], _option(spec, number, "until"))
    if until_ms == 0:
        raise _refuse(spec, number, "until is 0: no pod would arrive")
    runs_ms = None
    if "runs" in values:
        runs_ms = parse_duration(values["runs"], _option(spec, number, "runs"))
        if runs_ms == 0:
            raise _refuse(
                spec, number, "runs is 0: give a mean run time above 0, or leave runs out"
            )
    device_class = values.get("class", DEFAULT_CLASS)
    problems = dns_subdomain(device_class)
    if problems:
        raise _refuse(
            spec, number, f"class {device_class!r} is not a DeviceClass name: {problems[0]}"
        )
    cpu, memory, gpus = _shape(spec, number, values["shape"])
    return Job(
        rate_per_ms=_rate(spec, number, values["rate"]),
        until_ms=until_ms,
        cpu=cpu,
        memory=memory,
        gpus=gpus,
        runs_ms=runs_ms,
        device_class=device_class,
    )


_REQUIRED_HINT: Final = {
    "rate": "mean arrivals per unit of time, such as rate=2/m",
    "until": "when arrivals stop, such as until=1h",
    "shape": "what each pod asks for, such as shape=cpu:500m/mem:1Gi/gpu:1",
}


def _rate(spec: str, number: int, text: str) -> float:
    count, sep, per = text.partition("/")
    if not sep or not _NUMBER.fullmatch(count):
        raise _refuse(
            spec, number, f"rate {text!r} is not N/UNIT (such as 2/m, 0.5/s, 30/h or 3/10m)"
        )
    if per in _RATE_UNITS_MS:
        per_ms = _RATE_UNITS_MS[per]
    else:
        per_ms = parse_duration(per, _option(spec, number, "rate"))
    if float(count) == 0 or per_ms == 0:
        raise _refuse(spec, number, f"rate {text!r} is 0: give arrivals above 0")
    return float(count) / per_ms


def _shape(spec: str, number: int, text: str) -> tuple[str | None, str | None, int]:
    asked: dict[str, str] = {}
    for part in text.split("/"):
        name, sep, value = part.partition(":")
        resource = _RESOURCES.get(name)
        if not sep or resource is None:
            raise _refuse(
                spec,
                number,
                f"shape part {part!r} is not cpu:QUANTITY, mem:QUANTITY or gpu:N "
                "(such as cpu:500m/mem:1Gi/gpu:1)",
            )
        if resource in asked:
            raise _refuse(spec, number, f"shape names {resource} twice")
        asked[resource] = value
    gpus = 0
    if "gpu" in asked:
        value = asked.pop("gpu")
        if not value.isascii() or not value.isdigit() or int(value) > ALLOCATION_RESULTS_MAX_SIZE:
            raise _refuse(
                spec,
                number,
                f"gpu:{value} is not a whole number of devices from 0 to "
                f"{ALLOCATION_RESULTS_MAX_SIZE} (a claim's most)",
            )
        gpus = int(value)
    for resource, value in asked.items():
        try:
            amount = quantity_value(value)
        except ObjectValidationError as exc:
            raise _refuse(spec, number, f"{resource}:{value} is not a quantity: {exc}") from None
        if amount < 0:
            raise _refuse(spec, number, f"{resource}:{value} is negative")
    return asked.get("cpu"), asked.get("memory"), gpus


def _template(name: str, job: Job) -> dict[str, Any]:
    exactly = {
        "deviceClassName": job.device_class,
        "allocationMode": "ExactCount",
        "count": job.gpus,
    }
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": CLAIM_TEMPLATE_KIND,
        "metadata": {"name": name, "namespace": DEFAULT_NAMESPACE},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
    }


def _pod(name: str, job_number: int, job: Job) -> dict[str, Any]:
    requests = {
        resource: value
        for resource, value in (("cpu", job.cpu), ("memory", job.memory))
        if value is not None
    }
    container: dict[str, Any] = {"name": "main", "image": _IMAGE}
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    spec: dict[str, Any] = {"containers": [container]}
    if job.template_name is not None:
        resources["claims"] = [{"name": "gpu"}]
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": job.template_name}]
    if resources:
        container["resources"] = resources
    return {
        "apiVersion": "v1",
        "kind": POD_KIND,
        "metadata": {
            "name": name,
            "namespace": DEFAULT_NAMESPACE,
            "labels": {JOB_LABEL: str(job_number)},
        },
        "spec": spec,
    }


def _option(spec: str, number: int, key: str) -> str:
    return f"--trace gen:{spec}: job {number}: {key}"


def _refuse(spec: str, number: int, what: str) -> ScenarioError:
    return ScenarioError(one_line(f"--trace gen:{spec}: job {number}: {what}"))
