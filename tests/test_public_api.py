"""The packages' public names: importable, documented, and the two stores interchangeable."""

from __future__ import annotations

import inspect

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


def test_memory_store_offers_everything_the_durable_store_does_for_data() -> None:
    data_api = {
        "depth", "fork", "commit", "revert", "get", "put", "delete", "in_current_layer",
        "items", "keys", "count", "kinds", "checkpoint", "maybe_checkpoint", "layers",
        "state_digest", "close", "backend",
    }  # fmt: skip
    for cls in (store.Store, store.MemoryStore):
        missing = {name for name in data_api if not hasattr(cls, name)}
        assert not missing, f"{cls.__name__} lacks {missing}"
