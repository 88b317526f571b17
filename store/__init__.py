"""drasnap's versioned store: patch layers of JSON values, in memory or durable in SQL.

It knows nothing of Kubernetes: kinds and keys are strings, values are JSON-compatible.
``Store`` is the durable store (SQLite by default, PostgreSQL by URL); ``MemoryStore`` is the
same interface without persistence (cluster-autoscaler's patch set).
"""

from store.durable import Store
from store.errors import (
    DatabaseError,
    InvalidValueError,
    MissingDriverError,
    NotADatabaseError,
    ReadOnlyError,
    SchemaVersionError,
    StoreClosedError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
)
from store.memory import MemoryStore

__all__ = [
    "MemoryStore",
    "Store",
    "DatabaseError",
    "InvalidValueError",
    "MissingDriverError",
    "NotADatabaseError",
    "ReadOnlyError",
    "SchemaVersionError",
    "StoreClosedError",
    "StoreError",
    "StoreLockedError",
    "StoreNotFoundError",
]
