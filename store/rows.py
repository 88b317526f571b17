"""The plain values the durable store's two sides exchange: what SQL holds when a store opens
(:class:`Loaded`, read by ``store.persist.load``), and at each flush what is pending
(:class:`Pending`, built by the memory side, ``store.cache``) and what was written
(:class:`Flushed`, the answer of ``store.persist.flush``, which writes a ``Pending`` in one
transaction).

A ``Pending`` holds only encoded rows (strings, numbers, booleans, None), never a reference to
the store's live values or layers, so it can be handed to another thread as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["EntryRow", "Flushed", "JournalRow", "LayerRow", "Loaded", "Pending"]

Key = tuple[str, str]

#: ``(store_id, kind, key, depth)`` to delete, or ``(store_id, kind, key, depth, tombstone,
#: value)`` to write, as in ``store.tables.entries``.
EntryRow = tuple[Any, ...]
#: ``(depth, instance, label, created_at)`` of a layer new in SQL.
LayerRow = tuple[int, int, str | None, float]
#: A ``store.tables.journal`` row, its columns in table order.
JournalRow = tuple[Any, ...]


@dataclass
class Loaded:
    """What a store looks like in SQL at its last checkpoint."""

    store_id: int
    created_at: float
    next_seq: int
    next_layer: int
    digest: int
    journal_complete: bool
    checkpoint_seq: int | None
    chain: str | None = None  # the journal chain recorded at the last checkpoint (store.chain)
    # Every base value (kind -> key -> value); left empty for a bounded cache.
    base: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (instance, label, created_at, changes) per open layer, depth 1 first; a change is a
    # value or TOMBSTONE.
    layers: list[tuple[int, str | None, float, dict[Key, Any]]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Pending:
    """Everything not yet in SQL, ready to write.

    The rows are applied in this order: the layers and entries at ``truncate_from`` and above
    are deleted (layers popped since the last flush, or replaced whole), then ``deletes``,
    ``upserts`` (rows that may exist), ``new_layers``, ``inserts`` (rows of new layers), the
    ``journal`` rows, and last the ``stores`` row gets the new counters.
    """

    store_id: int
    truncate_from: int | None
    deletes: list[EntryRow]
    upserts: list[EntryRow]
    new_layers: list[LayerRow]
    inserts: list[EntryRow]
    journal: list[JournalRow]
    depth: int  # open layers
    next_seq: int  # the journal's next sequence number
    next_layer: int  # the next layer instance id
    state_digest: str
    checkpoint_seq: int | None  # the seq of the newest checkpoint row (this flush's, if any)
    # The journal chain (store.chain) of the previous checkpoint: when ``journal`` ends with a
    # checkpoint row, the flush hashes the rows into that row's chain.
    chain_previous: str | None
    written_at: float


@dataclass(frozen=True, slots=True)
class Flushed:
    """What a flush wrote: the store's counters as they now are in SQL (``chain``: the journal
    chain at the newest checkpoint), and row counts."""

    next_seq: int
    checkpoint_seq: int | None
    state_digest: str
    chain: str | None
    entry_rows: int
    journal_rows: int
