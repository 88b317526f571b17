"""SQL views over the journal (current_objects, layer_history, allocation_events), and an
index on the journal's layer instances.

The views are documented, with example queries, in ``docs/sql.md``. They use only what a stock
``sqlite3`` shell (3.38+, JSON built in) or PostgreSQL (12+) has, so they work in Datasette and
in ``psql`` as well as through ``drasnap query``. They are not part of ``store.sql.tables``'s
metadata (Alembic's autogenerate ignores views), so ``alembic check`` is not concerned.

The PostgreSQL text is kept equivalent to the SQLite one (``value::jsonb`` for
``json_extract``, ``jsonb_array_elements`` for ``json_each``).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The effective state per store, kind and key as of the last checkpoint: the entry with the
# highest depth, unless it is a tombstone. Portable SQL.
CURRENT_OBJECTS = """
SELECT s.id AS store_id, s.name AS store, e.kind, e.key, e.depth, e.value
FROM entries AS e
JOIN stores AS s ON s.id = e.store_id
WHERE NOT e.tombstone
  AND NOT EXISTS (
    SELECT 1 FROM entries AS above
    WHERE above.store_id = e.store_id AND above.kind = e.kind AND above.key = e.key
      AND above.depth > e.depth
  )
"""

# Layer operations are selected with the exact WHERE of the partial index below, which then
# answers alone (SQLite uses a partial index only when the query repeats its condition).
LAYER_OPS = "op IN ('fork', 'commit', 'revert')"

# One row per layer instance (and one for each store's base, layer 0). A layer's fate follows
# its commit chain: `chain` starts at each fork and steps to the layer it was committed into
# until it reaches a revert (reverted), a commit into the base (committed) or a layer that is
# still open (open). `dropped_seq` is the revert that discarded the layer's changes.
LAYER_HISTORY = f"""
WITH RECURSIVE
forks AS (
  SELECT store_id, layer, seq, ts, depth, parent, label FROM journal
  WHERE {LAYER_OPS} AND op = 'fork'
),
closes AS (
  SELECT store_id, layer, seq, ts, op, parent FROM journal
  WHERE {LAYER_OPS} AND op <> 'fork'
),
chain (store_id, layer, close_op, close_seq, merged_into) AS (
  SELECT f.store_id, f.layer, c.op, c.seq, c.parent
  FROM forks AS f
  LEFT JOIN closes AS c ON c.store_id = f.store_id AND c.layer = f.layer
  UNION ALL
  SELECT ch.store_id, ch.layer, c.op, c.seq, c.parent
  FROM chain AS ch
  LEFT JOIN closes AS c ON c.store_id = ch.store_id AND c.layer = ch.merged_into
  WHERE ch.close_op = 'commit' AND ch.merged_into <> 0
),
ends AS (
  SELECT store_id, layer,
    CASE WHEN close_op IS NULL THEN 'open'
         WHEN close_op = 'revert' THEN 'reverted'
         ELSE 'committed' END AS fate,
    CASE WHEN close_op = 'revert' THEN close_seq END AS dropped_seq
  FROM chain
  WHERE close_op IS NULL OR close_op = 'revert' OR merged_into = 0
)
SELECT f.store_id, s.name AS store, f.layer, f.label, f.depth, f.parent,
  f.seq AS opened_seq, f.ts AS opened_at,
  c.seq AS closed_seq, c.ts AS closed_at, c.op AS closed_by,
  CASE WHEN c.op = 'commit' THEN c.parent END AS merged_into,
  e.fate, e.dropped_seq
FROM forks AS f
JOIN stores AS s ON s.id = f.store_id
JOIN ends AS e ON e.store_id = f.store_id AND e.layer = f.layer
LEFT JOIN closes AS c ON c.store_id = f.store_id AND c.layer = f.layer
UNION ALL
SELECT s.id, s.name, 0, NULL, 0, NULL, NULL, s.created_at, NULL, NULL, NULL, NULL,
  'committed', NULL
