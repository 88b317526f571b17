"""Public names (loaded lazily by __init__.py; mypy reads this)."""

from .snapshot import ClusterSnapshot, Placed

__all__ = ["ClusterSnapshot", "Placed"]
