"""The examples in the packages' docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest
from drasnap import snapshot, store

MODULES = sorted(
    info.name
    for package in (store, snapshot)
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
