"""Planning a flush: what the durable store owes SQL since the previous one, as a plain
:class:`store.rows.Pending` — entry and layer rows (from the cache), the journal rows (from the
buffer, with this flush's checkpoint row) and the new counters and state digest.

The digest moves by the keys whose effective value changed since the previous flush
(:func:`store.codec.digest_after`); a bounded cache may not know what such a key held then, and
``resolve`` reads those values from SQL. Planning changes nothing in memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from drasnap.store.cache import LayerStack
from drasnap.store.codec import Encoder, digest_after, format_digest
from drasnap.store.interface import ABSENT, MISS
from drasnap.store.rows import EntryTuple, JournalRow, Pending, journal_row

__all__ = ["encoded_changes", "plan"]

Key = tuple[str, str]


def encoded_changes(
    changes: Iterable[tuple[Key, Any, Any]],
    encode: Callable[[Any], str],
    in_sql: Mapping[Key, str | None] | None = None,
) -> Iterator[tuple[str, str, str | None, str | None]]:
    """``(kind, key, old encoding, new encoding)`` for :func:`store.codec.digest_after`, from
    ``(key, old value, new value)``; an unknown old value (MISS) is the one ``in_sql`` holds."""
    for ck, old, new in changes:
        if old is new:
            continue
        if old is MISS:
            assert in_sql is not None
            old_text = in_sql[ck]
        else:
            old_text = None if old is ABSENT else encode(old)
        yield ck[0], ck[1], old_text, None if new is ABSENT else encode(new)


def plan(
    cache: LayerStack,
    journal: Sequence[EntryTuple] | None,
    *,
    store_id: int,
    next_seq: int,
    next_layer: int,
    digest: int,
    checkpoint_seq: int | None,
    chain: str | None,
    resolve: Callable[[list[Key]], Mapping[Key, str | None]],
    encode: Callable[[Any], str] | None = None,
    now: float | None = None,
) -> Pending:
    """Everything the next flush writes. ``journal`` is the buffer of operations since the
    previous flush, each a :class:`store.rows.Entry` as a plain tuple (None: the store keeps
    no journal, and the flush writes no checkpoint row). ``encode``: how the cache's values
    become their stored text (default: canonical JSON; the write-behind process's cache holds
    the texts themselves); ``now``: the checkpoint's time."""
    enc = Encoder(cache.encoded.values()) if encode is None else encode
    changes = list(cache.digest_changes())
    unknown = [ck for ck, old, _ in changes if old is MISS]
    in_sql = resolve(unknown) if unknown else {}
    state_digest = format_digest(digest_after(digest, encoded_changes(changes, enc, in_sql)))
    truncate_from, deletes, upserts, new_layers, inserts = cache.pending_entries(store_id, enc)
    seq = next_seq
    if now is None:
        now = time.time()
    # The sequence number of a buffered entry is the store's next one plus its place in the
    # buffer; digest and chain are a checkpoint's.
    rows: list[JournalRow] = [journal_row(store_id, q, r) for q, r in enumerate(journal or (), seq)]
    seq += len(rows)
    layers = cache.layers
    if journal is not None:
        top = layers[-1].instance if layers else 0
        checkpoint: EntryTuple = (now, "checkpoint", len(layers), top, None, None, None, None, None)
        rows.append(
            journal_row(store_id, seq, checkpoint, state_digest)
        )  # the flush adds the chain
        checkpoint_seq = seq
        seq += 1
    return Pending(
        store_id=store_id,
        truncate_from=truncate_from,
        deletes=deletes,
        upserts=upserts,
        new_layers=new_layers,
        inserts=inserts,
        journal=rows,
        depth=len(layers),
        next_seq=seq,
        next_layer=next_layer,
        state_digest=state_digest,
        checkpoint_seq=checkpoint_seq,
        chain_previous=chain,
        written_at=now,
    )
