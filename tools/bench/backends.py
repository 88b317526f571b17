"""The stores a benchmark runs the same workload on, side by side.

- ``deepcopy``: the design before the patch layers (upstream's ``Clone()`` before
  kubernetes/autoscaler PR #8090):
  Fork copies the whole state — every ResourceClaim deep-copied, every other kind's dict copied
  (slices and classes were shallow-copied upstream) — Revert drops the copy, Commit keeps it. It
  is the baseline, written as simply as upstream had it.
- ``memory``: :class:`store.MemoryStore`, the patch set in pure Python.
- ``sqlite``: the durable :class:`store.Store`, default settings (journal on, default checkpoint
  policy), on a file in a temporary directory.
- ``sqlite-nojournal``: the same with the journal off.
- ``postgres``: the durable store on the PostgreSQL URL given with ``--postgres-url``.
"""

from __future__ import annotations

import copy
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from snapshot.kinds import CLAIM_KIND
from store import MemoryStore, Store

BACKENDS = ("deepcopy", "memory", "sqlite", "sqlite-nojournal", "postgres")


class DeepCopyStore:
    """A stack of full copies of the state: the pre-patch-set snapshot, as a store."""

    backend = "deepcopy"

    def __init__(self) -> None:
        self._states: list[dict[str, dict[str, Any]]] = [{}]
        self._labels: list[str | None] = [None]

    @property
    def _top(self) -> dict[str, dict[str, Any]]:
        return self._states[-1]

    @property
    def depth(self) -> int:
        return len(self._states) - 1

    def fork(self, label: str | None = None) -> int:
        state = self._top
        # Claims are deep-copied on Fork, as upstream's Clone() did.
        self._states.append(
            {
                kind: copy.deepcopy(values) if kind == CLAIM_KIND else dict(values)
                for kind, values in state.items()
            }
        )
        self._labels.append(label)
        return self.depth

    def commit(self) -> int:
        if len(self._states) > 1:
            top = self._states.pop()
            self._labels.pop()
            self._states[-1] = top
        return self.depth

    def revert(self) -> int:
        if len(self._states) > 1:
            self._states.pop()
            self._labels.pop()
        return self.depth

    def get(self, kind: str, key: str, default: Any = None) -> Any:
        return self._top.get(kind, {}).get(key, default)

    def put(self, kind: str, key: str, value: Any) -> None:
        self._top.setdefault(kind, {})[key] = value

    def delete(self, kind: str, key: str) -> None:
        self._top.get(kind, {}).pop(key, None)

    def in_current_layer(self, kind: str, key: str) -> bool:
        return key in self._top.get(kind, {})

    def items(self, kind: str) -> dict[str, Any]:
        return dict(self._top.get(kind, {}))

    def keys(self, kind: str) -> list[str]:
        return list(self._top.get(kind, {}))

    def count(self, kind: str) -> int:
        return len(self._top.get(kind, {}))

    def kinds(self) -> list[str]:
        return sorted(k for k, v in self._top.items() if v)

    def state_digest(self) -> str:
        reference = MemoryStore()  # the same digest function as every other backend
        for kind in self.kinds():
            for key, value in self.items(kind).items():
                reference.put(kind, key, value)
        return reference.state_digest()

    def checkpoint(self) -> None:
        pass

    def maybe_checkpoint(self) -> bool:
        return False

    def close(self) -> None:
        pass


AnyStore = Store | MemoryStore


@contextmanager
def open_backend(
    name: str, *, postgres_url: str | None = None, **options: Any
) -> Iterator[AnyStore]:
    """A fresh, empty store of backend ``name``, closed (and its files removed) afterwards."""
    if name == "deepcopy":
        # Typed as the stores it stands in for: it offers the same methods (duck typing).
        yield cast(MemoryStore, DeepCopyStore())
        return
    if name == "memory":
        yield MemoryStore()
        return
    if name == "postgres":
        if not postgres_url:
            raise ValueError("the postgres backend needs --postgres-url")
        store = Store.open(postgres_url, name=f"bench-{uuid.uuid4().hex[:12]}", **options)
        try:
            yield store
        finally:
            store.close()
        return
    with tempfile.TemporaryDirectory(prefix="drasnap-bench-") as tmp:
        journal = name != "sqlite-nojournal"
        store = Store.open(Path(tmp) / "bench.db", journal=journal, **options)
        try:
            yield store
        finally:
            store.close()


def timed(run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start
