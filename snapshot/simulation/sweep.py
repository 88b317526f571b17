"""What-if sweeps: many autoscale runs of one cluster, each with other node groups, workloads,
expander, scale-down threshold or feature gates, and one table comparing them.

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

Each point is one ``autoscale`` run named ``<sweep>-<index>`` (index from 0, stable for a
given file), its settings recorded (the sweep, index and variants among them), so
``drasnap runs`` lists it and ``--resume`` semantics hold: a point is started, continued from
its last checkpoint, or (finished) reported, never run twice to its end; the store's writer
lock keeps two workers off one point. A finished point keeps a summary, ``SweepPoint/summary``
(:func:`point_summary`), which ``drasnap compare`` and the SQL view ``sweep_results`` read.

Errors in the file are :class:`SweepFileError`, naming the field (``axes.expander[1]``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path
from typing import Any

import yaml
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import FeatureGateError, ScenarioError
from drasnap.snapshot.k8s.features import parse_feature_gates, resolve_feature_gates
from drasnap.snapshot.simulation.autoscale import decisions_so_far
from drasnap.snapshot.simulation.autoscale_config import files_digest
from drasnap.snapshot.simulation.inputs import source_digest
from drasnap.snapshot.simulation.lifecycle import RunSession
from drasnap.snapshot.simulation.plan import PLAN_KEY, SIM_KIND
from drasnap.snapshot.simulation.runner import prepare
from drasnap.snapshot.simulation.runs import RunStatus, find_run, list_runs
from drasnap.snapshot.simulation.settings import Settings
from drasnap.store import Store, StoreLockedError, list_stores

__all__ = [
    "AXES",
    "SUMMARY_KEY",
    "SUMMARY_KIND",
    "Point",
    "PointResult",
    "Sweep",
    "SweepFileError",
    "compare_rows",
    "job_manifests",
    "load_sweep",
    "point_summary",
    "run_point",
    "run_sweep",
]

SUMMARY_KIND = "SweepPoint"
SUMMARY_KEY = "summary"
#: The axes a sweep may vary, in the order a point's settings show them.
AXES = ("nodeGroups", "workloads", "expander", "scaleDownUtilizationThreshold", "featureGates")
_TOP = {"sweep", "from", "nodeGroups", "cost", "seed", "axes", "points"}
_GROUP_FIELDS = {"name", "minSize", "maxSize", "node", "slices", "cost"}
#: The largest sweep: a Job has at most 100,000 completions in Indexed mode.
MAX_POINTS = 100_000
#: Workers start as forks of the sweep (its modules already imported: a spawned worker spent
#: more time importing than a small point takes), where the platform has fork.
_START_METHOD = "fork" if "fork" in get_all_start_methods() else "spawn"


class SweepFileError(ScenarioError):
    """The sweep file is wrong; the message names the file and the field."""


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
    source: Path
    node_groups_file: Path | None
    seed: int
    costs: dict[str, float]
    axes: dict[str, list[tuple[str, Any]]]  # axis -> [(label, value)]
    chosen: list[dict[str, int]]  # per point: axis -> variant number
    files: list[Path] = field(default_factory=list)  # every file the sweep reads, for a Job

    def __len__(self) -> int:
        return len(self.chosen)

    def point(self, index: int) -> Point:
        """Point ``index`` (0 <= index < len(self))."""
        choice = self.chosen[index]
        variants: dict[str, str] = {}
        costs = dict(self.costs)
        extra: list[str] = []
        changes: dict[str, Any] = {}
        kwargs: dict[str, Any] = {}
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
        stripped = {
            op: [{k: v for k, v in e.items() if k != "cost"} for e in entries]
            if op != "remove"
            else list(entries)
            for op, entries in changes.items()
        }
        groups_file = str(self.node_groups_file) if self.node_groups_file else None
        digest = files_digest(source_digest(self.source), groups_file, *extra)
        name = f"{self.name}-{index}"
        settings = Settings(
            scenario="autoscale",
            seed=self.seed,
            source=str(self.source),
            source_digest=digest,
            node_groups_file=groups_file,
            extra_manifests=tuple(extra),
            sweep={
                "sweep": self.name,
                "index": index,
                "variants": variants,
                "where": f"{self.path.name}: point {name} ({variants.get('nodeGroups', '')})",
                "node_groups": stripped,
                "cost": dict(sorted(costs.items())),
            },
            **kwargs,
        )
        return Point(index, name, variants, settings, costs)

    def points(self) -> Iterator[Point]:
        for index in range(len(self)):
            yield self.point(index)


# -- the file -------------------------------------------------------------------------------


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


def _group_entries(path: Path, where: str, value: Any, *, change: bool) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise _fail(path, where, "expected a list of node groups")
    for i, entry in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise _fail(path, at, "expected a node group: a mapping with a name")
        unknown = sorted(set(entry) - _GROUP_FIELDS)
        if unknown:
            raise _fail(path, at, f"unknown field(s) {', '.join(unknown)}")
        if not change and "node" not in entry:
            raise _fail(path, at, "node: required (a node of the base cluster, or a Node)")
        if "cost" in entry:
            _cost(path, f"{at}.cost", entry["cost"])
    return list(value)


def _variants(path: Path, axis: str, values: Any) -> list[tuple[str, Any]]:
    where = f"axes.{axis}"
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
                "add": _group_entries(path, f"{at}.add", value.get("add") or [], change=False),
                "change": _group_entries(
                    path, f"{at}.change", value.get("change") or [], change=True
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


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Read and check a sweep file (module docstring).

    Raises:
        SweepFileError: the file is unreadable, not YAML, or a field is wrong (named).
    """
    path = Path(path).resolve()
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise SweepFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise SweepFileError(f"{path}: not YAML: {' '.join(str(exc).split())}") from exc
    if not isinstance(data, dict):
        raise _fail(path, "", "expected a mapping (sweep, from, axes, ...)")
    unknown = sorted(set(map(str, data)) - _TOP)
    if unknown:
        raise _fail(path, "", f"unknown field(s) {', '.join(unknown)}")
    name = _name(path, "sweep", data.get("sweep"))
    source = _file(path, "from", data.get("from"), directory=True)
    files = sorted(p for p in source.rglob("*") if p.is_file() and p.suffix in _MANIFEST)
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
    axes_in = data.get("axes")
    if not isinstance(axes_in, dict) or not axes_in:
        raise _fail(path, "axes", f"expected a mapping of axes ({', '.join(AXES)})")
    axes: dict[str, list[tuple[str, Any]]] = {}
    for axis, values in axes_in.items():
        if axis not in AXES:
            raise _fail(path, f"axes.{axis}", f"unknown axis: choose from {', '.join(AXES)}")
        axes[axis] = _variants(path, axis, values)
    for _label, value in axes.get("workloads", []):
        files += [p for p in value if p not in files]
    chosen = _points(path, axes, data.get("points"))
    if len(chosen) > MAX_POINTS:
        raise _fail(path, "axes", f"{len(chosen):,} points: at most {MAX_POINTS:,}")
    sweep = Sweep(name, path, source, groups_file, seed, costs, axes, chosen, files)
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
            text = f"{label:g}" if isinstance(label, float) else str(label)
            if text not in labels:
                raise _fail(path, f"{at}.{axis}", f"no variant {label!r} ({', '.join(labels)})")
            choice[axis] = labels.index(text)
        chosen.append(choice)
    return chosen


