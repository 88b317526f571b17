"""The DRA snapshot on a versioned store (upstream's
``cluster-autoscaler/simulator/dynamicresources/snapshot``): claims, slices and classes
(``snapshot``), the listers the scheduler reads them through (``listers``) and the store
followers that keep them fast (``index``).

It never imports the cluster snapshot or the simulations. Public names: ``__init__.pyi``.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
