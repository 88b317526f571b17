"""Switching a new database to WAL waits for another writer doing the same, instead of failing
with "database is locked" (SQLite does not apply its busy timeout to that switch)."""

from __future__ import annotations

import sqlite3

import pytest
from drasnap.store.sql.engines import use_wal


class _Cursor:
    """Answers "database is locked" ``busy`` times, then succeeds; counts the attempts."""

    def __init__(self, busy: int, error: str = "database is locked") -> None:
        self.busy, self.error, self.attempts = busy, error, 0

    def execute(self, sql: str) -> None:
        assert sql == "PRAGMA journal_mode = WAL"
        self.attempts += 1
        if self.attempts <= self.busy:
            raise sqlite3.OperationalError(self.error)


def test_a_locked_switch_is_retried_until_it_goes_through() -> None:
    cur = _Cursor(busy=3)
    use_wal(cur)
    assert cur.attempts == 4


def test_it_gives_up_after_the_wait() -> None:
    cur = _Cursor(busy=10**9)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        use_wal(cur, wait=0.05)
    assert cur.attempts > 1


def test_other_errors_are_not_retried() -> None:
    cur = _Cursor(busy=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        use_wal(cur)
    assert cur.attempts == 1
