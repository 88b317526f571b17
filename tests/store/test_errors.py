"""Each bad input gives its StoreError subclass and a message that says what and where."""

from __future__ import annotations

import datetime
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from store import (
    InvalidValueError,
    MissingDriverError,
    NotADatabaseError,
    ReadOnlyError,
    Store,
    StoreClosedError,
    StoreNotFoundError,
)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ((1, 2), r"value for pods/p is not JSON: a tuple \(use a list.*at \$"),
        ({"a": {1: "x"}}, r"a dict key of type int \(JSON keys are strings\) at \$\.a"),
        ({"a": [1, float("nan")]}, r"the float nan .* at \$\.a\[1\]"),
        ({"t": datetime.datetime(2026, 1, 1)}, r"a value of type datetime at \$\.t"),
        ({"s": {1, 2}}, r"a value of type set at \$\.s"),
        (2**70, r"an integer outside the 64-bit range at \$"),
        ({"b": b"bytes"}, r"a value of type bytes at \$\.b"),
        ("\ud800", r"not valid UTF-8"),
    ],
    ids=["tuple", "int-key", "nan", "datetime", "set", "bigint", "bytes", "surrogate"],
)
def test_non_json_values_are_refused_on_every_backend(
    backend: Any, value: Any, message: str
) -> None:
    store = backend.open()
    with pytest.raises(InvalidValueError, match=message):
        store.put("pods", "p", value)
    assert store.get("pods", "p") is None  # nothing was written


@pytest.mark.parametrize(
    ("kind", "key", "message"),
    [
        ("", "k", "kind must be a non-empty string"),
        ("pods", "", "key must be a non-empty string"),
        (None, "k", "kind must be a non-empty string"),
        ("pods", 7, "key must be a non-empty string"),
    ],
)
def test_empty_or_non_string_kind_and_key(backend: Any, kind: Any, key: Any, message: str) -> None:
    store = backend.open()
    with pytest.raises(InvalidValueError, match=message):
        store.put(kind, key, 1)
    with pytest.raises(InvalidValueError, match=message):
        store.delete(kind, key)


def test_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(NotADatabaseError, match="is a directory, not a drasnap database file"):
        Store.open(tmp_path)


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(NotADatabaseError, match="does not exist"):
        Store.open(tmp_path / "nope" / "x.db")


def test_garbage_file_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    before = path.read_bytes()
    with pytest.raises(NotADatabaseError, match=r"notes\.db is not a drasnap database"):
        Store.open(path)
    assert path.read_bytes() == before


def test_foreign_sqlite_database_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY)")
    with pytest.raises(NotADatabaseError, match=r"not a drasnap database .*users"):
        Store.open(path)
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert names == {"users"}


def test_postgres_url_without_its_driver() -> None:
    with pytest.raises(MissingDriverError, match=r"pip install 'drasnap\[postgres\]'"):
        Store.open("postgresql+nosuchdriver://localhost/test")


def test_unknown_option_and_bad_values(db_path: Path) -> None:
    with pytest.raises(InvalidValueError, match=r"unknown Store option.*cache_sise"):
        Store.open(db_path, cache_sise=10)
    with pytest.raises(InvalidValueError, match="cache_size must be"):
        Store.open(db_path, cache_size=0)
    with pytest.raises(InvalidValueError, match="sync must be"):
        Store.open(db_path, sync="sometimes")
    with pytest.raises(InvalidValueError, match="store name must be a non-empty string"):
        Store.open(db_path, name="")


def test_closed_store(db_path: Path) -> None:
    store = Store.open(db_path)
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreClosedError, match=r"Cannot put into a closed store \('default'\)"):
        store.put("k", "a", 1)
    with pytest.raises(StoreClosedError, match="Cannot fork a closed store"):
        store.fork()
    with pytest.raises(StoreClosedError, match="Cannot read from a closed store"):
        store.items("k")
    with pytest.raises(StoreClosedError):
        store.get("k", "a")


def test_read_only_store_refuses_writes(db_path: Path) -> None:
    with Store.open(db_path) as store:
        store.put("k", "a", 1)
    with Store.open(db_path, readonly=True) as reader:
        assert reader.get("k", "a") == 1
        for call in (
            lambda: reader.put("k", "b", 2),
            lambda: reader.delete("k", "a"),
            reader.fork,
            reader.commit,
            reader.revert,
        ):
            with pytest.raises(ReadOnlyError, match="opened with readonly=True"):
                call()


def test_read_only_open_of_a_missing_store(db_path: Path) -> None:
    Store.open(db_path).close()
    with pytest.raises(StoreNotFoundError, match="no store named 'other'"):
        Store.open(db_path, name="other", readonly=True)
