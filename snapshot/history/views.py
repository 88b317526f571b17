"""The snapshot's SQL views, for people who debug with plain ``sqlite3``, ``psql`` or
``drasnap query``: ``allocation_events`` (:mod:`snapshot.history.allocations` in SQL),
``pod_failures`` (the records of :mod:`snapshot.history.pod_failures`) and
``autoscale_nodes`` (an autoscale run's scale-down decision for each node).

The one place the snapshot writes SQL. ``allocation_events`` reads the store's ``journal`` table and
``layer_history`` view (documented in ``store/sql/tables.py`` and ``docs/sql.md``) and the
ResourceClaim JSON the snapshot stores, which the store must not know. Each view is registered
with the store (:func:`store.register_view`) when the package is imported, so every store
opened for writing by a process using the snapshot holds them. ``tests/migrations/test_views.py``
proves ``allocation_events`` gives the same events as
:func:`snapshot.history.allocations.allocation_history`.

``allocation_events``' columns: ``seq``, ``time`` (ISO-8601 UTC text, as ``drasnap history``
prints it) and ``time_epoch`` (seconds since the epoch), ``store_id``, ``store``, ``layer``,
``label``, ``depth``, ``fate``, ``event``, ``claim``, ``claim_namespace``, ``claim_name``,
``request``, ``driver``, ``pool``, ``device``, ``node`` (see docs/sql.md).
"""

from __future__ import annotations

from typing import Final

from drasnap.store import View, iso_utc_sql

__all__ = ["ALLOCATION_EVENTS", "AUTOSCALE_NODES_VIEW", "POD_FAILURES_VIEW"]

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
_SQLITE = """
WITH
lh AS MATERIALIZED (
  SELECT store_id, layer, label, fate, dropped_seq FROM layer_history
),
k (event) AS (SELECT 'allocate' UNION ALL SELECT 'deallocate')
SELECT j.seq, {time} AS time, j.ts AS time_epoch,
  j.store_id, s.name AS store, j.layer, lh.label, j.depth,
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

_POSTGRESQL = f"""
WITH
lh AS MATERIALIZED (
  SELECT store_id, layer, label, fate, dropped_seq FROM layer_history
),
k (event) AS (VALUES ('allocate'), ('deallocate'))
SELECT j.seq, {{time}} AS time, j.ts AS time_epoch,
  j.store_id, s.name AS store, j.layer, lh.label, j.depth,
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


ALLOCATION_EVENTS: Final = View(
    "allocation_events",
    sqlite=_SQLITE.replace("{time}", iso_utc_sql("j.ts", "sqlite")),
    postgresql=_POSTGRESQL.replace("{time}", iso_utc_sql("j.ts", "postgresql")),
)


# pod_failures: one row per PodFailure record (snapshot.history.pod_failures) in each store's
# current state.
_POD_FAILURES_SQLITE = """
SELECT store_id, store, key AS pod,
  substr(key, 1, instr(key, '/') - 1) AS pod_namespace,
  substr(key, instr(key, '/') + 1) AS pod_name,
  json_extract(value, '$.message') AS message,
  json_extract(value, '$.fit_error.nodes') AS nodes,
  json_extract(value, '$.context') AS context,
  json_extract(value, '$.autoscaler') AS autoscaler,
  value
FROM current_objects
WHERE kind = 'PodFailure'
"""

_POD_FAILURES_POSTGRESQL = """
SELECT store_id, store, key AS pod,
  split_part(key, '/', 1) AS pod_namespace,
  substr(key, strpos(key, '/') + 1) AS pod_name,
  value::jsonb ->> 'message' AS message,
  (value::jsonb #>> '{fit_error,nodes}')::integer AS nodes,
  value::jsonb ->> 'context' AS context,
  value::jsonb ->> 'autoscaler' AS autoscaler,
  value
FROM current_objects
WHERE kind = 'PodFailure'
"""

POD_FAILURES_VIEW: Final = View(
    "pod_failures", sqlite=_POD_FAILURES_SQLITE, postgresql=_POD_FAILURES_POSTGRESQL
)


# autoscale_nodes: one row per scale-down decision of an autoscale run (AutoscaleDecision
# ``node/<name>``, snapshot.simulation.autoscale) in each store's current state: removed, or
# kept with drasnap's reason and the cluster-autoscaler's UnremovableReason name.
_AUTOSCALE_NODES_SQLITE = """
SELECT store_id, store, substr(key, 6) AS node,
  json_extract(value, '$.removed') AS removed,
  json_extract(value, '$.reason') AS reason,
  json_extract(value, '$.unremovable') AS unremovable,
  value
FROM current_objects
WHERE kind = 'AutoscaleDecision' AND substr(key, 1, 5) = 'node/'
"""

_AUTOSCALE_NODES_POSTGRESQL = """
SELECT store_id, store, substr(key, 6) AS node,
  (value::jsonb ->> 'removed')::boolean AS removed,
  value::jsonb ->> 'reason' AS reason,
  value::jsonb ->> 'unremovable' AS unremovable,
  value
FROM current_objects
WHERE kind = 'AutoscaleDecision' AND substr(key, 1, 5) = 'node/'
"""

AUTOSCALE_NODES_VIEW: Final = View(
    "autoscale_nodes", sqlite=_AUTOSCALE_NODES_SQLITE, postgresql=_AUTOSCALE_NODES_POSTGRESQL
)
