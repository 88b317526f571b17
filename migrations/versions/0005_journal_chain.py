"""journal.chain: each checkpoint row carries a digest chaining the journal rows since the
previous checkpoint (see ``store.chain``), so a replay can tell that a row was edited, also
one whose write a revert discarded.

Rows recorded before have no chain (NULL): a replay checks them by the state digest alone.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-11
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ALTER TABLE ... ADD COLUMN on both databases (no SQLite table rebuild, which the
    # views over the journal would not survive).
    op.get_bind().exec_driver_sql("ALTER TABLE journal ADD COLUMN chain VARCHAR(32)")


def downgrade() -> None:
    op.get_bind().exec_driver_sql("ALTER TABLE journal DROP COLUMN chain")
