"""Write-behind (``write_behind=True``): the journal and the checkpoints are written by a process
of the store's own. ``checkpoint()`` still returns only once its state is durable, readers only
ever see whole checkpoints, a failed write is reported and then written again, never lost, and
a writer process that dies is an error, never a hang. (Crashes of the store's process:
tests/store/test_crash.py; random operation sequences: tests/store/test_state_machine.py.)"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import DatabaseError, InvalidValueError, Journal, MemoryStore, Store, replay


def _fill(store: Any, n: int, *, start: int = 0) -> None:
    for i in range(start, start + n):
        store.put("claims", f"k{i}", {"i": i, "pad": "x" * 50})


def _journal_ops(db: Path) -> list[tuple[str, str | None]]:
    with Journal.open(db) as journal:
        return [(r.op, r.key) for r in journal.records()]


def test_checkpoint_returns_once_durable_and_readers_see_only_whole_checkpoints(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    model = MemoryStore()
    store = Store.open(db, write_behind=True, auto_checkpoint=False, checkpoint_interval=0)
    for s in (store, model):
        _fill(s, 3000)  # more than a batch: rows reach the writer before the checkpoint
        s.fork("try")
        s.put("claims", "k1", {"v": 3})
        s.delete("claims", "k2")
    store.checkpoint()
    with Store.open(db, readonly=True) as reader:  # durable now: another process sees it
        assert reader.depth == 1 and [ly.label for ly in reader.layers()[1:]] == ["try"]
        assert reader.items("claims") == model.items("claims")
        assert reader.state_digest() == model.state_digest()
    for s in (store, model):
        _fill(s, 3000, start=5000)  # streamed to the writer, inside its open transaction
    assert store.state_digest() == model.state_digest()
    with Store.open(db, readonly=True) as reader:  # ... which readers do not see
        assert reader.count("claims") == 2999
    store.close()
    with Store.open(db, readonly=True) as reader:
        assert reader.count("claims") == 5999
        assert reader.state_digest() == model.state_digest()


def test_a_checkpoint_not_waited_for_is_written_whole_and_the_chain_verifies(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    store = Store.open(db, write_behind=True, auto_checkpoint=False, checkpoint_interval=0)
    _fill(store, 2500)
    store.checkpoint(wait=False)  # handed over; the store goes on at once
    store.fork("a")
    store.put("claims", "k0", {"v": 1})
    store.commit()
    assert store.maybe_checkpoint()  # the policy's checkpoints are not waited for either
    store.fork("b")
    store.put("slices", "s", [1, 2])
    store.revert()
    digest = store.state_digest()
    store.close()
    report = replay(db, verify=True)  # every recorded digest and chain recomputed
    assert report.divergence is None and report.checkpoints_verified == 3
    assert report.state_digest == digest
    assert [op for op, _ in _journal_ops(db)].count("checkpoint") == 3


def test_a_failed_checkpoint_is_reported_then_written_again(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = Store.open(
        db,
        write_behind=True,
        auto_checkpoint=False,
        checkpoint_interval=0,
        _writer_faults="checkpoint:1",  # the writer's first checkpoint fails
    )
    store.put("claims", "a", {"v": 1})
    with pytest.raises(DatabaseError, match="injected checkpoint failure"):
        store.checkpoint()
    with Store.open(db, readonly=True) as reader:  # nothing of it was committed
        assert reader.count("claims") == 0
    store.put("claims", "b", {"v": 2})
    store.checkpoint()  # everything since the last commit, the failed checkpoint's rows too
    digest = store.state_digest()
    store.close()
    with Store.open(db) as reopened:
        assert reopened.items("claims") == {"a": {"v": 1}, "b": {"v": 2}}
        assert reopened.state_digest() == digest
    assert _journal_ops(db) == [("put", "a"), ("put", "b"), ("checkpoint", None)]
    assert replay(db, verify=True).divergence is None


def test_a_failure_a_later_checkpoint_repairs_is_not_an_error(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = Store.open(
        db,
        write_behind=True,
        auto_checkpoint=False,
        checkpoint_interval=0,
        _writer_faults="rows:1,checkpoint:1",  # the first rows and checkpoint fail
    )
    _fill(store, 3000)
    store.checkpoint(wait=False)  # fails in the writer: nobody waits for it
    _fill(store, 10, start=3000)
    store.checkpoint()  # writes all of it: no error to report
    store.close()
    with Store.open(db, readonly=True) as reader:
        assert reader.count("claims") == 3010
    ops = _journal_ops(db)
    assert len(ops) == 3011 and ops[-1] == ("checkpoint", None)
    assert replay(db, verify=True).divergence is None


def test_a_writer_process_that_dies_is_an_error_and_the_store_reopens_at_its_checkpoint(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    store = Store.open(db, write_behind=True, auto_checkpoint=False, checkpoint_interval=0)
    store.put("claims", "kept", {"v": 1})
    store.checkpoint()
    writer = store._checkpointer.writer
    assert writer is not None
    os.kill(writer.pid, signal.SIGKILL)
    store.put("claims", "lost", {"v": 2})
    with pytest.raises(DatabaseError, match=r"write-behind process .* ended .* open it again"):
        store.checkpoint()
    with pytest.raises(DatabaseError, match="write-behind process"):
        store.checkpoint()  # and again, never a hang
    store.close(checkpoint=False)
    with Store.open(db, write_behind=True) as reopened:
        assert reopened.items("claims") == {"kept": {"v": 1}}
        reopened.put("claims", "again", {"v": 3})
    with Store.open(db, readonly=True) as reader:
        assert reader.keys("claims") == ["kept", "again"]


def test_where_write_behind_cannot_work_it_is_refused_or_auto_leaves_it_off(
    tmp_path: Path,
) -> None:
    with pytest.raises(InvalidValueError, match="write_behind needs every value in memory"):
        Store.open(tmp_path / "s.db", write_behind=True, cache_size=10)
    with pytest.raises(InvalidValueError, match="write_behind needs the journal"):
        Store.open(tmp_path / "s.db", write_behind=True, journal=False)
    with pytest.raises(InvalidValueError, match="write_behind needs a SQLite file"):
        Store.open("sqlite://", write_behind=True)
    with pytest.raises(InvalidValueError, match="write_behind must be True, False or 'auto'"):
        Store.open(tmp_path / "s.db", write_behind="yes")
    for options in ({"cache_size": 10}, {"journal": False}):
        with Store.open(tmp_path / "s.db", write_behind="auto", **options) as store:
            assert store._checkpointer.writer is None
    with Store.open("sqlite://", write_behind="auto") as store:
        assert store._checkpointer.writer is None
    with Store.open(tmp_path / "s.db", write_behind="auto") as store:
        assert store._checkpointer.writer is not None


def test_signals_for_the_run_leave_its_writer_to_write_the_last_checkpoint(tmp_path: Path) -> None:
    # A Ctrl-C reaches the terminal's process group, a service manager's SIGTERM every process
    # of the run: the store checkpoints on them, which needs its writer alive.
    db = tmp_path / "s.db"
    store = Store.open(db, write_behind=True, auto_checkpoint=False, checkpoint_interval=0)
    writer = store._checkpointer.writer
    assert writer is not None
    _fill(store, 1500)
    os.kill(writer.pid, signal.SIGINT)
    os.kill(writer.pid, signal.SIGTERM)
    store.checkpoint()
    assert writer.running
    store.close()
    with Store.open(db, readonly=True) as reader:
        assert reader.count("claims") == 1500


@pytest.mark.postgres
def test_write_behind_is_refused_on_postgresql(fresh_postgres_url: str) -> None:
    with pytest.raises(InvalidValueError, match="write_behind needs a SQLite file"):
        Store.open(fresh_postgres_url, write_behind=True)
    with Store.open(fresh_postgres_url, write_behind="auto") as store:
        assert store._checkpointer.writer is None
