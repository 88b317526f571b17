"""Alibaba's public GPU trace v2023 (``--trace alibaba-gpu-v2023:PODS.csv``; ``docs/traces.md``).

The trace is ``cluster-trace-gpu-v2023`` of alibaba/clusterdata (the USENIX ATC '23 paper
"Beware of Fragmentation"): a pod list (``name,cpu_milli,memory_mib,num_gpu,gpu_milli,
gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time``, times in seconds) and a
node list (``sn,cpu_milli,memory_mib,gpu,model``). This module turns them into what a timeline
needs: the DeviceClass, one node group per node shape (a template node and its slices) and the
trace's events, with the rows the mapping cannot take counted by reason. Every choice is
``docs/traces.md``'s (and ``docs/timelines.md`` 2.10's table); the repository ships no copy of
the data.

GPU shares use consumable capacity (KEP-5075, ``DRAConsumableCapacity``): every GPU offers the
capacity ``milli: 1000`` with ``allowMultipleAllocations: true``; a share asks
``capacity.requests.milli``, and a whole-GPU request, asking nothing, takes the whole capacity
(the allocator's ``snapshot.allocation.capacity``: no request policy, so the default is the
capacity itself), so it never lands on a GPU that holds a share. With ``sharing=
"partitionable"`` (KEP-4815, ``DRAPartitionableDevices``) each GPU is a counter set of ``milli:
1000`` instead, partitioned into devices of every share size the pods ask for
(:func:`_partitioned_slices`); a claim selects a device of its size. With ``sharing="whole"``
a share asks a whole GPU, as it would without DRA's sharing (the nodes as with consumable
capacity): the baseline that sharing is measured against.

Bad input is refused in one line naming the file, the row (counted from 1 after the header,
with its line in the file) and the column, before anything is written.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from drasnap.snapshot.errors import ManifestError, ScenarioError, one_line
from drasnap.snapshot.ingest.limits import read_input
from drasnap.snapshot.k8s.features import allocator_features
from drasnap.snapshot.k8s.kinds import CLAIM_TEMPLATE_KIND, POD_KIND, generated_uid
from drasnap.snapshot.k8s.objects import KubeObject, quote
from drasnap.snapshot.simulation.durations import MAX_MS
from drasnap.snapshot.simulation.traces.events import CREATE, DELETE, Trace, TraceEvent

__all__ = [
    "ARRIVALS",
    "AT_START",
    "CONSUMABLE",
    "DEVICE_CLASS",
    "DRIVER",
    "FROM_TRACE",
    "GROUP_LABEL",
    "MODEL_MEMORY",
    "NODE_COLUMNS",
    "PARTITIONABLE",
    "PENDING_RULES",
    "POD_COLUMNS",
    "QOS_PRIORITY",
    "SHARINGS",
    "SKIP_MILLI_NO_GPU",
    "SKIP_MULTI_SHARE",
    "SKIP_NO_MILLI",
    "SKIP_PENDING",
    "WHOLE_GPUS",
    "WITHDRAW",
    "AlibabaGroup",
    "AlibabaTrace",
    "read_alibaba",
]

DRIVER: Final = "gpu.alibaba"
DEVICE_CLASS: Final = "gpu.alibaba"
NAMESPACE: Final = "default"
CAPACITY: Final = "milli"  # the consumable capacity of a GPU, in thousandths
WHOLE: Final = 1000  # gpu_milli of a whole GPU
GROUP_LABEL: Final = "drasnap.io/node-group"  # as snapshot.simulation.generated labels nodes
CONSUMABLE: Final = "consumable"
PARTITIONABLE: Final = "partitionable"
WHOLE_GPUS: Final = "whole"
SHARINGS: Final = (CONSUMABLE, PARTITIONABLE, WHOLE_GPUS)
WITHDRAW: Final = "withdraw"
PENDING_RULES: Final = (WITHDRAW, "skip")
FROM_TRACE: Final = "trace"
AT_START: Final = "at-start"
ARRIVALS: Final = (FROM_TRACE, AT_START)
PARTITION_ATTRIBUTE: Final = "milli"  # partitionable: a device's size, 1000 for a whole GPU
# The API server's limits (snapshot.validation.limits): counter sets per slice, and devices per
# slice when they consume counters.
_COUNTER_SETS_PER_SLICE: Final = 8
_COUNTER_DEVICES_PER_SLICE: Final = 64
POD_COLUMNS: Final = (
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
)
POD_SHAPE_COLUMNS: Final = POD_COLUMNS[:5]  # all that --arrivals at-start needs
NODE_COLUMNS: Final = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
QOS_PRIORITY: Final = {"LS": 1000, "Guaranteed": 1000, "Burstable": 500, "BE": 0}
"""``qos`` -> ``spec.priority`` (and PriorityClass ``alibaba-<qos>``): drasnap's values, the
trace gives none. Latency-sensitive and guaranteed pods first, best-effort last."""
PHASES: Final = ("Running", "Succeeded", "Failed", "Pending")
MODEL_MEMORY: Final = {"V100M16": "16Gi", "V100M32": "32Gi"}
"""The GPU models whose name says their memory; the others (P100, T4, A10, G1-G3: internal
codes) get no ``memory`` attribute rather than a guess."""
PUBLISHED_MODELS: Final = ("A10", "G1", "G2", "G3", "P100", "T4", "V100M16", "V100M32")
"""The models upstream's README and node lists name: what a ``gpu_spec`` may name when no
node list is given."""
_NO_SPEC: Final = ("", "nan")  # pandas wrote a missing gpu_spec as "nan" in upstream's README
_INTEGER: Final = re.compile(r"-?[0-9]+")
_DNS_SUBDOMAIN: Final = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")

SKIP_MULTI_SHARE: Final = "num_gpu > 1 with gpu_milli < 1000 (a share of several GPUs)"
SKIP_NO_MILLI: Final = "num_gpu >= 1 with gpu_milli 0 (a GPU of which nothing is used)"
SKIP_MILLI_NO_GPU: Final = "num_gpu 0 with gpu_milli > 0 (a share of no GPU)"
SKIP_PENDING: Final = "never scheduled in the trace (no scheduled_time; --pending-rows skip)"


@dataclass(frozen=True)
class AlibabaGroup:
    """One node group: every node of one shape (GPU model, GPUs, CPU, memory) in the node
    list. It starts empty (``min_size`` 0) and may grow to ``max_size``, the number of nodes
    of that shape in the list. ``node`` is the template node, ``slices`` its ResourceSlices
    (none for a node without GPUs)."""

    name: str
    min_size: int
    max_size: int
    node: KubeObject
    slices: tuple[KubeObject, ...]
    model: str  # "" for a node without GPUs
    gpus: int
    cpu_milli: int
    memory_mib: int


@dataclass(frozen=True)
class AlibabaTrace:
    """What the two CSV files become (module docstring).

    ``classes``: the DeviceClass ``gpu.alibaba``. ``groups``: one per node shape, by name
    (none without a node list). ``events``: in time order; each ResourceClaimTemplate created
    just before the first pod that uses it, at that pod's time. ``skipped``: reason -> rows
    left out; ``notes``: one line per reason naming its first row. ``digest``: SHA-256 of the
    mapping, its options and both files' bytes (a resumed run must read the same).
    """

    classes: tuple[KubeObject, ...]
    groups: tuple[AlibabaGroup, ...]
    events: tuple[TraceEvent, ...]
    skipped: Mapping[str, int]
    digest: str
    path: str
    notes: tuple[str, ...] = ()

    def trace(self) -> Trace:
        """The events as every trace reader gives them (:class:`Trace`)."""
        return Trace(events=self.events, digest=self.digest, path=self.path, notes=self.notes)


def read_alibaba(
    pods_csv: Path,
    nodes_csv: Path | None = None,
    *,
    sharing: str = CONSUMABLE,
    pending: str = WITHDRAW,
    arrivals: str = FROM_TRACE,
    features: Mapping[str, bool] | None = None,
) -> AlibabaTrace:
    """The trace of ``pods_csv`` on the node shapes of ``nodes_csv`` (module docstring).

    ``sharing`` (``--gpu-sharing``): how a share of one GPU (``gpu_milli`` < 1000) is asked
    for: ``consumable`` (KEP-5075's capacity requests) or ``partitionable`` (a partition of
    that size, KEP-4815's counters). ``pending`` (``--pending-rows``): a row never scheduled
    in the trace (no ``scheduled_time``) arrives and is withdrawn at its ``deletion_time``
    (``withdraw``), or is left out, counted (``skip``). ``arrivals`` (``--arrivals``):
    ``trace`` takes the time columns; ``at-start`` makes every pod arrive at 0 and run until
    the end, for upstream's ``multigpu*`` lists, which have no time columns (only
    ``name,cpu_milli,memory_mib,num_gpu,gpu_milli`` are needed then; ``gpu_spec`` and ``qos``
    are used when present, the time columns and ``pod_phase`` ignored). ``features``: the
    run's feature gates (Kubernetes 1.36's by default): the sharing mode's gate must be on.

    Raises:
        ScenarioError: one line naming the file, row and column: a missing column, a field
            that is not a whole number, a negative number, a time past drasnap's clock, a
            ``deletion_time`` before ``creation_time`` (or ``scheduled_time`` outside them),
            ``gpu_milli`` over 1000, a ``gpu_spec`` model no node has, an unknown ``qos`` or
            ``pod_phase``, a repeated or malformed name; an unknown ``sharing``, ``pending``
            or ``arrivals``; the sharing mode's feature gate off; or a file cannot be read.
    """
    for flag, value, choices in (
        ("--gpu-sharing", sharing, SHARINGS),
        ("--pending-rows", pending, PENDING_RULES),
        ("--arrivals", arrivals, ARRIVALS),
    ):
        if value not in choices:
            raise ScenarioError(f"{flag} {quote(value)}: expected one of {', '.join(choices)}")
    consumable = sharing != PARTITIONABLE  # (whole GPUs: the consumable nodes, no share asked)
    gate = "DRAConsumableCapacity" if consumable else "DRAPartitionableDevices"
    switches = allocator_features(features)
    on = switches.consumable_capacity if consumable else switches.partitionable_devices
    if not on:
        # The allocator would refuse every GPU claim midway (or ignore the slices): say it now.
        raise ScenarioError(
            f"--gpu-sharing {sharing} needs the {gate} feature gate, which is off in this run "
            f"(--feature-gates {gate}=true, or the other --gpu-sharing)"
        )
    pods_data = _read(pods_csv)
    options = f"{sharing}\0{pending}\0{arrivals}\0".encode()
    digest = hashlib.sha256(b"alibaba-gpu-v2023\0" + options)
    digest.update(hashlib.sha256(pods_data).digest())
    shapes: dict[_Shape, int] = {}
    models: tuple[str, ...] = PUBLISHED_MODELS
    if nodes_csv is not None:
        nodes_data = _read(nodes_csv)
        digest.update(hashlib.sha256(nodes_data).digest())
        shapes = _shapes(str(nodes_csv), nodes_data)
        models = tuple(sorted({shape[0] for shape in shapes if shape[0]}))
    reader = _PodReader(str(pods_csv), frozenset(models), sharing, pending, arrivals)
    required = POD_COLUMNS if arrivals == FROM_TRACE else POD_SHAPE_COLUMNS
    for row in _rows(str(pods_csv), pods_data, required):
        reader.read(row)
    # Partitions are the sizes the pods ask for: the nodes are built after the pods are read.
    partitions = tuple(sorted(reader.shares)) if sharing == PARTITIONABLE else None
    groups = _groups(str(nodes_csv), shapes, partitions)
    return AlibabaTrace(
        classes=(_device_class(),),
        groups=groups,
        events=reader.events(),
        skipped=dict(reader.skipped),
        digest=digest.hexdigest(),
        path=str(pods_csv),
        notes=tuple(
            f"{pods_csv}: {count} row(s) skipped: {reason} (first: {reader.first_skip[reason]})"
            for reason, count in reader.skipped.items()
        ),
    )


# -- reading ---------------------------------------------------------------------------------


def _read(path: Path) -> bytes:
    try:
        return read_input(path)
    except ManifestError as exc:
        raise ScenarioError(one_line(exc)) from exc


@dataclass(frozen=True)
class _Row:
    path: str
    number: int  # data rows counted from 1
    line: int  # the line of the file where the row starts
    fields: dict[str, str]

    def where(self, column: str) -> str:
        return f"{self.path} row {self.number} (line {self.line}), column {column}"

    def refuse(self, column: str, what: str) -> ScenarioError:
        return ScenarioError(one_line(f"{self.where(column)}: {what}"))

    def text(self, column: str) -> str:
        return self.fields[column].strip()

    def count(self, column: str) -> int:
        """A whole number, 0 or more (CPU, memory, GPUs)."""
        value = self.text(column)
        if not _INTEGER.fullmatch(value):
            raise self.refuse(column, f"{quote(value)} is not a whole number")
        number = int(value)
        if number < 0:
            raise self.refuse(column, f"{value} is negative: expected 0 or more")
        return number

    def seconds(self, column: str) -> int | None:
        """A time in whole seconds from the trace's start, as milliseconds (None: empty)."""
        value = self.text(column)
        if not value:
            return None
        if not _INTEGER.fullmatch(value):
            raise self.refuse(column, f"{quote(value)} is not a whole number of seconds")
        number = int(value)
        if number < 0:
            raise self.refuse(column, f"negative time {value}: times are seconds from 0")
        if number * 1000 > MAX_MS:
            raise self.refuse(column, f"{value} seconds is past the longest time drasnap counts")
        return number * 1000


