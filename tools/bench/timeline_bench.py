"""``drasnap bench timeline`` and ``timeline-sizes``: a simulated day of a generated cluster
under the cluster-autoscaler and kube-scheduler (``drasnap simulate timeline``, issue 35).

The cluster (:func:`write_inputs`): ``nodes`` nodes in three node groups, written as
``drasnap simulate timeline --from DIR --node-groups FILE`` reads them:

- ``cpu``: 60% of the nodes, 8 CPUs and 32Gi each, 0.4 an hour;
- ``gpu4``: 30%, 16 CPUs, 64Gi and 4 GPUs (a node-local ResourceSlice of
  ``snapshot.simulation.generated``'s GPU devices), 3.2 an hour;
- ``gpu8``: 10%, 32 CPUs, 128Gi and 8 GPUs, 6.4 an hour;

each group from 0 to twice its starting count, and the DeviceClass of those GPUs. The workload
is a ``gen:`` trace (:func:`trace_spec`): Poisson arrivals for the whole simulated day of
4-CPU pods (2 h on average), one-GPU pods (2 h) and four-GPU pods (4 h), at rates that keep
about a third of the starting CPUs and GPUs busy (Little's law: busy = rate x mean run time),
so the cluster-autoscaler scales down what is idle, and scales up when arrivals bunch. The
rates grow with the nodes (the same load per node) and with ``arrivals`` (x2: twice the pods).

Timed: ``snapshot.simulation.runner.simulate`` on a fresh store of the backend, as
``drasnap simulate timeline`` runs it (building and checking the starting cluster is not
timed: it is the same for every backend). The progress callback counts the loops run (one
call per tick the engine runs: idle ticks it skips are not called, nor counted).
"""

from __future__ import annotations

import gc
import json
import statistics
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drasnap.snapshot import ClusterSnapshot
from drasnap.snapshot.simulation import (
    Settings,
    files_digest,
    generated,
    prepare,
    simulate,
    source_digest,
)
from drasnap.tools.bench.backends import open_backend
from drasnap.tools.bench.sizes import growth_exponent
from drasnap.tools.bench.suite import Row
from drasnap.tools.progress import Milestones

WORKLOAD = "timeline"
SIZES_WORKLOAD = "timeline-sizes"
#: Nodes and simulated time per size (the trace's arrivals span that time; the run ends 1h
#: after its last event). quick: the same cluster for an hour (a full day takes about an hour
#: of this 2-core machine).
NODES = {"full": 1_000, "quick": 1_000, "tiny": 10}
DAY = {"full": "24h", "quick": "1h", "tiny": "30m"}
#: timeline-sizes: the node counts (the same load per node), and the arrival factors at the
#: second of them; quick: the same counts for an hour of arrivals.
SIZES_NODES = {
    "full": (250, 500, 1_000, 2_000),
    "quick": (250, 500, 1_000, 2_000),
    "tiny": (5, 10, 20),
}
SIZES_DAY = {"full": "24h", "quick": "1h", "tiny": "30m"}
ARRIVALS = (1, 2, 4)

#: (group, share of the nodes, CPUs, memory GiB, GPUs, cost per node-hour)
GROUPS = (
    ("cpu", 0.6, 8, 32, 0, 0.4),
    ("gpu4", 0.3, 16, 64, 4, 3.2),
    ("gpu8", 0.1, 32, 128, 8, 6.4),
)
#: (CPUs, memory, GPUs, mean run in minutes)
_JOBS = (
    ("4", "16Gi", 0, 120),
    ("2", "8Gi", 1, 120),
    ("8", "32Gi", 4, 240),
)
_BUSY = 1 / 3  # of the starting CPUs (CPU pods) and GPUs (GPU pods, half each shape)


def group_sizes(nodes: int) -> list[int]:
    """Nodes per group (GROUPS' shares, the remainder to ``cpu``; at least one each).

    >>> group_sizes(1000)
    [600, 300, 100]
    >>> group_sizes(5)
    [3, 1, 1]
    """
    counts = [max(1, int(nodes * share)) for _, share, *_ in GROUPS]
    counts[0] = max(1, nodes - sum(counts[1:]))
    return counts


def trace_spec(nodes: int, day: str, arrivals: int = 1) -> str:
    """The ``gen:`` SPEC of the day: rates per hour from the starting capacity (module
    docstring), times ``arrivals``."""
    counts = group_sizes(nodes)
    cpus = sum(c * g[2] for c, g in zip(counts, GROUPS, strict=True))
    gpus = sum(c * g[4] for c, g in zip(counts, GROUPS, strict=True))
    jobs = []
    for cpu, mem, gpu, minutes in _JOBS:
        # GPU shapes: half the busy GPUs each; the CPU shape: the busy CPUs
        busy_pods = gpus * _BUSY / 2 / gpu if gpu else cpus * _BUSY / float(cpu)
        per_hour = busy_pods * 60 / minutes * arrivals
        shape = f"cpu:{cpu}/mem:{mem}" + (f"/gpu:{gpu}" if gpu else "")
        jobs.append(f"rate={per_hour:.3f}/h,until={day},shape={shape},runs={minutes}m")
    return "gen:" + ";".join(jobs)


