"""The schema comes only from the Alembic migrations, and they behave on real databases."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

from store import DatabaseError, SchemaVersionError, Store
from store._sql import MIGRATIONS_DIR, alembic_config


def head() -> str:
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    rev = script.get_current_head()
    assert rev is not None
    return rev


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {r[0] for r in rows}


def version(path: Path) -> str | None:
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return row[0] if row else None


def test_open_upgrades_an_empty_file_to_head(db_path: Path) -> None:
    Store.open(db_path).close()
    assert {"stores", "layers", "entries", "journal", "alembic_version"} <= tables(db_path)
    assert version(db_path) == head()


def test_downgrade_to_base_and_up_again(db_path: Path) -> None:
    with Store.open(db_path) as store:
        store.put("k", "a", 1)
    engine = create_engine(f"sqlite:///{db_path}")
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "base")
    assert tables(db_path) == {"alembic_version"}
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    engine.dispose()
    assert version(db_path) == head()
    with Store.open(db_path) as store:
        assert store.items("k") == {}  # downgrading dropped the data, and up made it anew


def test_models_and_migrations_do_not_drift(db_path: Path) -> None:
    Store.open(db_path).close()
    engine = create_engine(f"sqlite:///{db_path}")
    with engine.connect() as conn:
        command.check(alembic_config(conn))  # raises if autogenerate would emit anything
    engine.dispose()


def test_newer_revision_is_refused_without_change(db_path: Path) -> None:
    with Store.open(db_path) as store:
        store.put("k", "a", {"v": 1})
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'ffff-from-the-future'")
    before = (tables(db_path), version(db_path))
    with pytest.raises(SchemaVersionError, match="written by a newer drasnap"):
        Store.open(db_path)
    with pytest.raises(SchemaVersionError):
        Store.open(db_path, readonly=True)
    assert (tables(db_path), version(db_path)) == before
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT value FROM entries").fetchall() == [('{"v":1}',)]


FAILING_MIGRATION = '''
"""A migration that breaks halfway."""
import sqlalchemy as sa
from alembic import op

revision = "0099"
down_revision = "{down}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("half_done", sa.Column("id", sa.Integer, primary_key=True))
    op.add_column("stores", sa.Column("extra", sa.Integer, nullable=True))
    raise RuntimeError("boom in the middle of a migration")


def downgrade() -> None:
    pass
'''


def test_failing_migration_leaves_the_database_untouched(db_path: Path, tmp_path: Path) -> None:
    with Store.open(db_path) as store:
        store.put("k", "a", 1)
    scripts = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    (scripts / "versions" / "0099_broken.py").write_text(FAILING_MIGRATION.format(down=head()))
    before = tables(db_path)
    with pytest.raises(DatabaseError, match="nothing was changed: boom"):
        Store.open(db_path, _script_location=scripts)
    assert tables(db_path) == before
    assert version(db_path) == head()
    with sqlite3.connect(db_path) as conn:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(stores)")]
    assert "extra" not in columns
    with Store.open(db_path) as store:
        assert store.get("k", "a") == 1