# -- one point ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PointResult:
    """What running (or finding) a point gave."""

    index: int
    name: str
    status: str  # ran, resumed, finished (found finished), busy (another process runs it)
    seconds: float
    summary: dict[str, Any] | None


def point_summary(cluster: ClusterSnapshot, sweep: dict[str, Any] | None = None) -> dict[str, Any]:
    """The comparison row of a finished autoscale run held by ``cluster``'s store."""
    store = cluster.store
    found = decisions_so_far(store)
    plan = store.get(SIM_KIND, PLAN_KEY)
    if found is None or plan is None:
        raise ScenarioError("not an autoscale run")
    sweep = sweep if sweep is not None else (plan["settings"].get("sweep") or {})
    costs: dict[str, float] = dict(sweep.get("cost") or {})
    added: dict[str, int] = dict(found["added"])
    removed_by_group = {g: len(n) for g, n in found["removed_by_group"].items()}
    reasons = Counter(found["unschedulable"].values())
    cost = None
    if costs:
        sizes = plan.get("sizes") or {}
        cost = round(
            sum(
                price * (sizes.get(g, 0) + added.get(g, 0) - removed_by_group.get(g, 0))
                for g, price in costs.items()
            ),
            6,
        )
    return {
        "sweep": sweep.get("sweep"),
        "index": sweep.get("index"),
        "variants": dict(sweep.get("variants") or {}),
        "settings": _settings_shown(plan["settings"]),
        "nodes_added": sum(added.values()),
        "added": added,
        "pods_pending": len(found["unschedulable"]),
        "main_reason": reasons.most_common(1)[0][0] if reasons else None,
        "nodes_removed": len(found["removed"]),
        "device_utilization": device_utilization(cluster),
        "cost_per_hour": cost,
    }


