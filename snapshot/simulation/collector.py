"""CPython's cyclic garbage collector, paced while a simulation runs.

A run holds a heap of 10^5 to 10^6 small objects until it ends (nodes, pods and claims as
dicts, what the filters derived from them, the store's layers and cache), and almost all the
garbage it makes has no cycle: reference counting frees it. At its default thresholds the
collector looks at young objects every 700 net allocations and at older ones every tenth of
those, so it walks the run's heap over and over, and finds next to nothing. Measured on the
no-DRA scale-down preset (2,000 nodes, 80,000 pods; in process, the quiet 2-core machine):
17.5 s with the default collector, 10.0 s with it switched off.

While a run goes, :func:`paced`:

- raises the young generation's threshold from 700 to 20,000 allocations (then 10 and 10);
- moves every object alive when it starts, and again when :func:`settle` is called (once
  the starting cluster is loaded), out of the collector's sight (``gc.freeze``). Those
  objects are still freed by reference counting; when the run ends they are given back
  (``gc.unfreeze``) and the thresholds restored, so a cycle among them is collected then.

Upstream's benchmark harness switches Go's collector off for the timed RunOnce; this keeps
Python's on, with the same peak memory on the presets. Runs inside a run (a sweep's) leave
the pacing to the outermost one. The pacing is the process's: a program running other work
in threads meanwhile sees the collector run less often.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PACED_THRESHOLD", "paced", "settle"]

PACED_THRESHOLD = (20_000, 10, 10)

_depth = 0


@contextmanager
def paced() -> Iterator[None]:
    """Pace the collector for the ``with`` block (module docstring)."""
    global _depth
    _depth += 1
    if _depth > 1:
        try:
            yield
        finally:
            _depth -= 1
        return
    before = gc.get_threshold()
    gc.set_threshold(*PACED_THRESHOLD)
    gc.freeze()  # what was alive before (modules, the cluster built from the settings)
    try:
        yield
    finally:
        _depth -= 1
        gc.unfreeze()
        gc.set_threshold(*before)


def settle() -> None:
    """Inside :func:`paced`: what is alive now lives on; the collector stops walking it."""
    if _depth:
        gc.freeze()
