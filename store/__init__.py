"""drasnap's versioned store: patch layers of JSON values, in memory or durable in SQL.

It knows nothing of Kubernetes: kinds and keys are strings, values are JSON-compatible.
``Store`` is the durable store (SQLite by default, PostgreSQL by URL); ``MemoryStore`` is the
same interface without persistence (cluster-autoscaler's patch set). The journal every durable
store keeps is read back with ``Journal`` (records, layer fates), ``replay``/``open_state``
(the state at any sequence number) and ``diff``; ``query`` runs read-only SQL.
"""

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
from store.followers import Follower
from store.history import Journal, JournalInfo, JournalRecord, LayerHistory, OpenLayer
from store.interface import ABSENT
from store.jsondiff import MISSING, FieldChange, field_diff
from store.memory import MemoryStore
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

__all__ = [
    "ABSENT",
    "MISSING",
    "Divergence",
    "FieldChange",
    "Follower",
    "Journal",
    "JournalInfo",
    "JournalRecord",
    "LayerHistory",
    "MemoryStore",
    "ObjectChange",
    "OpenLayer",
    "QueryResult",
    "ReplayReport",
    "State",
    "StateDiff",
    "Store",
    "diff",
    "field_diff",
    "open_state",
    "query",
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
