"""The sweep file: read, checked field by field, and its points as run settings.

A sweep file (YAML)::

    sweep: gpu-shapes            # the sweep's name: its points are <sweep>-<index>
    from: cluster                # the base cluster (kubectl dumps), relative to the file
    nodeGroups: groups.yaml      # optional: the base node groups (else the nodes' labels)
    cost: {gpu: 3.2}             # optional: cost per node per hour of base groups
    seed: 0
    axes:                        # each a list of variants; the points are the cross product
      nodeGroups:                # (the last axis varies fastest), unless `points` lists them
        - {name: base}
        - name: gpu4
          add: [{name: gpu4, node: {...}, slices: [...], maxSize: 4, cost: 1.7}]
          remove: [gpu]
          change: [{name: cpu, maxSize: 2}]
      workloads:
        - {name: none}
        - {name: training, add: [training.yaml]}
      expander: [least-waste, most-pods]
      scaleDownUtilizationThreshold: [0.5, 0.7]
      featureGates: ["", "DRAPrioritizedList=false"]
    points:                      # optional: these points only, each naming a variant per axis
      - {nodeGroups: gpu4, expander: most-pods}   # (an axis left out: its first variant)

A timeline sweep (``scenario: timeline``; the default, ``autoscale``, keeps every older file's
meaning) runs ``drasnap simulate timeline`` at each point. It takes a trace, and any timeline
setting (and the cluster-autoscaler's other flags) by its option's name in camelCase, at the
top level for every point or as an axis::

    sweep: unneeded
    scenario: timeline
    from: cluster                # optional with an Alibaba trace: its node list is the cluster
    trace: gen:rate=2/m,until=1h,shape=cpu:1/mem:2Gi/gpu:1,runs=20m
                                 # or a JSON Lines file, or alibaba-gpu-v2023:PODS.csv (files
    # traceNodes: nodes.csv      #  relative to this file; traceNodes with Alibaba's)
    until: 3h
    cost: {gpu: 3.2}             # reaches each group's cost: the timeline's cluster_cost
    scanInterval: 30s
    axes:
      scaleDownUnneededTime: [10m, 2m]
      schedulerScoring: [LeastAllocated, MostAllocated]

Errors in the file are :class:`~drasnap.snapshot.errors.SweepFileError`, naming the field
(``axes.expander[1]``, ``axes.scaleDownUnneededTime[1]``), a setting's value refused by the
settings' own checks (:meth:`Settings.check`).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from drasnap.snapshot.errors import (
    FeatureGateError,
    ManifestError,
    ScenarioError,
    SweepFileError,
    one_line,
)
from drasnap.snapshot.ingest.limits import load_yaml
from drasnap.snapshot.k8s.features import parse_feature_gates, resolve_feature_gates
from drasnap.snapshot.simulation.autoscale_config import TIMELINE_GROUP_FIELDS, files_digest
from drasnap.snapshot.simulation.inputs import source_digest
from drasnap.snapshot.simulation.settings import (
    ALIBABA,
    CA_FLAGS,
    TIMELINE_CHOICES,
    TIMELINE_FLAGS,
    TIMELINE_SETTINGS,
    Settings,
)

# SweepFileError lives in snapshot.errors' tree; it is named here too, as the file's error.
__all__ = [
    "AXES",
    "MAX_POINTS",
    "SCENARIOS",
    "SETTING_AXES",
    "Point",
    "Sweep",
    "SweepFileError",
    "load_sweep",
]

#: The scenarios a sweep runs at each point (``scenario:``, the first the default).
SCENARIOS = ("autoscale", "timeline")


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(word.capitalize() for word in rest)


#: The settings a sweep file gives by their option's name in camelCase, at the top level or as
#: an axis: field -> setting. The cluster-autoscaler's flags (both scenarios), then the
#: timeline's (``scenario: timeline`` only), but the trace, which is the sweep's workload.
SETTING_AXES: dict[str, str] = {
    _camel(name): name
    for name in (*CA_FLAGS, *TIMELINE_SETTINGS)
    if name not in ("trace", "trace_nodes")
}
_TIMELINE_ONLY = frozenset(_camel(name) for name in TIMELINE_SETTINGS)
#: The axes a sweep may vary, in the order a point's settings show them.
AXES = (
    "nodeGroups",
    "workloads",
    "expander",
    "scaleDownUtilizationThreshold",
    "featureGates",
    *SETTING_AXES,
)
_TOP = {
    "sweep",
    "scenario",
    "from",
    "nodeGroups",
    "cost",
    "seed",
    "axes",
    "points",
    "trace",
    "traceNodes",
    *SETTING_AXES,
}
_GROUP_FIELDS = {"name", "minSize", "maxSize", "node", "slices", "cost"}
_DEFAULTS = Settings("timeline")
#: The largest sweep: a Job has at most 100,000 completions in Indexed mode.
MAX_POINTS = 100_000


@dataclass(frozen=True)
class Point:
    """One point of a sweep: its index, name, variant per axis, and the run's settings."""

    index: int
    name: str
    variants: dict[str, str]
    settings: Settings
    costs: dict[str, float]


