"""The tables as SQLAlchemy Core objects, for building statements.

The schema itself is created and changed only by the Alembic migrations in ``migrations/``;
``alembic check`` (run by the tests) proves these definitions and the migrations agree.

Data model (one database holds many named stores):

``stores``   one row per named store: its current depth, the next journal sequence number and
             layer instance id, the state digest and sequence number of its last checkpoint, and
             the pid/host of the process holding it for writing.
``layers``   one row per open layer above the base, as of the last checkpoint: depth, label,
             creation time, and ``instance`` (a per-store id that is never reused, so the journal
             can tell two layers that had the same depth at different times apart).
``entries``  one row per modified or deleted key per layer: ``(store, kind, key, depth)`` with a
             ``tombstone`` flag and the canonical JSON ``value``. Depth 0 is the base and holds no
             tombstones. The effective value of a key is its row with the highest depth.
``journal``  one row per operation, in order: ``seq`` strictly increasing per store, ``ts``
             (seconds since the epoch), ``op`` (fork, commit, revert, put, delete, checkpoint),
             the ``depth`` it applied at (the new depth for fork, the dropped depth for commit and
             revert), the ``layer`` instance it applied to, ``parent`` (for fork the instance
             below the new layer, for commit the instance it merged into), and op-specific
             columns: ``label`` (fork), ``kind``/``key``/``value`` (put, delete), ``digest``
             (checkpoint: the state digest at that point) and ``chain`` (checkpoint: a digest
             of the rows since the previous checkpoint, chained to its chain; ``store.chain``).
``registered_views``  one row per view a layer above the store registered (``store.sql.views``) and
             a writer created: its name, a digest of the text it was created from, and when.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

#: Values per ``IN (...)`` list in a batched lookup: well below SQLite's bound-parameter limit
#: (999 before 3.32) and PostgreSQL's.
IN_LIST_CHUNK = 400

stores = Table(
    "stores",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("created_at", Float, nullable=False),
    Column("depth", Integer, nullable=False),
    Column("next_seq", BigInteger, nullable=False),
    Column("next_layer", BigInteger, nullable=False),
    Column("state_digest", String(32), nullable=False),
    Column("checkpoint_seq", BigInteger, nullable=True),
    Column("checkpointed_at", Float, nullable=True),
    Column("journal", Boolean, nullable=False),
    Column("holder_pid", Integer, nullable=True),
    Column("holder_host", String(255), nullable=True),
)

layers = Table(
    "layers",
    metadata,
    Column("store_id", Integer, ForeignKey("stores.id"), primary_key=True),
    Column("depth", Integer, primary_key=True),
    Column("instance", BigInteger, nullable=False),
    Column("label", Text, nullable=True),
    Column("created_at", Float, nullable=False),
)

entries = Table(
    "entries",
    metadata,
    # 64-bit on PostgreSQL (migration 0003); on SQLite exactly INTEGER, the rowid's alias.
    Column(
        "id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("store_id", Integer, ForeignKey("stores.id"), nullable=False),
    Column("kind", String(200), nullable=False),
    Column("key", Text, nullable=False),
    Column("depth", Integer, nullable=False),
    Column("tombstone", Boolean, nullable=False),
    Column("value", Text, nullable=True),
    UniqueConstraint("store_id", "kind", "key", "depth"),
    Index("ix_entries_store_id_depth", "store_id", "depth"),
)

journal = Table(
    "journal",
    metadata,
    Column("store_id", Integer, ForeignKey("stores.id"), primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("ts", Float, nullable=False),
    Column("op", String(16), nullable=False),
    Column("depth", Integer, nullable=False),
    Column("layer", BigInteger, nullable=False),
    Column("parent", BigInteger, nullable=True),
    Column("label", Text, nullable=True),
    Column("kind", String(200), nullable=True),
    Column("key", Text, nullable=True),
    Column("value", Text, nullable=True),
    Column("digest", String(32), nullable=True),
    Column("chain", String(32), nullable=True),
    Index("ix_journal_store_id_kind_key", "store_id", "kind", "key"),
    # Layer lookups (fates, spans) read only this partial index: fork/commit/revert rows with
    # every column they need (migration 0002).
    Index(
        "ix_journal_store_id_layer",
        "store_id",
        "layer",
        "op",
        "seq",
        "parent",
        "depth",
        "ts",
        "label",
        sqlite_where=text("op IN ('fork', 'commit', 'revert')"),
        postgresql_where=text("op IN ('fork', 'commit', 'revert')"),
    ),
)

registered_views = Table(
    "registered_views",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("digest", String(32), nullable=False),
    Column("installed_at", Float, nullable=False),
)
