"""Checkpoints, the journal, locking, readers, named stores and the bounded cache."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from store import MemoryStore, Store, StoreLockedError

ROOT = Path(__file__).resolve().parents[2]


def journal(path: Path, name: str = "default") -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT j.seq, j.op, j.depth, j.layer, j.parent, j.label, j.kind, j.key, j.value, "
            "j.digest FROM journal j "
            "JOIN stores ON stores.id = j.store_id WHERE stores.name = ? ORDER BY j.seq",
            (name,),
        ).fetchall()


def test_journal_records_every_operation_in_order(db_path: Path) -> None:
    with Store.open(db_path, auto_checkpoint=False) as store:
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
    rows = journal(db_path)
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


def test_journal_off_writes_no_journal_and_says_so(db_path: Path) -> None:
    with Store.open(db_path, journal=False) as store:
        store.put("k", "a", 1)
        store.fork()
        store.checkpoint()
        assert not store.journal_complete
    assert journal(db_path) == []
    with Store.open(db_path, readonly=True) as reader:
        assert reader.get("k", "a") == 1
        assert reader.depth == 1
        assert not reader.journal_complete


def test_state_is_written_only_at_checkpoints(db_path: Path) -> None:
    writer = Store.open(db_path, auto_checkpoint=False)
    writer.put("k", "a", 1)
    writer.checkpoint()
    writer.fork("open layer")
    writer.put("k", "a", 2)
    with Store.open(db_path, readonly=True) as reader:
        assert reader.get("k", "a") == 1 and reader.depth == 0
    writer.checkpoint()
    with Store.open(db_path, readonly=True) as reader:
        assert reader.get("k", "a") == 2 and reader.depth == 1
        assert reader.layers()[1].label == "open layer"
    writer.close()


def test_commit_into_the_base_checkpoints_by_default(db_path: Path) -> None:
    with Store.open(db_path) as writer:
        writer.fork()
        writer.put("k", "a", 1)
        writer.commit()
        with Store.open(db_path, readonly=True) as reader:
            assert reader.get("k", "a") == 1


def test_checkpoint_interval(db_path: Path) -> None:
    with Store.open(db_path, checkpoint_interval=0, checkpoint_on_base_commit=False) as writer:
        for i in range(300):  # the policy is looked at every 256 operations
            writer.put("k", f"key{i}", i)
        with Store.open(db_path, readonly=True) as reader:
            assert reader.count("k") >= 256


def test_many_named_stores_in_one_database(db_path: Path) -> None:
    with Store.open(db_path, name="one") as one, Store.open(db_path, name="two") as two:
        one.put("k", "a", 1)
        two.put("k", "a", 2)
        two.fork("two's layer")
    with Store.open(db_path, name="one") as one, Store.open(db_path, name="two") as two:
        assert (one.get("k", "a"), one.depth) == (1, 0)
        assert (two.get("k", "a"), two.depth) == (2, 1)


def test_second_writer_in_the_same_process_is_refused(db_path: Path) -> None:
    with Store.open(db_path, name="sim"):
        with pytest.raises(
            StoreLockedError, match=r"store 'sim' .* is open for writing by process"
        ):
            Store.open(db_path, name="sim")
        Store.open(db_path, name="other").close()  # other names are free
        Store.open(db_path, name="sim", readonly=True).close()  # readers are welcome
    Store.open(db_path, name="sim").close()  # released on close


def test_second_writer_process_gets_the_holders_pid(db_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys
                from store import Store
                s = Store.open({str(db_path)!r}, name="sim")
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
            Store.open(db_path, name="sim")
        assert info.value.pid == holder.pid
        assert f"process {holder.pid}" in str(info.value)
        assert info.value.name == "sim"
        with Store.open(db_path, name="sim", readonly=True) as reader:  # never blocked
            assert reader.get("k", "a") == 1
    finally:
        holder.communicate("\n", timeout=30)  # lets it close, and closes our pipe ends
    Store.open(db_path, name="sim").close()


def test_killed_writer_leaves_no_lock(db_path: Path) -> None:
    code = f"import os, signal; from store import Store; s = Store.open({str(db_path)!r}); "
    code += "s.put('k', 'a', 1); s.checkpoint(); os.kill(os.getpid(), signal.SIGKILL)"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False)
    with Store.open(db_path) as store:
        assert store.get("k", "a") == 1


def test_bounded_cache_holds_more_than_it_caches(db_path: Path) -> None:
    model = MemoryStore()
    with Store.open(db_path) as store:
        for i in range(500):
            store.put("slices", f"node-{i}", {"i": i})
            model.put("slices", f"node-{i}", {"i": i})
    with Store.open(db_path, cache_size=16) as store:
        store.fork("f")
        for i in range(0, 500, 7):
            store.put("slices", f"node-{i}", {"i": -i})
            model.put("slices", f"node-{i}", {"i": -i})
        store.delete("slices", "node-3")
        model.delete("slices", "node-3")
        for i in range(500):
            assert store.get("slices", f"node-{i}") == model.get("slices", f"node-{i}")
        assert len(store._values["slices"]) <= 16
        assert store.items("slices") == model.items("slices")
        assert store.count("slices") == 499
        assert store.state_digest() == model.state_digest()
        store.revert()
        assert store.get("slices", "node-7") == {"i": 7}
        assert store.layers()[0].entries == 500


def test_digest_is_the_same_on_every_backend_and_after_reopen(db_path: Path) -> None:
    model = MemoryStore()
    with Store.open(db_path) as store:
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
    with Store.open(db_path) as store:
        assert store.state_digest() == digest
        store.revert()
        model.revert()
        assert store.state_digest() == model.state_digest() != digest