FROM stores AS s
"""

# One row per allocated (or released) device per allocation event. An event is a put or
# delete of a ResourceClaim whose status.allocation differs from the claim's allocation just
# before: the value of `p`, the latest earlier write of that claim that no revert had
# discarded by then (its layer's dropped_seq is later). 'allocate' lists the new allocation's
# devices, 'deallocate' the old one's (a changed allocation gives both, at the same seq).
#
# Written as one flat join (the two event kinds come from a two-row table `k`, not a UNION)
# so that a filter on claim or store reaches the journal scan: `WHERE claim = 'ns/name'`
# reads that claim's rows through the (store_id, kind, key) index. SQLite is told to use that
# index (INDEXED BY): without statistics it would rather walk the primary key in seq order.
ALLOCATION_EVENTS_SQLITE = """
WITH
lh AS MATERIALIZED (
  SELECT store_id, layer, label, fate, dropped_seq FROM layer_history
),
k (event) AS (SELECT 'allocate' UNION ALL SELECT 'deallocate')
SELECT j.seq, j.ts AS time, j.store_id, s.name AS store, j.layer, lh.label, j.depth,
  COALESCE(lh.fate, CASE WHEN j.layer = 0 THEN 'committed' ELSE 'unknown' END) AS fate,
  k.event, j.key AS claim,
  substr(j.key, 1, instr(j.key, '/') - 1) AS claim_namespace,
  substr(j.key, instr(j.key, '/') + 1) AS claim_name,
  json_extract(r.value, '$.request') AS request,
  json_extract(r.value, '$.driver') AS driver,
  json_extract(r.value, '$.pool') AS pool,
  json_extract(r.value, '$.device') AS device,
  CASE
    WHEN json_array_length(r.json, '$.status.allocation.nodeSelector.nodeSelectorTerms') = 1
     AND json_array_length(r.json,
           '$.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields') = 1
     AND json_extract(r.json,
           '$.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].key')
         = 'metadata.name'
     AND json_extract(r.json,
           '$.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].operator')
         = 'In'
     AND json_array_length(r.json,
           '$.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values') = 1
    THEN json_extract(r.json,
           '$.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]')
  END AS node
FROM stores AS s
JOIN journal AS j INDEXED BY ix_journal_store_id_kind_key ON j.store_id = s.id
LEFT JOIN journal AS p ON p.store_id = j.store_id AND p.op = 'put' AND p.seq = (
  SELECT max(q.seq) FROM journal AS q INDEXED BY ix_journal_store_id_kind_key
  LEFT JOIN lh AS ql ON ql.store_id = q.store_id AND ql.layer = q.layer
  WHERE q.store_id = j.store_id AND q.kind = j.kind AND q.key = j.key
    AND q.seq < j.seq AND q.op IN ('put', 'delete')
    AND (ql.dropped_seq IS NULL OR ql.dropped_seq > j.seq)
)
JOIN k ON (
  CASE k.event WHEN 'allocate' THEN
    NULLIF(json_extract(CASE WHEN j.op = 'put' THEN j.value END, '$.status.allocation'), '{}')
  ELSE NULLIF(json_extract(p.value, '$.status.allocation'), '{}') END
) IS NOT NULL
AND (
  NULLIF(json_extract(CASE WHEN j.op = 'put' THEN j.value END, '$.status.allocation'), '{}')
  IS NOT NULLIF(json_extract(p.value, '$.status.allocation'), '{}')
)
JOIN json_each(CASE k.event WHEN 'allocate' THEN j.value ELSE p.value END,
               '$.status.allocation.devices.results') AS r
LEFT JOIN lh ON lh.store_id = j.store_id AND lh.layer = j.layer
WHERE j.kind = 'ResourceClaim' AND j.op IN ('put', 'delete')
"""
# The same, in PostgreSQL's terms (jsonb; LATERAL names what SQLite gets from json_each's
# hidden `json` column).
_PG_SELECTOR = "(c.claim #> '{status,allocation,nodeSelector}')"
_PG_TERMS = f"({_PG_SELECTOR} -> 'nodeSelectorTerms')"
_PG_FIELDS = f"({_PG_TERMS} -> 0 -> 'matchFields')"
_PG_FIELD = f"({_PG_FIELDS} -> 0)"

ALLOCATION_EVENTS_POSTGRESQL = f"""
WITH
lh AS MATERIALIZED (
  SELECT store_id, layer, label, fate, dropped_seq FROM layer_history
),
k (event) AS (VALUES ('allocate'), ('deallocate'))
SELECT j.seq, j.ts AS time, j.store_id, s.name AS store, j.layer, lh.label, j.depth,
  COALESCE(lh.fate, CASE WHEN j.layer = 0 THEN 'committed' ELSE 'unknown' END) AS fate,
  k.event, j.key AS claim,
  split_part(j.key, '/', 1) AS claim_namespace,
  substr(j.key, strpos(j.key, '/') + 1) AS claim_name,
  r.value ->> 'request' AS request,
  r.value ->> 'driver' AS driver,
  r.value ->> 'pool' AS pool,
  r.value ->> 'device' AS device,
  CASE
    WHEN jsonb_typeof({_PG_TERMS}) = 'array' AND jsonb_array_length({_PG_TERMS}) = 1
     AND jsonb_typeof({_PG_FIELDS}) = 'array' AND jsonb_array_length({_PG_FIELDS}) = 1
     AND {_PG_FIELD} ->> 'key' = 'metadata.name'
     AND {_PG_FIELD} ->> 'operator' = 'In'
     AND jsonb_typeof({_PG_FIELD} -> 'values') = 'array'
     AND jsonb_array_length({_PG_FIELD} -> 'values') = 1
    THEN {_PG_FIELD} -> 'values' ->> 0
  END AS node
