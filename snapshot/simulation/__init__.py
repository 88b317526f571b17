"""The cluster-autoscaler's loop (upstream's ``cluster-autoscaler/core``) on the cluster snapshot:
the scenarios scale-up, scale-down and autoscale (one RunOnce), the run record each keeps in
its store so that a checkpoint holds both the cluster and where the run was, the runs of a
database, and starting or resuming one.

Each scenario is deterministic for a given seed and resumes from its last checkpoint after a
crash with the same result and state digest. The top of the snapshot: nothing in the snapshot
imports it, and it never imports ``drasnap.tools``. Public names: ``__init__.pyi``.

Its SQL views, ``sweep_results`` (``sweep.views``) and a timeline's ``timeline`` and
``pod_waits`` (``timeline_views``), are registered with the store here, as the snapshot
registers its own: every store a process running simulations opens for writing holds them.
"""

import lazy_loader
from drasnap.snapshot.simulation.sweep.views import SWEEP_RESULTS
from drasnap.snapshot.simulation.timeline_views import POD_WAITS_VIEW, TIMELINE_VIEW
from drasnap.store import register_view

register_view(SWEEP_RESULTS)
register_view(TIMELINE_VIEW)
register_view(POD_WAITS_VIEW)

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
