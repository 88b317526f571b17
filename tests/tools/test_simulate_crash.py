"""SIGKILL ``drasnap simulate`` at random moments; ``--resume`` must end exactly like a run that
was never interrupted: the same result, the same counters and the same state digest."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from store import Store, StoreError

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["simulate", "scale-down", "--nodes", "600", "--seed", "7", "--json"]
TRIALS = 5


def drasnap(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tools", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("seconds", "resumed")}


def wait_for_step(db: Path, step: int, proc: subprocess.Popen[str]) -> None:
    """Poll the run record (read-only) until its checkpointed step reaches ``step``."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            try:
                with Store.open(db, readonly=True) as reader:
                    run = reader.get("Simulation", "run")
            except StoreError:
                run = None  # not created yet
            if run is not None and run["step"] >= step:
                return
        time.sleep(0.05)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("reference") / "sim.db"
    return finish(drasnap(*ARGS, "--db", str(db)))


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(TRIALS))
def test_resume_after_sigkill_matches_an_uninterrupted_run(
    trial: int, tmp_path: Path, uninterrupted: dict[str, Any]
) -> None:
    rng = random.Random(trial)
    db = tmp_path / "sim.db"
    victim = drasnap(*ARGS, "--db", str(db), "--checkpoint-every", "0.05")
    # Kill somewhere after a random step has been checkpointed, a random moment later, so the
    # kill lands mid-run whatever the machine's speed.
    # (Steps past ~340 of 600 are quick: every candidate there fails at its first pod; a kill
    # after step 300 could land after the run's end, ~0.8 s later on this project's machine.)
    wait_for_step(db, rng.randrange(5, 300), victim)
    time.sleep(rng.uniform(0.0, 0.1))
    victim.send_signal(signal.SIGKILL)
    out, _ = victim.communicate()
    assert victim.returncode == -signal.SIGKILL, "the run ended before the kill: make it longer"
    assert out == ""
    resumed = finish(drasnap(*ARGS, "--db", str(db), "--resume"))
    assert resumed["resumed"] is True
    assert comparable(resumed) == comparable(uninterrupted)
    # And the database now holds a finished run: the same command refuses to run it again.
    again = drasnap(*ARGS, "--db", str(db), "--resume")
    _, err = again.communicate(timeout=120)
    assert again.returncode == 1
    assert "holds a finished scale-down run" in err
