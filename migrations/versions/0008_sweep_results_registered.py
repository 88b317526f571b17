"""sweep_results leaves the migrations: it reads the simulation's SweepPoint records, which the
store's schema must not know (as ``allocation_events`` left in 0004). The simulation registers
it (``snapshot/simulation/sweep/views.py``, same text as 0006's), and every writer that
imported the simulation creates it in the database, as it was.

Downgrading drops the registered copy and forgets it in ``registered_views``, then brings back
migration 0006's view.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-06
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _run(sql: str) -> None:
    # Driver SQL, as 0004: a view's text is not SQLAlchemy's.
    op.get_bind().exec_driver_sql(sql)


def _forget() -> None:
    # A record left behind would say the registered view is in place when it is not, and the
    # next writer would not create it.
    _run("DELETE FROM registered_views WHERE name = 'sweep_results'")


def upgrade() -> None:
    _run("DROP VIEW IF EXISTS sweep_results")
    _forget()


def downgrade() -> None:
    # A writer that imported the simulation may have created its registered copy (this
    # revision on): drop it and its record, so that 0006's view stands alone again.
    _run("DROP VIEW IF EXISTS sweep_results")
    _forget()
    old = importlib.import_module("drasnap.migrations.versions.0006_sweep_results")
    dialect = op.get_bind().dialect.name
    _run(f"CREATE VIEW sweep_results AS {old.sweep_results(dialect)}")
