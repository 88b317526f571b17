"""A SIGKILLed ``drasnap sweep`` leaves no worker behind (issue 40 item 3): its workers, and
their write-behind processes, end with it, and a caller reading its output sees the end of it
(no worker holds the pipe open). Linux only: the process tree is read from /proc."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.paths import FIXTURES

ROOT = Path(__file__).resolve().parents[2]
SWEEP = FIXTURES / "sweep" / "gpu-shapes.yaml"

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc"
)


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found |= {int(c) for c in (task / "children").read_text().split()}
    return found


def _descendants(pid: int) -> set[int]:
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in _children(todo.pop()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (a container's pid 1 may never reap it)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] not in ("Z", "X")


def test_a_sigkilled_sweep_leaves_no_worker_and_its_output_ends(tmp_path: Path) -> None:
    db = tmp_path / "sweep.db"
    sweep = subprocess.Popen(
        [sys.executable, "-m", "drasnap.tools", "sweep", str(SWEEP), str(db), "--workers", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2 and time.monotonic() < deadline and sweep.poll() is None:
            workers = _descendants(sweep.pid)
            time.sleep(0.05)
        assert len(workers) >= 2, "the sweep never started its workers"
        time.sleep(0.5)  # into their points: each opens its store (a writer process of its own)
        workers = _descendants(sweep.pid)
        sweep.send_signal(signal.SIGKILL)
        # The caller's read ends: no worker holds the pipes open.
        sweep.communicate(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(map(_alive, workers)):
            time.sleep(0.05)
        assert not [pid for pid in workers if _alive(pid)]
    finally:  # a failing run leaves nothing behind either
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()
        for pid in workers:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
