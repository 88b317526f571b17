"""sweep_results: one row per finished point of a what-if sweep (``drasnap sweep``), as
``drasnap compare`` prints it.

A point's run keeps its summary in its store under ``SweepPoint/summary`` (at the base, depth
0, written once when the point finishes: ``snapshot.simulation.sweep``); the view reads it
with the database's JSON functions (``json_extract`` on SQLite, ``->>`` on PostgreSQL). Objects
(``variants``, ``added``) are JSON text: compact on SQLite, ``jsonb``'s spacing on PostgreSQL.
Documented in ``docs/sql.md``.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-12
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: (column, JSON field, SQL type on PostgreSQL; None: text)
COLUMNS = [
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


def sweep_results(dialect: str) -> str:
    """The view's text for ``dialect``."""
    fields = []
    for column, key, sql_type in COLUMNS:
        if dialect == "postgresql":
            value = f"(e.value::jsonb ->> '{key}')"
            fields.append(
                f"{value}::{sql_type} AS {column}" if sql_type else f"{value} AS {column}"
            )
        else:
            fields.append(f"json_extract(e.value, '$.{key}') AS {column}")
    columns = ",\n  ".join([*fields[:2], "s.name AS name", *fields[2:]])
    return f"""
SELECT {columns},
  s.id AS store_id
FROM entries AS e
JOIN stores AS s ON s.id = e.store_id
WHERE e.kind = 'SweepPoint' AND e.key = 'summary' AND e.depth = 0 AND NOT e.tombstone
"""


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    # Since 0008 the simulation registers this view, and every migration run creates the
    # registered views (migrations/env.py): a database taken below 0006 and up again by such
    # a process already holds the registered copy, with the same text.
    op.get_bind().exec_driver_sql("DROP VIEW IF EXISTS sweep_results")
    op.get_bind().exec_driver_sql(f"CREATE VIEW sweep_results AS {sweep_results(dialect)}")


def downgrade() -> None:
    op.get_bind().exec_driver_sql("DROP VIEW IF EXISTS sweep_results")
