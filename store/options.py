"""The durable store's options: their defaults, in this one place, and their checks."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from drasnap.store.errors import InvalidValueError

__all__ = ["StoreOptions", "check_store_name"]

_SYNC_MODES = ("off", "normal", "full")


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """The keyword options of :meth:`store.Store.open`, with their defaults.

    - ``cache_size``: None keeps every value in memory; N keeps at most N cached values per
      kind and reads the rest from SQL.
    - ``journal``: record every operation (needed by replay, diff and history).
    - ``auto_checkpoint``: apply the checkpoint policy below; False leaves every checkpoint to
      ``checkpoint()`` and ``maybe_checkpoint()``.
    - ``checkpoint_interval``: seconds of work between automatic checkpoints (None: never by
      time).
    - ``checkpoint_on_base_commit``: a commit into the base checkpoints when the last
      checkpoint is at least ``base_commit_gap`` seconds old (False: never), so a loop that
      commits into the base all the time pays for at most one checkpoint per gap.
    - ``base_commit_gap``: those seconds (0: at every commit into the base).
    - ``max_pending``: checkpoint when more journal entries (or unflushed base writes) wait.
    - ``sync``: "normal" (a checkpoint survives the process being killed), "full" (also a
      power cut), "off" (neither, for throw-away runs). On PostgreSQL "full" is
      ``synchronous_commit=on`` and the others ``off``, which survives a killed client.
    - ``write_behind``: the journal and the checkpoints are written by a process of the
      store's own while the caller goes on (:mod:`store.behind.writer`); ``checkpoint()`` and
      ``close()`` still return only when everything is durable. For SQLite files, with the
      journal on and every value in memory (``cache_size=None``); the writer holds the file's
      write lock between checkpoints. ``"auto"``: on where it can be (a writer of a SQLite
      file, journal on, every value in memory), off elsewhere.
    """

    cache_size: int | None = None
    journal: bool = True
    auto_checkpoint: bool = True
    checkpoint_interval: float | None = 30.0
    checkpoint_on_base_commit: bool = True
    base_commit_gap: float = 1.0
    max_pending: int = 200_000
    sync: str = "normal"
    write_behind: bool | Literal["auto"] = False

    def __post_init__(self) -> None:
        size = self.cache_size
        if size is not None and (type(size) is not int or size < 1):
            raise InvalidValueError(f"cache_size must be None or a positive integer, got {size!r}")
        interval = self.checkpoint_interval
        if interval is not None and (not isinstance(interval, int | float) or interval < 0):
            raise InvalidValueError(
                f"checkpoint_interval must be None or seconds >= 0, got {interval!r}"
            )
        on = self.checkpoint_on_base_commit
        if type(on) is not bool:
            # A number here was once the gap: refused, never read as a truth value.
            raise InvalidValueError(
                f"checkpoint_on_base_commit must be True or False (the seconds are "
                f"base_commit_gap), got {on!r}"
            )
        gap = self.base_commit_gap
        if isinstance(gap, bool) or not isinstance(gap, int | float) or gap < 0:
            raise InvalidValueError(f"base_commit_gap must be seconds >= 0, got {gap!r}")
        if self.sync not in _SYNC_MODES:
            raise InvalidValueError(f"sync must be 'off', 'normal' or 'full', got {self.sync!r}")
        if not isinstance(self.write_behind, bool) and self.write_behind != "auto":
            raise InvalidValueError(
                f"write_behind must be True, False or 'auto', got {self.write_behind!r}"
            )
        if self.write_behind is True and size is not None:
            raise InvalidValueError(
                "write_behind needs every value in memory (cache_size=None): a bounded cache "
                "reads SQL on a miss, which must not see a half-written checkpoint "
                f"(cache_size={size})"
            )
        if self.write_behind is True and not self.journal:
            raise InvalidValueError(
                "write_behind needs the journal (journal=True): the writer process is sent its rows"
            )
        pending = self.max_pending
        if type(pending) is not int or pending < 1:
            raise InvalidValueError(f"max_pending must be a positive integer, got {pending!r}")

    @classmethod
    def check_known(cls, options: Mapping[str, Any]) -> None:
        """Raise :class:`InvalidValueError` if ``options`` names an option that does not exist
        (the values are checked when the options are built from them)."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(options) - known
        if unknown:
            raise InvalidValueError(
                f"unknown Store option(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(known))}"
            )


def check_store_name(name: object) -> None:
    """Raise :class:`InvalidValueError` unless ``name`` can name a store."""
    if type(name) is not str or not name:
        raise InvalidValueError(f"a store name must be a non-empty string, got {name!r}")
    if len(name) > 200:
        raise InvalidValueError(f"a store name has at most 200 characters, got {len(name)}")
