"""The contracts of the stores: :class:`VersionedStore` (what ``Store``, ``MemoryStore`` and any
store the snapshot runs on offer), :class:`ReadOnlyState` (what a state to read offers, such as
``states.State``), :class:`Follower` (derived state a store keeps in step, see
``store.followers``), the layer description, the sentinels shared by the backends, and
:class:`Closing`, the ``with`` block of everything that has a ``close()``.

mypy checks the stores against these protocols (``store/__init__.py``), and the snapshot and the
tools are written against them, never against one backend.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from types import TracebackType
from typing import Any, Final, NamedTuple, Protocol, Self, runtime_checkable


class Closing:
    """A mixin for a class with a ``close()``: ``with obj:`` gives ``obj`` and closes it at the
    end (the stores, states, journals and snapshots, which once wrote this pair each)."""

    __slots__ = ()

    def close(self) -> None:
        """Release what the object holds (idempotent); every user of the mixin defines it."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class LayerInfo(NamedTuple):
    """One open layer, as returned by ``layers()`` (depth 0 is the base layer)."""

    depth: int
    label: str | None
    created_at: float  # seconds since the epoch
    entries: int  # keys modified or deleted in this layer (the base holds no tombstones in Store)


class _Sentinel:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: "known to be absent": a negative cache entry, or the previous value of a key that did not exist
ABSENT: Final[Any] = _Sentinel("ABSENT")
#: a tombstone in a layer's changes
TOMBSTONE: Final[Any] = _Sentinel("TOMBSTONE")
#: not looked up (a miss in a lookup, or an unknown previous value in a bounded cache)
MISS: Final[Any] = _Sentinel("MISS")


@runtime_checkable
class Follower(Protocol):
    """Derived state told of every change of a followed kind's effective values (see
    :mod:`store.followers`)."""

    def changed(self, kind: str, key: str, value: Any) -> None:
        """``kind/key`` now has the effective value ``value`` (ABSENT: it does not exist)."""
        ...


@runtime_checkable
class ReadOnlyState(Protocol):
    """A store's effective state, to read: kinds of keys with JSON values.

    Values returned are shared and read-only by contract: never mutate them.
    """

    def get(self, kind: str, key: str, default: Any = None) -> Any:
        """The value of ``kind/key``, or ``default``."""
        ...

    def items(self, kind: str) -> dict[str, Any]:
        """A fresh dict of every live key of ``kind`` and its value."""
        ...

    def count(self, kind: str) -> int:
        """The number of live keys of ``kind``."""
        ...

    def kinds(self) -> list[str]:
        """Every kind with at least one live key, sorted."""
        ...

    def state_digest(self) -> str:
        """Digest of the state; equal for equal states on every backend."""
        ...

    def close(self) -> None:
        """Release what the state holds (idempotent)."""
        ...


@runtime_checkable
class VersionedStore(ReadOnlyState, Protocol):
    """A versioned key-value store of JSON values, organised as patch layers.

    Writes go to the top layer; ``fork`` pushes an empty layer, ``commit`` merges the top one
    into the one below, ``revert`` drops it (both no-ops at the base, returning 0). Derived
    state follows the effective values through :meth:`follow`. ``checkpoint`` makes the state
    durable where the store is durable (a no-op otherwise).
    """

    @property
    def backend(self) -> str:
        """What the store runs on, for reports (``memory``, ``sqlite 3.40.1``, ...)."""
        ...

    @property
    def depth(self) -> int:
        """Number of open forks (0 = only the base layer)."""
        ...

    def fork(self, label: str | None = None) -> int: ...

    def commit(self) -> int: ...

    def revert(self) -> int: ...

    def layers(self) -> list[LayerInfo]: ...

    def put(self, kind: str, key: str, value: Any) -> None: ...

    def delete(self, kind: str, key: str) -> None: ...

    def in_current_layer(self, kind: str, key: str) -> bool: ...

    def keys(self, kind: str) -> list[str]: ...

    def checkpoint(self, *, wait: bool = True) -> None: ...

    def maybe_checkpoint(self) -> bool: ...

    def follow(self, kinds: Iterable[str], follower: Follower) -> None: ...

    def unfollow(self, follower: Follower) -> None: ...


#: Beyond every sequence number and depth a store reaches (and within a signed 64-bit
#: column): "never" where a position is compared.
NEVER: Final = 1 << 62


class Fate(StrEnum):
    """How a layer's changes ended (``store.journal.reader`` says how it is found); equal to its
    lowercase name."""

    COMMITTED = "committed"
    REVERTED = "reverted"
    OPEN = "open"
    UNKNOWN = "unknown"  # the journal lacks the layer's fork (it is incomplete)
