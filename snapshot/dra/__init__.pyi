"""Public names (loaded lazily by __init__.py; mypy reads this)."""

from .listers import DeviceClassLister, ResourceClaimTracker, ResourceSliceLister
from .snapshot import DraSnapshot

__all__ = ["DeviceClassLister", "DraSnapshot", "ResourceClaimTracker", "ResourceSliceLister"]
