"""As-of reads in SQL: ``objects_as_of``, the live objects of every store as of a journal seq,
as ``open_state(at=SEQ)`` (``drasnap inspect --at SEQ``) holds them.

On PostgreSQL migration 0007 creates the function ``objects_as_of(store, seq)``; on SQLite,
which has no parameterised views, ``drasnap query --as-of SEQ`` gives the statement a common
table expression of that name (:func:`with_as_of`). For each key it is the last write at or
before the seq that no revert had dropped by then, unless that write deletes the key: a later
write always sits at or above an earlier one in the layer stack, so the last one not dropped
is what a read returns (the same rule as ``allocation_events``' "claim just before").
"""

from __future__ import annotations

import re

from drasnap.store.errors import InvalidValueError
from drasnap.store.sql.view_registry import iso_utc_sql

__all__ = ["as_of_select", "with_as_of"]

_WRITES = "op IN ('put', 'delete')"


def as_of_select(dialect: str, store: str, seq: str) -> str:
    """The ``SELECT`` of the live objects of the stores matching ``store`` (an SQL condition on
    ``s``, the stores table) as of journal seq ``seq`` (an SQL expression). Migration 0007's
    PostgreSQL function is this text (``tests/migrations`` checks they agree)."""
    fate = "COALESCE(lh.fate, CASE WHEN l.layer = 0 THEN 'committed' ELSE 'unknown' END)"
    return f"""
WITH lh AS MATERIALIZED (
  SELECT store_id, layer, label, fate, dropped_seq FROM layer_history
),
latest AS (
  SELECT j.store_id, j.seq, j.ts, j.op, j.layer, j.depth, j.kind, j.key, j.value,
    row_number() OVER (PARTITION BY j.store_id, j.kind, j.key ORDER BY j.seq DESC) AS n
  FROM journal AS j
  JOIN stores AS s ON s.id = j.store_id
  LEFT JOIN lh AS d ON d.store_id = j.store_id AND d.layer = j.layer
  WHERE {store} AND j.{_WRITES} AND j.seq <= {seq}
    AND (d.dropped_seq IS NULL OR d.dropped_seq > {seq})
)
SELECT l.store_id, s.name AS store, l.kind, l.key, l.value, l.seq AS from_seq,
  l.layer, lh.label, l.depth, {fate} AS fate,
  {iso_utc_sql("l.ts", dialect)} AS time, l.ts AS time_epoch
FROM latest AS l
JOIN stores AS s ON s.id = l.store_id
LEFT JOIN lh ON lh.store_id = l.store_id AND lh.layer = l.layer
WHERE l.n = 1 AND l.op = 'put'
"""


_WITH = re.compile(r"WITH(\s+RECURSIVE)?\s", re.I)
_LEADING = re.compile(r"(\s+|--[^\n]*(\n|$)|/\*.*?\*/)*", re.S)


def with_as_of(sql: str, seq: int, dialect: str, kind: str) -> str:
    """``sql`` (a ``SELECT`` or ``WITH`` statement, first keyword ``kind``) with
    ``objects_as_of`` defined as a common table expression: every store's live objects as of
    its journal seq ``seq``.

    Raises:
        InvalidValueError: ``seq`` is negative, or the statement is neither SELECT nor WITH.
    """
    if seq < 0:
        raise InvalidValueError(f"--as-of is a journal seq (0 or more), got {seq}")
    if kind not in ("SELECT", "WITH"):
        raise InvalidValueError(
            f"--as-of reads objects_as_of in a SELECT or WITH statement, not in {kind}"
        )
    cte = f"objects_as_of AS ({as_of_select(dialect, 'TRUE', str(int(seq)))})"
    start = _LEADING.match(sql)
    match = _WITH.match(sql, start.end() if start else 0)
    if match:
        return f"{sql[: match.end()]}{cte},\n{sql[match.end() :]}"
    return f"WITH {cte}\n{sql}"
