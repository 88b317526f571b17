"""One command line for the first start and every restart: ``drasnap simulate ... --name N
--resume`` killed at moments spread over the whole run (start-up included) and run again until
it exits 0 must end exactly like a run never interrupted: the same result, counters and state
digest. SIGTERM and SIGINT stop a run cleanly at a step boundary (exit 143 and 130) and the same
command line continues it.

These run the real ``drasnap`` entry point (``python -m tools``) in a subprocess.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import Store, StoreError

ROOT = Path(__file__).resolve().parents[2]
SIZES = ["scale-down", "--nodes", "200", "--seed", "7"]
MOMENTS = 12


# Long enough that a signal sent at step 10 of what is durable still finds the run going: the
# run does not wait for its checkpoints (write-behind), so it is well ahead of them.
LONG = ["scale-down", "--nodes", "2400", "--seed", "7"]
LONG_STEPS = 2400  # one per node


def command(db: Path, *extra: str, sizes: list[str] = SIZES) -> list[str]:
    return [*sizes, str(db), "--name", "run", "--resume", "--json", *extra]


def drasnap(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "drasnap.tools", "simulate", *args],
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


def rerun_until_it_succeeds(args: list[str]) -> dict[str, Any]:
    """Run the resume; retry only while the killed run's lock is still held (its write-behind
    process may outlive it for a moment). Any other failure fails the test at once."""
    for _ in range(3):
        proc = drasnap(*args)
        out, err = proc.communicate(timeout=300)
        if proc.returncode == 0:
            result: dict[str, Any] = json.loads(out)
            return result
        assert "is being written by" in err, err
        time.sleep(1)
    raise AssertionError(f"the killed run's lock was never released: {err}")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], float]:
    """The run never interrupted (its first start is the same command line), and how long
    the whole command took."""
    db = tmp_path_factory.mktemp("reference") / "sim.db"
    began = time.monotonic()
    result = finish(drasnap(*command(db)))
    return result, time.monotonic() - began


@pytest.fixture(scope="module")
def uninterrupted_long(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("reference-long") / "sim.db"
    return finish(drasnap(*command(db, sizes=LONG)))


def checkpointed_step(db: Path) -> int | None:
    try:
        with Store.open(db, name="run", readonly=True) as reader:
            run = reader.get("Simulation", "run")
    except StoreError:
        return None
    return None if run is None else int(run["step"])


@pytest.mark.slow
def test_sigkill_at_any_moment_then_the_same_command_line(
    tmp_path: Path, uninterrupted: tuple[dict[str, Any], float]
) -> None:
    """Whenever the kill lands (the interpreter starting, before the first checkpoint,
    mid-run, after the end), the same command line ends on the uninterrupted result. Where the
    moments fall depends on the machine's load; what must hold does not."""
    reference, took = uninterrupted
    moments = [0.1 + i * (1.5 * took + 0.5) / (MOMENTS - 1) for i in range(MOMENTS)]
    for i, moment in enumerate(moments):
        db = tmp_path / f"sim-{i}.db"
        victim = drasnap(*command(db))
        time.sleep(moment)  # (the kill's moment, not a wait for something to happen)
        victim.send_signal(signal.SIGKILL)  # (a no-op if it already ended)
        victim.communicate(timeout=300)
        step = checkpointed_step(db)
        result = rerun_until_it_succeeds(command(db))
        assert comparable(result) == comparable(reference), (i, moment, step)


@pytest.mark.slow
def test_sigkill_mid_run_then_the_same_command_line(
    tmp_path: Path, uninterrupted_long: dict[str, Any]
) -> None:
    """A kill once a step is known to be durable (polled in the database, not guessed)."""
    db = tmp_path / "sim.db"
    victim = drasnap(*command(db, "--checkpoint-every", "0", sizes=LONG))
    wait_for_step(db, 10, victim)
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=300)
    step = checkpointed_step(db)
    assert step is not None and step >= 10
    result = rerun_until_it_succeeds(command(db, "--checkpoint-every", "0", sizes=LONG))
    assert result["resumed"] is True
    assert comparable(result) == comparable(uninterrupted_long)


def durable_step(db: Path) -> int | None:
    """The step of the run record in the last checkpoint, read with one SQL query: opening a
    Store fifty times a second would take a core from the run and its writer process."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            row = conn.execute(
                "SELECT e.value FROM entries e JOIN stores s ON s.id = e.store_id "
                "WHERE s.name = 'run' AND e.kind = 'Simulation' AND e.key = 'run' "
                "AND e.depth = 0"
            ).fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else int(json.loads(row[0])["step"])


def wait_for_step(db: Path, step: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        found = durable_step(db)
        if found is not None and found >= step:
            return
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signal_number", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["TERM", "INT"]
)
def test_a_signal_stops_cleanly_and_the_same_command_line_continues(
    tmp_path: Path,
    uninterrupted_long: dict[str, Any],
    signal_number: int,
    status: int,
) -> None:
    reference = uninterrupted_long
    db = tmp_path / "sim.db"
    args = command(db, "--checkpoint-every", "0", sizes=LONG)
    victim = drasnap(*args)
    wait_for_step(db, 10, victim)
    victim.send_signal(signal_number)
    out, err = victim.communicate(timeout=300)
    if victim.returncode == 0 and "step 2,400/2,400 (100%)" in err:
        # The database lags the run (its writer process works behind it): on a quiet machine
        # the signal can come when the last step has begun, and the run then ends as usual.
        assert comparable(json.loads(out)) == comparable(reference)
        return
    assert victim.returncode == status, err
    assert out == ""
    assert "Traceback" not in err
    stopped_at = checkpointed_step(db)
    assert stopped_at is not None and 10 <= stopped_at < LONG_STEPS
    assert f"Stopped after step {stopped_at} of {LONG_STEPS}, saved. Continue with:" in err
    hint = err.strip().splitlines()[-1].strip()
    assert "simulate scale-down" in hint and hint.endswith("--resume")
    assert "--name run" in hint and str(db) in hint
    # The command as printed runs in the shell that ran this one, and finishes the run.
    continued = subprocess.run(hint, shell=True, cwd=ROOT, capture_output=True, text=True)
    assert continued.returncode == 0, continued.stderr
    result = finish(drasnap(*args))  # (finished: --resume prints its result)
    assert result["resumed"] is True
    assert comparable(result) == comparable(reference)


@pytest.mark.slow
def test_a_second_signal_stops_at_once_and_keeps_the_last_checkpoint(
    tmp_path: Path, uninterrupted_long: dict[str, Any]
) -> None:
    reference = uninterrupted_long
    db = tmp_path / "sim.db"
    victim = drasnap(*command(db, "--checkpoint-every", "0", sizes=LONG))
    wait_for_step(db, 5, victim)
    victim.send_signal(signal.SIGINT)
    victim.send_signal(signal.SIGINT)
    _, err = victim.communicate(timeout=300)
    assert victim.returncode == 130, err
    assert "Traceback" not in err
    result = rerun_until_it_succeeds(command(db, "--checkpoint-every", "0", sizes=LONG))
    assert comparable(result) == comparable(reference)
