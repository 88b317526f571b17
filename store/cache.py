"""The durable store's memory side: the open layers, the read cache, and what the next flush owes.

Two strategies, one class each, behind the same methods:

- :class:`FullCache` (the default): ``values`` holds every live key, so a read is one dict
  lookup at any depth and a listing one dict copy.
- :class:`BoundedCache` (``cache_size=N``): ``values`` caches at most N keys per kind, with
  negative entries (ABSENT); a miss resolves through the layers, the unflushed base writes,
  then the base rows in SQL, read through a :class:`BaseRows`.

Data model (both):

- ``layers``: one :class:`Layer` per open layer above the base, holding its ``changes``
  ((kind, key) -> value or TOMBSTONE) and its ``undo`` log ((kind, key) -> the effective value
  before the layer first touched it; MISS when a bounded cache did not know it). Fork pushes
  one (O(1); the store appends it to ``layers`` itself, one call less on a hot path); Revert
  pops it and restores its undo log (O(changes)); Commit merges changes and undo into the layer
  below (O(changes)), or, into the base, the changes join ``base_pending`` (the base holds no
  tombstones in SQL: the flush deletes those rows).
- For the next flush: ``touched`` (each key changed since the last one -> its effective value
  then, MISS if unknown, for the digest), ``encoded`` (the latest value put to each key and its
  encoding, which the entry rows reuse), each layer's ``fresh`` (not in SQL yet) or ``dirty``
  keys, ``truncate`` (the lowest depth popped since) and ``sql_depth`` (layers in SQL).
  :meth:`LayerStack.pending_entries` turns them into rows; :meth:`LayerStack.flushed` forgets
  them once SQL has them.

Nothing here knows SQL: :class:`store.Store` owns a stack, the journal and the policy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, Protocol

from drasnap.store.interface import ABSENT, MISS, NEVER, TOMBSTONE, LayerInfo
from drasnap.store.rows import Entry, EntryRow, LayerRow, Loaded

__all__ = ["BaseRows", "BoundedCache", "FullCache", "Layer", "LayerStack"]

Key = tuple[str, str]


class BaseRows(Protocol):
    """The base layer's rows in SQL, as of the last flush: what a bounded cache falls back on."""

    def value(self, kind: str, key: str) -> Any:
        """The value, or ABSENT."""
        ...

    def items(self, kind: str) -> dict[str, Any]: ...

    def kinds(self) -> set[str]: ...

    def count(self) -> int:
        """Every row of the base."""
        ...

    def present(self, keys: Sequence[Key]) -> set[Key]:
        """Which of ``keys`` have a row."""
        ...


class Layer:
    """One open layer above the base (see the module docstring)."""

    __slots__ = ("changes", "created_at", "dirty", "fresh", "instance", "label", "undo")

    def __init__(
        self, label: str | None, instance: int, created_at: float, fresh: bool = True
    ) -> None:
        self.label = label
        self.instance = instance
        self.created_at = created_at
        self.changes: dict[Key, Any] = {}
        self.undo: dict[Key, Any] = {}
        # fresh: not in SQL yet, written whole at the next flush; else dirty holds what changed.
        self.fresh = fresh
        self.dirty: set[Key] | None = None


