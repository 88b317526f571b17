"""Each bad input gives its StoreError subclass and a message that says what and where."""

from __future__ import annotations

import collections
import datetime
import enum
import importlib.util
import sqlite3
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from drasnap.store import (
    DatabaseError,
    InvalidValueError,
    MissingDriverError,
    NotADatabaseError,
    ReadOnlyError,
    Store,
    StoreClosedError,
    StoreNotFoundError,
)
from drasnap.store.sql.engines import parse_target

from tests.conftest import Database

needs_psycopg = pytest.mark.skipif(
    importlib.util.find_spec("psycopg") is None,
    reason="needs psycopg: pip install -e '.[postgres]'",
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
        (
            {"spec": {"devices": [{"n": 1}, {"n": (2,)}]}},
            r"a tuple .* at \$\.spec\.devices\[1\]\.n",
        ),
        ({"o": collections.OrderedDict(a=1)}, r"a value of type OrderedDict at \$\.o"),
        ({"u": uuid.UUID(int=1)}, r"a value of type UUID at \$\.u"),
        ({"f": [float("inf")]}, r"the float inf .* at \$\.f\[0\]"),
    ],
    ids=[
        "tuple",
        "int-key",
        "nan",
        "datetime",
        "set",
        "bigint",
        "bytes",
        "surrogate",
        "nested-tuple",
        "dict-subclass",
        "uuid",
        "inf",
    ],
)
def test_non_json_values_are_refused_on_every_backend(
    backend: Any, value: Any, message: str
) -> None:
    store = backend.open()
    with pytest.raises(InvalidValueError, match=message):
        store.put("pods", "p", value)
    assert store.get("pods", "p") is None  # nothing was written


class _Level(enum.IntEnum):
    HIGH = 2


def test_int_and_str_enums_are_stored_as_their_values(backend: Any) -> None:
    """They encode as their value and come back equal to it (a plain int after a reopen)."""
    store = backend.open()
    store.put("pods", "p", {"level": _Level.HIGH})
    store = backend.reopen(store)
    assert store.get("pods", "p") == {"level": 2}


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


def test_postgres_url_without_its_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(MissingDriverError, match=r"pip install 'drasnap\[postgres\]'"):
        Store.open("postgresql+nosuchdriver://localhost/test")
    with pytest.raises(MissingDriverError, match=r"through psycopg 3, not psycopg2"):
        Store.open("postgresql+psycopg2://localhost/test")
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed
    with pytest.raises(
        MissingDriverError,
        match=r"postgresql\+psycopg://u:\*\*\*@localhost/test needs the psycopg driver: "
        r"install it with pip install 'drasnap\[postgres\]'",
    ):
        Store.open("postgresql+psycopg://u:secret@localhost/test")


def test_postgres_url_without_a_driver_means_psycopg() -> None:
    if importlib.util.find_spec("psycopg") is None:
        with pytest.raises(MissingDriverError, match="needs the psycopg driver"):
            parse_target("postgresql://u@localhost/test")
        return
    target = parse_target("postgresql://u:pw@localhost/test")
    assert target.url.drivername == "postgresql+psycopg"
    assert target.display == "postgresql+psycopg://u:***@localhost/test"


@needs_psycopg
def test_postgres_server_not_answering() -> None:
    # Nothing listens on port 1: connection refused, at once.
    with pytest.raises(DatabaseError, match="cannot connect to") as info:
        Store.open("postgresql+psycopg://someone:s3cret@127.0.0.1:1/test")
    message = str(info.value)
    assert "postgresql+psycopg://someone:***@127.0.0.1:1/test" in message
    assert "Connection refused" in message
    assert "s3cret" not in message


@pytest.mark.postgres
def test_postgres_unknown_role_and_database(postgres_url: str) -> None:
    from sqlalchemy.engine import make_url

    url = make_url(postgres_url)
    with pytest.raises(DatabaseError, match=r"cannot connect to .*nosuchrole_x.*does not exist"):
        Store.open(url.set(username="nosuchrole_x", password="pw").render_as_string(False))
    with pytest.raises(DatabaseError, match=r"cannot connect to .*no_such_db_x.*does not exist"):
        Store.open(url.set(database="no_such_db_x").render_as_string(hide_password=False))


@pytest.mark.postgres
def test_foreign_postgres_schema_is_left_alone(fresh_postgres_url: str) -> None:
    database = Database("postgres", fresh_postgres_url, fresh_postgres_url)
    database.sql("CREATE TABLE users (id INTEGER PRIMARY KEY)")
    with pytest.raises(
        NotADatabaseError, match=r"not a drasnap database .*users.*a schema of its own"
    ):
        Store.open(fresh_postgres_url)
    names = database.sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    )
    assert names == [("users",)]


def test_unknown_option_and_bad_values(db_path: Path) -> None:
    with pytest.raises(InvalidValueError, match=r"unknown Store option.*cache_sise"):
        Store.open(db_path, cache_sise=10)
    with pytest.raises(InvalidValueError, match="cache_size must be"):
        Store.open(db_path, cache_size=0)
    with pytest.raises(InvalidValueError, match="sync must be"):
        Store.open(db_path, sync="sometimes")
    with pytest.raises(InvalidValueError, match="base_commit_gap must be seconds"):
        Store.open(db_path, base_commit_gap=-1)
    # A number was once the gap: it is refused, not read as True or False.
    with pytest.raises(InvalidValueError, match="checkpoint_on_base_commit must be True or False"):
        Store.open(db_path, checkpoint_on_base_commit=0)
    with pytest.raises(InvalidValueError, match="store name must be a non-empty string"):
        Store.open(db_path, name="")


@pytest.mark.parametrize(
    ("kind", "key", "message"),
    [
        ("pods", "a\0b", "contains a NUL character"),
        ("po\0ds", "a", "contains a NUL character"),
        ("pods", "\ud800", "not valid UTF-8"),
    ],
    ids=["nul-key", "nul-kind", "surrogate-key"],
)
def test_names_sql_text_cannot_hold(backend: Any, kind: str, key: str, message: str) -> None:
    store = backend.open()
    with pytest.raises(InvalidValueError, match=message):
        store.put(kind, key, 1)
    with pytest.raises(InvalidValueError, match=message):
        store.fork(f"label {key}{kind}")


def test_read_only_open_of_a_missing_file_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    with pytest.raises(NotADatabaseError, match=r"typo\.db does not exist"):
        Store.open(path, readonly=True)
    assert list(tmp_path.iterdir()) == []


def test_closed_store(database: Database) -> None:
    store = Store.open(database.target)
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


def test_read_only_store_refuses_writes(database: Database) -> None:
    with Store.open(database.target) as store:
        store.put("k", "a", 1)
    with Store.open(database.target, readonly=True) as reader:
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


def test_read_only_open_of_a_missing_store(database: Database) -> None:
    Store.open(database.target).close()
    with pytest.raises(StoreNotFoundError, match="no store named 'other'"):
        Store.open(database.target, name="other", readonly=True)
