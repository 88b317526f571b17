"""The cluster snapshot (upstream's ``cluster-autoscaler/simulator/clustersnapshot``): nodes
and pods beside the DRA snapshot, scheduling through kube-scheduler's filters (``snapshot``),
its store followers (``pod_index``, ``node_index``) and the index of which nodes could hold a
pod (``placement``).

It never imports the autoscaler or the simulations. Public names: ``__init__.pyi``.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
