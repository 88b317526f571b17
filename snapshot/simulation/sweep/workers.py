"""A sweep's worker processes end with the sweep, however it ends (issue 40: a SIGKILLed
``drasnap sweep`` left its workers running on, each holding the caller's output pipe open).

:func:`die_with` is the pool's initializer, run first in every worker:

- On Linux the worker asks the kernel to SIGKILL it when its parent dies
  (``prctl(PR_SET_PDEATHSIG)``). Chosen over watching ``os.getppid()`` because the kernel
  delivers it at once, whatever the worker is doing: a point's step can hold the interpreter
  for seconds (a watcher thread then waits its turn), and a worker blocked in a C call never
  looks. The death signal follows the *thread* that forked the worker: the sweep forks its
  workers from its main thread (``ProcessPoolExecutor.submit``), which lives as long as the
  sweep. A parent that died before the request took effect is caught by comparing
  ``os.getppid()`` once, after it.
- Elsewhere (no ``prctl``) a daemon thread watches ``os.getppid()`` and ends the worker when it
  changes: later than the kernel would, but still without an orphan.
- The worker's stdout is pointed at ``/dev/null``: a worker's results go back through the
  pool's own pipe, and stdout is the sweep's data (its table, ``--json``), so a worker has
  nothing to write there and must not keep a caller's pipe open. Its stderr stays: a
  worker's warnings are worth seeing, and the worker dies with the sweep, closing it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

__all__ = ["die_with"]

_PR_SET_PDEATHSIG = 1
_WATCH_EVERY = 0.2  # seconds between looks at the parent, where prctl is missing


def die_with(parent: int) -> None:
    """Make this worker end when ``parent`` (the sweep's pid) dies; detach it from stdout."""
    if not _death_signal():
        threading.Thread(target=_watch, args=(parent,), name="drasnap-orphan", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
    _quiet_stdout()


def _death_signal() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies; whether it could."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_WATCH_EVERY)
    os._exit(1)


def _quiet_stdout() -> None:
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
