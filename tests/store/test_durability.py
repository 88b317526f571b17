"""Checkpoints, the journal, locking, readers, named stores and the bounded cache, on SQLite
and PostgreSQL (``database``: a fresh SQLite file or PostgreSQL schema per test)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import MemoryStore, Store, StoreLockedError
from drasnap.store.sql import persist
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from tests.conftest import Database

ROOT = Path(__file__).resolve().parents[2]


def journal(database: Database, name: str = "default") -> list[tuple[Any, ...]]:
    return database.sql(
        "SELECT j.seq, j.op, j.depth, j.layer, j.parent, j.label, j.kind, j.key, j.value, "
        "j.digest FROM journal j "
        "JOIN stores ON stores.id = j.store_id WHERE stores.name = :name ORDER BY j.seq",
        name=name,
    )


def test_journal_records_every_operation_in_order(database: Database) -> None:
    with Store.open(database.target, auto_checkpoint=False) as store:
        store.put("claims", "a", {"n": 1})
        store.fork("try node-1")
        store.put("claims", "b", [1])
        store.delete("claims", "a")
        store.revert()
        store.fork("try node-2")
        store.put("claims", "c", True)
        store.commit()
        store.checkpoint()
        digest = store.state_digest()
    rows = journal(database)
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1))  # strictly increasing
    assert [r[1] for r in rows] == [
        "put", "fork", "put", "delete", "revert", "fork", "put", "commit", "checkpoint",
    ]  # fmt: skip
    # the reverted layer's operations are there too, with the layer they happened in
    fork1, put_b, delete_a = rows[1], rows[2], rows[3]
    assert fork1[5] == "try node-1" and fork1[2] == 1
    assert put_b[3] == fork1[3] and put_b[6:9] == ("claims", "b", "[1]")
    assert delete_a[6:8] == ("claims", "a") and delete_a[8] is None
    commit = rows[7]
    assert commit[3] == rows[5][3] and commit[4] == 0  # merged layer 2 into the base
    assert rows[-1][9] == digest
    # close() after the explicit checkpoint adds nothing: nothing was pending
    assert rows[-1][1] == "checkpoint"


def test_journal_off_writes_no_journal_and_says_so(database: Database) -> None:
    with Store.open(database.target, journal=False) as store:
        store.put("k", "a", 1)
        store.fork()
        store.checkpoint()
        assert not store.journal_complete
    assert journal(database) == []
    with Store.open(database.target, readonly=True) as reader:
        assert reader.get("k", "a") == 1
        assert reader.depth == 1
        assert not reader.journal_complete


def test_state_is_written_only_at_checkpoints(database: Database) -> None:
    writer = Store.open(database.target, auto_checkpoint=False)
    writer.put("k", "a", 1)
    writer.checkpoint()
    writer.fork("open layer")
    writer.put("k", "a", 2)
    with Store.open(database.target, readonly=True) as reader:
        assert reader.get("k", "a") == 1 and reader.depth == 0
    writer.checkpoint()
    with Store.open(database.target, readonly=True) as reader:
        assert reader.get("k", "a") == 2 and reader.depth == 1
        assert reader.layers()[1].label == "open layer"
    writer.close()


def test_commit_into_the_base_checkpoints(database: Database) -> None:
    with Store.open(database.target, base_commit_gap=0) as writer:
        writer.fork()
        writer.put("k", "a", 1)
        writer.commit()
        with Store.open(database.target, readonly=True) as reader:
            assert reader.get("k", "a") == 1


def test_commits_into_the_base_checkpoint_at_most_once_a_gap(database: Database) -> None:
    # The default gap (1 s) is longer than this test: right after opening, commits into the
    # base do not checkpoint; with a gap of 0 the next one does.
    with Store.open(database.target) as writer:
        for i in range(3):
            writer.fork()
            writer.put("k", f"a{i}", i)
            writer.commit()
        with Store.open(database.target, readonly=True) as reader:
            assert reader.count("k") == 0
    with Store.open(database.target, readonly=True) as reader:
        assert reader.count("k") == 3  # close() checkpoints


def test_checkpoint_interval(database: Database) -> None:
    with Store.open(
        database.target, checkpoint_interval=0, checkpoint_on_base_commit=False
    ) as writer:
        for i in range(300):  # the policy is looked at every 256 operations
            writer.put("k", f"key{i}", i)
        with Store.open(database.target, readonly=True) as reader:
            assert reader.count("k") >= 256


def test_many_named_stores_in_one_database(database: Database) -> None:
    with (
        Store.open(database.target, name="one") as one,
        Store.open(database.target, name="two") as two,
    ):
        one.put("k", "a", 1)
        two.put("k", "a", 2)
        two.fork("two's layer")
    with (
        Store.open(database.target, name="one") as one,
        Store.open(database.target, name="two") as two,
    ):
        assert (one.get("k", "a"), one.depth) == (1, 0)
        assert (two.get("k", "a"), two.depth) == (2, 1)


def test_second_writer_in_the_same_process_is_refused(database: Database) -> None:
    with Store.open(database.target, name="sim"):
        with pytest.raises(
            StoreLockedError, match=r"store 'sim' .* is open for writing by process"
        ):
            Store.open(database.target, name="sim")
        Store.open(database.target, name="other").close()  # other names are free
        Store.open(database.target, name="sim", readonly=True).close()  # readers are welcome
    Store.open(database.target, name="sim").close()  # released on close


def test_second_writer_process_gets_the_holders_pid(database: Database) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys
                from drasnap.store import Store
                s = Store.open({database.target!r}, name="sim")
                s.put("k", "a", 1)
                s.checkpoint()
                print("held", flush=True)
                sys.stdin.readline()
                s.close()
                """
            ),
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreLockedError) as info:
            Store.open(database.target, name="sim")
        assert info.value.pid == holder.pid
        assert f"process {holder.pid}" in str(info.value)
        assert info.value.name == "sim"
        with Store.open(database.target, name="sim", readonly=True) as reader:  # never blocked
            assert reader.get("k", "a") == 1
    finally:
        holder.communicate("\n", timeout=30)  # lets it close, and closes our pipe ends
    Store.open(database.target, name="sim").close()


