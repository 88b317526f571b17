"""Alembic migrations: the only place the drasnap schema is defined or changed."""
