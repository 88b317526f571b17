"""The DRA CEL environment: device selectors compiled and evaluated as the API server and the
scheduler do (``engine``), with Kubernetes' quantity and semver library (``library``).

It never imports ``store``. Its public names are those of ``__init__.pyi``.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
