"""Re-applying a journal: replay into a fresh store, the state at any sequence number, diffs.

A store's journal records every operation, so applying its records in order to an empty store
rebuilds the state the writer had after each of them. :func:`replay` does that into memory (a
:class:`MemoryStore`) or into a new database, and with ``verify=True`` compares the state digest
at every recorded checkpoint; :func:`open_state` gives the state at a sequence number (or the
stored one) to read; :func:`diff` compares two points. All of them refuse an incomplete journal
(:class:`JournalError`): the state it would rebuild would not be the one recorded.

Generic: kinds, keys and values only. Replay knows no more than the store does. This module holds
:func:`replay` and its report; applying records is :mod:`store.journal.replayer`, the state at a
point and diffs are :mod:`store.journal.states` (their names are re-exported here).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from drasnap.store.chain import ChainHasher
from drasnap.store.codec import (
    DIGEST_MOD,
    EMPTY_DIGEST,
    encode,
    entry_hash,
    parse_digest,
)
from drasnap.store.durable import Store
from drasnap.store.errors import InvalidValueError, StoreNotFoundError
from drasnap.store.interface import VersionedStore
from drasnap.store.journal.reader import Journal, JournalRecord
from drasnap.store.journal.replayer import NOTHING, Replayer
from drasnap.store.journal.states import ObjectChange, State, StateDiff, diff, open_state
from drasnap.store.journal.stored_state import stored_differences
from drasnap.store.memory import MemoryStore

__all__ = [
    "Divergence",
    "ObjectChange",
    "ReplayReport",
    "State",
    "StateDiff",
    "diff",
    "open_state",
    "replay",
]

Key = tuple[str, str]
_PROGRESS_EVERY = 100_000


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where a replay first stopped matching the recorded run.

    ``seq`` is the checkpoint whose recorded digest differs from the replayed one (or the last
    record, for a final digest that differs). ``kind``/``key`` name the entry that explains the
    difference when one does (``last_write_seq`` is its last write before ``seq``); otherwise
    ``candidates`` lists (up to 20) keys that changed since the previous matching checkpoint.
    With ``journal_from`` set, the state matched but the checkpoint's journal chain did not:
    a row from ``journal_from`` to ``seq`` was changed after it was written.
    """

    seq: int
    recorded: str
    replayed: str
    kind: str | None = None
    key: str | None = None
    last_write_seq: int | None = None
    candidates: tuple[Key, ...] = ()
    # Set when the journal's own rows were changed (its chain, see store.chain): the first
    # row the checkpoint's chain covers. ``recorded``/``replayed`` are then the chains.
    journal_from: int | None = None

    def describe(self) -> str:
        if self.journal_from is not None:
            return (
                f"replay diverged at seq {self.seq}: the journal rows from seq "
                f"{self.journal_from} to {self.seq} were changed after they were written; "
                f"recorded chain {self.recorded}, replayed {self.replayed}"
            )
        where = f"{self.kind} {self.key}" if self.key is not None else "an unidentified entry"
        if self.key is None and self.candidates:
            shown = ", ".join(f"{k} {y}" for k, y in self.candidates[:5])
            where += f" (one of the keys changed since the previous checkpoint: {shown}"
            where += ", ...)" if len(self.candidates) > 5 else ")"
        return (
            f"replay diverged at seq {self.seq}: {where}; recorded digest {self.recorded}, "
            f"replayed {self.replayed}"
        )


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What :func:`replay` did and found."""

    store: str
    source: str
    into: str | None
    records: int  # records applied
    last_seq: int  # the last one applied (0: none)
    depth: int  # open layers at the end
    state_digest: str
    recorded_digest: str | None  # what the run recorded for that point, when it is known
    checkpoints_verified: int
    divergence: Divergence | None
    # verify, replayed to the end: each (kind, key) whose stored value differs from the
    # replay's (store.journal.stored_state), the damage the journal's digests cannot see
    stored_differs: tuple[Key, ...] = ()

    @property
    def matches(self) -> bool | None:
        """Whether the replayed digest equals the recorded one (None: nothing recorded here)
        and, verified to the end, the stored state equals the replayed one."""
        if self.divergence is not None or self.stored_differs:
            return False
        if self.recorded_digest is None:
            return None
        return self.recorded_digest == self.state_digest


def _identify(rp: Replayer, journal: Journal, rec: JournalRecord, replayed: str) -> Divergence:
    """Name the entry that explains a digest difference, when a single one does.

    For each key changed since the previous (matching) checkpoint, the recorded value is
    sought among: absent, its value at that checkpoint, every value put for it since, and the
    values the database holds for it now. The digest is a sum of per-entry hashes, so one
    wrong entry shows as ``recorded - replayed == h(key, right) - h(key, replayed value)``.
    """
    assert rec.digest is not None
    gap = (parse_digest(rec.digest) - parse_digest(replayed)) % DIGEST_MOD
    get = rp.target.get
    for (kind, key), old in rp.marked.items():
        now = get(kind, key, NOTHING)
        now_hash = 0 if now is NOTHING else entry_hash(kind, key, encode(now))
        options: list[str | None] = [None]
        if old is not NOTHING:
            options.append(encode(old))
        options += rp.marked_written.get((kind, key), [])
        options += journal.stored_values(kind, key)
        for text in options:
            right = 0 if text is None else entry_hash(kind, key, text)
            if (right - now_hash) % DIGEST_MOD == gap:
                writes = journal.key_writes(kind, [key])
                before = [w.seq for w in writes if w.seq < rec.seq]
                return Divergence(
                    rec.seq,
                    rec.digest,
                    replayed,
                    kind,
                    key,
                    before[-1] if before else None,
                )
    candidates = tuple(sorted(rp.marked))[:20]
    return Divergence(rec.seq, rec.digest, replayed, candidates=candidates)


# -- replay ------------------------------------------------------------------------------------


def replay(
    source: str | os.PathLike[str],
    *,
    name: str = "default",
    to: int | None = None,
    into: str | os.PathLike[str] | None = None,
    verify: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ReplayReport:
    """Re-apply the journal of store ``name`` in ``source`` to a fresh store.

    The fresh store is a :class:`MemoryStore`, or with ``into`` a new store of the same name in
    that database (it must not hold one yet; recorded checkpoints are checkpoints there too, so
    its journal has the same sequence numbers). Stops after seq ``to`` if given. With
    ``verify``, the state digest is compared at every recorded checkpoint, then the journal
    chain (``store.chain``: a digest of the rows since the previous checkpoint, so an edit of
    any row, one of a reverted layer included, shows), and the replay stops at the first that
    differs (:attr:`ReplayReport.divergence`); replayed to the end without one, the state the
    store holds is compared with the replayed one, entry by entry
    (:attr:`ReplayReport.stored_differs`). Replayed to the end, the digest is
    compared with the one the store recorded at its last checkpoint either way.
    ``progress`` is called with the number of records applied every 100,000 records.

    Raises:
        JournalError: the journal is incomplete or inconsistent.
        InvalidValueError: ``to`` is not a sequence number of the journal, or ``into``
            already holds a store named ``name``.
        StoreNotFoundError, NotADatabaseError, SchemaVersionError: as :meth:`Journal.open`.
    """
    with Journal.open(source, name=name) as journal:
        journal.require_complete("replay it")
        info = journal.info
        stop = info.last_seq if to is None else journal.check_seq(to)
        target: VersionedStore
        if into is None:
            target = MemoryStore()
        else:
            _require_new_store(into, name)
            target = Store.open(into, name=name, auto_checkpoint=False)
        divergence: Divergence | None = None
        stored_differs: tuple[Key, ...] = ()
        verified = 0
        rp = Replayer(target, store=name, track=verify)
        rp.keep_written = verify
        chain = ChainHasher(None) if verify else None
        chain_start = 1
        last: JournalRecord | None = None
        digest: str | None = None
        records = journal.records(stop=stop)
        try:
            for last in records:
                rp.apply(last)
                if chain is not None:
                    chain.add(_chain_row(info.store_id, last))
                if last.op == "checkpoint":
                    if verify:
                        assert chain is not None and last.digest is not None
                        digest = rp.mark()
                        if digest != last.digest:
                            divergence = _identify(rp, journal, last, digest)
                            break
                        replayed = chain.finish()
                        if last.chain is not None and replayed != last.chain:
                            divergence = Divergence(
                                last.seq, last.chain, replayed, journal_from=chain_start
                            )
                            break
                        chain = ChainHasher(None if last.chain is None else replayed)
                        chain_start = last.seq + 1
                        verified += 1
                    if into is not None:
                        target.checkpoint()
                if progress is not None and rp.count % _PROGRESS_EVERY == 0:
                    progress(rp.count)
            # Every flush of a journal ends with a checkpoint record: a replay to the end (or
            # to any checkpoint) has a recorded digest to compare with.
            recorded = EMPTY_DIGEST if last is None else last.digest
            if divergence is not None and divergence.journal_from is None:
                final = divergence.replayed
            elif divergence is not None:
                assert digest is not None
                final = digest  # the state matched there; the journal's rows did not
            else:
                final = rp.mark() if verify else target.state_digest()
            if verify and divergence is None and stop == info.last_seq:
                stored_differs = stored_differences(source, name, target)
        finally:
            records.close()
            target.close()
    return ReplayReport(
        store=name,
        source=journal.display,
        into=None if into is None else os.fspath(into),
        records=rp.count,
        last_seq=rp.last_seq,
        depth=len(rp.open),
        state_digest=final,
        recorded_digest=recorded,
        checkpoints_verified=verified,
        divergence=divergence,
        stored_differs=stored_differs,
    )


def _chain_row(store_id: int, rec: JournalRecord) -> tuple[Any, ...]:
    """A journal record as the chain hashes it: as written (``store.chain``)."""
    return (
        store_id, rec.seq, rec.ts, rec.op, rec.depth, rec.layer, rec.parent, rec.label,
        rec.kind, rec.key, rec.value_json, rec.digest, None,
    )  # fmt: skip


def _require_new_store(into: str | os.PathLike[str], name: str) -> None:
    text = os.fspath(into)
    if "://" not in text and not os.path.exists(text):
        return
    try:
        existing = Journal.open(into, name=name)
    except StoreNotFoundError:
        return
    where = existing.display
    existing.close()
    raise InvalidValueError(
        f"{where} already holds a store named {name!r}: replay into a new database file"
    )
