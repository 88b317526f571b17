"""Random operation sequences on the durable Store against MemoryStore (the reference model).

Fork, put, delete, commit, revert, checkpoint, close-and-reopen and crash-and-reopen in any
order; after every step the effective state, the depth, the layer labels, ``in_current_layer``
and the state digest must agree. A crash (``close(checkpoint=False)``, as a killed process) may
lose what came after the last checkpoint, but only whole operations: the reopened store must be
the model as of some operation between the last checkpoint waited for and the crash. Runs
on SQLite and PostgreSQL, each with an unbounded cache and with a tiny bounded one (reads
fall through to SQL).
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import hypothesis.strategies as st
import pytest
from drasnap.store import InvalidValueError, MemoryStore, Store
from hypothesis import HealthCheck, settings
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

KINDS = st.sampled_from(["claims", "slices"])
KEYS = st.sampled_from(["a", "b", "c", "d", "ns/e"])
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=6,
)


class StoreMachine(RuleBasedStateMachine):
    options: ClassVar[dict[str, Any]] = {}
    # Where each example's store lives: a function giving (target, store name, cleanup). The
    # default is a SQLite file in a new temporary folder.
    place: ClassVar[Any] = None

    def __init__(self) -> None:
        super().__init__()
        if self.place is None:
            tmp = tempfile.TemporaryDirectory()
            self.target: str | Path = Path(tmp.name) / "machine.db"
            self.name = "default"
            self.cleanup: Callable[[], None] = tmp.cleanup
        else:
            self.target, self.name, self.cleanup = self.place()
        self.model = MemoryStore()
        self.store = Store.open(self.target, name=self.name, **self.options)
        # Every operation applied to the model, and how many of them the last checkpoint that
        # returned made durable: what a crash may fall back to.
        self.ops: list[tuple[str, tuple[Any, ...]]] = []
        self.durable = 0

    def teardown(self) -> None:
        self.store.close()
        self.cleanup()

    @rule(kind=KINDS, key=KEYS, value=VALUES)
    def put(self, kind: str, key: str, value: Any) -> None:
        self._model("put", kind, key, value)
        self.store.put(kind, key, value)

    @rule(kind=KINDS, key=KEYS)
    def delete(self, kind: str, key: str) -> None:
        self._model("delete", kind, key)
        self.store.delete(kind, key)

    def _model(self, op: str, *args: Any) -> Any:
        self.ops.append((op, args))
        return getattr(self.model, op)(*args)

    @rule(label=st.none() | st.text(max_size=5))
    def fork(self, label: str | None) -> None:
        if label is not None and "\0" in label:  # SQL text cannot hold it: both refuse
            for target in (self.store, self.model):
                with pytest.raises(InvalidValueError, match="NUL character"):
                    target.fork(label)
            return
        assert self.store.fork(label) == self._model("fork", label)

    @rule()
    def commit(self) -> None:
        assert self.store.commit() == self._model("commit")

    @rule()
    def revert(self) -> None:
        assert self.store.revert() == self._model("revert")

    @rule()
    def checkpoint(self) -> None:
        self.store.checkpoint()
        self.durable = len(self.ops)

    @rule()
    def maybe_checkpoint(self) -> None:
        self.store.maybe_checkpoint()  # with write-behind: not waited for

    @rule()
    def checkpoint_not_waited_for(self) -> None:
        self.store.checkpoint(wait=False)

    @rule()
    def reopen(self) -> None:
        self.store.close()
        self.durable = len(self.ops)
        self.store = Store.open(self.target, name=self.name, **self.options)

    @rule()
    def crash(self) -> None:
        self.store.close(checkpoint=False)
        self.store = Store.open(self.target, name=self.name, **self.options)
        found = self._state(self.store)
        # The newest operation boundary the reopened store matches (automatic checkpoints
        # may have saved more than the last one waited for, never a part of an operation).
        for n in range(len(self.ops), self.durable - 1, -1):
            model = MemoryStore()
            for op, args in self.ops[:n]:
                getattr(model, op)(*args)
            if self._state(model) == found:
                break
        else:
            raise AssertionError(
                f"after a crash the store is at no operation from {self.durable} to "
                f"{len(self.ops)}: {found}"
            )
        self.model, self.ops, self.durable = model, self.ops[:n], n

    @staticmethod
    def _state(store: Store | MemoryStore) -> tuple[Any, ...]:
        labels = [ly.label for ly in store.layers()[1:]]
        return store.depth, labels, [store.items(kind) for kind in ("claims", "slices")]

    @precondition(lambda self: self.store.depth > 0)
    @rule(kind=KINDS, key=KEYS)
    def read_through_layers(self, kind: str, key: str) -> None:
        assert self.store.get(kind, key, "absent") == self.model.get(kind, key, "absent")

    @invariant()
    def same_state(self) -> None:
        assert self.store.depth == self.model.depth
        for kind in ("claims", "slices"):
            assert self.store.items(kind) == self.model.items(kind)
            assert self.store.count(kind) == self.model.count(kind)
            for key in ("a", "b", "c", "d", "ns/e"):
                assert self.store.get(kind, key, "absent") == self.model.get(kind, key, "absent")
                assert self.store.in_current_layer(kind, key) == self.model.in_current_layer(
                    kind, key
                )
        assert [ly.label for ly in self.store.layers()[1:]] == [
            ly.label for ly in self.model.layers()[1:]
        ]
        assert self.store.state_digest() == self.model.state_digest()


_settings = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

CACHES = [
    pytest.param({}, id="unbounded"),
    pytest.param({"cache_size": 2}, id="bounded"),
]
# Every policy checkpoint due, and written by the writer process: the reopen rule then finds
# what close() waited for, and each invariant runs while a flush may be in flight (SQLite only).
BEHIND = pytest.param({"write_behind": True, "checkpoint_interval": 0}, id="write-behind")


@pytest.mark.parametrize("options", [*CACHES, BEHIND])
def test_store_machine_sqlite(options: dict[str, Any]) -> None:
    machine = type("SqliteMachine", (StoreMachine,), {"options": options})
    run_state_machine_as_test(machine, settings=_settings)


@pytest.mark.postgres
@pytest.mark.parametrize("options", CACHES)
def test_store_machine_postgres(options: dict[str, Any], postgres_url: str) -> None:
    def place() -> tuple[str, str, Callable[[], None]]:
        # A new store per example in the session's schema (dropped with the schema).
        return postgres_url, f"machine-{secrets.token_hex(6)}", lambda: None

    machine = type(
        "PostgresMachine", (StoreMachine,), {"options": options, "place": staticmethod(place)}
    )
    run_state_machine_as_test(machine, settings=_settings)