class LayerStack:
    """What both strategies share: the layers, the writes, and the flush bookkeeping."""

    #: the previous value of a key the cache does not hold
    unknown: ClassVar[Any] = ABSENT
    #: the most keys per kind ``values`` holds
    limit: int = NEVER

    def __init__(self) -> None:
        self.values: dict[str, dict[str, Any]] = {}
        self.layers: list[Layer] = []
        self.base_pending: dict[Key, Any] = {}
        self.touched: dict[Key, Any] = {}
        self.encoded: dict[Key, tuple[Any, str]] = {}
        self.truncate = NEVER
        self.sql_depth = 0

    # -- strategy-specific (overridden) ------------------------------------------------------

    def get(self, kind: str, key: str, default: Any = None) -> Any:
        raise NotImplementedError

    def effective(self, ck: Key) -> Any:
        """The effective value of a key, or ABSENT."""
        raise NotImplementedError

    def items(self, kind: str) -> dict[str, Any]:
        raise NotImplementedError

    def keys(self, kind: str) -> list[str]:
        return list(self.items(kind))

    def count(self, kind: str) -> int:
        return len(self.items(kind))

    def kinds(self) -> list[str]:
        raise NotImplementedError

    def base_size(self) -> int:
        raise NotImplementedError

    def install(self, loaded: Loaded) -> None:
        """Take the state of the last checkpoint (layers not fresh: they are in SQL)."""
        raise NotImplementedError

    def _restore(self, top: Layer) -> None:
        raise NotImplementedError

    def _forget(self, kc: dict[str, Any], key: str) -> None:
        """A key of ``kc`` was deleted."""
        raise NotImplementedError

    def _evict(self, kc: dict[str, Any]) -> None:
        pass

    # -- writes and layers -------------------------------------------------------------------

    def write(self, kind: str, key: str, value: Any, text: str | None) -> None:
        """Apply a put (``text``: the value's checked encoding) or, with TOMBSTONE, a delete to
        the top layer (or the base)."""
        ck = (kind, key)
        kc = self.values.get(kind)
        if kc is None:
            kc = self.values[kind] = {}
        old = kc.get(key, self.unknown)
        touched = self.touched
        if ck not in touched:
            touched[ck] = old
        layers = self.layers
        if layers:
            top = layers[-1]
            if ck not in top.undo:
                top.undo[ck] = old
            top.changes[ck] = value
            if not top.fresh:
                if top.dirty is None:
                    top.dirty = {ck}
                else:
                    top.dirty.add(ck)
        else:
            self.base_pending[ck] = value
        if value is TOMBSTONE:
            self._forget(kc, key)
        else:
            kc[key] = value
            if len(kc) > self.limit:
                self._evict(kc)
        if text is not None:
            self.encoded[ck] = (value, text)

    def apply(self, entry: Entry) -> None:
        """Apply one journal entry as the store applied its operation, a put writing the
        entry's text as the value: the write-behind process's mirror (values as their stored
        JSON). A checkpoint changes nothing. A replay of a journal does not come here: it goes
        through a store's operations (:meth:`store.journal.replayer.Replayer.apply` says why)."""
        op = entry.op
        if op == "put" or op == "delete":
            assert entry.kind is not None and entry.key is not None
            value = entry.value if op == "put" else TOMBSTONE
            self.write(entry.kind, entry.key, value, None)
        elif op == "fork":
            self.layers.append(Layer(entry.label, entry.layer, entry.ts))
        elif op == "revert":
            self.revert()
        elif op == "commit":
            self.commit()

    def commit(self) -> int | None:
        """Merge the top layer into the one below; returns that layer's instance (0: the
        base), or None when only the base is open."""
        layers = self.layers
        if not layers:
            return None
        top = layers.pop()
        depth = len(layers) + 1
        if not top.fresh and depth < self.truncate:
            self.truncate = depth
        if not layers:
            self.base_pending.update(top.changes)
            return 0
        parent = layers[-1]
        pundo = parent.undo
        for ck, prev in top.undo.items():
            if ck not in pundo:
                pundo[ck] = prev
        parent.changes.update(top.changes)
        if not parent.fresh:
            if parent.dirty is None:
                parent.dirty = set(top.changes)
            else:
                parent.dirty.update(top.changes)
        return parent.instance

    def revert(self) -> Layer | None:
        """Drop the top layer, restoring what it overwrote; returns it (None at the base)."""
        layers = self.layers
        if not layers:
            return None
        top = layers.pop()
        depth = len(layers) + 1
        if top.undo:
            self._restore(top)
        if not top.fresh and depth < self.truncate:
            self.truncate = depth
        return top

    def _touch_restored(self, top: Layer, before: Callable[[Key], Any]) -> None:
        """A layer that was in SQL at the last flush is dropped: its keys may change effective
        value now without having been written since, so the digest needs their values from
        before (a fresh layer's keys were all written after the flush: already recorded)."""
        if top.fresh:
            return
        touched = self.touched
        for ck in top.undo:
            if ck not in touched:
                touched[ck] = before(ck)

    # -- reads shared by both ----------------------------------------------------------------

    def in_current_layer(self, kind: str, key: str) -> bool:
        if self.layers:
            return self.layers[-1].changes.get((kind, key), TOMBSTONE) is not TOMBSTONE
        return self.get(kind, key, MISS) is not MISS

    def layer_infos(self, base_created_at: float) -> list[LayerInfo]:
        out = [LayerInfo(0, None, base_created_at, self.base_size())]
        out.extend(
            LayerInfo(d, ly.label, ly.created_at, len(ly.changes))
            for d, ly in enumerate(self.layers, start=1)
        )
        return out

    def _below_layers(self) -> dict[Key, Any]:
        """Each key an open layer changed -> its value in the base (the oldest undo entry)."""
        below: dict[Key, Any] = {}
        for layer in self.layers:
            for ck, prev in layer.undo.items():
                below.setdefault(ck, prev)
        return below

    # -- the flush ---------------------------------------------------------------------------

    def has_unflushed(self) -> bool:
        return bool(
            self.base_pending
            or self.touched
            or self.truncate != NEVER
            or any(ly.fresh or ly.dirty for ly in self.layers)
        )

    def digest_changes(self) -> Iterator[tuple[Key, Any, Any]]:
        """``(key, value at the last flush (MISS: unknown), effective value now)`` of each key
        changed since."""
        effective = self.effective
        for ck, old in self.touched.items():
            yield ck, old, effective(ck)

    def base_rows(
        self, store_id: int, encode: Callable[[Any], str]
    ) -> tuple[list[EntryRow], list[EntryRow]]:
        """``(deletes, upserts)`` of the base rows changed since the last flush."""
        deletes: list[EntryRow] = []
        upserts: list[EntryRow] = []
        for (kind, key), value in self.base_pending.items():
            if value is TOMBSTONE:  # the base holds no tombstones: the row just goes
                deletes.append((store_id, kind, key, 0))
            else:
                upserts.append((store_id, kind, key, 0, False, encode(value)))
        return deletes, upserts

    def pending_entries(
        self, store_id: int, encode: Callable[[Any], str]
    ) -> tuple[int | None, list[EntryRow], list[EntryRow], list[LayerRow], list[EntryRow]]:
        """The entry and layer rows the next flush writes: ``(truncate_from, deletes, upserts,
        new_layers, inserts)`` (see :class:`store.rows.Pending`)."""
        layers = self.layers
        first_fresh = next((i + 1 for i, ly in enumerate(layers) if ly.fresh), len(layers) + 1)
        cut = min(self.truncate, first_fresh)
        deletes, upserts = self.base_rows(store_id, encode)
        inserts: list[EntryRow] = []
        for depth, layer in enumerate(layers[: cut - 1], start=1):
            if layer.dirty:
                changes = layer.changes
                for ck in layer.dirty:
                    value = changes.get(ck, MISS)
                    if value is MISS:
                        deletes.append((store_id, ck[0], ck[1], depth))
                    else:
                        upserts.append(_entry_row(store_id, ck, depth, value, encode))
        new_layers: list[LayerRow] = []
        for depth, layer in enumerate(layers[cut - 1 :], start=cut):
            new_layers.append((depth, layer.instance, layer.label, layer.created_at))
            inserts.extend(
                _entry_row(store_id, ck, depth, v, encode) for ck, v in layer.changes.items()
            )
        truncate_from = cut if cut <= self.sql_depth else None
        return truncate_from, deletes, upserts, new_layers, inserts

    def flushed(self) -> None:
        """SQL now holds everything: forget what was kept for it."""
        self.touched.clear()
        self.base_pending.clear()
        self.encoded.clear()
        for layer in self.layers:
            layer.fresh = False
            layer.dirty = None
        self.truncate = NEVER
        self.sql_depth = len(self.layers)

    def _install_layers(self, loaded: Loaded, below: Callable[[dict[str, Any], str], Any]) -> None:
        values = self.values
        for instance, label, created, changes in loaded.layers:
            layer = Layer(label, instance, created, fresh=False)
            layer.changes = changes
            undo = layer.undo
            for ck, new in changes.items():
                kind, key = ck
                kc = values.get(kind)
                if kc is None:
                    kc = values[kind] = {}
                undo[ck] = below(kc, key)
                if new is TOMBSTONE:
                    self._forget(kc, key)
                else:
                    kc[key] = new
            self.layers.append(layer)
        for kc in values.values():
            self._evict(kc)
        self.sql_depth = len(self.layers)