def _settings_shown(settings: dict[str, Any]) -> dict[str, str]:
    gates = resolve_feature_gates()
    changed = ",".join(
        f"{g}={str(v).lower()}"
        for g, v in sorted((settings.get("feature_gates") or {}).items())
        if gates.get(g) != v
    )
    groups = settings.get("node_groups_file")
    return {
        "expander": str(settings.get("expander")),
        "scaleDownUtilizationThreshold": f"{settings.get('scale_down_utilization_threshold'):g}",
        "featureGates": changed or "defaults",
        "nodeGroups": Path(groups).name if groups else "labels",
    }


def device_utilization(cluster: ClusterSnapshot) -> float | None:
    """The mean, over the nodes with devices, of each node's device utilization (its most used
    pool, as the cluster-autoscaler measures it); None when no node has devices."""
    from drasnap.snapshot.autoscaler.utilization import UtilizationError, node_utilization

    values = []
    for node in cluster.node_names():
        if not cluster.dra.node_resource_slices(node):
            continue
        try:
            values.append(node_utilization(cluster, node).dra)
        except UtilizationError:
            continue
    return round(sum(values) / len(values), 4) if values else None


def run_point(db: str, point: Point) -> PointResult:
    """Start, continue or report ``point`` in ``db`` and keep its summary.

    Raises:
        ScenarioError, RunFailedError: as ``simulate`` does.
        store.StoreLockedError: another process runs the point.
    """
    started = time.monotonic()
    before = find_run(db, point.name)
    # No writer process: a point is small, and its start would cost more than it saves.
    session = RunSession(db, point.settings, name=point.name, resume=True, write_behind=False)
    with session:
        session.run()
        summary = session.keep(
            SUMMARY_KIND, SUMMARY_KEY, lambda cluster: point_summary(cluster, point.settings.sweep)
        )
    if before is None or before.status == RunStatus.EMPTY:
        status = "ran"
    else:
        status = "finished" if before.status == RunStatus.FINISHED else "resumed"
    return PointResult(point.index, point.name, status, time.monotonic() - started, summary)


def _worker(db: str, path: str, index: int) -> PointResult:
    sweep = load_sweep(path)
    try:
        return run_point(db, sweep.point(index))
    except StoreLockedError:
        return PointResult(index, sweep.point(index).name, "busy", 0.0, None)


def finished_points(db: str, sweep: Sweep) -> set[int]:
    """The indices of ``sweep``'s points ``db`` holds finished with their summary."""
    done = set()
    names = {f"{sweep.name}-{i}": i for i in range(len(sweep))}
    for run in list_runs(db) if list_stores(db, missing_ok=True) else []:
        index = names.get(run.name)
        if index is None or run.status != RunStatus.FINISHED:
            continue
        with Store.open(db, name=run.name, readonly=True, cache_size=1) as store:
            if store.get(SUMMARY_KIND, SUMMARY_KEY) is not None:
                done.add(index)
    return done


def check_points(sweep: Sweep, indices: list[int]) -> None:
    """Build each point's starting cluster, so a wrong variant is said before any run starts.

    Raises:
        SweepFileError: a point's inputs do not fit (named).
    """
    seen: set[str] = set()
    for index in indices:
        point = sweep.point(index)
        key = json.dumps(
            [
                point.settings.sweep and point.settings.sweep["node_groups"],
                point.settings.extra_manifests,
            ],
            sort_keys=True,
        )
        if key in seen:
            continue
        seen.add(key)
        try:
            prepare(point.settings)
        except ScenarioError as exc:
            raise SweepFileError(str(exc)) from exc


