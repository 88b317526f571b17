"""``drasnap simulate`` on a failing disk (issue 40 item 2): the store's one line, then the
command that continues from the last checkpoint; and on a full disk, a refusal before the run
(the store's faults themselves: tests/store/test_disk_faults.py)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from drasnap.snapshot.simulation import RunSession
from drasnap.store import DatabaseError
from drasnap.tools.cli import cli

ROOT = Path(__file__).resolve().parents[2]
RUN = ["simulate", "scale-down", "--nodes", "6", "--seed", "3"]


def test_a_store_that_stops_on_a_disk_fault_is_told_with_the_command_that_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "sim.db"
    said = f"cannot write {db}: the disk reported an I/O error (disk I/O error)"

    def fail(*_args: Any, **_kwargs: Any) -> Any:
        raise DatabaseError(said)

    monkeypatch.setattr(RunSession, "run", fail)
    result = CliRunner().invoke(cli, [*RUN, str(db), "--name", "run"])
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()[-1:]
    assert line.startswith(f"Error: {said}; the run's last checkpoint holds step 0")
    assert "; once that is repaired, continue from the last checkpoint with: " in line
    assert line.endswith(f"{db} --name run --seed 3 --nodes 6 --resume")


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs, filled (root only: skipped elsewhere)."""
    mount = tmp_path / "fs"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        with (mount / "ballast").open("wb") as ballast, contextlib.suppress(OSError):
            ballast.write(b"\0" * (4 << 20))
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_run_on_a_full_disk_is_refused_before_it_simulates(full_disk: Path) -> None:
    db = full_disk / "sim.db"
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "drasnap.tools", *RUN, str(db), "--name", "run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(f"Error: no room to write {db}: its file system is full")
    assert done.stderr.count("\n") == 1 and done.stdout == ""
    assert time.monotonic() - began < 60