def _entry_row(
    store_id: int, ck: Key, depth: int, value: Any, encode: Callable[[Any], str]
) -> EntryRow:
    if value is TOMBSTONE:
        return (store_id, ck[0], ck[1], depth, True, None)
    return (store_id, ck[0], ck[1], depth, False, encode(value))


class FullCache(LayerStack):
    """Every live value in memory (``cache_size=None``)."""

    def get(self, kind: str, key: str, default: Any = None) -> Any:
        kc = self.values.get(kind)
        if kc is not None:
            return kc.get(key, default)
        return default

    def effective(self, ck: Key) -> Any:
        kc = self.values.get(ck[0])
        return ABSENT if kc is None else kc.get(ck[1], ABSENT)

    def items(self, kind: str) -> dict[str, Any]:
        kc = self.values.get(kind)
        return dict(kc) if kc else {}

    def keys(self, kind: str) -> list[str]:
        return list(self.values.get(kind, ()))

    def count(self, kind: str) -> int:
        return len(self.values.get(kind, ()))

    def kinds(self) -> list[str]:
        return sorted(k for k, kc in self.values.items() if kc)

    def base_size(self) -> int:
        """Live keys in the base: the effective state with every layer's undo applied."""
        values = self.values
        count = sum(len(kc) for kc in values.values())
        for ck, prev in self._below_layers().items():
            now_live = ck[1] in values.get(ck[0], {})
            count += (prev is not ABSENT) - now_live
        return count

    def install(self, loaded: Loaded) -> None:
        self.values = loaded.base
        self._install_layers(loaded, lambda kc, key: kc.get(key, ABSENT))

    def _forget(self, kc: dict[str, Any], key: str) -> None:
        kc.pop(key, None)

    def _restore(self, top: Layer) -> None:
        values = self.values
        self._touch_restored(top, lambda ck: values[ck[0]].get(ck[1], ABSENT))
        last = None
        kc: dict[str, Any] = {}
        # Newest change first, the order followers are told in: the keys a revert brings
        # back are listed in the order a follower's lists rebuilt from the store would have.
        for (kind, key), prev in reversed(top.undo.items()):
            if kind is not last:  # layers mostly touch one kind at a time
                kc = values[kind]
                last = kind
            if prev is ABSENT:
                kc.pop(key, None)
            else:
                kc[key] = prev


