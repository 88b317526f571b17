"""A timeline's SQL views (docs/timelines.md 2.9, documented in ``docs/sql.md``): ``timeline``,
one row per loop that decided something (a ``TimelineLoop`` record), and ``pod_waits``, one row
per pod incarnation (a ``PodLife`` record), in each store's current state.

They read what :mod:`.timeline.records` documents, with the database's JSON functions
(``json_extract`` on SQLite, ``->>`` on PostgreSQL); times are the records' milliseconds as
seconds. Objects (``groups``, ``scaled_up``, ``deleted``) are JSON text: compact on SQLite,
``jsonb``'s spacing on PostgreSQL.

Registered with the store as ``sweep_results`` is (``simulation/__init__.py``), not created by a
migration: the store's schema must not know the simulation's records (migration 0008), and every
store a process running a timeline opens for writing holds them. Importing this costs no run
machinery and no SQL library.
"""

from __future__ import annotations

from typing import Final

from drasnap.snapshot.simulation.plan import PLAN_KEY, SIM_KIND
from drasnap.snapshot.simulation.timeline.records import LOOP_KIND, POD_LIFE
from drasnap.store import View

__all__ = ["POD_WAITS_VIEW", "TIMELINE_VIEW"]


def _field(dialect: str, alias: str, key: str, sql_type: str | None = None) -> str:
    """The JSON field ``key`` of ``alias``'s value: typed on PostgreSQL (``->>`` gives text),
    as stored on SQLite (``json_extract`` gives numbers as numbers, objects as JSON text)."""
    if dialect == "postgresql":
        text = f"({alias}.value::jsonb ->> '{key}')"
        return f"{text}::{sql_type}" if sql_type else text
    return f"json_extract({alias}.value, '$.{key}')"


def _json(dialect: str, alias: str, key: str) -> str:
    """A JSON object or list field as JSON text (NULL where the record holds null)."""
    if dialect == "postgresql":
        return f"NULLIF({alias}.value::jsonb -> '{key}', 'null'::jsonb)::text"
    return f"json_extract({alias}.value, '$.{key}')"


def _seconds(dialect: str, alias: str, key: str) -> str:
    """A time in ms as seconds (NULL stays NULL)."""
    if dialect == "postgresql":
        return f"({_field(dialect, alias, key, 'bigint')} / 1000.0)::double precision"
    return f"({_field(dialect, alias, key)} / 1000.0)"


def _group_sum(dialect: str, count: str) -> str:
    """The sum over the loop's groups of one count (0 for a loop without groups)."""
    if dialect == "postgresql":
        return (
            f"(SELECT COALESCE(sum((g.value ->> '{count}')::integer), 0)::integer "
            "FROM jsonb_each(c.value::jsonb -> 'groups') AS g)"
        )
    return (
        f"(SELECT COALESCE(sum(json_extract(g.value, '$.{count}')), 0) "
        "FROM json_each(c.value, '$.groups') AS g)"
    )


def _timeline(dialect: str) -> str:
    # seq: the journal seq of the record's write at depth 0 (a loop's record is written there,
    # once; a resumed run that wrote it again wrote the same): `drasnap inspect --at SEQ`
    # shows the cluster right after that loop. SQLite is told to read the journal through its
    # (store_id, kind, key) index, as allocation_events is.
    indexed = " INDEXED BY ix_journal_store_id_kind_key" if dialect == "sqlite" else ""
    interval = _field(dialect, "p", "interval_ms", "bigint")
    t_ms = _field(dialect, "c", "t", "bigint")
    return f"""
SELECT c.store_id, c.store,
  (SELECT max(j.seq) FROM journal AS j{indexed}
   WHERE j.store_id = c.store_id AND j.kind = c.kind AND j.key = c.key
     AND j.op = 'put' AND j.depth = 0) AS seq,
  {_seconds(dialect, "c", "t")} AS t,
  {t_ms} / {interval} AS loop,
  {_field(dialect, "c", "pending", "integer")} AS pending,
  {_group_sum(dialect, "ready")} AS nodes_ready,
  {_group_sum(dialect, "provisioning")} AS nodes_provisioning,
  {_group_sum(dialect, "deleting")} AS nodes_deleting,
  {_json(dialect, "c", "groups")} AS groups,
  {_json(dialect, "c", "scaled_up")} AS scaled_up,
  {_json(dialect, "c", "deleted")} AS deleted,
  {_field(dialect, "c", "unneeded", "integer")} AS unneeded,
  {_json(dialect, "c", "timed_out")} AS timed_out,
  c.value
FROM current_objects AS c
LEFT JOIN current_objects AS p
  ON p.store_id = c.store_id AND p.kind = '{SIM_KIND}' AND p.key = '{PLAN_KEY}'
WHERE c.kind = '{LOOP_KIND}'
"""


def _pod_waits(dialect: str) -> str:
    # A pod of the starting cluster has no arrival (NULL): one pending then waits from t=0, as
    # the run's totals count it. fate: the record's, else 'pending' for a pod never bound
    # (pending at the end), NULL for one bound and still running.
    bound = _field(dialect, "c", "bound", "bigint")
    arrived = _field(dialect, "c", "arrived", "bigint")
    wait = f"({bound} - COALESCE({arrived}, 0)) / 1000.0"
    if dialect == "postgresql":
        wait = f"({wait})::double precision"
    fate = _field(dialect, "c", "fate")
    return f"""
SELECT c.store_id, c.store, c.key AS pod,
  {_field(dialect, "c", "incarnation_of")} AS incarnation_of,
  {_field(dialect, "c", "priority", "integer")} AS priority,
  {_seconds(dialect, "c", "arrived")} AS arrived,
  {_seconds(dialect, "c", "bound")} AS bound,
  {wait} AS wait,
  {_field(dialect, "c", "node")} AS node,
  {_field(dialect, "c", "group")} AS node_group,
  {_seconds(dialect, "c", "ended")} AS ended,
  COALESCE({fate}, CASE WHEN {bound} IS NULL THEN 'pending' END) AS fate,
  {_field(dialect, "c", "reason")} AS reason,
  c.value
FROM current_objects AS c
WHERE c.kind = '{POD_LIFE}'
"""


TIMELINE_VIEW: Final = View(
    "timeline", sqlite=_timeline("sqlite"), postgresql=_timeline("postgresql")
)
POD_WAITS_VIEW: Final = View(
    "pod_waits", sqlite=_pod_waits("sqlite"), postgresql=_pod_waits("postgresql")
)
