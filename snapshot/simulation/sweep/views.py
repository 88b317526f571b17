"""The simulation's SQL view ``sweep_results``: one row per finished point of a what-if sweep,
as ``drasnap compare`` prints it (documented in ``docs/sql.md``).

A point's run keeps its summary in its store under ``SweepPoint/summary`` (at the base, depth
0, written once when the point finishes: :mod:`.points`); the view reads it with the database's
JSON functions (``json_extract`` on SQLite, ``->>`` on PostgreSQL). Objects (``variants``,
``added``) are JSON text: compact on SQLite, ``jsonb``'s spacing on PostgreSQL.

Migration 0006 created it in the store's schema, which must not know the simulation's records;
migration 0008 dropped that copy, and the simulation registers this one
(``simulation/__init__.py``): every store a process running simulations opens for writing
holds it. The text is 0006's, so the rows are the same (``tests/migrations`` holds them equal).
Importing this costs no run machinery and no SQL library.
"""

from __future__ import annotations

from drasnap.store import View

__all__ = ["SUMMARY_KEY", "SUMMARY_KIND", "SWEEP_RESULTS"]

#: Where a finished point keeps its summary: kind and key, at the base of its run's store.
SUMMARY_KIND = "SweepPoint"
SUMMARY_KEY = "summary"

#: (column, JSON field of the summary, SQL type on PostgreSQL; None: text)
_COLUMNS = [
    ("sweep", "sweep", None),
    ("point_index", "index", "integer"),
    ("variants", "variants", None),
    ("nodes_added", "nodes_added", "integer"),
    ("added", "added", None),
    ("pods_pending", "pods_pending", "integer"),
    ("main_reason", "main_reason", None),
    ("nodes_removed", "nodes_removed", "integer"),
    ("device_utilization", "device_utilization", "double precision"),
    ("cost_per_hour", "cost_per_hour", "double precision"),
]


def _select(dialect: str) -> str:
    fields = []
    for column, key, sql_type in _COLUMNS:
        if dialect == "postgresql":
            value = f"(e.value::jsonb ->> '{key}')"
            fields.append(
                f"{value}::{sql_type} AS {column}" if sql_type else f"{value} AS {column}"
            )
        else:
            fields.append(f"json_extract(e.value, '$.{key}') AS {column}")
    # The run's name after the sweep and index, as drasnap compare shows it.
    columns = ",\n  ".join([*fields[:2], "s.name AS name", *fields[2:]])
    return f"""
SELECT {columns},
  s.id AS store_id
FROM entries AS e
JOIN stores AS s ON s.id = e.store_id
WHERE e.kind = '{SUMMARY_KIND}' AND e.key = '{SUMMARY_KEY}' AND e.depth = 0 AND NOT e.tombstone
"""


SWEEP_RESULTS = View("sweep_results", sqlite=_select("sqlite"), postgresql=_select("postgresql"))