class BoundedCache(LayerStack):
    """At most ``limit`` cached values per kind (``cache_size=N``); misses read the base rows in
    SQL through ``base``."""

    unknown: ClassVar[Any] = MISS

    def __init__(self, limit: int, base: BaseRows) -> None:
        super().__init__()
        self.limit = limit
        self.base = base

    def get(self, kind: str, key: str, default: Any = None) -> Any:
        kc = self.values.get(kind)
        if kc is not None:
            value = kc.get(key, MISS)
            if value is not MISS:
                return default if value is ABSENT else value
        else:
            kc = self.values[kind] = {}
        value = self.effective((kind, key))
        kc[key] = value
        self._evict(kc)
        return default if value is ABSENT else value

    def effective(self, ck: Key) -> Any:
        kc = self.values.get(ck[0])
        if kc is not None:
            hit = kc.get(ck[1], MISS)
            if hit is not MISS:
                return hit
        for layer in reversed(self.layers):
            value = layer.changes.get(ck, MISS)
            if value is not MISS:
                return ABSENT if value is TOMBSTONE else value
        value = self.base_pending.get(ck, MISS)
        if value is not MISS:
            return ABSENT if value is TOMBSTONE else value
        return self.base.value(ck[0], ck[1])

    def _overlaid(self, kind: str, result: dict[str, Any]) -> dict[str, Any]:
        for changes in (self.base_pending, *(ly.changes for ly in self.layers)):
            for (k, key), value in changes.items():
                if k != kind:
                    continue
                if value is TOMBSTONE:
                    result.pop(key, None)
                else:
                    result[key] = value
        return result

    def items(self, kind: str) -> dict[str, Any]:
        return self._overlaid(kind, self.base.items(kind))

    def kinds(self) -> list[str]:
        names = self.base.kinds()
        names.update(ck[0] for ck in self.base_pending)
        for layer in self.layers:
            names.update(ck[0] for ck in layer.changes)
        return sorted(k for k in names if self.count(k))

    def base_size(self) -> int:
        count = self.base.count()
        pending = self.base_pending
        in_sql = self.base.present(list(pending)) if pending else set()
        for ck, value in pending.items():
            count += (value is not TOMBSTONE) - (ck in in_sql)
        return count

    def install(self, loaded: Loaded) -> None:
        # The value below each layer's change is not known: Revert then evicts.
        self._install_layers(loaded, lambda kc, key: MISS)

    def _forget(self, kc: dict[str, Any], key: str) -> None:
        kc[key] = ABSENT  # a negative entry
        if len(kc) > self.limit:
            self._evict(kc)

    def _evict(self, kc: dict[str, Any]) -> None:
        limit = self.limit
        while len(kc) > limit:
            del kc[next(iter(kc))]

    def _restore(self, top: Layer) -> None:
        self._touch_restored(top, lambda ck: MISS)
        values = self.values
        for (kind, key), prev in top.undo.items():
            kc = values[kind]
            if prev is MISS:
                kc.pop(key, None)  # unknown below: the next read resolves it
            else:
                kc[key] = prev  # ABSENT is a negative cache entry
        for kc in values.values():
            self._evict(kc)
