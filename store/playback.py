"""Re-applying a journal: replay into a fresh store, the state at any sequence number, diffs.

A store's journal records every operation, so applying its records in order to an empty store
rebuilds the state the writer had after each of them. :func:`replay` does that into memory (a
:class:`MemoryStore`) or into a new database, and with ``verify=True`` compares the state digest
at every recorded checkpoint; :func:`open_state` gives the state at a sequence number (or the
stored one) to read; :func:`diff` compares two points. All of them refuse an incomplete journal
(:class:`JournalError`): the state it would rebuild would not be the one recorded.

Generic: kinds, keys and values only. Replay knows no more than the store does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from drasnap.store.chain import ChainHasher
from drasnap.store.codec import (
    DIGEST_MOD,
    EMPTY_DIGEST,
    digest_after,
    encode,
    entry_hash,
    format_digest,
    parse_digest,
)
from drasnap.store.durable import Store
from drasnap.store.errors import InvalidValueError, StoreNotFoundError
from drasnap.store.interface import Closing, LayerInfo, VersionedStore
from drasnap.store.journal import Journal, JournalError, JournalRecord, OpenLayer
from drasnap.store.jsondiff import FieldChange, field_diff
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


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


_ABSENT: Final[Any] = _Absent()
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

    @property
    def matches(self) -> bool | None:
        """Whether the replayed digest equals the recorded one (None: nothing recorded here)."""
        if self.divergence is not None:
            return False
        if self.recorded_digest is None:
            return None
        return self.recorded_digest == self.state_digest


# -- applying records ------------------------------------------------------------------------


class _Replayer:
    """Applies journal records to a store, checking that each can follow the ones before it.

    With ``track=True`` it also remembers, for each key changed since the last :meth:`mark`,
    the value it had then (so the digest moves by O(changes), and diffs need no full copy).
    """

    def __init__(self, target: VersionedStore, *, store: str, track: bool = False) -> None:
        self.target = target
        self.store = store
        self.track = track
        self.open: list[JournalRecord] = []  # the fork record of each open layer
        self.layer_keys: list[set[Key]] = []
        self.touched: dict[Key, Any] = {}
        self.marked: dict[Key, Any] = {}
        self.marked_written: dict[Key, list[str]] = {}
        self.written: dict[Key, list[str]] = {}  # verify: values put since the last mark
        self.keep_written = False
        self.digest = 0
        self.expected_seq = 1
        self.last_seq = 0
        self.count = 0

    def _bad(self, rec: JournalRecord, why: str) -> JournalError:
        return JournalError(
            f"the journal of store {self.store!r} is inconsistent at seq {rec.seq} "
            f"({rec.op}): {why}"
        )

    def apply(self, rec: JournalRecord) -> None:
        if rec.seq != self.expected_seq:
            raise JournalError(
                f"the journal of store {self.store!r} has no record for seq "
                f"{self.expected_seq} (the next one is {rec.seq}): it is incomplete"
            )
        self.expected_seq = rec.seq + 1
        self.last_seq = rec.seq
        self.count += 1
        op = rec.op
        target = self.target
        if op == "put" or op == "delete":
            kind, key = rec.kind, rec.key
            if kind is None or key is None:
                raise self._bad(rec, "a write without kind or key")
            if rec.layer != (self.open[-1].layer if self.open else 0):
                raise self._bad(rec, f"a write to layer {rec.layer}, which is not the top one")
            ck = (kind, key)
            if self.track and ck not in self.touched:
                self.touched[ck] = target.get(kind, key, _ABSENT)
            if self.layer_keys:
                self.layer_keys[-1].add(ck)
            if op == "put":
                if rec.value_json is None:
                    raise self._bad(rec, "a put without a value")
                target.put(kind, key, rec.value)
                if self.keep_written:
                    self.written.setdefault((kind, key), []).append(rec.value_json)
            else:
                target.delete(kind, key)
        elif op == "fork":
            below = self.open[-1].layer if self.open else 0
            if rec.depth != len(self.open) + 1 or (rec.parent or 0) != below:
                raise self._bad(
                    rec,
                    f"a fork to depth {rec.depth} above layer {rec.parent}, but {len(self.open)} "
                    f"layer(s) are open and the top one is {below}",
                )
            target.fork(rec.label)
            self.open.append(rec)
            self.layer_keys.append(set())
        elif op == "commit" or op == "revert":
            if not self.open or rec.layer != self.open[-1].layer:
                top = self.open[-1].layer if self.open else "the base"
                raise self._bad(rec, f"closes layer {rec.layer}, but the top layer is {top}")
            self.open.pop()
            keys = self.layer_keys.pop()
            if op == "commit":
                target.commit()
                if self.layer_keys:
                    self.layer_keys[-1] |= keys
            else:
                if self.track:
                    touched = self.touched
                    for ck in keys:
                        if ck not in touched:
                            touched[ck] = target.get(ck[0], ck[1], _ABSENT)
                target.revert()
        elif op != "checkpoint":
            raise self._bad(rec, f"unknown operation {op!r}")

    def mark(self) -> str:
        """Fold the changes since the previous mark into the digest; start tracking anew.

        What was tracked stays readable as ``marked``/``marked_written`` until the next mark.
        """
        get = self.target.get

        def changes() -> Iterator[tuple[str, str, str | None, str | None]]:
            for (kind, key), old in self.touched.items():
                new = get(kind, key, _ABSENT)
                if old is not new:
                    yield (
                        kind,
                        key,
                        None if old is _ABSENT else encode(old),
                        None if new is _ABSENT else encode(new),
                    )

        total = self.digest = digest_after(self.digest, changes())
        self.marked, self.touched = self.touched, {}
        self.marked_written, self.written = self.written, {}
        return format_digest(total)

    def open_layers(self) -> list[OpenLayer]:
        infos: list[LayerInfo] = self.target.layers()
        return [
            OpenLayer(d, fork.layer, fork.label, fork.ts, infos[d].entries)
            for d, fork in enumerate(self.open, start=1)
        ]


def _identify(rp: _Replayer, journal: Journal, rec: JournalRecord, replayed: str) -> Divergence:
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
        now = get(kind, key, _ABSENT)
        now_hash = 0 if now is _ABSENT else entry_hash(kind, key, encode(now))
        options: list[str | None] = [None]
        if old is not _ABSENT:
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
    differs (:attr:`ReplayReport.divergence`). Replayed to the end, the digest is
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
        verified = 0
        rp = _Replayer(target, store=name, track=verify)
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


# -- the state at a point ----------------------------------------------------------------------


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


def _replay_to(journal: Journal, seq: int, *, track_from: int | None = None) -> _Replayer:
    """A replay into memory up to ``seq``; with ``track_from``, ``touched`` then holds the
    value at ``track_from`` of every key that changed after it."""
    rp = _Replayer(MemoryStore(), store=journal.info.store)
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
        after = rp.target.get(kind, key, _ABSENT)
        old, new = (before, after) if a <= b else (after, before)
        if old is _ABSENT and new is _ABSENT:
            continue
        if old is _ABSENT:
            changes.append(ObjectChange(kind, key, "added", None, new))
        elif new is _ABSENT:
            changes.append(ObjectChange(kind, key, "removed", old, None))
        elif encode(old) != encode(new):
            fields = tuple(field_diff(old, new))
            changes.append(ObjectChange(kind, key, "changed", old, new, fields))
    return StateDiff(name, a, b, tuple(changes))
