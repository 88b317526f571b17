"""drasnap's versioned store: patch layers of JSON values, in memory or durable in SQL.

It knows nothing of Kubernetes: kinds and keys are strings, values are JSON-compatible.
``Store`` is the durable store (SQLite by default, PostgreSQL by URL); ``MemoryStore`` is the
same interface without persistence (the cluster-autoscaler's patch set). The journal every
durable store keeps is read back with ``Journal`` (records, layer fates), ``replay`` and
``open_state`` (the state at any sequence number) and ``diff``; ``query`` runs read-only SQL.
The data model is written out in ``cache`` (layers in memory) and ``tables`` (in SQL).

It never imports ``drasnap.snapshot``, ``drasnap.tools``, ``kubernetes`` or ``yaml``. Its public
names are those of ``__init__.pyi``, loaded when first used: a command that only prints its
help never imports SQLAlchemy.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