@dataclass
class Sweep:
    """A sweep file, read and checked (module docstring)."""

    name: str
    path: Path
    source: Path | None  # None: the trace brings the cluster (Alibaba's)
    node_groups_file: Path | None
    seed: int
    costs: dict[str, float]
    axes: dict[str, list[tuple[str, Any]]]  # axis -> [(label, value)]
    chosen: list[dict[str, int]]  # per point: axis -> variant number
    files: list[Path] = field(default_factory=list)  # every file the sweep reads, for a Job
    scenario: str = "autoscale"
    # the settings every point shares (the trace, the top level's SETTING_AXES), by setting
    settings: dict[str, Any] = field(default_factory=dict)
    trace_files: list[Path] = field(default_factory=list)  # the trace's files (in the digest)

    def __len__(self) -> int:
        return len(self.chosen)

    def point(self, index: int) -> Point:
        """Point ``index`` (0 <= index < len(self))."""
        choice = self.chosen[index]
        variants: dict[str, str] = {}
        costs = dict(self.costs)
        extra: list[str] = []
        changes: dict[str, Any] = {}
        kwargs: dict[str, Any] = dict(self.settings)
        for axis, options in self.axes.items():
            label, value = options[choice.get(axis, 0)]
            variants[axis] = label
            if axis == "nodeGroups":
                changes = {k: value[k] for k in ("add", "remove", "change") if value.get(k)}
                for entry in [*(value.get("add") or ()), *(value.get("change") or ())]:
                    if "cost" in entry:
                        costs[entry["name"]] = float(entry["cost"])
                for name in value.get("remove") or ():
                    costs.pop(name, None)
            elif axis == "workloads":
                extra = [str(p) for p in value]
            elif axis == "expander":
                kwargs["expander"] = value
            elif axis == "scaleDownUtilizationThreshold":
                kwargs["scale_down_utilization_threshold"] = float(value)
            elif axis == "featureGates":
                kwargs["feature_gates"] = value
            else:  # a setting (SETTING_AXES)
                kwargs[SETTING_AXES[axis]] = value
        stripped = {
            op: [{k: v for k, v in e.items() if k != "cost"} for e in entries]
            if op != "remove"
            else list(entries)
            for op, entries in changes.items()
        }
        groups_file = str(self.node_groups_file) if self.node_groups_file else None
        base = source_digest(self.source) if self.source is not None else ""
        digest = files_digest(base, groups_file, *extra, *map(str, self.trace_files))
        name = f"{self.name}-{index}"
        settings = Settings(
            scenario=self.scenario,
            seed=self.seed,
            source=str(self.source) if self.source is not None else None,
            source_digest=digest,
            node_groups_file=groups_file,
            extra_manifests=tuple(extra),
            sweep={
                "sweep": self.name,
                "index": index,
                "variants": variants,
                "where": f"{self.path.name}: point {name} ({self._where(variants)})",
                "node_groups": stripped,
                "cost": dict(sorted(costs.items())),
            },
            **kwargs,
        )
        return Point(index, name, variants, settings, costs)

    def _where(self, variants: dict[str, str]) -> str:
        """What names a point's variant in its errors: its node groups' (as autoscale sweeps
        always said, so their points' records stay), else every axis's (a timeline's)."""
        if "nodeGroups" in variants or self.scenario == "autoscale":
            return variants.get("nodeGroups", "")
        return ", ".join(f"{axis}={label}" for axis, label in variants.items())

    def points(self) -> Iterator[Point]:
        for index in range(len(self)):
            yield self.point(index)


def _fail(path: Path, where: str, what: str) -> SweepFileError:
    return SweepFileError(f"{path}: {where}: {what}" if where else f"{path}: {what}")