def run_sweep(
    db: str,
    sweep: Sweep,
    *,
    workers: int,
    report: Callable[[PointResult, int, int], None] = lambda _r, _done, _total: None,
    started: Callable[[Point], None] = lambda _p: None,
    skipped: Callable[[int], None] = lambda _count: None,
) -> list[PointResult]:
    """Run every point of ``sweep`` not finished in ``db``, ``workers`` at a time.

    ``report(result, done, total)`` is called as each point ends (``done`` counts the points
    found finished too). Points found finished are skipped (status ``finished``; ``skipped``
    is told how many).

    Raises:
        concurrent.futures.process.BrokenProcessPool: a worker died (a rerun continues).
    """
    done_before = finished_points(db, sweep)
    todo = [i for i in range(len(sweep)) if i not in done_before]
    if done_before:
        skipped(len(done_before))
    check_points(sweep, todo)
    total = len(sweep)
    results = [
        PointResult(i, f"{sweep.name}-{i}", "finished", 0.0, None) for i in sorted(done_before)
    ]
    count = len(results)
    if workers <= 1 or len(todo) <= 1:
        for index in todo:
            point = sweep.point(index)
            started(point)
            result = run_point(db, point)
            results.append(result)
            count += 1
            report(result, count, total)
        return sorted(results, key=lambda r: r.index)
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context(_START_METHOD)) as pool:
        pending: dict[Future[PointResult], int] = {}
        queue = list(todo)
        try:
            while queue or pending:
                while queue and len(pending) < workers:
                    index = queue.pop(0)
                    started(sweep.point(index))
                    pending[pool.submit(_worker, db, str(sweep.path), index)] = index
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    del pending[future]
                    result = future.result()
                    results.append(result)
                    count += 1
                    report(result, count, total)
        except BrokenProcessPool:
            # A worker died. The executor ends the others with SIGTERM, which a point's run
            # takes as "stop after this step", and its shutdown then waits for them (seen to
            # hang). Kill them: their points resume from their checkpoints on a rerun.
            for process in list((pool._processes or {}).values()):
                process.kill()
            raise
    return sorted(results, key=lambda r: r.index)


# -- comparing ------------------------------------------------------------------------------


def compare_rows(
    db: str, *, sweep: str | None = None, names: list[str] | None = None
) -> list[dict[str, Any]]:
    """One row per finished autoscale run: the points of ``sweep``, or the runs ``names``
    (a run without a summary, e.g. one ``drasnap simulate autoscale`` ran, is summarised here).

    Raises:
        ScenarioError: no such sweep, or a named run that is missing or no finished autoscale run.
        store.NotADatabaseError: ``db`` is not a drasnap database.
    """
    runs = {r.name: r for r in list_runs(db)}
    if names:
        chosen = []
        for name in names:
            run = runs.get(name)
            if run is None:
                raise ScenarioError(f"no run {name!r} in {db} (drasnap runs lists them)")
            if run.scenario != "autoscale" or run.status != RunStatus.FINISHED:
                raise ScenarioError(
                    f"run {name!r} is {run.status}"
                    + (f" ({run.scenario})" if run.scenario != "autoscale" else "")
                    + ": compare reads finished autoscale runs"
                )
            chosen.append(name)
    else:
        points = {
            r.name: (r.settings or {})["sweep"]
            for r in runs.values()
            if (r.settings or {}).get("sweep") and r.status == RunStatus.FINISHED
        }
        chosen = [n for n, p in points.items() if sweep is None or p["sweep"] == sweep]
        chosen.sort(key=lambda n: (points[n]["sweep"], points[n]["index"]))
        if not chosen:
            what = f"sweep {sweep!r}" if sweep else "sweep"
            raise ScenarioError(
                f"{db} holds no finished point of a {what} (drasnap sweep runs one)"
            )
    rows = []
    for name in chosen:
        with Store.open(db, name=name, readonly=True, cache_size=1) as store:
            summary = store.get(SUMMARY_KIND, SUMMARY_KEY)
            if summary is None:
                summary = point_summary(ClusterSnapshot(store))
        rows.append({"name": name, **summary})
    return rows


