"""The journal's chain: at every checkpoint, a digest of the journal rows since the previous one.

The state digest a checkpoint records proves the effective state, but a write inside a layer
that was later reverted leaves no trace in it: an edit of such a row would go unnoticed. So each
checkpoint row also records ``chain``, 32 hex characters::

    chain = SHA-256(previous ‖ JSON(rows)), its first 16 bytes

- ``previous``: the chain of the store's previous checkpoint row, as 16 bytes (16 zero bytes
  for the first checkpoint, or when the previous one has no chain: recorded before chains);
- ``rows``: every journal row after the previous checkpoint up to this checkpoint row itself,
  in order, each as it is written to the ``journal`` table: ``[store_id, seq, ts, op, depth,
  layer, parent, label, kind, key, value, digest, chain]``, the checkpoint row's own ``chain``
  being null (``value``, a put's canonical JSON, is a JSON string);
- JSON as orjson writes it: compact (no spaces), each row an array, strings as in the
  canonical encoding (``store.codec``: UTF-8, not ``\\u``-escaped), floats (``ts``) in their
  shortest round-trip form; the bytes hashed are the UTF-8 of that text;
- the chain is written as 32 lowercase hex digits. ``tests/store/test_known_answers.py``
  recomputes it from these words with ``hashlib`` and ``json``.

The flush hashes the very rows it writes, in one call (:func:`chain_of`: no object is built per
row); a replay with ``verify`` recomputes the chain row by row (:class:`ChainHasher`) and names
the first checkpoint whose chain differs: the journal was changed between the previous
checkpoint and it. Each chain covers the
previous one, so no later checkpoint can match once one has not. It detects edits, not forgery:
whoever can edit the database can also recompute the chains.
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import sha256
from typing import Any

import orjson

__all__ = ["ChainHasher", "chain_of"]

_ZERO = bytes(16)


def _start(previous: str | None) -> Any:
    return sha256(_ZERO if previous is None else bytes.fromhex(previous))


def chain_of(previous: str | None, rows: Sequence[Sequence[Any]]) -> str:
    """The chain over ``rows`` (journal rows as written, the last one's chain None)."""
    h = _start(previous)
    h.update(orjson.dumps(rows))
    return str(h.hexdigest()[:32])


class ChainHasher:
    """The same chain, fed one row at a time (a replay reads the journal as a stream)."""

    __slots__ = ("_h", "_sep")

    def __init__(self, previous: str | None) -> None:
        self._h = _start(previous)
        self._sep = b"["

    def add(self, row: Sequence[Any]) -> None:
        """The next row, its columns in table order (a checkpoint's chain None)."""
        self._h.update(self._sep)
        self._h.update(orjson.dumps(row))
        self._sep = b","

    def add_many(self, rows: Sequence[Sequence[Any]]) -> None:
        """The next rows, as :meth:`add` one by one, in one encoding."""
        if rows:
            self._h.update(self._sep)
            self._h.update(orjson.dumps(rows)[1:-1])
            self._sep = b","

    def finish(self) -> str:
        self._h.update(b"[]" if self._sep == b"[" else b"]")
        return str(self._h.hexdigest()[:32])
