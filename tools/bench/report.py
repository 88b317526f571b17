"""Turning benchmark rows into a table, JSON rows, and a chart."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from drasnap.tools.bench import store_bench
from drasnap.tools.bench.suite import Row


def fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def micro_json(workload: str, rows: Sequence[store_bench.Row]) -> list[dict[str, Any]]:
    """Per-operation rows (µs) as result rows: one per backend, ratio to MemoryStore."""
    out: list[dict[str, Any]] = []
    for row in rows:
        for backend, us, ratio in (
            ("memory", row.memory_us, 1.0 if row.memory_us is not None else None),
            ("sqlite", row.sqlite_us, row.ratio),
            ("postgres", row.postgres_us, row.postgres_ratio),
        ):
            if us is None:
                continue
            out.append(
                {
                    "workload": f"{workload}: {row.operation}",
                    "backend": backend,
                    "median_s": us / 1e6,
                    "peak_bytes": None,
                    "vs_deepcopy": None,
                    "vs_memory": ratio,
                }
            )
    return out


def micro_table(rows: Sequence[store_bench.Row], with_postgres: bool) -> list[str]:
    width = max(len(r.operation) for r in rows)
    head = f"{'operation':<{width}}  {'MemoryStore µs':>14}  {'SQLite µs':>10}  {'ratio':>6}"
    if with_postgres:
        head += f"  {'PostgreSQL µs':>13}  {'ratio':>6}"
    lines = [head]
    for r in rows:
        line = f"{r.operation:<{width}}  {fmt(r.memory_us):>14}  {fmt(r.sqlite_us):>10}  "
        line += f"{fmt(r.ratio):>6}"
        if with_postgres:
            line += f"  {fmt(r.postgres_us):>13}  {fmt(r.postgres_ratio):>6}"
        lines.append(line)
    return lines


def suite_table(rows: Sequence[Row]) -> list[str]:
    width = max(len(r.workload) for r in rows)
    lines = [
        f"{'workload':<{width}}  {'backend':<27}  {'median':>11}  {'peak MB':>8}  "
        f"{'vs deepcopy':>11}  {'vs memory':>9}  forks/commits/reverts"
    ]
    for r in rows:
        if r.samples:
            median = f"{r.median_s * 1e6:,.1f} µs" if r.median_s < 0.01 else f"{r.median_s:.3f} s"
        else:
            median = "—"
        peak = fmt(r.peak_bytes / 1e6, 1) if r.peak_bytes is not None else "—"
        counts = (
            "/".join(str(r.counts[k]) for k in ("forks", "commits", "reverts")) if r.counts else ""
        )
        lines.append(
            f"{r.workload:<{width}}  {r.backend:<27}  {median:>11}  {peak:>8}  "
            f"{fmt(r.vs_deepcopy, 3):>11}  {fmt(r.vs_memory):>9}  {counts}"
        )
    return lines


def plot(path: Path, scenario_rows: Sequence[Row], scaling_rows: Sequence[Row]) -> None:
    """A chart: time per backend per workload (log scale), and the scaling curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = int(bool(scenario_rows)) + (2 if scaling_rows else 0)
    fig, axes = plt.subplots(1, max(panels, 1), figsize=(6 * max(panels, 1), 4.5), squeeze=False)
    ax_iter = iter(axes[0])
    if scenario_rows:
        ax = next(ax_iter)
        workloads = list(dict.fromkeys(r.workload for r in scenario_rows))
        backends = list(dict.fromkeys(r.backend for r in scenario_rows))
        width = 0.8 / len(backends)
        for b, backend in enumerate(backends):
            values = [
                next(
                    (r.median_s for r in scenario_rows if (r.workload, r.backend) == (w, backend)),
                    0,
                )
                for w in workloads
            ]
            ax.bar([i + b * width for i in range(len(workloads))], values, width, label=backend)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(workloads))], workloads)
        ax.set_yscale("log")
        ax.set_ylabel("median wall time (s, log)")
        ax.set_title("workloads")
        ax.legend(fontsize=8)
    if scaling_rows:
        for prefix, xlabel, title in (
            ("fork+revert @ ", "keys in the store", "fork+revert vs store size"),
            ("revert of ", "changed keys", "revert vs changed keys"),
        ):
            ax = next(ax_iter)
            for backend in dict.fromkeys(r.backend for r in scaling_rows):
                points = [
                    (int(r.workload[len(prefix) :].split()[0].replace(",", "")), r.median_s * 1e6)
                    for r in scaling_rows
                    if r.backend == backend and r.workload.startswith(prefix)
                ]
                if points:
                    xs, ys = zip(*points, strict=True)
                    ax.plot(xs, ys, marker="o", label=backend)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(xlabel)
            ax.set_ylabel("µs per operation (log)")
            ax.set_title(title)
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
