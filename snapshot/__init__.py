"""DRA objects with the cluster-autoscaler's semantics, on drasnap's versioned store.

Objects are wire-format dicts (camelCase, as ``kubectl get -o json`` prints them), validated
with the official kubernetes client models on the way in. The packages, from the ground up:
``k8s`` (the vocabulary), ``cel`` and ``validation``, ``allocation`` (the structured allocator),
``scheduling`` (kube-scheduler's filters) and ``controllers``, ``ingest`` (files and dumps in),
``dra`` and ``history`` (the DRA snapshot on a store; what a journal says about a run),
``cluster`` (the cluster snapshot), ``autoscaler`` (its algorithms) and ``simulation`` (its
loop). Each package may import only those below it, never one above (pyproject's
import-linter contracts), and nothing here ever imports ``drasnap.tools``, nor any module of
the store: only its public names, ``drasnap.store`` (a contract too).

It knows no SQL but the texts of its views (``history.views``), which it registers with the
store here, so every store a process using the snapshot opens for writing holds them. Its
public names are those of ``__init__.pyi``, loaded when first used.
"""

import lazy_loader
from drasnap.snapshot.history.views import (
    ALLOCATION_EVENTS,
    AUTOSCALE_NODES_VIEW,
    POD_FAILURES_VIEW,
)
from drasnap.store import register_view

register_view(ALLOCATION_EVENTS)
register_view(POD_FAILURES_VIEW)  # (after it: a view may read only those registered before)
register_view(AUTOSCALE_NODES_VIEW)

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
