"""SIGKILL a process in the middle of random work: the reopened store is always the state of an
operation boundary at or after the last checkpoint the process reported, never an error.

On SQLite and on PostgreSQL (where the kill drops the connection mid-transaction, and the
writer that reopens at once may find the dead process's lock not yet released)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import MemoryStore, Store, VersionedStore

from tests.conftest import Database
from tests.store.crash_worker import apply, operations

ROOT = Path(__file__).resolve().parents[2]
N_OPS = 1_000_000  # far more than a child gets through before the kill
TRIALS = 20


def snapshot(store: VersionedStore) -> tuple[Any, ...]:
    labels = tuple(layer.label for layer in store.layers()[1:])
    return (store.depth, labels, store.items("claims"), store.items("slices"))


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(TRIALS))
def test_sigkill_at_random_moment(trial: int, database: Database) -> None:
    _killed_and_reopened(trial, database.target)


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(6))
def test_sigkill_with_write_behind(trial: int, tmp_path: Path) -> None:
    # The journal and checkpoints are written by the store's writer process (SQLite only): a
    # kill of the store's process, mid-stream or mid-flush, must leave the database at a whole
    # checkpoint all the same, and the writer process must not outlive it holding the lock.
    _killed_and_reopened(trial, str(tmp_path / "drasnap.db"), "write-behind")


def _killed_and_reopened(trial: int, db: str, *mode: str) -> None:
    rng = random.Random(1000 + trial)
    seed = rng.randrange(1 << 30)
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.store.crash_worker",
            db,
            str(seed),
            str(N_OPS),
            "default",
            *mode,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    time.sleep(rng.uniform(0.0, 1.0))
    child.send_signal(signal.SIGKILL)
    out, _ = child.communicate()
    lines = out.split()
    assert "done" not in lines, "the child finished before the kill: make the run longer"
    checkpoints = [int(v) for k, v in zip(lines[::2], lines[1::2], strict=False) if k == "ckpt"]
    last_ckpt = checkpoints[-1] if checkpoints else -1

    with Store.open(db) as reopened:
        got = snapshot(reopened)

    model = MemoryStore()
    candidates = 0
    if last_ckpt < 0 and got == snapshot(model):
        return  # killed before anything reached the database
    for i, op in enumerate(operations(seed, N_OPS)):
        apply(model, op)
        if i >= last_ckpt:
            candidates += 1
            if snapshot(model) == got:
                return
    pytest.fail(
        f"reopened state matches no boundary at or after op {last_ckpt} "
        f"(checked {candidates}); depth {got[0]}"
    )
