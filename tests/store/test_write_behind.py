"""Write-behind (``write_behind=True``): the policy's checkpoints go to SQL on a thread of their
own, ``checkpoint()`` and ``close()`` still wait, and a failed background write is reported and
then written again, never lost. (Crashes mid-flush: tests/store/test_crash.py.)"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from store import DatabaseError, InvalidValueError, Journal, Store, persist


def _recording_flush(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the thread of every flush."""
    threads: list[str] = []
    real = persist.flush

    def flush(conn: Any, owed: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(conn, owed)

    monkeypatch.setattr(persist, "flush", flush)
    return threads


def test_policy_checkpoints_are_written_behind_and_checkpoint_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = _recording_flush(monkeypatch)
    db = tmp_path / "s.db"
    store = Store.open(db, write_behind=True, auto_checkpoint=False, checkpoint_interval=0)
    store.put("claims", "a", {"v": 1})
    assert store.maybe_checkpoint()
    store.put("claims", "b", {"v": 2})
    store.fork("try")
    store.put("claims", "a", {"v": 3})
    store.checkpoint()  # waits for the flush in flight, then writes its own
    assert threads == ["drasnap-writer", threading.current_thread().name]
    with Store.open(db, readonly=True) as reader:  # durable now: another process sees it
        assert reader.items("claims") == {"a": {"v": 3}, "b": {"v": 2}}
        assert reader.state_digest() == store.state_digest()
    store.close()


def test_close_waits_for_the_flush_in_flight(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = Store.open(db, write_behind=True, auto_checkpoint=False, checkpoint_interval=0)
    for i in range(2000):
        store.put("claims", f"k{i}", {"i": i})
    assert store.maybe_checkpoint()
    digest = store.state_digest()
    store.close()
    with Store.open(db, readonly=True) as reader:
        assert reader.count("claims") == 2000
        assert reader.state_digest() == digest


def test_a_failed_background_write_is_reported_then_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.db"
    store = Store.open(db, write_behind=True, auto_checkpoint=False, checkpoint_interval=0)
    real = persist.flush
    failures = [OperationalError("INSERT", {}, Exception("disk I/O error"))]

    def flaky(conn: Any, owed: Any) -> Any:
        if failures:
            raise failures.pop()
        return real(conn, owed)

    monkeypatch.setattr(persist, "flush", flaky)
    store.put("claims", "a", {"v": 1})
    assert store.maybe_checkpoint()  # fails on the writer's thread: told at the next checkpoint
    store.put("claims", "b", {"v": 2})
    with pytest.raises(DatabaseError, match="disk I/O error"):
        store.checkpoint()
    store.checkpoint()  # the failed rows first, then what came since
    digest = store.state_digest()
    store.close()
    with Store.open(db) as reopened:
        assert reopened.items("claims") == {"a": {"v": 1}, "b": {"v": 2}}
        assert reopened.state_digest() == digest
    with Journal.open(db) as journal:  # every row once, in order, the chain unbroken
        ops = [(r.op, r.key) for r in journal.records()]
    assert ops == [("put", "a"), ("checkpoint", None), ("put", "b"), ("checkpoint", None)]


def test_write_behind_needs_every_value_in_memory(tmp_path: Path) -> None:
    with pytest.raises(InvalidValueError, match="write_behind needs every value in memory"):
        Store.open(tmp_path / "s.db", write_behind=True, cache_size=10)
    with pytest.raises(InvalidValueError, match="write_behind must be True or False"):
        Store.open(tmp_path / "s.db", write_behind="yes")
