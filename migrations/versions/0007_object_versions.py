"""object_versions: every version of every object, with its layer, fate and lifetime in seqs;
on PostgreSQL the function objects_as_of(store, seq), the state as of a journal seq.

Both read the journal and ``layer_history`` only: no table changes, so the existing views,
digests and journal stay as they are, and a database written before gets them at its next
writer's open (which runs the migrations). Documented in ``docs/sql.md``.

A version is one put or delete (``value`` NULL). It is in the store from its write
(``from_seq``) until ``to_seq``: the first seq at which it is gone from every layer, because a
later write of the key reached the layer holding it (written there, or committed into it from
above) or because a revert dropped the layer holding it; NULL while it is still held. A
version committed down keeps its one row (the layer it was written in). At any seq S, a read of
the key returns, among the versions held at S (``from_seq <= S < to_seq``), the one written
last (the highest ``from_seq``): a later write always sits at or above an earlier one, and they
meet only when one replaces the other.

``to_seq`` is computed from where each layer's writes live (``places``: the layer, then each
layer it was committed into, from that commit on): within one place, a version is replaced by
the next arrival of the key there (``LEAD``); its ``to_seq`` is the first such replacement in
any of its places, else the revert that dropped it. (A version already replaced in a layer
also appears to arrive below when that layer is committed, at the same seq as the version that
replaced it and ordered before it, so it changes neither the minimum nor anyone's successor.)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-12
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WRITES = "op IN ('put', 'delete')"


def iso_utc(expression: str, dialect: str) -> str:
    """As migration 0004's (frozen here as this revision wrote it)."""
    e = f"({expression})"
    if dialect == "postgresql":
        micros = f"round(({e} - floor({e})) * 1000000)"
        seconds = f"(floor({e}) + floor({micros} / 1000000))"
        millis = f"(mod(({micros})::bigint, 1000000) / 1000)"
        day_time = (
            f"to_char(to_timestamp({seconds}) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS')"
        )
        return f"{day_time} || '.' || lpad(({millis})::text, 3, '0') || '+00:00'"
    micros = f"CAST(round(({e} - CAST({e} AS INTEGER)) * 1000000) AS INTEGER)"
    seconds = f"(CAST({e} AS INTEGER) + {micros} / 1000000)"
    millis = f"({micros} % 1000000 / 1000)"
    day_time = f"strftime('%Y-%m-%dT%H:%M:%S', {seconds}, 'unixepoch')"
    return f"{day_time} || '.' || substr('00' || {millis}, -3, 3) || '+00:00'"


def _fate(alias: str, layer: str) -> str:
    return f"COALESCE({alias}.fate, CASE WHEN {layer} = 0 THEN 'committed' ELSE 'unknown' END)"


def object_versions(dialect: str) -> str:
    # A filter on kind and key reaches the journal scan (both windows are partitioned by
    # them); SQLite, without statistics, is told to read it through the (store_id, kind, key)
    # index, as allocation_events is.
    indexed = " INDEXED BY ix_journal_store_id_kind_key" if dialect == "sqlite" else ""
    return f"""
WITH RECURSIVE
lh AS MATERIALIZED (
  SELECT store_id, layer, label, depth, fate, dropped_seq, closed_by, closed_seq, merged_into
  FROM layer_history
),
places (store_id, layer, place, arrived_seq) AS (
  SELECT store_id, layer, layer, CAST(NULL AS BIGINT) FROM lh
  UNION ALL
  SELECT p.store_id, p.layer, c.merged_into, c.closed_seq
  FROM places AS p
  JOIN lh AS c ON c.store_id = p.store_id AND c.layer = p.place
  WHERE c.closed_by = 'commit'
),
stays AS (
  SELECT j.store_id, j.kind, j.key, j.seq, j.layer, p.place,
    LEAD(COALESCE(p.arrived_seq, j.seq)) OVER (
      PARTITION BY j.store_id, j.kind, j.key, p.place
      ORDER BY COALESCE(p.arrived_seq, j.seq), j.seq
    ) AS replaced_seq
  FROM journal AS j{indexed}
  JOIN places AS p ON p.store_id = j.store_id AND p.layer = j.layer
  WHERE j.{WRITES}
),
firsts AS (
  SELECT store_id, kind, key, seq, layer, place,
    min(replaced_seq) OVER (PARTITION BY store_id, kind, key, seq) AS replaced_seq
  FROM stays
)
SELECT f.store_id, s.name AS store, f.kind, f.key,
  CASE WHEN j.op = 'put' THEN j.value END AS value,
  j.seq AS from_seq,
  CASE WHEN f.replaced_seq IS NULL THEN lh.dropped_seq
       WHEN lh.dropped_seq IS NULL OR f.replaced_seq < lh.dropped_seq THEN f.replaced_seq
       ELSE lh.dropped_seq END AS to_seq,
  j.layer, lh.label, j.depth, {_fate("lh", "j.layer")} AS fate,
  {iso_utc("j.ts", dialect)} AS time, j.ts AS time_epoch
FROM firsts AS f
JOIN journal AS j ON j.store_id = f.store_id AND j.seq = f.seq
JOIN stores AS s ON s.id = f.store_id
LEFT JOIN lh ON lh.store_id = f.store_id AND lh.layer = f.layer
WHERE f.place = f.layer
"""


def as_of(dialect: str, store: str, seq: str) -> str:
    """The live objects of the stores matching ``store`` (an SQL condition on ``s``) as of
    journal seq ``seq`` (an SQL expression): for each key, the last write at or before it
    that no revert had dropped by then, unless it deletes the key."""
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
  WHERE {store} AND j.{WRITES} AND j.seq <= {seq}
    AND (d.dropped_seq IS NULL OR d.dropped_seq > {seq})
)
SELECT l.store_id, s.name AS store, l.kind, l.key, l.value, l.seq AS from_seq,
  l.layer, lh.label, l.depth, {_fate("lh", "l.layer")} AS fate,
  {iso_utc("l.ts", dialect)} AS time, l.ts AS time_epoch
FROM latest AS l
JOIN stores AS s ON s.id = l.store_id
LEFT JOIN lh ON lh.store_id = l.store_id AND lh.layer = l.layer
WHERE l.n = 1 AND l.op = 'put'
"""


OBJECTS_AS_OF_POSTGRESQL = f"""
CREATE FUNCTION objects_as_of(store_name text, at_seq bigint)
RETURNS TABLE (
  store_id integer, store varchar, kind varchar, key text, value text, from_seq bigint,
  layer bigint, label text, depth integer, fate text, "time" text, time_epoch double precision
)
LANGUAGE sql STABLE AS $body$
{as_of("postgresql", "s.name = store_name", "at_seq")}
$body$
"""


def upgrade() -> None:
    bind = op.get_bind()
    dialect = bind.dialect.name
    bind.exec_driver_sql(f"CREATE VIEW object_versions AS {object_versions(dialect)}")
    if dialect == "postgresql":
        bind.exec_driver_sql(OBJECTS_AS_OF_POSTGRESQL)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        bind.exec_driver_sql("DROP FUNCTION IF EXISTS objects_as_of(text, bigint)")
    bind.exec_driver_sql("DROP VIEW IF EXISTS object_versions")
