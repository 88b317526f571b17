"""Public names (loaded lazily by __init__.py; mypy reads this)."""

from .data import LIMITS, RunReport, gather
from .page import render, write_report

__all__ = ["LIMITS", "RunReport", "gather", "render", "write_report"]
