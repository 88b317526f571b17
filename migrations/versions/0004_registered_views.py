"""Views: readable times in layer_history, allocation_events handed to the snapshot, and the
table that records the views the layers above the store register.

- ``layer_history.opened_at`` and ``closed_at`` become ISO-8601 UTC text with milliseconds
  (``2026-12-02T09:30:00.123+00:00``, as ``drasnap history`` prints times); the seconds since
  the epoch stay in ``opened_at_epoch`` and ``closed_at_epoch``.
- ``allocation_events`` leaves the migrations: it reads ResourceClaim JSON, which the store's
  schema must not know. The snapshot registers it (``store.sql.views``), and every writer that
  imported the snapshot creates it in the database, as it was.
- ``registered_views`` records each registered view created, with a digest of its text.

Downgrading drops the registered views and their table and brings back migration 0002's
``layer_history`` and ``allocation_events``.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-10
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As in migration 0002: layer operations are selected with the exact WHERE of the partial
# index ix_journal_store_id_layer, which then answers alone.
LAYER_OPS = "op IN ('fork', 'commit', 'revert')"


def iso_utc(expression: str, dialect: str) -> str:
    """Seconds since the epoch as ISO-8601 UTC text with milliseconds, as Python's
    ``datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")`` (the fraction
    rounded to microseconds, then cut). Frozen here as this revision wrote it;
    ``store.sql.views.iso_utc_sql`` is the same for the views registered from Python."""
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


def layer_history(dialect: str) -> str:
    """Migration 0002's layer_history (the fate walk, in SQL), with readable times."""
    return f"""
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
  f.seq AS opened_seq, {iso_utc("f.ts", dialect)} AS opened_at, f.ts AS opened_at_epoch,
  c.seq AS closed_seq, {iso_utc("c.ts", dialect)} AS closed_at, c.ts AS closed_at_epoch,
  c.op AS closed_by,
  CASE WHEN c.op = 'commit' THEN c.parent END AS merged_into,
  e.fate, e.dropped_seq
FROM forks AS f
JOIN stores AS s ON s.id = f.store_id
JOIN ends AS e ON e.store_id = f.store_id AND e.layer = f.layer
LEFT JOIN closes AS c ON c.store_id = f.store_id AND c.layer = f.layer
UNION ALL
SELECT s.id, s.name, 0, NULL, 0, NULL, NULL, {iso_utc("s.created_at", dialect)}, s.created_at,
  NULL, NULL, NULL, NULL, NULL, 'committed', NULL
FROM stores AS s
"""


def _0002() -> object:
    return importlib.import_module("drasnap.migrations.versions.0002_views")


def _run(sql: str) -> None:
    # Driver SQL: a view's text is not SQLAlchemy's (``:MI`` in a time format is no parameter).
    op.get_bind().exec_driver_sql(sql)


def _cascade() -> str:
    return " CASCADE" if op.get_bind().dialect.name == "postgresql" else ""


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    _run("DROP VIEW IF EXISTS allocation_events")
    _run("DROP VIEW IF EXISTS layer_history")
    _run(f"CREATE VIEW layer_history AS {layer_history(dialect)}")
    op.create_table(
        "registered_views",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("digest", sa.String(length=32), nullable=False),
        sa.Column("installed_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_registered_views")),
    )


def downgrade() -> None:
    bind = op.get_bind()
    names = [r[0] for r in bind.exec_driver_sql("SELECT name FROM registered_views")]
    for name in names:
        _run(f"DROP VIEW IF EXISTS {name}{_cascade()}")
    op.drop_table("registered_views")
    old = _0002()
    _run("DROP VIEW IF EXISTS layer_history")
    _run(f"CREATE VIEW layer_history AS {old.LAYER_HISTORY}")  # type: ignore[attr-defined]
    for name, body in old._views(bind.dialect.name):  # type: ignore[attr-defined]
        if name == "allocation_events":
            _run(f"CREATE VIEW {name} AS {body}")