def _rows(path: str, data: bytes, columns: tuple[str, ...]) -> Iterator[_Row]:
    """The rows of a CSV file, each checked to have every column of ``columns``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        raise ScenarioError(f"{path}: empty: expected a header row {','.join(columns)}")
    header = [name.strip() for name in header]
    for column in columns:
        if column not in header:
            raise ScenarioError(
                f"{path} row 0 (line 1, the header), column {column}: missing (the columns "
                f"are {','.join(columns)})"
            )
    number = 0
    line = reader.line_num + 1
    for fields in reader:
        if not any(field.strip() for field in fields):
            line = reader.line_num + 1
            continue
        number += 1
        if len(fields) != len(header):
            raise ScenarioError(
                f"{path} row {number} (line {line}): {len(fields)} fields where the header "
                f"has {len(header)}"
            )
        yield _Row(path, number, line, dict(zip(header, fields, strict=True)))
        line = reader.line_num + 1


# -- nodes -----------------------------------------------------------------------------------


_Shape = tuple[str, int, int, int]  # (model, GPUs, CPU milli, memory MiB)


def _shapes(path: str, data: bytes) -> dict[_Shape, int]:
    """The node list's shapes, each with its number of nodes."""
    shapes: dict[_Shape, int] = {}
    names: dict[str, int] = {}
    for row in _rows(path, data, NODE_COLUMNS):
        sn = row.text("sn")
        if not sn:
            raise row.refuse("sn", "empty: every node has a name")
        if sn in names:
            raise row.refuse("sn", f"{quote(sn)} repeats row {names[sn]}")
        names[sn] = row.number
        cpu, memory, gpus = row.count("cpu_milli"), row.count("memory_mib"), row.count("gpu")
        model = row.text("model")
        if model == "nan":
            model = ""
        if gpus and not model:
            raise row.refuse("model", f"empty for a node with {gpus} GPU(s): which GPU is it?")
        if not gpus:
            model = ""  # a model without GPUs offers nothing
        elif not re.fullmatch(r"[A-Za-z0-9][-A-Za-z0-9_.]*", model):
            raise row.refuse("model", f"{quote(model)} is not a GPU model name (letters, digits)")
        key = (model, gpus, cpu, memory)
        shapes[key] = shapes.get(key, 0) + 1
    return shapes