def _node(name: str, group: str, cpus: int, gib: int) -> dict[str, Any]:
    amounts = {"cpu": str(cpus), "memory": f"{gib}Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, generated.GROUP_LABEL: group},
        },
        "status": {"capacity": dict(amounts), "allocatable": dict(amounts)},
    }


def write_inputs(folder: Path, nodes: int) -> tuple[Path, Path]:
    """The cluster folder (``--from``) and node-groups file of ``nodes`` nodes (module
    docstring), written under ``folder``."""
    items: list[dict[str, Any]] = [generated.device_class()]
    entries = []
    for count, (group, _share, cpus, gib, gpus, cost) in zip(
        group_sizes(nodes), GROUPS, strict=True
    ):
        for i in range(count):
            name = f"{group}-{i:05d}"
            items.append(_node(name, group, cpus, gib))
            if gpus:
                items.append(generated.gpu_slice(name, gpus))
        entries.append(
            {
                "name": group,
                "minSize": 0,
                "maxSize": 2 * count,
                "node": f"{group}-00000",
                "cost": cost,
            }
        )
    cluster = folder / "cluster"
    cluster.mkdir(parents=True, exist_ok=True)
    listed = {"apiVersion": "v1", "kind": "List", "items": items}
    (cluster / "cluster.json").write_text(json.dumps(listed))
    groups = folder / "node-groups.json"
    groups.write_text(json.dumps({"nodeGroups": entries}))
    return cluster, groups


def settings_for(folder: Path, nodes: int, day: str, arrivals: int, seed: int) -> Settings:
    """The settings ``drasnap simulate timeline --from DIR --node-groups FILE --trace gen:SPEC
    --seed SEED`` gives, on inputs written under ``folder``."""
    cluster, groups = write_inputs(folder, nodes)
    digest = files_digest(source_digest(cluster), str(groups), None, None)
    return Settings(
        "timeline",
        seed=seed,
        source=str(cluster),
        source_digest=digest,
        node_groups_file=str(groups),
        trace=trace_spec(nodes, day, arrivals),
    ).resolved()


@dataclass
class TimelineRun:
    """One run: wall seconds, loops run, pods bound, simulated seconds, state digest, and the
    peak of traced memory (a run under tracemalloc only)."""

    seconds: float
    loops: int
    bound: int
    simulated_s: float
    digest: str
    peak: int | None = None


def run_once(
    settings: Settings, backend: str, *, postgres_url: str | None = None, memory: bool = False
) -> TimelineRun:
    """``settings``' timeline on a fresh store of ``backend``, timed (module docstring); with
    ``memory``, under tracemalloc (slower: its time is not a figure), the peak in ``peak``."""
    start = prepare(settings)
    ticks = [0]

    def report(_done: float, _total: int, _detail: str) -> None:
        ticks[0] += 1

    # A SQLite store opened as RunSession opens a run's: checkpoints every 2 s of work.
    options = {} if backend in ("deepcopy", "memory") else _SESSION_OPTIONS
    gc.collect()
    if memory:
        tracemalloc.start()
    try:
        with open_backend(backend, postgres_url=postgres_url, **options) as store:
            cluster = ClusterSnapshot(store, features=settings.feature_gates)
            began = time.perf_counter()
            outcome = simulate(cluster, settings, lambda: start, report=report)
            seconds = time.perf_counter() - began
        peak = tracemalloc.get_traced_memory()[1] if memory else None
    finally:
        if memory:
            tracemalloc.stop()
    result = outcome.as_json()
    return TimelineRun(
        seconds,
        ticks[0],
        int(result.get("pods_bound") or 0),
        float(result["until_s"]),
        outcome.state_digest,
        peak,
    )


_SESSION_OPTIONS: dict[str, Any] = {"auto_checkpoint": False, "checkpoint_interval": 2.0}


def _row(label: str, backend: str, runs: list[TimelineRun], peak: int | None) -> Row:
    """The median run of ``runs`` (by time) as a result row, its figures in ``figures``."""
    seconds = [r.seconds for r in runs]
    median = statistics.median(seconds)
    middle = min(runs, key=lambda r: abs(r.seconds - median))
    return Row(
        label,
        backend,
        median,
        seconds,
        peak,
        state_digest=middle.digest,
        figures={
            "simulated_s": middle.simulated_s,
            "s_per_simulated_day": median * 86_400 / middle.simulated_s,
            "loops": middle.loops,
            "s_per_loop": median / max(1, middle.loops),
            "bindings": middle.bound,
            "bindings_per_s": middle.bound / median if median else 0.0,
        },
    )


