"""Disk faults told as they are (store.sql.disk_faults, issue 40 item 2): a write that meets a full
disk, a read-only file system or an I/O error stops the store at its first call after it, with
one line naming the path, the cause and what the database keeps (its last checkpoint), inline and
with write-behind; and a store opened for writing on a disk with no room left says so before
anything runs. The faults are injected (the writer's fault plan, a patched flush, a patched
fallocate) except where root can mount a small or read-only tmpfs."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import DatabaseError, Store
from drasnap.store.sql import disk_faults
from sqlalchemy import exc as sa_exc

from tests.store.tmpfs import mounted_tmpfs

KEPT = "the database keeps the store as of its last checkpoint; what was done since is lost"


def _fill(store: Any, n: int, *, start: int = 0) -> None:
    for i in range(start, start + n):
        store.put("claims", f"k{i}", {"i": i})


def _until_it_stops(store: Store) -> str:
    """Hand over a checkpoint, then write on as a run would, until the store raises (within
    20 seconds: a run that went on to its end is the failure this guards against)."""
    deadline = time.monotonic() + 20
    try:
        store.checkpoint(wait=False)
        i = 0
        while time.monotonic() < deadline:
            store.put("claims", f"late{i}", {"i": i})
            i += 1
    except DatabaseError as exc:
        return str(exc)
    raise AssertionError("the store never stopped")


@pytest.mark.parametrize("event", ["checkpoint:2", "rows:2"])
def test_a_disk_io_error_in_the_writer_process_stops_the_store_and_keeps_its_checkpoint(
    tmp_path: Path, event: str
) -> None:
    db = tmp_path / "s.db"
    store = Store.open(
        db,
        write_behind=True,
        auto_checkpoint=False,
        checkpoint_interval=0,
        _writer_faults=f"{event}:disk I/O error",
    )
    # Fewer puts than a batch: the checkpoint hands each batch of rows over (the first, then
    # the second), so the fault meets the second checkpoint or its rows.
    _fill(store, 1000)
    store.checkpoint()
    _fill(store, 100, start=1000)
    message = _until_it_stops(store)
    assert message.startswith(f"cannot write {db}: the disk reported an I/O error (disk I/O")
    assert KEPT in message and "nothing is lost" not in message
    assert "\n" not in message
    store.close(checkpoint=False)
    with Store.open(db, readonly=True) as reader:
        assert reader.count("claims") == 1000


def test_a_transient_failure_is_still_written_again(tmp_path: Path) -> None:
    """A failure that is no disk fault keeps its retry (test_write_behind.py has the rest)."""
    db = tmp_path / "s.db"
    store = Store.open(db, write_behind=True, auto_checkpoint=False, _writer_faults="checkpoint:1")
    store.put("claims", "a", 1)
    with pytest.raises(DatabaseError, match=r"a later checkpoint writes it again") as caught:
        store.checkpoint()
    assert "nothing is lost" not in str(caught.value)
    store.checkpoint()
    store.close()
    with Store.open(db, readonly=True) as reader:
        assert reader.items("claims") == {"a": 1}


@pytest.mark.parametrize(
    ("driver", "said"),
    [
        ("disk I/O error", "the disk reported an I/O error (disk I/O error)"),
        ("database or disk is full", "is full ("),
    ],
)
def test_an_inline_checkpoint_that_meets_a_disk_fault_says_the_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, driver: str, said: str
) -> None:
    db = tmp_path / "s.db"
    store = Store.open(db, write_behind=False, auto_checkpoint=False)
    store.put("claims", "kept", 1)
    store.checkpoint()
    store.put("claims", "lost", 2)

    def refuse(*_args: Any) -> Any:
        raise sa_exc.OperationalError("INSERT", {}, sqlite3.OperationalError(driver))

    monkeypatch.setattr("drasnap.store.sql.persist.flush", refuse)
    with pytest.raises(DatabaseError) as caught:
        store.checkpoint()
    message = str(caught.value)
    assert str(db) in message and said in message and KEPT in message
    store.close(checkpoint=False)
    with Store.open(db, readonly=True) as reader:
        assert reader.items("claims") == {"kept": 1}


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_store_opened_on_a_full_disk_refuses_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    db = tmp_path / "s.db"
    with Store.open(db) as store:
        store.put("claims", "kept", 1)

    def full(*_args: Any) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr("os.posix_fallocate", full)
    with pytest.raises(DatabaseError, match=rf"^no room to write {db}: its file system is full"):
        Store.open(db)
    with Store.open(db, readonly=True) as reader:  # readers need no room
        assert reader.items("claims") == {"kept": 1}
    assert [p.name for p in tmp_path.iterdir() if "room" in p.name] == []  # the test file went


def test_other_failures_of_the_test_write_are_left_to_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unsupported(*_args: Any) -> None:
        raise OSError(errno.EOPNOTSUPP, "not supported")

    monkeypatch.setattr("os.posix_fallocate", unsupported)
    with Store.open(tmp_path / "s.db") as store:
        store.put("claims", "a", 1)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs (root only: skipped elsewhere)."""
    with mounted_tmpfs(tmp_path / "fs", "4m") as mount:
        yield mount


def _remount_read_only(mount: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True, capture_output=True)


def test_a_read_only_file_system_is_named_as_such(tmpfs: Path) -> None:
    db = tmpfs / "s.db"
    with Store.open(db) as store:
        store.put("claims", "kept", 1)
    _remount_read_only(tmpfs)
    # SQLite's words for a write there vary (full, I/O): the file system's flag decides.
    for driver in ("database or disk is full", "disk I/O error"):
        assert disk_faults.cause(db, driver) == "read-only"
        assert f"the file system holding {tmpfs} is read-only" in disk_faults.describe(
            str(db), db, driver
        )
    with pytest.raises(DatabaseError, match=rf"the file system holding {tmpfs} is read-only"):
        Store.open(db)
    with Store.open(db, readonly=True) as reader:
        assert reader.items("claims") == {"kept": 1}


def test_a_full_tmpfs_refuses_a_writer_at_opening(tmpfs: Path) -> None:
    db = tmpfs / "s.db"
    with Store.open(db) as store:
        store.put("claims", "kept", 1)
    with (tmpfs / "ballast").open("wb") as ballast, pytest.raises(OSError, match="No space"):
        ballast.write(b"\0" * (8 << 20))
    assert disk_faults.cause(db, "disk I/O error") == "full"  # SQLite's other word for it
    with pytest.raises(DatabaseError, match=rf"^no room to write {db}: its file system is full"):
        Store.open(db)
