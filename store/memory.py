"""``MemoryStore``: cluster-autoscaler's patch set as a Python class, without persistence.

Data model: a stack of patches, base first. Each patch holds, per kind, ``modified`` (key ->
value) and ``deleted`` (tombstones); within a patch a key is never in both. A read resolves the
newest patch that mentions the key, tombstones checked first. A per-kind read cache memoises
resolved lookups (with negative entries), and a per-kind "in sync" flag says the cache holds
every live key so ``items`` can be served from it. Fork and Commit keep the cache; Revert
evicts exactly the keys of the dropped patch. Upstream: ``PatchSet`` and ``Patch`` in
``cluster-autoscaler/simulator/common/patchset.go`` and ``patch.go``.

It is the reference model the durable :class:`store.Store` is tested against, and a backend of
its own for users who want speed without durability. Not thread-safe.

Values returned by ``get``/``items`` are shared with the cache and read-only by contract: never
mutate them; ``put`` a new value instead. The store never mutates a value after ``put``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from drasnap.store.codec import check_name, check_text, check_value, digest_of
from drasnap.store.errors import InvalidValueError
from drasnap.store.followers import Followed
from drasnap.store.interface import ABSENT, MISS, Closing, LayerInfo


class _Patch:
    __slots__ = ("created_at", "deleted", "label", "modified")

    def __init__(self, label: str | None) -> None:
        self.modified: dict[str, dict[str, Any]] = {}
        self.deleted: dict[str, set[str]] = {}
        self.label = label
        self.created_at = time.time()

    def set(self, kind: str, key: str, value: Any) -> None:
        mod = self.modified.get(kind)
        if mod is None:
            mod = self.modified[kind] = {}
        mod[key] = value
        dels = self.deleted.get(kind)
        if dels:
            dels.discard(key)

    def delete(self, kind: str, key: str) -> None:
        mod = self.modified.get(kind)
        if mod:
            mod.pop(key, None)
        dels = self.deleted.get(kind)
        if dels is None:
            dels = self.deleted[kind] = set()
        dels.add(key)

    def merge_from(self, top: _Patch) -> None:
        """Apply ``top`` onto this patch: sets, then tombstones (upstream's mergePatchesInPlace)."""
        for kind, mod in top.modified.items():
            for key, value in mod.items():
                self.set(kind, key, value)
        for kind, dels in top.deleted.items():
            for key in dels:
                self.delete(kind, key)

    def size(self) -> int:
        return sum(map(len, self.modified.values())) + sum(map(len, self.deleted.values()))


class MemoryStore(Followed, Closing):
    """The in-memory patch-set store: same interface as :class:`store.Store`, nothing durable.

    >>> s = MemoryStore()
    >>> s.put("claims", "default/a", {"n": 1})
    >>> s.fork("try")
    1
    >>> s.delete("claims", "default/a")
    >>> s.get("claims", "default/a") is None
    True
    >>> s.revert()
    0
    >>> s.get("claims", "default/a")
    {'n': 1}
    """

    def __init__(self) -> None:
        self._patches: list[_Patch] = [_Patch(None)]
        self._cache: dict[str, dict[str, Any]] = {}
        self._in_sync: set[str] = set()
        super().__init__()

    # -- lifecycle (nothing to do: kept so both backends are interchangeable) -----------------

    @property
    def backend(self) -> str:
        """Always ``memory``."""
        return "memory"

    def close(self, *, checkpoint: bool = True) -> None:
        """Nothing to release; the state stays readable (``checkpoint`` is ignored)."""

    def checkpoint(self, *, wait: bool = True) -> None:
        """No-op: a memory store has nothing durable."""

    def maybe_checkpoint(self) -> bool:
        """No-op; returns False."""
        return False

    # -- layers --------------------------------------------------------------------------------

    @property
    def depth(self) -> int:
        """Number of open forks (0 = only the base layer)."""
        return len(self._patches) - 1

    def fork(self, label: str | None = None) -> int:
        """Push an empty layer; returns the new depth. O(1).

        Raises:
            InvalidValueError: a label that is not a string, or that SQL text cannot hold.
        """
        if label is not None:
            if type(label) is not str:
                raise InvalidValueError(f"a layer label must be a string or None, got {label!r}")
            check_text(label, "layer label")
        self._patches.append(_Patch(label))
        return len(self._patches) - 1

    def commit(self) -> int:
        """Merge the top layer into the one below; a no-op at the base. Returns the new depth."""
        patches = self._patches
        if len(patches) < 2:
            return 0
        top = patches.pop()
        patches[-1].merge_from(top)
        return len(patches) - 1

    def revert(self) -> int:
        """Drop the top layer; a no-op at the base. Returns the new depth."""
        patches = self._patches
        if len(patches) < 2:
            return 0
        top = patches.pop()
        cache = self._cache
        for kinds in (top.modified, top.deleted):
            for kind, keys in kinds.items():
                if not keys:
                    continue
                kc = cache.get(kind)
                if kc is not None:
                    for key in keys:
                        kc.pop(key, None)
                self._in_sync.discard(kind)
        if self._followed and (top.modified or top.deleted):
            self._tell_restored(top)
        return len(patches) - 1

    def _tell_restored(self, top: _Patch) -> None:
        """Tell the followers the values a revert restored, newest change first."""
        followed = self._followed
        changed: list[tuple[str, Iterable[str]]] = [
            (kind, reversed(mod)) for kind, mod in top.modified.items()
        ]
        changed += top.deleted.items()
        for kind, keys in changed:
            fs = followed.get(kind)
            if fs is not None:
                for key in keys:
                    value = self.get(kind, key, ABSENT)
                    for f in fs:
                        f.changed(kind, key, value)

    def layers(self) -> list[LayerInfo]:
        """The open layers, base first."""
        return [LayerInfo(d, p.label, p.created_at, p.size()) for d, p in enumerate(self._patches)]

    # -- reads ---------------------------------------------------------------------------------

    def get(self, kind: str, key: str, default: Any = None) -> Any:
        """The effective value of ``kind/key``, or ``default``. Cached: O(1); else O(layers)."""
        kc = self._cache.get(kind)
        if kc is None:
            kc = self._cache[kind] = {}
        else:
            value = kc.get(key, MISS)
            if value is not MISS:
                return default if value is ABSENT else value
        value = ABSENT
        for patch in reversed(self._patches):
            dels = patch.deleted.get(kind)
            if dels and key in dels:
                break
            mod = patch.modified.get(kind)
            if mod and key in mod:
                value = mod[key]
                break
        kc[key] = value
        return default if value is ABSENT else value

    def in_current_layer(self, kind: str, key: str) -> bool:
        """Was ``kind/key`` set (not deleted) in the top layer?"""
        mod = self._patches[-1].modified.get(kind)
        return bool(mod) and key in mod  # type: ignore[operator]

    def items(self, kind: str) -> dict[str, Any]:
        """A fresh dict of every live key of ``kind`` and its value."""
        kc = self._cache.get(kind)
        if kind in self._in_sync and kc is not None:
            return {k: v for k, v in kc.items() if v is not ABSENT}
        result: dict[str, Any] = {}
        for patch in self._patches:
            mod = patch.modified.get(kind)
            if mod:
                result.update(mod)
            dels = patch.deleted.get(kind)
            if dels:
                for key in dels:
                    result.pop(key, None)
        if kc is None:
            kc = self._cache[kind] = {}
        kc.update(result)
        self._in_sync.add(kind)
        return result

    def keys(self, kind: str) -> list[str]:
        """The live keys of ``kind``."""
        return list(self.items(kind))

    def count(self, kind: str) -> int:
        """The number of live keys of ``kind``."""
        return len(self.items(kind))

    def kinds(self) -> list[str]:
        """Every kind that has at least one live key, sorted."""
        names = {k for p in self._patches for k in p.modified}
        return sorted(k for k in names if self.count(k))

    def state_digest(self) -> str:
        """Digest of the effective state; equal for equal states on every backend."""
        return digest_of(
            (kind, key, value) for kind in self.kinds() for key, value in self.items(kind).items()
        )

    # -- writes --------------------------------------------------------------------------------

    def put(self, kind: str, key: str, value: Any) -> None:
        """Set ``kind/key`` to ``value`` in the top layer.

        Raises:
            InvalidValueError: empty kind or key, or a value that is not JSON.
        """
        check_name(kind, key)
        check_value(value, kind=kind, key=key)
        self._patches[-1].set(kind, key, value)
        kc = self._cache.get(kind)
        if kc is None:
            kc = self._cache[kind] = {}
        kc[key] = value
        fs = self._followed.get(kind)
        if fs is not None:
            for f in fs:
                f.changed(kind, key, value)

    def delete(self, kind: str, key: str) -> None:
        """Tombstone ``kind/key`` in the top layer (also when it does not exist).

        Raises:
            InvalidValueError: empty kind or key.
        """
        check_name(kind, key)
        self._patches[-1].delete(kind, key)
        kc = self._cache.get(kind)
        if kc is None:
            kc = self._cache[kind] = {}
        kc[key] = ABSENT
        fs = self._followed.get(kind)
        if fs is not None:
            for f in fs:
                f.changed(kind, key, ABSENT)

    # -- white-box view for the cache tests (upstream's TestPatchSetCache in patchset_test.go) --

    def _drop_cache(self) -> None:
        """Forget every cached lookup, as if the layers had been built without the cache."""
        self._cache.clear()
        self._in_sync.clear()

    def _cache_view(self, kind: str) -> tuple[dict[str, Any], bool]:
        kc = self._cache.get(kind, {})
        return ({k: (None if v is ABSENT else v) for k, v in kc.items()}, kind in self._in_sync)
