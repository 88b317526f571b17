"""Public names (loaded lazily by __init__.py; mypy reads this)."""

from .data import LIMITS, RunReport, gather
from .page import render, write_report
from .sweep_page import SweepReport, gather_sweep, render_sweep, write_sweep_report

__all__ = [
    "LIMITS",
    "RunReport",
    "SweepReport",
    "gather",
    "gather_sweep",
    "render",
    "render_sweep",
    "write_report",
    "write_sweep_report",
]
