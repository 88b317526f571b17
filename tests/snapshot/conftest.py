"""Shared fixtures for the snapshot tests."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # imported lazily: a broken snapshot.dra must not break the other tests
    from drasnap.snapshot.dra.snapshot import DraSnapshot

    from tests.conftest import Backend

# Copied from the project's shared reference material: see tests/fixtures/README.md.
DRA_EXAMPLE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "dra-example"


@pytest.fixture
def dra_example_dir() -> Path:
    """The example DRA manifests (DeviceClass + slice, claim template, allocated claim)."""
    assert DRA_EXAMPLE_DIR.is_dir(), f"fixtures not found at {DRA_EXAMPLE_DIR}"
    return DRA_EXAMPLE_DIR


# -- DraSnapshot on every store backend ---------------------------------------------------------


@dataclass
class DraBackend:
    """Builds DraSnapshots on one backend of ``tests.conftest.backend``.

    ``build`` writes the initial state with ``DraSnapshot.from_objects`` and, for
    ``sqlite-reopen``, checkpoints, closes and reopens the file before handing it over;
    ``reopen`` does the same at any point (mid-fork included) and is the identity on the other
    backends.
    """

    backend: Backend

    @property
    def name(self) -> str:
        return self.backend.name

    def build(
        self,
        *,
        claims: Iterable[dict[str, Any]] = (),
        slices: Iterable[dict[str, Any]] = (),
        classes: Iterable[dict[str, Any]] = (),
    ) -> DraSnapshot:
        from drasnap.snapshot.dra.snapshot import DraSnapshot

        snap = DraSnapshot.from_objects(
            self.backend.open(), claims=claims, slices=slices, classes=classes
        )
        return self.reopen(snap)

    def reopen(self, snap: DraSnapshot) -> DraSnapshot:
        if not self.backend.name.endswith("-reopen"):
            return snap
        from drasnap.snapshot.dra.snapshot import DraSnapshot

        snap.checkpoint()
        return DraSnapshot(self.backend.reopen(snap.store))


@pytest.fixture
def dra_backend(backend: Backend) -> DraBackend:
    """A :class:`DraBackend` for each of memory, sqlite and sqlite-reopen."""
    return DraBackend(backend)


@pytest.fixture
def fixture_objects_unchanged() -> Iterator[None]:
    """Fail the test if it mutated one of the shared fixture objects (sigs #37)."""
    from tests.snapshot.dra_builders import FIXTURE_OBJECTS

    before = copy.deepcopy(FIXTURE_OBJECTS)
    yield
    assert before == FIXTURE_OBJECTS
