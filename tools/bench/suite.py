"""``drasnap bench`` workloads on several backends in one process, and their comparison.

For every workload: a warm-up run of every backend at the smallest size, then ``repeat`` timed
runs with the backends interleaved (A B C, A B C, ...), each on a fresh store; the median is
reported, with the time ratio to ``deepcopy`` and to ``memory``. Peak memory comes from one more
run per backend under ``tracemalloc`` (Python allocations only: SQLite's own page cache is not
traced), kept apart because tracing slows a run down several times.
"""

from __future__ import annotations

import statistics
import tracemalloc
from dataclasses import dataclass, field
from typing import Any

from drasnap.tools.bench.backends import open_backend
from drasnap.tools.bench.names import SCENARIO_WORKLOADS
from drasnap.tools.bench.workloads import (
    changed_keys_samples,
    fill,
    fork_revert_samples,
    run_workload,
)
from drasnap.tools.progress import Milestones

WORKLOADS = (*SCENARIO_WORKLOADS, "scaling")


@dataclass
class Row:
    workload: str
    backend: str
    median_s: float
    samples: list[float]
    peak_bytes: int | None = None
    vs_deepcopy: float | None = None
    vs_memory: float | None = None
    state_digest: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    growth_exponent: float | None = None  # scale-down-sizes: time ~ nodes^k
    parts: dict[str, list[float]] | None = None  # seconds of each part, per run
    figures: dict[str, float] | None = None  # timeline, alibaba: loops, per loop, per day, ...

    def as_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "backend": self.backend,
            "median_s": self.median_s,
            "samples_s": self.samples,
            "peak_bytes": self.peak_bytes,
            "vs_deepcopy": self.vs_deepcopy,
            "vs_memory": self.vs_memory,
            "state_digest": self.state_digest,
            **self.counts,
            **({"growth_exponent": self.growth_exponent} if self.growth_exponent else {}),
            **({"parts_s": self.parts} if self.parts else {}),
            **(self.figures or {}),
        }


def _ratios(rows: list[Row]) -> None:
    by_key: dict[tuple[str, str], Row] = {(r.workload, r.backend): r for r in rows}
    for row in rows:
        for ref, attr in (("deepcopy", "vs_deepcopy"), ("memory", "vs_memory")):
            other = by_key.get((row.workload, ref))
            if other is not None and other.median_s > 0:
                setattr(row, attr, row.median_s / other.median_s)


def run_scenarios(
    workloads: list[str],
    backends: list[str],
    *,
    size: str,
    repeat: int,
    seed: int,
    memory: bool,
    postgres_url: str | None,
    progress: Milestones,
) -> list[Row]:
    rows: list[Row] = []
    for workload in workloads:
        samples: dict[str, list[float]] = {b: [] for b in backends}
        digests: dict[str, str] = {}
        counts: dict[str, dict[str, int]] = {}
        parts: dict[str, dict[str, list[float]]] = {b: {} for b in backends}
        for backend in backends:
            progress(f"{workload}: warm-up on {backend}")
            with open_backend(backend, postgres_url=postgres_url) as store:
                run_workload(workload, store, "tiny", seed)
        for r in range(repeat):
            for backend in backends:
                progress(f"{workload}: run {r + 1}/{repeat} on {backend}")
                with open_backend(backend, postgres_url=postgres_url) as store:
                    run = run_workload(workload, store, size, seed)
                samples[backend].append(run.seconds)
                for part, seconds in (run.parts or {}).items():
                    parts[backend].setdefault(part, []).append(seconds)
                digests[backend] = run.digest
                counts[backend] = {
                    "forks": run.forks,
                    "commits": run.commits,
                    "reverts": run.reverts,
                }
        for backend in backends:
            peak = None
            if memory:
                progress(f"{workload}: memory run on {backend}")
                tracemalloc.start()
                try:
                    with open_backend(backend, postgres_url=postgres_url) as store:
                        run_workload(workload, store, size, seed)
                    peak = tracemalloc.get_traced_memory()[1]
                finally:
                    tracemalloc.stop()
            rows.append(
                Row(
                    workload,
                    backend,
                    statistics.median(samples[backend]),
                    samples[backend],
                    peak,
                    state_digest=digests[backend],
                    counts=counts[backend],
                    parts=parts[backend] or None,
                )
            )
    _ratios(rows)
    return rows


SCALING_KEYS = {
    "full": (1_000, 100_000, 1_000_000),
    "quick": (1_000, 10_000, 100_000),
    "tiny": (100, 300, 1_000),
}
CHANGED_KEYS = {"full": (1, 100, 10_000), "quick": (1, 100, 1_000), "tiny": (1, 10, 100)}
BOUNDED_CACHE = 10_000


def run_scaling(
    backends: list[str],
    *,
    size: str,
    memory: bool,
    postgres_url: str | None,
    progress: Milestones,
) -> list[Row]:
    """Fork+revert per store size, commit/revert per changed-key count, and resident memory."""
    rows: list[Row] = []
    sizes = SCALING_KEYS[size]
    changed = CHANGED_KEYS[size]
    for backend in backends:
        with open_backend(backend, postgres_url=postgres_url) as store:
            filled = 0
            for keys in sizes:
                progress(f"scaling: {backend} at {keys:,} keys")
                fill(store, keys, start=filled)
                filled = keys
                ts = fork_revert_samples(store)
                rows.append(Row(f"fork+revert @ {keys:,} keys", backend, statistics.median(ts), ts))
            for k in changed:
                progress(f"scaling: {backend}, {k:,} changed keys")
                for what, commit in (("commit", True), ("revert", False)):
                    ts = changed_keys_samples(store, k, commit=commit)
                    label = f"{what} of {k:,} changed keys"
                    rows.append(Row(label, backend, statistics.median(ts), ts))
    bounded: tuple[tuple[str, dict[str, Any]], ...] = (
        ("memory", {}),
        ("sqlite", {"cache_size": BOUNDED_CACHE}),
    )
    for backend, options in bounded:
        if backend not in backends or not memory:
            continue
        keys = sizes[-1]
        label = "memory" if backend == "memory" else f"sqlite (cache_size={BOUNDED_CACHE:,})"
        progress(f"scaling: resident memory of {label} holding {keys:,} keys")
        tracemalloc.start()
        try:
            with open_backend(backend, **options) as store:
                fill(store, keys, batch=BOUNDED_CACHE)  # unflushed values stay under the bound
                for i in range(0, keys, max(1, keys // 1000)):
                    store.get("ResourceClaim", f"default/c{i}")
                peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        rows.append(Row(f"peak memory holding {keys:,} keys", label, 0.0, [], peak))
    _ratios(rows)
    return rows
