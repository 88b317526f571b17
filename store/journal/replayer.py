"""Applying journal records to a store: the one loop under replay, ``open_state`` and ``diff``.

:class:`Replayer` re-executes each record through a :class:`store.VersionedStore`'s own operations,
checking that it can follow the ones before it (a journal read from a database may be incomplete or
inconsistent: :class:`JournalError`), and can track the value each key had at a mark, so that a
digest moves by O(changes) and a diff needs no copy of the state. Split from
``store.journal.playback`` (which, with ``store.journal.states``, drives it); it never imports
either.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from drasnap.store.codec import digest_after, encode, format_digest
from drasnap.store.interface import LayerInfo, VersionedStore
from drasnap.store.journal.reader import JournalError, JournalRecord, OpenLayer

Key = tuple[str, str]


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


#: The value of a key that does not exist, in a replay's tracking (and in ``diff``).
NOTHING: Final[Any] = _Absent()


class Replayer:
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
        # Not store.cache.LayerStack.apply, the write-behind mirror's reading of an entry,
        # though both dispatch on the same ops: the mirror replays the store's own buffer
        # into a bare layer stack, trusting it and keeping its instances and times; a replay
        # goes through a VersionedStore's operations (a MemoryStore has no layer stack; a
        # Store replayed into must write its own journal and checkpoints, so the same
        # sequence numbers), checks every record of a journal read back from a database, and
        # tracks keys between the checks and the operation (before a put, before a revert).
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
                self.touched[ck] = target.get(kind, key, NOTHING)
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
                            touched[ck] = target.get(ck[0], ck[1], NOTHING)
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
                new = get(kind, key, NOTHING)
                if old is not new:
                    yield (
                        kind,
                        key,
                        None if old is NOTHING else encode(old),
                        None if new is NOTHING else encode(new),
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
