"""Public names (loaded lazily by __init__.py; mypy reads this)."""

from .compare import compare_rows, differing
from .file import AXES, MAX_POINTS, Point, Sweep, SweepFileError, load_sweep
from .job import job_manifests, with_index
from .points import PointResult, point_summary, run_point, run_sweep
from .views import SUMMARY_KEY, SUMMARY_KIND, SWEEP_RESULTS

__all__ = [
    "AXES",
    "MAX_POINTS",
    "SUMMARY_KEY",
    "SUMMARY_KIND",
    "SWEEP_RESULTS",
    "Point",
    "PointResult",
    "Sweep",
    "SweepFileError",
    "compare_rows",
    "differing",
    "job_manifests",
    "load_sweep",
    "point_summary",
    "run_point",
    "run_sweep",
    "with_index",
]
