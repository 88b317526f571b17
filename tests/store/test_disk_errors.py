"""The two failures SQLite words for itself (store.sql.disk): a full disk stops the store at once
with the database's path, the free space and what the checkpoint writes; a database this user
may not write says which file or folder and why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import DatabaseError, Store

from tests.store.tmpfs import mounted_tmpfs

_NOBODY = 65534


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs (root only: skipped elsewhere)."""
    with mounted_tmpfs(tmp_path / "small", "1m") as mount:
        yield mount


@pytest.mark.parametrize("write_behind", [False, True], ids=["inline", "write-behind"])
def test_a_full_disk_stops_the_store_and_says_where_and_how_much(
    small_disk: Path, write_behind: bool
) -> None:
    path = small_disk / "run.db"
    # Inline, the store finds out at its first checkpoint (every 2,000 entries here). With
    # write-behind no checkpoint is ever due in this loop: the store must stop because the
    # writer process said so as soon as its rows found the disk full.
    policy: dict[str, Any] = {"checkpoint_interval": None, "max_pending": 10**7}
    if not write_behind:
        policy = {"max_pending": 2000}
    store = Store.open(path, name="run", write_behind=write_behind, **policy)

    def fill() -> None:
        for i in range(1_000_000):  # 200 MB of values: far more than the disk holds
            store.put("K", f"k{i}", {"v": "x" * 200})

    with pytest.raises(DatabaseError) as caught:
        fill()
    message = str(caught.value)
    assert f"the file system of {path} is full" in message
    assert f"free in {small_disk})" in message
    assert "the next checkpoint writes" in message and "MB of rows" in message
    store.close(checkpoint=False)


def _as_nobody(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` as a user who owns nothing here (as root: setpriv)."""
    command = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv to drop root's rights")
        command = ["setpriv", f"--reuid={_NOBODY}", f"--regid={_NOBODY}", "--clear-groups"]
        command += [sys.executable, "-c", code]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def _open_and_put(path: Path) -> str:
    done = _as_nobody(
        "from drasnap.store import Store, StoreError\n"
        "try:\n"
        f"    with Store.open({str(path)!r}, name='n') as s: s.put('K', 'k', 1)\n"
        "except StoreError as e: print(e)\n"
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder anyone may reach (pytest's own folders are private to their user)."""
    folder = Path(tempfile.mkdtemp(prefix="drasnap-disk-"))
    os.chmod(folder, 0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def test_a_database_in_a_folder_nobody_may_write_names_the_folder(shared: Path) -> None:
    folder = shared / "archive"
    folder.mkdir()
    db = folder / "run.db"
    with Store.open(db, name="n") as store:
        store.put("K", "k", 0)
    os.chmod(db, 0o666)
    os.chmod(folder, 0o755)  # the file may be written, not the folder beside it
    message = _open_and_put(db)
    assert message.startswith(f"cannot write {db}: this user may not write in its folder {folder}")
    assert "run.db-wal" in message and "unable to open" not in message


def test_a_database_file_nobody_may_write_says_so(shared: Path) -> None:
    db = shared / "run.db"
    with Store.open(db, name="n") as store:
        store.put("K", "k", 0)
    os.chmod(shared, 0o777)
    os.chmod(db, 0o444)
    message = _open_and_put(db)
    assert message.startswith(f"cannot write {db}: this user may not write the file")