def test_killed_writer_leaves_no_lock(database: Database) -> None:
    code = "import os, signal; from drasnap.store import Store; "
    code += f"s = Store.open({database.target!r}); "
    code += "s.put('k', 'a', 1); s.checkpoint(); os.kill(os.getpid(), signal.SIGKILL)"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False)
    with Store.open(database.target) as store:
        assert store.get("k", "a") == 1


def test_bounded_cache_holds_more_than_it_caches(database: Database) -> None:
    model = MemoryStore()
    with Store.open(database.target) as store:
        for i in range(500):
            store.put("slices", f"node-{i}", {"i": i})
            model.put("slices", f"node-{i}", {"i": i})
    with Store.open(database.target, cache_size=16) as store:
        store.fork("f")
        for i in range(0, 500, 7):
            store.put("slices", f"node-{i}", {"i": -i})
            model.put("slices", f"node-{i}", {"i": -i})
        store.delete("slices", "node-3")
        model.delete("slices", "node-3")
        for i in range(500):
            assert store.get("slices", f"node-{i}") == model.get("slices", f"node-{i}")
        assert len(store._cache.values["slices"]) <= 16
        assert store.items("slices") == model.items("slices")
        assert store.count("slices") == 499
        assert store.state_digest() == model.state_digest()
        store.revert()
        assert store.get("slices", "node-7") == {"i": 7}
        assert store.layers()[0].entries == 500


def test_digest_is_the_same_on_every_backend_and_after_reopen(database: Database) -> None:
    model = MemoryStore()
    with Store.open(database.target) as store:
        for target in (model, store):
            target.put("a", "x", {"deep": [1, 2, {"z": None}]})
            target.fork()
            target.put("b", "y", "text")
            target.delete("a", "x")
            target.commit()
            target.fork()
            target.put("a", "q", 1.5)
        assert store.state_digest() == model.state_digest()
        digest = store.state_digest()
    with Store.open(database.target) as store:
        assert store.state_digest() == digest
        store.revert()
        model.revert()
        assert store.state_digest() == model.state_digest() != digest


def test_reader_connection_cannot_write(database: Database) -> None:
    with Store.open(database.target) as store:
        store.put("k", "a", 1)
    with Store.open(database.target, readonly=True) as reader:
        conn = reader._conn
        assert conn is not None
        with pytest.raises(Exception, match=r"read-only|readonly|query_only"), conn.begin():
            conn.exec_driver_sql("DELETE FROM entries")
        assert reader.get("k", "a") == 1
    with Store.open(database.target, readonly=True) as reader:
        assert reader.get("k", "a") == 1


def test_writers_racing_to_create_one_store(database: Database) -> None:
    """Two writers open a new store at the same moment: one gets it, the other is told who
    has it (never an integrity error from creating the same row twice)."""
    barrier = threading.Barrier(4)
    outcomes: list[object] = []

    def open_it() -> None:
        barrier.wait()
        try:
            outcomes.append(Store.open(database.target, name="contested"))
        except Exception as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stores = [o for o in outcomes if isinstance(o, Store)]
    errors = [o for o in outcomes if not isinstance(o, Store)]
    for s in stores:
        s.close()
    assert len(stores) == 1, outcomes
    assert all(isinstance(e, StoreLockedError) for e in errors), errors
    assert database.sql("SELECT count(*) FROM stores WHERE name = 'contested'") == [(1,)]