def _file(path: Path, where: str, value: Any, *, directory: bool = False) -> Path:
    if not isinstance(value, str) or not value:
        raise _fail(path, where, "expected a path (relative to the sweep file)")
    found = (path.parent / value).resolve()
    if directory and not found.is_dir():
        raise _fail(path, where, f"{value!r} is not a folder")
    if not directory and not found.is_file():
        raise _fail(path, where, f"{value!r} is not a file")
    return found


def _name(path: Path, where: str, value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > 40:
        raise _fail(path, where, "expected a name (1 to 40 characters)")
    if not all(c.isalnum() or c in "-." for c in value) or not value[0].isalnum():
        raise _fail(path, where, f"{value!r}: letters, digits, '-' and '.' only")
    return value.lower()


def _cost(path: Path, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise _fail(path, where, "expected a cost per node per hour (a number >= 0)")
    return float(value)


def _group_entries(
    path: Path, where: str, value: Any, *, change: bool, timeline: bool
) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise _fail(path, where, "expected a list of node groups")
    fields = _GROUP_FIELDS | (TIMELINE_GROUP_FIELDS if timeline else set())
    for i, entry in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise _fail(path, at, "expected a node group: a mapping with a name")
        unknown = sorted(set(entry) - fields)
        if unknown:
            raise _fail(path, at, f"unknown field(s) {', '.join(unknown)}")
        if not change and "node" not in entry:
            raise _fail(path, at, "node: required (a node of the base cluster, or a Node)")
        if "cost" in entry:
            _cost(path, f"{at}.cost", entry["cost"])
    return list(value)


def _variants(path: Path, axis: str, values: Any, base: Settings) -> list[tuple[str, Any]]:
    """The variants of ``axis``, each checked (a setting's against ``base``, the settings
    every point shares)."""
    where = f"axes.{axis}"
    timeline = base.scenario == "timeline"
    if not isinstance(values, list) or not values:
        raise _fail(path, where, "expected a list of variants (at least one)")
    out: list[tuple[str, Any]] = []
    for i, value in enumerate(values):
        at = f"{where}[{i}]"
        if axis in ("nodeGroups", "workloads"):
            if not isinstance(value, dict):
                raise _fail(path, at, "expected a mapping with a name")
            label = _name(path, f"{at}.name", value.get("name"))
            allowed = (
                {"name", "add", "remove", "change"} if axis == "nodeGroups" else {"name", "add"}
            )
            unknown = sorted(set(value) - allowed)
            if unknown:
                raise _fail(path, at, f"unknown field(s) {', '.join(unknown)}")
            if axis == "workloads":
                files = value.get("add") or []
                if not isinstance(files, list):
                    raise _fail(path, f"{at}.add", "expected a list of manifest files")
                out.append((label, [_file(path, f"{at}.add[{j}]", f) for j, f in enumerate(files)]))
                continue
            removed = value.get("remove") or []
            if not isinstance(removed, list) or not all(isinstance(n, str) for n in removed):
                raise _fail(path, f"{at}.remove", "expected a list of node-group names")
            parsed = {
                "add": _group_entries(
                    path, f"{at}.add", value.get("add") or [], change=False, timeline=timeline
                ),
                "change": _group_entries(
                    path, f"{at}.change", value.get("change") or [], change=True, timeline=timeline
                ),
                "remove": removed,
            }
            out.append((label, parsed))
        elif axis == "expander":
            if not isinstance(value, str) or not value:
                raise _fail(path, at, "expected an expander (least-waste, most-pods, ...)")
            out.append((value, value))
        elif axis == "scaleDownUtilizationThreshold":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise _fail(path, at, "expected a number between 0 and 1")
            if not 0 <= value <= 1:
                raise _fail(path, at, f"must be between 0 and 1, got {value}")
            out.append((f"{value:g}", float(value)))
        elif axis in SETTING_AXES:
            value = _setting(path, at, axis, value)
            _check(path, at, [axis], dataclasses.replace(base, **{SETTING_AXES[axis]: value}))
            out.append((_label(value), value))
        else:  # featureGates
            if isinstance(value, dict):
                value = ",".join(f"{k}={str(v).lower()}" for k, v in value.items())
            if not isinstance(value, str):
                raise _fail(path, at, "expected GATE=BOOL,... (or a mapping of gates)")
            try:
                gates = resolve_feature_gates(parse_feature_gates(value), enforce_locks=True)
            except FeatureGateError as exc:
                raise _fail(path, at, str(exc)) from exc
            out.append((value or "defaults", gates))
    labels = [label for label, _ in out]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise _fail(path, where, f"variant(s) given twice: {', '.join(twice)}")
    return out


def _label(value: Any) -> str:
    """A setting's variant as its label (and as a point names it: ``points:``)."""
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


def _option(field_name: str) -> str:
    return "--" + SETTING_AXES[field_name].replace("_", "-")


def _setting(path: Path, where: str, field_name: str, value: Any) -> Any:
    """``value`` of the setting ``field_name`` if of its type (its values: :func:`_check`)."""
    setting = SETTING_AXES[field_name]
    default = getattr(_DEFAULTS, setting)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise _fail(path, where, "expected true or false")
    elif isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(path, where, "expected a whole number")
    elif not isinstance(value, str) or not value:
        if setting in TIMELINE_CHOICES:
            expected = " or ".join(TIMELINE_CHOICES[setting])
        elif setting in TIMELINE_FLAGS or setting == "until":
            expected = "a duration such as 30s, 10m or 1h30m"
        else:
            expected = f"text such as {default!r} (quoted)"
        raise _fail(path, where, f"expected {expected}")
    return value


def _check(path: Path, where: str | None, fields: list[str], settings: Settings) -> None:
    """The settings' own checks (:meth:`Settings.check`), their error said at ``where`` (None:
    at the field among ``fields`` whose option it names), without the option's name when it
    leads the message (the field is named instead)."""
    try:
        settings.check()
    except ScenarioError as exc:
        text = str(exc)
        named = next((f for f in fields if _option(f) in text), None)
        if named is not None and text.startswith(f"{_option(named)}: "):
            text = text[len(_option(named)) + 2 :]
        at = where if where is not None else (named or "")
        raise _fail(path, at, text) from exc


def _trace(path: Path, data: dict[str, Any]) -> tuple[dict[str, Any], list[Path]]:
    """A timeline sweep's trace (``trace``, ``traceNodes``) as settings, and its files."""
    trace = data.get("trace")
    if not isinstance(trace, str) or not trace:
        raise _fail(
            path,
            "trace",
            "required with scenario: timeline: a JSON Lines file (relative to the sweep "
            f"file), gen:SPEC or {ALIBABA}PODS.csv",
        )
    files: list[Path] = []
    if trace.startswith("gen:"):
        value = trace
    elif trace.startswith(ALIBABA):
        files.append(_file(path, "trace", trace[len(ALIBABA) :]))
        value = ALIBABA + str(files[0])
    else:
        files.append(_file(path, "trace", trace))
        value = str(files[0])
    nodes = None
    if data.get("traceNodes") is not None:
        if not trace.startswith(ALIBABA):
            raise _fail(path, "traceNodes", f"goes with trace: {ALIBABA}PODS.csv")
        found = _file(path, "traceNodes", data["traceNodes"])
        files.append(found)
        nodes = str(found)
    return {"trace": value, "trace_nodes": nodes}, files


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Read and check a sweep file (module docstring).

    Raises:
        SweepFileError: the file is unreadable, not YAML, or a field is wrong (named).
    """
    path = Path(path).resolve()
    try:
        data = load_yaml(path)
    except ManifestError as exc:  # unreadable, too large, an alias bomb, several documents
        raise SweepFileError(str(exc)) from exc
    except yaml.YAMLError as exc:
        raise SweepFileError(f"{path}: not YAML: {one_line(exc)}") from exc
    if not isinstance(data, dict):
        raise _fail(path, "", "expected a mapping (sweep, from, axes, ...)")
    unknown = sorted(set(map(str, data)) - _TOP)
    if unknown:
        raise _fail(path, "", f"unknown field(s) {', '.join(unknown)}")
    name = _name(path, "sweep", data.get("sweep"))
    scenario = data.get("scenario", SCENARIOS[0])
    if scenario not in SCENARIOS:
        raise _fail(path, "scenario", f"{scenario!r}: choose {' or '.join(SCENARIOS)}")
    settings: dict[str, Any] = {}
    trace_files: list[Path] = []
    if scenario == "timeline":
        settings, trace_files = _trace(path, data)
    else:
        given = sorted((_TIMELINE_ONLY | {"trace", "traceNodes"}) & set(data))
        if given:
            raise _fail(path, given[0], "goes with scenario: timeline")
    source = None
    if data.get("from") is not None or not str(settings.get("trace")).startswith(ALIBABA):
        source = _file(path, "from", data.get("from"), directory=True)
    files = (
        sorted(p for p in source.rglob("*") if p.is_file() and p.suffix in _MANIFEST)
        if source is not None
        else []
    )
    files += trace_files
    groups_file = None
    if data.get("nodeGroups") is not None:
        groups_file = _file(path, "nodeGroups", data["nodeGroups"])
        files.append(groups_file)
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise _fail(path, "seed", "expected a whole number >= 0")
    costs_in = data.get("cost") or {}
    if not isinstance(costs_in, dict):
        raise _fail(path, "cost", "expected node group: cost per node per hour")
    costs = {str(g): _cost(path, f"cost.{g}", c) for g, c in costs_in.items()}
    for field_name in SETTING_AXES:
        if field_name in data:
            settings[SETTING_AXES[field_name]] = _setting(
                path, field_name, field_name, data[field_name]
            )
    base = Settings(
        scenario,
        seed=seed,
        source=str(source) if source is not None else None,
        node_groups_file=str(groups_file) if groups_file else None,
        **settings,
    )
    _check(path, None, [f for f in SETTING_AXES if f in data], base)
    axes_in = data.get("axes")
    if not isinstance(axes_in, dict) or not axes_in:
        raise _fail(path, "axes", f"expected a mapping of axes ({', '.join(AXES)})")
    axes: dict[str, list[tuple[str, Any]]] = {}
    for axis, values in axes_in.items():
        if axis in ("trace", "traceNodes"):
            raise _fail(path, f"axes.{axis}", "the trace is the sweep's: give it at the top level")
        if axis not in AXES:
            raise _fail(path, f"axes.{axis}", f"unknown axis: choose from {', '.join(AXES)}")
        if axis in _TIMELINE_ONLY and scenario != "timeline":
            raise _fail(path, f"axes.{axis}", "goes with scenario: timeline")
        if axis == "workloads" and source is None:
            raise _fail(path, "axes.workloads", "adds manifests to from:'s: give from:")
        axes[axis] = _variants(path, axis, values, base)
    for _label, value in axes.get("workloads", []):
        files += [p for p in value if p not in files]
    chosen = _points(path, axes, data.get("points"))
    if len(chosen) > MAX_POINTS:
        raise _fail(path, "axes", f"{len(chosen):,} points: at most {MAX_POINTS:,}")
    sweep = Sweep(
        name,
        path,
        source,
        groups_file,
        seed,
        costs,
        axes,
        chosen,
        files,
        scenario=scenario,
        settings=settings,
        trace_files=trace_files,
    )
    for point in (sweep.point(0),):  # the settings every point shares are checked once
        try:
            point.settings.check()
        except ScenarioError as exc:
            raise _fail(path, "axes", str(exc)) from exc
    for axis, options in axes.items():
        if axis == "expander":
            for i, (label, _) in enumerate(options):
                try:
                    Settings("autoscale", source=".", expander=label).check()
                except ScenarioError as exc:
                    raise _fail(path, f"axes.expander[{i}]", str(exc)) from exc
    return sweep


_MANIFEST = (".yaml", ".yml", ".json")


def _points(
    path: Path, axes: dict[str, list[tuple[str, Any]]], points: Any
) -> list[dict[str, int]]:
    if points is None:
        ranges = [range(len(options)) for options in axes.values()]
        return [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*ranges)]
    if not isinstance(points, list) or not points:
        raise _fail(path, "points", "expected a list of points (axis: variant)")
    chosen: list[dict[str, int]] = []
    for i, point in enumerate(points):
        at = f"points[{i}]"
        if not isinstance(point, dict):
            raise _fail(path, at, "expected a mapping of axis to variant")
        choice: dict[str, int] = {}
        for axis, label in point.items():
            if axis not in axes:
                raise _fail(path, f"{at}.{axis}", "no such axis under axes")
            labels = [lab for lab, _ in axes[axis]]
            text = _label(label)
            if text not in labels:
                raise _fail(path, f"{at}.{axis}", f"no variant {label!r} ({', '.join(labels)})")
            choice[axis] = labels.index(text)
        chosen.append(choice)
    return chosen
