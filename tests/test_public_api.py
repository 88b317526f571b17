"""The packages' public names: importable, documented, and the two stores interchangeable."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from drasnap import snapshot, store


@pytest.mark.parametrize("package", [store, snapshot], ids=["store", "snapshot"])
def test_every_exported_name_exists_and_is_documented(package: object) -> None:
    names = package.__all__  # type: ignore[attr-defined]
    assert len(names) == len(set(names))
    for name in names:
        obj = getattr(package, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__doc__, f"{package.__name__}.{name} has no docstring"  # type: ignore[attr-defined]


def test_errors_have_one_base_per_package() -> None:
    """Every error (a name ending in Error) has its package's base; the one exception that is
    no error, a run stopped by a signal, is named so."""
    for package, base in ((store, store.StoreError), (snapshot, snapshot.SnapshotError)):
        for name in package.__all__:
            obj = getattr(package, name)
            if inspect.isclass(obj) and issubclass(obj, Exception):
                assert issubclass(obj, base) == name.endswith("Error"), name
    assert not issubclass(snapshot.RunInterrupted, snapshot.SnapshotError)


def test_the_stores_keep_their_contracts(tmp_path: Path) -> None:
    """mypy checks the signatures (store/__init__.py); this checks the objects at run time."""
    with store.Store.open(tmp_path / "s.db") as durable:
        durable.put("k", "a", 1)
        for backend in (store.MemoryStore(), durable):
            assert isinstance(backend, store.VersionedStore), type(backend).__name__
    with store.open_state(tmp_path / "s.db") as state:
        assert isinstance(state, store.ReadOnlyState)
        assert not isinstance(state, store.VersionedStore)  # a state to read, not to write


PACKAGES = [
    "drasnap.snapshot",
    "drasnap.store",
    "drasnap.tools",
    *sorted(
        info.name
        for root in (store, snapshot)
        for info in pkgutil.walk_packages(root.__path__, f"{root.__name__}.")
        if info.ispkg
    ),
]


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_says_what_it_holds_and_what_it_never_imports(name: str) -> None:
    doc = importlib.import_module(name).__doc__ or ""
    assert len(doc.split()) >= 15, f"{name} has no docstring saying what it holds"
    assert "never" in doc or name == "drasnap.tools", (
        f"{name}'s docstring: what must it never import?"
    )


@pytest.mark.parametrize("package", [store, snapshot], ids=["store", "snapshot"])
def test_the_public_names_are_sorted_and_each_exists(package: object) -> None:
    """Each name of the package's stub (``__init__.pyi``) is loaded from the module it names."""
    names = list(package.__all__)  # type: ignore[attr-defined]
    assert names == sorted(names)
    for name in names:
        assert getattr(package, name) is not None, name
