"""What reading the journal answers, and how a layer's fate is worked out from its records.

The answers of :class:`store.journal.reader.Journal` (:class:`JournalRecord`, :class:`LayerHistory`,
:class:`JournalInfo`, :class:`OpenLayer`) and :class:`FateWalk` with :func:`resolve_layers`, the
walk down a layer's commit chain that gives it its fate (``store.journal.reader``'s docstring says
what the fates mean). Plain values and no SQL: split from ``store.journal.reader``, the reader,
which re-exports these names and fetches the rows they are made of. It never imports the reader.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass
from typing import Any

from drasnap.store.codec import decode
from drasnap.store.interface import Fate


@dataclass(frozen=True, slots=True)
class JournalRecord:
    """One journal row. ``value_json`` is the canonical JSON of a put's value."""

    seq: int
    ts: float
    op: str
    depth: int
    layer: int
    parent: int | None
    label: str | None
    kind: str | None
    key: str | None
    value_json: str | None
    digest: str | None
    chain: str | None = None  # checkpoint rows: the journal chain (store.chain)

    @property
    def value(self) -> Any:
        """The put's value, decoded (a new object on each call); ``None`` for other ops."""
        return None if self.value_json is None else decode(self.value_json)


@dataclass(frozen=True, slots=True)
class LayerHistory:
    """One layer instance's life, from its fork to its commit or revert (see module docstring)."""

    layer: int
    label: str | None
    depth: int
    parent: int  # the instance below it when it was forked (0 = the base)
    opened_seq: int
    opened_at: float
    closed_seq: int | None
    closed_at: float | None
    closed_by: str | None  # "commit", "revert", or None while open
    fate: Fate  # committed, reverted or open
    dropped_seq: int | None  # the revert that discarded its changes, if any


@dataclass(frozen=True, slots=True)
class JournalInfo:
    """What the ``stores`` row says about a store's journal."""

    store: str
    store_id: int
    complete: bool  # False once a writer ran with journal=False
    last_seq: int  # 0 when the journal is empty
    checkpoint_seq: int | None
    state_digest: str  # the digest at the last checkpoint
    depth: int  # open layers at the last checkpoint
    created_at: float


@dataclass(frozen=True, slots=True)
class OpenLayer:
    """An open layer at some point: depth (1 = just above the base), instance, label, when it
    was forked, and how many keys it modifies or deletes."""

    depth: int
    instance: int
    label: str | None
    created_at: float
    entries: int


class FateWalk:
    """The one walk that gives a layer its fate: follow its commits down to a revert (reverted,
    dropped then), a commit into the base (committed) or a layer still open (open; unknown
    when the journal has no fork for it). Each chain is walked once, the answers remembered."""

    def __init__(self, closes: Iterable[Any], forks: Container[int] | None = None) -> None:
        self._closes = {r.layer: r for r in closes}  # commit and revert records, by instance
        self._forks = forks  # None: every instance counts as forked
        self._ends: dict[int, tuple[Fate, int | None]] = {0: (Fate.COMMITTED, None)}

    def end(self, instance: int) -> tuple[Fate, int | None]:
        """``(fate, dropped_seq)`` of layer ``instance``."""
        ends = self._ends
        chain: list[int] = []
        result: tuple[Fate, int | None]
        while True:
            known = ends.get(instance)
            if known is not None:
                result = known
                break
            chain.append(instance)
            close = self._closes.get(instance)
            if close is None:
                forked = self._forks is None or instance in self._forks
                result = (Fate.OPEN if forked else Fate.UNKNOWN, None)
                break
            if close.op == "revert":
                result = (Fate.REVERTED, close.seq)
                break
            instance = close.parent or 0
        for i in chain:
            ends[i] = result
        return result


def resolve_layers(rows: Iterable[JournalRecord]) -> dict[int, LayerHistory]:
    """Layer histories from fork, commit and revert records (in any order)."""
    rows = list(rows)
    forks = {r.layer: r for r in rows if r.op == "fork"}
    closes = {r.layer: r for r in rows if r.op in ("commit", "revert")}
    walk = FateWalk(closes.values(), forks)
    out: dict[int, LayerHistory] = {}
    for instance, fork in forks.items():
        fate, dropped = walk.end(instance)
        close = closes.get(instance)
        out[instance] = LayerHistory(
            layer=instance,
            label=fork.label,
            depth=fork.depth,
            parent=fork.parent or 0,
            opened_seq=fork.seq,
            opened_at=fork.ts,
            closed_seq=close.seq if close else None,
            closed_at=close.ts if close else None,
            closed_by=close.op if close else None,
            fate=fate,
            dropped_seq=dropped,
        )
    return out
