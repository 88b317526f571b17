"""What every store offers: the layer description and the sentinels shared by the backends."""

from __future__ import annotations

from typing import Any, Final, NamedTuple


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

#: Beyond every sequence number and depth a store reaches (and within a signed 64-bit
#: column): "never" where a position is compared.
NEVER: Final = 1 << 62
