"""The schema comes only from the Alembic migrations, and they behave on real databases: SQLite
files and PostgreSQL (a fresh schema per test, see ``tests/conftest.py``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from drasnap.store import DatabaseError, SchemaVersionError, Store
from drasnap.store.sql.engines import HEAD_REVISION, MIGRATIONS_DIR, alembic_config
from sqlalchemy import create_engine, inspect
from sqlalchemy.pool import NullPool

from tests.conftest import Database


def head() -> str:
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    rev = script.get_current_head()
    assert rev is not None
    return rev


def tables(database: Database) -> set[str]:
    engine = create_engine(database.url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return set(inspect(conn).get_table_names())
    finally:
        engine.dispose()


def columns(database: Database, table: str) -> list[str]:
    engine = create_engine(database.url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return [c["name"] for c in inspect(conn).get_columns(table)]
    finally:
        engine.dispose()


def version(database: Database) -> str | None:
    rows = database.sql("SELECT version_num FROM alembic_version")
    return rows[0][0] if rows else None


def test_open_upgrades_an_empty_database_to_head(database: Database) -> None:
    Store.open(database.target).close()
    assert {"stores", "layers", "entries", "journal", "alembic_version"} <= tables(database)
    assert version(database) == head()


def test_the_store_knows_the_head_revision_it_opens_without_alembic() -> None:
    # A database at HEAD_REVISION is opened without importing Alembic: were it behind the
    # migrations, a database at the real head would take the slow path every time.
    assert head() == HEAD_REVISION


def test_a_database_at_head_opens_without_importing_alembic(tmp_path: Path) -> None:
    db = tmp_path / "at-head.db"
    Store.open(db).close()
    code = (
        "import sys; from drasnap.store import Store; "
        f"Store.open({str(db)!r}).close(); "
        "print('alembic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_downgrade_to_base_and_up_again(database: Database) -> None:
    with Store.open(database.target) as store:
        store.put("k", "a", 1)
    engine = create_engine(database.url, poolclass=NullPool)
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "base")
    assert tables(database) == {"alembic_version"}
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "head")
    engine.dispose()
    assert version(database) == head()
    with Store.open(database.target) as store:
        assert store.items("k") == {}  # downgrading dropped the data, and up made it anew


def test_models_and_migrations_do_not_drift(database: Database) -> None:
    Store.open(database.target).close()
    engine = create_engine(database.url, poolclass=NullPool)
    with engine.connect() as conn:
        command.check(alembic_config(conn))  # raises if autogenerate would emit anything
    engine.dispose()


def test_entry_ids_past_32_bits(database: Database) -> None:
    """Every flush's upserts draw entry ids (on PostgreSQL, updates too): a long-lived database
    goes past 2**31 - 1 and must go on working (migration 0003)."""
    with Store.open(database.target) as store:
        store.put("k", "a", 1)
    if database.kind == "postgres":
        database.sql("SELECT setval(pg_get_serial_sequence('entries', 'id'), 3000000000)")
    else:
        database.sql("UPDATE entries SET id = 3000000000")
    with Store.open(database.target) as store:
        store.put("k", "b", 2)
        store.put("k", "a", 3)
    assert max(i for (i,) in database.sql("SELECT id FROM entries")) > 3_000_000_000
    with Store.open(database.target, readonly=True) as store:
        assert store.items("k") == {"a": 3, "b": 2}


def test_newer_revision_is_refused_without_change(database: Database) -> None:
    with Store.open(database.target) as store:
        store.put("k", "a", {"v": 1})
    database.sql("UPDATE alembic_version SET version_num = 'ffff-from-the-future'")
    before = (tables(database), version(database))
    with pytest.raises(SchemaVersionError, match="written by a newer drasnap"):
        Store.open(database.target)
    with pytest.raises(SchemaVersionError):
        Store.open(database.target, readonly=True)
    assert (tables(database), version(database)) == before
    assert database.sql("SELECT value FROM entries") == [('{"v":1}',)]


def test_reader_of_an_old_schema_is_told_to_upgrade(database: Database) -> None:
    with Store.open(database.target) as store:
        store.put("k", "a", 1)
    engine = create_engine(database.url, poolclass=NullPool)
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "base")
    engine.dispose()
    with pytest.raises(SchemaVersionError, match="open it once for writing to upgrade it"):
        Store.open(database.target, readonly=True)


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


def test_failing_migration_leaves_the_database_untouched(
    database: Database, tmp_path: Path
) -> None:
    with Store.open(database.target) as store:
        store.put("k", "a", 1)
    scripts = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, scripts, ignore=shutil.ignore_patterns("__pycache__"))
    (scripts / "versions" / "0099_broken.py").write_text(FAILING_MIGRATION.format(down=head()))
    before = tables(database)
    with pytest.raises(DatabaseError, match="nothing was changed: boom"):
        Store.open(database.target, _script_location=scripts)
    assert tables(database) == before
    assert version(database) == head()
    assert "extra" not in columns(database, "stores")
    with Store.open(database.target) as store:
        assert store.get("k", "a") == 1
