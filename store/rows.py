"""The plain values the durable store's two sides exchange: what SQL holds when a store opens
(:class:`Loaded`, read by ``store.sql.persist.load``), and at each flush what is pending
(:class:`Pending`, built by the memory side, ``store.cache``) and what was written
(:class:`Flushed`, the answer of ``store.sql.persist.flush``, which writes a ``Pending`` in one
transaction).

A ``Pending`` holds only encoded rows (strings, numbers, booleans, None), never a reference to
the store's live values or layers, so it can be handed to another thread as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

__all__ = [
    "Entry",
    "EntryRow",
    "EntryTuple",
    "Flushed",
    "JournalRow",
    "LayerRow",
    "Loaded",
    "Pending",
    "is_checkpoint",
    "journal_row",
    "with_chain",
]

Key = tuple[str, str]

#: ``(store_id, kind, key, depth)`` to delete, or ``(store_id, kind, key, depth, tombstone,
#: value)`` to write, as in ``store.sql.tables.entries``.
EntryRow = tuple[Any, ...]
#: ``(depth, instance, label, created_at)`` of a layer new in SQL.
LayerRow = tuple[int, int, str | None, float]


class Entry(NamedTuple):
    """One operation of a durable store's journal buffer, as the store records it and ships it
    to the write-behind process: a journal row without its store, sequence number, digest and
    chain (those are given at the flush, :func:`journal_row`).

    The store appends each as a plain tuple in this field order (:data:`EntryTuple`): building
    a NamedTuple costs several times a tuple, a visible part of a ``put`` (BENCHMARKS.md,
    design notes). Read one by name with ``Entry._make(t)``.
    """

    ts: float
    op: str  # put, delete, fork, revert, commit, checkpoint
    depth: int  # open layers after a fork or put/delete, before a revert or commit
    layer: int  # the layer instance written, forked or closed (0: the base)
    parent: int | None  # fork: the instance below; commit: the one merged into
    label: str | None  # fork: the layer's label
    kind: str | None  # put, delete
    key: str | None  # put, delete
    value: str | None  # put: the value's canonical JSON (store.codec)


#: An :class:`Entry` as the plain tuple the store's hot path builds.
EntryTuple = tuple[float, str, int, int, int | None, str | None, str | None, str | None, str | None]

#: A ``store.sql.tables.journal`` row, its columns in table order: ``store_id``, ``seq``, the
#: fields of an :class:`Entry`, ``digest`` and ``chain`` (a checkpoint's). A plain tuple: it
#: is what the chain hashes (orjson encodes tuples, not NamedTuples) and what SQL inserts.
JournalRow = tuple[Any, ...]
_OP = 2 + Entry._fields.index("op")
_CHAIN = 2 + len(Entry._fields) + 1


def journal_row(
    store_id: int, seq: int, entry: EntryTuple, digest: str | None = None
) -> JournalRow:
    """The journal row of ``entry`` (its chain None: a flush fills a checkpoint's in)."""
    return (store_id, seq, *entry, digest, None)


def is_checkpoint(row: JournalRow) -> bool:
    return bool(row[_OP] == "checkpoint")


def with_chain(row: JournalRow, chain: str) -> JournalRow:
    """A checkpoint row with its journal chain (``store.chain``) filled in."""
    return (*row[:_CHAIN], chain)


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

    def encoded_size(self) -> int:
        """About how many bytes of rows this flush writes (their JSON: for messages)."""
        rows = (self.deletes, self.upserts, self.new_layers, self.inserts, self.journal)
        return len(orjson.dumps(rows))


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