def differing(rows: list[dict[str, Any]]) -> list[str]:
    """The setting names (axes) whose value differs between ``rows``."""
    keys: list[str] = []
    for row in rows:
        for key in [*row["variants"], *row["settings"]]:
            if key not in keys:
                keys.append(key)
    shown = []
    for key in sorted(keys, key=lambda k: AXES.index(k) if k in AXES else len(AXES)):
        values = {str(row["variants"].get(key, row["settings"].get(key))) for row in rows}
        if len(values) > 1:
            shown.append(key)
    return shown


# -- a Kubernetes Job -----------------------------------------------------------------------

#: The exit status of a usage error (click's): a Job index failing with it is not retried.
USAGE_ERROR = 2
MOUNT = "/etc/drasnap-sweep"
CONFIGMAP_LIMIT = 1_000_000  # bytes: a ConfigMap holds at most 1 MiB


def job_manifests(
    sweep: Sweep,
    *,
    image: str,
    parallelism: int,
    secret: str = "drasnap-db",
    secret_key: str = "url",
    backoff_limit_per_index: int = 2,
) -> list[dict[str, Any]]:
    """A ConfigMap with the sweep file and every file it reads, and an Indexed Job running one
    point per index (``drasnap sweep FILE DB`` with ``JOB_COMPLETION_INDEX`` set), the
    database URL from ``secret``.

    Raises:
        SweepFileError: the files do not fit in a ConfigMap, or lie outside the sweep's folder.
    """
    root = sweep.path.parent
    data: dict[str, str] = {}
    items = []
    for number, file in enumerate([sweep.path, *sweep.files]):
        try:
            relative = file.relative_to(root)
        except ValueError as exc:
            raise SweepFileError(
                f"{sweep.path}: {file} is outside the sweep file's folder: a Job's ConfigMap "
                "holds the files under it only"
            ) from exc
        # A ConfigMap key: letters, digits, '-', '_' and '.', at most 253 characters.
        key = re.sub(r"[^-._a-zA-Z0-9]", "_", f"f{number:04d}-{file.name}")[:253]
        data[key] = file.read_text()
        items.append({"key": key, "path": str(relative)})
    size = sum(len(v.encode()) for v in data.values())
    if size > CONFIGMAP_LIMIT:
        raise SweepFileError(
            f"{sweep.path}: the sweep's files are {size:,} bytes: a ConfigMap holds at most 1 MiB"
        )
    name = f"drasnap-sweep-{sweep.name}"[:52].rstrip("-.")
    labels = {"app.kubernetes.io/name": "drasnap", "drasnap.io/sweep": sweep.name}
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": data,
    }
    points = len(sweep)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "completionMode": "Indexed",
            "completions": points,
            "parallelism": max(1, min(parallelism, points)),
            "backoffLimitPerIndex": backoff_limit_per_index,
            "podFailurePolicy": {
                "rules": [
                    {
                        "action": "FailIndex",
                        "onExitCodes": {
                            "containerName": "drasnap",
                            "operator": "In",
                            "values": [USAGE_ERROR],
                        },
                    },
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                ]
            },
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "drasnap",
                            "image": image,
                            "command": [
                                "drasnap",
                                "sweep",
                                f"{MOUNT}/{sweep.path.name}",
                                "$(DRASNAP_DB)",
                            ],
                            "env": [
                                {
                                    "name": "DRASNAP_DB",
                                    "valueFrom": {
                                        "secretKeyRef": {"name": secret, "key": secret_key}
                                    },
                                }
                            ],
                            "volumeMounts": [
                                {"name": "sweep", "mountPath": MOUNT, "readOnly": True}
                            ],
                        }
                    ],
                    "volumes": [{"name": "sweep", "configMap": {"name": name, "items": items}}],
                },
            },
        },
    }
    return [configmap, job]


def with_index(sweep: Sweep, index: int) -> Point:
    """Point ``index``, or a ValueError naming the range."""
    if not 0 <= index < len(sweep):
        raise ValueError(f"index {index} is outside the sweep's points 0..{len(sweep) - 1}")
    return sweep.point(index)
