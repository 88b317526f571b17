"""drasnap's versioned store: patch layers of JSON values, in memory or durable in SQL.

It knows nothing of Kubernetes: kinds and keys are strings, values are JSON-compatible.
``Store`` is the durable store (SQLite by default, PostgreSQL by URL); ``MemoryStore`` is the
same interface without persistence (cluster-autoscaler's patch set). The journal every durable
store keeps is read back with ``Journal`` (records, layer fates), ``replay``/``open_state``
(the state at any sequence number) and ``diff``; ``query`` runs read-only SQL.
"""

from typing import TYPE_CHECKING

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
    "StoreOptions",
    "VersionedStore",
    "View",
    "diff",
    "field_diff",
    "iso_utc_sql",
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
