"""Alembic migrations: the only place the drasnap schema is defined or changed.

``store`` runs them at every writer's open (``store.sql.engines``); ``store.sql.tables`` mirrors the
head revision for the queries. They never import the snapshot or the command line.
"""
