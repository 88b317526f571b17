"""Alembic environment.

drasnap runs migrations in code (``store.sql.engines.prepare_schema``) and hands its own connection
over in ``config.attributes["connection"]``, so a migration runs inside the caller's
transaction: on SQLite (with the real-transaction recipe) and on PostgreSQL (transactional DDL)
a migration that fails midway leaves the database as it was. Batch mode (copy-and-move table
rebuilds for SQLite's limited ALTER TABLE) is used only on SQLite. The ``alembic`` command line
works too, given ``-x url=...`` or ``sqlalchemy.url`` (a file path or a URL, as for
``Store.open``; ``postgresql://`` means psycopg 3).

A migration may replace a view that the views registered by the layers above read (see
``store.sql.views``): after every run those are created again, in the same transaction.
"""

from __future__ import annotations

from alembic import context
from drasnap.store.sql.engines import parse_target
from drasnap.store.sql.tables import metadata
from drasnap.store.sql.views import install_views
from sqlalchemy import Connection, create_engine

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
        install_views(connection, force=True)


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise SystemExit("give the database with -x url=sqlite:///path/to/drasnap.db")
    engine = create_engine(parse_target(url).url)
    with engine.connect() as conn:
        _run(conn)
        conn.commit()


if context.is_offline_mode():
    raise SystemExit("drasnap migrations run online only")
run_migrations_online()
