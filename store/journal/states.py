"""The state of a store at a point of its journal, to read, and what changed between two points.

:func:`open_state` gives a :class:`State` (the stored state, or the journal replayed into memory
up to a sequence number); :func:`diff` replays once up to the later of two points, tracking
the keys that change after the earlier, and answers a :class:`StateDiff` of
:class:`ObjectChange`. Both replay through :class:`store.journal.replayer.Replayer`. Split from
``store.journal.playback``, which re-exports these names (``store.replay`` lives there); it never
imports ``store.journal.playback``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from drasnap.store.codec import encode
from drasnap.store.durable import Store
from drasnap.store.errors import InvalidValueError
from drasnap.store.interface import Closing, VersionedStore
from drasnap.store.journal.jsondiff import FieldChange, field_diff
from drasnap.store.journal.reader import Journal, OpenLayer
from drasnap.store.journal.replayer import NOTHING, Replayer
from drasnap.store.memory import MemoryStore

__all__ = ["ObjectChange", "State", "StateDiff", "diff", "open_state"]


@dataclass
class State(Closing):
    """A store's effective state at one point, to read (never to write).

    ``seq`` is the journal position it reflects: the last record applied, or for the stored
    state the last record of the journal (its last checkpoint). Use it as a context manager.
    """

    store: str
    seq: int
    layers: list[OpenLayer]
    _backing: VersionedStore = field(repr=False)

    def kinds(self) -> list[str]:
        return self._backing.kinds()

    def count(self, kind: str) -> int:
        return self._backing.count(kind)

    def items(self, kind: str) -> dict[str, Any]:
        """The live keys of ``kind`` and their values (read-only by contract)."""
        return self._backing.items(kind)

    def get(self, kind: str, key: str, default: Any = None) -> Any:
        return self._backing.get(kind, key, default)

    def state_digest(self) -> str:
        return self._backing.state_digest()

    def close(self) -> None:
        self._backing.close()


def _replay_to(journal: Journal, seq: int, *, track_from: int | None = None) -> Replayer:
    """A replay into memory up to ``seq``; with ``track_from``, ``touched`` then holds the
    value at ``track_from`` of every key that changed after it."""
    rp = Replayer(MemoryStore(), store=journal.info.store)
    rp.track = track_from is not None and track_from < 1
    for rec in journal.records(stop=seq):
        rp.apply(rec)
        if rec.seq == track_from:
            rp.track = True
    return rp


def open_state(
    source: str | os.PathLike[str], *, name: str = "default", at: int | None = None
) -> State:
    """The state of store ``name`` as of seq ``at`` (replayed from the journal into memory), or
    with ``at=None`` the stored state (its last checkpoint, read-only; the journal is then not
    replayed, so this also works for stores with an incomplete journal).

    Raises:
        JournalError: ``at`` is given and the journal is incomplete or inconsistent.
        InvalidValueError: ``at`` is not a sequence number of the journal.
        StoreNotFoundError, NotADatabaseError, SchemaVersionError: as :meth:`Journal.open`.
    """
    with Journal.open(source, name=name) as journal:
        info = journal.info
        if at is None:
            instances = journal.open_layer_instances()
            store = Store.open(source, name=name, readonly=True)
            infos = store.layers()
            # (A writer checkpointing between the two reads could change the layers: the
            # instance is then 0, "unknown", rather than an error.)
            opened = [
                OpenLayer(
                    d,
                    instances[d - 1] if d <= len(instances) else 0,
                    infos[d].label,
                    infos[d].created_at,
                    infos[d].entries,
                )
                for d in range(1, len(infos))
            ]
            return State(name, info.last_seq, opened, store)
        journal.require_complete(f"rebuild the state at seq {at}")
        rp = _replay_to(journal, journal.check_seq(at, "seq"))
        return State(name, at, rp.open_layers(), rp.target)


# -- diffs -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ObjectChange:
    """One object that differs between two points: ``added``, ``removed`` or ``changed``."""

    kind: str
    key: str
    change: str
    old: Any  # None when added
    new: Any  # None when removed
    fields: tuple[FieldChange, ...] = ()  # for changed objects


@dataclass(frozen=True, slots=True)
class StateDiff:
    """The objects that differ between the states at two sequence numbers."""

    store: str
    start: int
    stop: int
    changes: tuple[ObjectChange, ...]

    def of(self, change: str) -> list[ObjectChange]:
        return [c for c in self.changes if c.change == change]


def diff(
    source: str | os.PathLike[str],
    *,
    name: str = "default",
    start: int | None = None,
    stop: int | None = None,
    start_layer: int | str | None = None,
    stop_layer: int | str | None = None,
    kinds: Iterable[str] | None = None,
) -> StateDiff:
    """The objects added, removed and changed from one point of the journal to another.

    A point is a seq (the state after that record), or a layer (an instance number, or a label
    that names one layer): ``start_layer`` is the state when it was forked, ``stop_layer`` the
    state just before it was committed or reverted (or now, if it is open), so
    ``start_layer=L, stop_layer=L`` shows what layer L changed. ``stop`` defaults to the end of
    the journal. ``start`` may be later than ``stop``. Costs one replay up to the later point.

    Raises:
        InvalidValueError: no start point, two of one point, or an unknown seq or layer.
        JournalError: the journal is incomplete or inconsistent.
    """
    if (start is None) == (start_layer is None):
        raise InvalidValueError("give the start point as a seq or as a layer (one of the two)")
    if stop is not None and stop_layer is not None:
        raise InvalidValueError("give the end point as a seq or as a layer, not both")
    wanted = None if kinds is None else set(kinds)
    with Journal.open(source, name=name) as journal:
        journal.require_complete("diff two points of it")
        a = journal.layer_span(start_layer)[0] if start_layer is not None else start
        assert a is not None
        if stop_layer is not None:
            b = journal.layer_span(stop_layer)[1]
        else:
            b = journal.info.last_seq if stop is None else stop
        if a != 0:
            journal.check_seq(a, "start seq")
        journal.check_seq(b, "end seq")
        lo, hi = min(a, b), max(a, b)
        rp = _replay_to(journal, hi, track_from=lo)
    changes: list[ObjectChange] = []
    for (kind, key), before in sorted(rp.touched.items()):
        if wanted is not None and kind not in wanted:
            continue
        after = rp.target.get(kind, key, NOTHING)
        old, new = (before, after) if a <= b else (after, before)
        if old is NOTHING and new is NOTHING:
            continue
        if old is NOTHING:
            changes.append(ObjectChange(kind, key, "added", None, new))
        elif new is NOTHING:
            changes.append(ObjectChange(kind, key, "removed", old, None))
        elif encode(old) != encode(new):
            fields = tuple(field_diff(old, new))
            changes.append(ObjectChange(kind, key, "changed", old, new, fields))
    return StateDiff(name, a, b, tuple(changes))
