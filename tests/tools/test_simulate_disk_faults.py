"""``drasnap simulate`` on a failing disk (issue 40 item 2): the store's one line, then the
command that continues from the last checkpoint; and on a full disk, a refusal before the run
(the store's faults themselves: tests/store/test_disk_faults.py)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
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
    assert line.startswith(f"Error: {said}; the run had no checkpoint yet: it starts again")
    assert "; once that is repaired, continue from the last checkpoint with: " in line
    assert line.endswith(f"{db} --name run --seed 3 --nodes 6 --resume")


@pytest.fixture
def tmpfs_of(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mounts a tmpfs of the size asked for (root only: skipped elsewhere)."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        folder = tmp_path / f"fs{len(mounted)}"
        folder.mkdir()
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("mounting a tmpfs needs root")
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounted.append(folder)
        return folder

    try:
        yield mount
    finally:
        for folder in mounted:
            subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def full_disk(tmpfs_of: Callable[[str], Path]) -> Path:
    """A 2 MB tmpfs, filled."""
    mount = tmpfs_of("2m")
    with (mount / "ballast").open("wb") as ballast, contextlib.suppress(OSError):
        ballast.write(b"\0" * (4 << 20))
    return mount


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


def _simulate(db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "drasnap.tools",
            *MID_RUN,
            str(db),
            "--name",
            "run",
            "--json",
            *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
        timeout=300,
    )


# A checkpoint at every step: the write-ahead log outgrows a 12 MB file system a few steps in.
MID_RUN = ["simulate", "scale-down", "--nodes", "600", "--seed", "7", "--checkpoint-every", "0"]


@pytest.mark.slow
def test_a_disk_full_mid_run_stops_it_and_the_resume_ends_on_the_uninterrupted_result(
    tmp_path: Path, tmpfs_of: Callable[[str], Path]
) -> None:
    reference = _simulate(tmp_path / "reference.db")
    assert reference.returncode == 0, reference.stderr
    mount = tmpfs_of("12m")
    db = mount / "sim.db"
    stopped = _simulate(db)
    assert stopped.returncode == 1 and stopped.stdout == ""
    (line,) = [text for text in stopped.stderr.splitlines() if text.startswith("Error: ")]
    assert line.startswith(f"Error: the file system of {db} is full")
    assert "the database keeps the store as of its last checkpoint" in line
    assert "; the run's last checkpoint holds step " in line and " of 600;" in line
    assert line.endswith("--resume")
    subprocess.run(["mount", "-o", "remount,size=256m", str(mount)], check=True)
    resumed = _simulate(db, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    ours, theirs = json.loads(resumed.stdout), json.loads(reference.stdout)
    assert ours["resumed"] is True
    skip = ("seconds", "resumed")
    assert {k: v for k, v in ours.items() if k not in skip} == {
        k: v for k, v in theirs.items() if k not in skip
    }
