"""The versioned store: stores, layers, entries and journal.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "stores",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("next_seq", sa.BigInteger(), nullable=False),
        sa.Column("next_layer", sa.BigInteger(), nullable=False),
        sa.Column("state_digest", sa.String(length=32), nullable=False),
        sa.Column("checkpoint_seq", sa.BigInteger(), nullable=True),
        sa.Column("checkpointed_at", sa.Float(), nullable=True),
        sa.Column("journal", sa.Boolean(), nullable=False),
        sa.Column("holder_pid", sa.Integer(), nullable=True),
        sa.Column("holder_host", sa.String(length=255), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stores")),
        sa.UniqueConstraint("name", name=op.f("uq_stores_name")),
    )
    op.create_table(
        "layers",
        sa.Column("store_id", sa.Integer(), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("instance", sa.BigInteger(), nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["store_id"], ["stores.id"], name=op.f("fk_layers_store_id_stores")
        ),
        sa.PrimaryKeyConstraint("store_id", "depth", name=op.f("pk_layers")),
    )
    op.create_table(
        "entries",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("store_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=200), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("tombstone", sa.Boolean(), nullable=False),
        sa.Column("value", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["store_id"], ["stores.id"], name=op.f("fk_entries_store_id_stores")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_entries")),
        sa.UniqueConstraint(
            "store_id", "kind", "key", "depth", name=op.f("uq_entries_store_id_kind_key_depth")
        ),
    )
    op.create_index("ix_entries_store_id_depth", "entries", ["store_id", "depth"])
    op.create_table(
        "journal",
        sa.Column("store_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("ts", sa.Float(), nullable=False),
        sa.Column("op", sa.String(length=16), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("layer", sa.BigInteger(), nullable=False),
        sa.Column("parent", sa.BigInteger(), nullable=True),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("kind", sa.String(length=200), nullable=True),
        sa.Column("key", sa.Text(), nullable=True),
        sa.Column("value", sa.Text(), nullable=True),
        sa.Column("digest", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(
            ["store_id"], ["stores.id"], name=op.f("fk_journal_store_id_stores")
        ),
        sa.PrimaryKeyConstraint("store_id", "seq", name=op.f("pk_journal")),
    )
    op.create_index("ix_journal_store_id_kind_key", "journal", ["store_id", "kind", "key"])


def downgrade() -> None:
    op.drop_index("ix_journal_store_id_kind_key", table_name="journal")
    op.drop_table("journal")
    op.drop_index("ix_entries_store_id_depth", table_name="entries")
    op.drop_table("entries")
    op.drop_table("layers")
    op.drop_table("stores")
