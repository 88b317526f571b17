"""The journal chain (store.chain): every checkpoint records a digest of the rows since the
previous one, so `replay(verify=True)` catches an edit of any row — a write of a reverted layer
included, which the state digest cannot see — and names the checkpoint whose rows changed."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from drasnap.store import Journal, Store, replay
from drasnap.store.chain import ChainHasher, chain_of
from drasnap.store.codec import encode
from drasnap.store.sql.engines import alembic_config
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import create_engine

from tests.conftest import Database
from tests.store.journal_session import Session, claim, record_session


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return record_session(tmp_path_factory.mktemp("chain") / "session.db")


@pytest.fixture
def copy(session: Session, tmp_path: Path) -> Path:
    path = tmp_path / "edited.db"
    shutil.copy(session.path, path)
    return path


def edit(path: Path, sql: str, *params: Any) -> None:
    with sqlite3.connect(path) as conn:
        assert conn.execute(sql, params).rowcount == 1


def checkpoints(path: Path) -> list[int]:
    with Journal.open(path) as journal:
        return [r.seq for r in journal.records() if r.op == "checkpoint"]


ROW = st.tuples(
    st.integers(1, 2**31),
    st.integers(1, 2**40),
    st.floats(0, 4e9, allow_nan=False),
    st.sampled_from(["put", "delete", "fork", "commit", "revert", "checkpoint"]),
    st.integers(0, 9),
    st.integers(0, 2**40),
    st.none() | st.integers(0, 2**40),
    st.none() | st.text(max_size=5),
    st.none() | st.text(max_size=5),
    st.none() | st.text(max_size=5),
    st.none() | st.just('{"a":[1,2.5,"x"]}') | st.just("null"),
    st.none() | st.text("0123456789abcdef", min_size=32, max_size=32),
    st.none() | st.text("0123456789abcdef", min_size=32, max_size=32),
)


@given(st.none() | st.text("0123456789abcdef", min_size=32, max_size=32), st.lists(ROW))
def test_row_by_row_equals_all_at_once(previous: str | None, rows: list[Any]) -> None:
    hasher = ChainHasher(previous)
    for row in rows:
        hasher.add(row)
    assert hasher.finish() == chain_of(previous, rows)


@given(
    st.none() | st.text("0123456789abcdef", min_size=32, max_size=32),
    st.lists(ROW),
    st.lists(st.integers(0, 5)),
)
def test_batches_equal_all_at_once(previous: str | None, rows: list[Any], cuts: list[int]) -> None:
    # The write-behind process hashes the rows in the batches it receives them in.
    hasher = ChainHasher(previous)
    rest = rows
    for n in cuts:
        hasher.add_many(rest[:n])
        rest = rest[n:]
    hasher.add_many(rest)
    assert hasher.finish() == chain_of(previous, rows)


def test_every_checkpoint_records_a_chain_and_an_untouched_journal_verifies(
    session: Session,
) -> None:
    with Journal.open(session.path) as journal:
        chains = [r.chain for r in journal.records() if r.op == "checkpoint"]
    assert len(chains) == 3 and all(c is not None and len(c) == 32 for c in chains)
    assert len(set(chains)) == 3
    report = replay(session.path, verify=True)
    assert report.divergence is None and report.checkpoints_verified == 3


EDITS: dict[str, tuple[str, Callable[[Session], tuple[Any, ...]]]] = {
    # The write of layer "try node-b", which was reverted: the state never shows it.
    "reverted-write-value": (
        "UPDATE journal SET value = ? WHERE store_id = 1 AND seq = ?",
        lambda s: (encode(claim("ml", "train-1", [("node-b", "gpu-7")], node="node-b")),
                   s.marks["train-1 on node-b"]),
    ),
    "reverted-fork-label": (
        "UPDATE journal SET label = 'renamed' WHERE store_id = 1 AND seq = ?",
        lambda s: (s.marks["fork try node-b"],),
    ),
    "write-time": (
        "UPDATE journal SET ts = ts + 1 WHERE store_id = 1 AND seq = ?",
        lambda s: (s.marks["train-0 on node-a"],),
    ),
    "checkpoint-time": (
        "UPDATE journal SET ts = ts + 1 WHERE store_id = 1 AND seq = ?",
        lambda s: (s.marks["committed"],),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", EDITS)
def test_an_edited_row_names_the_checkpoint_after_it(
    session: Session, copy: Path, name: str
) -> None:
    sql, params = EDITS[name]
    edit(copy, sql, *params(session))
    report = replay(copy, verify=True)
    d = report.divergence
    assert d is not None and report.matches is False
    first, second, _ = checkpoints(copy)
    assert (d.seq, d.journal_from) == (second, first + 1)
    assert report.checkpoints_verified == 1
    assert f"journal rows from seq {first + 1} to {second} were changed" in d.describe()
    assert report.state_digest == session.digests[second]  # the state itself matched


def test_an_edited_chain_is_caught_at_its_checkpoint(session: Session, copy: Path) -> None:
    edit(copy, "UPDATE journal SET chain = ? WHERE store_id = 1 AND seq = ?", "0" * 32, 6)
    d = replay(copy, verify=True).divergence
    assert d is not None and (d.seq, d.journal_from) == (6, 1)


def test_a_journal_recorded_before_chains_verifies_by_the_state_and_chains_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    with Store.open(path, auto_checkpoint=False) as store:
        store.put("k", "a", 1)
        store.fork("x")
        store.put("k", "b", 2)
        store.revert()
        store.checkpoint()
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0004")
    engine.dispose()
    with Store.open(path, auto_checkpoint=False) as store:  # upgrades: old rows, no chain
        store.fork("y")
        store.put("k", "c", 3)
        store.revert()
        store.checkpoint()
    with Journal.open(path) as journal:
        chains = [r.chain for r in journal.records() if r.op == "checkpoint"]
    assert chains[0] is None and chains[-1] is not None
    assert replay(path, verify=True).divergence is None
    edit(path, "UPDATE journal SET value = '4' WHERE store_id = 1 AND op = 'put' AND key = 'c'")
    d = replay(path, verify=True).divergence
    assert d is not None and d.journal_from is not None


def test_an_edit_of_a_reverted_write_is_caught_on_every_database(database: Database) -> None:
    session = record_session(database.target)
    assert replay(database.target, verify=True).divergence is None
    database.sql(
        "UPDATE journal SET value = :v WHERE seq = :q AND store_id = "
        "(SELECT id FROM stores WHERE name = 'default')",
        v=encode(claim("ml", "train-1")),
        q=session.marks["train-1 on node-b"],
    )
    d = replay(database.target, verify=True).divergence
    assert d is not None
    assert (d.seq, d.journal_from) == (session.marks["committed"], session.marks["base"] + 1)