def test_drop_deletes_one_store_and_nothing_else(database: Database) -> None:
    with Store.open(database.target, name="keep") as keep:
        keep.put("k", "a", 1)
    with Store.open(database.target, name="gone") as gone:
        gone.put("k", "a", 2)
        gone.fork("open layer")
        gone.put("k", "b", 3)
        with pytest.raises(StoreLockedError):
            Store.drop(database.target, name="gone")  # not while a writer has it
    assert Store.drop(database.target, name="gone") is True
    assert Store.drop(database.target, name="gone") is False
    assert [r[0] for r in database.sql("SELECT name FROM stores")] == ["keep"]
    for table in ("entries", "layers", "journal"):
        rows = database.sql(
            f"SELECT count(*) FROM {table} WHERE store_id NOT IN (SELECT id FROM stores)"
        )
        assert rows == [(0,)], table
    with Store.open(database.target, name="keep", readonly=True) as keep:
        assert keep.get("k", "a") == 1
    with Store.open(database.target, name="gone") as again:  # a new, empty store
        assert again.items("k") == {} and again.depth == 0


def test_drop_of_a_file_that_does_not_exist(tmp_path: Path) -> None:
    assert Store.drop(tmp_path / "nothing.db", name="x") is False
    assert not (tmp_path / "nothing.db").exists()


def test_backend_names_the_database(database: Database) -> None:
    with Store.open(database.target) as store:
        word = {"sqlite": "sqlite", "postgres": "postgresql"}[database.kind]
        assert store.backend.startswith(f"{word} ")
        assert store.backend.split()[1][0].isdigit()


# -- PostgreSQL only ----------------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.parametrize(("sync", "setting"), [("off", "off"), ("normal", "off"), ("full", "on")])
def test_sync_maps_to_synchronous_commit(fresh_postgres_url: str, sync: str, setting: str) -> None:
    with Store.open(fresh_postgres_url, sync=sync) as store:
        conn = store._conn
        assert conn is not None
        with conn.begin():
            assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == setting


@pytest.mark.postgres
def test_same_store_name_in_two_schemas_is_two_stores(
    fresh_postgres_url: str, postgres_url: str
) -> None:
    """The advisory lock key includes the schema: same name, other schema, no conflict."""
    with (
        Store.open(fresh_postgres_url, name="sim") as one,
        Store.open(postgres_url, name="sim") as two,
    ):
        one.put("k", "a", 1)
        two.put("k", "a", 2)
        with pytest.raises(StoreLockedError):
            Store.open(fresh_postgres_url, name="sim")
    with (
        Store.open(fresh_postgres_url, name="sim", readonly=True) as one,
        Store.open(postgres_url, name="sim", readonly=True) as two,
    ):
        assert (one.get("k", "a"), two.get("k", "a")) == (1, 2)
    assert Store.drop(postgres_url, name="sim")  # the shared schema outlives this test


@pytest.mark.postgres
def test_two_inserts_of_one_store_row_at_once(fresh_postgres_url: str) -> None:
    """The second of two concurrent creations of a store row waits, then does nothing (the
    race the threads above can hit, made certain)."""
    Store.open(fresh_postgres_url, name="first").close()  # the schema
    engine = create_engine(fresh_postgres_url, poolclass=NullPool)
    errors: list[BaseException] = []
    with engine.connect() as a, engine.connect() as b:
        first = a.begin()
        persist.create_store(a, "x", journal_on=True)

        def second() -> None:
            try:
                with b.begin():
                    persist.create_store(b, "x", journal_on=True)
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=second)
        thread.start()
        thread.join(0.3)
        assert thread.is_alive()  # waiting for the first insert's transaction
        first.commit()
        thread.join(10)
    engine.dispose()
    assert errors == []
    with Store.open(fresh_postgres_url, name="x") as store:
        assert store.depth == 0


def test_writer_waits_briefly_for_a_holder_that_has_just_died(database: Database) -> None:
    """On PostgreSQL a killed holder's lock lives until the server notices the dropped
    connection: a writer whose recorded holder is a dead local process waits for that (and
    only then), then gets the store."""
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(finished.stdout)
    holder = Store.open(database.target, name="sim")
    database.sql("UPDATE stores SET holder_pid = :p WHERE name = 'sim'", p=dead_pid)
    releaser = threading.Timer(0.3, holder.close)  # the server noticing, as it were
    releaser.start()
    started = time.monotonic()
    try:
        with Store.open(database.target, name="sim") as store:
            assert store.depth == 0
    finally:
        releaser.join()
    assert 0.25 < time.monotonic() - started < 5


def test_writer_waits_for_a_holder_that_is_closing(database: Database) -> None:
    """A closing holder clears its record before it frees the lock: a writer that reads no
    holder in that moment waits for the lock instead of refusing."""
    holder = Store.open(database.target, name="sim")
    database.sql("UPDATE stores SET holder_pid = NULL, holder_host = NULL WHERE name = 'sim'")
    releaser = threading.Timer(0.3, holder.close)
    releaser.start()
    try:
        with Store.open(database.target, name="sim") as store:
            assert store.depth == 0
    finally:
        releaser.join()


def test_writer_does_not_wait_for_a_live_holder(database: Database) -> None:
    with Store.open(database.target, name="sim"):
        started = time.monotonic()
        with pytest.raises(StoreLockedError, match=f"process {os.getpid()}"):
            Store.open(database.target, name="sim")
        assert time.monotonic() - started < 2