FROM stores AS s
JOIN journal AS j ON j.store_id = s.id
LEFT JOIN journal AS p ON p.store_id = j.store_id AND p.op = 'put' AND p.seq = (
  SELECT max(q.seq) FROM journal AS q
  LEFT JOIN lh AS ql ON ql.store_id = q.store_id AND ql.layer = q.layer
  WHERE q.store_id = j.store_id AND q.kind = j.kind AND q.key = j.key
    AND q.seq < j.seq AND q.op IN ('put', 'delete')
    AND (ql.dropped_seq IS NULL OR ql.dropped_seq > j.seq)
)
CROSS JOIN LATERAL (
  SELECT CASE WHEN j.op = 'put' THEN j.value::jsonb END AS new_claim,
    p.value::jsonb AS old_claim
) AS v
CROSS JOIN LATERAL (
  SELECT
    NULLIF(NULLIF(v.new_claim #> '{{status,allocation}}', 'null'), '{{}}') AS new_allocation,
    NULLIF(NULLIF(v.old_claim #> '{{status,allocation}}', 'null'), '{{}}') AS old_allocation
) AS a
JOIN k ON (
  CASE k.event WHEN 'allocate' THEN a.new_allocation ELSE a.old_allocation END
) IS NOT NULL AND a.new_allocation IS DISTINCT FROM a.old_allocation
CROSS JOIN LATERAL (
  SELECT CASE k.event WHEN 'allocate' THEN v.new_claim ELSE v.old_claim END AS claim
) AS c
CROSS JOIN LATERAL jsonb_array_elements(
  CASE WHEN jsonb_typeof(c.claim #> '{{status,allocation,devices,results}}') = 'array'
       THEN c.claim #> '{{status,allocation,devices,results}}' END
) AS r (value)
LEFT JOIN lh ON lh.store_id = j.store_id AND lh.layer = j.layer
WHERE j.kind = 'ResourceClaim' AND j.op IN ('put', 'delete')
"""


def _views(dialect: str) -> list[tuple[str, str]]:
    events = ALLOCATION_EVENTS_POSTGRESQL if dialect == "postgresql" else ALLOCATION_EVENTS_SQLITE
    return [
        ("current_objects", CURRENT_OBJECTS),
        ("layer_history", LAYER_HISTORY),
        ("allocation_events", events),
    ]


# The layer operations only (about one row in six), with every column a layer history needs,
# so following a commit chain reads the index alone: store.journal.reader resolves the fate of a
# layer instance with one index lookup per step. Puts and deletes (most of the journal) are
# not in it, so the store's writes barely pay for it.
LAYER_OPS = "op IN ('fork', 'commit', 'revert')"
LAYER_INDEX_COLUMNS = ["store_id", "layer", "op", "seq", "parent", "depth", "ts", "label"]


def upgrade() -> None:
    op.create_index(
        "ix_journal_store_id_layer",
        "journal",
        LAYER_INDEX_COLUMNS,
        sqlite_where=sa.text(LAYER_OPS),
        postgresql_where=sa.text(LAYER_OPS),
    )
    for name, body in _views(op.get_bind().dialect.name):
        op.execute(f"CREATE VIEW {name} AS {body}")


def downgrade() -> None:
    for name, _body in reversed(_views(op.get_bind().dialect.name)):
        op.execute(f"DROP VIEW IF EXISTS {name}")
    op.drop_index("ix_journal_store_id_layer", table_name="journal")
