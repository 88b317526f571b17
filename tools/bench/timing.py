"""Timing helpers: medians of repeated runs with the GC paused, and a machine description."""

from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

_SCALE = [1.0]


def set_scale(scale: float) -> None:
    """Run every loop ``scale`` times as long (``--size tiny``: a smoke test, not a figure)."""
    _SCALE[0] = scale


def scale() -> float:
    return _SCALE[0]


def per_op_us(run: Callable[[int], None], *, number: int, repeat: int = 5) -> float:
    """Median over ``repeat`` runs of ``run(number)``, in µs per operation."""
    number = max(5, int(number * _SCALE[0]))
    samples = []
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        run(max(1, number // 10))  # warm-up
        for _ in range(repeat):
            start = time.perf_counter_ns()
            run(number)
            samples.append((time.perf_counter_ns() - start) / number / 1000)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(samples)


def each_us(
    prepare: Callable[[], Any], measured: Callable[[Any], None], *, repeat: int = 7
) -> float:
    """Median µs of ``measured(prepare())`` where only ``measured`` is timed."""
    samples = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        measured(prepare())  # warm-up
        for _ in range(repeat):
            token = prepare()
            start = time.perf_counter_ns()
            measured(token)
            samples.append((time.perf_counter_ns() - start) / 1000)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(samples)


def machine(**extra: Any) -> dict[str, Any]:
    """What ran the benchmark: enough to compare two runs."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
        **extra,
    }