def _groups(
    path: str, shapes: Mapping[_Shape, int], partitions: tuple[int, ...] | None
) -> tuple[AlibabaGroup, ...]:
    """One group per shape, by name. ``partitions``: the share sizes each GPU is partitioned
    into (partitionable sharing), else None (consumable capacity)."""
    groups: dict[str, AlibabaGroup] = {}
    for (model, gpus, cpu, memory), count in shapes.items():
        name = _group_name(model, gpus, cpu, memory)
        if name in groups:
            raise ScenarioError(
                f"{path}: column model: GPU models {quote(groups[name].model)} and "
                f"{quote(model)} give the same node group name {name}"
            )
        node_name = f"{name}-template"
        groups[name] = AlibabaGroup(
            name=name,
            min_size=0,
            max_size=count,
            node=_node(node_name, name, cpu, memory),
            slices=_gpu_slices(node_name, model, gpus, partitions) if gpus else (),
            model=model,
            gpus=gpus,
            cpu_milli=cpu,
            memory_mib=memory,
        )
    return tuple(groups[name] for name in sorted(groups))


def _group_name(model: str, gpus: int, cpu_milli: int, memory_mib: int) -> str:
    """``v100m16-8gpu-96c-768gi``; ``cpu-32c-256gi`` for a node without GPUs."""
    cpu = f"{cpu_milli // 1000}c" if cpu_milli % 1000 == 0 else f"{cpu_milli}m"
    memory = f"{memory_mib // 1024}gi" if memory_mib % 1024 == 0 else f"{memory_mib}mi"
    if not gpus:
        return f"cpu-{cpu}-{memory}"
    label = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
    return f"{label}-{gpus}gpu-{cpu}-{memory}"


