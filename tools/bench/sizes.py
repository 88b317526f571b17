"""``scale-down-sizes``: how a scale-down's time grows with the cluster, as a fitted exponent.

The scale-down scenario (upstream's RunOnce scale-down loop, see
``snapshot/simulation/scale_down.py``) at doubling node counts, each on a fresh store of every
backend asked for, ``repeat`` times (backends interleaved); the median per size, and the
exponent ``k`` of ``time ~ nodes^k`` fitted by least squares on the logarithms of the medians.
A linear simulation gives k = 1; a scan of every node for every pod that moves gives k ~ 2.
"""

from __future__ import annotations

import functools
import gc
import math
import statistics
import time
from collections.abc import Sequence

from drasnap.snapshot import ClusterSnapshot
from drasnap.snapshot.simulation import Settings, StartingObjects, prepare, simulate
from drasnap.tools.bench.backends import open_backend
from drasnap.tools.bench.names import SIZES_WORKLOAD
from drasnap.tools.bench.suite import Row
from drasnap.tools.progress import Milestones

WORKLOAD = SIZES_WORKLOAD
NODES = {
    "full": (800, 1_600, 3_200, 6_400, 12_800),
    "quick": (200, 400, 800, 1_600),
    "tiny": (8, 16, 32),
}


def _same(start: StartingObjects) -> StartingObjects:
    return start


def growth_exponent(sizes: Sequence[float], seconds: Sequence[float]) -> float:
    """The slope of log(seconds) against log(sizes), by least squares.

    >>> round(growth_exponent([100, 200, 400], [1.0, 2.0, 4.0]), 6)
    1.0
    >>> round(growth_exponent([100, 200, 400], [1.0, 4.0, 16.0]), 6)
    2.0
    """
    xs = [math.log(s) for s in sizes]
    ys = [math.log(max(t, 1e-9)) for t in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread


def run_sizes(
    backends: list[str],
    *,
    size: str,
    repeat: int,
    seed: int,
    postgres_url: str | None,
    progress: Milestones,
) -> list[Row]:
    """One row per (node count, backend), then one row per backend with the exponent."""
    rows: list[Row] = []
    counts = NODES[size]
    medians: dict[str, list[float]] = {b: [] for b in backends}
    for nodes in counts:
        settings = Settings("scale-down", seed=seed, nodes=nodes).resolved()
        start = prepare(settings)
        samples: dict[str, list[float]] = {b: [] for b in backends}
        digests: dict[str, str] = {}
        for r in range(repeat):
            for backend in backends:
                progress(f"{WORKLOAD}: {nodes:,} nodes, run {r + 1}/{repeat} on {backend}")
                gc.collect()
                with open_backend(backend, postgres_url=postgres_url) as store:
                    cluster = ClusterSnapshot(store, features=settings.feature_gates)
                    began = time.perf_counter()
                    outcome = simulate(cluster, settings, functools.partial(_same, start))
                    samples[backend].append(time.perf_counter() - began)
                    digests[backend] = outcome.state_digest
        for backend in backends:
            median = statistics.median(samples[backend])
            medians[backend].append(median)
            rows.append(
                Row(
                    f"{WORKLOAD} @ {nodes:,} nodes",
                    backend,
                    median,
                    samples[backend],
                    state_digest=digests[backend],
                )
            )
    for backend in backends:
        k = round(growth_exponent(counts, medians[backend]), 3)  # the figure both places show
        rows.append(
            Row(
                f"{WORKLOAD}: growth exponent {k:.2f} ({counts[0]:,}-{counts[-1]:,} nodes)",
                backend,
                sum(medians[backend]),
                medians[backend],
                growth_exponent=k,
            )
        )
    return rows
