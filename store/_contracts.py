"""mypy holds the stores to their contracts here (never imported at run time)."""

from __future__ import annotations

from drasnap.store.durable import Store
from drasnap.store.interface import ReadOnlyState, VersionedStore
from drasnap.store.journal.playback import State
from drasnap.store.memory import MemoryStore

_memory_store: type[VersionedStore] = MemoryStore
_durable_store: type[VersionedStore] = Store
_replayed_state: type[ReadOnlyState] = State