def _node(name: str, group: str, cpu_milli: int, memory_mib: int) -> KubeObject:
    amounts = {"cpu": f"{cpu_milli}m", "memory": f"{memory_mib}Mi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, GROUP_LABEL: group},
        },
        "status": {"capacity": dict(amounts), "allocatable": dict(amounts)},
    }


def _gpu_slices(
    node_name: str, model: str, gpus: int, partitions: tuple[int, ...] | None
) -> tuple[KubeObject, ...]:
    attributes: dict[str, Any] = {"model": {"string": model}}
    if model in MODEL_MEMORY:
        attributes["memory"] = {"string": MODEL_MEMORY[model]}
    if partitions is not None:
        return _partitioned_slices(node_name, attributes, gpus, partitions)
    return (
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-{DRIVER}"},
            "spec": {
                "driver": DRIVER,
                "nodeName": node_name,
                "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": f"gpu-{i}",
                        "attributes": {**attributes, "index": {"int": i}},
                        "capacity": {CAPACITY: {"value": str(WHOLE)}},
                        "allowMultipleAllocations": True,
                    }
                    for i in range(gpus)
                ],
            },
        },
    )


def _partitioned_slices(
    node_name: str, attributes: Mapping[str, Any], gpus: int, partitions: tuple[int, ...]
) -> tuple[KubeObject, ...]:
    """KEP-4815's partitionable GPUs: GPU ``i`` is the counter set ``gpu-<i>`` of ``milli:
    1000``; its devices are the whole GPU ``gpu-<i>`` (consuming 1000) and, for each share size
    ``m`` the trace asks for, ``1000 // m`` partitions ``gpu-<i>-share<m>-<j>`` (consuming
    ``m`` each, so that many shares of that size fit a GPU). Every device has the attribute
    ``milli``, its size, which the claim templates select on. The counter sets come first, in
    slices of 8, then the devices in slices of 64 (the API server's limits), one pool."""
    counter_sets = [
        {"name": f"gpu-{i}", "counters": {CAPACITY: {"value": str(WHOLE)}}} for i in range(gpus)
    ]
    devices: list[dict[str, Any]] = []
    for i in range(gpus):
        sizes = [(f"gpu-{i}", WHOLE)]
        sizes += [(f"gpu-{i}-share{m}-{j}", m) for m in partitions for j in range(WHOLE // m)]
        for name, size in sizes:
            devices.append(
                {
                    "name": name,
                    "attributes": {
                        **dict(attributes),
                        "index": {"int": i},
                        PARTITION_ATTRIBUTE: {"int": size},
                    },
                    "consumesCounters": [
                        {"counterSet": f"gpu-{i}", "counters": {CAPACITY: {"value": str(size)}}}
                    ],
                }
            )
    parts: list[tuple[str, dict[str, Any]]] = [
        ("counters", {"sharedCounters": counter_sets[k : k + _COUNTER_SETS_PER_SLICE]})
        for k in range(0, len(counter_sets), _COUNTER_SETS_PER_SLICE)
    ]
    parts += [
        ("devices", {"devices": devices[k : k + _COUNTER_DEVICES_PER_SLICE]})
        for k in range(0, len(devices), _COUNTER_DEVICES_PER_SLICE)
    ]
    pool = {"name": node_name, "generation": 1, "resourceSliceCount": len(parts)}
    return tuple(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-{DRIVER}-{what}-{k}"},
            "spec": {"driver": DRIVER, "nodeName": node_name, "pool": pool, **content},
        }
        for k, (what, content) in enumerate(parts)
    )


def _device_class() -> KubeObject:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DEVICE_CLASS},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }


# -- pods ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pod:
    """One row taken: its pod, the template it needs, when it arrives and goes."""

    row: _Row
    name: str
    arrive_ms: int
    runs_ms: int | None
    withdraw_ms: int | None  # a pending row's deletion_time
    pod: KubeObject
    template: KubeObject | None


class _PodReader:
    def __init__(
        self, path: str, models: frozenset[str], sharing: str, pending: str, arrivals: str
    ) -> None:
        self.path = path
        self.models = models
        self.sharing = sharing
        self.skip_pending = pending != WITHDRAW
        self.at_start = arrivals == AT_START
        self.shares: set[int] = set()  # the gpu_milli of the shares taken
        self.names: dict[str, int] = {}
        self.pods: list[_Pod] = []
        self.skipped: dict[str, int] = {}
        self.first_skip: dict[str, str] = {}

    def skip(self, row: _Row, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        self.first_skip.setdefault(reason, f"row {row.number}, {row.text('name')}")

    def read(self, row: _Row) -> None:
        name = row.text("name")
        if not _DNS_SUBDOMAIN.fullmatch(name):
            raise row.refuse(
                "name", f"{quote(name)} is not a pod name (lowercase letters, digits, '-', '.')"
            )
        if name in self.names:
            raise row.refuse("name", f"{quote(name)} repeats row {self.names[name]}")
        self.names[name] = row.number
        cpu, memory = row.count("cpu_milli"), row.count("memory_mib")
        gpus, milli = row.count("num_gpu"), row.count("gpu_milli")
        if milli > WHOLE:
            raise row.refuse("gpu_milli", f"{milli} is over 1000 (a whole GPU)")
        models = self.spec(row) if "gpu_spec" in row.fields else ()
        qos = row.text("qos") if "qos" in row.fields else None
        if qos is not None and qos not in QOS_PRIORITY:
            raise row.refuse("qos", f"{quote(qos)}: expected one of {', '.join(QOS_PRIORITY)}")
        if self.at_start:
            return self.take(row, name, cpu, memory, gpus, milli, models, qos, 0, None, None)
        phase = row.text("pod_phase")
        if phase not in PHASES:
            raise row.refuse("pod_phase", f"{quote(phase)}: expected one of {', '.join(PHASES)}")
        created = row.seconds("creation_time")
        if created is None:
            raise row.refuse("creation_time", "empty: every pod arrives at some time")
        deleted = row.seconds("deletion_time")
        scheduled = row.seconds("scheduled_time")
        if deleted is not None and deleted < created:
            raise row.refuse(
                "deletion_time",
                f"{deleted // 1000} is before creation_time {created // 1000}",
            )
        if scheduled is not None and scheduled < created:
            raise row.refuse(
                "scheduled_time",
                f"{scheduled // 1000} is before creation_time {created // 1000}",
            )
        if scheduled is not None and deleted is not None and deleted < scheduled:
            raise row.refuse(
                "deletion_time",
                f"{deleted // 1000} is before scheduled_time {scheduled // 1000}",
            )
        if scheduled is None:  # never scheduled in the trace: arrives, withdrawn if pending
            if self.skip_pending:
                return self.skip(row, SKIP_PENDING)
            runs, withdraw = None, deleted
        else:
            runs, withdraw = (None if deleted is None else deleted - scheduled), None
        return self.take(row, name, cpu, memory, gpus, milli, models, qos, created, runs, withdraw)

    def take(
        self,
        row: _Row,
        name: str,
        cpu: int,
        memory: int,
        gpus: int,
        milli: int,
        models: tuple[str, ...],
        qos: str | None,
        created: int,
        runs: int | None,
        withdraw: int | None,
    ) -> None:
        """The pod of a checked row, unless the mapping cannot take it (counted, not refused)."""
        if gpus >= 1 and milli == 0:
            return self.skip(row, SKIP_NO_MILLI)
        if gpus > 1 and milli < WHOLE:
            return self.skip(row, SKIP_MULTI_SHARE)
        if gpus == 0 and milli > 0:
            return self.skip(row, SKIP_MILLI_NO_GPU)
        if self.sharing == WHOLE_GPUS:
            milli = WHOLE  # a share asks its GPU whole
        template = _template(gpus, milli, models, self.sharing) if gpus else None
        if gpus and milli < WHOLE:
            self.shares.add(milli)
        pod = _pod(name, cpu, memory, qos, template)
        self.pods.append(_Pod(row, name, created, runs, withdraw, pod, template))
        return None

    def spec(self, row: _Row) -> tuple[str, ...]:
        """The models ``gpu_spec`` allows, sorted, each once (none: any model)."""
        text = row.text("gpu_spec")
        if text in _NO_SPEC:
            return ()
        models = sorted({model.strip() for model in text.split("|")})
        for model in models:
            if model not in self.models:
                known = ", ".join(sorted(self.models)) or "none"
                raise row.refuse(
                    "gpu_spec",
                    f"unknown GPU model {quote(model)}: the node list's models are {known}",
                )
        return tuple(models)

    def events(self) -> tuple[TraceEvent, ...]:
        """Arrivals in time order (ties in row order), each template created just before the
        first pod using it; a pending row's withdrawal after every arrival of its instant."""
        timed: list[tuple[int, int, int, TraceEvent]] = []
        created: set[str] = set()
        arrivals = sorted(self.pods, key=lambda p: (p.arrive_ms, p.row.number))
        for order, pod in enumerate(arrivals):
            template = pod.template
            line = pod.row.line
            if template is not None and template["metadata"]["name"] not in created:
                name = template["metadata"]["name"]
                created.add(name)
                event = TraceEvent(
                    pod.arrive_ms,
                    CREATE,
                    CLAIM_TEMPLATE_KIND,
                    f"{NAMESPACE}/{name}",
                    template,
                    None,
                    line,
                )
                timed.append((pod.arrive_ms, 0, 2 * order, event))
            key = f"{NAMESPACE}/{pod.name}"
            create = TraceEvent(pod.arrive_ms, CREATE, POD_KIND, key, pod.pod, pod.runs_ms, line)
            timed.append((pod.arrive_ms, 0, 2 * order + 1, create))
            if pod.withdraw_ms is not None:
                named = {
                    "apiVersion": "v1",
                    "kind": POD_KIND,
                    "metadata": {"name": pod.name, "namespace": NAMESPACE},
                }
                delete = TraceEvent(pod.withdraw_ms, DELETE, POD_KIND, key, named, None, line)
                timed.append((pod.withdraw_ms, 1, order, delete))
        timed.sort(key=lambda item: item[:3])
        return tuple(event for *_, event in timed)


def _template_name(gpus: int, milli: int, models: tuple[str, ...]) -> str:
    """``gpu-2``, ``gpu-share-460``, ``gpu-1-v100m16-v100m32``: what the claim asks, readable."""
    base = f"gpu-{gpus}" if milli == WHOLE else f"gpu-share-{milli}"
    labels = [re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-") for model in models]
    return "-".join([base, *labels])


def _template(gpus: int, milli: int, models: tuple[str, ...], sharing: str) -> KubeObject:
    exactly: dict[str, Any] = {
        "deviceClassName": DEVICE_CLASS,
        "allocationMode": "ExactCount",
        "count": gpus,
    }
    expressions = []
    if sharing == PARTITIONABLE:  # the devices of that size: whole GPUs or one partition
        expressions.append(f'device.attributes["{DRIVER}"].{PARTITION_ATTRIBUTE} == {milli}')
    elif milli < WHOLE:
        exactly["capacity"] = {"requests": {CAPACITY: str(milli)}}
    if models:
        listed = ",".join(f'"{model}"' for model in models)
        expressions.append(f'device.attributes["{DRIVER}"].model in [{listed}]')
    if expressions:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in expressions]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": CLAIM_TEMPLATE_KIND,
        "metadata": {"name": _template_name(gpus, milli, models), "namespace": NAMESPACE},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
    }


def _pod(
    name: str, cpu_milli: int, memory_mib: int, qos: str | None, template: KubeObject | None
) -> KubeObject:
    container: dict[str, Any] = {
        "name": "main",
        "image": "alibaba-gpu-v2023",
        "resources": {"requests": {"cpu": f"{cpu_milli}m", "memory": f"{memory_mib}Mi"}},
    }
    spec: dict[str, Any] = {"containers": [container], "restartPolicy": "Never"}  # a Job's
    if qos is not None:  # (without a qos column, --arrivals at-start: no priority)
        spec["priorityClassName"] = f"alibaba-{qos.lower()}"
        spec["priority"] = QOS_PRIORITY[qos]
    if template is not None:
        spec["resourceClaims"] = [
            {"name": "gpu", "resourceClaimTemplateName": template["metadata"]["name"]}
        ]
        container["resources"]["claims"] = [{"name": "gpu"}]
    return {
        "apiVersion": "v1",
        "kind": POD_KIND,
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": generated_uid(POD_KIND, NAMESPACE, name),
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": name,
                    "uid": generated_uid("Job", NAMESPACE, name),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }
