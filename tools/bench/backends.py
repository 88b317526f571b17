"""The stores a benchmark runs the same workload on, side by side.

- ``deepcopy``: the design before the patch layers (upstream's ``Clone()`` before
  kubernetes/autoscaler PR #8090):
  Fork copies the whole state — every ResourceClaim deep-copied, every other kind's dict copied
  (slices and classes were shallow-copied upstream) — Revert drops the copy, Commit keeps it. It
  is the baseline, written as simply as upstream had it.
- ``memory``: :class:`store.MemoryStore`, the patch set in pure Python.
- ``sqlite``: the durable :class:`store.Store`, default settings (journal on, default checkpoint
  policy), on a file in a temporary directory.
- ``sqlite-behind``: the same with ``write_behind=True``, as ``drasnap simulate`` opens its
  runs: the journal and checkpoints are written by a process of their own (``store.behind.writer``).
- ``sqlite-nojournal``: the same as ``sqlite`` with the journal off.
- ``postgres``: the durable store on the PostgreSQL URL given with ``--postgres-url``.
"""

from __future__ import annotations

import copy
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from drasnap.snapshot import CLAIM_KIND
from drasnap.store import ABSENT, Follower, LayerInfo, MemoryStore, Store, VersionedStore


class DeepCopyStore:
    """A stack of full copies of the state: the pre-patch-set snapshot, as a store."""

    backend = "deepcopy"

    def __init__(self) -> None:
        self._states: list[dict[str, dict[str, Any]]] = [{}]
        self._labels: list[str | None] = [None]
        self._created: list[float] = [time.time()]
        # Per layer, the keys of followed kinds written in it: what a revert tells followers.
        self._written: list[dict[tuple[str, str], None]] = [{}]
        self._followed: dict[str, list[Follower]] = {}

    def follow(self, kinds: Iterable[str], follower: Follower) -> None:
        for kind in kinds:
            present = self._followed.setdefault(kind, [])
            if follower not in present:
                present.append(follower)

    def unfollow(self, follower: Follower) -> None:
        for present in self._followed.values():
            if follower in present:
                present.remove(follower)

    def _tell(self, kind: str, key: str, value: Any) -> None:
        followers = self._followed.get(kind)
        if followers:
            self._written[-1][kind, key] = None
            for f in followers:
                f.changed(kind, key, value)

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
        self._created.append(time.time())
        self._written.append({})
        return self.depth

    def commit(self) -> int:
        if len(self._states) > 1:
            top = self._states.pop()
            self._labels.pop()
            self._created.pop()
            self._states[-1] = top
            self._written[-2].update(self._written.pop())
        return self.depth

    def revert(self) -> int:
        if len(self._states) > 1:
            self._states.pop()
            self._labels.pop()
            self._created.pop()
            below = self._top
            for kind, key in reversed(self._written.pop()):
                value = below.get(kind, {}).get(key, ABSENT)
                for f in self._followed.get(kind, ()):
                    f.changed(kind, key, value)
        return self.depth

    def layers(self) -> list[LayerInfo]:
        """The layers, base first; each is a whole copy, so its entries are every live key."""
        return [
            LayerInfo(depth, label, created, sum(map(len, state.values())))
            for depth, (label, created, state) in enumerate(
                zip(self._labels, self._created, self._states, strict=True)
            )
        ]

    def get(self, kind: str, key: str, default: Any = None) -> Any:
        return self._top.get(kind, {}).get(key, default)

    def put(self, kind: str, key: str, value: Any) -> None:
        self._top.setdefault(kind, {})[key] = value
        self._tell(kind, key, value)

    def delete(self, kind: str, key: str) -> None:
        self._top.get(kind, {}).pop(key, None)
        self._tell(kind, key, ABSENT)

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

    def checkpoint(self, *, wait: bool = True) -> None:
        pass

    def maybe_checkpoint(self) -> bool:
        return False

    def close(self) -> None:
        pass


@contextmanager
def open_backend(
    name: str, *, postgres_url: str | None = None, **options: Any
) -> Iterator[VersionedStore]:
    """A fresh, empty store of backend ``name``, closed (and its files removed) afterwards."""
    if name == "deepcopy":
        yield DeepCopyStore()
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
        if name == "sqlite-behind":
            options = {"write_behind": True, **options}
        store = Store.open(Path(tmp) / "bench.db", journal=journal, **options)
        try:
            yield store
        finally:
            store.close()
