"""entries.id as a 64-bit integer on PostgreSQL.

PostgreSQL's ``INSERT ... ON CONFLICT DO UPDATE`` draws a value from the id sequence for every
row a flush upserts, updates included, so a long-lived shared database could use up a 32-bit
serial (2**31 draws). The column and its sequence become BIGINT. SQLite's INTEGER PRIMARY KEY is
already the 64-bit rowid: nothing changes there.

Downgrading fails, leaving the database as it was, once an id above 2**31 - 1 exists.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _set_type(column_type: type[sa.Integer], sql_type: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.alter_column("entries", "id", type_=column_type(), existing_nullable=False)
    # ALTER SEQUENCE takes a name, not an expression: the serial's own sequence, whatever the
    # schema, is looked up and altered in one statement.
    op.execute(
        "DO $$ BEGIN EXECUTE format('ALTER SEQUENCE %s AS " + sql_type + "', "
        "pg_get_serial_sequence('entries', 'id')); END $$"
    )


def upgrade() -> None:
    _set_type(sa.BigInteger, "BIGINT")


def downgrade() -> None:
    _set_type(sa.Integer, "INTEGER")
