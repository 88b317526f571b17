"""Shared fixtures: every store test runs against each backend.

``backend`` is a :class:`Backend` that opens a fresh store and can "reopen" it: for the
``sqlite-reopen`` variant that closes the store and opens the file again, so each test also
checks that what it built survives a close and reopen; for the others it returns the same object.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from store import MemoryStore, Store

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
POSTGRES_URL = os.environ.get("DRASNAP_TEST_POSTGRES_URL")


@dataclass
class Backend:
    name: str
    tmp: Path
    opened: list[Any]

    def open(self, **options: Any) -> Any:
        if self.name == "memory":
            store: Any = MemoryStore()
        else:
            store = Store.open(self.tmp / "store.db", **options)
        self.opened.append(store)
        return store

    def reopen(self, store: Any, **options: Any) -> Any:
        if self.name != "sqlite-reopen":
            return store
        store.close()
        again = Store.open(self.tmp / "store.db", **options)
        self.opened.append(again)
        return again


@pytest.fixture(params=["memory", "sqlite", "sqlite-reopen"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    b = Backend(request.param, tmp_path, [])
    yield b
    for store in b.opened:
        store.close()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A path for a SQLite database file that does not exist yet."""
    return tmp_path / "drasnap.db"
