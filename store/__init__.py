"""drasnap's versioned store: patch layers of JSON values, in memory or durable in SQL.

It knows nothing of Kubernetes: kinds and keys are strings, values are JSON-compatible.
``Store`` is the durable store (SQLite by default, PostgreSQL by URL); ``MemoryStore`` is the
same interface without persistence (cluster-autoscaler's patch set). The journal every durable
store keeps is read back with ``Journal`` (records, layer fates), ``replay``/``open_state``
(the state at any sequence number) and ``diff``; ``query`` runs read-only SQL.

The package, module by module: ``interface`` holds the contracts (``VersionedStore``,
``ReadOnlyState``, ``Follower``) and the sentinels, ``followers`` how derived state follows the
layers, ``codec`` the value check, canonical encoding and state digest, and ``options`` the
durable store's options and their defaults. ``memory`` is the in-memory store. The durable one
is ``durable`` (the store: journal buffer, checkpoint policy, digest) over ``cache`` (its layers
and read cache, one class per cache strategy) and ``opening`` (connecting, locking, loading,
dropping); at a checkpoint ``pending`` plans a plain ``Pending`` (``rows``), which ``persist``
(the SQL side: loading, base reads, the flush) writes on the caller's thread; written behind,
``writer`` hands the journal to the process of ``writer_process``, which mirrors the store and
writes it, the two speaking in ``framing``'s messages. ``tables`` is the data model in SQL (the
Alembic migrations in ``migrations/`` create it), ``_sql`` creates engines, upgrades the schema,
takes the writer lock and translates driver errors (``errors`` is the error tree), and
``views`` creates the SQL views the layers above register. ``journal`` reads the journal and
gives each layer its fate, ``chain`` is the digest that seals the journal rows at every
checkpoint, ``playback`` replays a journal (replay, the state at a point, diffs), ``jsondiff``
diffs two values field by field, ``sql_query`` runs read-only SQL (``sql_lexer`` finds the
code of a statement as the database's lexer does, ``sql_refused`` names the functions it
refuses), and ``catalog`` lists the named stores of a database without opening them.
"""

from typing import TYPE_CHECKING

from store.catalog import StoreInfo, list_stores
from store.durable import Store
from store.errors import (
    DatabaseError,
    InvalidValueError,
    JournalError,
    MissingDriverError,
    NotADatabaseError,
    ReadOnlyError,
    SchemaVersionError,
    StoreClosedError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
)
from store.interface import (
    ABSENT,
    NEVER,
    Follower,
    LayerInfo,
    ReadOnlyState,
    VersionedStore,
)
from store.journal import Fate, Journal, JournalInfo, JournalRecord, LayerHistory, OpenLayer
from store.jsondiff import MISSING, FieldChange, field_diff
from store.memory import MemoryStore
from store.options import StoreOptions
from store.playback import (
    Divergence,
    ObjectChange,
    ReplayReport,
    State,
    StateDiff,
    diff,
    open_state,
    replay,
)
from store.sql_query import QueryResult, query
from store.views import View, iso_utc_sql, register_view

if TYPE_CHECKING:  # mypy holds the stores to their contracts here
    _memory_store: type[VersionedStore] = MemoryStore
    _durable_store: type[VersionedStore] = Store
    _replayed_state: type[ReadOnlyState] = State

__all__ = [
    "ABSENT",
    "MISSING",
    "NEVER",
    "Divergence",
    "Fate",
    "FieldChange",
    "Follower",
    "Journal",
    "JournalInfo",
    "JournalRecord",
    "LayerHistory",
    "LayerInfo",
    "MemoryStore",
    "ObjectChange",
    "OpenLayer",
    "QueryResult",
    "ReadOnlyState",
    "ReplayReport",
    "State",
    "StateDiff",
    "Store",
    "StoreInfo",
    "StoreOptions",
    "VersionedStore",
    "View",
    "diff",
    "field_diff",
    "iso_utc_sql",
    "list_stores",
    "open_state",
    "query",
    "register_view",
    "replay",
    "DatabaseError",
    "InvalidValueError",
    "JournalError",
    "MissingDriverError",
    "NotADatabaseError",
    "ReadOnlyError",
    "SchemaVersionError",
    "StoreClosedError",
    "StoreError",
    "StoreLockedError",
    "StoreNotFoundError",
]