def _runs(
    settings: Settings,
    backend: str,
    label: str,
    *,
    repeat: int,
    postgres_url: str | None,
    progress: Milestones,
) -> list[TimelineRun]:
    runs = []
    for r in range(repeat):
        progress(f"{label}: run {r + 1}/{repeat} on {backend}")
        runs.append(run_once(settings, backend, postgres_url=postgres_url))
    digests = {run.digest for run in runs}
    if len(digests) > 1:  # the same inputs and seed give the same run (issue 35)
        raise AssertionError(f"{label} on {backend}: runs ended on different digests {digests}")
    return runs


def run_timeline(
    backends: list[str],
    *,
    size: str,
    repeat: int,
    seed: int,
    memory: bool,
    postgres_url: str | None,
    progress: Milestones,
) -> list[Row]:
    """``timeline``: one row per backend, the median of ``repeat`` runs."""
    nodes, day = NODES[size], DAY[size]
    label = f"{WORKLOAD} @ {nodes:,} nodes, {day}"
    rows = []
    with tempfile.TemporaryDirectory(prefix="drasnap-bench-timeline-") as folder:
        settings = settings_for(Path(folder), nodes, day, 1, seed)
        for backend in backends:
            runs = _runs(
                settings,
                backend,
                label,
                repeat=repeat,
                postgres_url=postgres_url,
                progress=progress,
            )
            peak = None
            if memory:
                progress(f"{label}: memory run on {backend}")
                peak = run_once(settings, backend, postgres_url=postgres_url, memory=True).peak
            rows.append(_row(label, backend, runs, peak))
    return rows


def run_timeline_sizes(
    backends: list[str],
    *,
    size: str,
    repeat: int,
    seed: int,
    postgres_url: str | None,
    progress: Milestones,
) -> list[Row]:
    """``timeline-sizes``: per backend, the day at each node count (arrivals growing with the
    nodes: the same load per node), then at the size's node count with x1, x2, x4 the
    arrivals; each axis with its fitted exponent (``time ~ x^k``)."""
    day = SIZES_DAY[size]
    rows: list[Row] = []
    axes: list[tuple[str, list[tuple[int, int]]]] = [
        ("nodes", [(n, 1) for n in SIZES_NODES[size]]),
        ("arrivals", [(SIZES_NODES[size][1], a) for a in ARRIVALS]),
    ]
    for backend in backends:
        for axis, points in axes:
            medians: list[float] = []
            for nodes, arrivals in points:
                label = f"{SIZES_WORKLOAD} @ {nodes:,} nodes, {day}, arrivals x{arrivals}"
                with tempfile.TemporaryDirectory(prefix="drasnap-bench-timeline-") as folder:
                    settings = settings_for(Path(folder), nodes, day, arrivals, seed)
                    runs = _runs(
                        settings,
                        backend,
                        label,
                        repeat=repeat,
                        postgres_url=postgres_url,
                        progress=progress,
                    )
                row = _row(label, backend, runs, None)
                rows.append(row)
                medians.append(row.median_s)
            xs = [n if axis == "nodes" else a for n, a in points]
            k = round(growth_exponent(xs, medians), 3)
            span = f"{xs[0]:,}-{xs[-1]:,} nodes" if axis == "nodes" else "arrivals x1-x4"
            if axis == "arrivals":
                span += f" at {points[0][0]:,} nodes"
            rows.append(
                Row(
                    f"{SIZES_WORKLOAD}: growth exponent with {axis} {k:.2f} ({span})",
                    backend,
                    sum(medians),
                    medians,
                    growth_exponent=k,
                )
            )
    return rows


def table(rows: list[Row]) -> list[str]:
    """The timeline rows: time, per simulated day, loops, per loop, bindings, per second."""
    width = max(len(r.workload) for r in rows)
    lines = [
        f"{'workload':<{width}}  {'backend':<14}  {'median s':>9}  {'s/sim day':>9}  "
        f"{'loops':>6}  {'ms/loop':>8}  {'bindings':>8}  {'bind/s':>7}  {'peak MB':>8}"
    ]
    for r in rows:
        f = r.figures or {}
        if not f:  # an exponent's row
            lines.append(f"{r.workload:<{width}}  {r.backend:<14}")
            continue
        peak = f"{r.peak_bytes / 1e6:,.1f}" if r.peak_bytes is not None else "—"
        lines.append(
            f"{r.workload:<{width}}  {r.backend:<14}  {r.median_s:>9.2f}  "
            f"{f['s_per_simulated_day']:>9,.0f}  {int(f['loops']):>6,}  "
            f"{f['s_per_loop'] * 1000:>8.1f}  {int(f['bindings']):>8,}  "
            f"{f['bindings_per_s']:>7.1f}  {peak:>8}"
        )
    return lines
