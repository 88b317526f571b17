"""The packages' public names: importable, documented, listed in one order, and the two stores
interchangeable."""

from __future__ import annotations

import ast
import inspect
import re
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


ROOT = Path(__file__).resolve().parents[1]
STUBS = sorted(
    path.relative_to(ROOT)
    for top in ("snapshot", "store")
    for path in (ROOT / top).rglob("__init__.pyi")
)


def ruff_order(name: str) -> tuple[int, list[str | int]]:
    """ruff's RUF022 ("isort-style") order for ``__all__``: SCREAMING_SNAKE_CASE names first,
    then CapWords, then the rest; a natural sort (runs of digits as numbers) within each."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    parts = re.split(r"([0-9]+)", name)  # text at even indices, digits at odd ones
    return kind, [int(p) if i % 2 else p for i, p in enumerate(parts)]


@pytest.mark.parametrize("stub", STUBS, ids=[str(s.parent) for s in STUBS])
def test_a_stubs_all_is_the_sorted_names_it_imports(stub: Path) -> None:
    """The stub (``__init__.pyi``, which ``lazy_loader`` reads) exports exactly the names it
    imports, each once, in RUF022's order: read from its text, not from the package, whose
    ``__all__`` lazy_loader builds sorted whatever the stub says."""
    tree = ast.parse((ROOT / stub).read_text())
    imported = [
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]
    (exported,) = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    assert len(imported) == len(set(imported)), f"{stub}: a name imported twice"
    assert exported == sorted(set(imported), key=ruff_order)


def test_ruff_order() -> None:
    # The expected list is one that `ruff check --select RUF022` accepts as sorted.
    names = ["b", "A", "ABC", "Abc", "a10", "a9", "A_B", "_x", "Z"]
    assert sorted(names, key=ruff_order) == ["ABC", "A_B", "A", "Abc", "Z", "_x", "a9", "a10", "b"]
