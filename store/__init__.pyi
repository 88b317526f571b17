"""The public names of drasnap.store (loaded lazily by __init__.py; mypy reads this)."""

from .durable import Store
from .errors import (
    DatabaseError,
    InvalidValueError,
    JournalError,
    MissingDriverError,
    NotADatabaseError,
    QueryStoppedError,
    QueryTimeoutError,
    ReadOnlyError,
    SchemaVersionError,
    StoreClosedError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    hide_passwords,
)
from .interface import (
    ABSENT,
    NEVER,
    Closing,
    Fate,
    Follower,
    LayerInfo,
    ReadOnlyState,
    VersionedStore,
)
from .journal.jsondiff import MISSING, FieldChange, field_diff
from .journal.playback import (
    Divergence,
    ObjectChange,
    ReplayReport,
    State,
    StateDiff,
    diff,
    open_state,
    replay,
)
from .journal.reader import Journal, JournalInfo, JournalRecord, LayerHistory, OpenLayer
from .memory import MemoryStore
from .options import StoreOptions
from .queries.readonly import QueryResult, query, query_rows
from .queries.rows import QueryRows
from .sql.catalog import StoreInfo, list_stores
from .sql.engines import shown_target, target_dialect
from .sql.view_registry import View, iso_utc_sql, register_view

__all__ = [
    "ABSENT",
    "MISSING",
    "NEVER",
    "Closing",
    "DatabaseError",
    "Divergence",
    "Fate",
    "FieldChange",
    "Follower",
    "InvalidValueError",
    "Journal",
    "JournalError",
    "JournalInfo",
    "JournalRecord",
    "LayerHistory",
    "LayerInfo",
    "MemoryStore",
    "MissingDriverError",
    "NotADatabaseError",
    "ObjectChange",
    "OpenLayer",
    "QueryResult",
    "QueryRows",
    "QueryStoppedError",
    "QueryTimeoutError",
    "ReadOnlyError",
    "ReadOnlyState",
    "ReplayReport",
    "SchemaVersionError",
    "State",
    "StateDiff",
    "Store",
    "StoreClosedError",
    "StoreError",
    "StoreInfo",
    "StoreLockedError",
    "StoreNotFoundError",
    "StoreOptions",
    "VersionedStore",
    "View",
    "diff",
    "field_diff",
    "hide_passwords",
    "iso_utc_sql",
    "list_stores",
    "open_state",
    "query",
    "query_rows",
    "register_view",
    "replay",
    "shown_target",
    "target_dialect",
]
