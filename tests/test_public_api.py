"""The packages' public names: importable, documented, and the two stores interchangeable."""

from __future__ import annotations

import inspect
import pkgutil
from pathlib import Path

import pytest

import snapshot
import store


@pytest.mark.parametrize("package", [store, snapshot], ids=["store", "snapshot"])
def test_every_exported_name_exists_and_is_documented(package: object) -> None:
    names = package.__all__  # type: ignore[attr-defined]
    assert len(names) == len(set(names))
    for name in names:
        obj = getattr(package, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, f"{package.__name__}.{name} has no docstring"  # type: ignore[attr-defined]


def test_errors_have_one_base_per_package() -> None:
    for name in store.__all__:
        obj = getattr(store, name)
        if inspect.isclass(obj) and issubclass(obj, Exception):
            assert issubclass(obj, store.StoreError), name
    for name in snapshot.__all__:
        obj = getattr(snapshot, name)
        if inspect.isclass(obj) and issubclass(obj, Exception):
            assert issubclass(obj, snapshot.SnapshotError), name


def test_the_stores_keep_their_contracts(tmp_path: Path) -> None:
    """mypy checks the signatures (store/__init__.py); this checks the objects at run time."""
    with store.Store.open(tmp_path / "s.db") as durable:
        durable.put("k", "a", 1)
        for backend in (store.MemoryStore(), durable):
            assert isinstance(backend, store.VersionedStore), type(backend).__name__
    with store.open_state(tmp_path / "s.db") as state:
        assert isinstance(state, store.ReadOnlyState)
        assert not isinstance(state, store.VersionedStore)  # a state to read, not to write


@pytest.mark.parametrize("package", [store, snapshot], ids=["store", "snapshot"])
def test_the_package_docstring_names_every_module(package: object) -> None:
    """The structure written out in the package's docstring matches its files."""
    doc = package.__doc__ or ""
    names = {
        info.name
        for info in pkgutil.iter_modules(package.__path__)  # type: ignore[attr-defined]
    }
    missing = sorted(name for name in names if f"``{name}``" not in doc)
    assert not missing, f"{package.__name__}'s docstring does not describe {missing}"
