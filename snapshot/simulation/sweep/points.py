"""One point of a sweep: run (started, continued or found finished) with its summary kept,
and every point of a sweep, in this process or in a pool of forked workers.

A finished point keeps a summary, ``SweepPoint/summary`` (:func:`point_summary`), which
``drasnap compare`` and the SQL view ``sweep_results`` (:mod:`.views`) read.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path
from typing import Any

from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import ScenarioError, SweepFileError, UtilizationError
from drasnap.snapshot.k8s.features import resolve_feature_gates
from drasnap.snapshot.simulation.autoscale.records import decisions_so_far
from drasnap.snapshot.simulation.lifecycle import RunSession
from drasnap.snapshot.simulation.plan import PLAN_KEY, RUN_KEY, SIM_KIND
from drasnap.snapshot.simulation.runner import prepare
from drasnap.snapshot.simulation.runs import RunStatus, find_run, list_runs
from drasnap.snapshot.simulation.settings import TIMELINE_FLAGS
from drasnap.snapshot.simulation.sweep.file import SETTING_AXES, Point, Sweep, load_sweep
from drasnap.snapshot.simulation.sweep.views import SUMMARY_KEY, SUMMARY_KIND
from drasnap.snapshot.simulation.sweep.workers import die_with
from drasnap.store import Store, StoreLockedError, list_stores

__all__ = [
    "SUMMARIES",
    "PointResult",
    "check_points",
    "device_utilization",
    "finished_points",
    "point_summary",
    "run_point",
    "run_sweep",
]

#: Workers start as forks of the sweep (its modules already imported: a spawned worker spent
#: more time importing than a small point takes), where the platform has fork.
_START_METHOD = "fork" if "fork" in get_all_start_methods() else "spawn"


@dataclass(frozen=True)
class PointResult:
    """What running (or finding) a point gave."""

    index: int
    name: str
    status: str  # ran, resumed, finished (found finished), busy (another process runs it)
    seconds: float
    summary: dict[str, Any] | None


def point_summary(cluster: ClusterSnapshot, sweep: dict[str, Any] | None = None) -> dict[str, Any]:
    """The comparison row of a finished run held by ``cluster``'s store: its sweep point
    (``sweep``, else the one its settings record), then its scenario's summary
    (:data:`SUMMARIES`).

    Raises:
        ScenarioError: the store holds no run of a scenario a comparison reads.
    """
    plan = cluster.store.get(SIM_KIND, PLAN_KEY)
    scenario = ((plan or {}).get("settings") or {}).get("scenario")
    summary = SUMMARIES.get(str(scenario))
    if plan is None or summary is None:
        raise ScenarioError(f"not a run a comparison reads ({' or '.join(SUMMARIES)})")
    sweep = sweep if sweep is not None else (plan["settings"].get("sweep") or {})
    return summary(cluster, plan, sweep)


def _timeline_summary(
    cluster: ClusterSnapshot, plan: dict[str, Any], sweep: dict[str, Any]
) -> dict[str, Any]:
    """A timeline's row: its result, as ``simulate timeline --json`` gives it (the
    scenario's own ``result``: :mod:`..timeline.totals`), after the point and its settings."""
    from drasnap.snapshot.simulation.record import RunContext
    from drasnap.snapshot.simulation.scenarios import STRATEGIES

    run = cluster.store.get(SIM_KIND, RUN_KEY) or {}
    result = STRATEGIES["timeline"].result(RunContext(cluster), dict(run.get("results") or {}))
    return {
        "sweep": sweep.get("sweep"),
        "index": sweep.get("index"),
        "variants": dict(sweep.get("variants") or {}),
        "settings": _timeline_settings_shown(plan["settings"]),
        **result,
    }


def _timeline_settings_shown(settings: dict[str, Any]) -> dict[str, str]:
    """A timeline's settings as a comparison shows them: autoscale's, the trace's file name,
    and each setting a sweep may vary (durations as Go writes them: 2m and 2m0s are one)."""
    from drasnap.snapshot.simulation.durations import format_duration, parse_duration

    shown = _settings_shown(settings)
    trace = str(settings.get("trace") or "")
    shown["trace"] = trace if trace.startswith("gen:") else Path(trace.split(":")[-1]).name
    for field_name, name in SETTING_AXES.items():
        value = settings.get(name)
        if name in TIMELINE_FLAGS and isinstance(value, str):
            value = format_duration(parse_duration(value, name))
        shown[field_name] = str(value).lower() if isinstance(value, bool) else str(value)
    return shown


def _autoscale_summary(
    cluster: ClusterSnapshot, plan: dict[str, Any], sweep: dict[str, Any]
) -> dict[str, Any]:
    """An autoscale run's row: nodes added, pods left pending, nodes removed, cost per hour."""
    found = decisions_so_far(cluster.store)
    if found is None:
        raise ScenarioError("not an autoscale run")
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


#: Each scenario's comparison row (the summary a point keeps): scenario -> how it is made.
SUMMARIES: dict[
    str, Callable[[ClusterSnapshot, dict[str, Any], dict[str, Any]], dict[str, Any]]
] = {
    "autoscale": _autoscale_summary,
    "timeline": _timeline_summary,
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
    from drasnap.snapshot.autoscaler.utilization import node_utilization

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


#: The settings that change how a timeline's trace is read (Alibaba's rows as objects), so a
#: point differing in them only is built too before any point runs.
_TRACE_READING = ("gpu_sharing", "pending_rows", "arrivals", "until")


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
                # (what reading a timeline's trace depends on)
                [getattr(point.settings, name) for name in _TRACE_READING],
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
    # Each worker ends with this process, however it ends, and leaves its stdout (.workers).
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=get_context(_START_METHOD),
        initializer=die_with,
        initargs=(os.getpid(),),
    ) as pool:
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
